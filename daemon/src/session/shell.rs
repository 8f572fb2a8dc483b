//! What the agent's shell commands did: failures still outstanding (the last failing
//! command of each kind of work that has not succeeded since) and finished work (commits,
//! pull requests, issues and tracker tasks closed from the shell).
//!
//! A command's kind decides what a later success resolves: a passing `cargo test` clears a
//! failing `cargo test -p x`, a passing `bun test a.test.ts` does not clear a failing
//! `bun test` (the narrower run says nothing about the rest). Exploratory commands (`grep`,
//! `ls`, `git diff`, …) fail as part of looking around and are never failures.

use crate::observe::cmdline::{cd_prefix, pipelines, split_cd};
use crate::observe::testout;
use ccmem_proto::model::session::{truncate_chars, Done, Failure, Session};
use chrono::{DateTime, Utc};

/// Failures kept at most (the oldest go first).
const FAILURES: usize = 12;
/// Finished items kept at most.
const DONE: usize = 30;
/// Longest error line kept.
const ERROR_CHARS: usize = 240;
/// Longest command kept.
const COMMAND_CHARS: usize = 200;

/// A command's kind of work, most specific first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Tests.
    Tests,
    /// A script that runs every check (`verify`, `check`, `ci`, `precommit`).
    Checks,
    /// A type checker.
    Typecheck,
    /// A linter or formatter check.
    Lint,
    /// A build.
    Build,
    /// `git commit`.
    Commit,
    /// `git push`.
    Push,
    /// A dependency install.
    Install,
    /// Anything else that is not just looking around.
    Command,
}

impl Work {
    /// The name shown to the agent.
    pub fn name(self) -> &'static str {
        match self {
            Work::Tests => "tests",
            Work::Checks => "checks",
            Work::Typecheck => "typecheck",
            Work::Lint => "lint",
            Work::Build => "build",
            Work::Commit => "commit",
            Work::Push => "push",
            Work::Install => "install",
            Work::Command => "command",
        }
    }

    /// The kinds a success of this kind also vouches for.
    fn covers(self) -> &'static [Work] {
        match self {
            // Not the tests: a project's check script often leaves out the slow or live ones.
            Work::Checks => &[Work::Checks, Work::Typecheck, Work::Lint, Work::Build],
            Work::Build => &[Work::Build, Work::Typecheck],
            _ => &[],
        }
    }
}

/// The kind of a command line and the part of it that does the work (without `cd x &&`,
/// environment assignments and pipes into `tail`/`head`/`grep`); None for commands that
/// only look around.
pub fn classify(command: &str) -> Option<(Work, String)> {
    let parts = parts(command);
    let best = parts.iter().filter(|(w, _)| *w != Work::Command).min_by_key(|(w, _)| rank(*w)).cloned();
    best.or_else(|| parts.into_iter().last())
}

/// Every part of a command line that does work, in order.
fn parts(command: &str) -> Vec<(Work, String)> {
    let mut out = Vec::new();
    for segment in segments(command) {
        let words: Vec<&str> = segment.split_whitespace().filter(|w| !is_assignment(w)).collect();
        let Some(&first) = words.first() else { continue };
        let prog = first.rsplit('/').next().unwrap_or(first);
        if let Some(work) = work_of(prog, &words) {
            out.push((work, words.join(" ")));
        }
    }
    out
}

/// What identifies an arbitrary command: its program and first argument
/// (`bun ./bin/cli.ts`, `git rebase`), so that `--version` and `--help` runs are one; with
/// `-m`, the module too (`python3 -m http.server` is not `python3 -m unittest`).
fn command_key(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let n = if words.get(1) == Some(&"-m") { 3 } else { 2 };
    words.iter().take(n).copied().collect::<Vec<_>>().join(" ")
}

fn rank(w: Work) -> u8 {
    w as u8
}

