//! CTest (CMake): `67% tests passed, 1 tests failed out of 3`, and the closing list of
//! failed tests.

use super::{failure, re, suite, Run};

re!(summary, r"(?m)^\d+% tests passed, (\d+) tests? failed out of (\d+)\s*$");
re!(failed_test, r"^\s+\d+ - (.+?) \(([^)]+)\)\s*$");
re!(not_run, r"(?m)\*\*\*(?:Not Run|Skipped)|\(Disabled\)");

/// CTest's summary; failures from `The following tests FAILED:`.
pub fn ctest(out: &str) -> Option<Run> {
    let c = summary().captures_iter(out).last()?;
    let failed: u64 = c[1].parse().ok()?;
    let total: u64 = c[2].parse().ok()?;
    let skipped = not_run().find_iter(out).count() as u64;
    let mut failures = Vec::new();
    let mut in_list = false;
    for line in out.lines() {
        if line.starts_with("The following tests FAILED:") {
            in_list = true;
        } else if in_list {
            match failed_test().captures(line) {
                Some(f) => failures.push(failure("", None, &f[1], Some(&f[2]))),
                None if line.trim().is_empty() => {}
                None => in_list = false,
            }
        }
    }
    let mut s = suite("ctest", total.saturating_sub(failed + skipped), failed, skipped, Some(total));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}
