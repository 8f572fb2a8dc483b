//! ExUnit (`mix test`): `4 tests, 1 failure, 1 skipped`, and the numbered failures.

use super::{failure, re, suite, Run};

re!(
    summary,
    r"(?m)^((?:\d+ (?:doctests?|properties|property|tests?), )*\d+ failures?(?:, \d+ (?:skipped|excluded|invalid))*)\s*(?:\(.*\))?\s*$"
);
re!(head, r"^\s+\d+\) (?:test|doctest|property) (.+) \(([\w.]+)\)\s*$");
re!(at, r"^\s+(\S+\.exs?):(\d+)\s*$");

/// ExUnit's summary line; failures from `1) test name (Module)` headers, with the file and
/// line under them and the first line of the error.
pub fn mix(out: &str) -> Option<Run> {
    let c = summary().captures_iter(out).last()?;
    let line = c[1].to_string();
    let total = super::count(&line, &["test", "tests", "doctest", "doctests", "property", "properties"]);
    let failed = super::count(&line, &["failure", "failures", "invalid"]);
    let skipped = super::count(&line, &["skipped", "excluded"]);
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(h) = head().captures(l) else { continue };
        let loc = lines.get(i + 1).and_then(|n| at().captures(n));
        let (file, line_no) = loc.map_or((String::new(), None), |a| (a[1].to_string(), a[2].parse().ok()));
        let msg = lines[i + 2..].iter().map(|m| m.trim()).find(|m| !m.is_empty());
        failures.push(failure(&file, line_no, &format!("{}: {}", &h[2], &h[1]), msg));
    }
    let mut s = suite("mix", total.saturating_sub(failed + skipped), failed, skipped, Some(total));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}