/// `a && b; c || d`, each part without what only filters its output.
fn segments(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for pipeline in pipelines(command) {
        // A pipe into a filter: the command is what comes before it.
        let mut cmd = pipeline.into_iter().next().unwrap_or_default();
        for noise in ["2>&1", "2>/dev/null", ">/dev/null", "1>&2"] {
            cmd = cmd.replace(noise, " ");
        }
        let cmd = cmd.trim().trim_start_matches('(').trim_end_matches(')').trim();
        if !cmd.is_empty() {
            out.push(cmd.to_string());
        }
    }
    out
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.starts_with('-')
    })
}

fn work_of(prog: &str, words: &[&str]) -> Option<Work> {
    let second = words.get(1).copied().unwrap_or("");
    let rest = &words[1.min(words.len())..];
    let runner = matches!(prog, "npm" | "pnpm" | "yarn" | "bun" | "make" | "just" | "mise" | "task" | "npx" | "bunx");
    // The script a runner runs: `npm run lint`, `mise run test:unit`, `make check`.
    let script = if runner {
        rest.iter().find(|w| !w.starts_with('-') && !matches!(**w, "run" | "run-script" | "exec" | "x")).copied()
    } else {
        None
    };
    let named = |s: &str, names: &[&str]| {
        let s = s.to_ascii_lowercase();
        names.iter().any(|n| s == *n || s.starts_with(&format!("{n}:")) || s.starts_with(&format!("{n}-")))
    };
    let joined = words.join(" ");
    if testout::command::classify(&joined).test.is_some() {
        return Some(Work::Tests);
    }
    if let Some(s) = script {
        if named(s, &["verify", "check", "checks", "ci", "precommit", "pre-commit", "validate", "all"]) {
            return Some(Work::Checks);
        }
        if named(s, &["typecheck", "type-check", "types", "tsc", "check-types"]) {
            return Some(Work::Typecheck);
        }
        if named(s, &["lint", "eslint", "fmt", "format", "prettier", "stylelint", "clippy"]) {
            return Some(Work::Lint);
        }
        if named(s, &["test", "tests", "e2e", "spec"]) {
            return Some(Work::Tests);
        }
        if named(s, &["build", "compile", "bundle"]) {
            return Some(Work::Build);
        }
        if matches!(prog, "npm" | "pnpm" | "yarn" | "bun") && matches!(s, "install" | "i" | "add" | "ci") {
            return Some(Work::Install);
        }
    }
    match prog {
        "tsc" | "vue-tsc" | "mypy" | "pyright" | "basedpyright" => return Some(Work::Typecheck),
        "eslint" | "ruff" | "flake8" | "pylint" | "golangci-lint" | "biome" | "prettier" | "stylelint" | "rubocop"
        | "shellcheck" | "hadolint" | "black" | "gofmt" | "staticcheck" => return Some(Work::Lint),
        "cargo" if matches!(second, "clippy" | "fmt") => return Some(Work::Lint),
        "go" if second == "vet" => return Some(Work::Lint),
        "pip" | "pip3" | "uv" | "poetry" | "bundle" | "composer" if matches!(second, "install" | "add" | "sync") => {
            return Some(Work::Install)
        }
        "cargo" if second == "add" => return Some(Work::Install),
        "git" => {
            return match words.iter().skip(1).find(|w| !w.starts_with('-')).copied() {
                Some("commit") => Some(Work::Commit),
                Some("push") => Some(Work::Push),
                Some(
                    "status" | "diff" | "log" | "show" | "branch" | "rev-parse" | "ls-files" | "grep" | "blame"
                    | "remote" | "fetch" | "config" | "describe" | "reflog" | "shortlog" | "cat-file" | "ls-tree"
                    | "check-ignore" | "merge-base" | "worktree",
                ) => None,
                _ => Some(Work::Command),
            }
        }
        _ => {}
    }
    if testout::command::classify(&joined).build {
        return Some(Work::Build);
    }
    if exploratory(prog, words) {
        return None;
    }
    Some(Work::Command)
}

