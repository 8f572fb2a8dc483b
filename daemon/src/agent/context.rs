//! The resume context: what a fresh agent needs to carry on, most important first, within a
//! character budget. Printed by `ccmemctl context` and given to the agent at SessionStart.
//!
//! Built from what the session already holds (redacted when it came in); never from raw
//! tool inputs or outputs.

use ccmem_proto::model::environment::{BuildState, DependencyState, ServerStatus, SuiteStatus};
use ccmem_proto::model::facts::{Memory, FACTS_SHOWN, GOALS_SHOWN};
use ccmem_proto::model::session::{truncate_chars, Conversation, Done, Failure, Session, Todo, TodoStatus};
use chrono::{DateTime, Utc};

/// The default budget, in characters.
pub const DEFAULT_BUDGET: usize = 6000;
/// Never more than this: the agent cuts hook output beyond 10,000 characters.
pub const MAX_BUDGET: usize = 10_000;
/// Longest line.
const LINE: usize = 300;

/// What the context is built from.
pub struct Input<'a> {
    /// The project's session.
    pub session: &'a Session,
    /// The conversation whose work is being carried on: the one starting, when it has done
    /// work (a resume, a compaction), else the last one that did.
    pub conversation: Option<&'a Conversation>,
    /// The conversation to name for `--resume`.
    pub resume_id: Option<&'a str>,
    /// The project's facts and goals.
    pub memory: &'a Memory,
    /// User-wide facts.
    pub global_facts: &'a [String],
    /// The conversation was just compacted.
    pub after_compact: bool,
    /// Knowledge memories relevant to the work, one line each, best first.
    pub memories: &'a [String],
    /// Now, for ages ("2 h ago").
    pub now: DateTime<Utc>,
}

/// The share of the budget kept for goals, facts and memories, so that a long session
/// cannot crowd out what was learnt before it.
const KNOWLEDGE_SHARE: f32 = 0.3;

/// The work a context carries: this session's, or what the previous session left.
struct Work<'a> {
    conversation: Option<&'a Conversation>,
    todos: &'a [Todo],
    failures: &'a [Failure],
    done: &'a [Done],
    /// `- path (3 edits, created)`, most recent first.
    files: Vec<String>,
    files_total: usize,
}

/// Characters each part may take at most, so that one long part cannot starve the others.
mod caps {
    pub const TODOS: usize = 1800;
    pub const FAILURES: usize = 1000;
    pub const LAST_WORDS: usize = 1300;
    pub const FILES: usize = 1600;
    pub const DONE: usize = 450;
    pub const FINDINGS: usize = 1500;
    pub const SUMMARY: usize = 600;
    pub const PROMPTS: usize = 900;
    pub const OTHERS: usize = 900;
}

