//! Methods of the ccmem protocol and their parameter and result types.
//!
//! Every type tolerates unknown fields, so that a newer peer can add fields without
//! breaking an older one; incompatible changes bump [`crate::PROTOCOL_VERSION`].

use crate::model::session::{ArchivedSession, CheckpointInfo, EndReason, Session, SessionEvent};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod handoff;
mod journal;
mod project;
mod recall;
mod reports;
mod view;

pub use handoff::*;
pub use journal::*;
pub use project::*;
pub use recall::*;
pub use reports::*;
pub use view::*;

/// Method names.
pub mod method {
    /// Version exchange: [`super::Hello`] → [`super::HelloReply`].
    pub const HELLO: &str = "hello";
    /// Liveness check: no params → `"pong"`.
    pub const PING: &str = "ping";
    /// Daemon and project status: [`super::StatusParams`] → [`super::StatusReply`].
    pub const STATUS: &str = "status";
    /// Graceful shutdown: no params → [`super::ShutdownReply`], then the daemon exits.
    pub const SHUTDOWN: &str = "shutdown";
    /// Start (or keep) a session for a project: [`super::PathParams`] → [`super::ProjectSummary`].
    pub const WATCH: &str = "project.watch";
    /// End a project's session and stop tracking it: [`super::PathParams`] → [`super::EndReply`].
    pub const UNWATCH: &str = "project.unwatch";
    /// Live projects: no params → [`super::ProjectList`].
    pub const PROJECTS: &str = "project.list";
    /// Record something that happened: [`super::EventParams`] → `{}`; also as a notification.
    pub const EVENT: &str = "session.event";
    /// Write a checkpoint now: [`super::CheckpointParams`] → [`super::CheckpointReply`].
    pub const CHECKPOINT: &str = "session.checkpoint";
    /// End the session now and start a new one: [`super::PathParams`] → [`super::EndReply`].
    pub const RESET: &str = "session.reset";
    /// Ended sessions: [`super::PathParams`] → [`super::HistoryReply`].
    pub const HISTORY: &str = "session.history";
    /// Remove from the journal, the sessions and their files for good:
    /// [`super::ForgetParams`] → [`super::ForgetReply`].
    pub const FORGET: &str = "journal.forget";
    /// An agent hook event (the payload as the agent sent it) → [`super::HookReply`]; also
    /// as a notification for events that print nothing.
    pub const HOOK: &str = "hook";
    /// What a fresh agent needs to carry on: [`super::ContextParams`] → [`super::ContextReply`].
    pub const CONTEXT: &str = "session.context";
    /// The effective configuration and where each value came from.
    pub const CONFIG_SHOW: &str = "config.show";
    /// Read the configuration file again.
    pub const CONFIG_RELOAD: &str = "config.reload";
    /// The session memory report (seed 000), written and returned.
    pub const REPORT: &str = "session.report";
    /// Test results from a runner's output or a JUnit XML file.
    pub const TEST_REPORT: &str = "session.test_report";
    /// The facts and goals kept for a project (and the user-wide facts); forget one, finish one.
    pub const FACTS: &str = "facts";
    /// A past conversation into the project's history: [`super::ImportPastParams`] →
    /// [`super::ImportPastReply`].
    pub const IMPORT_PAST: &str = "session.import_past";
    /// Where each conversation `import --all` found goes (history, the live session, or
    /// nowhere, and why): [`super::ImportPlanParams`] → [`super::ImportPlanReply`].
    pub const IMPORT_PLAN: &str = "session.import_plan";
    /// OpenCode's conversations, read from its database (read only):
    /// [`super::OpencodeSessionsParams`] → [`super::OpencodeSessionsReply`].
    pub const OPENCODE_SESSIONS: &str = "session.opencode_sessions";
    /// The past searched: [`super::SearchParams`] → [`super::Hits`].
    pub const SEARCH: &str = "recall.search";
    /// The past in order: [`super::TimelineParams`] → [`super::Hits`].
    pub const TIMELINE: &str = "recall.timeline";
    /// The conversations that touched a file: [`super::WhyParams`] → [`super::WhyReply`].
    pub const WHY: &str = "recall.why";
    /// One event in full: [`super::ShowParams`] → [`super::ShowReply`].
    pub const SHOW: &str = "recall.show";
    /// A project's handoff through git: [`HandoffParams`] → [`HandoffReply`].
    pub const HANDOFF: &str = "handoff";
    /// Every project, in brief: [`super::ViewProjectsParams`] → [`super::ViewProjects`].
    pub const VIEW_PROJECTS: &str = "view.projects";
    /// A project's sessions, in brief: [`super::ViewSessionsParams`] → [`super::ViewSessions`].
    pub const VIEW_SESSIONS: &str = "view.sessions";
    /// What the journal takes, as it takes it: [`super::SubscribeParams`] →
    /// [`super::Subscribed`], then [`VIEW_CHANGED`] notifications on the same connection.
    pub const VIEW_SUBSCRIBE: &str = "view.subscribe";
    /// Sent to a subscriber: [`super::Changed`].
    pub const VIEW_CHANGED: &str = "view.changed";
}

