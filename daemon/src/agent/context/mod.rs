//! The resume context: what a fresh agent needs to carry on, most important first, within a
//! character budget. Printed by `ccmemctl context` and given to the agent at SessionStart.
//!
//! Built from what the session already holds (redacted when it came in); never from raw
//! tool inputs or outputs.

use ccmem_proto::model::environment::{BuildState, DependencyState, ServerStatus, SuiteStatus};
use ccmem_proto::model::facts::{Facts, FACTS_SHOWN, GOALS_SHOWN};
use ccmem_proto::model::session::{truncate_chars, Conversation, Done, Failure, Session, Todo, TodoStatus};
use chrono::{DateTime, Utc};

mod pack;
mod repository;

/// Git's `abc1234 subject` (the repository's last commit) as its hash and subject; empty
/// ones when there is no commit.
pub fn commit_of(last: &str) -> (&str, &str) {
    repository::commit(last).unwrap_or(("", ""))
}
mod sections;

use pack::*;
use sections::*;

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
    pub memory: &'a Facts,
    /// User-wide facts.
    pub global_facts: &'a [String],
    /// The conversation was just compacted.
    pub after_compact: bool,
    /// Knowledge memories relevant to the work, one line each, best first: the user's own
    /// (global, enterprise).
    pub memories: &'a [String],
    /// Memories of the project's own scopes, files a clone brings: quoted lines, best first.
    pub repo_memories: &'a [String],
    /// Now, for ages ("2 h ago").
    pub now: DateTime<Utc>,
    /// The project has a past beyond what this context carries (earlier sessions, other
    /// conversations), and a journal to search it in.
    pub past: bool,
    /// Handoffs of the branch from other clones, newer than this clone's own work on it: the
    /// quoted lines of their block ([`crate::travel::shown::lines`]).
    pub handoffs: &'a [String],
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
/// Characters of a compaction summary's current work shown: its gist, the rest is in the
/// files and the last words.
const CURRENT_WORK: usize = 300;

mod caps {
    pub const TODOS: usize = 1800;
    pub const FAILURES: usize = 1000;
    pub const LESSONS: usize = 600;
    pub const LAST_WORDS: usize = 1300;
    pub const FILES: usize = 1600;
    pub const DONE: usize = 450;
    pub const FINDINGS: usize = 1500;
    pub const SUMMARY: usize = 600;
    pub const PROMPTS: usize = 900;
    pub const OTHERS: usize = 900;
    pub const REPOSITORY: usize = 1000;
    pub const HANDOFFS: usize = 1800;
}

/// The context, at most `budget` characters (capped at [`MAX_BUDGET`]).
///
/// Each part's cap keeps one long part from starving the others; what the caps cut while
/// the budget still has room is given back: wider caps are taken as long as the context
/// they give keeps every line the narrower one showed (nothing pushed out) and shows more.
pub fn build(i: &Input, budget: usize) -> String {
    let mut best = build_with(i, budget, 1.0);
    for scale in WIDER {
        let wider = build_with(i, budget, scale);
        if wider.chars().count() <= best.chars().count() || !keeps_every_line(&best, &wider) {
            break;
        }
        best = wider;
    }
    best
}

/// The caps' widenings tried, in order.
const WIDER: [f32; 3] = [1.5, 2.25, 3.5];

/// Whether `wider` shows every line of `narrow` (but the notes of what was left out).
fn keeps_every_line(narrow: &str, wider: &str) -> bool {
    let lines: std::collections::HashSet<&str> = wider.lines().collect();
    narrow.lines().filter(|l| !l.contains("… and ")).all(|l| lines.contains(l))
}

