//! Builds the session memory report (seed 000) from the session, the task list and the
//! comments found, and writes `.claude/session-memory.md`.
//!
//! Everything in it comes from the session (redacted when it came in) or passes through the
//! filter here (comments); the result is checked against seed 000's rules before it is
//! written, and shrunk to stay under 50 KB.

use crate::observe::manifest;
use crate::observe::tasks::{self, TaskList};
use crate::report::blockers::{self, one_line, with_quote, Comment, CommentCache};
use ccmem_proto::files::atomic;
use ccmem_proto::model::environment::{SuiteStatus, TestSuite};
use ccmem_proto::model::report::{
    self, limits, ExecutiveSummary, FileReference, NextStep, Priority, SessionMemory, SessionMetadata, StepPriority,
    TaskReference, TaskStatus,
};
use ccmem_proto::model::session::{truncate_chars, Session, Todo, TodoStatus};
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

/// The report file, relative to the project root.
pub const REPORT_FILE: &str = ".claude/session-memory.md";

/// The report for `s` now, with the task list `list` read with it. `cache` keeps the
/// comments of files already read.
pub fn build(s: &Session, list: Option<&TaskList>, cache: &mut CommentCache, now: DateTime<Utc>) -> SessionMemory {
    let mut edited: Vec<(&Box<str>, i64)> =
        s.files_modified.iter().filter(|(_, r)| !r.deleted).map(|(p, r)| (p, r.last_modified.0)).collect();
    edited.sort_by_key(|e| std::cmp::Reverse(e.1));
    let skip = list.map(|l| l.file.as_str()).unwrap_or("");
    let files: Vec<String> =
        edited.iter().map(|(p, _)| p.to_string()).filter(|p| p != skip && !p.starts_with(".claude/")).collect();
    let comments = cache.scan(&s.project_root, &files);
    assemble(s, list, &comments, now)
}

/// The report from its parts.
pub fn assemble(s: &Session, list: Option<&TaskList>, comments: &[Comment], now: DateTime<Utc>) -> SessionMemory {
    let t = crate::clock::iso(now);
    let blockers = blockers::build(s, list, comments, &t);
    let task_status = list.map(TaskList::status).unwrap_or_else(|| todo_status(&s.todos));
    let (done, total) = match list {
        Some(l) => l.counts(),
        None => {
            let done = s.todos.iter().filter(|x| x.status == TodoStatus::Completed).count() as u64;
            (done, s.todos.len() as u64)
        }
    };
    let files = attention(s, comments);
    let steps = next_steps(s, list, &blockers);
    // A phase's name is the task list's text (or what an event named it): quoted.
    let current_phase = task_status
        .current_task
        .as_ref()
        .map(|c| c.phase.clone())
        .or_else(|| s.phase.as_ref().map(|p| p.name.clone()))
        .filter(|p| !p.trim().is_empty())
        .map(|p| crate::text::quoted(&p, 190))
        .unwrap_or_else(|| if total > 0 && done == total { "Complete".into() } else { "unknown".into() });
    let next_action = steps.first().map(|n| n.action.clone()).unwrap_or_else(|| carry_on(s));
    let mut m = SessionMemory {
        metadata: SessionMetadata {
            // Names are written as code spans, which an agent reading the file still sees as
            // text: a `</system>` in a branch or directory name is defused like every quote.
            project_name: name_line(&s.project_name),
            generated_at: t.clone(),
            branch: if s.git.branch.is_empty() { "unknown".into() } else { name_line(&s.git.branch) },
            session_duration: crate::clock::parse_iso(&s.created_at).map(|c| duration(now - c)),
            version: report::FORMAT_VERSION.into(),
            left_out: Vec::new(),
        },
        work: crate::agent::context::report_work(s, now),
        summary: ExecutiveSummary {
            // The manifest's description is the repository's sentence, the directory's name a
            // clone's choice: quoted (and redacted: a directory can be named after a token).
            project_description: line(
                &match manifest::project_description(&s.project_root) {
                    Some(d) => with_quote(&format!("{} - ", crate::text::quoted(&s.project_name, 100)), &d, 300),
                    None => format!(
                        "{} ({})",
                        crate::text::quoted(&s.project_name, 100),
                        crate::text::quoted(&crate::text::clean(&s.project_root.to_string_lossy()), 190)
                    ),
                },
                300,
            ),
            completion_status: if total == 0 {
                match s.previous.as_deref().filter(|p| !p.todos.is_empty()) {
                    Some(p) => format!(
                        "0/0 tasks complete (0.0%) this session; the previous one left {} of {} todos done",
                        p.todos.iter().filter(|t| t.status == TodoStatus::Completed).count(),
                        p.todos.len()
                    ),
                    None => "0/0 tasks complete (0.0%): no task list or todos yet".into(),
                }
            } else {
                format!("{done}/{total} tasks complete ({:.1}%)", tasks::percent(done, total))
            },
            current_phase: line(&current_phase, 200),
            major_blocker: blockers.iter().find(|b| b.priority == Priority::High).map(|b| b.title.clone()),
            next_action: line(&next_action, 300),
        },
        task_status,
        blockers,
        test_results: s.test_results.clone(),
        environment: s.environment.clone(),
        files_needing_attention: files,
        next_steps: steps,
    };
    tidy(&mut m);
    fit(&mut m);
    m
}