/// The context, at most `budget` characters (capped at [`MAX_BUDGET`]).
pub fn build(i: &Input, budget: usize) -> String {
    let budget = budget.clamp(200, MAX_BUDGET);
    let s = i.session;
    let now = i.now;
    let own = Work {
        conversation: i.conversation,
        todos: i.conversation.filter(|c| !c.todos.is_empty()).map(|c| c.todos.as_slice()).unwrap_or(&s.todos),
        failures: &s.failures,
        done: &s.done,
        files: file_lines(s),
        files_total: s.files_modified.values().filter(|r| !r.deleted).count(),
    };
    // A new session carries what the previous one left until it has a plan and a
    // conversation of its own: a test run or an edit after a reset does not make the open
    // todos, the task and the last words irrelevant. Each part is the new session's once it
    // has one.
    let own_plan = own.todos.is_empty() && own.conversation.is_none_or(|c| !c.did_work());
    let previous = s.previous.as_deref().filter(|_| own_plan);
    let work = match previous {
        Some(p) => Work {
            conversation: own.conversation.filter(|c| c.did_work()).or(p.conversation.as_ref()),
            todos: &p.todos,
            failures: if own.failures.is_empty() { &p.failures } else { own.failures },
            done: if own.done.is_empty() { &p.done } else { own.done },
            files: if own.files_total > 0 {
                own.files
            } else {
                p.edited_files.iter().take(25).map(|f| format!("- {f}")).collect()
            },
            files_total: if own.files_total > 0 { own.files_total } else { p.edited_files.len() },
        },
        None => own,
    };
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();

    let mut head = vec![if s.session_id.is_empty() {
        format!("Project {} ({}), no live session.", s.project_name, s.project_root.display())
    } else {
        format!(
            "Project {} ({}), session {}, {} min.",
            s.project_name,
            s.project_root.display(),
            s.session_id,
            s.statistics.session_duration_minutes
        )
    }];
    if let Some(p) = previous {
        head.push(format!(
            "Previous session {} ended {} ({}, {}); what it left is carried below until this one has its own plan.",
            p.session_id,
            p.ended_at,
            ago(&p.ended_at, now),
            p.reason
        ));
    }
    if let Some(id) = i.resume_id.or(previous.and_then(|p| p.conversation.as_ref()).map(|c| c.id.as_str())) {
        head.push(format!("Previous conversation, to resume it: `claude --resume {id}`."));
    }
    if let Some(c) = work.conversation {
        if !c.first_prompt.is_empty() {
            head.push(format!("Task (first prompt): {}", one_line(&c.first_prompt)));
        }
        if let Some(last) = c.prompts.last().filter(|p| **p != c.first_prompt) {
            head.push(format!("Latest prompt: {}", one_line(last)));
        }
    } else if let Some(c) = s.commands_executed.last() {
        head.push(format!("Latest prompt: {}", one_line(&c.command)));
    }
    head.push(state_line(&work, s));
    // Git's state is a section of its own, after the work: a tight budget keeps the todos
    // and failures rather than it.
    let git_line = (s.git.branch != "unknown" && previous.is_none()).then(|| {
        format!(
            "Branch {}, {} staged, {} unstaged, {} untracked; last commit {}.",
            s.git.branch,
            s.git.staged_files,
            s.git.unstaged_files,
            s.git.untracked_files,
            if s.git.last_commit.is_empty() { "none" } else { &s.git.last_commit }
        )
    });
    if i.after_compact {
        head.push(
            "The conversation was just compacted: the summary above may have lost exact paths, \
             todo states and error details. The lists below are exact."
                .into(),
        );
    }
    head.retain(|l| !l.is_empty());
    sections.push(("# Where you left off (ccmem)".into(), head));

    let done = work.todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
    if !work.todos.is_empty() {
        sections.push((
            format!("## Todos ({done} of {} done; [x] done, [~] in progress, [ ] open)", work.todos.len()),
            // A tight budget folds the done items first, never the open ones.
            todo_lines(work.todos, caps::TODOS.min(budget / 3)),
        ));
    }
    if previous.is_none() {
        let others = cap(other_conversations(s, work.conversation, now), caps::OTHERS);
        push(&mut sections, "## Other conversations this session", others);
    }
    let tests = if previous.is_none() { failing_tests(s) } else { Vec::new() };
    let failing = failure_lines(work.failures, now, tests);
    push(&mut sections, "## Unresolved failures", cap(failing, caps::FAILURES));
    if previous.is_none() {
        build_failing(&mut sections, s);
    }
    if let Some(c) = work.conversation.filter(|c| !c.digest.last_words.is_empty()) {
        let when = if c.digest.last_words_at.is_empty() {
            String::new()
        } else {
            format!(", {}", ago(&c.digest.last_words_at, now))
        };
        let lines = c.digest.last_words.lines().map(|l| format!("> {l}")).collect();
        sections.push((format!("## The agent's last words{when}"), cap_tail(lines, caps::LAST_WORDS)));
    }
    if let Some(c) = work.conversation {
        // The user's requests between the first and the latest, as the compaction summary's
        // "all user messages" keeps them: they carry corrections and decisions.
        let n = c.prompts.len();
        let between: Vec<String> = c
            .prompts
            .iter()
            .take(n.saturating_sub(1))
            .filter(|p| **p != c.first_prompt)
            .map(|p| format!("- {}", truncate_chars(&one_line(p), 200)))
            .collect();
        push(&mut sections, "## Earlier prompts (oldest first)", cap_tail(between, caps::PROMPTS));
    }
    push(&mut sections, "## Files edited", {
        let mut l = cap(work.files.clone(), caps::FILES);
        let shown = l.iter().filter(|x| !x.starts_with("- …")).count();
        if work.files_total > shown && !l.iter().any(|x| x.starts_with("- …")) {
            l.push(format!("- … and {} more files", work.files_total - shown));
        }
        l
    });
    push(
        &mut sections,
        "## Done (commits, pull requests, closed issues)",
        cap(work.done.iter().rev().map(|d| format!("- {}: {}", d.kind, d.text)).collect(), caps::DONE),
    );
    if let Some(c) = work.conversation {
        let last = crate::agent::transcript::normal(&c.digest.last_words);
        let findings: Vec<String> = c
            .digest
            .findings
            .iter()
            .rev()
            .filter(|f| !last.contains(&crate::agent::transcript::normal(f)))
            .map(|f| format!("- {f}"))
            .collect();
        push(&mut sections, "## Decisions and findings (newest first)", cap(findings, caps::FINDINGS));
        let d = &c.digest;
        let mut summary = Vec::new();
        if !d.next_step.is_empty() {
            summary.push(format!("Next step: {}", one_line(&d.next_step)));
        }
        summary.extend(
            d.pending
                .lines()
                .map(|l| l.trim().trim_start_matches(['-', '*', ' ']).replace("**", ""))
                .filter(|l| !l.is_empty())
                .map(|l| format!("Pending: {l}")),
        );
        let title = match d.messages_since_summary {
            0 => format!("## At the last compaction ({})", ago(&d.summary_at, now)),
            n => format!(
                "## At the last compaction ({}; {n} agent message{} since, so it may be out of date)",
                ago(&d.summary_at, now),
                if n == 1 { "" } else { "s" }
            ),
        };
        push(&mut sections, &title, cap(summary, caps::SUMMARY));
    }
    if let Some(g) = git_line {
        sections.push(("## Git".into(), vec![g]));
    }
    if previous.is_none() {
        environment_first(&mut sections, s, now);
    }

    let t = &s.task_status;
    if !t.source_file.is_empty() {
        let (done, total) = t.totals();
        let mut l = vec![format!("{}: {done} of {total} tasks done.", t.source_file)];
        if let Some(c) = &t.current_task {
            l.push(format!("Current: {} {} ({})", c.id, c.title, c.phase).replace("  ", " "));
        }
        l.extend(t.next_tasks.iter().map(|n| format!("- next: {} {}", n.id, n.title).replace("  ", " ")));
        sections.push(("## Task list".into(), l));
    }
    let deleted: Vec<String> =
        s.files_modified.iter().filter(|(_, r)| r.deleted).take(10).map(|(p, _)| format!("- {p}")).collect();
    push(&mut sections, "## Files deleted this session", deleted);

    push(&mut sections, "## Blockers", s.context_snapshot.blocking_issues.iter().map(|b| format!("- {b}")).collect());
    let next: Vec<String> = s
        .context_snapshot
        .next_steps
        .iter()
        .filter(|n| !work.todos.iter().any(|t| &t.content == *n))
        .map(|n| format!("- {n}"))
        .collect();
    push(&mut sections, "## Next steps", next);

    let goals: Vec<String> = i
        .memory
        .goals
        .iter()
        .rev()
        .take(GOALS_SHOWN)
        .map(|g| match &g.deadline {
            Some(d) => format!("- {} (by {d})", g.text),
            None => format!("- {}", g.text),
        })
        .collect();
    let mut knowledge = Vec::new();
    push(&mut knowledge, "## Active goals", goals);
    push(&mut knowledge, "## Facts", relevant_facts(i).into_iter().map(|f| format!("- {f}")).collect());
    push(&mut knowledge, "## Memories (`ccmemctl memory show SLUG`)", i.memories.to_vec());
    if !s.context_notes.is_empty() {
        sections.push(("## Notes".into(), vec![s.context_notes.clone()]));
    }
    environment_rest(&mut sections, s);
    // The head first, whatever the budget; then the knowledge share of what is left.
    let rest = sections.split_off(1);
    let head = pack(sections, budget);
    let left = budget.saturating_sub(head.chars().count() + 2);
    let knowledge = pack(knowledge, (left as f32 * KNOWLEDGE_SHARE) as usize);
    let left = left.saturating_sub(if knowledge.is_empty() { 0 } else { knowledge.chars().count() + 2 });
    let rest = pack(rest, left);
    let parts: Vec<String> = [head, rest, knowledge].into_iter().filter(|p| !p.is_empty()).collect();
    truncate_chars(&parts.join("\n\n"), budget)
}

