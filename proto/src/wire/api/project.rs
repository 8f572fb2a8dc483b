//! A project's requests: its events and hooks, checkpoints, its end, its history, the resume
//! context, facts and goals.

use super::*;

/// Params of `facts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactsParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// What to change; none: just list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<crate::model::facts::FactsEdit>,
    /// The edit is of the user-wide facts (`[REMEMBER GLOBAL: …]`), not the project's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
    /// Asked for an agent (MCP): the user-wide facts its project's context holds (a fact
    /// said in another project and waiting for the user's word is not among them).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub for_agent: bool,
}

/// Reply of `facts`: everything kept, oldest first (the numbers of `forget` and `done` are
/// positions in these lists, from 1), after the edit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FactsReply {
    /// The project's root.
    pub root: PathBuf,
    /// What the edit did, if one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
    /// The project's facts.
    pub facts: Vec<String>,
    /// Facts for every project.
    pub global_facts: Vec<String>,
    /// Active goals.
    pub goals: Vec<crate::model::facts::Goal>,
    /// Goals reached.
    pub completed_goals: Vec<crate::model::facts::CompletedGoal>,
}

/// Params naming a project by any path inside it (absolute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathParams {
    /// A directory or file inside the project.
    pub path: PathBuf,
}

/// A live project in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectSummary {
    /// Project root.
    pub root: PathBuf,
    /// Name from the manifest.
    pub project_name: String,
    /// Current session.
    pub session_id: String,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_activity: String,
    /// Seconds of inactivity left before expiry.
    pub expires_in_secs: f64,
    /// Distinct files modified.
    pub files_modified: u64,
    /// Commands recorded.
    pub commands: u64,
    /// The last checkpoint written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint: Option<CheckpointInfo>,
    /// Problems with this project's checkpoints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The agent's conversations in this session, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationEntry>,
}

/// One of the agent's conversations in brief, for `history`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConversationEntry {
    /// The agent's id for it (`claude --resume ID`).
    pub id: String,
    /// The agent it was held with.
    pub agent: crate::model::agent::Agent,
    /// The command that resumes it (`codex resume ID`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    /// ISO 8601.
    pub started_at: String,
    /// ISO 8601.
    pub last_activity: String,
    /// Its first prompt (the task it was started for), one line.
    pub first_prompt: String,
    /// Prompts submitted.
    pub prompts: u64,
    /// Tool calls made: none means it only talked.
    pub tool_calls: u64,
    /// Compacted at least once.
    pub compacted: bool,
    /// Why it ended, when it did (Claude Code's reason, or "ended").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The one `resume-id` names: the last that did work.
    pub resume: bool,
    /// Events an import of its transcript delivered (0: its hooks did): an import run again
    /// goes on after them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub imported_events: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ConversationEntry {
    /// A session's conversations, newest first; `resume` marks the one to resume.
    pub fn list(s: &Session, resume: Option<&str>) -> Vec<Self> {
        // Newest first by their own times: a transcript imported after a newer one keeps
        // its place.
        let mut newest_first: Vec<&crate::model::session::Conversation> = s.conversations.iter().rev().collect();
        newest_first.sort_by(|a, b| b.recency().cmp(&a.recency()));
        newest_first
            .into_iter()
            .map(|c| Self {
                id: c.id.clone(),
                agent: c.agent,
                resume_command: c.agent.resume_command(&c.id),
                started_at: c.started_at.clone(),
                last_activity: c.last_activity.clone(),
                first_prompt: crate::model::session::truncate_chars(c.first_prompt.lines().next().unwrap_or(""), 120),
                prompts: c.message_count,
                tool_calls: c.tool_calls,
                compacted: c.compacted,
                ended: c.ended.then(|| if c.end_reason.is_empty() { "ended".into() } else { c.end_reason.clone() }),
                resume: Some(c.id.as_str()) == resume,
                imported_events: c.imported_events,
            })
            .collect()
    }
}

/// Result of `project.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectList {
    /// Live projects, by root.
    pub projects: Vec<ProjectSummary>,
}

/// Params of `session.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// What happened.
    pub event: SessionEvent,
}

