//! The session memory report, `.claude/session-memory.md` (seed 000): its model
//! ([`SessionMemory`]), its markdown form ([`serialize`]), the reader of that form ([`parse`],
//! which never fails: damaged input gives partial data and warnings) and its rules
//! ([`validate`]).
//!
//! Every text field is written escaped (`\\`, `\|`, `` \` ``, `\n`), so tables, code spans and
//! lists stay unambiguous whatever a title holds, and `parse(serialize(m)) == m` for every
//! valid `m`.

use crate::env::{
    BuildState, BuildStatus, DependencyState, DependencyStatus, EnvironmentState, ManagerStatus, ServerInfo,
    ServerStatus, SuiteStatus, TestFailure, TestResults, TestSuite,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The report's sections, in order.
pub const SECTIONS: [&str; 7] = [
    "Executive Summary",
    "Task Status",
    "Blockers",
    "Test Results",
    "Environment State",
    "Files Needing Attention",
    "Next Steps",
];

/// What the Test Results section says when no test run was seen.
pub const NO_TESTS: &str = "No test run seen.";

/// The title of the section ccmem adds after the Executive Summary.
pub const WORK: &str = "Where You Left Off";

/// The format version written in the header.
pub const FORMAT_VERSION: &str = "1.0";
/// The report stays under this size.
pub const MAX_BYTES: usize = 50 * 1024;

/// Seed 000's limits.
pub mod limits {
    /// Blockers kept (low priority dropped first).
    pub const BLOCKERS: usize = 50;
    /// Characters of a blocker's title.
    pub const TITLE_CHARS: usize = 100;
    /// Files needing attention.
    pub const FILES: usize = 50;
    /// Next steps.
    pub const NEXT_STEPS: usize = 10;
    /// Next tasks.
    pub const NEXT_TASKS: usize = 5;
}

/// The whole report (seed 000's SessionMemory).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionMemory {
    /// Where and when.
    pub metadata: SessionMetadata,
    /// Five sentences.
    pub summary: ExecutiveSummary,
    /// Where the agent left off (ccmem's addition to seed 000): the task, the todo list with
    /// each item's status, unresolved failures, finished work, the agent's last words,
    /// decisions and findings. One line each; `### ` lines head its parts.
    pub work: Vec<String>,
    /// The task list's progress.
    pub task_status: TaskStatus,
    /// What stands in the way, high priority first.
    pub blockers: Vec<BlockerEntry>,
    /// Unit and end-to-end tests.
    pub test_results: TestResults,
    /// Servers, dependencies, build.
    pub environment: EnvironmentState,
    /// Files to look at.
    pub files_needing_attention: Vec<FileReference>,
    /// What to do, most urgent first.
    pub next_steps: Vec<NextStep>,
}

/// Seed 000's SessionMetadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionMetadata {
    /// From the manifest, else the directory.
    pub project_name: String,
    /// ISO 8601.
    pub generated_at: String,
    /// Current git branch, or `unknown`.
    pub branch: String,
    /// e.g. `2h 15m`.
    pub session_duration: Option<String>,
    /// Format version, e.g. `1.0`.
    pub version: String,
}

/// The Task Status source of a project without a task list: the agent's own todos.
pub const AGENT_TODOS: &str = "the agent's todos";

/// Seed 000's ExecutiveSummary: one sentence each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutiveSummary {
    /// What the project is.
    pub project_description: String,
    /// e.g. `60/155 tasks complete (38.7%)`.
    pub completion_status: String,
    /// The phase in progress.
    pub current_phase: String,
    /// The first high-priority blocker, if any.
    pub major_blocker: Option<String>,
    /// The first thing to do.
    pub next_action: String,
}

/// Seed 000's TaskStatus.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskStatus {
    /// The task list, relative to the root; empty when there is none.
    pub source_file: String,
    /// Per phase, in file order.
    pub phases: Vec<PhaseStatus>,
    /// The first incomplete task.
    pub current_task: Option<TaskReference>,
    /// The incomplete tasks after it (at most 5).
    pub next_tasks: Vec<TaskReference>,
}

/// One phase's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PhaseStatus {
    /// e.g. `Setup`.
    pub name: String,
    /// Tasks done.
    pub completed: u64,
    /// Tasks in all.
    pub total: u64,
    /// completed / total × 100, one decimal.
    pub percentage: f64,
}

/// A task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskReference {
    /// e.g. `T032` (may be empty in a plain checklist).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its phase.
    pub phase: String,
}

/// High, medium or low.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Stops the work.
    High,
    /// Slows it.
    #[default]
    Medium,
    /// Worth a look.
    Low,
}

/// Seed 000's BlockerEntry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BlockerEntry {
    /// How much it matters.
    pub priority: Priority,
    /// The task it blocks, if one.
    pub task_id: Option<String>,
    /// At most 100 characters.
    pub title: String,
    /// The detail.
    pub description: String,
    /// Starts with an imperative verb.
    pub required_action: String,
    /// ISO 8601.
    pub detected_at: Option<String>,
}

/// Seed 000's FileReference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FileReference {
    /// Relative, forward slashes.
    pub path: String,
    /// Where in it.
    pub line: Option<u32>,
    /// Why: "Failing test", "TODO comment", …
    pub reason: String,
    /// How much it matters.
    pub priority: Priority,
}

/// When a step is due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepPriority {
    /// Now: blockers, failing tests.
    Immediate,
    /// This phase.
    #[default]
    ShortTerm,
    /// The next phase.
    MediumTerm,
    /// Later.
    LongTerm,
}

/// Seed 000's NextStep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NextStep {
    /// When.
    pub priority: StepPriority,
    /// Starts with an imperative verb.
    pub action: String,
    /// A file or task it concerns.
    pub reference: Option<String>,
}

impl TaskStatus {
    /// (done, total) over every phase.
    pub fn totals(&self) -> (u64, u64) {
        self.phases.iter().fold((0, 0), |a, p| (a.0 + p.completed, a.1 + p.total))
    }
}