/// The work part of the context, for the report's "Where You Left Off": the task, todos,
/// failures, last words, finished work, decisions; without what the report has sections
/// of its own for (files, environment, task list, blockers).
pub fn report_work(s: &Session, now: DateTime<Utc>) -> Vec<String> {
    let conversation =
        s.conversations.iter().filter(|c| c.did_work()).max_by(|a, b| a.last_activity.cmp(&b.last_activity));
    let memory = Memory::default();
    let input = Input {
        session: s,
        conversation,
        resume_id: conversation.map(|c| c.id.as_str()),
        memory: &memory,
        global_facts: &[],
        after_compact: false,
        memories: &[],
        now,
    };
    let own = [
        "## Files edited",
        "## Environment",
        "## Task list",
        "## Blockers",
        "## Next steps",
        "## Files deleted",
        "## Build failing",
    ];
    let mut out = Vec::new();
    let mut skip = false;
    for line in build(&input, MAX_BUDGET).lines() {
        if line.starts_with("# ") || line.starts_with("Project ") || line.trim().is_empty() {
            continue;
        }
        if let Some(title) = line.strip_prefix("## ") {
            skip = own.iter().any(|o| line.starts_with(o));
            if !skip {
                out.push(format!("### {title}"));
            }
            continue;
        }
        if !skip {
            out.push(line.trim_end().chars().map(|c| if c.is_control() { ' ' } else { c }).collect());
        }
    }
    out
}

