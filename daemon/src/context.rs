//! The resume context: what a fresh agent needs to carry on, most important first, within a
//! character budget. Printed by `ccmemctl context` and given to the agent at SessionStart.
//!
//! Built from what the session already holds (redacted when it came in); never from raw
//! tool inputs or outputs.

use ccmem_proto::env::{BuildState, DependencyState, ServerStatus, SuiteStatus};
use ccmem_proto::facts::{Memory, FACTS_SHOWN, GOALS_SHOWN};
use ccmem_proto::session::{truncate_chars, Conversation, Session, TodoStatus};

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
    /// The conversation being resumed or started, if known.
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
}

/// The share of the budget kept for goals, facts and memories, so that a long session
/// cannot crowd out what was learnt before it.
const KNOWLEDGE_SHARE: f32 = 0.3;

/// The context, at most `budget` characters (capped at [`MAX_BUDGET`]).
pub fn build(i: &Input, budget: usize) -> String {
    let budget = budget.clamp(200, MAX_BUDGET);
    let s = i.session;
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();

    let mut head = vec![format!(
        "Project {} ({}), session {}, {} min.",
        s.project_name,
        s.project_root.display(),
        s.session_id,
        s.statistics.session_duration_minutes
    )];
    if let Some(id) = i.resume_id {
        head.push(format!("Previous conversation, to resume it: {id} (`claude --resume {id}`)."));
    }
    if s.git.branch != "unknown" {
        head.push(format!(
            "Git: branch {}, {} staged, {} unstaged, {} untracked; last commit {}.",
            s.git.branch,
            s.git.staged_files,
            s.git.unstaged_files,
            s.git.untracked_files,
            if s.git.last_commit.is_empty() { "none" } else { &s.git.last_commit }
        ));
    }
    if i.after_compact {
        head.push(
            "The conversation was just compacted: the summary above may have lost exact paths, \
             todo states and error details. The lists below are exact."
                .into(),
        );
    }
    for (kind, suite) in [("Unit", &s.test_results.unit), ("E2E", &s.test_results.e2e)] {
        if suite.status == SuiteStatus::Passed {
            head.push(format!(
                "{kind} tests passed ({}: {} of {}) with `{}`.",
                suite.framework, suite.passed, suite.total, suite.command
            ));
        }
    }
    sections.push(("# Where you left off (ccmem)".into(), head));
    environment_first(&mut sections, s);

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
    let todos = i.conversation.filter(|c| !c.todos.is_empty()).map(|c| &c.todos).unwrap_or(&s.todos);
    let done = todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
    let active = &s.context_snapshot.active_task;
    if !active.is_empty() {
        let mut l = vec![active.clone()];
        if !todos.is_empty() {
            l.push(format!("Todos: {done} of {} done.", todos.len()));
        }
        sections.push(("## Active task".into(), l));
    }
    let mut open: Vec<String> = todos
        .iter()
        .filter(|t| t.status == TodoStatus::InProgress)
        .map(|t| format!("- [in progress] {}", t.content))
        .collect();
    open.extend(todos.iter().filter(|t| t.status == TodoStatus::Pending).map(|t| format!("- [ ] {}", t.content)));
    push(&mut sections, "## Open todos", open);

    let prompts: Vec<String> = match i.conversation.filter(|c| !c.prompts.is_empty()) {
        Some(c) => c.prompts.iter().rev().take(3).rev().map(|p| format!("- {}", first_line(p))).collect(),
        None => {
            s.commands_executed.iter().rev().take(3).rev().map(|c| format!("- {}", first_line(&c.command))).collect()
        }
    };
    push(&mut sections, "## Recent prompts", prompts);

    let mut files: Vec<_> = s.files_modified.iter().filter(|(_, r)| !r.deleted).collect();
    files.sort_by(|a, b| {
        b.1.last_modified.cmp(&a.1.last_modified).then(b.1.modification_count.cmp(&a.1.modification_count))
    });
    let mut file_lines: Vec<String> = files
        .iter()
        .take(25)
        .map(|(p, r)| {
            let n = r.modification_count;
            let what = if r.changes_summary.is_empty() {
                String::new()
            } else {
                format!(": {}", last_part(&r.changes_summary))
            };
            format!("- {p} ({n} change{}{what})", if n == 1 { "" } else { "s" })
        })
        .collect();
    if files.len() > 25 {
        file_lines.push(format!("- … and {} more files", files.len() - 25));
    }
    push(&mut sections, "## Files edited this session", file_lines);
    let deleted: Vec<String> =
        s.files_modified.iter().filter(|(_, r)| r.deleted).take(10).map(|(p, _)| format!("- {p}")).collect();
    push(&mut sections, "## Files deleted this session", deleted);

    push(&mut sections, "## Blockers", s.context_snapshot.blocking_issues.iter().map(|b| format!("- {b}")).collect());
    let next: Vec<String> = s
        .context_snapshot
        .next_steps
        .iter()
        .filter(|n| !todos.iter().any(|t| &t.content == *n))
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

/// Failing tests, a failing build and running servers: near the top, the agent's first
/// concern on resuming.
fn environment_first(sections: &mut Vec<(String, Vec<String>)>, s: &Session) {
    let mut failing = Vec::new();
    for (kind, suite) in [("Unit", &s.test_results.unit), ("E2E", &s.test_results.e2e)] {
        if suite.status != SuiteStatus::Failed {
            continue;
        }
        failing.push(format!(
            "{kind}: {} failed, {} passed ({}, `{}`{}).",
            suite.failed,
            suite.passed,
            suite.framework,
            suite.command,
            suite.ran_at.as_deref().map(|t| format!(", {t}")).unwrap_or_default()
        ));
        for f in &suite.failures {
            let at = match (f.file.is_empty(), f.line) {
                (true, _) => String::new(),
                (false, Some(l)) => format!(" ({}:{l})", f.file),
                (false, None) => format!(" ({})", f.file),
            };
            let msg = f.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
            failing.push(format!("- {}{at}{msg}", f.test_name));
        }
        if suite.more_failures > 0 {
            failing.push(format!("- … and {} more failures", suite.more_failures));
        }
    }
    push(sections, "## Failing tests", failing);
    let b = &s.environment.build;
    if b.status == BuildState::Failed {
        let mut l = vec![format!(
            "`{}` failed{}.",
            b.command,
            b.last_build.as_deref().map(|t| format!(" at {t}")).unwrap_or_default()
        )];
        l.extend(b.errors.iter().map(|e| format!("- {e}")));
        sections.push(("## Build failing".into(), l));
    }
    let running: Vec<String> = s
        .environment
        .servers
        .iter()
        .filter(|x| x.status == ServerStatus::Running)
        .map(|x| {
            let pid = x.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
            let cmd = if x.command.is_empty() { String::new() } else { format!(": {}", x.command) };
            format!("- {} ({}{pid}){cmd}", x.url, x.process)
        })
        .collect();
    push(sections, "## Dev servers running", running);
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
    push(sections, "## Environment", l);
}

fn push(sections: &mut Vec<(String, Vec<String>)>, title: &str, lines: Vec<String>) {
    if !lines.is_empty() {
        sections.push((title.into(), lines));
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn last_part(summary: &str) -> &str {
    summary.rsplit(", ").next().unwrap_or(summary)
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

/// Joins sections in order until the budget is spent: lines that do not fit are dropped
/// (with a note of how many), and a section that cannot show its title and one line is left
/// out. The result never exceeds `budget` characters.
fn pack(sections: Vec<(String, Vec<String>)>, budget: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for (title, lines) in sections {
        let lines: Vec<String> = lines.into_iter().map(|l| truncate_chars(&l, LINE)).collect();
        let head = title.chars().count() + 2;
        let first = lines.first().map(|l| l.chars().count() + 1).unwrap_or(0);
        if used + head + first > budget {
            continue;
        }
        let mut block = format!("{title}\n");
        let mut size = head - 1;
        let total = lines.len();
        for (n, l) in lines.iter().enumerate() {
            let len = l.chars().count() + 1;
            let note_room = if n + 1 < total { 20 } else { 0 };
            if used + size + len + note_room + 1 > budget && n > 0 {
                let note = format!("- … and {} more\n", total - n);
                if used + size + note.chars().count() < budget {
                    size += note.chars().count();
                    block.push_str(&note);
                }
                break;
            }
            block.push_str(l);
            block.push('\n');
            size += len;
        }
        block.push('\n');
        size += 1;
        out.push_str(&block);
        used += size;
    }
    let trimmed = out.trim_end().to_string();
    truncate_chars(&trimmed, budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccmem_proto::facts::Goal;
    use ccmem_proto::session::Todo;

    fn rich_session() -> Session {
        let now = chrono::Utc::now();
        let mut s =
            crate::session::start("/w/app".into(), "app".into(), "session_2026-01-01_00-00-00".into(), now, None);
        s.context_snapshot.active_task = "Add OAuth login".into();
        s.todos = vec![
            Todo { content: "Design".into(), status: TodoStatus::Completed, active_form: "Designing".into() },
            Todo {
                content: "Implement callback".into(),
                status: TodoStatus::InProgress,
                active_form: "Implementing".into(),
            },
            Todo { content: "Write tests".into(), status: TodoStatus::Pending, active_form: "Writing tests".into() },
        ];
        for i in 0..200 {
            let _ = crate::session::apply(
                &mut s,
                ccmem_proto::session::SessionEvent::FileEdited {
                    path: format!("src/module_{i}/file_with_a_long_name_{i}.rs"),
                    summary: Some("Edit: 1 → 2 lines".into()),
                    workflow: None,
                    created: false,
                },
                now,
            );
        }
        s
    }

    #[test]
    fn goals_facts_and_memories_keep_their_share_of_a_crowded_budget() {
        let mut s = rich_session();
        for n in 0..400 {
            s.context_snapshot
                .blocking_issues
                .push(format!("blocker number {n} with a long description of what is wrong"));
        }
        let memory = Memory { facts: vec!["uses pnpm".into()], goals: vec![], completed_goals: vec![] };
        let memories: Vec<String> =
            (0..50).map(|n| format!("- [decision] Decision {n} (decision-{n}, project): because")).collect();
        let input = Input {
            session: &s,
            conversation: None,
            resume_id: None,
            memory: &memory,
            global_facts: &[],
            after_compact: false,
            memories: &memories,
        };
        for budget in [1000, DEFAULT_BUDGET, MAX_BUDGET] {
            let c = build(&input, budget);
            assert!(c.chars().count() <= budget, "{budget}: {} chars", c.chars().count());
            assert!(c.contains("- uses pnpm"), "{budget}: {c}");
            assert!(budget < DEFAULT_BUDGET || c.contains("## Blockers"), "{budget}: {c}");
            assert!(c.contains("decision-0,") && c.contains("more"), "{budget}: memories cut, not dropped:\n{c}");
            let knowledge = c.len() - c.find("## Facts").unwrap();
            assert!(knowledge as f32 <= budget as f32 * KNOWLEDGE_SHARE + 1.0, "{budget}: {knowledge}");
        }
    }

    #[test]
    fn most_important_first_and_within_budget() {
        let s = rich_session();
        let memory = Memory {
            facts: vec!["OAuth callbacks must be https in prod".into(), "uses pnpm".into()],
            goals: vec![Goal { text: "ship login".into(), deadline: Some("Friday".into()), created_at: String::new() }],
            completed_goals: vec![],
        };
        let input = Input {
            session: &s,
            conversation: None,
            resume_id: Some("abc-123"),
            memory: &memory,
            global_facts: &[],
            after_compact: false,
            memories: &[],
        };
        for budget in [200, 800, 2000, DEFAULT_BUDGET, 50_000] {
            let c = build(&input, budget);
            assert!(c.chars().count() <= budget.min(MAX_BUDGET), "{budget}: {} chars", c.chars().count());
            assert!(c.contains("to resume it: abc-123"), "{budget}: {c}");
        }
        let c = build(&input, DEFAULT_BUDGET);
        let pos = |x: &str| c.find(x).unwrap_or_else(|| panic!("{x} missing:\n{c}"));
        assert!(pos("## Active task") < pos("## Open todos"));
        assert!(pos("## Open todos") < pos("## Files edited"));
        assert!(pos("- [in progress] Implement callback") < pos("- [ ] Write tests"));
        assert!(!c.contains("- [ ] Design"), "completed todos are not open");
        assert!(c.contains("and 175 more files"), "a long list says what it left out:\n{c}");
        assert!(c.contains("ship login (by Friday)"));
        assert!(c.find("OAuth callbacks").unwrap() < c.find("uses pnpm").unwrap(), "related facts first");
        let small = build(&input, 800);
        assert!(small.contains("## Active task") && small.contains("Implement callback"), "{small}");
    }

    #[test]
    fn empty_sections_are_left_out_and_compaction_is_stressed() {
        let now = chrono::Utc::now();
        let s = crate::session::start("/w/app".into(), "app".into(), "session_2026-01-01_00-00-00".into(), now, None);
        let memory = Memory::default();
        let c = build(
            &Input {
                session: &s,
                conversation: None,
                resume_id: None,
                memory: &memory,
                global_facts: &[],
                after_compact: true,
                memories: &[],
            },
            DEFAULT_BUDGET,
        );
        assert!(!c.contains("## Open todos") && !c.contains("## Facts") && !c.contains("## Files"), "{c}");
        assert!(c.contains("just compacted"));
    }
}