impl SessionMemory {
    /// What an empty file reads as.
    pub fn no_data() -> Self {
        SessionMemory {
            metadata: SessionMetadata {
                project_name: "unknown".into(),
                generated_at: "unknown".into(),
                branch: "unknown".into(),
                session_duration: None,
                version: FORMAT_VERSION.into(),
            },
            summary: ExecutiveSummary {
                project_description: "No session data".into(),
                completion_status: "0/0 tasks complete (0.0%)".into(),
                current_phase: "unknown".into(),
                major_blocker: None,
                next_action: "Start a session".into(),
            },
            ..Default::default()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Escaping

/// A text field as written: `\`, `|`, `` ` `` and line breaks escaped.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '|' => o.push_str("\\|"),
            '`' => o.push_str("\\`"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o
}

/// The inverse of [`esc`].
pub fn unesc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            Some(x) => o.push(x),
            None => o.push('\\'),
        }
    }
    o
}

/// Splits a table row on its unescaped pipes; None when it is not a row.
fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if !t.starts_with('|') || !t.ends_with('|') || t.len() < 2 {
        return None;
    }
    let inner = &t[1..t.len() - 1];
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut it = inner.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                cur.push('\\');
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            '|' => {
                out.push(unesc(cur.trim()));
                cur.clear();
            }
            c => cur.push(c),
        }
    }
    out.push(unesc(cur.trim()));
    Some(out)
}

fn row(cols: &[String]) -> String {
    let mut s = String::from("|");
    for c in cols {
        s.push(' ');
        s.push_str(&esc(c));
        s.push_str(" |");
    }
    s
}

fn table(out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
    for r in rows {
        let _ = writeln!(out, "{}", row(&r));
    }
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

fn opt_num<T: ToString>(v: Option<T>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Writing

fn priority_name(p: Priority) -> &'static str {
    match p {
        Priority::High => "high",
        Priority::Medium => "medium",
        Priority::Low => "low",
    }
}

fn step_name(p: StepPriority) -> &'static str {
    match p {
        StepPriority::Immediate => "Immediate",
        StepPriority::ShortTerm => "Short-term",
        StepPriority::MediumTerm => "Medium-term",
        StepPriority::LongTerm => "Long-term",
    }
}

fn suite_status(s: SuiteStatus) -> &'static str {
    match s {
        SuiteStatus::Passed => "passed",
        SuiteStatus::Failed => "failed",
        SuiteStatus::NotRun => "not-run",
    }
}

fn dep_state(s: DependencyState) -> &'static str {
    match s {
        DependencyState::UpToDate => "up-to-date",
        DependencyState::Outdated => "outdated",
        DependencyState::Unknown => "unknown",
    }
}

fn build_state(s: BuildState) -> &'static str {
    match s {
        BuildState::Success => "success",
        BuildState::Failed => "failed",
        BuildState::NotRun => "not-run",
    }
}