/// Where the work stands, in one line: finished, or what is under way.
fn state_line(w: &Work, s: &Session) -> String {
    let open = w.todos.iter().filter(|t| t.status != TodoStatus::Completed).count();
    let commit = w
        .done
        .iter()
        .rev()
        .find(|d| d.kind == "commit")
        .map(|d| d.text.clone())
        .or_else(|| (!s.git.last_commit.is_empty()).then(|| s.git.last_commit.clone()));
    let last_commit = commit.map(|c| format!("; last commit {c}")).unwrap_or_default();
    if let Some(t) = w.todos.iter().find(|t| t.status == TodoStatus::InProgress) {
        return format!("Under way: {}.", t.active_form.trim_end_matches('.'));
    }
    if !w.todos.is_empty() && open == 0 && w.failures.is_empty() {
        return format!(
            "Finished: all {} done{last_commit}.",
            ccmem_proto::count(w.todos.len() as u64, "todo", "todos")
        );
    }
    if !w.todos.is_empty() && open == 0 {
        let todos = ccmem_proto::count(w.todos.len() as u64, "todo", "todos");
        return format!("All {todos} done, but failures remain (below){last_commit}.");
    }
    String::new()
}

/// One line per todo with its status, the open ones first (in their order, so a tight budget
/// cuts done items, not open ones), then the done ones; these are folded into one line when
/// the list is too long, never the open ones.
fn todo_lines(todos: &[Todo], max: usize) -> Vec<String> {
    let line = |t: &Todo| {
        let mark = match t.status {
            TodoStatus::Completed => "[x]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Pending => "[ ]",
        };
        let id = t.id.as_deref().map(|i| format!("#{i} ")).unwrap_or_default();
        format!("- {mark} {id}{}", one_line(&t.content))
    };
    let (done, open): (Vec<&Todo>, Vec<&Todo>) = todos.iter().partition(|t| t.status == TodoStatus::Completed);
    let mut out: Vec<String> = open.iter().map(|t| line(t)).collect();
    let all: Vec<String> = out.iter().cloned().chain(done.iter().map(|t| line(t))).collect();
    if size(&all) <= max {
        return all;
    }
    if !done.is_empty() {
        let names: Vec<String> = done.iter().map(|t| one_line(&t.content)).collect();
        out.push(truncate_chars(&format!("- [x] {} done: {}", done.len(), names.join("; ")), LINE));
    }
    cap(out, max)
}

/// One line per unresolved failure, newest first; the failing tests' details under the
/// tests entry (or alone, when the run was recorded without one).
fn failure_lines(failures: &[Failure], now: DateTime<Utc>, tests: Vec<(String, String)>) -> Vec<String> {
    let mut out = Vec::new();
    let mut tests = Some(tests);
    for f in failures.iter().rev() {
        let times = if f.count > 1 { format!(" {}×", f.count) } else { String::new() };
        let blocker = if f.count >= 3 { ", a blocker" } else { "" };
        let error = if f.error.is_empty() { String::new() } else { format!(": {}", f.error) };
        out.push(format!("- {}: `{}` failed{times} ({}{blocker}){error}", f.kind, f.command, ago(&f.last_at, now)));
        if f.kind == "tests" {
            // Not a test the error line already names.
            let under = tests.take().unwrap_or_default();
            out.extend(
                under
                    .into_iter()
                    .filter(|(name, _)| name.is_empty() || !f.error.contains(name.as_str()))
                    .map(|(_, l)| l),
            );
        }
    }
    // Results recorded without a failing command (`test-report`, an event): a line of their own.
    if let Some(t) = tests.filter(|t| !t.is_empty()) {
        out.push("- tests: the last recorded run failed".into());
        out.extend(t.into_iter().map(|(_, l)| l));
    }
    out
}

