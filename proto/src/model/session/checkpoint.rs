//! Seed 004's checkpoint file, `.claude/.project-state.json`, and its limits.

use super::*;

/// The last checkpoint the daemon wrote for a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointInfo {
    /// ISO 8601.
    pub timestamp: String,
    /// Seed 004's reason.
    pub reason: CheckpointReason,
    /// Seed 004's type.
    pub kind: CheckpointType,
    /// Size of `.project-state.json`.
    pub bytes: u64,
    /// Where it went.
    pub path: PathBuf,
}

/// Seed 004's `checkpoint_reason`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckpointReason {
    /// Periodic save, session expiry, daemon shutdown.
    #[default]
    #[serde(rename = "automatic")]
    Automatic,
    /// The user asked.
    #[serde(rename = "manual")]
    Manual,
    /// A phase finished.
    #[serde(rename = "phase_complete")]
    PhaseComplete,
    /// The agent stopped.
    #[serde(rename = "Stop hook")]
    StopHook,
}

/// Seed 004's `checkpoint_type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointType {
    /// The periodic timer.
    #[default]
    Periodic,
    /// An event: the agent stopped, the session expired, the daemon is stopping.
    EventDriven,
    /// The user asked.
    UserRequested,
}

/// Seed 004's checkpoint file, `.claude/.project-state.json`. The four required fields
/// are always present; the rest are present whenever known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectState {
    /// Required.
    pub session_id: String,
    /// Required: ISO 8601 time of the checkpoint.
    pub timestamp: String,
    /// Required: absolute path.
    pub project_root: String,
    /// Human-readable name.
    pub project_name: String,
    /// Relative paths, most recent first, ≤ 50.
    pub edited_files: Vec<String>,
    /// ≤ 50.
    pub todos: Vec<Todo>,
    /// Current phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Plan progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// Repository state.
    pub git: GitState,
    /// Since the session was created.
    pub session_duration_minutes: u64,
    /// Required.
    pub checkpoint_reason: CheckpointReason,
    /// Periodic, event-driven or user-requested.
    pub checkpoint_type: CheckpointType,
    /// Counts.
    pub activity_summary: ActivitySummary,
    /// ≤ 1,000 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_notes: String,
    /// Each ≤ 500 characters.
    pub warnings: Vec<String>,
}

/// The limits seed 004 sets on the checkpoint file.
pub mod limits {
    /// Most edited files listed.
    pub const EDITED_FILES: usize = 50;
    /// Most todos listed.
    pub const TODOS: usize = 50;
    /// Longest warning, in characters.
    pub const WARNING_CHARS: usize = 500;
    /// Longest context notes, in characters.
    pub const CONTEXT_NOTES_CHARS: usize = 1000;
    /// The file stays below this many bytes ("under 10 KB").
    pub const FILE_BYTES: usize = 10 * 1024;
}