/// The markdown form of `m` (seed 000's template).
pub fn serialize(m: &SessionMemory) -> String {
    let mut o = String::new();
    let md = &m.metadata;
    let _ = writeln!(o, "# Session Memory: {}\n", esc(&md.project_name));
    let _ = writeln!(o, "**Generated**: {}", esc(&md.generated_at));
    let _ = writeln!(o, "**Branch**: {}", esc(&md.branch));
    if let Some(d) = &md.session_duration {
        let _ = writeln!(o, "**Session Duration**: {}", esc(d));
    }
    let _ = writeln!(o, "**Format Version**: {}\n", esc(&md.version));

    let s = &m.summary;
    let _ = writeln!(o, "## Executive Summary\n");
    let _ = writeln!(o, "1. {}", esc(&s.project_description));
    let _ = writeln!(o, "2. {}", esc(&s.completion_status));
    let _ = writeln!(o, "3. Current phase: {}", esc(&s.current_phase));
    match &s.major_blocker {
        Some(b) => {
            let _ = writeln!(o, "4. Major blocker: {}", esc(b));
        }
        None => o.push_str("4. No critical blockers\n"),
    }
    let _ = writeln!(o, "5. Next action: {}\n", esc(&s.next_action));

    if !m.work.is_empty() {
        let _ = writeln!(o, "## {WORK}\n");
        for l in &m.work {
            // Only what would end the section or read as something else needs a mark.
            let marked = l.starts_with('#') || l.starts_with('\\') || l.trim_end() == "---";
            if l.starts_with("### ") {
                let _ = writeln!(o, "\n{l}\n");
            } else if marked {
                let _ = writeln!(o, "\\{l}");
            } else {
                let _ = writeln!(o, "{l}");
            }
        }
        o.push('\n');
    }

    let t = &m.task_status;
    let _ = writeln!(o, "## Task Status\n");
    if t.source_file.is_empty() {
        o.push_str("**Source**: none\n\n");
    } else if t.source_file == AGENT_TODOS {
        let _ = writeln!(o, "**Source**: {AGENT_TODOS}\n");
    } else {
        let _ = writeln!(o, "**Source**: `{}`\n", esc(&t.source_file));
    }
    if t.phases.is_empty() {
        o.push_str("No phases.\n\n");
    } else {
        let rows = t
            .phases
            .iter()
            .map(|p| {
                vec![p.name.clone(), p.completed.to_string(), p.total.to_string(), format!("{:.1}%", p.percentage)]
            })
            .collect();
        table(&mut o, &["Phase", "Completed", "Total", "Progress"], rows);
        o.push('\n');
    }
    let task_rows =
        |ts: &[TaskReference]| ts.iter().map(|r| vec![r.id.clone(), r.title.clone(), r.phase.clone()]).collect();
    match &t.current_task {
        None => o.push_str("**Current Task**: none\n\n"),
        Some(r) => {
            o.push_str("**Current Task**:\n\n");
            table(&mut o, &["ID", "Task", "Phase"], task_rows(std::slice::from_ref(r)));
            o.push('\n');
        }
    }
    if t.next_tasks.is_empty() {
        o.push_str("**Next Tasks**: none\n\n");
    } else {
        o.push_str("**Next Tasks**:\n\n");
        table(&mut o, &["ID", "Task", "Phase"], task_rows(&t.next_tasks));
        o.push('\n');
    }

    let _ = writeln!(o, "## Blockers\n");
    if m.blockers.is_empty() {
        o.push_str("No blockers.\n\n");
    }
    for p in [Priority::High, Priority::Medium, Priority::Low] {
        let rows: Vec<Vec<String>> = m
            .blockers
            .iter()
            .filter(|b| b.priority == p)
            .map(|b| {
                vec![
                    opt(&b.task_id),
                    b.title.clone(),
                    b.description.clone(),
                    b.required_action.clone(),
                    opt(&b.detected_at),
                ]
            })
            .collect();
        if !rows.is_empty() {
            let name = priority_name(p);
            let _ = writeln!(o, "### {}{} Priority\n", name[..1].to_uppercase(), &name[1..]);
            table(&mut o, &["Task", "Title", "Description", "Required Action", "Detected"], rows);
            o.push('\n');
        }
    }

    let tr = &m.test_results;
    let _ = writeln!(o, "## Test Results\n");
    if *tr == TestResults::default() {
        let _ = writeln!(o, "{NO_TESTS}\n");
    } else {
        let _ = writeln!(o, "**Last Run**: {}\n", tr.last_run.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        for (title, suite) in [("Unit Tests", &tr.unit), ("E2E Tests", &tr.e2e)] {
            let _ = writeln!(o, "### {title}\n");
            if *suite == TestSuite::default() {
                let _ = writeln!(o, "Not run.\n");
            } else {
                write_suite(&mut o, suite);
            }
        }
    }

    let e = &m.environment;
    let _ = writeln!(o, "## Environment State\n");
    let _ = writeln!(o, "### Servers\n");
    if e.servers.is_empty() {
        o.push_str("No servers.\n\n");
    } else {
        let rows = e
            .servers
            .iter()
            .map(|v| {
                vec![
                    v.process.clone(),
                    v.port.to_string(),
                    v.url.clone(),
                    opt_num(v.pid),
                    match v.status {
                        ServerStatus::Running => "running".into(),
                        ServerStatus::Stopped => "stopped".into(),
                    },
                    v.command.clone(),
                    v.started_at.clone(),
                    opt(&v.stopped_at),
                ]
            })
            .collect();
        table(&mut o, &["Process", "Port", "URL", "PID", "Status", "Command", "Started", "Stopped"], rows);
        o.push('\n');
    }
    let d = &e.dependencies;
    if *d != DependencyStatus::default() {
        let _ = writeln!(o, "### Dependencies\n");
        let _ = writeln!(o, "- Status: {}", dep_state(d.status));
        let _ = writeln!(o, "- Package Manager: {}", esc(&d.package_manager));
        let _ = writeln!(o, "- Last Install: {}", d.last_install.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        if let Some(n) = d.outdated_count {
            let _ = writeln!(o, "- Outdated Packages: {n}");
        }
        o.push('\n');
        if !d.managers.is_empty() {
            let rows = d
                .managers
                .iter()
                .map(|x| {
                    vec![
                        x.package_manager.clone(),
                        x.lockfile.clone(),
                        dep_state(x.status).into(),
                        opt(&x.last_install),
                        x.detail.clone(),
                    ]
                })
                .collect();
            table(&mut o, &["Manager", "Lockfile", "Status", "Last Install", "Detail"], rows);
            o.push('\n');
        }
    }
    let b = &e.build;
    if *b != BuildStatus::default() {
        let _ = writeln!(o, "### Build\n");
        let _ = writeln!(o, "- Status: {}", build_state(b.status));
        let _ = writeln!(o, "- Last Build: {}", b.last_build.as_deref().map(esc).unwrap_or_else(|| "never".into()));
        if let Some(dir) = &b.output_dir {
            let _ = writeln!(o, "- Output Directory: {}", esc(dir));
        }
        if !b.command.is_empty() {
            let _ = writeln!(o, "- Command: {}", esc(&b.command));
        }
        o.push('\n');
        if !b.errors.is_empty() {
            table(&mut o, &["Error"], b.errors.iter().map(|x| vec![x.clone()]).collect());
            o.push('\n');
        }
    }

    let _ = writeln!(o, "## Files Needing Attention\n");
    if m.files_needing_attention.is_empty() {
        o.push_str("None.\n\n");
    } else {
        for (i, f) in m.files_needing_attention.iter().enumerate() {
            let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
            let _ =
                writeln!(o, "{}. [{}] `{}`{line} — {}", i + 1, priority_name(f.priority), esc(&f.path), esc(&f.reason));
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Next Steps\n");
    if m.next_steps.is_empty() {
        o.push_str("None.\n\n");
    }
    for p in [StepPriority::Immediate, StepPriority::ShortTerm, StepPriority::MediumTerm, StepPriority::LongTerm] {
        let steps: Vec<&NextStep> = m.next_steps.iter().filter(|s| s.priority == p).collect();
        if steps.is_empty() {
            continue;
        }
        let _ = writeln!(o, "### {}\n", step_name(p));
        for (i, s) in steps.iter().enumerate() {
            let reference = s.reference.as_deref().map(|r| format!(" → `{}`", esc(r))).unwrap_or_default();
            let _ = writeln!(o, "{}. {}{reference}", i + 1, esc(&s.action));
        }
        o.push('\n');
    }
    o.push_str("---\n\n");
    let _ = writeln!(o, "*Generated by ccmem session memory v{}*", esc(&md.version));
    o
}

fn write_suite(o: &mut String, s: &TestSuite) {
    let _ = writeln!(o, "- Framework: {}", esc(&s.framework));
    let _ = writeln!(o, "- Status: {}", suite_status(s.status));
    let _ = writeln!(o, "- Passed: {}", s.passed);
    let _ = writeln!(o, "- Failed: {}", s.failed);
    let _ = writeln!(o, "- Skipped: {}", s.skipped);
    let _ = writeln!(o, "- Total: {}", s.total);
    let _ = writeln!(o, "- Pass Rate: {:.1}%", s.percentage);
    if !s.command.is_empty() {
        let _ = writeln!(o, "- Command: {}", esc(&s.command));
    }
    if let Some(t) = &s.ran_at {
        let _ = writeln!(o, "- Ran At: {}", esc(t));
    }
    if s.more_failures > 0 {
        let _ = writeln!(o, "- More Failures: {}", s.more_failures);
    }
    o.push('\n');
    if !s.failures.is_empty() {
        let rows = s
            .failures
            .iter()
            .map(|f| vec![f.file.clone(), opt_num(f.line), f.test_name.clone(), opt(&f.message)])
            .collect();
        table(o, &["File", "Line", "Test", "Message"], rows);
        o.push('\n');
        if s.more_failures > 0 {
            let _ = writeln!(o, "... and {} more failures\n", s.more_failures);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// What [`parse`] read, and what it could not.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The report, with defaults where it was damaged.
    pub memory: SessionMemory,
    /// What was missing or unreadable.
    pub warnings: Vec<String>,
}

struct Lines<'a> {
    all: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    /// The lines of the `## title` section (without the heading), if present.
    fn section(&self, title: &str) -> Option<&[&'a str]> {
        let start = self.all.iter().position(|l| l.trim_end() == format!("## {title}"))? + 1;
        let end = self.all[start..]
            .iter()
            .position(|l| l.starts_with("## ") || l.trim_end() == "---")
            .map_or(self.all.len(), |e| start + e);
        Some(&self.all[start..end])
    }
}

/// The `### title` subsection of a section.
fn sub<'a, 'b>(lines: &'b [&'a str], title: &str) -> Option<&'b [&'a str]> {
    let start = lines.iter().position(|l| l.trim_end() == format!("### {title}"))? + 1;
    let end = lines[start..].iter().position(|l| l.starts_with("### ")).map_or(lines.len(), |e| start + e);
    Some(&lines[start..end])
}

/// The rows of the first table in `lines` at or after `from`: (rows, the line after it).
fn read_table(
    lines: &[&str],
    from: usize,
    cols: usize,
    what: &str,
    warn: &mut Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    let Some(head) =
        lines[from.min(lines.len())..].iter().position(|l| l.trim_start().starts_with('|')).map(|p| p + from)
    else {
        return (Vec::new(), lines.len());
    };
    let mut rows = Vec::new();
    let mut i = head + 2; // the header and the rule
    while i < lines.len() && lines[i].trim_start().starts_with('|') {
        match cells(lines[i]) {
            Some(c) if c.len() == cols => rows.push(c),
            _ => warn.push(format!("{what}: a table row could not be read: {}", lines[i].trim())),
        }
        i += 1;
    }
    (rows, i)
}

/// `- Key: value` items of a block, unescaped.
fn items(lines: &[&str]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| {
            l.split_once(':').map(|(k, v)| (k.trim().to_string(), unesc(v.strip_prefix(' ').unwrap_or(v).trim_end())))
        })
        .collect()
}

fn item<'a>(items: &'a [(String, String)], key: &str) -> Option<&'a str> {
    items.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn num<T: std::str::FromStr + Default>(v: Option<&str>, what: &str, warn: &mut Vec<String>) -> T {
    match v.map(str::trim) {
        Some(x) => x.parse().unwrap_or_else(|_| {
            warn.push(format!("{what}: {x:?} is not a number"));
            T::default()
        }),
        None => T::default(),
    }
}

fn opt_cell(c: &str) -> Option<String> {
    (!c.is_empty()).then(|| c.to_string())
}

fn pct(v: &str) -> Option<f64> {
    v.trim().trim_end_matches('%').parse().ok()
}

/// Splits `text` ending in `` <sep>`code` `` into (text, code); the code span's backticks
/// are the unescaped ones.
fn trailing_code(text: &str, sep: &str) -> (String, Option<String>) {
    let b = text.as_bytes();
    let unescaped = |i: usize| b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0;
    if b.len() >= 2 && b[b.len() - 1] == b'`' && unescaped(b.len() - 1) {
        if let Some(open) = (0..b.len() - 1).rev().find(|&i| b[i] == b'`' && unescaped(i)) {
            if text[..open].ends_with(sep) {
                return (text[..open - sep.len()].to_string(), Some(unesc(&text[open + 1..b.len() - 1])));
            }
        }
    }
    (text.to_string(), None)
}

/// Reads a report. Never fails: what is missing or damaged is reported in `warnings` and
/// left at its default; an empty file reads as [`SessionMemory::no_data`].
pub fn parse(text: &str) -> Parsed {
    let mut w: Vec<String> = Vec::new();
    if text.trim().is_empty() {
        return Parsed {
            memory: SessionMemory::no_data(),
            warnings: vec!["the file is empty: no session data".into()],
        };
    }
    let lines = Lines { all: text.lines().collect() };
    let mut m = SessionMemory::default();

    match lines.all.iter().find_map(|l| l.strip_prefix("# Session Memory: ")) {
        Some(name) => m.metadata.project_name = unesc(name.trim_end()),
        None => w.push("no `# Session Memory:` title".into()),
    }
    let field =
        |key: &str| lines.all.iter().find_map(|l| l.strip_prefix(&format!("**{key}**: ")).map(|v| unesc(v.trim_end())));
    m.metadata.generated_at = field("Generated").unwrap_or_else(|| {
        w.push("no **Generated** time".into());
        "unknown".into()
    });
    m.metadata.branch = field("Branch").unwrap_or_else(|| {
        w.push("no **Branch**".into());
        "unknown".into()
    });
    m.metadata.session_duration = field("Session Duration");
    m.metadata.version = field("Format Version").unwrap_or_else(|| FORMAT_VERSION.into());

    match lines.section("Executive Summary") {
        None => w.push("missing section: Executive Summary".into()),
        Some(sec) => {
            let n = |i: &str| sec.iter().find_map(|l| l.strip_prefix(&format!("{i}. "))).map(|v| v.trim_end());
            let s = &mut m.summary;
            s.project_description = n("1").map(unesc).unwrap_or_default();
            s.completion_status = n("2").map(unesc).unwrap_or_default();
            s.current_phase =
                n("3").map(|v| unesc(v.strip_prefix("Current phase:").unwrap_or(v).trim_start())).unwrap_or_default();
            s.major_blocker = n("4").and_then(|v| v.strip_prefix("Major blocker:").map(|b| unesc(b.trim_start())));
            s.next_action =
                n("5").map(|v| unesc(v.strip_prefix("Next action:").unwrap_or(v).trim_start())).unwrap_or_default();
            if (1..=5).any(|i| n(&i.to_string()).is_none()) {
                w.push("Executive Summary: fewer than five items".into());
            }
        }
    }

    if let Some(sec) = lines.section(WORK) {
        m.work = sec
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.strip_prefix('\\').unwrap_or(l).to_string())
            .collect();
    }

    match lines.section("Task Status") {
        None => w.push("missing section: Task Status".into()),
        Some(sec) => read_tasks(sec, &mut m.task_status, &mut w),
    }

    match lines.section("Blockers") {
        None => w.push("missing section: Blockers".into()),
        Some(sec) => {
            for p in [Priority::High, Priority::Medium, Priority::Low] {
                let name = priority_name(p);
                let title = format!("{}{} Priority", name[..1].to_uppercase(), &name[1..]);
                if let Some(block) = sub(sec, &title) {
                    let (rows, _) = read_table(block, 0, 5, "Blockers", &mut w);
                    for r in rows {
                        m.blockers.push(BlockerEntry {
                            priority: p,
                            task_id: opt_cell(&r[0]),
                            title: r[1].clone(),
                            description: r[2].clone(),
                            required_action: r[3].clone(),
                            detected_at: opt_cell(&r[4]),
                        });
                    }
                }
            }
        }
    }

    match lines.section("Test Results") {
        None => w.push("missing section: Test Results".into()),
        Some(sec) => {
            let last = sec.iter().find_map(|l| l.strip_prefix("**Last Run**: ")).map(|v| unesc(v.trim_end()));
            m.test_results.last_run = last.filter(|v| v != "never");
            let none = sec.iter().any(|l| l.trim_end() == NO_TESTS);
            for (title, e2e) in [("Unit Tests", false), ("E2E Tests", true)] {
                match sub(sec, title) {
                    Some(block) if block.iter().any(|l| l.trim_end() == "Not run.") => {}
                    Some(block) => *m.test_results.suite_mut(e2e) = read_suite(block, title, &mut w),
                    None if none => {}
                    None => w.push(format!("Test Results: no {title}")),
                }
            }
        }
    }

    match lines.section("Environment State") {
        None => w.push("missing section: Environment State".into()),
        Some(sec) => read_environment(sec, &mut m.environment, &mut w),
    }

    match lines.section("Files Needing Attention") {
        None => w.push("missing section: Files Needing Attention".into()),
        Some(sec) => {
            for l in sec.iter().filter(|l| l.trim() != "None." && !l.trim().is_empty()) {
                match read_file_ref(l) {
                    Some(f) => m.files_needing_attention.push(f),
                    None => w.push(format!("Files Needing Attention: cannot read {:?}", l.trim())),
                }
            }
        }
    }

    match lines.section("Next Steps") {
        None => w.push("missing section: Next Steps".into()),
        Some(sec) => {
            for p in
                [StepPriority::Immediate, StepPriority::ShortTerm, StepPriority::MediumTerm, StepPriority::LongTerm]
            {
                let Some(block) = sub(sec, step_name(p)) else { continue };
                for l in block.iter().filter(|l| !l.trim().is_empty()) {
                    let Some((n, rest)) = l.split_once(". ") else {
                        w.push(format!("Next Steps: cannot read {:?}", l.trim()));
                        continue;
                    };
                    if n.parse::<u32>().is_err() {
                        w.push(format!("Next Steps: cannot read {:?}", l.trim()));
                        continue;
                    }
                    let (action, reference) = trailing_code(rest.trim_end(), " → ");
                    m.next_steps.push(NextStep { priority: p, action: unesc(&action), reference });
                }
            }
        }
    }
    Parsed { memory: m, warnings: w }
}