/// The other conversations of the session with something left: their latest prompt, open
/// todos and last words, most recent first (at most three).
fn other_conversations(s: &Session, work: Option<&Conversation>, now: DateTime<Utc>) -> Vec<String> {
    let mut others: Vec<&Conversation> = s
        .conversations
        .iter()
        .filter(|c| work.is_none_or(|w| w.id != c.id))
        .filter(|c| c.todos.iter().any(|t| t.status != TodoStatus::Completed) || !c.digest.last_words.is_empty())
        .collect();
    others.sort_by(|a, b| b.last_activity.cmp(&a.last_activity));
    let mut out = Vec::new();
    for c in others.into_iter().take(3) {
        let ended = if c.ended { ", ended" } else { "" };
        let asked = c.prompts.last().map(|p| format!(": {}", truncate_chars(&one_line(p), 120))).unwrap_or_default();
        out.push(format!("- conversation {} ({}{ended}){asked}", c.id, ago(&c.last_activity, now)));
        for t in c.todos.iter().filter(|t| t.status != TodoStatus::Completed).take(5) {
            let mark = if t.status == TodoStatus::InProgress { "[~]" } else { "[ ]" };
            out.push(format!("  - {mark} {}", one_line(&t.content)));
        }
        let words: Vec<&str> = c.digest.last_words.lines().rev().take(2).collect();
        for l in words.into_iter().rev() {
            out.push(format!("  > {}", truncate_chars(l.trim(), 200)));
        }
    }
    out
}

/// The failing tests of the last runs, one per line.
fn failing_tests(s: &Session) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for suite in [&s.test_results.unit, &s.test_results.e2e] {
        if suite.status != SuiteStatus::Failed {
            continue;
        }
        for f in suite.failures.iter().take(5) {
            let at = match (f.file.is_empty(), f.line) {
                (true, _) => String::new(),
                (false, Some(l)) => format!(" ({}:{l})", f.file),
                (false, None) => format!(" ({})", f.file),
            };
            let msg = f.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
            let line = format!("  - test {}{at}{msg}", f.test_name);
            if !out.iter().any(|(_, l)| *l == line) {
                out.push((f.test_name.clone(), line));
            }
        }
        let more = suite.failures.len().saturating_sub(5) as u64 + suite.more_failures;
        if more > 0 {
            out.push((String::new(), format!("  - … and {more} more failing tests")));
        }
    }
    out
}

/// `- src/a.rs (3 edits: Edit: 1 → 2 lines)`, most recent first.
fn file_lines(s: &Session) -> Vec<String> {
    let mut files: Vec<_> = s.files_modified.iter().filter(|(_, r)| !r.deleted).collect();
    files.sort_by(|a, b| {
        b.1.last_modified.cmp(&a.1.last_modified).then(b.1.modification_count.cmp(&a.1.modification_count))
    });
    files
        .iter()
        .map(|(p, r)| {
            let n = r.modification_count;
            let created = if r.created { ", created" } else { "" };
            format!("- {p} ({n} edit{}{created})", if n == 1 { "" } else { "s" })
        })
        .collect()
}

/// The first lines that fit in `max` characters, and a note of how many were left out.
fn cap(lines: Vec<String>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    let total = lines.len();
    for (n, l) in lines.into_iter().enumerate() {
        let l = truncate_chars(&l, LINE);
        let len = l.chars().count() + 1;
        if used + len > max && n > 0 {
            out.push(format!("- … and {} more", total - n));
            break;
        }
        used += len;
        out.push(l);
    }
    out
}

/// The last lines that fit in `max` characters (the end of a message matters most).
fn cap_tail(lines: Vec<String>, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for l in lines.into_iter().rev() {
        let l = truncate_chars(&l, LINE);
        let len = l.chars().count() + 1;
        if used + len > max && !out.is_empty() {
            break;
        }
        used += len;
        out.push(l);
    }
    out.reverse();
    out
}

