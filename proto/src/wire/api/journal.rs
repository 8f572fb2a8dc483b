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
