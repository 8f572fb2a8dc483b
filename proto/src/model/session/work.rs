//! What a session records of the work: commands, files, todos, plan, git, activity.

use super::*;

/// A shell command the agent ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShellCommand {
    /// ISO 8601.
    pub timestamp: String,
    /// The command, redacted.
    pub command: String,
    /// The conversation that ran it.
    pub conversation: String,
}

/// One command (seed 001's `commands_executed` entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandRecord {
    /// ISO 8601 start.
    pub timestamp: String,
    /// What the user asked for, or the command line.
    pub command: String,
    /// Workflow name, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// Seconds it took, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<f64>,
    /// completed, partial, failed, … when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// One file's history (seed 001's `files_modified` value). Kept compact: a session may
/// track a hundred thousand files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileRecord {
    /// ISO 8601 on the wire.
    pub first_modified: Timestamp,
    /// ISO 8601 on the wire.
    pub last_modified: Timestamp,
    /// Changes counted.
    pub modification_count: u64,
    /// Comma-separated descriptions of the changes.
    pub changes_summary: Box<str>,
    /// Workflows that touched it.
    pub workflows: Box<[Box<str>]>,
    /// The file was created this session.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    /// The file was deleted after its last change.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// Seed 001's context snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextSnapshot {
    /// The current focus.
    pub active_task: String,
    /// Done so far.
    pub completed_steps: Vec<String>,
    /// Still to do.
    pub next_steps: Vec<String>,
    /// Files central to the task (most often modified first).
    pub key_files: Vec<String>,
    /// What stands in the way.
    pub blocking_issues: Vec<String>,
}

/// Seed 001's statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Statistics {
    /// Commands recorded.
    pub total_commands: u64,
    /// Distinct files modified.
    pub total_files_modified: u64,
    /// Distinct workflows used.
    pub total_workflows: u64,
    /// Since the session was created.
    pub session_duration_minutes: u64,
}

/// Seed 004's todo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Todo {
    /// The agent's id for it (TaskCreate's `#3`); TodoWrite's items have none. Not written
    /// to the checkpoint, whose todos are seed 004's three fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What to do.
    pub content: String,
    /// pending | in_progress | completed.
    pub status: TodoStatus,
    /// Present continuous form, shown while in progress.
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// Seed 004's todo status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    #[default]
    Pending,
    /// Being done.
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The mark between a checkbox's brackets wherever ccmem shows a todo: `x` done, `~` in
    /// progress, a space open.
    pub fn mark(self) -> char {
        match self {
            TodoStatus::Completed => 'x',
            TodoStatus::InProgress => '~',
            TodoStatus::Pending => ' ',
        }
    }
}

/// Seed 004's phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phase {
    /// e.g. "Phase 3: API Integration".
    pub name: String,
    /// 0–100.
    pub completion: f64,
    /// Optional chunk identifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<String>,
    /// Files in the chunk.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunk_files: Vec<String>,
}

/// Seed 004's plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Plan {
    /// File name.
    pub file: String,
    /// Absolute path.
    pub path: String,
    /// Tasks in all.
    pub total_tasks: u64,
    /// Tasks done.
    pub completed_tasks: u64,
    /// 0–100.
    pub progress: f64,
    /// ISO 8601.
    pub last_modified: String,
}

/// Seed 004's git block. Outside a repository (or without git): branch "unknown", zeros.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GitState {
    /// Current branch, `HEAD (detached)`, or "unknown".
    pub branch: String,
    /// Anything staged, unstaged or untracked.
    pub has_uncommitted_changes: bool,
    /// Paths with staged changes.
    pub staged_files: u64,
    /// Paths with unstaged changes.
    pub unstaged_files: u64,
    /// Untracked paths.
    pub untracked_files: u64,
    /// Short hash and subject of HEAD, "" before the first commit.
    pub last_commit: String,
}

impl Default for GitState {
    fn default() -> Self {
        Self {
            branch: "unknown".into(),
            has_uncommitted_changes: false,
            staged_files: 0,
            unstaged_files: 0,
            untracked_files: 0,
            last_commit: String::new(),
        }
    }
}

/// Lines added and deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LineCounts {
    pub added: u64,
    pub deleted: u64,
}

/// Seed 004's activity summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActivitySummary {
    /// Files created this session.
    pub files_created: u64,
    /// Files modified this session.
    pub files_modified: u64,
    /// Lines added since the session started: git's diff and the session's new files git
    /// does not track yet; outside git, the agent's own patches.
    pub lines_added: u64,
    /// Lines deleted since the session started (the same sources).
    pub lines_deleted: u64,
    /// Commits since the session started (git).
    pub commits: u64,
}
