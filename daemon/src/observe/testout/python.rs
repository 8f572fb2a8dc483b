//! pytest.

use super::{failure, re, suite, Run};
use ccmem_proto::model::environment::TestFailure;

// `==== 1 failed, 2 passed, 1 skipped in 0.03s ====`, or without the rules under `-q`.
re!(
    summary,
    r"(?m)^=*\s*((?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?|rerun)(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$"
);
re!(short, r"^(FAILED|ERROR) (\S+?)(?:::(\S+))?(?: - (.*))?$");
re!(section, r"^_{3,} (?:(?:ERROR at \w+ of )?(\S.*?)) _{3,}$");
re!(located, r"^(\S+\.py):(\d+): \S");

/// pytest's final summary line; failures from the short summary, located from their
/// sections.
pub fn pytest(out: &str) -> Option<Run> {
    let c = summary().captures_iter(out).last()?;
    let counts = c[1].to_string();
    let passed = super::count(&counts, &["passed", "xpassed"]);
    let failed = super::count(&counts, &["failed", "error", "errors"]);
    let skipped = super::count(&counts, &["skipped", "xfailed"]);
    let sections = sections(out);
    let mut failures: Vec<TestFailure> = Vec::new();
    for line in out.lines() {
        let Some(c) = short().captures(line) else { continue };
        let file = c[2].to_string();
        let name = c.get(3).map_or(file.clone(), |m| m.as_str().to_string());
        let short_name = name.rsplit("::").next().unwrap_or(&name).to_string();
        let sec = sections.iter().find(|s| s.0 == short_name || s.0.ends_with(&format!(".{short_name}")));
        let line_no = sec.and_then(|s| s.1.as_ref()).filter(|(f, _)| *f == file).map(|(_, l)| *l);
        let msg = c.get(4).map(|m| m.as_str().to_string()).or_else(|| sec.map(|s| s.2.clone()));
        failures.push(failure(&file, line_no, &name, msg.as_deref()));
    }
    if failures.is_empty() {
        // No short summary (`-rN`): the sections alone.
        for (name, loc, msg) in &sections {
            let (file, line) = loc.clone().map_or((String::new(), None), |(f, l)| (f, Some(l)));
            failures.push(failure(&file, line, name, Some(msg)));
        }
    }
    let mut s = suite("pytest", passed, failed.max(failures.len() as u64), skipped, None);
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

/// A FAILURES or ERRORS section: test name, where it failed, first `E` line.
type Section = (String, Option<(String, u32)>, String);

/// The FAILURES and ERRORS sections.
fn sections(out: &str) -> Vec<Section> {
    let mut found: Vec<Section> = Vec::new();
    let mut in_failures = false;
    for line in out.lines() {
        if line.starts_with('=') {
            in_failures = line.contains(" FAILURES ") || line.contains(" ERRORS ");
            continue;
        }
        if !in_failures {
            continue;
        }
        if let Some(c) = section().captures(line) {
            found.push((c[1].to_string(), None, String::new()));
        } else if let Some(cur) = found.last_mut() {
            if let Some(m) = line.strip_prefix("E ").map(str::trim).filter(|m| !m.is_empty()) {
                if cur.2.is_empty() {
                    cur.2 = m.to_string();
                }
            } else if let Some(c) = located().captures(line) {
                cur.1 = Some((c[1].to_string(), c[2].parse().unwrap_or(0)));
            }
        }
    }
    found
}

re!(ran, r"(?m)^Ran (\d+) tests? in [\d.]+s\s*$");
re!(verdict, r"(?m)^(OK|FAILED)(?: \(([^)]*)\))?\s*$");
re!(block_head, r"^(FAIL|ERROR): (\S+) \(([^)]+)\)");
re!(frame, r#"^\s*File "([^"]+)", line (\d+)"#);

/// unittest (`python -m unittest`, Django's `manage.py test`): `Ran 5 tests in 0.001s`,
/// then `OK (skipped=1)` or `FAILED (failures=1, errors=1)`; failures from the `FAIL:` and
/// `ERROR:` blocks, located at their last frame in the tests' own files.
pub fn unittest(out: &str) -> Option<Run> {
    let summary = ran().captures_iter(out).last()?;
    let total: u64 = summary[1].parse().ok()?;
    let after = &out[summary.get(0)?.end()..];
    let v = verdict().captures(after)?;
    let mut counts = std::collections::HashMap::new();
    for part in v.get(2).map_or("", |m| m.as_str()).split(',') {
        if let Some((k, n)) = part.trim().split_once('=') {
            counts.insert(k.trim().to_string(), n.trim().parse::<u64>().unwrap_or(0));
        }
    }
    let get = |k: &str| counts.get(k).copied().unwrap_or(0);
    let failed = get("failures") + get("errors") + get("unexpected successes");
    let skipped = get("skipped") + get("expected failures");
    let lines: Vec<&str> = out.lines().collect();
    let mut failures: Vec<TestFailure> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = block_head().captures(line) else { continue };
        let block: Vec<&str> =
            lines[i + 1..].iter().take_while(|l| !l.starts_with("=====") && !ran().is_match(l)).copied().collect();
        let frames: Vec<(String, u32)> = block
            .iter()
            .filter_map(|l| frame().captures(l))
            .filter_map(|f| Some((f[1].to_string(), f[2].parse().ok()?)))
            .filter(|(f, _)| !f.contains("/unittest/") && !f.contains("site-packages"))
            .collect();
        let (file, line_no) = frames.last().map_or((String::new(), None), |(f, l)| (f.clone(), Some(*l)));
        // The exception: the last line of the traceback that is not indented.
        let msg = block
            .iter()
            .rev()
            .map(|l| l.trim_end())
            .find(|l| !l.is_empty() && !l.starts_with(' ') && !l.starts_with('-'));
        failures.push(failure(&file, line_no, &c[3], msg));
    }
    let mut s = suite("unittest", total.saturating_sub(failed + skipped), failed, skipped, Some(total));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}