/// The summary's next action when no step is known: the task the agent was on.
fn carry_on(s: &Session) -> String {
    let task = one_line(&s.context_snapshot.active_task);
    if task.is_empty() {
        return "Start the next task".into();
    }
    // "yes", "3", "continue": the user's answer to the agent names no task; where the
    // conversation stopped does (the Where You Left Off section has it).
    if is_short_reply(&task) && latest_prompt(s).as_deref() == Some(task.as_str()) {
        return format!(
            "Resume where the last conversation stopped (its last prompt was {})",
            crate::text::quoted(&task, 60)
        );
    }
    as_action(&task)
}

/// Fewer than three words: too short to name a task.
fn is_short_reply(text: &str) -> bool {
    text.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).count() < 3
}

/// The first line of the user's latest prompt, if any.
fn latest_prompt(s: &Session) -> Option<String> {
    s.commands_executed
        .iter()
        .rev()
        .find(|c| c.workflow.as_deref() == Some("prompt"))
        .map(|c| one_line(c.command.lines().next().unwrap_or("")))
}

/// A todo, a task or a step the agent named, as an action: as it is when it starts with a
/// verb ("fix the login" → "Fix the login"), else after "Continue with:", since glued after a
/// verb its own capital reads oddly ("Continue The username…", "Complete Update the docs").
fn as_action(text: &str) -> String {
    let text = one_line(text);
    if report::is_imperative(&text) {
        let mut chars = text.chars();
        chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
    } else {
        format!("Continue with: {text}")
    }
}

/// One line, no surrounding space, at most `max` characters.
fn line(s: &str, max: usize) -> String {
    truncate_chars(&one_line(s), max).trim().to_string()
}

/// A name (project, branch) as the report's header holds it: one line, tags defused.
fn name_line(s: &str) -> String {
    ccmem_proto::quote::defuse_tags(&line(s, 200)).into_owned()
}

/// `2h 15m`.
fn duration(d: chrono::Duration) -> String {
    let m = d.num_minutes().max(0);
    if m >= 60 {
        format!("{}h {}m", m / 60, m % 60)
    } else {
        format!("{m}m")
    }
}