/// Why a checkpoint is asked for by a client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestedReason {
    /// Save now.
    #[default]
    Manual,
    /// A phase is finished.
    PhaseComplete,
}

/// Params of `session.checkpoint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// manual (default) or phase_complete.
    #[serde(default)]
    pub reason: RequestedReason,
    /// Replaces the session's context notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Result of `session.checkpoint`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointReply {
    /// The session checkpointed.
    pub session_id: String,
    /// The file written.
    pub checkpoint: CheckpointInfo,
    /// Non-fatal problems (the tracker could not be saved, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Result of `session.reset` and `project.unwatch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndReply {
    /// Project root.
    pub root: PathBuf,
    /// The session that ended and was archived, if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_session: Option<String>,
    /// The session that replaced it (reset only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_session: Option<String>,
}

/// Result of `session.history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryReply {
    /// Project root.
    pub root: PathBuf,
    /// The live session, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_session: Option<String>,
    /// The live session's conversations, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationEntry>,
    /// Ended sessions, newest first.
    pub sessions: Vec<HistoryEntry>,
}

/// An ended session in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Its id.
    pub session_id: String,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub ended_at: String,
    /// Why it ended.
    pub ended: EndReason,
    /// Its focus when it ended.
    pub active_task: String,
    /// Distinct files modified.
    pub files_modified: u64,
    /// Commands recorded.
    pub commands: u64,
    /// Its conversations, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationEntry>,
}

impl From<&ArchivedSession> for HistoryEntry {
    fn from(a: &ArchivedSession) -> Self {
        // The one a new session's context names: the last that did work.
        let resume = a.session.conversations.iter().rev().find(|c| c.did_work()).map(|c| c.id.as_str());
        Self {
            session_id: a.session.session_id.clone(),
            created_at: a.session.created_at.clone(),
            ended_at: a.ended_at.clone(),
            ended: a.ended,
            active_task: a.session.context_snapshot.active_task.clone(),
            files_modified: a.session.files_modified.len() as u64,
            commands: a.session.commands_executed.len() as u64,
            conversations: ConversationEntry::list(&a.session, resume),
        }
    }
}

/// Result of `hook`: what the hook prints for the agent, if anything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookReply {
    /// Text for the agent's context (SessionStart); empty for nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub additional_context: String,
    /// For the user, never the agent: why ccmem cannot work as it should (its configuration
    /// file is broken), with how to fix it (SessionStart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// The field of a hook payload `ccmemctl import` numbers its events with (1, 2, …), so that
/// the daemon takes each event of an import once however often it is sent.
pub const IMPORT_SEQ: &str = "ccmem_import_seq";

/// The field of a hook payload that says when the event happened (RFC 3339), for events
/// replayed from a transcript (`ccmemctl import`): test runs, failures, edits and the
/// session's span then keep the transcript's times. A live event happens when it arrives.
pub const EVENT_TIME: &str = "ccmem_time";

/// The field of a live hook payload that says when `ccmemctl hook` started (milliseconds
/// since the epoch): hooks that reach the daemon late (it was stopped, or swapped out) are
/// applied in the order they were sent, not the order they arrive in.
pub const SENT_TIME: &str = "ccmem_sent";

/// The field of a hook payload `ccmemctl hook --agent NAME` names the agent in (`codex`,
/// …); a payload without it is Claude Code's.
pub const AGENT_KEY: &str = "ccmem_agent";

/// The field `ccmemctl hook --agent codex` adds to a shell command's PostToolUse: the exit
/// status Codex wrote to its rollout file, which its payload lacks.
pub const EXIT_CODE_KEY: &str = "ccmem_exit_code";

/// The resume context's budget, in characters: what `context --budget` and the daemon's
/// `context_budget` accept.
pub const BUDGET_RANGE: std::ops::RangeInclusive<usize> = 200..=10_000;

/// Params of `session.context`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// Characters at most (default: the daemon's budget), within [`BUDGET_RANGE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
}

/// Result of `session.context`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextReply {
    /// The resume context, markdown.
    pub context: String,
    /// The last conversation that did work (the ended session's when no live one has any),
    /// for `--resume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}
