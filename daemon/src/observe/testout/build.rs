//! Build outcomes read from compiler and bundler output.

use super::{first_line, re};
use ccmem_proto::model::environment::{limits, BuildState, BuildStatus};

re!(rustc, r"^error(?:\[(E\d+)\])?: (.+)$");
re!(rustc_at, r"^\s*--> (\S+:\d+:\d+)\s*$");
re!(tsc, r"^(\S+?)(?:\((\d+),(\d+)\): | ?[:](\d+):(\d+) - )error (TS\d+): (.+)$");
re!(cc, r"^(\S+?):(\d+):(\d+): (?:fatal )?error: (.+)$");
re!(go, r"^(?:vet: )?(\.?/?\S+\.go):(\d+):(\d+): (.+)$");
re!(
    generic,
    r"^(?:npm ERR!|npm error|ERROR|Error:|error:|\[ERROR\]|make: \*\*\*|FAILED:|Build failed|BUILD FAILED) ?(.*)$"
);

/// The outcome of a build command: `failed` is what the agent's tool said (a non-zero
/// exit); errors are read from the output either way.
pub fn parse(output: &str, failed: bool) -> BuildStatus {
    let text = super::strip_ansi(output);
    let lines: Vec<&str> = text.lines().collect();
    let mut errors: Vec<String> = Vec::new();
    fn push(errors: &mut Vec<String>, e: String) {
        let e = first_line(&e);
        if errors.len() < limits::BUILD_ERRORS && !errors.contains(&e) {
            errors.push(e);
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = rustc().captures(line) {
            let msg = &c[2];
            if msg.starts_with("could not compile") || msg.starts_with("aborting due to") {
                continue;
            }
            let at = lines[i + 1..].iter().take(3).find_map(|l| rustc_at().captures(l)).map(|a| a[1].to_string());
            let code = c.get(1).map(|m| format!("[{}]", m.as_str())).unwrap_or_default();
            push(
                &mut errors,
                match at {
                    Some(at) => format!("{at}: error{code}: {msg}"),
                    None => format!("error{code}: {msg}"),
                },
            );
        } else if let Some(c) = tsc().captures(line) {
            let (l, col) =
                (c.get(2).or(c.get(4)).map_or("", |m| m.as_str()), c.get(3).or(c.get(5)).map_or("", |m| m.as_str()));
            push(&mut errors, format!("{}:{l}:{col}: error {}: {}", &c[1], &c[6], &c[7]));
        } else if let Some(c) = cc().captures(line) {
            push(&mut errors, format!("{}:{}:{}: error: {}", &c[1], &c[2], &c[3], &c[4]));
        } else if let Some(c) = go().captures(line) {
            push(&mut errors, format!("{}:{}:{}: {}", &c[1], &c[2], &c[3], &c[4]));
        }
    }
    if errors.is_empty() && failed {
        for line in &lines {
            if let Some(c) = generic().captures(line.trim()) {
                let m = c[1].trim();
                if !m.is_empty() {
                    push(&mut errors, line.trim().to_string());
                }
            }
        }
        if errors.is_empty() {
            if let Some(last) = lines.iter().rev().map(|l| l.trim()).find(|l| !l.is_empty()) {
                push(&mut errors, last.to_string());
            }
        }
    }
    // A piped build (`cargo build 2>&1 | tail`) exits with the pipe's status: its errors say.
    let status = if failed || !errors.is_empty() { BuildState::Failed } else { BuildState::Success };
    BuildStatus { status, errors: if status == BuildState::Failed { errors } else { Vec::new() }, ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::testout::tests::fixture;

    #[test]
    fn compiler_errors_are_read() {
        let b = parse(&fixture("cargo-build-fail.txt"), true);
        assert_eq!(b.status, BuildState::Failed);
        assert_eq!(b.errors, ["src/lib.rs:10:3: error: this file contains an unclosed delimiter"]);
        let b = parse(&fixture("tsc-fail.doc.txt"), true);
        assert_eq!(b.errors.len(), 2);
        assert_eq!(b.errors[0], "src/app.ts:3:7: error TS2322: Type 'string' is not assignable to type 'number'.");
        let b = parse(&fixture("tsc-pretty-fail.doc.txt"), true);
        assert_eq!(b.errors, ["src/app.ts:3:7: error TS2322: Type 'string' is not assignable to type 'number'."]);
        let b = parse(&fixture("make-fail.doc.txt"), true);
        assert_eq!(b.errors, ["main.c:5:12: error: 'count' undeclared (first use in this function)"]);
        let b = parse(&fixture("go-build-fail.txt"), true);
        assert_eq!(
            b.errors,
            ["./calc_test.go:7:28: cannot use \"x\" (untyped string constant) as int value in return statement"]
        );
    }

    #[test]
    fn success_and_unknown_failures() {
        let b = parse("   Compiling x v0.1.0\n    Finished `dev` profile in 1.2s\n", false);
        assert_eq!((b.status, b.errors.len()), (BuildState::Success, 0));
        let b = parse("npm error Missing script: \"build\"\nnpm error\n", true);
        assert_eq!(b.errors, ["npm error Missing script: \"build\""]);
        let b = parse("something odd happened\n\n", true);
        assert_eq!(b.errors, ["something odd happened"]);
        let many: String = (0..30).map(|i| format!("src/a.ts({i},1): error TS1000: bad {i}\n")).collect();
        assert_eq!(parse(&many, true).errors.len(), 10);
        let long = format!("src/a.ts(1,1): error TS1000: {}", "x".repeat(500));
        assert_eq!(parse(&long, true).errors[0].chars().count(), 200);
    }
}
