//! JavaScript runners: Vitest, Jest, Playwright, Cypress, Bun, node's test runner, Mocha.

use super::{failure, location, re, suite, Run, Slot};
use ccmem_proto::model::environment::{SuiteStatus, TestFailure};

re!(vitest_tests, r"(?m)^\s+Tests\s+(.*?)\s*\((\d+)\)\s*$");
re!(vitest_files, r"(?m)^\s*Test Files\s+.*\(\d+\)\s*$");
re!(vitest_fail, r"^\s*FAIL\s+(\S+) > (.+?)\s*$");
re!(vitest_at, r"^\s*❯\s+(\S+?):(\d+):\d+\s*$");

/// Vitest: `Tests  1 failed | 2 passed | 1 skipped (4)`; failures from `FAIL file > test`.
pub fn vitest(out: &str) -> Option<Run> {
    if !vitest_files().is_match(out) {
        return None;
    }
    let c = vitest_tests().captures_iter(out).last()?;
    let counts = c[1].to_string();
    let total = c[2].parse().ok();
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(f) = vitest_fail().captures(line) else { continue };
        let block = next_block(&lines[i + 1..], |l| vitest_fail().is_match(l) || l.contains("⎯⎯⎯"));
        let msg = block.iter().find(|l| !l.trim().is_empty()).copied();
        let at = block.iter().find_map(|l| vitest_at().captures(l));
        let line_no = at.as_ref().filter(|a| a[1] == f[1]).and_then(|a| a[2].parse().ok());
        failures.push(failure(&f[1], line_no, &f[2], msg));
    }
    let failed = super::count(&counts, &["failed"]);
    let mut s =
        suite("vitest", super::count(&counts, &["passed"]), failed, super::count(&counts, &["skipped", "todo"]), total);
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(jest_tests, r"(?m)^Tests:\s+(.*\d+ total)\s*$");
re!(jest_suites, r"(?m)^Test Suites:\s+(.*\d+ total)\s*$");
re!(jest_file, r"^(?:FAIL|PASS)\s+(\S+)");
re!(jest_bullet, r"^\s+● (.+?)\s*$");
re!(jest_marker, r"^\s*>\s*(\d+) \|");

/// Jest: `Tests: 1 failed, 1 skipped, 2 passed, 4 total`; failures from `● suite › test`
/// under their file's `FAIL` line; a file that failed to load is a failure too.
pub fn jest(out: &str) -> Option<Run> {
    let suites = jest_suites().captures_iter(out).last()?[1].to_string();
    let tests = jest_tests().captures_iter(out).last().map(|c| c[1].to_string()).unwrap_or_default();
    let lines: Vec<&str> = out.lines().collect();
    let mut file = String::new();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(f) = jest_file().captures(line) {
            file = f[1].trim_start_matches("./").to_string();
            continue;
        }
        let Some(b) = jest_bullet().captures(line) else { continue };
        let block = next_block(&lines[i + 1..], |l| {
            jest_bullet().is_match(l) || jest_file().is_match(l) || l.starts_with("Test Suites:")
        });
        let msg = block.iter().find(|l| !l.trim().is_empty()).copied();
        let line_no = block
            .iter()
            .find_map(|l| location(l).filter(|(f, _)| f.ends_with(&file)).and_then(|(_, n)| n))
            .or_else(|| block.iter().find_map(|l| jest_marker().captures(l)).and_then(|m| m[1].parse().ok()));
        let name = b[1].to_string();
        if name == "Test suite failed to run" {
            failures.push(failure(&file, None, &format!("{file}: test suite failed to run"), msg));
        } else {
            failures.push(failure(&file, line_no, &name, msg));
        }
    }
    // Jest's own counts: a suite that could not load ran no test, so it is a failure of the
    // run (listed, with its error), not a failed test.
    let mut s = suite(
        "jest",
        super::count(&tests, &["passed"]),
        super::count(&tests, &["failed"]),
        super::count(&tests, &["skipped", "todo"]),
        Some(super::count(&tests, &["total"])),
    );
    if super::count(&suites, &["failed"]) > 0 && s.failed == 0 {
        s.status = SuiteStatus::Failed;
    }
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(pw_running, r"(?m)^Running \d+ tests? using \d+ workers?");
re!(pw_count, r"(?m)^\s+(\d+) (passed|failed|flaky|skipped|did not run|interrupted)\b");
re!(pw_fail, r"^\s+\d+\) (?:\[[^\]]+\] › )?(\S+?):(\d+):\d+ › (.+?)(?:\s+─+)?\s*$");