/// Failing test files and build errors first, then marked comments.
fn attention(s: &Session, comments: &[Comment]) -> Vec<FileReference> {
    let mut out: Vec<FileReference> = Vec::new();
    let mut push = |path: &str, line: Option<u32>, reason: String, priority: Priority| {
        let path = relative(&s.project_root, path);
        if path.is_empty() || out.iter().any(|f| f.path == path && f.line == line) {
            return;
        }
        out.push(FileReference { path, line, reason: one_line(&reason), priority });
    };
    // A test's name and a build's error are their tools' output: quoted.
    for suite in [&s.test_results.unit, &s.test_results.e2e] {
        if suite.status == SuiteStatus::Failed {
            for f in &suite.failures {
                push(&f.file, f.line, with_quote("Failing test: ", &f.test_name, 300), Priority::High);
            }
        }
    }
    for e in &s.environment.build.errors {
        if let Some((file, line)) = error_location(e) {
            push(&file, line, format!("Build error: {}", crate::text::quoted(e, 150)), Priority::High);
        }
    }
    for c in comments {
        push(&c.path, Some(c.line), format!("{} comment", c.keyword), blockers::priority_of(c.keyword));
    }
    // What the session changed, most changed first: where a reviewer or the next agent looks.
    let mut edited: Vec<_> =
        s.files_modified.iter().filter(|(p, r)| !r.deleted && !p.starts_with(".claude/")).collect();
    edited.sort_by(|a, b| {
        b.1.modification_count.cmp(&a.1.modification_count).then(b.1.last_modified.cmp(&a.1.last_modified))
    });
    for (p, r) in edited.into_iter().take(EDITED_SHOWN) {
        let n = r.modification_count;
        let what = if r.created { "created this session" } else { "edited this session" };
        push(p, None, format!("{what} ({n} change{})", if n == 1 { "" } else { "s" }), Priority::Low);
    }
    out.sort_by_key(|f| f.priority);
    out.truncate(limits::FILES);
    out
}

/// Edited files listed among the files needing attention at most.
const EDITED_SHOWN: usize = 25;

/// `src/a.rs:10:3: error …` → (src/a.rs, 10).
fn error_location(e: &str) -> Option<(String, Option<u32>)> {
    let head = e.split(": ").next()?;
    let mut parts = head.split(':');
    let mut file = parts.next()?.trim();
    let mut line = parts.next().and_then(|l| l.parse().ok());
    // tsc's and MSBuild's `src/a.ts(12,5)`.
    if let Some((name, at)) = file.strip_suffix(')').and_then(|f| f.rsplit_once('(')) {
        if let Some(l) = at.split(',').next().and_then(|l| l.parse().ok()) {
            (file, line) = (name, Some(l));
        }
    }
    (file.contains('.') && !file.contains(' ')).then(|| (file.to_string(), line))
}