/// Commands that look around: their failures are answers ("no match", "no such file").
fn exploratory(prog: &str, words: &[&str]) -> bool {
    matches!(
        prog,
        "cd" | "ls"
            | "ll"
            | "cat"
            | "head"
            | "tail"
            | "less"
            | "more"
            | "grep"
            | "egrep"
            | "rg"
            | "ag"
            | "ack"
            | "find"
            | "fd"
            | "wc"
            | "which"
            | "type"
            | "command"
            | "echo"
            | "printf"
            | "test"
            | "["
            | "[["
            | "diff"
            | "cmp"
            | "stat"
            | "file"
            | "pwd"
            | "tree"
            | "jq"
            | "yq"
            | "sed"
            | "awk"
            | "sort"
            | "uniq"
            | "cut"
            | "tr"
            | "xargs"
            | "du"
            | "df"
            | "ps"
            | "pgrep"
            | "pkill"
            | "kill"
            | "lsof"
            | "sleep"
            | "true"
            | "false"
            | "export"
            | "source"
            | "."
            | "env"
            | "printenv"
            | "whoami"
            | "date"
            | "uname"
            | "realpath"
            | "readlink"
            | "basename"
            | "dirname"
            | "mkdir"
            | "touch"
            | "cp"
            | "mv"
            | "rm"
            | "chmod"
            | "ln"
            | "open"
            | "code"
            | "history"
            | "alias"
            | "sqlite3"
            | "tput"
            | "clear"
            | "wait"
            | "timeout"
            | "nl"
            | "od"
            | "xxd"
            | "hexdump"
            | "strings"
    ) || (prog == "gh"
        && (matches!(words.get(1).copied(), Some("api" | "status" | "browse" | "search"))
            || matches!(words.get(2).copied(), Some("view" | "list" | "diff" | "checks" | "status" | "watch"))))
}

/// What a finished shell command means for the session's failures and finished work.
/// `tests_failed` / `build_failed` say what the output parsers found (a run piped into
/// `tail` exits 0 whatever the tests did).
pub fn record(
    s: &mut Session,
    command: &str,
    output: &str,
    exited_nonzero: bool,
    parsed_failure: Option<String>,
    now: DateTime<Utc>,
) {
    let failed = exited_nonzero || parsed_failure.is_some();
    let at = crate::clock::iso(now);
    // Where it ran, when the line says (`cd packages/api && npm test`): part of what failed.
    let cd = cd_prefix(command);
    if failed {
        let Some((work, text)) = classify(command) else { return };
        let text = truncate_chars(&crate::text::clean(&format!("{cd}{text}")), COMMAND_CHARS);
        let error = parsed_failure
            .or_else(|| key_error(output))
            .map(|e| truncate_chars(&crate::text::clean(&e), ERROR_CHARS))
            .unwrap_or_default();
        let same = |f: &Failure| {
            f.kind == work.name() && (work != Work::Command || command_key(&f.command) == command_key(&text))
        };
        match s.failures.iter().position(same) {
            Some(i) => {
                let mut f = s.failures.remove(i);
                // Failing again: the same run counts up; another run of the kind starts over.
                if f.command == text {
                    f.count += 1;
                } else {
                    f.count = 1;
                    f.first_at = at.clone();
                }
                f.command = text;
                f.error = if error.is_empty() { f.error } else { error };
                f.last_at = at;
                s.failures.push(f);
            }
            None => s.failures.push(Failure {
                kind: work.name().into(),
                command: text,
                error,
                count: 1,
                first_at: at.clone(),
                last_at: at,
            }),
        }
        let excess = s.failures.len().saturating_sub(FAILURES);
        s.failures.drain(..excess);
        return;
    }
    // The whole line succeeded, so each of its parts did.
    for (work, text) in parts(command) {
        let text = crate::text::clean(&format!("{cd}{text}"));
        s.failures.retain(|f| !resolves(work, &text, f));
    }
    if let Some(d) = classify(command).and_then(|(work, _)| finished(work, command, output)) {
        push_done(s, d, at);
    }
}