/// Playwright (list, line and dot reporters): `1 failed`, `1 passed (1.0s)`; failures
/// from the numbered headers `1) file:line:col › suite › test`.
pub fn playwright(out: &str) -> Option<Run> {
    if !pw_running().is_match(out) {
        return None;
    }
    let (passed, failed, skipped) = super::tally(pw_count(), out, |w| match w {
        "passed" | "flaky" => Slot::Passed,
        "failed" | "interrupted" => Slot::Failed,
        _ => Slot::Skipped,
    });
    let lines: Vec<&str> = out.lines().collect();
    let mut failures: Vec<TestFailure> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(f) = pw_fail().captures(line) else { continue };
        let name = f[3].to_string();
        if failures.iter().any(|x| x.test_name == name && x.file == f[1]) {
            continue;
        }
        let block = next_block(&lines[i + 1..], |l| pw_fail().is_match(l) || pw_count().is_match(l));
        let msg = block.iter().find(|l| !l.trim().is_empty()).copied();
        failures.push(failure(&f[1], f[2].parse().ok(), &name, msg));
    }
    let mut s = suite("playwright", passed, failed, skipped, None);
    s.failures = failures;
    Some(Run { e2e: true, suite: s })
}

re!(
    cy_total,
    r"(?m)^\s*[✔✖]\s+(?:All specs passed!|\d+ of \d+ failed \(\d+%\))\s+[\d:]+\s+(\d+)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s*$"
);

/// Cypress: the run's last table line (tests, passing, failing, pending, skipped); failures
/// in Mocha's format.
pub fn cypress(out: &str) -> Option<Run> {
    let c = cy_total().captures_iter(out).last()?;
    let n = |i: usize| c[i].parse::<u64>().unwrap_or(0);
    let mut s = suite("cypress", n(2), n(3), n(4) + n(5), Some(n(1)));
    s.failures = mocha_failures(out);
    Some(Run { e2e: true, suite: s })
}

re!(bun_head, r"(?m)^bun test v\d|^Ran \d+ tests? across \d+ files?\.");
re!(bun_count, r"(?m)^\s*(\d+) (pass|fail|skip|todo|errors?)\s*$");
re!(bun_fail, r"^\s*(?:✗|\(fail\)) (.+?)(?: \[[\d.]+m?s\])?\s*$");
re!(bun_done, r"^\s*(?:✓|✗|»|\((?:pass|fail|skip)\)) ");

/// Bun: ` 2 pass` / ` 1 fail` / ` 1 skip` / ` 2 errors`; each failure's error is printed
/// before its `✗ name` line. Recognised by its header, or by its closing `Ran N tests
/// across M files.` when the output was cut (`| tail`). Errors outside any test (a file that
/// throws when loaded) fail the run and count as failures.
pub fn bun(out: &str) -> Option<Run> {
    if !bun_head().is_match(out) {
        return None;
    }
    let (passed, failed, skipped) = super::tally(bun_count(), out, |w| match w {
        "pass" => Slot::Passed,
        "fail" | "error" | "errors" => Slot::Failed,
        _ => Slot::Skipped,
    });
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(f) = bun_fail().captures(line) else { continue };
        let start = lines[..i].iter().rposition(|l| bun_done().is_match(l)).map_or(0, |p| p + 1);
        let before = &lines[start..i];
        let msg = before.iter().find(|l| l.starts_with("error:")).copied();
        let at = before.iter().find_map(|l| location(l));
        let (file, line_no) = at.map_or((String::new(), None), |(f, n)| (f, n));
        failures.push(failure(&file, line_no, &f[1], msg));
    }
    // Errors outside tests: each `# Unhandled error between tests` block's error line (the
    // first one found when the block was cut off).
    let errors: Vec<&str> =
        lines.iter().map(|l| l.trim()).filter(|l| l.starts_with("error:") || l.starts_with("Error:")).collect();
    let mut k = 0;
    while failures.len() < failed as usize && failures.len() < 20 {
        let msg = errors.get(k).or(errors.first()).copied();
        failures.push(failure("", None, super::OUTSIDE_ANY_TEST, msg));
        k += 1;
    }
    let mut s = suite("bun", passed, failed, skipped, None);
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(node_count, r"(?m)^(?:#|ℹ) (tests|pass|fail|skipped|todo|cancelled) (\d+)\s*$");
re!(tap_not_ok, r"^(\s*)not ok \d+ - (.+?)(?: # .*)?$");
re!(tap_location, r"^\s*location: '(.+):(\d+):\d+'\s*$");
re!(tap_error, r"^\s*error: (.*)$");