/// A path as the report wants it: relative to the root, forward slashes; "" when it is
/// outside the project or not a path.
fn relative(root: &Path, p: &str) -> String {
    let p = p.trim().trim_start_matches("./");
    if p.is_empty() {
        return String::new();
    }
    let path = PathBuf::from(p);
    let rel = if path.is_absolute() {
        match ccmem_proto::files::within::strip_root(&path, root) {
            Some(r) => r,
            None => return String::new(),
        }
    } else {
        path
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    if s.split('/').any(|c| c == "..") {
        String::new()
    } else {
        s
    }
}

/// Seed 000's generation logic: blockers and failing tests now, the current phase's tasks
/// next, the next phase after, the rest later; at most 10.
fn next_steps(
    s: &Session,
    list: Option<&TaskList>,
    blockers: &[ccmem_proto::model::report::BlockerEntry],
) -> Vec<NextStep> {
    let mut out: Vec<NextStep> = Vec::new();
    for b in blockers.iter().filter(|b| b.priority == Priority::High).take(3) {
        out.push(NextStep {
            priority: StepPriority::Immediate,
            action: b.required_action.clone(),
            reference: b.task_id.clone(),
        });
    }
    let tests_failing = [&s.test_results.unit, &s.test_results.e2e].iter().any(|x| x.status == SuiteStatus::Failed);
    for f in s.failures.iter().rev().filter(|f| !(tests_failing && f.kind == "tests")).take(3) {
        // The error line is the command's output: quoted.
        let failed = format!("Fix what makes `{}` fail ({})", f.command, f.kind);
        let action =
            if f.error.is_empty() { failed } else { with_quote(&format!("{failed}, output: "), &f.error, 300) };
        out.push(NextStep { priority: StepPriority::Immediate, action, reference: None });
    }
    let failing = |suite: &TestSuite| suite.status == SuiteStatus::Failed;
    if (failing(&s.test_results.unit) || failing(&s.test_results.e2e))
        && !out.iter().any(|n| n.action.starts_with("Fix the failing test"))
    {
        let cmd =
            if failing(&s.test_results.unit) { &s.test_results.unit.command } else { &s.test_results.e2e.command };
        out.push(NextStep {
            priority: StepPriority::Immediate,
            action: format!("Run {} again once fixed", ccmem_proto::command_or(cmd, "the tests")),
            reference: None,
        });
    }
    match list {
        Some(l) => {
            let current_phase = l.current().map(|t| t.phase.clone());
            let open: Vec<&tasks::Task> = l.tasks.iter().filter(|t| !t.done).collect();
            for t in open.iter().filter(|t| Some(&t.phase) == current_phase.as_ref()).take(3) {
                out.push(NextStep {
                    priority: StepPriority::ShortTerm,
                    action: format!("Complete {}", task_label(t)),
                    reference: Some(l.file.clone()),
                });
            }
            let later: Vec<&String> =
                l.phases.iter().skip_while(|p| Some(*p) != current_phase.as_ref()).skip(1).collect();
            if let Some(next) = later.first() {
                if let Some(t) = open.iter().find(|t| &&t.phase == next) {
                    out.push(NextStep {
                        priority: StepPriority::MediumTerm,
                        action: format!("Prepare the phase {}: start with {}", phase_label(next), task_label(t)),
                        reference: Some(l.file.clone()),
                    });
                }
            }
            for p in later.iter().skip(1).take(2) {
                out.push(NextStep {
                    priority: StepPriority::LongTerm,
                    action: format!("Plan the phase {}", phase_label(p)),
                    reference: Some(l.file.clone()),
                });
            }
        }
        None => {
            let todos = s.todos.iter().filter(|t| t.status != TodoStatus::Completed);
            for t in todos.take(4) {
                out.push(NextStep {
                    priority: StepPriority::ShortTerm,
                    action: as_action(&t.content),
                    reference: None,
                });
            }
        }
    }
    for n in &s.context_snapshot.next_steps {
        // The open todos are the next steps too: each once.
        if s.todos.iter().any(|t| &t.content == n) {
            continue;
        }
        let action = as_action(n);
        if !out.iter().any(|o| o.action == action) {
            out.push(NextStep { priority: StepPriority::MediumTerm, action, reference: None });
        }
    }
    out.sort_by_key(|n| n.priority);
    out.truncate(limits::NEXT_STEPS);
    out
}

/// The Task Status of a project without a task list: the agent's own todos, the one in
/// progress (else the first open one) current, the other open ones next.
fn todo_status(todos: &[Todo]) -> TaskStatus {
    if todos.is_empty() {
        return TaskStatus::default();
    }
    let reference = |(i, t): (usize, &Todo)| TaskReference {
        id: format!("#{}", t.id.clone().unwrap_or_else(|| (i + 1).to_string())),
        title: t.content.clone(),
        phase: String::new(),
    };
    let open: Vec<(usize, &Todo)> =
        todos.iter().enumerate().filter(|(_, t)| t.status != TodoStatus::Completed).collect();
    let current = open.iter().position(|(_, t)| t.status == TodoStatus::InProgress).unwrap_or(0);
    TaskStatus {
        source_file: report::AGENT_TODOS.into(),
        phases: Vec::new(),
        current_task: open.get(current).copied().map(reference),
        next_tasks: open
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != current)
            .map(|(_, t)| reference(*t))
            .take(5)
            .collect(),
    }
}

