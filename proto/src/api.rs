//! Methods of the ccmem protocol and their parameter and result types.
//!
//! Every type tolerates unknown fields, so that a newer peer can add fields without
//! breaking an older one; incompatible changes bump [`crate::PROTOCOL_VERSION`].

use crate::session::{ArchivedSession, CheckpointInfo, EndReason, Session, SessionEvent};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
}

/// Params of `facts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactsParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// What to change; none: just list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<crate::facts::FactsEdit>,
    /// The edit is of the user-wide facts (`[REMEMBER GLOBAL: …]`), not the project's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
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
    pub goals: Vec<crate::facts::Goal>,
    /// Goals reached.
    pub completed_goals: Vec<crate::facts::CompletedGoal>,
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
}

impl ConversationEntry {
    /// A session's conversations, newest first; `resume` marks the one to resume.
    pub fn list(s: &Session, resume: Option<&str>) -> Vec<Self> {
        s.conversations
            .iter()
            .rev()
            .map(|c| Self {
                id: c.id.clone(),
                started_at: c.started_at.clone(),
                last_activity: c.last_activity.clone(),
                first_prompt: crate::session::truncate_chars(c.first_prompt.lines().next().unwrap_or(""), 120),
                prompts: c.message_count,
                tool_calls: c.tool_calls,
                compacted: c.compacted,
                ended: c.ended.then(|| if c.end_reason.is_empty() { "ended".into() } else { c.end_reason.clone() }),
                resume: Some(c.id.as_str()) == resume,
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

/// Result of `shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownReply {
    /// The pid of the daemon that is stopping, so a caller can wait for it to exit.
    pub pid: u32,
}

/// Result of `hook`: what the hook prints for the agent, if anything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookReply {
    /// Text for the agent's context (SessionStart); empty for nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub additional_context: String,
}

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

/// Params of `session.test_report`: the output a test runner printed, or a JUnit XML file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestReportParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// What the runner printed (its summary is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A JUnit XML report (absolute path; the daemon reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junit: Option<PathBuf>,
    /// The runner (cargo, pytest, jest, …); default: recognised from the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// The command that ran the tests, for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// End-to-end tests (default: by the runner, Playwright and Cypress being end-to-end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e: Option<bool>,
}

/// One suite's results as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRun {
    /// End-to-end rather than unit.
    pub e2e: bool,
    /// The suite.
    pub suite: crate::env::TestSuite,
}

/// Result of `session.test_report`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestReportReply {
    /// The suites found and recorded.
    pub runs: Vec<TestRun>,
}

/// Params of `session.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportParams {
    /// A directory or file inside the project (absolute).
    pub path: PathBuf,
    /// Write `.claude/session-memory.md` too (default); false only returns it.
    #[serde(default = "yes")]
    pub write: bool,
}

fn yes() -> bool {
    true
}

/// Result of `session.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportReply {
    /// The report, markdown.
    pub markdown: String,
    /// The file written, when asked to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
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
}
