//! What the project task writes to the journal: each event it accepts, as a neutral entry,
//! with the session's state after it; and the answers that must wait until that is durable.

use crate::{agent::hooks, journal::Entry, observe::watch};
use ccmem_proto::model::session::SessionEvent;
use std::time::Duration;
use tokio::sync::oneshot;

use super::task::*;
use ccmem_proto::model::session::{CheckpointReason, CheckpointType};

/// A caller waits at most this for the journal before it is answered anyway: the agent is
/// never held by a slow disk or a locked database. Well under the hook's 2 s wait for its
/// reply, which must come first.
const ACK_WAIT: Duration = Duration::from_secs(1);

/// File changes of one batch written one by one; the rest are counted in one entry.
const FILES_EACH: usize = 200;

/// Characters of a failed command's output kept with it.
const OUTPUT_CHARS: usize = 2000;

/// The session's whole state is journaled at most this often (and at checkpoints): between
/// two, a restart applies the events' replays. Copying and writing a large state with every
/// event would cost the agent's hooks more than the event itself.
pub(super) const STATE_EVERY: Duration = Duration::from_secs(1);

impl Project {
    /// Journals `entries`, with the session's state when one is due; resolves once they are
    /// durable.
    pub(super) fn journal(&mut self, entries: Vec<Entry>) -> Option<oneshot::Receiver<()>> {
        let due = self
            .state_journaled
            .as_ref()
            .is_none_or(|(sid, at)| *sid != self.s.session_id || at.elapsed() >= STATE_EVERY);
        self.append(entries, due)
    }

    /// Journals the session's state as it is now, for a checkpoint about to be written from
    /// a copy of it (see [`checkpoint::Saver`]).
    pub(super) fn saver(&mut self) -> super::checkpoint::Saver {
        self.version += 1;
        let journaled = if self.ctx.journal.is_open() { self.journal_now(Vec::new()) } else { None };
        super::checkpoint::Saver {
            journaled,
            journal_file: self.ctx.journal.path().to_path_buf(),
            store: self.ctx.store.clone(),
            in_journal: false,
        }
    }

    /// Journals `entries` and the session's state now (a checkpoint, a forget).
    pub(super) fn journal_now(&mut self, entries: Vec<Entry>) -> Option<oneshot::Receiver<()>> {
        self.append(entries, true)
    }

    fn append(&mut self, mut entries: Vec<Entry>, with_state: bool) -> Option<oneshot::Receiver<()>> {
        if self.told_version != self.version && self.ctx.journal.is_open() {
            self.told_version = self.version;
            let trigger = entries.iter().find_map(|e| e.conversation.as_deref().map(|c| (c, e.at_ms)));
            let news = self.told.news(&self.s, trigger, |at, kind| entry_of(&self.s, at, "session", kind));
            entries.extend(news);
        }
        let with_state = with_state && self.journaled != self.version;
        if with_state {
            self.journaled = self.version;
            self.state_journaled = Some((self.s.session_id.clone(), tokio::time::Instant::now()));
        }
        if entries.is_empty() && !with_state {
            return None;
        }
        self.ctx.journal.append(entries, with_state.then_some(&self.s))
    }

    /// Journals the session's state if it changed since, and one is due.
    pub(super) fn journal_state(&mut self) {
        if self.journaled != self.version {
            let _ = self.journal(Vec::new());
        }
    }

    /// When the state, changed since it was last journaled, is next due (None: unchanged).
    pub(super) fn state_due(&self) -> Option<tokio::time::Instant> {
        if self.journaled == self.version {
            return None;
        }
        Some(self.state_journaled.as_ref().map_or_else(tokio::time::Instant::now, |(_, at)| *at + STATE_EVERY))
    }

    /// Puts `replay` on the first of `entries` (on an entry of its own when there are none):
    /// a restart applies it again after the last journaled state.
    pub(super) fn with_replay(
        &self,
        entries: &mut Vec<Entry>,
        replay: Option<serde_json::Value>,
        at: chrono::DateTime<chrono::Utc>,
    ) {
        if entries.is_empty() {
            entries.push(self.entry(at, "hook", "tool"));
        }
        entries[0].replay = replay;
    }

    /// An entry of this session, at `at`.
    pub(super) fn entry(&self, at: chrono::DateTime<chrono::Utc>, source: &'static str, kind: &'static str) -> Entry {
        entry_of(&self.s, at, source, kind)
    }

