//! A project's work session: seed 001's tracker (commands, files modified, patterns,
//! context snapshot, statistics) and seed 004's checkpoint fields (edited files, todos,
//! phase, plan, git, activity summary, notes, warnings).
//!
//! [`Session`] is the whole state: what the daemon keeps in memory, writes to its state
//! dir, and returns from `status`. [`ProjectState`] is seed 004's checkpoint file,
//! `.claude/.project-state.json`, derived from it within the seed's size limits.

use crate::model::environment::{BuildStatus, EnvironmentState, ServerInfo, TestResults, TestSuite};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod checkpoint;
mod event;
mod work;

pub use checkpoint::*;
pub use event::*;
pub use work::*;

/// Version of the tracker file's layout in the state dir.
pub const TRACKER_FORMAT: u32 = 1;

/// A project's session: seed 001's tracker schema plus seed 004's fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    /// Layout version of this record ([`TRACKER_FORMAT`]).
    pub format: u32,
    /// `session_YYYY-MM-DD_HH-MM-SS` (UTC), unique per project.
    pub session_id: String,
    /// Absolute, canonical project root.
    pub project_root: PathBuf,
    /// Name from the project's manifest, else the directory's name.
    pub project_name: String,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601: last change to this record.
    pub last_updated: String,
    /// ISO 8601: last activity (what the expiry counts from).
    pub last_activity: String,
    /// Commands the agent ran for the user, oldest first.
    pub commands_executed: Vec<CommandRecord>,
    /// Per file (relative to the root): history of its changes.
    pub files_modified: BTreeMap<Box<str>, FileRecord>,
    /// Themes seen in commands and paths, deduplicated.
    pub patterns_detected: Vec<String>,
    /// Workflow name → times used.
    pub workflows_used: BTreeMap<String, u64>,
    /// What is being done, and what is next.
    pub context_snapshot: ContextSnapshot,
    /// Totals.
    pub statistics: Statistics,
    /// Relative paths, most recently edited first, at most [`limits::EDITED_FILES`].
    pub edited_files: Vec<String>,
    /// The agent's task list.
    pub todos: Vec<Todo>,
    /// Current work phase.
    pub phase: Option<Phase>,
    /// Plan file progress.
    pub plan: Option<Plan>,
    /// Repository state at the last refresh.
    pub git: GitState,
    /// Counts for the whole session.
    pub activity_summary: ActivitySummary,
    /// Free-form notes (≤ 1,000 characters in the checkpoint).
    pub context_notes: String,
    /// Problems worth the user's attention.
    pub warnings: Vec<String>,
    /// The last checkpoint written.
    pub last_checkpoint: Option<CheckpointInfo>,
    /// HEAD when the session started, for line and commit counts; None outside git.
    pub git_start: Option<String>,
    /// When this record was last saved, in Unix milliseconds: files modified after it count
    /// as changed when the daemon restarts.
    pub saved_at_ms: i64,
    /// The agent's conversations in this project, oldest first (seed 002's SessionState).
    pub conversations: Vec<Conversation>,
    /// Shell commands the agent ran, oldest first, redacted.
    pub shell_commands: Vec<ShellCommand>,
    /// Dev servers, dependencies and build (seed 000).
    pub environment: EnvironmentState,
    /// The last unit and end-to-end test runs (seed 000).
    pub test_results: TestResults,
    /// Notable moments, oldest first: servers started and stopped, test runs, builds.
    pub timeline: Vec<TimelineEntry>,
    /// The project's task list (seed 000's TaskStatus), when it has one.
    pub task_status: crate::model::report::TaskStatus,
    /// Commands that failed and have not succeeded since, one per kind of work, oldest first.
    pub failures: Vec<Failure>,
    /// Work finished this session that a todo list does not show: commits, closed issues.
    pub done: Vec<Done>,
    /// What failures of the environment or the workflow (a push, a commit, an install, a
    /// tool) taught before they were resolved, oldest first: the next agent would hit them
    /// again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lessons: Vec<Lesson>,
    /// Lines the agent's own edits added and deleted (their patches): the line counts of a
    /// project outside git, where there is no diff to take them from.
    pub agent_lines: LineCounts,
    /// What the session before this one left unfinished, for a fresh start after it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<Box<Handoff>>,
}

