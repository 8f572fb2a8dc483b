//! What stands in the way (seed 000's BlockerEntry heuristics): `TODO`, `FIXME`, `BLOCKED`,
//! `NEEDS`, `XXX` and `HACK` comments in the files edited this session, failing tests and
//! builds, outdated dependencies, files a task relies on that do not exist, and the blocking
//! issues the agent reported.
//!
//! Comments are read from at most [`MAX_FILES`] edited files per checkpoint, and a file is
//! read again only when its size or time changed: never a whole-repository scan.

use crate::observe::tasks::TaskList;
use ccmem_proto::model::environment::{BuildState, DependencyState, SuiteStatus, TestFailure, TestSuite};
use ccmem_proto::model::report::{limits, BlockerEntry, Priority};
use ccmem_proto::model::session::{truncate_chars, Session};
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

/// Edited files read for comments per checkpoint (the most recently modified).
pub const MAX_FILES: usize = 200;
/// Larger files are not read.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// Comments kept per file.
const PER_FILE: usize = 20;

/// A marker comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// Relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// TODO, FIXME, BLOCKED, NEEDS, XXX or HACK.
    pub keyword: &'static str,
    /// The comment after the keyword, redacted.
    pub text: String,
}

/// Comments per file, kept between checkpoints by the project's task.
#[derive(Debug, Default)]
pub struct CommentCache {
    files: HashMap<String, (SystemTime, u64, Vec<Comment>)>,
    /// Files read so far (the cache's whole point is to keep this low).
    reads: u64,
}

const KEYWORDS: &[&str] = &["BLOCKED", "FIXME", "TODO", "NEEDS", "XXX", "HACK"];

impl CommentCache {
    /// The marker comments in `files` (relative to `root`), reading only the changed ones.
    pub fn scan(&mut self, root: &Path, files: &[String]) -> Vec<Comment> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for rel in files.iter().take(MAX_FILES) {
            seen.insert(rel.clone());
            let p = root.join(rel);
            let Ok(meta) = std::fs::metadata(&p) else { continue };
            if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
                continue;
            }
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let fresh = self.files.get(rel).is_some_and(|(t, n, _)| *t == mtime && *n == meta.len());
            if !fresh {
                self.reads += 1;
                let found = ccmem_proto::files::untrusted::read_in(root, &p, MAX_FILE_BYTES)
                    .map(|b| comments_in(rel, &b))
                    .unwrap_or_default();
                self.files.insert(rel.clone(), (mtime, meta.len(), found));
            }
            if let Some((_, _, c)) = self.files.get(rel) {
                out.extend(c.iter().cloned());
            }
        }
        self.files.retain(|k, _| seen.contains(k));
        out
    }
}

/// Marker comments in a file's bytes (nothing for binary files).
pub fn comments_in(rel: &str, bytes: &[u8]) -> Vec<Comment> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(bytes);
    let markdown = rel.ends_with(".md") || rel.ends_with(".markdown");
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for kw in KEYWORDS {
            let Some(at) = find_word(line, kw) else { continue };
            let before = &line[..at];
            let in_comment = if markdown {
                before.contains("<!--")
            } else {
                ["//", "#", "/*", "<!--", "-- ", ";", "%"].iter().any(|m| before.contains(m))
                    || line.trim_start().starts_with('*')
            };
            if !in_comment {
                continue;
            }
            let rest = line[at + kw.len()..].trim_start();
            // `TODO(alice):` and `TODO:`
            let rest = if rest.starts_with('(') { rest.split_once(')').map_or(rest, |(_, r)| r) } else { rest };
            let rest = rest.trim_start_matches(':').trim().trim_end_matches("*/").trim_end_matches("-->").trim();
            out.push(Comment {
                path: rel.to_string(),
                line: n as u32 + 1,
                keyword: kw,
                text: truncate_chars(&crate::text::clean(rest), 200),
            });
            break;
        }
        if out.len() >= PER_FILE {
            break;
        }
    }
    out
}