/// Whether a success of `work` running `text` clears the failure `f`: a run as wide as the
/// failed one (the same command, or one it narrowed), a check script that runs it all, any
/// commit or push for a failed one, the same program and argument for other commands.
fn resolves(work: Work, text: &str, f: &Failure) -> bool {
    // A run elsewhere in the repository (another package) says nothing of this one.
    let ((here, text), (there, failed)) = (split_cd(text), split_cd(&f.command));
    if here != there {
        return false;
    }
    let f = &Failure { command: failed.to_string(), ..f.clone() };
    if work.name() != f.kind {
        return work.covers().iter().any(|w| w.name() == f.kind);
    }
    match work {
        Work::Checks | Work::Commit | Work::Push => true,
        Work::Command => command_key(text) == command_key(&f.command),
        _ => {
            let wide: Vec<&str> = text.split_whitespace().collect();
            f.command.split_whitespace().collect::<Vec<_>>().starts_with(&wide)
        }
    }
}

fn push_done(s: &mut Session, (kind, text): (&'static str, String), at: String) {
    let text = truncate_chars(&crate::text::clean(&text), 200);
    if text.is_empty() || s.done.iter().any(|d| d.kind == kind && d.text == text) {
        return;
    }
    s.done.push(Done { at, kind: kind.into(), text });
    let excess = s.done.len().saturating_sub(DONE);
    s.done.drain(..excess);
}

/// Work a successful command finished: a commit (`[main a1b2c3d] Subject`), a pull request
/// opened or merged, an issue closed, a tracker task closed (`bd close`).
fn finished(work: Work, command: &str, output: &str) -> Option<(&'static str, String)> {
    if work == Work::Commit {
        let line = output.lines().map(str::trim).find(|l| {
            l.starts_with('[')
                && l.find("] ").is_some_and(|end| {
                    l[1..end]
                        .split_whitespace()
                        .last()
                        .is_some_and(|h| h.len() >= 7 && h.chars().all(|c| c.is_ascii_hexdigit()))
                })
        });
        if let Some(l) = line {
            let end = l.find("] ").unwrap_or(0);
            let hash = l[1..end].split_whitespace().last().unwrap_or("");
            return Some(("commit", format!("{hash} {}", &l[end + 2..])));
        }
        return quoted_after(command, &["-m", "--message"]).map(|m| ("commit", first_line(&m)));
    }
    for segment in segments(command) {
        let w: Vec<&str> = segment.split_whitespace().filter(|w| !is_assignment(w)).collect();
        match w.as_slice() {
            ["gh", "pr", "create", ..] => {
                let url = output.split_whitespace().find(|t| t.contains("/pull/")).unwrap_or("");
                let title = quoted_after(&segment, &["--title", "-t"]).unwrap_or_default();
                return Some((
                    "pr",
                    format!("opened {} {title}", number_of(url).unwrap_or_else(|| url.into())).trim().into(),
                ));
            }
            ["gh", "pr", "merge", rest @ ..] => {
                return Some(("pr", format!("merged PR {}", rest.iter().find(|x| !x.starts_with('-')).unwrap_or(&""))))
            }
            ["gh", "issue", "close", n, ..] => {
                return Some(("issue", format!("closed issue #{}", n.trim_start_matches('#'))))
            }
            ["bd" | "beads", "close", ids @ ..] => {
                let ids: Vec<&str> = ids.iter().filter(|x| !x.starts_with('-')).copied().collect();
                return Some(("task", format!("closed {}", ids.join(" "))));
            }
            ["bd" | "beads", "update", id, rest @ ..]
                if rest.windows(2).any(|p| p[0] == "--status" && matches!(p[1], "closed" | "done" | "completed")) =>
            {
                return Some(("task", format!("closed {id}")));
            }
            _ => {}
        }
    }
    None
}

fn number_of(url: &str) -> Option<String> {
    let n = url.rsplit('/').next()?;
    n.chars().all(|c| c.is_ascii_digit()).then(|| format!("PR #{n}"))
}

/// The argument after one of `flags`, unquoted: `-m "Fix login"` → `Fix login`.
fn quoted_after(command: &str, flags: &[&str]) -> Option<String> {
    for flag in flags {
        let Some(pos) = command.find(&format!("{flag} ")) else { continue };
        let rest = command[pos + flag.len()..].trim_start();
        if rest.starts_with("\"$(cat <<") {
            // A heredoc message: its first line after the marker.
            return rest.lines().nth(1).map(|l| l.trim().to_string());
        }
        let mut chars = rest.chars();
        return match chars.next()? {
            q @ ('"' | '\'') => Some(chars.take_while(|c| *c != q).collect()),
            c => Some(std::iter::once(c).chain(chars.take_while(|c| !c.is_whitespace())).collect()),
        };
    }
    None
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// The line of a failed command's output that says what went wrong: the most specific
/// error line (`TypeError: x is not a function`, `error[E0425]: …`, `FAIL src/a.test.ts`)
/// rather than the wrapper's (`npm ERR! code ELIFECYCLE`, `> next build`, `Exit code 1`).
pub fn key_error(output: &str) -> Option<String> {
    let clean = testout::strip_ansi(output);
    let mut best: Option<(u8, &str)> = None;
    for line in clean.lines() {
        let l = line.trim();
        let score = error_score(l);
        if score > 0 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, l));
        }
    }
    best.map(|(_, l)| l.trim_start_matches(['✗', '✕', '×', '✘', '●', '-', ' ']).trim().to_string())
}