/// A command that failed and has not succeeded since.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Failure {
    /// tests, build, lint, typecheck, commit, push, install, or command.
    pub kind: String,
    /// What it ran, redacted and trimmed of pipes into `tail`/`head`.
    pub command: String,
    /// The line of its output that says what went wrong.
    pub error: String,
    /// Failures in a row of this kind.
    pub count: u32,
    /// ISO 8601 of the first of them.
    pub first_at: String,
    /// ISO 8601 of the last.
    pub last_at: String,
}

/// A failure since resolved, kept for what it teaches: `git push origin main` was rejected
/// (protected branch), then `git push -u origin fix` went through.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lesson {
    /// commit, push, install, or command.
    pub kind: String,
    /// What failed, as [`Failure::command`].
    pub command: String,
    /// The line of its output that said why.
    pub error: String,
    /// The command whose success resolved it, when it was another one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fixed_by: String,
    /// ISO 8601 of its resolution.
    pub at: String,
}

/// A piece of finished work.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Done {
    /// ISO 8601.
    pub at: String,
    /// commit, pr, issue, task.
    pub kind: String,
    /// What, for a reader: `a1b2c3d Add login` or `closed #12`.
    pub text: String,
}

/// What an ended session hands to the next one: its last working conversation and the
/// work it left (seed 002's "previous session", kept past the TTL for the agent's sake).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Handoff {
    /// The ended session.
    pub session_id: String,
    /// ISO 8601.
    pub ended_at: String,
    /// Why it ended: expired, reset, unwatched, restored.
    pub reason: String,
    /// Its last conversation that did work.
    pub conversation: Option<Conversation>,
    /// Its todo list as it was left.
    pub todos: Vec<Todo>,
    /// Its unresolved failures.
    pub failures: Vec<Failure>,
    /// What its resolved failures taught.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lessons: Vec<Lesson>,
    /// Its finished work.
    pub done: Vec<Done>,
    /// Files it edited, most recent first.
    pub edited_files: Vec<String>,
}

/// A notable moment in a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimelineEntry {
    /// ISO 8601.
    pub timestamp: String,
    /// server_started, server_stopped, tests, build.
    pub kind: String,
    /// What happened, for a human.
    pub text: String,
}

