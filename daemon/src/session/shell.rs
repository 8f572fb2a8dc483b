//! What the agent's shell commands did: failures still outstanding (the last failing
//! command of each kind of work that has not succeeded since) and finished work (commits,
//! pull requests, issues and tracker tasks closed from the shell).
//!
//! A command's kind decides what a later success resolves: a passing `cargo test` clears a
//! failing `cargo test -p x`, a passing `bun test a.test.ts` does not clear a failing
//! `bun test` (the narrower run says nothing about the rest). Exploratory commands (`grep`,
//! `ls`, `git diff`, …) fail as part of looking around and are never failures.

use crate::observe::cmdline::{cd_prefix, split_cd};
use crate::observe::testout;
use crate::observe::work::*;
use ccmem_proto::model::session::{truncate_chars, Done, Failure, Lesson, Session};
use chrono::{DateTime, Utc};

/// Failures kept at most (the oldest go first).
const FAILURES: usize = 12;
/// Finished items kept at most.
const DONE: usize = 30;
/// Longest error line kept.
const ERROR_CHARS: usize = 240;
/// Longest command kept.
const COMMAND_CHARS: usize = 200;
/// Lessons kept at most (the oldest go first), across sessions too.
pub const LESSONS: usize = 6;

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
    resolved(s, command, &at);
    if let Some(d) = classify(command).and_then(|(work, _)| finished(work, command, output)) {
        push_done(s, d, at);
    }
}

/// A test run that passed, reported apart from the shell (`ccmemctl test-report`, a `tests`
/// event): the failures its command clears are cleared, as if the command had succeeded.
pub fn tests_passed(s: &mut Session, command: &str, now: DateTime<Utc>) {
    resolved(s, command, &crate::clock::iso(now));
}

/// `command` succeeded: the failures it resolves go, and those of the environment or the
/// workflow leave their lesson.
fn resolved(s: &mut Session, command: &str, at: &str) {
    let cd = cd_prefix(command);
    for (work, text) in parts(command) {
        let text = crate::text::clean(&format!("{cd}{text}"));
        let (gone, kept) = std::mem::take(&mut s.failures).into_iter().partition(|f| resolves(work, &text, f));
        s.failures = kept;
        for f in gone {
            learn(s, f, &text, at);
        }
    }
}

/// Keeps what a resolved failure taught, when it is one a later agent would meet again:
/// one of a push, a commit, an install or another tool (protected branches, signing that
/// needs an agent unlocked, a registry's credentials), not of tests, builds or checks, which
/// the code's own changes resolve. Without an error line there is nothing to tell.
fn learn(s: &mut Session, f: Failure, fixed_by: &str, at: &str) {
    let workflow = ["push", "commit", "install", "command"];
    if !workflow.contains(&f.kind.as_str()) || f.error.is_empty() {
        return;
    }
    let fixed_by = if fixed_by == f.command { String::new() } else { truncate_chars(fixed_by, COMMAND_CHARS) };
    // The same lesson again is the same line, moved to the newest place.
    s.lessons.retain(|l| !(l.kind == f.kind && l.error == f.error));
    s.lessons.push(Lesson { kind: f.kind, command: f.command, error: f.error, fixed_by, at: at.to_string() });
    let excess = s.lessons.len().saturating_sub(LESSONS);
    s.lessons.drain(..excess);
}