fn error_score(l: &str) -> u8 {
    if l.is_empty()
        || l.len() > 600
        || l.starts_with('>')
        || l.starts_with("$ ")
        || l.starts_with("at ")
        || l.starts_with("Exit code")
        || l.starts_with("error: script")
        || l.starts_with("error: Recipe")
    {
        return 0;
    }
    let lower = l.to_ascii_lowercase();
    let wrapper = [
        "elifecycle",
        "exited with code",
        "command failed",
        "npm err! code",
        "npm err! errno",
        "make: ***",
        "process completed with exit code",
        "error: process",
        "exit status",
        "returned non-zero",
        "lifecycle script",
    ];
    if wrapper.iter().any(|w| lower.contains(w)) {
        return 1;
    }
    let exception = l.split([':', ' ']).next().is_some_and(|w| {
        w.len() > 5
            && (w.ends_with("Error") || w.ends_with("Exception"))
            && w.chars().next().is_some_and(char::is_alphabetic)
    }) && l.contains(':');
    // What went wrong beats which test it was in.
    if exception || l.starts_with("error[") || l.contains("error TS") || l.contains("panicked at") {
        return 6;
    }
    if lower.starts_with("error:")
        || lower.starts_with("fatal:")
        || l.starts_with("E   ")
        || l.starts_with("--- FAIL")
        || l.starts_with("FAIL ")
        || l.starts_with("(fail)")
        || l.starts_with(['✗', '✕', '×', '✘'])
        || lower.contains("cannot find module")
        || lower.contains("command not found")
    {
        return 5;
    }
    if lower.contains("expected") && (lower.contains("received") || lower.contains("got") || lower.contains("but")) {
        return 4;
    }
    if lower.contains("error") || lower.contains("no such file") || lower.contains("not found") {
        return 3;
    }
    if lower.contains("failed") || lower.contains("failure") || lower.contains("fail:") {
        return 2;
    }
    0
}

#[cfg(test)]
mod tests;
