//! A project's handoff through git (`ccmemctl handoff …`): turning it on and off, pushing,
//! pulling, showing, forgetting and pruning.

use super::*;
use crate::model::handoff::SeenHandoff;

/// What `handoff` is asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffAction {
    /// Its state and the current branch's handoffs, nothing changed.
    #[default]
    Show,
    /// Turn it on (with [`HandoffParams::remote`] and [`HandoffParams::auto`]).
    Enable,
    /// Turn it off (the refs stay).
    Disable,
    /// Write the branch's handoff now and push it to the remote.
    Push,
    /// Fetch the remote's handoffs now.
    Pull,
    /// Delete this clone's handoff refs (and, with `remote_too`, its refs on the remote).
    Forget,
    /// Drop the refs of branches merged or deleted upstream.
    Prune,
}

/// Params of `handoff`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HandoffParams {
    /// A directory inside the project (absolute).
    pub path: PathBuf,
    /// What to do.
    pub action: HandoffAction,
    /// Enable: the remote to push to and fetch from (default: the branch's upstream remote,
    /// else `origin`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// Enable: push after the agent stops and when the session ends, in the background.
    pub auto: bool,
    /// Show: the branch whose handoffs to show (default: the one checked out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Forget, prune: on the remote too (only this clone's own refs there).
    pub remote_too: bool,
    /// The client's ssh agent socket, for a push or fetch over ssh from a daemon started
    /// without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_auth_sock: Option<PathBuf>,
}

/// Reply of `handoff`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HandoffReply {
    /// The project's root.
    pub root: PathBuf,
    /// Handoff is on for this project.
    pub enabled: bool,
    /// The remote it goes to and comes from.
    pub remote: String,
    /// It is pushed after each Stop and at session end.
    pub auto: bool,
    /// The branch shown.
    pub branch: String,
    /// This clone's id in the refs (`refs/ccmem/handoff/<id>/<branch>`).
    pub author_id: String,
    /// What was done, in a sentence.
    pub done: String,
    /// The branch's handoffs, newest first.
    pub handoffs: Vec<SeenHandoff>,
    /// The last push or fetch that failed, and why (until one succeeds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// When the last push went through (ISO 8601).
    pub pushed_at: String,
    /// When the last fetch went through (ISO 8601).
    pub fetched_at: String,
}
