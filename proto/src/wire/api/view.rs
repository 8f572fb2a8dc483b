//! The view's requests (`ccmemctl ui`): the projects and their sessions as the journal holds
//! them, and a subscription that says when what it shows has changed.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Params of `view.projects`: none yet (every project the journal holds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewProjectsParams {}

/// What `view.projects` answers: live projects first, then the past, each group newest
/// activity first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewProjects {
    pub projects: Vec<ProjectRow>,
}

/// A project, in brief.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectRow {
    /// Its directory.
    pub root: PathBuf,
    /// Its name (the manifest's, else the directory's).
    pub name: String,
    /// The daemon keeps a live session for it.
    #[serde(default)]
    pub live: bool,
    /// Its last activity, in milliseconds since the epoch.
    pub last_ms: i64,
    /// Sessions the journal holds for it.
    pub sessions: u64,
    /// The agents that worked in it, by their display names, most recent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// Its newest session's state, in brief.
    #[serde(default)]
    pub brief: Brief,
}

/// A session's state in one line's worth: tests, todos, the task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Brief {
    /// The last test run: `passed`, `failed`, or empty (none seen).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tests: String,
    /// Tests passed and failed in it.
    #[serde(default)]
    pub passed: u64,
    #[serde(default)]
    pub failed: u64,
    /// The names of the tests failing in it (a few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// Todos not completed, and completed.
    #[serde(default)]
    pub todos_left: u64,
    #[serde(default)]
    pub todos_done: u64,
    /// What the session is about: the task its newest conversation was started for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task: String,
    /// The git branch.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
}

/// Params of `view.sessions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewSessionsParams {
    /// The project (a path inside it).
    pub path: PathBuf,
    /// Sessions at most (newest first; the daemon caps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// What `view.sessions` answers: newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViewSessions {
    /// The project's directory.
    pub root: PathBuf,
    pub sessions: Vec<SessionRow>,
    /// There are older ones.
    #[serde(default)]
    pub more: bool,
}

/// A session, in brief.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    /// ccmem's session id.
    pub session: String,
    /// When it started, and its last activity (milliseconds since the epoch).
    pub started_ms: i64,
    pub last_ms: i64,
    /// When it ended, and why (None: it lives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub end_reason: String,
    /// Events the journal holds of it.
    pub events: u64,
    /// Its state, in brief.
    #[serde(default)]
    pub brief: Brief,
    /// The agents' conversations in it, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationRow>,
}

/// One of an agent's conversations in a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationRow {
    /// The agent's id for it.
    pub id: String,
    /// The agent, by its display name.
    pub agent: String,
    /// Its first prompt, one line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_prompt: String,
    /// Prompts submitted.
    #[serde(default)]
    pub prompts: u64,
    /// Its last activity, ISO 8601.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_activity: String,
    /// The command that resumes it, when its transcript is still on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

/// Params of `view.subscribe`: none. The connection then carries only `view.changed`
/// notifications, until the client closes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeParams {}

/// What `view.subscribe` answers before the first notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subscribed {
    pub subscribed: bool,
}

/// Params of the `view.changed` notification: what the journal took since the last one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changed {
    /// The projects whose past changed (empty: any may have, e.g. after a `forget`).
    #[serde(default)]
    pub projects: Vec<PathBuf>,
}