fn read_tasks(sec: &[&str], t: &mut TaskStatus, w: &mut Vec<String>) {
    match sec.iter().find_map(|l| l.strip_prefix("**Source**: ")).map(str::trim_end) {
        Some("none") => {}
        Some(v) if v.len() >= 2 && v.starts_with('`') && v.ends_with('`') => t.source_file = unesc(&v[1..v.len() - 1]),
        Some(v) => t.source_file = unesc(v),
        None => w.push("Task Status: no **Source**".into()),
    }
    let cur = sec.iter().position(|l| l.starts_with("**Current Task**:")).unwrap_or(sec.len());
    let next = sec.iter().position(|l| l.starts_with("**Next Tasks**:")).unwrap_or(sec.len());
    let phases_end = cur.min(next);
    let (rows, _) = read_table(&sec[..phases_end], 0, 4, "Task Status phases", w);
    for r in rows {
        let completed = num(Some(&r[1]), "phase completed", w);
        let total = num(Some(&r[2]), "phase total", w);
        let percentage = pct(&r[3]).unwrap_or_else(|| {
            w.push(format!("phase progress {:?} is not a percentage", r[3]));
            0.0
        });
        t.phases.push(PhaseStatus { name: r[0].clone(), completed, total, percentage });
    }
    let refs = |from: usize, to: usize, w: &mut Vec<String>| -> Vec<TaskReference> {
        if from >= sec.len() || sec[from].trim_end().ends_with("none") {
            return Vec::new();
        }
        let (rows, _) = read_table(&sec[from..to.max(from)], 1, 3, "Task Status tasks", w);
        rows.into_iter().map(|r| TaskReference { id: r[0].clone(), title: r[1].clone(), phase: r[2].clone() }).collect()
    };
    let end_of_cur = if next > cur { next } else { sec.len() };
    t.current_task = refs(cur, end_of_cur, w).into_iter().next();
    let end_of_next = if cur > next { cur } else { sec.len() };
    t.next_tasks = refs(next, end_of_next, w);
}