/// The lessons an ending session hands on: those it was handed, then its own, newest last.
pub fn carried_lessons(s: &Session) -> Vec<Lesson> {
    let mut out: Vec<Lesson> = s.previous.iter().flat_map(|p| p.lessons.iter().cloned()).collect();
    for l in &s.lessons {
        out.retain(|o| !(o.kind == l.kind && o.error == l.error));
        out.push(l.clone());
    }
    let excess = out.len().saturating_sub(LESSONS);
    out.drain(..excess);
    out
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

/// A pull request the agent linked to the conversation (Claude Code's `pr-link`): done work,
/// unless a `gh pr create` or merge of the same number is there already.
pub fn linked_pull_request(s: &mut Session, number: u64, repository: &str, at: &str) {
    pull_request(s, "linked", number, repository, at)
}

/// A pull request the agent's app says it opened (the Codex app's `::git-create-pr{url=…}`).
pub fn opened_pull_request(s: &mut Session, number: u64, repository: &str, at: &str) {
    pull_request(s, "opened", number, repository, at)
}

fn pull_request(s: &mut Session, verb: &str, number: u64, repository: &str, at: &str) {
    let tag = format!("#{number}");
    let named = |t: &str| {
        t.match_indices(&tag).any(|(i, _)| !t[i + tag.len()..].starts_with(|c: char| c.is_ascii_digit()))
            || t.ends_with(&format!("PR {number}"))
            || t.contains(&format!("PR {number} "))
    };
    if s.done.iter().any(|d| d.kind == "pr" && named(&d.text)) {
        return;
    }
    // The record's own time, when it has one (a read of an old transcript is not now).
    let at =
        ccmem_proto::model::session::Timestamp::parse(at).unwrap_or_else(ccmem_proto::model::session::Timestamp::now);
    push_done(s, ("pr", format!("{verb} PR #{number} ({repository})")), at.iso());
}

fn push_done(s: &mut Session, (kind, text): (&'static str, String), at: String) {
    let text = truncate_chars(&crate::text::clean(&text), 200);
    if text.is_empty() || s.done.iter().any(|d| d.kind == kind && d.text == text) {
        return;
    }
    // A tracker task closed, reopened or put back is no longer under way.
    let named = ["closed ", "reopened ", "put "].iter().find_map(|p| text.strip_prefix(p));
    if let Some(ids) = named.filter(|_| kind == "task") {
        let ids: Vec<&str> = ids.split_whitespace().collect();
        s.done.retain(|d| {
            !(d.kind == "task"
                && d.text
                    .strip_prefix("started ")
                    .and_then(|r| r.split_whitespace().next())
                    .is_some_and(|id| ids.contains(&id)))
        });
    }
    s.done.push(Done { at, kind: kind.into(), text });
    let excess = s.done.len().saturating_sub(DONE);
    s.done.drain(..excess);
}

/// What a commit's line says when the agent did not write its message.
pub const COMMIT_NOT_WRITTEN: &str = "(its message was not written in the command)";

/// Whether [`record`] reads what `command` printed when it succeeded (a commit's "nothing to
/// commit", the address `gh` prints for a new PR or issue): the replay of a command keeps
/// its output only then (and for tests and builds, whose results are parsed). Every command
/// [`finished`] reads the output of must be named here.
pub fn reads_output(command: &str) -> bool {
    if parts(command).iter().any(|(w, _)| *w == Work::Commit) {
        return true;
    }
    segments(command).iter().any(|segment| {
        let w: Vec<&str> = segment.split_whitespace().filter(|w| !is_assignment(w)).collect();
        matches!(w.as_slice(), ["gh", "pr" | "issue", "create", ..])
    })
}

/// Work a successful command finished: a commit, a pull request opened or merged, an issue
/// closed, a tracker task closed (`bd close`).
///
/// A commit is never read from the command's output: the repository's own hooks (husky's
/// pre-commit, `core.hooksPath`) print what they like before git does, a line such as
/// `[main 1234567] NOTE FROM THE USER: …` among it. What stands is the message the agent
/// wrote in the command (its own words), and the commit's hash, which the project task
/// takes from git itself once the command has run ([`commit_hash`]).
fn finished(work: Work, command: &str, output: &str) -> Option<(&'static str, String)> {
    if work == Work::Commit && nothing_committed(output) {
        return None;
    }
    if work == Work::Commit {
        // A message the agent did not write (`--amend --no-edit`, `-C HEAD@{1}`, `--fixup`,
        // a file's) is the repository's text: not the agent's words, so not shown.
        let written = quoted_after(command, &["-m", "--message"])
            .or_else(|| clustered_message(command))
            .filter(|_| message_written(command));
        return Some(("commit", written.map_or_else(|| COMMIT_NOT_WRITTEN.to_string(), |m| first_line(&m))));
    }
    // The last of them is what stands (`bd update X --status in_progress && bd close X`).
    for segment in segments(command).into_iter().rev() {
        let w: Vec<&str> = segment.split_whitespace().filter(|w| !is_assignment(w)).collect();
        match w.as_slice() {
            ["gh", "pr", "create", ..] => {
                // gh prints the new PR's address last; anything before it may be a
                // repository's `pre-push` hook, and only a number is taken from it.
                let number = output.split_whitespace().rev().filter(|t| t.contains("/pull/")).find_map(number_of);
                let title = quoted_after(&segment, &["--title", "-t"]).unwrap_or_default();
                return Some(("pr", format!("opened {} {title}", number.as_deref().unwrap_or("a PR")).trim().into()));
            }
            ["gh", "pr", "merge", rest @ ..] => {
                return Some(("pr", format!("merged PR {}", rest.iter().find(|x| !x.starts_with('-')).unwrap_or(&""))))
            }
            ["gh", "pr", "close", n, ..] if !n.starts_with('-') => {
                return Some(("pr", format!("closed PR {}", numbered(n))));
            }
            ["gh", "issue", "close", n, ..] if !n.starts_with('-') => {
                return Some(("issue", format!("closed issue {}", numbered(n))));
            }
            ["gh", "issue", "reopen", n, ..] if !n.starts_with('-') => {
                return Some(("issue", format!("reopened issue {}", numbered(n))));
            }
            ["gh", "issue", "create", ..] => {
                let url = output.split_whitespace().rev().find(|t| t.contains("/issues/")).unwrap_or("");
                let n = url.rsplit('/').next().filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))?;
                let title = quoted_after(&segment, &["--title", "-t"]).unwrap_or_default();
                return Some(("issue", format!("opened issue #{n} {title}").trim().into()));
            }
            ["bd" | "beads", ..] => {
                if let Some(done) = tracker_change(&segment) {
                    return Some(done);
                }
            }
            _ => {}
        }
    }
    None
}

