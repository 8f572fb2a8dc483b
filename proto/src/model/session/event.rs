//! What happens to a session: the events applied to it and how it ends.

use super::*;

/// Something that happened in a project, as a client reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SessionEvent {
    /// A file was created or changed. `path` is absolute or relative to the root.
    FileEdited {
        /// The file.
        path: String,
        /// What changed, in a few words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The workflow that changed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workflow: Option<String>,
        /// The file is new.
        #[serde(default)]
        created: bool,
    },
    /// A file was deleted.
    FileDeleted {
        /// The file.
        path: String,
    },
    /// The agent ran a command for the user.
    Command {
        /// The request or command line.
        command: String,
        /// Workflow name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workflow: Option<String>,
        /// completed | partial | failed | …
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// How long it took.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_seconds: Option<f64>,
    },
    /// The agent's whole task list, as it now stands.
    Todos {
        /// The list.
        todos: Vec<Todo>,
    },
    /// Updates to the context snapshot; absent fields are left as they are.
    Context {
        /// New focus.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        active_task: Option<String>,
        /// Steps finished (appended).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        completed_steps: Vec<String>,
        /// Replaces the next steps when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next_steps: Option<Vec<String>>,
        /// Replaces the blocking issues when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blocking_issues: Option<Vec<String>>,
    },
    /// The current phase.
    Phase(Phase),
    /// Replaces the context notes.
    Note {
        /// The notes.
        text: String,
    },
    /// A warning for the user.
    Warning {
        /// The warning.
        text: String,
    },
    /// A dev server started listening (`status: running`) or went away (`stopped`).
    Server(ServerInfo),
    /// A test run's results.
    Tests {
        /// The suite as run.
        suite: TestSuite,
        /// End-to-end rather than unit.
        #[serde(default)]
        e2e: bool,
    },
    /// A build's outcome.
    Build(BuildStatus),
}

/// A session that has ended, as kept in the daemon's archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedSession {
    /// Why it ended.
    pub ended: EndReason,
    /// ISO 8601.
    pub ended_at: String,
    /// Its final state.
    pub session: Session,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// No activity for the session TTL.
    Expired,
    /// `ccmemctl reset-session`.
    Reset,
    /// `ccmemctl unwatch`.
    Unwatched,
    /// Its tracker file could not be read; what was left is archived as found.
    Restored,
    /// Its directory was deleted or moved away.
    Vanished,
    /// A past conversation imported into the project's history (`ccmemctl import --into-history`).
    Imported,
}
