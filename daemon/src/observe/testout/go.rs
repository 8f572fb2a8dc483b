//! `go test`, plain, verbose (`-v`) and JSON (`-json`).

use super::{failure, re, suite, Run};
use ccmem_proto::model::environment::TestFailure;
use serde_json::Value;

re!(result, r"^(\s*)--- (PASS|FAIL|SKIP): (\S+)");
re!(
    package,
    r"(?m)^(?:ok  |FAIL|\?   )\s*\t?\S+\s*\t?(?:[\d.]+s|\(cached\)|\[no test files\]|\[build failed\]|\[setup failed\])"
);
re!(log_line, r"^\s+(\S+\.go):(\d+): (.*)$");

/// Verbose runs count every test; plain runs list only failures (passing packages print
/// `ok` alone, with no count), so their passed count is 0.
pub fn go_test(out: &str) -> Option<Run> {
    if let Some(r) = json(out) {
        return Some(r);
    }
    if !package().is_match(out) {
        return None;
    }
    let lines: Vec<&str> = out.lines().collect();
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut failures: Vec<TestFailure> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = result().captures(line) else { continue };
        match &c[2] {
            "PASS" => passed += 1,
            "SKIP" => skipped += 1,
            _ => {
                failed += 1;
                let name = &c[3];
                // The test's log: indented lines after the result (plain) or before it, since
                // its `=== RUN` (verbose).
                let after = lines[i + 1..].iter().take_while(|l| l.starts_with("    ") && !result().is_match(l));
                let run_at = lines[..i].iter().rposition(|l| l.trim_start().starts_with(&format!("=== RUN   {name}")));
                let before = run_at.map(|r| &lines[r + 1..i]).unwrap_or(&[]);
                let log = after.chain(before.iter()).find_map(|l| log_line().captures(l));
                failures.push(match log {
                    Some(l) => failure(&l[1], l[2].parse().ok(), name, Some(&l[3])),
                    None => failure("", None, name, None),
                });
            }
        }
    }
    // A package that did not build fails with no test result.
    for line in &lines {
        if line.starts_with("FAIL") && (line.contains("[build failed]") || line.contains("[setup failed]")) {
            let pkg = line.split_whitespace().nth(1).unwrap_or("");
            failures.push(failure(pkg, None, super::DID_NOT_BUILD, Some(line)));
        }
    }
    let mut s = suite("go", passed, failed, skipped, None);
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

/// `go test -json`: one event per line.
fn json(out: &str) -> Option<Run> {
    let (mut passed, mut failed, mut skipped, mut any) = (0, 0, 0, false);
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut failures: Vec<TestFailure> = Vec::new();
    for line in out.lines().filter(|l| l.starts_with("{\"")) {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let (Some(action), Some(test)) =
            (v.get("Action").and_then(Value::as_str), v.get("Test").and_then(Value::as_str))
        else {
            continue;
        };
        any = true;
        match action {
            "pass" => passed += 1,
            "skip" => skipped += 1,
            "fail" => {
                failed += 1;
                let log = outputs.iter().filter(|(t, _)| t == test).find_map(|(_, o)| log_line().captures(o));
                failures.push(match log {
                    Some(l) => failure(&l[1], l[2].parse().ok(), test, Some(&l[3])),
                    None => failure("", None, test, None),
                });
            }
            "output" => {
                if let Some(o) = v.get("Output").and_then(Value::as_str) {
                    outputs.push((test.to_string(), o.trim_end().to_string()));
                }
            }
            _ => {}
        }
    }
    if !any {
        return None;
    }
    let mut s = suite("go", passed, failed, skipped, None);
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_events_count() {
        let out = r#"{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: boom\n"}
{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":0}
{"Action":"fail","Package":"p","Elapsed":0}"#;
        let r = super::go_test(out).unwrap();
        assert_eq!((r.suite.passed, r.suite.failed), (1, 1));
        assert_eq!(r.suite.failures[0].file, "a_test.go");
        assert_eq!(r.suite.failures[0].message.as_deref(), Some("boom"));
    }
}