fn read_suite(block: &[&str], title: &str, w: &mut Vec<String>) -> TestSuite {
    let it = items(block);
    let status = match item(&it, "Status") {
        Some("passed") => SuiteStatus::Passed,
        Some("failed") => SuiteStatus::Failed,
        Some("not-run") | None => SuiteStatus::NotRun,
        Some(x) => {
            w.push(format!("{title}: unknown status {x:?}"));
            SuiteStatus::NotRun
        }
    };
    let mut s = TestSuite {
        framework: item(&it, "Framework").unwrap_or("").to_string(),
        status,
        passed: num(item(&it, "Passed"), "passed", w),
        failed: num(item(&it, "Failed"), "failed", w),
        skipped: num(item(&it, "Skipped"), "skipped", w),
        total: num(item(&it, "Total"), "total", w),
        percentage: item(&it, "Pass Rate").and_then(pct).unwrap_or(0.0),
        command: item(&it, "Command").unwrap_or("").to_string(),
        ran_at: item(&it, "Ran At").map(str::to_string),
        more_failures: num(item(&it, "More Failures"), "more failures", w),
        failures: Vec::new(),
    };
    let (rows, _) = read_table(block, 0, 4, title, w);
    for r in rows {
        s.failures.push(TestFailure {
            file: r[0].clone(),
            line: opt_cell(&r[1]).and_then(|l| l.parse().ok()),
            test_name: r[2].clone(),
            message: opt_cell(&r[3]),
        });
    }
    s
}