/// node's test runner, TAP (`# pass 3`) and spec (`ℹ pass 3`) reporters; failures from
/// `not ok` entries that are tests, not suites.
pub fn node_test(out: &str) -> Option<Run> {
    let (mut total, mut passed, mut failed, mut skipped, mut any) = (0, 0, 0, 0, false);
    for c in node_count().captures_iter(out) {
        let n: u64 = c[2].parse().unwrap_or(0);
        any = true;
        match &c[1] {
            "tests" => total = n,
            "pass" => passed = n,
            "fail" | "cancelled" => failed += n,
            _ => skipped += n,
        }
    }
    if !any || !out.contains("# suites ") && !out.contains("ℹ suites ") && !out.contains("TAP version") {
        return None;
    }
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = tap_not_ok().captures(line) else { continue };
        let indent = c[1].len();
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim() != "..." || l.len() - l.trim_start().len() > indent + 2)
            .copied()
            .collect();
        if block.iter().any(|l| l.trim() == "type: 'suite'" || l.contains("failureType: 'subtestsFailed'")) {
            continue;
        }
        let loc = block.iter().find_map(|l| tap_location().captures(l));
        let msg = block.iter().position(|l| tap_error().is_match(l)).map(|p| {
            let first = tap_error().captures(block[p]).map(|c| c[1].to_string()).unwrap_or_default();
            if first.starts_with('|') || first.starts_with('>') {
                block.get(p + 1).map(|l| l.trim().to_string()).unwrap_or_default()
            } else {
                first.trim_matches('\'').to_string()
            }
        });
        let (file, line_no) = loc.map_or((String::new(), None), |l| (l[1].to_string(), l[2].parse().ok()));
        failures.push(failure(&file, line_no, &c[2], msg.as_deref()));
    }
    if failures.is_empty() {
        failures = spec_failures(&lines);
    }
    let mut s = suite("node", passed, failed, skipped, Some(total));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(spec_at, r"^test at (.+):(\d+):\d+\s*$");
re!(spec_failed, r"^\s*✖ (.+?) \([\d.]+m?s\)\s*$");

/// The spec reporter's closing list: `✖ failing tests:`, then per test `test at file:line:col`,
/// `✖ name (1.2ms)` and its error, indented.
fn spec_failures(lines: &[&str]) -> Vec<TestFailure> {
    let Some(start) = lines.iter().position(|l| l.trim() == "✖ failing tests:") else { return Vec::new() };
    let mut out = Vec::new();
    let mut at: Option<(String, Option<u32>)> = None;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        if let Some(c) = spec_at().captures(line) {
            at = Some((c[1].to_string(), c[2].parse().ok()));
        } else if let Some(c) = spec_failed().captures(line) {
            let msg = lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty());
            let (file, line_no) = at.take().unwrap_or_default();
            out.push(failure(&file, line_no, &c[1], msg));
        }
    }
    out
}

re!(mocha_passing, r"(?m)^\s+(\d+) passing \(\d+m?s\)\s*$");
re!(mocha_line, r"(?m)^\s+(\d+) (failing|pending)\s*$");
re!(mocha_head, r"^\s+(\d+)\) (.+?)\s*$");

/// Mocha: `2 passing (5ms)`, `1 pending`, `1 failing`, then numbered failures.
pub fn mocha(out: &str) -> Option<Run> {
    let passed: u64 = mocha_passing().captures_iter(out).map(|c| c[1].parse::<u64>().unwrap_or(0)).sum();
    if !mocha_passing().is_match(out) {
        return None;
    }
    let (_, failed, skipped) =
        super::tally(mocha_line(), out, |w| if w == "failing" { Slot::Failed } else { Slot::Skipped });
    let mut s = suite("mocha", passed, failed, skipped, None);
    s.failures = mocha_failures(out);
    Some(Run { e2e: false, suite: s })
}

/// Mocha's numbered failures after `N failing`: the title runs over lines until one ends
/// with `:`; the message follows; the first stack frame outside dependencies locates it.
fn mocha_failures(out: &str) -> Vec<TestFailure> {
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    let mut i = match lines.iter().position(|l| mocha_line().is_match(l) && l.contains("failing")) {
        Some(p) => p + 1,
        None => return failures,
    };
    while i < lines.len() {
        let Some(h) = mocha_head().captures(lines[i]) else {
            i += 1;
            continue;
        };
        let mut title = vec![h[2].trim_end_matches(':').to_string()];
        let mut j = i + 1;
        if !h[2].ends_with(':') {
            while j < lines.len() && !lines[j].trim().is_empty() {
                let t = lines[j].trim();
                title.push(t.trim_end_matches(':').to_string());
                j += 1;
                if t.ends_with(':') {
                    break;
                }
            }
        }
        let block = next_block(&lines[j..], |l| mocha_head().is_match(l));
        let msg = block.iter().find(|l| !l.trim().is_empty()).copied();
        let at = block.iter().find_map(|l| location(l));
        let (file, line_no) = at.map_or((String::new(), None), |(f, n)| (f, n));
        failures.push(failure(&file, line_no, &title.join(" "), msg));
        i = j + block.len();
    }
    failures
}

/// The lines after a header, up to the next header.
fn next_block<'a>(lines: &'a [&'a str], is_header: impl Fn(&str) -> bool) -> &'a [&'a str] {
    let end = lines.iter().position(|l| is_header(l)).unwrap_or(lines.len());
    &lines[..end]
}
