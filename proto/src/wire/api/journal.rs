//! The journal's requests: what `forget` removes.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What `journal.forget` removes (exactly one of `conversation`, `session`, `text`, or
/// `project` alone), and whether to remove it or only count it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForgetParams {
    /// One conversation, by the agent's id for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// One session, by ccmem's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Everything that holds this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The project (a path inside it): the scope of the others; alone, its whole past.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// Every project (for `text`).
    #[serde(default)]
    pub all: bool,
    /// Remove it; otherwise only say what would go.
    #[serde(default)]
    pub apply: bool,
}

/// What `journal.forget` removed (or would remove).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForgetReply {
    /// It was removed (else: what would be).
    pub applied: bool,
    /// Events in the journal.
    pub events: u64,
    /// Sessions removed from the journal whole.
    pub sessions: u64,
    /// Session states, archives and checkpoints rewritten without it.
    pub rewritten: u64,
    /// Projects whose whole past goes.
    pub projects: u64,
    /// Live sessions changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live: Vec<PathBuf>,
    /// Files removed or rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PathBuf>,
    /// What could not be done, a line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Params of `session.import_past`: one batch of a past conversation's hook payloads, taken
/// into the project's history as an ended session of its own (never the live session).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportPastParams {
    /// The project (a path inside it).
    pub path: PathBuf,
    /// The agent's id for the conversation: the batches of one import name it alike.
    pub conversation: String,
    /// Hook payloads, in order, as `hook` takes them (`ccmem_time` their own times).
    pub payloads: Vec<serde_json::Value>,
    /// The last batch: the session is read, ended and archived.
    #[serde(default)]
    pub last: bool,
}

/// What `session.import_past` answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportPastReply {
    /// The session the conversation went into.
    pub session: String,
    /// Events taken so far.
    pub events: u64,
    /// Not imported, and why (it is in the journal already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Params of `session.import_plan`: the conversations `import --all` found, for the daemon to
/// say where each goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportPlanParams {
    /// One per conversation found.
    pub conversations: Vec<PlanCandidate>,
}

/// A conversation found in an agent's store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanCandidate {
    /// The agent's id for it.
    pub id: String,
    /// The directory it was recorded in (its working directory), if the file names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// When it last changed (milliseconds since the epoch): the newest of a project's may go
    /// into its live session.
    pub last_ms: i64,
}

/// Where a conversation goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// Into the project's history, as an ended session of its own.
    #[default]
    History,
    /// Into the project's live session (the newest conversation of a project whose live
    /// session has none yet): the next session there starts where it left off.
    Live,
    /// Not imported ([`PlanEntry::why`]).
    Skip,
}

/// The daemon's answer for one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// The conversation's id, as asked.
    pub id: String,
    /// Where it goes.
    pub into: Destination,
    /// The project it goes into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    /// Why it is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Into the live session that holds it already from an import: the events that import
    /// delivered, after which this one goes on (what the conversation said since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
}

/// [`PlanEntry::why`] for a conversation ccmem holds already (the journal, or a live
/// session): `import --all` counts these together.
pub const HELD: &str = "ccmem holds it already";

/// What `session.import_plan` answers: an entry per conversation asked, in the same order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportPlanReply {
    /// An entry per conversation.
    pub plan: Vec<PlanEntry>,
}

/// Params of `session.opencode_sessions`: OpenCode's database, whose conversations `import
/// --all` lists (OpenCode keeps them there, not in files).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpencodeSessionsParams {
    /// Its `opencode.db`.
    pub db: PathBuf,
}

/// One of OpenCode's conversations (a top-level session; a sub-agent's is its parent's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpencodeSession {
    /// Its id (`ses_…`), as `opencode export` takes it.
    pub id: String,
    /// The directory it was recorded in.
    pub directory: String,
    /// When it last changed (milliseconds since the epoch).
    pub updated_ms: i64,
}

/// What `session.opencode_sessions` answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpencodeSessionsReply {
    /// Oldest first.
    pub sessions: Vec<OpencodeSession>,
}
