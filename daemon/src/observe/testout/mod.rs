//! Test and build results read from what the agent's commands printed.
//!
//! [`command`] tells a test run or a build from the command line; the runners' parsers read
//! the summary each one prints (and JUnit XML, for anything else) into seed 000's
//! [`TestSuite`]. Parsers look for their runner's own summary lines, so an output is only
//! claimed by the runner that wrote it; a runner's output the agent cut short still gives
//! what it shows.

pub mod build;
pub mod command;
mod ctest;
mod go;
mod js;
pub mod junit;
mod jvm;
mod mix;
mod python;
mod ruby_php_dotnet;
mod rust;

use ccmem_proto::env::{limits, SuiteStatus, TestFailure, TestSuite};
use regex::Regex;
use std::sync::OnceLock;

/// One suite's run as read from an output.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// End-to-end (Playwright, Cypress) rather than unit.
    pub e2e: bool,
    /// Counts, failures and framework; `command` and `ranAt` are the caller's.
    pub suite: TestSuite,
}

type Parser = fn(&str) -> Option<Run>;

/// Every runner, most specific signature first (nextest's output embeds cargo's summary
/// lines; Cypress's embeds Mocha's).
const PARSERS: &[(&str, Parser)] = &[
    ("nextest", rust::nextest),
    ("cargo", rust::cargo),
    ("pytest", python::pytest),
    ("unittest", python::unittest),
    ("ctest", ctest::ctest),
    ("mix", mix::mix),
    ("go", go::go_test),
    ("vitest", js::vitest),
    ("jest", js::jest),
    ("playwright", js::playwright),
    ("cypress", js::cypress),
    ("bun", js::bun),
    ("node", js::node_test),
    ("mocha", js::mocha),
    ("rspec", ruby_php_dotnet::rspec),
    ("phpunit", ruby_php_dotnet::phpunit),
    ("dotnet", ruby_php_dotnet::dotnet),
    ("maven", jvm::maven),
    ("gradle", jvm::gradle),
];

/// (runner, runner whose lines its output embeds): Cypress prints Mocha's summaries.
const SHADOWED: &[(&str, &str)] = &[("cypress", "mocha")];

/// Names accepted by `--framework`.
pub fn frameworks() -> impl Iterator<Item = &'static str> {
    PARSERS.iter().map(|(n, _)| *n)
}

/// Reads the test results in `output`: the unit run and the end-to-end run it holds (a
/// `npm test` may run both). `hint` (a framework name, from the command or the user) is
/// tried first and, when it names a runner, is the only one tried.
pub fn parse(output: &str, hint: Option<&str>) -> Vec<Run> {
    let text = strip_ansi(output);
    if let Some(h) = hint.map(str::to_ascii_lowercase) {
        if let Some((_, p)) = PARSERS.iter().find(|(n, _)| *n == h || aliases(&h) == Some(*n)) {
            return p(&text).into_iter().map(settled).collect();
        }
    }
    let mut runs: Vec<Run> = Vec::new();
    for (name, p) in PARSERS {
        if SHADOWED.iter().any(|(by, n)| n == name && runs.iter().any(|r| r.suite.framework == *by)) {
            continue;
        }
        if let Some(r) = p(&text) {
            if !runs.iter().any(|x| x.e2e == r.e2e) {
                runs.push(settled(r));
            }
        }
        if runs.len() == 2 {
            break;
        }
    }
    runs
}

/// Largest JUnit report read.
const MAX_JUNIT: u64 = 64 << 20;

