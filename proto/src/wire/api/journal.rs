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