/// One agent conversation in a project (seed 002's SessionState, one per conversation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Conversation {
    /// The agent's conversation id, for `--resume`.
    pub id: String,
    /// The agent it is held with (Claude Code unless said).
    #[serde(skip_serializing_if = "crate::model::agent::Agent::is_default")]
    pub agent: crate::model::agent::Agent,
    /// The agent's transcript file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// How it began: startup, resume, clear, compact, fork.
    pub source: String,
    /// ISO 8601.
    pub started_at: String,
    /// ISO 8601.
    pub last_activity: String,
    /// Prompts submitted.
    pub message_count: u64,
    /// The agent said the conversation ended.
    pub ended: bool,
    /// Its last prompts, redacted, oldest first.
    pub prompts: Vec<String>,
    /// Its own task list.
    pub todos: Vec<Todo>,
    /// Its prompt count when the task list last changed (0: not known): prompts after it mean
    /// the work went on past the list.
    #[serde(skip_serializing_if = "is_zero")]
    pub todos_at: u64,
    /// Compacted at least once: summaries lose exact details.
    pub compacted: bool,
    /// Given ccmem's context at a start: a resume of it finds it in its own history.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context_given: bool,
    /// Its first prompt (the task it was started for), redacted.
    pub first_prompt: String,
    /// Tool calls it made: a conversation that made none did no work.
    pub tool_calls: u64,
    /// What its transcript says beyond the hook payloads.
    pub digest: Digest,
    /// Why it ended, as Claude Code said (clear, logout, prompt_input_exit, other).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub end_reason: String,
    /// What started its last compaction: manual (`/compact`) or auto.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub compact_trigger: String,
    /// The user's instructions for that compaction (`/compact keep the API notes`), redacted.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub compact_instructions: String,
    /// Claude Code's last notice (it needs a permission, it waits for input), redacted.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub notice: String,
    /// ISO 8601 of that notice.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub notice_at: String,
    /// Events of this conversation taken from `ccmemctl import`, in the transcript's order:
    /// an interrupted import resumes after them and none counts twice.
    #[serde(skip_serializing_if = "is_zero")]
    pub imported_events: u64,
    /// Tool calls its hooks reported ([`Conversation::tool_calls`] is the larger of this and
    /// the transcript's count: each sees the same calls, neither adds to the other).
    #[serde(skip_serializing_if = "is_zero")]
    pub hook_tool_calls: u64,
    /// The session's count of conversation activity at this one's latest: a stamp finer than
    /// [`Conversation::last_activity`]'s second, so that of several conversations active in
    /// the same second the newest is still told (0 in a session kept before it existed).
    #[serde(skip_serializing_if = "is_zero")]
    pub activity_seq: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Conversation {
    /// Sets [`Conversation::tool_calls`] from the two counts that see the same calls: the
    /// hooks' and the transcript's. A transcript read whole while an import's hooks were
    /// still arriving added the two, 4,728 calls for 4,582.
    pub fn count_tool_calls(&mut self) {
        self.tool_calls = self.hook_tool_calls.max(self.digest.tool_uses);
    }

    /// How recent its latest activity is, to order conversations by: the second, then the
    /// session's own count (six agents ending in one second are still in their order).
    pub fn recency(&self) -> (&str, u64) {
        (&self.last_activity, self.activity_seq)
    }

    /// Whether it did anything beyond talking.
    pub fn did_work(&self) -> bool {
        self.tool_calls > 0 || !self.todos.is_empty()
    }
}

/// What ccmem read from a conversation's transcript: the agent's own words, which the hook
/// payloads do not carry. Everything in it is redacted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Digest {
    /// Bytes of the transcript read so far (up to the last whole line).
    pub offset: u64,
    /// The file read (device and inode): another file under the same name starts over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<(u64, u64)>,
    /// The end of the last assistant message: usually what was done and what comes next.
    pub last_words: String,
    /// ISO 8601 of the last words.
    pub last_words_at: String,
    /// From the latest compaction summary: pending tasks.
    pub pending: String,
    /// From the latest compaction summary: the work under way.
    pub current_work: String,
    /// From the latest compaction summary: the next step.
    pub next_step: String,
    /// Decisions and findings the assistant stated, oldest first, deduplicated.
    pub findings: Vec<String>,
    /// Points the assistant set out with a bold lead (`**Issue:** …`), oldest first,
    /// deduplicated: shown where the findings leave room.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<String>,
    /// Compactions seen.
    pub compactions: u32,
    /// ISO 8601 of the latest compaction summary.
    pub summary_at: String,
    /// Assistant messages since that summary: its plan ages with each.
    pub messages_since_summary: u32,
    /// One of them said what comes next: the summary's plan is history.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub plan_overtaken: bool,
    /// Tool calls in the transcript read so far (from its start): with the hooks' own count,
    /// the conversation's is the larger of the two, never their sum.
    #[serde(skip_serializing_if = "is_zero")]
    pub tool_uses: u64,
}

/// Seconds since the Unix epoch, read and written as ISO 8601 (`2026-01-26T10:30:00Z`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Now, to the second.
    pub fn now() -> Self {
        Self(chrono::Utc::now().timestamp())
    }

    /// The ISO 8601 form.
    pub fn iso(self) -> String {
        chrono::DateTime::from_timestamp(self.0, 0)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default()
    }

    /// Parses ISO 8601 / RFC 3339.
    pub fn parse(s: &str) -> Option<Self> {
        chrono::DateTime::parse_from_rfc3339(s).ok().map(|t| Self(t.timestamp()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.iso())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("not an ISO 8601 timestamp: {s:?}")))
    }
}

/// Characters of `s`, cut to `max` with an ellipsis when longer.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;