/// The suites in a `session.test_report`: its JUnit file or its output, each suite with the
/// command given. An unknown framework, an unreadable file or an output with no results is
/// an error that says what was expected.
pub fn report(p: &ccmem_proto::api::TestReportParams) -> Result<Vec<ccmem_proto::api::TestRun>, String> {
    let fw = p.framework.as_deref().map(str::trim).filter(|f| !f.is_empty());
    let mut runs = match (&p.junit, &p.output) {
        (Some(file), _) => {
            // A regular file only (a FIFO would block a daemon thread), within the cap.
            let xml = ccmem_proto::untrusted::read_string(file, MAX_JUNIT)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            vec![junit::parse(&xml, fw).map_err(|e| format!("{}: {e}", file.display()))?]
        }
        (None, Some(out)) => {
            if let Some(f) = fw {
                let known =
                    frameworks().any(|n| n == f.to_ascii_lowercase()) || aliases(&f.to_ascii_lowercase()).is_some();
                if !known {
                    return Err(format!(
                        "unknown framework {f:?}; known: {}",
                        frameworks().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
            let runs = parse(out, fw);
            if runs.is_empty() {
                return Err(match fw {
                    Some(f) => format!("no {f} results found in the output (is it the runner's whole output?)"),
                    None => format!(
                        "no test results recognised in the output; name the runner with --framework ({})",
                        frameworks().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            runs
        }
        (None, None) => return Err("give the runner's output or a JUnit file".into()),
    };
    Ok(runs
        .drain(..)
        .map(|mut r| {
            r.suite.command = p.command.clone().unwrap_or_default();
            ccmem_proto::api::TestRun { e2e: p.e2e.unwrap_or(r.e2e), suite: r.suite }
        })
        .collect())
}

fn aliases(name: &str) -> Option<&'static str> {
    Some(match name {
        "cargo-test" | "rust" | "cargo test" => "cargo",
        "cargo-nextest" => "nextest",
        "py.test" | "python" => "pytest",
        "go test" | "golang" => "go",
        "node-test" | "node:test" | "node --test" => "node",
        "mvn" | "surefire" | "junit" => "maven",
        "gradlew" => "gradle",
        "bun test" => "bun",
        "python -m unittest" | "django" => "unittest",
        "exunit" | "mix test" | "elixir" => "mix",
        "cmake" => "ctest",
        _ => return None,
    })
}

fn settled(mut r: Run) -> Run {
    r.suite.settle();
    r
}

/// A suite whose counts came from a runner named `framework`.
fn suite(framework: &str, passed: u64, failed: u64, skipped: u64, total: Option<u64>) -> TestSuite {
    TestSuite {
        framework: framework.into(),
        passed,
        failed,
        skipped,
        total: total.unwrap_or(passed + failed + skipped),
        status: if failed > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed },
        ..Default::default()
    }
}

/// A failure with its message cut to its first line and seed 000's length.
fn failure(file: &str, line: Option<u32>, name: &str, message: Option<&str>) -> TestFailure {
    TestFailure {
        file: file.trim().trim_start_matches("./").to_string(),
        line,
        test_name: ccmem_proto::session::truncate_chars(name.trim(), 300),
        message: message.map(first_line).filter(|m| !m.is_empty()),
    }
}

/// The first non-empty line, at most 200 characters.
pub fn first_line(s: &str) -> String {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    ccmem_proto::session::truncate_chars(line, limits::MESSAGE_CHARS)
}

/// Output without terminal colour codes.
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    if !s.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(s);
    }
    let re = ANSI.get_or_init(|| Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07").expect("ansi pattern"));
    re.replace_all(s, "")
}

/// Compiles a pattern once.
macro_rules! re {
    ($name:ident, $pat:expr) => {
        fn $name() -> &'static regex::Regex {
            static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            R.get_or_init(|| regex::Regex::new($pat).expect(stringify!($name)))
        }
    };
}
pub(crate) use re;

/// The number before `word` in a summary such as "3 passed, 1 failed" (0 when absent).
fn count(summary: &str, words: &[&str]) -> u64 {
    let tokens: Vec<&str> = summary.split(|c: char| c.is_whitespace() || c == ',' || c == '|' || c == ';').collect();
    let mut n = 0;
    for w in tokens.windows(2) {
        if words.iter().any(|x| w[1].eq_ignore_ascii_case(x)) {
            n += w[0].parse::<u64>().unwrap_or(0);
        }
    }
    n
}

/// Where a count in a summary goes.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Passed,
    Failed,
    Skipped,
}

/// Sums summary lines such as `2 passed` / ` 1 fail` (group 1 the number, group 2 the word
/// that `slot` files) into (passed, failed, skipped).
fn tally(re: &Regex, out: &str, slot: impl Fn(&str) -> Slot) -> (u64, u64, u64) {
    let mut t = (0, 0, 0);
    for c in re.captures_iter(out) {
        let n: u64 = c[1].parse().unwrap_or(0);
        match slot(&c[2]) {
            Slot::Passed => t.0 += n,
            Slot::Failed => t.1 += n,
            Slot::Skipped => t.2 += n,
        }
    }
    t
}

/// Sums each numbered group over every match of `re` (one summary per binary, assembly or
/// module); None when nothing matches.
fn sums<const N: usize>(re: &Regex, out: &str) -> Option<[u64; N]> {
    let mut t = [0u64; N];
    let mut any = false;
    for c in re.captures_iter(out) {
        any = true;
        for (i, v) in t.iter_mut().enumerate() {
            *v += c.get(i + 1).and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);
        }
    }
    any.then_some(t)
}

/// `file:line[:col]` at the end of a stack frame or location, outside dependencies and the
/// runtime.
fn location(line: &str) -> Option<(String, Option<u32>)> {
    re!(loc, r"(?:\(|\s|^)(?:webpack:///|file://)?((?:[A-Za-z]:)?[^\s():]+\.[A-Za-z]{1,5}):(\d+)(?::\d+)?\)?\s*$");
    let c = loc().captures(line.trim())?;
    let file = c[1].to_string();
    if file.contains("node_modules/") || file.starts_with("node:") || file.starts_with("internal/") {
        return None;
    }
    Some((file, c[2].parse().ok()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Real outputs (see fixtures/testout/generate.sh) and documented ones (*.doc.txt).
    pub(crate) fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/testout").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// (fixture, framework, e2e, passed, failed, skipped, first failure: (file, line, name, message start)).
    type Case = (
        &'static str,
        &'static str,
        bool,
        u64,
        u64,
        u64,
        Option<(&'static str, Option<u32>, &'static str, &'static str)>,
    );

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
            Some((
                "vt/calc.test.mjs",
                Some(8),
                "calc > measures",
                "AssertionError: Expected values to be strictly equal:",
            )),
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
        (
            "rspec-fail.txt",
            "rspec",
            false,
            2,
            1,
            1,
            Some(("spec/calc_spec.rb", Some(4), "Calc measures", "expected: 9")),
        ),
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
        assert_eq!(
            (s.status, s.failed, s.passed, s.total, s.failures.len()),
            (SuiteStatus::Failed, 1, 2, 4, 4),
            "{s:#?}"
        );
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
}