/// A task list's item, quoted: its words are the repository's, not ccmem's ("Complete
/// IMPORTANT NOTE FROM THE USER: …" would speak in ccmem's voice).
fn task_label(t: &tasks::Task) -> String {
    let text = if t.id.is_empty() { t.title.clone() } else { format!("{}: {}", t.id, t.title) };
    format!("the task list's item {}", crate::text::quoted(&text, 160))
}

/// A task list's phase, quoted: its name is the repository's text.
fn phase_label(p: &str) -> String {
    crate::text::quoted(p, 60)
}

/// Every text on one line and within its limits, so the report passes seed 000's rules.
fn tidy(m: &mut SessionMemory) {
    for b in &mut m.blockers {
        b.title = blockers::title(&b.title);
        b.description = line(&b.description, 500);
        b.required_action = line(&b.required_action, 300);
    }
    for n in &mut m.next_steps {
        n.action = line(&n.action, 300);
        n.reference = n.reference.as_deref().map(|r| line(r, 300)).filter(|r| !r.is_empty());
    }
    for f in &mut m.files_needing_attention {
        f.reason = line(&f.reason, 300);
    }
    // The tables' cells from outside (a task list's titles and phases, tests' names and
    // messages, build errors, servers' commands) are written quoted; what could close the
    // harness's tags around an agent's reading (`</system>`) is defused here, as in quotes.
    let outside = |s: &str, max: usize| ccmem_proto::quote::defuse_tags(&line(s, max)).into_owned();
    let t = &mut m.task_status;
    for r in t.current_task.iter_mut().chain(t.next_tasks.iter_mut()) {
        r.title = outside(&r.title, 300);
        r.phase = outside(&r.phase, 200);
    }
    for p in &mut t.phases {
        p.name = outside(&p.name, 200);
    }
    for suite in [&mut m.test_results.unit, &mut m.test_results.e2e] {
        suite.command = line(&suite.command, 500);
        for f in &mut suite.failures {
            f.file = line(&f.file, 300);
            f.test_name = outside(&f.test_name, 300);
            f.message = f.message.as_deref().map(|x| outside(x, 200)).filter(|x| !x.is_empty());
        }
    }
    for v in &mut m.environment.servers {
        v.command = outside(&v.command, 300);
        v.process = outside(&v.process, 100);
    }
    let b = &mut m.environment.build;
    b.command = line(&b.command, 500);
    for e in &mut b.errors {
        *e = outside(e, 200);
    }
    for x in &mut m.environment.dependencies.managers {
        x.detail = line(&x.detail, 300);
    }
}

/// Phases listed at most, before any is taken out for size: a task list can have thousands
/// (a heading per task), and a table of them is most of the report's 50 KB.
const PHASES_SHOWN: usize = 30;

/// Keeps at most `keep` phases of `t`, in file order: a few before the current one (the
/// current task's, else the first unfinished), it, and those after; the number left out.
fn cap_phases(t: &mut TaskStatus, keep: usize) -> usize {
    let n = t.phases.len();
    if n <= keep {
        return 0;
    }
    let current = t
        .current_task
        .as_ref()
        .and_then(|c| t.phases.iter().position(|p| p.name == c.phase))
        .or_else(|| t.phases.iter().position(|p| p.completed < p.total))
        .unwrap_or(n - 1);
    let from = current.saturating_sub(keep / 4).min(n - keep);
    t.phases = t.phases.drain(from..from + keep).collect();
    n - keep
}

/// What [`fit`] took out of each list.
#[derive(Default)]
struct LeftOut {
    phases: (usize, usize),
    next_tasks: usize,
    blockers: usize,
    files: usize,
    servers: usize,
    build_errors: usize,
    managers: usize,
    work: usize,
}