    /// What a hook event says, as entries.
    pub(super) fn hook_entries(&self, h: &hooks::Hook, at: chrono::DateTime<chrono::Utc>) -> Vec<Entry> {
        hook_entries_of(&self.s, h, at)
    }
}

/// An entry of session `s`, at `at`.
pub(super) fn entry_of(
    s: &ccmem_proto::model::session::Session,
    at: chrono::DateTime<chrono::Utc>,
    source: &'static str,
    kind: &'static str,
) -> Entry {
    Entry {
        root: s.project_root.clone(),
        root_name: s.project_name.clone(),
        session: s.session_id.clone(),
        at_ms: at.timestamp_millis(),
        source,
        kind,
        ..Entry::default()
    }
}

/// What a hook event says, as entries of session `s`.
pub(super) fn hook_entries_of(
    s: &ccmem_proto::model::session::Session,
    h: &hooks::Hook,
    at: chrono::DateTime<chrono::Utc>,
) -> Vec<Entry> {
    let source = if h.import_seq.is_some() { "import" } else { "hook" };
    let base = |kind: &'static str, text: String| Entry {
        agent: Some(h.agent.to_string()),
        conversation: h.conversation.clone(),
        text,
        ..entry_of(s, at, source, kind)
    };
    // Where the conversation is kept: recall offers to resume it while it is there.
    let transcript = || h.transcript.as_ref().or(h.kept_at.as_ref()).map(|t| serde_json::json!({ "transcript": t }));
    match &h.kind {
        hooks::Kind::SessionStart { source } => vec![Entry { data: transcript(), ..base("start", source.clone()) }],
        // As a person reads it: a tool's reminders (`<system-reminder>`, a file's contents
        // a linter changed) are not what the user asked, and recall shows prompts as theirs.
        hooks::Kind::Prompt { text } => {
            let readable = ccmem_proto::model::transcript::readable_prompt(text);
            vec![Entry { data: transcript(), ..base("prompt", readable) }]
        }
        hooks::Kind::ToolUse { name, tool } => match tool {
            hooks::Tool::Shell { command, output, exit, failed, interrupted } => {
                let mut text = command.clone();
                if *failed {
                    text.push('\n');
                    text.push_str(tail(output, OUTPUT_CHARS));
                }
                let data = serde_json::json!({ "tool": name, "exit": exit, "failed": failed, "interrupted": interrupted });
                vec![Entry { data: Some(data), ..base("command", text) }]
            }
            hooks::Tool::Edits(edits) => edits
                .iter()
                .map(|e| {
                    let rel = crate::text::relative(&s.project_root, &e.path).unwrap_or_else(|_| e.path.clone());
                    let data = serde_json::json!({
                        "tool": e.tool, "created": e.created, "deleted": e.deleted, "added": e.added, "removed": e.removed
                    });
                    let text = format!("{rel} {}", e.summary);
                    Entry { path: Some(rel), data: Some(data), ..base(if e.deleted { "delete" } else { "edit" }, text) }
                })
                .collect(),
            hooks::Tool::Plan(todos) => {
                let text = todos.iter().map(|t| format!("[{:?}] {}", t.status, t.content)).collect::<Vec<_>>().join("\n");
                vec![base("todos", text)]
            }
            hooks::Tool::Task(t) => vec![task_entry(base("task", String::new()), t)],
            hooks::Tool::Other => vec![base("tool", name.clone())],
        },
        hooks::Kind::Stop { last_message, subagent, .. } => {
            let data = serde_json::json!({ "subagent": subagent });
            vec![Entry { data: Some(data), ..base("stop", last_message.clone().unwrap_or_default()) }]
        }
        hooks::Kind::PreCompact { trigger, instructions } => {
            vec![Entry { data: Some(serde_json::json!({ "trigger": trigger })), ..base("precompact", instructions.clone()) }]
        }
        hooks::Kind::Compacted { summary } => vec![base("compacted", summary.clone())],
        hooks::Kind::Notification { message } => vec![base("notification", message.clone())],
        hooks::Kind::SessionEnd { reason } => vec![base("end", reason.clone())],
        hooks::Kind::Task(t) => vec![task_entry(base("task", String::new()), t)],
        hooks::Kind::Other(name) => vec![base("other", name.clone())],
    }
}

