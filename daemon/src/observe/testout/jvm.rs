//! Maven (Surefire) and Gradle.

use super::{failure, re, suite, Run};
use ccmem_proto::model::environment::SuiteStatus;

// The per-class lines end with `-- in Class` or `Time elapsed`; the module's total does not.
re!(
    mvn_total,
    r"(?m)^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$"
);
re!(mvn_item, r"^\[ERROR\]\s{2,}(?:Run \d+: )?([\w$.]+?)(?::(\d+))?(?: (?:»|->)?\s*(.*))?$");

/// Maven Surefire: each module's `Tests run: N, Failures: F, Errors: E, Skipped: S`
/// total, summed; failures from the `Failures:` and `Errors:` lists of the results.
pub fn maven(out: &str) -> Option<Run> {
    let t: [u64; 4] = super::sums(mvn_total(), out)?;
    let [run, fails, errors, skipped] = t;
    let mut failures = Vec::new();
    let mut in_list = false;
    for line in out.lines() {
        let body = line.trim_start_matches("[ERROR]").trim();
        if body == "Failures:" || body == "Errors:" {
            in_list = true;
            continue;
        }
        if !in_list {
            continue;
        }
        match mvn_item().captures(line) {
            Some(c) if line.starts_with("[ERROR]   ") => {
                let name = c[1].to_string();
                let class = name.rsplit_once('.').map_or(name.as_str(), |(c, _)| c).to_string();
                failures.push(failure(
                    &class,
                    c.get(2).and_then(|l| l.as_str().parse().ok()),
                    &name,
                    c.get(3).map(|m| m.as_str()),
                ));
            }
            _ => in_list = false,
        }
    }
    let failed = fails + errors;
    let mut s = suite("maven", run.saturating_sub(failed + skipped), failed, skipped, Some(run));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(gradle_counts, r"(?m)^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?\s*$");
re!(gradle_fail, r"^(\S.*?) > (.+?) FAILED\s*$");
re!(gradle_at, r"^\s+(\S+)(?: at (\S+?):(\d+))?\s*$");
re!(gradle_task, r"(?m)^> Task :(?:\S+:)?test(?: FAILED)?\s*$");

/// Gradle: `5 tests completed, 1 failed, 1 skipped` (printed only when something failed);
/// failures from `Class > method() FAILED` and the exception line under it. A test task
/// that ran and a successful build with no count is a pass.
pub fn gradle(out: &str) -> Option<Run> {
    if !gradle_task().is_match(out) {
        return None;
    }
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(f) = gradle_fail().captures(line) else { continue };
        let at = lines.get(i + 1).and_then(|l| gradle_at().captures(l));
        let (file, line_no, msg) = match &at {
            Some(a) => {
                (a.get(2).map_or("", |m| m.as_str()), a.get(3).and_then(|m| m.as_str().parse().ok()), Some(&a[1]))
            }
            None => ("", None, None),
        };
        failures.push(failure(file, line_no, &format!("{} > {}", &f[1], &f[2]), msg));
    }
    let mut s = match gradle_counts().captures_iter(out).last() {
        Some(c) => {
            let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);
            suite("gradle", n(1).saturating_sub(n(2) + n(3)), n(2), n(3), Some(n(1)))
        }
        None => suite("gradle", 0, failures.len() as u64, 0, None),
    };
    if failures.is_empty() && out.contains("BUILD FAILED") {
        s.status = SuiteStatus::Failed;
    }
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}
