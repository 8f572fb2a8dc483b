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

use ccmem_proto::model::environment::{limits, SuiteStatus, TestFailure, TestSuite};
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
pub fn report(p: &ccmem_proto::wire::api::TestReportParams) -> Result<Vec<ccmem_proto::wire::api::TestRun>, String> {
    let fw = p.framework.as_deref().map(str::trim).filter(|f| !f.is_empty());
    let mut runs = match (&p.junit, &p.output) {
        (Some(file), _) => {
            // A regular file only (a FIFO would block a daemon thread), within the cap.
            let xml = ccmem_proto::files::untrusted::read_string(file, MAX_JUNIT)
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
            ccmem_proto::wire::api::TestRun { e2e: p.e2e.unwrap_or(r.e2e), suite: r.suite }
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

/// The name given to a failure outside any test (a test file that throws when loaded): the
/// runner counts it as a failed test but names none.
pub const OUTSIDE_ANY_TEST: &str = "(error outside a test)";
/// How ccmem says [`OUTSIDE_ANY_TEST`] in its own lines (a failure's error, the report's
/// actions, the agent's context).
pub const OUTSIDE_ANY_TEST_WORDS: &str = "outside any test";
/// The name given to the failure of tests that did not build (a compile error; go's
/// `[build failed]` package, named in its file).
pub const DID_NOT_BUILD: &str = "(build)";
/// The name given to the failure of a test command that did not start (a missing script).
pub const DID_NOT_RUN: &str = "(run)";

/// A failure with its message cut to its first line and seed 000's length.
fn failure(file: &str, line: Option<u32>, name: &str, message: Option<&str>) -> TestFailure {
    TestFailure {
        file: file.trim().trim_start_matches("./").to_string(),
        line,
        test_name: ccmem_proto::model::session::truncate_chars(name.trim(), 300),
        message: message.map(first_line).filter(|m| !m.is_empty()),
    }
}

/// The first non-empty line, at most 200 characters.
pub fn first_line(s: &str) -> String {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    ccmem_proto::model::session::truncate_chars(line, limits::MESSAGE_CHARS)
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
pub(crate) mod tests;