fn read_environment(sec: &[&str], e: &mut EnvironmentState, w: &mut Vec<String>) {
    if let Some(block) = sub(sec, "Servers") {
        let (rows, _) = read_table(block, 0, 8, "Servers", w);
        for r in rows {
            e.servers.push(ServerInfo {
                process: r[0].clone(),
                port: num(Some(&r[1]), "server port", w),
                url: r[2].clone(),
                pid: opt_cell(&r[3]).and_then(|p| p.parse().ok()),
                status: if r[4] == "stopped" { ServerStatus::Stopped } else { ServerStatus::Running },
                command: r[5].clone(),
                started_at: r[6].clone(),
                stopped_at: opt_cell(&r[7]),
            });
        }
    } else {
        w.push("Environment State: no Servers".into());
    }
    let dep = |v: &str| match v {
        "up-to-date" => DependencyState::UpToDate,
        "outdated" => DependencyState::Outdated,
        _ => DependencyState::Unknown,
    };
    if let Some(block) = sub(sec, "Dependencies") {
        let it = items(block);
        e.dependencies = DependencyStatus {
            status: dep(item(&it, "Status").unwrap_or("unknown")),
            last_install: item(&it, "Last Install").filter(|v| *v != "never").map(str::to_string),
            package_manager: item(&it, "Package Manager").unwrap_or("unknown").to_string(),
            outdated_count: item(&it, "Outdated Packages").and_then(|v| v.parse().ok()),
            managers: Vec::new(),
        };
        let (rows, _) = read_table(block, 0, 5, "Dependencies", w);
        for r in rows {
            e.dependencies.managers.push(ManagerStatus {
                package_manager: r[0].clone(),
                lockfile: r[1].clone(),
                status: dep(&r[2]),
                last_install: opt_cell(&r[3]),
                detail: r[4].clone(),
            });
        }
    }
    if let Some(block) = sub(sec, "Build") {
        let it = items(block);
        e.build = BuildStatus {
            status: match item(&it, "Status") {
                Some("success") => BuildState::Success,
                Some("failed") => BuildState::Failed,
                _ => BuildState::NotRun,
            },
            last_build: item(&it, "Last Build").filter(|v| *v != "never").map(str::to_string),
            output_dir: item(&it, "Output Directory").map(str::to_string),
            command: item(&it, "Command").unwrap_or("").to_string(),
            errors: Vec::new(),
        };
        let (rows, _) = read_table(block, 0, 1, "Build", w);
        e.build.errors = rows.into_iter().map(|mut r| r.remove(0)).collect();
    }
}

fn read_file_ref(l: &str) -> Option<FileReference> {
    let (n, rest) = l.split_once(". [")?;
    n.trim().parse::<u32>().ok()?;
    let (prio, rest) = rest.split_once("] `")?;
    let priority = match prio {
        "high" => Priority::High,
        "medium" => Priority::Medium,
        "low" => Priority::Low,
        _ => return None,
    };
    // The path's closing backtick is the first unescaped one.
    let b = rest.as_bytes();
    let close =
        (0..b.len()).find(|&i| b[i] == b'`' && b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0)?;
    let path = unesc(&rest[..close]);
    let rest = &rest[close + 1..];
    let (line, reason) = match rest.strip_prefix(':') {
        Some(r) => {
            let (n, reason) = r.split_once(" — ")?;
            (Some(n.parse().ok()?), reason)
        }
        None => (None, rest.strip_prefix(" — ")?),
    };
    Some(FileReference { path, line, reason: unesc(reason.trim_end()), priority })
}

// ---------------------------------------------------------------------------------------
// Rules