fn build_with(i: &Input, budget: usize, scale: f32) -> String {
    let budget = budget.clamp(200, MAX_BUDGET);
    // A part's cap, widened.
    let wide = |n: usize| (n as f32 * scale) as usize;
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
                p.edited_files.iter().take(25).map(|f| format!("- {}", path(f))).collect()
            },
            files_total: if own.files_total > 0 { own.files_total } else { p.edited_files.len() },
        },
        None => own,
    };
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();

    // The project's name and directory are the repository's choice too (a manifest's name,
    // a clone's directory): code spans, not words of ccmem's own.
    let project = format!("{} ({})", name(&s.project_name), name(&s.project_root.to_string_lossy()));
    let mut head = vec![if s.session_id.is_empty() {
        format!("Project {project}, no live session.")
    } else {
        format!("Project {project}, session {}, {}.", s.session_id, span(s.statistics.session_duration_minutes))
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
        // Whichever agent held it: the next one may be another (a handoff).
        let agent = s
            .conversations
            .iter()
            .chain(previous.and_then(|p| p.conversation.as_ref()))
            .find(|c| c.id == id)
            .map(|c| c.agent)
            .unwrap_or_default();
        match agent.resume_command(id) {
            Some(cmd) => head.push(format!("Previous conversation ({}), to resume it: `{cmd}`.", agent.display())),
            None => head.push(format!("Previous conversation ({}): {id}.", agent.display())),
        }
    }
    if let Some(c) = work.conversation {
        // A conversation opened to carry on ("continue", "pick up where Codex left off")
        // names no task: the task is the work's, from the conversation it carries on.
        let task_from = if resumes_only(&c.first_prompt) {
            s.conversations
                .iter()
                .chain(s.previous.as_deref().and_then(|p| p.conversation.as_ref()))
                .filter(|o| o.id != c.id && !o.first_prompt.is_empty() && !resumes_only(&o.first_prompt))
                .max_by(|a, b| a.recency().cmp(&b.recency()))
        } else {
            None
        };
        // Carrying on none, a conversation opened with "continue", "yes" or a bare slash
        // command has its task in the latest prompt that says what to do.
        let said = match task_from {
            None if names_no_task(&c.first_prompt) => c.prompts.iter().rev().find(|p| !names_no_task(p)),
            _ => None,
        };
        match (task_from, said) {
            (Some(o), _) => head.push(format!(
                "Task (first prompt, in the {} conversation carried on): {}",
                o.agent.display(),
                one_line(&o.first_prompt)
            )),
            (None, Some(p)) => head.push(format!("Task (the latest prompt that says what to do): {}", one_line(p))),
            (None, None) if !c.first_prompt.is_empty() => {
                head.push(format!("Task (first prompt): {}", one_line(&c.first_prompt)))
            }
            (None, None) => {}
        }
        let task = task_from.map(|o| &o.first_prompt).or(said).unwrap_or(&c.first_prompt);
        if let Some(last) = c.prompts.last().filter(|p| *p != task) {
            head.push(format!("Latest prompt: {}", one_line(last)));
        }
    } else if let Some(c) = s.commands_executed.last() {
        head.push(format!("Latest prompt: {}", one_line(&c.command)));
    }
    head.push(state_line(&work, s));
    if i.past {
        head.push(
            "Earlier sessions and conversations can be searched (decisions, failures and fixes, why a file changed): \
             the MCP tools `history_search`, `history_timeline`, `history_show`, or `ccmemctl search WORDS`."
                .into(),
        );
    }
    // Git's state is a section of its own, after the work: a tight budget keeps the todos
    // and failures rather than it.
    let git_line = (s.git.branch != "unknown" && previous.is_none()).then(|| {
        format!(
            "Branch {}, {} staged, {} unstaged, {} untracked; last commit {}.",
            // A clone's branch is named by the repository: a code span, like a file's name.
            name(&s.git.branch),
            s.git.staged_files,
            s.git.unstaged_files,
            s.git.untracked_files,
            // The subject is the repository's text: it is quoted in that block.
            repository::commit(&s.git.last_commit).map_or("none", |(hash, _)| hash)
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
    // Another clone's newer work on this branch comes first: it is where the work is now.
    push(&mut sections, crate::travel::shown::TITLE, cap(i.handoffs.to_vec(), wide(caps::HANDOFFS)));

    let done = work.todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
    if !work.todos.is_empty() {
        sections.push((
            format!("## Todos ({done} of {} done; [x] done, [~] in progress, [ ] open)", work.todos.len()),
            // A tight budget folds the done items first, never the open ones.
            todo_lines(work.todos, wide(caps::TODOS).min(budget / 3)),
        ));
    }
    if previous.is_none() {
        let others = cap(other_conversations(s, work.conversation, now), wide(caps::OTHERS));
        push(&mut sections, "## Other conversations this session", others);
    }
    let tests = if previous.is_none() { failing_tests(s) } else { Vec::new() };
    let failing = failure_lines(work.failures, now, tests);
    push(&mut sections, FAILURES_TITLE, cap(failing, wide(caps::FAILURES)));
    push(&mut sections, LESSONS_TITLE, cap(lesson_lines(s), wide(caps::LESSONS)));
    if previous.is_none() {
        build_failing(&mut sections, s);
    }
    if let Some(c) = work.conversation.filter(|c| !c.digest.last_words.is_empty()) {
        let when = if c.digest.last_words_at.is_empty() {
            String::new()
        } else {
            format!(", {}", ago(&c.digest.last_words_at, now))
        };
        // Every kind of line break starts a quoted line of its own (a U+2028 kept from before
        // breaks were made `\n` on the way in would otherwise end the `> ` quote).
        let lines = c
            .digest
            .last_words
            .lines()
            .flat_map(|l| l.split(ccmem_proto::printable::is_line_break))
            .map(|l| format!("> {l}"))
            .collect();
        sections.push((format!("## The agent's last words{when}"), cap_tail(lines, wide(caps::LAST_WORDS))));
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
        push(&mut sections, "## Earlier prompts (oldest first)", cap_tail(between, wide(caps::PROMPTS)));
    }
    push(&mut sections, "## Files edited", {
        let mut l = cap(work.files.clone(), wide(caps::FILES));
        let shown = l.iter().filter(|x| !x.starts_with("- …")).count();
        if work.files_total > shown && !l.iter().any(|x| x.starts_with("- …")) {
            l.push(format!("- … and {} more files", work.files_total - shown));
        }
        l
    });
    push(
        &mut sections,
        "## Done (commits, pull requests, issues, tracker tasks)",
        cap(work.done.iter().rev().map(|d| format!("- {}: {}", d.kind, d.text)).collect(), wide(caps::DONE)),
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
        // Then the bold-led points, newest first, which the cap cuts first.
        let known: Vec<String> = c.digest.findings.iter().map(|f| crate::agent::transcript::normal(f)).collect();
        let points = c.digest.points.iter().rev().filter(|p| {
            let n = crate::agent::transcript::normal(p);
            !last.contains(&n) && !known.iter().any(|k| k.contains(&n) || n.contains(k.as_str()))
        });
        let findings: Vec<String> = findings.into_iter().chain(points.map(|p| format!("- {p}"))).collect();
        let findings = pack::one_per_fact(findings);
        push(&mut sections, "## Decisions and findings (newest first)", cap(findings, wide(caps::FINDINGS)));
        let d = &c.digest;
        let mut summary = Vec::new();
        let current = truncate_chars(&one_line(&d.current_work), CURRENT_WORK);
        let superseded = crate::agent::transcript::plan_superseded(d);
        if superseded {
            // Its plan is history once newer words said what comes next (or it is old): what
            // the work was then still tells what was done, its next step and pending tasks
            // would send a fresh agent back to them.
            if !current.is_empty() {
                summary.push(format!("The work then: {current}"));
            }
        } else {
            if !d.next_step.is_empty() {
                summary.push(format!("Next step: {}", one_line(&d.next_step)));
            }
            if !current.is_empty() {
                summary.push(format!("Current work: {current}"));
            }
            summary.extend(
                d.pending
                    .lines()
                    .map(|l| l.trim().trim_start_matches(['-', '*', ' ']).replace("**", ""))
                    .filter(|l| !l.is_empty())
                    .map(|l| format!("Pending: {l}")),
            );
        }
        let n = d.messages_since_summary;
        let mut when = vec![ago(&d.summary_at, now)];
        match n {
            0 => {}
            _ if superseded => {
                when.push(format!("{n} agent message{} since; its plan is done or overtaken", plural(n)))
            }
            _ => when.push(format!("{n} agent message{} since, so it may be out of date", plural(n))),
        }
        when.retain(|w| !w.is_empty());
        let title = match when.is_empty() {
            true => "## At the last compaction".to_string(),
            false => format!("## At the last compaction ({})", when.join("; ")),
        };
        push(&mut sections, &title, cap(summary, wide(caps::SUMMARY)));
    }
    if let Some(g) = git_line {
        sections.push(("## Git".into(), vec![g]));
    }
    if previous.is_none() {
        environment_first(&mut sections, s, now);
    }

    push(&mut sections, repository::TITLE, cap(repository::lines(s, i.repo_memories), wide(caps::REPOSITORY)));
    let deleted: Vec<String> =
        s.files_modified.iter().filter(|(_, r)| r.deleted).take(10).map(|(p, _)| format!("- {}", path(p))).collect();
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
    // The last word on what reaches the agent: what was read from files written by hand
    // (memories, the project's own path) is redacted too, and redacting leaves nothing that
    // prints as an escape sequence or hides as an invisible character.
    let joined = parts.join("\n\n");
    // Every line break the context means is a `\n` by now: a separator still inside a line
    // (kept in a session from before they were taken out on the way in) stays inside it.
    let joined = joined.replace(['\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}'], " ");
    truncate_chars(&ccmem_proto::redact::redact(&joined), budget)
}

/// The work part of the context, for the report's "Where You Left Off": the task, todos,
/// failures, last words, finished work, decisions; without what the report has sections
/// of its own for (files, environment, task list, blockers).
pub fn report_work(s: &Session, now: DateTime<Utc>) -> Vec<String> {
    let conversation = s.conversations.iter().filter(|c| c.did_work()).max_by(|a, b| a.recency().cmp(&b.recency()));
    let memory = Facts::default();
    let input = Input {
        session: s,
        conversation,
        resume_id: conversation.map(|c| c.id.as_str()),
        memory: &memory,
        global_facts: &[],
        after_compact: false,
        memories: &[],
        repo_memories: &[],
        now,
        past: false,
        handoffs: &[],
    };
    let own = [
        repository::TITLE,
        "## Files edited",
        sections::ENVIRONMENT,
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

/// A session's length as a person says it: "12 min", "5 h", "148 days".
fn span(minutes: u64) -> String {
    match minutes {
        m if m < 120 => format!("{m} min"),
        m if m < 48 * 60 => format!("{} h", m / 60),
        m => format!("{} days", m / (24 * 60)),
    }
}

pub use crate::clock::ago;

#[cfg(test)]
mod tests;

/// "s" after a count other than one.
fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A prompt that only says to carry on: fewer than three words ("continue", "yes, go"), or
/// a few words opening with carrying on ("continue where you left off", "resume the work
/// from Codex", "pick up where Claude stopped").
/// Whether `prompt` names no task: it only carries on ([`resumes_only`]: "continue", "yes")
/// or is one of the agents' own commands that steer the session, alone (`/clear`,
/// `/compact`, `/model`). A command of the project's or a plugin's (`/workflows:review`,
/// `/exec 318`) is the work asked for: it names the task.
pub(crate) fn names_no_task(prompt: &str) -> bool {
    /// Commands that only steer the session (Claude Code's, Codex's, Gemini CLI's).
    const STEERING: &[&str] = &[
        "clear",
        "compact",
        "continue",
        "resume",
        "model",
        "config",
        "settings",
        "help",
        "cost",
        "status",
        "stats",
        "context",
        "login",
        "logout",
        "exit",
        "quit",
        "permissions",
        "approvals",
        "doctor",
        "memory",
        "vim",
        "theme",
    ];
    let t = prompt.trim();
    match t.strip_prefix('/') {
        Some(name) => t.split_whitespace().count() == 1 && STEERING.contains(&name.to_ascii_lowercase().as_str()),
        None => resumes_only(t),
    }
}

pub(crate) fn resumes_only(prompt: &str) -> bool {
    let words: Vec<String> = prompt
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() < 3 {
        return !words.is_empty();
    }
    let opens = |first: &[&str]| words.len() >= first.len() && words.iter().zip(first).all(|(w, f)| w == f);
    words.len() <= 10
        && (["continue", "resume", "proceed"].contains(&words[0].as_str())
            || opens(&["carry", "on"])
            || opens(&["keep", "going"])
            || opens(&["go", "on"])
            || opens(&["pick", "up"])
            || opens(&["please", "continue"])
            || opens(&["let's", "continue"]))
}