/// `kw` as a whole upper-case word in `line`.
fn find_word(line: &str, kw: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(i) = line[from..].find(kw).map(|i| i + from) {
        let before_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let end = i + kw.len();
        let after_ok = end >= b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if before_ok && after_ok {
            return Some(i);
        }
        from = end;
    }
    None
}

/// How much a marker comment matters, by its keyword.
pub fn priority_of(keyword: &str) -> Priority {
    match keyword {
        "BLOCKED" => Priority::High,
        "FIXME" | "XXX" => Priority::Medium,
        _ => Priority::Low,
    }
}

/// A title within seed 000's 100 characters.
pub fn title(s: &str) -> String {
    truncate_chars(&one_line(s), limits::TITLE_CHARS)
}

/// Text on one line, trimmed.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `prefix` and then `text` quoted, at most `max` characters in all: the quotation is cut to
/// fit, never its closing quote. For text ccmem did not see the user or the agent write (a
/// comment's words, a test's message, a build's error, a task list's item) inside a line of
/// ccmem's own: the report is read by agents too.
pub fn with_quote(prefix: &str, text: &str, max: usize) -> String {
    let room = max.saturating_sub(prefix.chars().count() + 2).max(8);
    format!("{prefix}{}", crate::text::quoted(text, room))
}

/// A path in a sentence of ccmem's own: quoted, as a file's name is the repository's text.
pub fn quoted_path(p: &str) -> String {
    crate::text::quoted(p, 80)
}

/// Every blocker, high priority first, at most 50 (low priority dropped first).
pub fn build(s: &Session, tasks: Option<&TaskList>, comments: &[Comment], now: &str) -> Vec<BlockerEntry> {
    let mut out: Vec<BlockerEntry> = Vec::new();
    let entry = |priority, task_id: Option<String>, t: String, description: String, action: String| BlockerEntry {
        priority,
        task_id,
        title: title(&t),
        description: one_line(&description),
        required_action: one_line(&action),
        detected_at: Some(now.to_string()),
    };
    for issue in &s.context_snapshot.blocking_issues {
        out.push(entry(Priority::High, None, issue.clone(), issue.clone(), format!("Resolve: {issue}")));
    }
    for (kind, suite) in [("unit", &s.test_results.unit), ("e2e", &s.test_results.e2e)] {
        if suite.status != SuiteStatus::Failed {
            continue;
        }
        let first = suite.failures.first();
        let ran = format!("{} failed", ccmem_proto::command_or(&suite.command, "The test run"));
        out.push(entry(
            Priority::High,
            None,
            format!(
                "{} failing {kind} test{} ({})",
                suite.failed.max(1),
                if suite.failed.max(1) == 1 { "" } else { "s" },
                crate::text::quoted(&suite.framework, 40)
            ),
            match first.and_then(|f| f.message.as_deref()) {
                Some(m) => with_quote(&format!("{ran}, output: "), m, 500),
                None => ran,
            },
            fix_tests(suite),
        ));
        // Found when the run happened (an imported transcript's own time), not when the
        // report is written.
        if let (Some(b), Some(at)) = (out.last_mut(), &suite.ran_at) {
            b.detected_at = Some(at.clone());
        }
    }
    let b = &s.environment.build;
    if b.status == BuildState::Failed {
        // Its errors are the build's output (a `compile_error!` says what it likes): quoted.
        let (title, description, action) = match b.errors.first() {
            Some(first) => (
                with_quote("Build failing: ", first, limits::TITLE_CHARS),
                b.errors.iter().take(3).map(|e| crate::text::quoted(e, 150)).collect::<Vec<_>>().join("; "),
                with_quote("Fix the build error: ", first, 300),
            ),
            None => {
                let failed = format!("{} failed", ccmem_proto::command_or(&b.command, "the build"));
                (format!("Build failing: {failed}"), failed.clone(), format!("Fix the build: {failed}"))
            }
        };
        out.push(entry(Priority::High, None, title, description, action));
        if let (Some(entry), Some(at)) = (out.last_mut(), &b.last_build) {
            entry.detected_at = Some(at.clone());
        }
    }
    for m in &s.environment.dependencies.managers {
        if m.status == DependencyState::Outdated {
            out.push(entry(
                Priority::Medium,
                None,
                format!("{} dependencies outdated", m.package_manager),
                m.detail.clone(),
                format!("Install the dependencies ({})", m.detail.rsplit('`').nth(1).unwrap_or("reinstall")),
            ));
        }
    }
    if let Some(list) = tasks {
        out.extend(missing_files(s, list, now));
    }
    for c in comments {
        let action = match c.keyword {
            "FIXME" | "XXX" => "Fix",
            "BLOCKED" => "Resolve",
            "HACK" => "Replace",
            _ => "Resolve",
        };
        // The comment's words and the file's name are the repository's text: quoted.
        let at = format!("{} line {}", quoted_path(&c.path), c.line);
        let (title, description) = if c.text.is_empty() {
            (format!("{} in {at}", c.keyword), format!("{} comment in {at}", c.keyword))
        } else {
            (
                with_quote(&format!("{} in {at}: ", c.keyword), &c.text, limits::TITLE_CHARS),
                with_quote(&format!("{} comment in {at}: ", c.keyword), &c.text, 500),
            )
        };
        out.push(entry(
            priority_of(c.keyword),
            None,
            title,
            description,
            format!("{action} the {} in {at}", c.keyword),
        ));
    }
    out.sort_by_key(|b| b.priority);
    out.truncate(limits::BLOCKERS);
    out
}