/// Verbs an action may start with (seed 000: "Create", "Fix", "Install", "Run", "Complete"…).
pub const IMPERATIVE_VERBS: &[&str] = &[
    "Add",
    "Address",
    "Adjust",
    "Apply",
    "Ask",
    "Build",
    "Bump",
    "Change",
    "Check",
    "Clean",
    "Clear",
    "Commit",
    "Complete",
    "Configure",
    "Confirm",
    "Connect",
    "Continue",
    "Copy",
    "Create",
    "Debug",
    "Decide",
    "Define",
    "Delete",
    "Deploy",
    "Document",
    "Download",
    "Enable",
    "Ensure",
    "Export",
    "Extract",
    "Finish",
    "Fix",
    "Generate",
    "Implement",
    "Import",
    "Improve",
    "Install",
    "Investigate",
    "Merge",
    "Migrate",
    "Move",
    "Open",
    "Optimize",
    "Plan",
    "Prepare",
    "Push",
    "Read",
    "Rebuild",
    "Refactor",
    "Reinstall",
    "Release",
    "Remove",
    "Rename",
    "Replace",
    "Resolve",
    "Restart",
    "Restore",
    "Resume",
    "Review",
    "Revert",
    "Rewrite",
    "Run",
    "Set",
    "Split",
    "Start",
    "Stop",
    "Test",
    "Update",
    "Upgrade",
    "Use",
    "Validate",
    "Verify",
    "Write",
];

/// Whether `s` starts with one of [`IMPERATIVE_VERBS`].
pub fn is_imperative(s: &str) -> bool {
    let first = s.split(|c: char| !c.is_alphabetic()).next().unwrap_or("");
    IMPERATIVE_VERBS.iter().any(|v| v.eq_ignore_ascii_case(first))
}