impl Project {
    /// Files the watcher saw change, as entries.
    pub(super) fn file_entries(
        &self,
        changes: &[(String, watch::Change)],
        at: chrono::DateTime<chrono::Utc>,
    ) -> Vec<Entry> {
        let mut out: Vec<Entry> = changes
            .iter()
            .take(FILES_EACH)
            .map(|(path, change)| {
                let kind = match change {
                    watch::Change::Created => "created",
                    watch::Change::Modified => "modified",
                    watch::Change::Deleted => "deleted",
                };
                Entry { path: Some(path.clone()), text: path.clone(), ..self.entry(at, "watch", kind) }
            })
            .collect();
        if changes.len() > FILES_EACH {
            let more = changes.len() - FILES_EACH;
            out.push(Entry { text: format!("{more} more files changed"), ..self.entry(at, "watch", "files") });
        }
        out
    }

    /// An event a client reported (`ccmemctl event`, `test-report`), as an entry.
    pub(super) fn event_entry(&self, event: &SessionEvent, at: chrono::DateTime<chrono::Utc>) -> Entry {
        let data = serde_json::to_value(event).unwrap_or_default();
        let mut words = Vec::new();
        strings(&data, &mut words);
        let path = match event {
            SessionEvent::FileEdited { path, .. } | SessionEvent::FileDeleted { path } => Some(path.clone()),
            _ => None,
        };
        Entry { path, text: words.join(" "), data: Some(data), ..self.entry(at, "user", "event") }
    }
}

/// Answers `reply` with `value` once `durable` resolves (at most [`ACK_WAIT`] later).
pub(super) fn answer_when_durable<T: Send + 'static>(
    durable: Option<oneshot::Receiver<()>>,
    reply: oneshot::Sender<T>,
    value: T,
) {
    match durable {
        None => {
            let _ = reply.send(value);
        }
        Some(done) => {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(ACK_WAIT, done).await;
                let _ = reply.send(value);
            });
        }
    }
}

fn task_entry(e: Entry, t: &hooks::TaskChange) -> Entry {
    let data = serde_json::json!({
        "id": t.id, "status": t.status.map(|s| format!("{s:?}")), "deleted": t.delete
    });
    Entry { text: t.subject.clone().or_else(|| t.active_form.clone()).unwrap_or_default(), data: Some(data), ..e }
}

/// The last `max` characters of `s`.
fn tail(s: &str, max: usize) -> &str {
    let n = s.chars().count();
    match s.char_indices().nth(n.saturating_sub(max)) {
        Some((i, _)) if n > max => &s[i..],
        _ => s,
    }
}

/// Every string in `v`, in order.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

impl Project {
    /// Takes a text or a conversation out of the live session and its facts, then writes
    /// the checkpoint twice (the copy kept before it, `.bak`, must not hold it either), the
    /// report with it, and the journal's state. Answers whether anything went.
    pub(super) async fn forget(
        &mut self,
        what: ForgetLive,
        apply: bool,
    ) -> Result<(bool, Vec<std::path::PathBuf>), String> {
        let mut v = serde_json::to_value(&self.s).map_err(|e| e.to_string())?;
        let mut facts = serde_json::to_value(&self.memory).map_err(|e| e.to_string())?;
        let (changed, facts_changed) = match &what {
            ForgetLive::Text(t) => (crate::text::scrub_json(&mut v, t) > 0, crate::text::scrub_json(&mut facts, t) > 0),
            ForgetLive::Conversation(id) => (crate::text::drop_conversation(&mut v, id), false),
        };
        if !apply || !(changed || facts_changed) {
            return Ok((changed || facts_changed, Vec::new()));
        }
        let mut files = Vec::new();
        if changed {
            self.s = serde_json::from_value(v).map_err(|e| format!("the session does not read back: {e}"))?;
            self.version += 1;
            self.dirty = true;
            self.settle_job().await;
            for _ in 0..2 {
                let out = self.checkpoint(CheckpointReason::Manual, CheckpointType::UserRequested).await;
                if !out.errors.is_empty() {
                    return Err(out.errors.join("; "));
                }
            }
            files.extend(super::forget::files(&self.s.project_root));
            // Committed before the journal's own forget runs, which then finds no trace (and
            // no event it removes is after this state, to be replayed).
            if let Some(done) = self.journal_now(Vec::new()) {
                let _ = done.await;
            }
        }
        if facts_changed {
            self.memory = serde_json::from_value(facts).map_err(|e| format!("the facts do not read back: {e}"))?;
            self.save_facts().await;
        }
        Ok((true, files))
    }
}