/// The action for a failed suite: its failing tests named, and what failed outside any test
/// (an error while loading a file, tests that did not build or run) counted and said in
/// words, with the first such error, rather than listing the runner's placeholder names.
fn fix_tests(suite: &TestSuite) -> String {
    use crate::observe::testout::{DID_NOT_BUILD, DID_NOT_RUN, OUTSIDE_ANY_TEST, OUTSIDE_ANY_TEST_WORDS};
    if suite.failures.is_empty() {
        return format!(
            "Rerun {} with its whole output to see which tests fail, and fix them",
            ccmem_proto::command_or(&suite.command, "the tests")
        );
    }
    fn is(name: &str) -> impl Fn(&&TestFailure) -> bool + '_ {
        move |f| f.test_name == name
    }
    let named: Vec<&TestFailure> = suite
        .failures
        .iter()
        .filter(|f| ![OUTSIDE_ANY_TEST, DID_NOT_BUILD, DID_NOT_RUN].contains(&f.test_name.as_str()))
        .collect();
    let outside = suite.failures.iter().filter(is(OUTSIDE_ANY_TEST)).count();
    let unbuilt: Vec<&TestFailure> = suite.failures.iter().filter(is(DID_NOT_BUILD)).collect();
    let mut parts = Vec::new();
    if !named.is_empty() {
        parts.push(failing_tests(&named, suite.more_failures));
    }
    match outside {
        0 => {}
        1 => parts.push(format!("the error {OUTSIDE_ANY_TEST_WORDS}")),
        n => parts.push(format!("the {n} errors {OUTSIDE_ANY_TEST_WORDS}")),
    }
    if !unbuilt.is_empty() {
        // go names the package that did not build; a compiler's error names none.
        let packages: Vec<String> =
            unbuilt.iter().filter(|f| !f.file.is_empty()).map(|f| quoted_path(&f.file)).collect();
        parts.push(if packages.is_empty() {
            "the build of the tests".into()
        } else {
            format!("the build of {}", and_list(&packages))
        });
    }
    if suite.failures.iter().any(|f| f.test_name == DID_NOT_RUN) {
        parts.push("what keeps the tests from running".into());
    }
    let action = format!("Fix {}{}", and_list(&parts), ccmem_proto::command_after(" in ", &suite.command));
    // Named tests say where to look; an error outside them says it only in its message.
    let messages: Vec<&str> =
        suite.failures.iter().filter(|f| !named.contains(f)).filter_map(|f| f.message.as_deref()).collect();
    match messages.first() {
        Some(first) if named.is_empty() => {
            let which = if messages.iter().all(|m| m == first) { ": " } else { ", the first: " };
            with_quote(&format!("{action}{which}"), first, 300)
        }
        _ => action,
    }
}

