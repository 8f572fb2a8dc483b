//! What a restart applies again. Each event the project task journals carries its replay:
//! what it did to the session, in a form the same rules can apply a second time. The journal
//! keeps a session's whole state only now and then (at most once a second, and at
//! checkpoints); a restart takes that state and applies the replays after it, in order.
//!
//! Only what the task does at once, from the event alone, is replayed. What it does later
//! from elsewhere (a transcript read, git, a port scan) is in the next state, a second on.

use crate::{agent::hooks, observe::watch, session::rules as session};
use ccmem_proto::model::session::{Session, SessionEvent};
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// An agent's report and the watcher's sighting of one edit arrive within this of each other
/// (milliseconds; see [`super::task::SAME_EDIT`]).
const SAME_EDIT_MS: i64 = super::task::SAME_EDIT.as_millis() as i64;

/// What an event did to the session.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(tag = "replay", rename_all = "snake_case")]
pub enum Replay {
    /// A hook event, applied by [`hooks::apply`] and the edit rule.
    Hook(Box<hooks::Hook>),
    /// A conversation was given ccmem's context at its start.
    ContextGiven {
        /// The agent's conversation id.
        conversation: String,
    },
    /// Files the watcher saw change.
    Files {
        /// Each file, relative to the project, and how it changed.
        changes: Vec<(String, watch::Change)>,
    },
    /// An event a client reported.
    Event {
        /// The event.
        event: SessionEvent,
    },
}