/// Names the agent's newest commit in the finished work by `hash`, as git gives it. The
/// words shown stay the agent's own (those it wrote in the command), never git's subject: a
/// repository's `commit-msg` hook can rewrite that, and it is quoted as the repository's in
/// its own block anyway.
pub fn commit_hash(s: &mut Session, hash: &str) {
    let Some(d) = s.done.iter_mut().rev().find(|d| d.kind == "commit") else { return };
    if d.text.split_whitespace().next() == Some(hash) {
        return;
    }
    d.text = truncate_chars(&format!("{hash} {}", d.text), 200);
}

/// Whether the message of the `git commit` in `command` is written in it: given with `-m` or
/// `--message` (or `-F -` from a here-document), and not taken from elsewhere — another
/// commit (`-C`, `-c`, `--reuse-message`, `--reedit-message`, `--fixup`, `--squash`, or
/// `--amend` without a message of its own), a file or template (`-F FILE`, `-t`), what git
/// prepared (a merge's `--no-edit`, no message option at all), or a command's output
/// (`-m "$(git log -1 --format=%s)"`). Only then are the subject's words the agent's.
pub fn message_written(command: &str) -> bool {
    let Some(segment) = segments(command).into_iter().find(|seg| {
        let w = shell_words(seg);
        let git = w.iter().position(|x| x.rsplit('/').next() == Some("git"));
        git.is_some_and(|g| w[g + 1..].iter().any(|x| x == "commit"))
    }) else {
        return false;
    };
    let words = shell_words(&segment);
    let Some(start) = words.iter().position(|w| w == "commit") else { return false };
    let heredoc = command.contains("<<");
    // A message made by a command substitution or a variable is some command's output,
    // unless it is the here-document the agent wrote (`-m "$(cat <<'EOF' … EOF)"`).
    // `-m "$msg"` is the variable's text, not words the agent wrote.
    let variable = |m: &str| {
        m.match_indices('$').any(|(i, _)| m[i + 1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    };
    let literal = |m: &str| heredoc || !(m.contains("$(") || m.contains('`') || m.contains("${") || variable(m));
    let (mut written, mut elsewhere) = (false, false);
    let mut it = words[start + 1..].iter();
    while let Some(w) = it.next() {
        let w = w.as_str();
        match w {
            "--" => break,
            "-m" | "--message" => written |= it.next().is_some_and(|m| literal(m)),
            "-F" | "--file" => {
                let from = it.next().map(String::as_str);
                if from == Some("-") && heredoc {
                    written = true;
                } else {
                    elsewhere = true;
                }
            }
            "-C" | "-c" | "--reuse-message" | "--reedit-message" | "--fixup" | "--squash" | "-t" | "--template" => {
                elsewhere = true;
                it.next();
            }
            "--amend" | "--no-edit" => {}
            _ if w.starts_with("--message=") => written |= literal(&w["--message=".len()..]),
            _ if w.starts_with("--file=-") && w.len() == "--file=-".len() && heredoc => written = true,
            _ if ["--file=", "--reuse-message=", "--reedit-message=", "--fixup=", "--squash=", "--template="]
                .iter()
                .any(|p| w.starts_with(p)) =>
            {
                elsewhere = true
            }
            // A cluster of short options (`-am`, `-qmFix`): the first that takes a value
            // takes the rest of the word, or the next word.
            _ if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 => {
                for (i, c) in w.char_indices().skip(1) {
                    let rest = &w[i + c.len_utf8()..];
                    let mut value =
                        || if rest.is_empty() { it.next().cloned().unwrap_or_default() } else { rest.to_string() };
                    match c {
                        'm' => written |= literal(&value()),
                        'F' => {
                            let from = value();
                            if from == "-" && heredoc {
                                written = true;
                            } else {
                                elsewhere = true;
                            }
                        }
                        'C' | 'c' | 't' => {
                            elsewhere = true;
                            value();
                        }
                        _ => continue,
                    }
                    break;
                }
            }
            _ => {}
        }
    }
    written && !elsewhere
}

/// A command's words as the shell would pass them: quotes removed, nothing inside them or
/// after a backslash splitting a word. Enough to read a command's options, not a shell.
/// The task ids among a tracker command's arguments (`bd close app-1 app-2 --reason "Done
/// in PR 12"`): the words shaped as ids (`prefix-suffix`), not an option's value.
fn tracker_ids(args: &[String]) -> Vec<String> {
    let id_shaped = |w: &str| {
        w.split_once('-').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
    };
    let mut out = Vec::new();
    let mut skip = false;
    for w in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if w.starts_with('-') {
            skip = TRACKER_VALUED.contains(&w.as_str());
        } else if id_shaped(w) {
            out.push(w.clone());
        }
    }
    out
}

fn shell_words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
                started = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

fn number_of(url: &str) -> Option<String> {
    let n = url.rsplit('/').next()?;
    n.chars().all(|c| c.is_ascii_digit()).then(|| format!("PR #{n}"))
}

/// `#N` for an issue or pull request named by number, `#N` or its address; anything else
/// (a branch) as it is.
fn numbered(arg: &str) -> String {
    let last = arg.trim_end_matches('/').rsplit('/').next().unwrap_or(arg).trim_start_matches('#');
    if !last.is_empty() && last.chars().all(|c| c.is_ascii_digit()) {
        format!("#{last}")
    } else {
        arg.to_string()
    }
}

/// What a `bd` (beads) command changed in the tracker: tasks closed, reopened, taken up
/// (`--status in_progress`, also `--status=…` and `-s …`) or put back; global options may
/// come before the subcommand.
fn tracker_change(segment: &str) -> Option<(&'static str, String)> {
    let words: Vec<String> = shell_words(segment).into_iter().filter(|w| !is_assignment(w)).collect();
    let mut i = 1;
    while words.get(i).is_some_and(|w| w.starts_with('-')) {
        i += if TRACKER_VALUED.contains(&words[i].as_str()) { 2 } else { 1 };
    }
    let rest = words.get(i + 1..).unwrap_or_default();
    match words.get(i).map(String::as_str)? {
        "close" => {
            let ids = tracker_ids(rest);
            (!ids.is_empty()).then(|| ("task", format!("closed {}", ids.join(" "))))
        }
        "reopen" => {
            let ids = tracker_ids(rest);
            (!ids.is_empty()).then(|| ("task", format!("reopened {}", ids.join(" "))))
        }
        "update" => {
            let id = tracker_ids(rest).into_iter().next()?;
            let status = rest.iter().enumerate().find_map(|(n, w)| match w.as_str() {
                "--status" | "-s" => rest.get(n + 1).cloned(),
                _ => w.strip_prefix("--status=").map(str::to_string),
            })?;
            match status.as_str() {
                "closed" | "done" | "completed" => Some(("task", format!("closed {id}"))),
                "in_progress" | "in-progress" => Some(("task", format!("started {id} (in progress)"))),
                "open" | "blocked" | "deferred" | "pending" => Some(("task", format!("put {id} back ({status})"))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Options of `bd` that take a value (not ids).
const TRACKER_VALUED: &[&str] = &[
    "--reason",
    "-r",
    "--resolution",
    "--actor",
    "--db",
    "--comment",
    "-m",
    "--message",
    "--session",
    "--status",
    "-s",
];

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

/// Whether a `git commit`'s output says it made no commit (its exit status may not be known:
/// an agent's payload without one). Taken only to leave a commit out, never to add one.
pub fn nothing_committed(output: &str) -> bool {
    ["nothing to commit", "no changes added to commit", "nothing added to commit"].iter().any(|w| output.contains(w))
}

/// The message of a `git commit` given in a cluster of short options (`-am wip`, `-qmFix`).
fn clustered_message(command: &str) -> Option<String> {
    let segment = segments(command).into_iter().find(|seg| seg.contains("commit"))?;
    let words = shell_words(&segment);
    let start = words.iter().position(|w| w == "commit")?;
    let mut it = words[start + 1..].iter();
    while let Some(w) = it.next() {
        if !w.starts_with('-') || w.starts_with("--") || w.len() < 2 {
            continue;
        }
        if let Some(i) = w.find('m').filter(|&i| {
            w[1..i].chars().all(|c| c.is_ascii_alphabetic() && c != 'F' && c != 'C' && c != 'c' && c != 't')
        }) {
            let rest = &w[i + 1..];
            return if rest.is_empty() { it.next().cloned() } else { Some(rest.to_string()) };
        }
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
