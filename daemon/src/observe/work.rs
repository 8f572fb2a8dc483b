//! What kind of work a shell command is (tests, a build, a commit, looking around…), read
//! from the command line alone: what a later command's success can resolve.

use super::cmdline::pipelines;
use super::testout;

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
    pub fn covers(self) -> &'static [Work] {
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
pub fn parts(command: &str) -> Vec<(Work, String)> {
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
/// `-m`, the module too (`python3 -m http.server` is not `python3 -m unittest`); and the
/// subcommands that follow a subcommand (`gh pr merge` is not `gh pr close`, `bd update X`
/// not `bd close X`), up to four words, options and paths ending them.
pub fn command_key(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let n = if words.get(1) == Some(&"-m") { 3 } else { 2 };
    let subcommand = |w: &&&str| {
        w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    };
    let more = if words.get(1).is_some_and(|w| subcommand(&w)) {
        words.iter().skip(n).take(4 - n).take_while(subcommand).count()
    } else {
        0
    };
    words.iter().take(n + more).copied().collect::<Vec<_>>().join(" ")
}

fn rank(w: Work) -> u8 {
    w as u8
}

/// `a && b; c || d`, each part without what only filters its output.
pub fn segments(command: &str) -> Vec<String> {
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

/// `NAME=value`, an environment assignment before a command.
pub fn is_assignment(w: &str) -> bool {
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
