use super::*;

/// Real outputs (see fixtures/testout/generate.sh) and documented ones (*.doc.txt).
pub(crate) fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/testout").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (fixture, framework, e2e, passed, failed, skipped, first failure: (file, line, name, message start)).
type Case =
    (&'static str, &'static str, bool, u64, u64, u64, Option<(&'static str, Option<u32>, &'static str, &'static str)>);

/// The first failure of both unittest outputs (plain and `-v`).
const UNITTEST_FAILURE: Option<(&str, Option<u32>, &str, &str)> = Some((
    "/tmp/tmp.Q2cVHbKd3Z/pyu/test_calc.py",
    Some(14),
    "test_calc.CalcTest.test_divides",
    "ZeroDivisionError: integer division or modulo by zero",
));

const CASES: &[Case] = &[
    ("cargo-pass.txt", "cargo", false, 4, 0, 1, None),
    ("cargo-fail.txt", "cargo", false, 3, 1, 1, Some(("src/lib.rs", Some(8), "tests::parses", "length was 5"))),
    ("nextest-pass.txt", "nextest", false, 4, 0, 1, None),
    (
        "nextest-fail.txt",
        "nextest",
        false,
        3,
        1,
        1,
        Some(("src/lib.rs", Some(8), "calc tests::parses", "length was 5")),
    ),
    ("pytest-pass.txt", "pytest", false, 3, 0, 1, None),
    (
        "pytest-fail.txt",
        "pytest",
        false,
        2,
        1,
        1,
        Some(("tests/test_calc.py", Some(5), "test_len", "AssertionError: length differs")),
    ),
    ("go-pass-verbose.txt", "go", false, 3, 0, 0, None),
    ("go-fail.txt", "go", false, 0, 1, 0, Some(("calc_test.go", Some(6), "TestLen", "length was 5"))),
    ("go-fail-verbose.txt", "go", false, 2, 1, 0, Some(("calc_test.go", Some(6), "TestLen", "length was 5"))),
    ("jest-pass.txt", "jest", false, 3, 0, 1, None),
    (
        "jest-fail.txt",
        "jest",
        false,
        2,
        1,
        1,
        Some(("calc.test.js", Some(6), "calc › measures", "assert.strictEqual(received, expected)")),
    ),
    ("vitest-pass.txt", "vitest", false, 3, 0, 1, None),
    (
        "vitest-fail.txt",
        "vitest",
        false,
        2,
        1,
        1,
        Some(("vt/calc.test.mjs", Some(8), "calc > measures", "AssertionError: Expected values to be strictly equal:")),
    ),
    ("mocha-pass.txt", "mocha", false, 3, 0, 1, None),
    (
        "mocha-fail.txt",
        "mocha",
        false,
        2,
        1,
        1,
        Some((
            "calc.test.js",
            Some(6),
            "calc measures",
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        )),
    ),
    ("node-test-pass.txt", "node", false, 3, 0, 1, None),
    (
        "node-test-fail.txt",
        "node",
        false,
        2,
        1,
        1,
        Some(("js/node.test.js", Some(7), "measures", "Expected values to be strictly equal:")),
    ),
    (
        "node-test-spec-fail.txt",
        "node",
        false,
        2,
        1,
        1,
        Some((
            "node.test.js",
            Some(5),
            "measures",
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
        )),
    ),
    ("playwright-pass.txt", "playwright", true, 2, 0, 0, None),
    (
        "playwright-fail.txt",
        "playwright",
        true,
        1,
        1,
        0,
        Some((
            "e2e/app.spec.js",
            Some(4),
            "home page › counts",
            "Error: expect(received).toBe(expected) // Object.is equality",
        )),
    ),
    ("cypress-pass.doc.txt", "cypress", true, 4, 0, 0, None),
    (
        "cypress-fail.doc.txt",
        "cypress",
        true,
        3,
        1,
        0,
        Some((
            "cypress/e2e/login.cy.js",
            Some(12),
            "login logs in with valid credentials",
            "AssertionError: Timed out retrying after 4000ms",
        )),
    ),
    ("bun-pass.doc.txt", "bun", false, 3, 0, 0, None),
    // Real: bun 1.4.5 (from the npm registry), `generate.sh`.
    ("bun-pass.txt", "bun", false, 2, 0, 1, None),
    (
        "bun-fail.txt",
        "bun",
        false,
        1,
        1,
        1,
        Some(("/tmp/work/bun/calc.test.ts", Some(4), "calc > measures", "error: expect(received).toBe(expected)")),
    ),
    // Real: `bun test packages/cli/src/ 2>&1 | tail -20` in obsessiondb/chkit (MIT), from
    // the Claude Code transcript in ../shared/transcripts: no header, two errors outside tests.
    (
        "bun-tail-errors.txt",
        "bun",
        false,
        86,
        2,
        0,
        Some(("", None, "(error outside a test)", "error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST")),
    ),
    (
        "bun-fail.doc.txt",
        "bun",
        false,
        2,
        1,
        1,
        Some(("/home/dev/calc/calc.test.ts", Some(3), "calc > measures", "error: expect(received).toBe(expected)")),
    ),
    ("unittest-pass.txt", "unittest", false, 4, 0, 1, None),
    ("unittest-fail-verbose.txt", "unittest", false, 2, 2, 1, UNITTEST_FAILURE),
    ("unittest-fail.txt", "unittest", false, 2, 2, 1, UNITTEST_FAILURE),
    ("ctest-pass.txt", "ctest", false, 3, 0, 0, None),
    ("ctest-fail.txt", "ctest", false, 2, 1, 0, Some(("", None, "measures", "Failed"))),
    ("mix-pass.txt", "mix", false, 3, 0, 1, None),
    (
        "mix-fail.txt",
        "mix",
        false,
        2,
        1,
        1,
        Some(("test/calc_test.exs", Some(12), "CalcTest: measures", "Assertion with == failed")),
    ),
    ("rspec-pass.txt", "rspec", false, 3, 0, 1, None),
    ("rspec-fail.txt", "rspec", false, 2, 1, 1, Some(("spec/calc_spec.rb", Some(4), "Calc measures", "expected: 9"))),
    ("phpunit-pass.txt", "phpunit", false, 3, 0, 0, None),
    (
        "phpunit-fail.txt",
        "phpunit",
        false,
        2,
        1,
        0,
        Some((
            "php/tests/CalcTest.php",
            Some(6),
            "CalcTest::testMeasures",
            "Failed asserting that 5 is identical to 9.",
        )),
    ),
    ("dotnet-pass.doc.txt", "dotnet", false, 4, 0, 1, None),
    (
        "dotnet-fail.doc.txt",
        "dotnet",
        false,
        3,
        1,
        1,
        Some((
            "/home/dev/calc/Calc.Tests/CalcTests.cs",
            Some(21),
            "Calc.Tests.CalcTests.Measures",
            "Assert.Equal() Failure",
        )),
    ),
    ("mvn-pass.doc.txt", "maven", false, 4, 0, 1, None),
    (
        "mvn-fail.doc.txt",
        "maven",
        false,
        3,
        1,
        1,
        Some(("CalcTest", Some(21), "CalcTest.measures", "expected: <9> but was: <5>")),
    ),
    ("gradle-pass.doc.txt", "gradle", false, 0, 0, 0, None),
    (
        "gradle-fail.doc.txt",
        "gradle",
        false,
        3,
        1,
        1,
        Some(("CalcTest.java", Some(21), "CalcTest > measures()", "org.opentest4j.AssertionFailedError")),
    ),
];

#[test]
fn every_fixture_reads_right_with_and_without_a_hint() {
    let mut failed = Vec::new();
    for &(name, fw, e2e, passed, nfailed, skipped, first) in CASES {
        let out = fixture(name);
        for hint in [None, Some(fw)] {
            let runs = parse(&out, hint);
            let Some(r) = runs.iter().find(|r| r.suite.framework == fw) else {
                failed.push(format!(
                    "{name} (hint {hint:?}): read as {:?}",
                    runs.iter().map(|r| &r.suite.framework).collect::<Vec<_>>()
                ));
                continue;
            };
            let s = &r.suite;
            let got = (r.e2e, s.passed, s.failed, s.skipped);
            if got != (e2e, passed, nfailed, skipped) {
                failed.push(format!("{name}: (e2e, passed, failed, skipped) = {got:?}"));
            }
            let want_status = if nfailed > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed };
            if s.status != want_status {
                failed.push(format!("{name}: status {:?}", s.status));
            }
            match (first, s.failures.first()) {
                (None, None) => {}
                (Some((file, line, test, msg)), Some(f)) => {
                    let m = f.message.clone().unwrap_or_default();
                    if !f.file.ends_with(file) || f.line != line || f.test_name != test || !m.starts_with(msg) {
                        failed.push(format!("{name}: first failure {f:?}"));
                    }
                }
                (want, got) => failed.push(format!("{name}: failures want {want:?}, got {got:?}")),
            }
            if nfailed > 0 && s.failures.len() as u64 != nfailed {
                failed.push(format!("{name}: {} failures listed for {nfailed} failed", s.failures.len()));
            }
        }
    }
    assert!(failed.is_empty(), "{} problems:\n{}", failed.len(), failed.join("\n"));
}

#[test]
fn outputs_of_other_tools_are_not_test_runs() {
    for name in ["cargo-build-fail.txt", "tsc-fail.doc.txt", "make-fail.doc.txt", "go-build-fail.txt"] {
        assert_eq!(parse(&fixture(name), None), vec![], "{name}");
    }
    for text in ["", "hello\nworld", "ok 1 - not a tap run", "Tests: none here", "3 passed"] {
        assert_eq!(parse(text, None), vec![], "{text:?}");
    }
}

#[test]
fn a_suite_that_cannot_load_is_a_failure() {
    let runs = parse(&fixture("jest-suite-errors.txt"), Some("jest"));
    let s = &runs[0].suite;
    // One failing test, and three files that could not load: jest's counts, the suites'
    // errors listed.
    assert_eq!((s.status, s.failed, s.passed, s.total, s.failures.len()), (SuiteStatus::Failed, 1, 2, 4, 4), "{s:#?}");
    assert!(
        s.failures.iter().any(|f| f.test_name.contains("failed to run") && f.file == "vt/calc.test.mjs"),
        "{:?}",
        s.failures
    );
}

#[test]
fn colours_and_cut_outputs_still_read() {
    let coloured = fixture("cargo-fail.txt").replace("FAILED", "\u{1b}[31mFAILED\u{1b}[0m");
    assert_eq!(parse(&coloured, None)[0].suite.failed, 1);
    let out = fixture("pytest-fail.txt");
    let cut = format!("{}\n[… 4000 bytes cut by ccmemctl …]\n{}", &out[..40], &out[out.len() - 300..]);
    let s = &parse(&cut, None)[0].suite;
    assert_eq!((s.passed, s.failed), (2, 1));
}

#[test]
fn many_failures_are_bounded() {
    let mut out = String::from("running 30 tests\n");
    for i in 0..30 {
        out += &format!("test t{i} ... FAILED\n");
    }
    out += "\nfailures:\n";
    for i in 0..30 {
        out += &format!("    t{i}\n");
    }
    out += "\ntest result: FAILED. 0 passed; 30 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.1s\n";
    let s = &parse(&out, None)[0].suite;
    assert_eq!((s.failed, s.failures.len(), s.more_failures), (30, 20, 10));
}