impl Replay {
    /// As the journal keeps it.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

/// A hook's replay, as [`Replay::Hook`] writes it (without copying the hook). A command's
/// output is left out when the rules never read it (a command that neither failed, ran
/// tests or a build, nor committed): most commands' output is most of what the journal
/// would redact and keep.
pub fn hook_json(h: &hooks::Hook) -> Option<serde_json::Value> {
    let mut v = serde_json::to_value(h).ok()?;
    if let hooks::Kind::ToolUse { tool: hooks::Tool::Shell { command, failed, .. }, .. } = &h.kind {
        if !failed && !output_read(command) {
            if let Some(out) = v.pointer_mut("/kind/ToolUse/tool/Shell/output") {
                *out = "".into();
            }
        }
    }
    v.as_object_mut()?.insert("replay".into(), "hook".into());
    Some(v)
}

/// Whether the rules read a successful command's output: for test runs and builds (their
/// results), commits (whether one was made), a new PR's or issue's number.
fn output_read(command: &str) -> bool {
    use crate::observe::{cmdline, testout};
    let reads = |c: &str| {
        let kind = testout::command::classify(c);
        kind.test.is_some() || kind.build || crate::session::shell::reads_output(c)
    };
    reads(command) || reads(cmdline::without_cd(command))
}

/// The watcher's `changes`' replay.
pub(super) fn files_json(changes: &[(String, watch::Change)]) -> Option<serde_json::Value> {
    Replay::Files { changes: changes.to_vec() }.to_json()
}

/// A client's event's replay.
pub(super) fn event_json(event: &SessionEvent) -> Option<serde_json::Value> {
    Replay::Event { event: event.clone() }.to_json()
}

/// Applies a hook's own changes (not its edits: [`agent_edit`]) at `now`, as the task does.
pub(super) fn hook(s: &mut Session, h: &hooks::Hook, now: DateTime<Utc>) -> hooks::Effects {
    let fx = hooks::apply(s, h, now);
    if h.at.is_some() {
        replayed(s, now);
    }
    fx
}

/// Counts a file the agent edited, or only describes it when the watcher counted it already.
pub(super) fn agent_edit(s: &mut Session, e: &hooks::AgentEdit, now: DateTime<Utc>, counted: bool) {
    if counted {
        session::annotate(s, &e.rel, &e.summary, &e.tool, e.created);
    } else {
        let edit = SessionEvent::FileEdited {
            path: e.rel.clone(),
            summary: Some(e.summary.clone()),
            workflow: Some(e.tool.clone()),
            created: e.created,
        };
        let _ = session::apply_quietly(s, edit, now);
    }
}

/// Counts a change the watcher saw.
pub(super) fn file_change(s: &mut Session, path: String, change: watch::Change, now: DateTime<Utc>) {
    let event = match change {
        watch::Change::Created => SessionEvent::FileEdited { path, summary: None, workflow: None, created: true },
        watch::Change::Modified => SessionEvent::FileEdited { path, summary: None, workflow: None, created: false },
        watch::Change::Deleted => SessionEvent::FileDeleted { path },
    };
    let _ = session::apply_quietly(s, event, now);
}

/// After an event replayed from a transcript at `at`: the session spans the work it holds
/// (it began no later than `at`), and its activity, which expiry counts from, is now.
pub(super) fn replayed(s: &mut Session, at: DateTime<Utc>) {
    let real = Utc::now();
    s.last_activity = crate::clock::iso(real);
    s.last_updated = s.last_activity.clone();
    if crate::clock::parse_iso(&s.created_at).is_some_and(|start| at < start) {
        s.created_at = crate::clock::iso(at);
    }
}

/// Applies the journal's `replays` (each with when it happened, in order) to `s`, its state
/// before them. One that does not read back is skipped (logged): the rest still apply.
pub fn apply_all(s: &mut Session, replays: Vec<(i64, serde_json::Value)>) {
    // Who last counted each file, and when (ms): the agent's report and the watcher's
    // sighting of one edit count once, as they did live.
    let mut recent: HashMap<String, (i64, bool)> = HashMap::new();
    for (at_ms, value) in replays {
        let replay = match serde_json::from_value::<Replay>(value) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(session = %s.session_id, error = %e, "a journaled event does not apply again");
                continue;
            }
        };
        let now = DateTime::<Utc>::from_timestamp_millis(at_ms).unwrap_or_else(Utc::now);
        match replay {
            Replay::Hook(h) => {
                let fx = hook(s, &h, now);
                for e in &fx.agent_edits {
                    let counted = recent.get(&e.rel).is_some_and(|(t, agent)| !*agent && at_ms - *t < SAME_EDIT_MS);
                    agent_edit(s, e, now, counted);
                    recent.insert(e.rel.clone(), (at_ms, true));
                }
            }
            Replay::ContextGiven { conversation } => {
                if let Some(c) = hooks::find(s, &conversation) {
                    c.context_given = true;
                }
            }
            Replay::Files { changes } => {
                for (path, change) in changes {
                    if change != watch::Change::Deleted {
                        if recent.get(&path).is_some_and(|(t, agent)| *agent && at_ms - *t < SAME_EDIT_MS) {
                            continue;
                        }
                        recent.insert(path.clone(), (at_ms, false));
                    }
                    file_change(s, path, change, now);
                }
                session::touch(s, now);
            }
            Replay::Event { event } => {
                let _ = session::apply(s, event, now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Real payloads (tests/fixtures, see each SOURCES.md), tagged with their agent.
    fn payloads() -> Vec<Value> {
        let mut out = Vec::new();
        let lines = |text: &str, agent: Option<&str>, out: &mut Vec<Value>| {
            for l in text.lines().filter(|l| !l.trim().is_empty()) {
                let mut v: Value = serde_json::from_str(l).expect("a JSON line");
                if let Some(a) = agent {
                    v[ccmem_proto::wire::api::AGENT_KEY] = a.into();
                }
                out.push(v);
            }
        };
        lines(include_str!("../../../tests/fixtures/claude-code/2.1.330/todo-write.jsonl"), None, &mut out);
        lines(include_str!("../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl"), None, &mut out);
        for (agent, text) in [
            ("codex", include_str!("../../../tests/fixtures/codex/user-prompt-submit.json")),
            ("codex", include_str!("../../../tests/fixtures/codex/post-tool-use-apply-patch.json")),
            ("codex", include_str!("../../../tests/fixtures/codex/post-tool-use-bash-failed.json")),
            ("codex", include_str!("../../../tests/fixtures/codex/post-tool-use-update-plan.json")),
            ("gemini", include_str!("../../../tests/fixtures/gemini/after-tool-replace.json")),
            ("gemini", include_str!("../../../tests/fixtures/gemini/after-tool-shell-failed.json")),
            ("gemini", include_str!("../../../tests/fixtures/gemini/after-tool-write-todos.json")),
            ("gemini", include_str!("../../../tests/fixtures/gemini/after-agent.json")),
            ("copilot", include_str!("../../../tests/fixtures/copilot/post-tool-use-failure.json")),
            ("copilot", include_str!("../../../tests/fixtures/copilot/stop.json")),
            ("copilot", include_str!("../../../tests/fixtures/copilot/post-tool-use.json")),
            ("cursor", include_str!("../../../tests/fixtures/cursor/post-tool-use-shell.json")),
        ] {
            let mut v: Value = serde_json::from_str(text).expect("a JSON payload");
            v[ccmem_proto::wire::api::AGENT_KEY] = agent.into();
            out.push(v);
        }
        // A command whose success the rules read in its output: a real Bash payload with the
        // command and output of the crash bench's miss (admarble_sequant: `gh pr create`,
        // whose PR number is in what gh printed).
        let bash = out
            .iter()
            .find(|v| v["hook_event_name"] == "PostToolUse" && v["tool_name"] == "Bash")
            .cloned()
            .expect("a Bash payload");
        let mut pr = bash;
        pr["tool_input"]["command"] = "gh pr create --title \"refactor: split run.ts\" --body x".into();
        pr["tool_response"]["stdout"] = "https://github.com/o/r/pull/329\n".into();
        out.push(pr);
        out
    }

    /// What the journal keeps of a replay, read back.
    fn kept(v: Option<Value>) -> Value {
        let mut v = v.expect("a replay");
        crate::text::redact_json_markdown(&mut v);
        serde_json::from_str(&v.to_string()).expect("reads back")
    }

    #[test]
    fn the_journals_replays_rebuild_the_session_the_task_held() {
        let now = Utc::now();
        let start = crate::session::rules::start(
            std::path::PathBuf::from("/w/app"),
            "app".into(),
            crate::session::rules::new_id(now, None),
            now,
            None,
        );
        let (mut live, mut replays) = (start.clone(), Vec::new());
        let mut hooks = 0;
        for (i, p) in payloads().iter().enumerate() {
            let Some(h) = hooks::parse(p) else { continue };
            hooks += 1;
            // A millisecond apart, as the task stamps them.
            let at = DateTime::<Utc>::from_timestamp_millis(now.timestamp_millis() + i as i64).unwrap();
            let fx = hook(&mut live, &h, at);
            for e in &fx.agent_edits {
                agent_edit(&mut live, e, at, false);
            }
            replays.push((at.timestamp_millis(), kept(hook_json(&h))));
            if i == 3 {
                // The watcher's sighting of a file the agent did not name, and a client's event.
                let changes = vec![("notes.txt".to_string(), watch::Change::Created)];
                for (path, change) in changes.clone() {
                    file_change(&mut live, path, change, at);
                }
                crate::session::rules::touch(&mut live, at);
                replays.push((at.timestamp_millis(), kept(files_json(&changes))));
                let event = SessionEvent::Note { text: "a note".into() };
                replays.push((at.timestamp_millis(), kept(event_json(&event))));
                crate::session::rules::apply(&mut live, event, at).unwrap();
            }
        }
        assert!(hooks >= 10, "only {hooks} payloads read");
        let mut rebuilt = start;
        apply_all(&mut rebuilt, replays);
        let (a, b) = (serde_json::to_value(&live).unwrap(), serde_json::to_value(&rebuilt).unwrap());
        assert!(!live.todos.is_empty() && !live.files_modified.is_empty() && !live.failures.is_empty());
        assert!(live.done.iter().any(|d| d.text.contains("#329")), "the PR's number: {:?}", live.done);
        assert_eq!(a, b, "the replayed session differs from the live one");
    }

    #[test]
    fn an_edit_the_watcher_counted_first_is_counted_once_again() {
        let now = Utc::now();
        let mut s = crate::session::rules::start(
            std::path::PathBuf::from("/w/app"),
            "app".into(),
            crate::session::rules::new_id(now, None),
            now,
            None,
        );
        let t = now.timestamp_millis();
        let edit = serde_json::json!({"session_id": "c", "cwd": "/w/app", "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": {"file_path": "/w/app/a.rs", "content": "x"}});
        let h = hooks::parse(&edit).unwrap();
        let replays = vec![
            (t, kept(files_json(&[("a.rs".into(), watch::Change::Created)]))),
            (t + 100, kept(hook_json(&h))),
            // Later than SAME_EDIT: a change of its own.
            (t + 100 + SAME_EDIT_MS, kept(files_json(&[("a.rs".into(), watch::Change::Modified)]))),
        ];
        apply_all(&mut s, replays);
        assert_eq!(s.files_modified["a.rs"].modification_count, 2, "{:?}", s.files_modified);
    }
}