/// Params of `hello`: who the client is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Program name, e.g. `ccmemctl`.
    pub client: String,
    /// The client's ccmem version.
    pub version: String,
    /// The protocol version the client speaks.
    pub protocol: u32,
}

impl Hello {
    /// The hello this build sends.
    pub fn this_build(client: &str) -> Self {
        Self { client: client.into(), version: crate::VERSION.into(), protocol: crate::PROTOCOL_VERSION }
    }
}

/// Result of `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloReply {
    /// The daemon's ccmem version.
    pub daemon_version: String,
    /// The protocol version the daemon speaks.
    pub protocol_version: u32,
    /// The daemon's process id.
    pub pid: u32,
    /// Whether the daemon can serve a client of the protocol the client announced.
    pub compatible: bool,
}

/// Params of `status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusParams {
    /// A directory inside the project to report on; absolute. None: the daemon only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// Result of `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReply {
    /// The daemon itself.
    pub daemon: DaemonStatus,
    /// The project `path` belongs to, when a path was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectStatus>,
}

/// The daemon's identity, versions and load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStatus {
    /// The daemon's ccmem version.
    pub version: String,
    /// The protocol version the daemon speaks.
    pub protocol_version: u32,
    /// Process id.
    pub pid: u32,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Start time, RFC 3339.
    pub started_at: String,
    /// Seconds since start.
    pub uptime_secs: f64,
    /// Milliseconds from process start to accepting connections.
    pub ready_ms: f64,
    /// Connection counters.
    pub connections: ConnectionStats,
    /// Projects with a live session.
    pub live_projects: usize,
    /// The journal's database (empty from a daemon without one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub journal: String,
    /// What is wrong with the journal, a line each (none when all is well).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub journal_problems: Vec<String>,
}

/// Connection counters since start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionStats {
    /// Open now.
    pub active: u64,
    /// The cap on open connections.
    pub max: u64,
    /// Accepted since start.
    pub accepted: u64,
    /// Refused because the peer was another user.
    pub refused_peer: u64,
    /// Refused because the cap was reached.
    pub refused_busy: u64,
    /// Requests and notifications handled.
    pub requests: u64,
}

/// A project as the daemon sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectStatus {
    /// The project root: the git top-level of the path asked about, else that path.
    pub root: PathBuf,
    /// Whether the daemon keeps a live session for it.
    pub live: bool,
    /// The whole session, when live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
    /// Seconds of inactivity left before the session expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<f64>,
    /// Changes not yet checkpointed.
    #[serde(default)]
    pub unsaved_changes: bool,
    /// Problems with this project's checkpoints (an unwritable directory, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The file watcher, when live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchStatus>,
    /// The handoff through git, when it is on: where it goes, the last push and fetch, and
    /// what failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<String>,
}

/// A project's file watcher.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchStatus {
    /// The initial walk is done: changes from now on are seen.
    pub ready: bool,
    /// Directories with a watch.
    pub directories_watched: u64,
    /// Directories polled instead (the watch limit was reached).
    pub directories_polled: u64,
    /// Files known.
    pub files: u64,
    /// Full rescans after lost events.
    pub rescans: u64,
    /// The project is over the per-project cap on files or directories tracked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// Directories that could be neither watched nor read (paths too long or too deep, no
    /// permission): changes in them are not seen.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unwatchable: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Result of `shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownReply {
    /// The pid of the daemon that is stopping, so a caller can wait for it to exit.
    pub pid: u32,
}

/// One configuration key as the daemon runs with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigEntry {
    /// e.g. `watch.ignore`.
    pub key: String,
    /// The value in force.
    pub value: String,
    /// default, config file …, environment …, command line, project file ….
    pub source: String,
    /// What it does.
    pub about: String,
    /// When a change applies: reload, new sessions, restart.
    pub applies: String,
}

/// Params of `config.show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigParams {
    /// A project whose `.claude/ccmem.toml` overrides are shown too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// Result of `config.show` and `config.reload`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigReply {
    /// The configuration file (it may not exist).
    pub file: PathBuf,
    /// Every key.
    pub entries: Vec<ConfigEntry>,
    /// Problems with the project's file, if one was asked about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The configuration file as it is now cannot be read (the values shown are the ones
    /// in force): the error a restart or a reload would stop on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The knowledge memories' `config.json` files are refused: every memory command fails
    /// until they are fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_problem: Option<String>,
}