fn size(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count() + 1).sum()
}

fn one_line(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&joined, LINE - 40)
}

/// "just now", "12 min ago", "3 h ago", "2 days ago"; "" for an unreadable time.
pub fn ago(iso: &str, now: DateTime<Utc>) -> String {
    let Some(t) = crate::clock::parse_iso(iso) else { return String::new() };
    let secs = (now - t).num_seconds();
    match secs {
        s if s < 60 => "just now".into(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 48 * 3600 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}

/// A failing build with its first errors.
fn build_failing(sections: &mut Vec<(String, Vec<String>)>, s: &Session) {
    let b = &s.environment.build;
    if b.status == BuildState::Failed {
        let mut l = vec![format!(
            "{} failed{}.",
            ccmem_proto::command_or(&b.command, "The build"),
            b.last_build.as_deref().map(|t| format!(" at {t}")).unwrap_or_default()
        )];
        l.extend(b.errors.iter().take(5).map(|e| format!("- {e}")));
        sections.push(("## Build failing".into(), l));
    }
}

/// Running dev servers, the last test runs with their age, uncommitted changes.
fn environment_first(sections: &mut Vec<(String, Vec<String>)>, s: &Session, now: DateTime<Utc>) {
    let mut l: Vec<String> = s
        .environment
        .servers
        .iter()
        .filter(|x| x.status == ServerStatus::Running)
        .map(|x| {
            let pid = x.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
            let cmd = if x.command.is_empty() { String::new() } else { format!(": {}", x.command) };
            format!("- dev server {} ({}{pid}){cmd}", x.url, x.process)
        })
        .collect();
    for (kind, suite) in [("Unit tests", &s.test_results.unit), ("E2E tests", &s.test_results.e2e)] {
        if suite.status == SuiteStatus::NotRun {
            continue;
        }
        let when = suite.ran_at.as_deref().map(|t| format!(", {}", ago(t, now))).unwrap_or_default();
        if suite.total == 0 && suite.failures.is_empty() {
            // No counts in its output: what its exit status said.
            let how = if suite.status == SuiteStatus::Passed { "passed" } else { "failed" };
            let cmd = ccmem_proto::command_or(&suite.command, "the run");
            l.push(format!("- {kind}: {cmd} {how}{when} (no test counts in its output)"));
            continue;
        }
        let status = if suite.status == SuiteStatus::Passed { "passed" } else { "failed" };
        let since = suite
            .ran_at
            .as_deref()
            .and_then(ccmem_proto::model::session::Timestamp::parse)
            .map(|t| s.files_modified.values().filter(|r| r.last_modified > t).count())
            .map(|n| match n {
                0 => ", no edits since".to_string(),
                1 => ", 1 file edited since".to_string(),
                n => format!(", {n} files edited since"),
            })
            .unwrap_or_default();
        let cmd = ccmem_proto::command_after(", ", &suite.command);
        // "1 of 3 failed", "7 of 7 passed": the count of what the status says.
        let n = if suite.status == SuiteStatus::Passed { suite.passed } else { suite.failed.max(1) };
        l.push(format!("- {kind} {status} ({}: {n} of {} {status}){when}{since}{cmd}", suite.framework, suite.total));
    }
    if s.git.has_uncommitted_changes {
        l.push(format!(
            "- uncommitted: {} staged, {} unstaged, {} untracked",
            s.git.staged_files, s.git.unstaged_files, s.git.untracked_files
        ));
    }
    push(sections, "## Environment", l);
}

/// Dependencies to install and servers that stopped: useful, not urgent.
fn environment_rest(sections: &mut Vec<(String, Vec<String>)>, s: &Session) {
    let mut l: Vec<String> = s
        .environment
        .dependencies
        .managers
        .iter()
        .filter(|m| m.status == DependencyState::Outdated)
        .map(|m| format!("- {}: {}", m.package_manager, m.detail))
        .collect();
    l.extend(s.environment.servers.iter().filter(|x| x.status == ServerStatus::Stopped).map(|x| {
        format!(
            "- {} ({}) stopped{}",
            x.url,
            x.process,
            x.stopped_at.as_deref().map(|t| format!(" at {t}")).unwrap_or_default()
        )
    }));
    push(sections, "## Environment (other)", l);
}

fn push(sections: &mut Vec<(String, Vec<String>)>, title: &str, lines: Vec<String>) {
    if !lines.is_empty() {
        sections.push((title.into(), lines));
    }
}

/// Facts most related to the current work first (words shared with the active task and the
/// recent prompts), newest first among equals; at most seed 002's soft cap.
fn relevant_facts(i: &Input) -> Vec<String> {
    let topic: Vec<String> = std::iter::once(i.session.context_snapshot.active_task.as_str())
        .chain(i.session.commands_executed.iter().rev().take(3).map(|c| c.command.as_str()))
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.len() > 3)
        .map(str::to_lowercase)
        .collect();
    let mut facts: Vec<(usize, usize, &String)> = i
        .memory
        .facts
        .iter()
        .chain(i.global_facts.iter())
        .enumerate()
        .map(|(age, f)| {
            let lower = f.to_lowercase();
            (topic.iter().filter(|w| lower.contains(w.as_str())).count(), age, f)
        })
        .collect();
    facts.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut seen = std::collections::HashSet::new();
    facts.into_iter().filter(|(_, _, f)| seen.insert(f.as_str())).take(FACTS_SHOWN).map(|(_, _, f)| f.clone()).collect()
}

/// Sections kept whole before any other gets a second line: what is open and what fails.
const ESSENTIAL: &[&str] = &["## Todos", "## Unresolved failures", "## Build failing"];

/// Joins sections in order within the budget. Breadth first: every section that fits gets
/// its title and first line before any section gets a second line, so that a tight budget
/// keeps one line of each thing (the failing tests, the todos) rather than all of the first.
/// Lines that do not fit are dropped, with "- … and N more" in a list; a section that cannot
/// show its title and one line is left out. The result never exceeds `budget` characters.
fn pack(sections: Vec<(String, Vec<String>)>, budget: usize) -> String {
    let sections: Vec<(String, Vec<String>)> = sections
        .into_iter()
        .map(|(t, lines)| (t, lines.into_iter().map(|l| truncate_chars(&l, LINE)).collect()))
        .collect();
    let chars = |l: &str| l.chars().count() + 1;
    // Lists say what they leave out ("- … and N more"); other blocks are just cut.
    let lists: Vec<bool> =
        sections.iter().map(|(_, l)| l.iter().all(|l| l.starts_with("- ") || l.starts_with("> "))).collect();
    // How many lines of each section are shown; 0: the section is left out.
    let mut shown = vec![0usize; sections.len()];
    let mut used = 0;
    // Pass 1: a line of every section; all of the essential ones (what is open and what is
    // failing). Pass 2: the other sections' further lines, in order.
    let more = |i: usize, lines: &[String], shown: &mut [usize], used: &mut usize| {
        while shown[i] < lines.len() {
            let left = lines.len() - shown[i] - 1;
            // Room for the note of what would still be left out after this line.
            let note = if left > 0 && lists[i] { chars(&format!("- … and {left} more")) } else { 0 };
            let len = chars(&lines[shown[i]]);
            if *used + len + note > budget {
                break;
            }
            *used += len;
            shown[i] += 1;
        }
    };
    for (i, (title, lines)) in sections.iter().enumerate() {
        // Title, its first line, and the blank line after the block.
        let need = chars(title) + lines.first().map_or(0, |l| chars(l)) + 1;
        if !lines.is_empty() && used + need <= budget {
            shown[i] = 1;
            used += need;
            if ESSENTIAL.iter().any(|e| title.starts_with(e)) {
                more(i, lines, &mut shown, &mut used);
            }
        }
    }
    for (i, (_, lines)) in sections.iter().enumerate() {
        if shown[i] == 0 {
            continue;
        }
        more(i, lines, &mut shown, &mut used);
    }
    let mut out = String::new();
    for (i, (title, lines)) in sections.iter().enumerate() {
        if shown[i] == 0 {
            continue;
        }
        out.push_str(title);
        out.push('\n');
        for l in &lines[..shown[i]] {
            out.push_str(l);
            out.push('\n');
        }
        let left = lines.len() - shown[i];
        if left > 0 && lists[i] {
            let note = format!("- … and {left} more\n");
            // Reserved above for all but a section cut at its first line.
            if used + note.chars().count() <= budget {
                used += note.chars().count();
                out.push_str(&note);
            }
        }
        out.push('\n');
    }
    let trimmed = out.trim_end().to_string();
    truncate_chars(&trimmed, budget)
}

#[cfg(test)]
mod tests;