impl LeftOut {
    /// The header's `**Left Out**` items (failing tests are counted in their suites).
    fn items(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.phases.0 > 0 {
            out.push(format!(
                "{} of {} phases (the completion status counts their tasks)",
                self.phases.0, self.phases.1
            ));
        }
        for (n, what) in [
            (self.next_tasks, "next tasks"),
            (self.blockers, "blockers, the least urgent"),
            (self.files, "files needing attention, the least urgent"),
            (self.servers, "dev servers"),
            (self.build_errors, "build errors"),
            (self.managers, "package managers"),
            (self.work, "lines of Where You Left Off, its last"),
        ] {
            if n > 0 {
                out.push(format!("{n} {what}"));
            }
        }
        out
    }
}

/// Shrinks the lists until the markdown is under 50 KB, so that the report always passes
/// its own `report --check`: the phases to [`PHASES_SHOWN`] first, then one item at a time,
/// what is missed least first (low-priority files and blockers, phases far from the current
/// one, failing tests past five, servers), down to nothing if need be. The header says what
/// was left out.
fn fit(m: &mut SessionMemory) {
    let total_phases = m.task_status.phases.len();
    let mut gone =
        LeftOut { phases: (cap_phases(&mut m.task_status, PHASES_SHOWN), total_phases), ..LeftOut::default() };
    loop {
        m.metadata.left_out = gone.items();
        if report::serialize(m).len() <= report::MAX_BYTES || !shrink(m, &mut gone) {
            break;
        }
    }
}

/// Takes one item out of the report, the one missed least; false when nothing is left to take.
fn shrink(m: &mut SessionMemory, gone: &mut LeftOut) -> bool {
    let t = &mut m.task_status;
    let env = &mut m.environment;
    let (unit, e2e) = (&mut m.test_results.unit, &mut m.test_results.e2e);
    let failures = |suite: &mut TestSuite, above: usize| {
        (suite.failures.len() > above).then(|| {
            suite.failures.pop();
            suite.more_failures += 1;
        })
    };
    for floor in [10, 3, 0] {
        let taken = if m.files_needing_attention.len() > floor {
            m.files_needing_attention.pop().map(|_| gone.files += 1)
        } else if m.blockers.len() > floor {
            m.blockers.pop().map(|_| gone.blockers += 1)
        } else if t.phases.len() > floor.max(1) {
            t.phases.pop().map(|_| gone.phases.0 += 1)
        } else if let Some(()) = failures(unit, floor / 2) {
            Some(())
        } else if let Some(()) = failures(e2e, floor / 2) {
            Some(())
        } else if env.servers.len() > floor / 2 {
            env.servers.pop().map(|_| gone.servers += 1)
        } else if env.build.errors.len() > floor / 2 {
            env.build.errors.pop().map(|_| gone.build_errors += 1)
        } else if env.dependencies.managers.len() > floor {
            env.dependencies.managers.pop().map(|_| gone.managers += 1)
        } else if t.next_tasks.len() > floor / 2 {
            t.next_tasks.pop().map(|_| gone.next_tasks += 1)
        } else if m.work.len() > floor * 4 {
            m.work.pop().map(|_| gone.work += 1)
        } else {
            None
        };
        if taken.is_some() {
            return true;
        }
    }
    false
}

/// Writes the report into the project (atomically); returns its size in bytes.
pub fn write(root: &Path, m: &SessionMemory) -> std::io::Result<u64> {
    // A repository another user owns is left alone: not even its `.claude/` is made.
    if let Some(why) = ccmem_proto::files::owned_by_another(root) {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    }
    let text = report::serialize(m);
    let path = root.join(REPORT_FILE);
    // A temp file a kill left mid-write (it would show in `git status`, and in the next
    // context as an untracked file).
    atomic::remove_leftovers_but(root, &path, &|p| crate::observe::git::tracked(root, p) == Some(true));
    atomic::write_in_private(root, &path, text.as_bytes(), false)?;
    Ok(text.len() as u64)
}

#[cfg(test)]
mod tests;
