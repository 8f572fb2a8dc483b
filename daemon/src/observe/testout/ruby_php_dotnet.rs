//! RSpec, PHPUnit and `dotnet test`.

use super::{failure, location, re, suite, Run};
use ccmem_proto::model::environment::TestFailure;

re!(
    rspec_summary,
    r"(?m)^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?\s*$"
);
re!(rspec_rerun, r"^rspec (\S+?):(\d+) # (.+?)\s*$");
re!(rspec_head, r"^\s+(\d+)\) (.+?)\s*$");

/// RSpec: `4 examples, 1 failure, 1 pending`; failures from `rspec ./spec/x_spec.rb:4 #
/// name`, their message from the `Failures:` block.
pub fn rspec(out: &str) -> Option<Run> {
    let c = rspec_summary().captures_iter(out).last()?;
    let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);
    let (examples, failed, pending, outside) = (n(1), n(2), n(3), n(4));
    let lines: Vec<&str> = out.lines().collect();
    let failures_at = lines.iter().position(|l| l.trim_end() == "Failures:");
    let mut failures: Vec<TestFailure> = Vec::new();
    for line in &lines {
        let Some(r) = rspec_rerun().captures(line) else { continue };
        let name = r[3].to_string();
        // In `Failures:`, `N) name` then `Failure/Error: <source>` and the message.
        let msg = failures_at.and_then(|start| {
            let head = lines[start..].iter().position(|l| rspec_head().captures(l).is_some_and(|h| h[2] == name))?;
            let body = &lines[start + head + 1..];
            let after = body.iter().position(|l| l.trim_start().starts_with("Failure/Error:")).map_or(0, |p| p + 1);
            body[after..]
                .iter()
                .take_while(|l| !rspec_head().is_match(l))
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                .map(str::to_string)
        });
        failures.push(failure(&r[1], r[2].parse().ok(), &name, msg.as_deref()));
    }
    let mut s = suite("rspec", examples.saturating_sub(failed + pending), failed + outside, pending, Some(examples));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(php_ok, r"(?m)^OK \((\d+) tests?, \d+ assertions?\)\s*$");
re!(php_summary, r"(?m)^Tests: (\d+), Assertions: \d+(.*?)\.?\s*$");
re!(php_head, r"^(\d+)\) (\S+::\S+?)(?: with data set .*)?\s*$");

/// PHPUnit: `OK (3 tests, …)` or `Tests: 3, Assertions: 3, Failures: 1, Errors: …`;
/// failures from `1) Class::method`, message next, location the first `file:line` line.
pub fn phpunit(out: &str) -> Option<Run> {
    if let Some(c) = php_ok().captures_iter(out).last() {
        return Some(Run { e2e: false, suite: suite("phpunit", c[1].parse().unwrap_or(0), 0, 0, None) });
    }
    let c = php_summary().captures_iter(out).last()?;
    let tests: u64 = c[1].parse().unwrap_or(0);
    let rest = c[2].replace(':', "");
    let words = |w: &[&str]| -> u64 {
        let t: Vec<&str> = rest.split([',', ' ']).filter(|x| !x.is_empty()).collect();
        t.windows(2).filter(|p| w.contains(&p[0])).map(|p| p[1].parse::<u64>().unwrap_or(0)).sum()
    };
    let failed = words(&["Failures", "Errors"]);
    let skipped = words(&["Skipped", "Incomplete"]);
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(h) = php_head().captures(line) else { continue };
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !php_head().is_match(l) && !l.starts_with("FAILURES!") && !l.starts_with("ERRORS!"))
            .copied()
            .collect();
        let msg = block.iter().find(|l| !l.trim().is_empty()).copied();
        let at = block.iter().find_map(|l| location(l));
        let (file, line_no) = at.map_or((String::new(), None), |(f, n)| (f, n));
        failures.push(failure(&file, line_no, &h[2], msg));
    }
    let mut s = suite("phpunit", tests.saturating_sub(failed + skipped), failed, skipped, Some(tests));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}

re!(
    dotnet_summary,
    r"(?m)^(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+(\d+), Total:\s+(\d+)"
);
re!(dotnet_fail, r"^\s+Failed (\S+) \[[^\]]*\]\s*$");
re!(dotnet_at, r" in (.+):line (\d+)\s*$");

/// `dotnet test`: one `Passed!`/`Failed!` line per test assembly, summed; failures from
/// `Failed Namespace.Class.Method [4 ms]` with `Error Message:` and the stack's `in file:line`.
pub fn dotnet(out: &str) -> Option<Run> {
    let totals: [u64; 4] = super::sums(dotnet_summary(), out)?;
    let lines: Vec<&str> = out.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(f) = dotnet_fail().captures(line) else { continue };
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !dotnet_fail().is_match(l) && !dotnet_summary().is_match(l))
            .copied()
            .collect();
        let msg = block.iter().position(|l| l.trim() == "Error Message:").and_then(|p| block.get(p + 1)).copied();
        let at = block.iter().find_map(|l| dotnet_at().captures(l));
        let (file, line_no) = at.map_or((String::new(), None), |a| (a[1].to_string(), a[2].parse().ok()));
        failures.push(failure(&file, line_no, &f[1], msg));
    }
    let [failed, passed, skipped, total] = totals;
    let mut s = suite("dotnet", passed, failed, skipped, Some(total));
    s.failures = failures;
    Some(Run { e2e: false, suite: s })
}