fn is_iso(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

fn single_line(s: &str) -> bool {
    !s.contains(['\n', '\r']) && s.trim() == s
}

/// Seed 000's validation rules, and those that make the markdown form read back exactly:
/// each broken rule, naming the field.
pub fn validate(m: &SessionMemory) -> Vec<String> {
    let mut e: Vec<String> = Vec::new();
    let md = &m.metadata;
    if !is_iso(&md.generated_at) {
        e.push(format!("metadata.generatedAt must be ISO 8601, got {:?}", md.generated_at));
    }
    if md.branch.is_empty() {
        e.push("metadata.branch must be the git branch or \"unknown\"".into());
    }
    let semver = md.version.split('.').count() >= 2
        && md.version.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !semver {
        e.push(format!("metadata.version must be a version such as 1.0, got {:?}", md.version));
    }
    let s = &m.summary;
    let mut texts: Vec<(String, &str)> = vec![
        ("metadata.projectName".into(), &md.project_name),
        ("metadata.branch".into(), &md.branch),
        ("summary.projectDescription".into(), &s.project_description),
        ("summary.completionStatus".into(), &s.completion_status),
        ("summary.currentPhase".into(), &s.current_phase),
        ("summary.nextAction".into(), &s.next_action),
        ("taskStatus.sourceFile".into(), &m.task_status.source_file),
    ];
    if let Some(b) = &s.major_blocker {
        texts.push(("summary.majorBlocker".into(), b));
    }
    if let Some(d) = &md.session_duration {
        texts.push(("metadata.sessionDuration".into(), d));
    }
    for (i, l) in m.work.iter().enumerate() {
        if l.trim().is_empty() || l.trim_end() != l || l.chars().any(char::is_control) {
            e.push(format!("work[{i}] must be one non-empty line without trailing space, got {l:?}"));
        }
    }
    let cs = &s.completion_status;
    if !(cs.contains('/') && cs.contains('%')) {
        e.push(format!("summary.completionStatus must give a fraction and a percentage, got {cs:?}"));
    }
    for (i, p) in m.task_status.phases.iter().enumerate() {
        texts.push((format!("taskStatus.phases[{i}].name"), &p.name));
        check_pct(&mut e, &format!("taskStatus.phases[{i}].percentage"), p.percentage);
        if p.completed > p.total {
            e.push(format!("taskStatus.phases[{i}]: completed {} exceeds total {}", p.completed, p.total));
        }
    }
    if m.task_status.next_tasks.len() > limits::NEXT_TASKS {
        e.push(format!(
            "taskStatus.nextTasks holds {} tasks (at most {})",
            m.task_status.next_tasks.len(),
            limits::NEXT_TASKS
        ));
    }
    for (i, r) in m.task_status.current_task.iter().chain(&m.task_status.next_tasks).enumerate() {
        texts.push((format!("task[{i}].id"), &r.id));
        texts.push((format!("task[{i}].title"), &r.title));
        texts.push((format!("task[{i}].phase"), &r.phase));
    }
    if m.blockers.len() > limits::BLOCKERS {
        e.push(format!("blockers holds {} entries (at most {})", m.blockers.len(), limits::BLOCKERS));
    }
    if m.blockers.windows(2).any(|p| p[0].priority > p[1].priority) {
        e.push("blockers must be listed high priority first".into());
    }
    for (i, b) in m.blockers.iter().enumerate() {
        if b.title.chars().count() > limits::TITLE_CHARS {
            e.push(format!("blockers[{i}].title is longer than {} characters", limits::TITLE_CHARS));
        }
        if !is_imperative(&b.required_action) {
            e.push(format!(
                "blockers[{i}].requiredAction must start with an imperative verb, got {:?}",
                b.required_action
            ));
        }
        if b.task_id.as_deref() == Some("") {
            e.push(format!("blockers[{i}].taskId is empty (use null)"));
        }
        check_time(&mut e, &format!("blockers[{i}].detectedAt"), b.detected_at.as_deref());
        texts.push((format!("blockers[{i}].title"), &b.title));
        texts.push((format!("blockers[{i}].description"), &b.description));
        texts.push((format!("blockers[{i}].requiredAction"), &b.required_action));
    }
    let tr = &m.test_results;
    check_time(&mut e, "testResults.lastRun", tr.last_run.as_deref());
    for (name, suite) in [("unit", &tr.unit), ("e2e", &tr.e2e)] {
        check_pct(&mut e, &format!("testResults.{name}.percentage"), suite.percentage);
        check_time(&mut e, &format!("testResults.{name}.ranAt"), suite.ran_at.as_deref());
        if suite.failures.len() > crate::env::limits::FAILURES {
            e.push(format!("testResults.{name}.failures holds {} (at most 20)", suite.failures.len()));
        }
        texts.push((format!("testResults.{name}.framework"), &suite.framework));
        texts.push((format!("testResults.{name}.command"), &suite.command));
        for (i, f) in suite.failures.iter().enumerate() {
            texts.push((format!("testResults.{name}.failures[{i}].file"), &f.file));
            texts.push((format!("testResults.{name}.failures[{i}].testName"), &f.test_name));
            if let Some(msg) = &f.message {
                if msg.chars().count() > crate::env::limits::MESSAGE_CHARS || msg.is_empty() {
                    e.push(format!("testResults.{name}.failures[{i}].message must be 1 to 200 characters"));
                }
                texts.push((format!("testResults.{name}.failures[{i}].message"), msg));
            }
        }
    }
    let env = &m.environment;
    if env.servers.len() > crate::env::limits::SERVERS {
        e.push(format!("environment.servers holds {} (at most 20)", env.servers.len()));
    }
    for (i, v) in env.servers.iter().enumerate() {
        if v.url.contains('@') {
            e.push(format!("environment.servers[{i}].url must not hold credentials"));
        }
        if !v.started_at.is_empty() {
            check_time(&mut e, &format!("environment.servers[{i}].startedAt"), Some(&v.started_at));
        }
        check_time(&mut e, &format!("environment.servers[{i}].stoppedAt"), v.stopped_at.as_deref());
        texts.push((format!("environment.servers[{i}].process"), &v.process));
        texts.push((format!("environment.servers[{i}].url"), &v.url));
        texts.push((format!("environment.servers[{i}].command"), &v.command));
    }
    check_time(&mut e, "environment.dependencies.lastInstall", env.dependencies.last_install.as_deref());
    texts.push(("environment.dependencies.packageManager".into(), &env.dependencies.package_manager));
    for (i, x) in env.dependencies.managers.iter().enumerate() {
        check_time(&mut e, &format!("environment.dependencies.managers[{i}].lastInstall"), x.last_install.as_deref());
        texts.push((format!("environment.dependencies.managers[{i}].packageManager"), &x.package_manager));
        texts.push((format!("environment.dependencies.managers[{i}].lockfile"), &x.lockfile));
        texts.push((format!("environment.dependencies.managers[{i}].detail"), &x.detail));
    }
    let b = &env.build;
    check_time(&mut e, "environment.build.lastBuild", b.last_build.as_deref());
    if b.errors.len() > crate::env::limits::BUILD_ERRORS {
        e.push(format!("environment.build.errors holds {} (at most 10)", b.errors.len()));
    }
    for (i, x) in b.errors.iter().enumerate() {
        if x.chars().count() > crate::env::limits::MESSAGE_CHARS {
            e.push(format!("environment.build.errors[{i}] is longer than 200 characters"));
        }
        texts.push((format!("environment.build.errors[{i}]"), x));
    }
    texts.push(("environment.build.command".into(), &b.command));
    if let Some(d) = &b.output_dir {
        texts.push(("environment.build.outputDir".into(), d));
    }
    if m.files_needing_attention.len() > limits::FILES {
        e.push(format!("filesNeedingAttention holds {} (at most {})", m.files_needing_attention.len(), limits::FILES));
    }
    for (i, f) in m.files_needing_attention.iter().enumerate() {
        if f.path.is_empty() || f.path.starts_with('/') || f.path.contains('\\') || f.path.split('/').any(|p| p == "..")
        {
            e.push(format!("filesNeedingAttention[{i}].path must be relative with forward slashes, got {:?}", f.path));
        }
        if f.reason.is_empty() {
            e.push(format!("filesNeedingAttention[{i}].reason is empty"));
        }
        texts.push((format!("filesNeedingAttention[{i}].path"), &f.path));
        texts.push((format!("filesNeedingAttention[{i}].reason"), &f.reason));
    }
    if m.next_steps.len() > limits::NEXT_STEPS {
        e.push(format!("nextSteps holds {} (at most {})", m.next_steps.len(), limits::NEXT_STEPS));
    }
    if m.next_steps.windows(2).any(|p| p[0].priority > p[1].priority) {
        e.push("nextSteps must be listed most urgent first".into());
    }
    for (i, s) in m.next_steps.iter().enumerate() {
        if !is_imperative(&s.action) {
            e.push(format!("nextSteps[{i}].action must start with an imperative verb, got {:?}", s.action));
        }
        texts.push((format!("nextSteps[{i}].action"), &s.action));
        if let Some(r) = &s.reference {
            texts.push((format!("nextSteps[{i}].reference"), r));
        }
    }
    for (field, t) in texts {
        if !single_line(t) {
            e.push(format!("{field} must be one line without surrounding spaces"));
        }
    }
    let md_text = serialize(m);
    if md_text.len() > MAX_BYTES {
        e.push(format!("the report is {} bytes (at most {MAX_BYTES})", md_text.len()));
    }
    if crate::redact::finds(&md_text) {
        e.push("sensitive data detected in the report".into());
    }
    e
}

fn check_pct(e: &mut Vec<String>, field: &str, p: f64) {
    if !(0.0..=100.0).contains(&p) || ((p * 10.0).round() - p * 10.0).abs() > 1e-6 {
        e.push(format!("{field} must be 0.0 to 100.0 with one decimal, got {p}"));
    }
}

fn check_time(e: &mut Vec<String>, field: &str, t: Option<&str>) {
    if let Some(t) = t {
        if !is_iso(t) {
            e.push(format!("{field} must be ISO 8601, got {t:?}"));
        }
    }
}

/// Checks a report file's text: what could not be read, then what breaks the rules.
pub fn check(text: &str) -> Vec<String> {
    let p = parse(text);
    let mut problems = p.warnings;
    problems.extend(validate(&p.memory));
    problems
}
