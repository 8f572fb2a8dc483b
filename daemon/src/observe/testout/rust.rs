//! `cargo test` and `cargo nextest run`.

use super::{failure, re, suite, Run};
use ccmem_proto::model::environment::TestFailure;

re!(result_line, r"(?m)^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored");
re!(failed_line, r"(?m)^test (\S+) \.\.\. FAILED\s*$");
// Since Rust 1.73: `thread 'name' (tid) panicked at src/lib.rs:8:62:` then the message;
// before: `thread 'name' panicked at 'message', src/lib.rs:8:5`.
re!(panic_new, r"^\s*thread '([^']+)'(?: \(\d+\))? panicked at ([^\s:]+):(\d+):\d+:\s*$");
re!(panic_old, r"^\s*thread '([^']+)'(?: \(\d+\))? panicked at '(.*)', ([^\s:]+):(\d+):\d+\s*$");

/// `cargo test`: every binary's `test result:` line summed; failures with their panic.
pub fn cargo(out: &str) -> Option<Run> {
    let totals: Option<[u64; 3]> = super::sums(result_line(), out);
    let mut names: Vec<String> = failed_line().captures_iter(out).map(|c| c[1].to_string()).collect();
    // The list after the last `failures:` heading names them all, even when the per-test
    // lines were cut from a long output.
    let mut in_list = false;
    for line in out.lines() {
        if line == "failures:" {
            in_list = true;
        } else if in_list {
            match line.strip_prefix("    ") {
                Some(n) if !n.contains(' ') && !n.is_empty() => {
                    if !names.iter().any(|x| x == n) {
                        names.push(n.to_string());
                    }
                }
                _ if line.trim().is_empty() => {}
                _ => in_list = false,
            }
        }
    }
    if totals.is_none() && names.is_empty() {
        return None;
    }
    let [passed, failed, ignored] = totals.unwrap_or_default();
    let panics = panics(out);
    let mut s = suite("cargo", passed, failed.max(names.len() as u64), ignored, None);
    s.failures = names.iter().map(|n| with_panic(n, n, &panics)).collect();
    Some(Run { e2e: false, suite: s })
}

re!(nextest_summary, r"(?m)^\s*Summary \[\s*[\d.]+s\]\s+(\d+) tests? run: (.*)$");
re!(
    nextest_fail,
    r"^\s*(?:FAIL|TIMEOUT|SIGSEGV|SIGABRT|SIGBUS|ABORT|LEAK-FAIL)\s+\[\s*[\d.]+s\]\s+(?:\(\s*\d+/\d+\)\s+)?(\S+)\s+(\S+)\s*$"
);

/// `cargo nextest run`: the `Summary` line; failures by binary and test, with their panic.
pub fn nextest(out: &str) -> Option<Run> {
    let c = nextest_summary().captures(out)?;
    let detail = c[2].to_string();
    let run = c[1].parse::<u64>().unwrap_or(0);
    let passed = super::count(&detail, &["passed"]);
    let failed = super::count(&detail, &["failed", "timed", "exec"]);
    let skipped = super::count(&detail, &["skipped"]);
    let panics = panics(out);
    let mut failures: Vec<TestFailure> = Vec::new();
    for line in out.lines() {
        if let Some(f) = nextest_fail().captures(line) {
            let name = format!("{} {}", &f[1], &f[2]);
            if !failures.iter().any(|x| x.test_name == name) {
                failures.push(with_panic(&name, &f[2], &panics));
            }
        }
    }
    let mut s = suite("nextest", passed, failed.max(failures.len() as u64), skipped, Some(run + skipped));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

/// Panics by test name: (file, line, message).
fn panics(out: &str) -> Vec<(String, String, u32, String)> {
    let lines: Vec<&str> = out.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = panic_new().captures(line) {
            let msg = lines.get(i + 1).map(|m| m.trim().to_string()).unwrap_or_default();
            found.push((c[1].to_string(), c[2].to_string(), c[3].parse().unwrap_or(0), msg));
        } else if let Some(c) = panic_old().captures(line) {
            found.push((c[1].to_string(), c[3].to_string(), c[4].parse().unwrap_or(0), c[2].to_string()));
        }
    }
    found
}

fn with_panic(name: &str, test: &str, panics: &[(String, String, u32, String)]) -> TestFailure {
    match panics.iter().find(|p| p.0 == test) {
        Some((_, file, line, msg)) => failure(file, Some(*line), name, Some(msg)),
        None => failure("", None, name, None),
    }
}