/// `the failing test "a"`, `the failing tests "a", "b" and "c"`, `… and 4 more`: at most
/// three named. A test's name is the run's output, which the repository's code controls:
/// quoted.
fn failing_tests(named: &[&TestFailure], more_failures: u64) -> String {
    const SHOWN: usize = 3;
    let mut names: Vec<String> = named.iter().take(SHOWN).map(|f| crate::text::quoted(&f.test_name, 80)).collect();
    let more = named.len().saturating_sub(SHOWN) as u64 + more_failures;
    if more > 0 {
        names.push(format!("{more} more"));
    }
    let plural = named.len() as u64 + more_failures > 1;
    format!("the failing test{} {}", if plural { "s" } else { "" }, and_list(&names))
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Files a task relies on that are not there: named by a done task (high: the work is
/// gone), or configuration an open task needs and does not create (medium: `.env.local`).
/// Code an open task names is that task's work, not a blocker.
fn missing_files(s: &Session, list: &TaskList, now: &str) -> Vec<BlockerEntry> {
    const CREATES: &[&str] = &[
        "create",
        "add",
        "write",
        "implement",
        "generate",
        "initialize",
        "init",
        "scaffold",
        "set",
        "setup",
        "build",
        "make",
        "new",
    ];
    const CONFIG: &[&str] = &["env", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "pem", "key", "crt", "lock"];
    let is_config = |p: &str| {
        let name = p.rsplit('/').next().unwrap_or(p);
        name.starts_with('.') || name.rsplit_once('.').is_some_and(|(_, ext)| CONFIG.contains(&ext))
    };
    let mut out = Vec::new();
    let mut checked = 0;
    for t in &list.tasks {
        for p in &t.paths {
            checked += 1;
            if checked > 200 {
                return out;
            }
            if s.project_root.join(p).exists() {
                continue;
            }
            let first = t.title.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
            // The path and the task's words are the task list's text: quoted.
            let path = quoted_path(p);
            let (priority, action) = if t.done {
                let task = crate::text::quoted(if t.id.is_empty() { &t.title } else { &t.id }, 120);
                (Priority::High, format!("Restore {path} or reopen {task}"))
            } else if is_config(p) && !CREATES.contains(&first.as_str()) {
                (Priority::Medium, format!("Create {path}"))
            } else {
                continue;
            };
            out.push(BlockerEntry {
                priority,
                task_id: (!t.id.is_empty()).then(|| t.id.clone()),
                title: with_quote("Missing ", p, limits::TITLE_CHARS),
                description: with_quote(
                    &format!("{} line {} names {path}, which does not exist: ", quoted_path(&list.file), t.line),
                    &t.title,
                    500,
                ),
                required_action: action,
                detected_at: Some(now.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_comments_in_code_not_in_prose() {
        let src = b"fn a() {} // TODO: handle errors\n# FIXME(bob): off by one\nlet TODO_LIST = 1;\n/* BLOCKED waiting on the API */\n  * XXX check this\nprintln!(\"TODO later\");\nx = 1 # HACK token=abc123secret\n";
        let c = comments_in("src/a.rs", src);
        let got: Vec<(u32, &str, &str)> = c.iter().map(|c| (c.line, c.keyword, c.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (1, "TODO", "handle errors"),
                (2, "FIXME", "off by one"),
                (4, "BLOCKED", "waiting on the API"),
                (5, "XXX", "check this"),
                (7, "HACK", "token=[REDACTED:secret]")
            ]
        );
        assert!(comments_in("README.md", b"# TODO list\n<!-- TODO: fix link -->\n").iter().map(|c| c.line).eq([2]));
        assert!(comments_in("a.bin", b"\0\0 // TODO x").is_empty());
    }

    /// Issue #33: a run whose failures the runner could not name ("(error outside a test)",
    /// "(build)") gets an action that counts them and says what failed, not one listing the
    /// placeholders ("Fix the failing tests: \"(error outside a test)\", \"(error outside a
    /// test)\"").
    #[test]
    fn a_failures_detected_time_is_when_it_happened() {
        let mut s = Session::default();
        s.test_results.unit = TestSuite {
            status: SuiteStatus::Failed,
            failed: 1,
            ran_at: Some("2026-02-22T10:09:03Z".into()),
            ..TestSuite::default()
        };
        let b = build(&s, None, &[], "2026-11-27T13:38:00Z");
        assert_eq!(b[0].detected_at.as_deref(), Some("2026-02-22T10:09:03Z"), "{b:?}");
    }

    #[test]
    fn failing_tests_are_named_or_counted_never_listed_by_placeholder() {
        use crate::observe::testout::{self, DID_NOT_BUILD, OUTSIDE_ANY_TEST};
        // Real: bun's two errors outside any test (obsessiondb/chkit, in ../shared/transcripts).
        let out = testout::tests::fixture("bun-tail-errors.txt");
        let mut suite = testout::parse(&out, Some("bun"))[0].suite.clone();
        suite.command = "bun test packages/cli/src/".into();
        assert!(suite.failures.iter().all(|f| f.test_name == OUTSIDE_ANY_TEST), "{suite:#?}");
        assert_eq!(
            fix_tests(&suite),
            "Fix the 2 errors outside any test in `bun test packages/cli/src/`: \"error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST\""
        );
        let fail = |name: &str, file: &str, message: &str| TestFailure {
            file: file.into(),
            line: None,
            test_name: name.into(),
            message: Some(message.into()),
        };
        let run = |failures: Vec<TestFailure>, more_failures: u64| TestSuite {
            failures,
            more_failures,
            command: "cargo test".into(),
            status: SuiteStatus::Failed,
            ..TestSuite::default()
        };
        let cases = [
            (run(vec![fail("parses", "", "x")], 0), "Fix the failing test \"parses\" in `cargo test`"),
            (
                run((1..=5).map(|i| fail(&format!("t{i}"), "", "x")).collect(), 1),
                "Fix the failing tests \"t1\", \"t2\", \"t3\" and 3 more in `cargo test`",
            ),
            (
                run(vec![fail("parses", "", "x"), fail(OUTSIDE_ANY_TEST, "", "boom")], 0),
                "Fix the failing test \"parses\" and the error outside any test in `cargo test`",
            ),
            (
                run(vec![fail(DID_NOT_BUILD, "", "error[E0308]: mismatched types")], 0),
                "Fix the build of the tests in `cargo test`: \"error[E0308]: mismatched types\"",
            ),
            (
                run(vec![fail(DID_NOT_BUILD, "./calc", "FAIL ./calc [build failed]")], 0),
                "Fix the build of \"./calc\" in `cargo test`: \"FAIL ./calc [build failed]\"",
            ),
            (
                run(vec![fail(OUTSIDE_ANY_TEST, "", "error: a"), fail(OUTSIDE_ANY_TEST, "", "error: b")], 0),
                "Fix the 2 errors outside any test in `cargo test`, the first: \"error: a\"",
            ),
        ];
        for (suite, want) in cases {
            let got = fix_tests(&suite);
            assert_eq!(got, want);
            assert!(ccmem_proto::model::report::is_imperative(&got), "{got}");
        }
    }

    #[test]
    fn the_cache_rereads_only_changed_files() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.rs"), "// TODO one\n").unwrap();
        let mut cache = CommentCache::default();
        let files = vec!["a.rs".to_string(), "gone.rs".to_string()];
        assert_eq!(cache.scan(tmp.path(), &files).len(), 1);
        assert_eq!(cache.reads, 1);
        assert_eq!(cache.scan(tmp.path(), &files).len(), 1);
        assert_eq!(cache.reads, 1, "an unchanged file is not read again");
        std::fs::write(tmp.path().join("a.rs"), "// TODO one\n// FIXME two\n").unwrap();
        assert_eq!(cache.scan(tmp.path(), &files).len(), 2, "a changed size is read again");
        assert_eq!(cache.reads, 2);
    }
}
