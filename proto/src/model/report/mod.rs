//! The session memory report, `.claude/session-memory.md` (seed 000): its model
//! ([`SessionMemory`]), its markdown form ([`serialize`]), the reader of that form ([`parse`],
//! which never fails: damaged input gives partial data and warnings) and its rules
//! ([`validate`]).
//!
//! Every text field is written escaped (`\\`, `\|`, `` \` ``, `\n`), so tables, code spans and
//! lists stay unambiguous whatever a title holds, and `parse(serialize(m)) == m` for every
//! valid `m`.

use crate::model::environment::{
    BuildState, BuildStatus, DependencyState, DependencyStatus, EnvironmentState, ManagerStatus, ServerInfo,
    ServerStatus, SuiteStatus, TestFailure, TestResults, TestSuite,
};
use serde::{Deserialize, Serialize};

mod check;
mod read;
mod table;
mod write;

pub use check::{check, is_imperative, validate, IMPERATIVE_VERBS};
pub use read::{parse, Parsed};
pub use table::{esc, unesc};
pub use write::serialize;

/// The report's sections, in order.
pub const SECTIONS: [&str; 7] = [
    "Executive Summary",
    "Task Status",
    "Blockers",
    "Test Results",
    "Environment State",
    "Files Needing Attention",
    "Next Steps",
];

/// What the Test Results section says when no test run was seen.
pub const NO_TESTS: &str = "No test run seen.";

// Seed 000 requires every section of [`SECTIONS`], not the blocks inside them: a block with
// nothing in it is left out, and a section left with nothing says so in one sentence (these
// below), which the reader skips. Reports written before (with `**Source**: none`,
// `No phases.`, `Not run.`, `No servers.`, `None.`) still read the same.

/// What the Task Status section says when there is no task list and no todos.
pub const NO_TASKS: &str = "No task list or todos seen yet.";

/// What the Task Status section says after its source and phases when no task is open.
pub const NO_OPEN_TASKS: &str = "No open tasks.";

/// What the Blockers section says when nothing stands in the way.
pub const NO_BLOCKERS: &str = "No blockers.";

/// What the Environment State section says when no server, install or build was seen.
pub const NO_ENVIRONMENT: &str = "No dev servers, installs or builds seen.";

/// What the Files Needing Attention section says when no file does.
pub const NO_FILES: &str = "No files need attention.";

/// What the Next Steps section says when no step is known.
pub const NO_STEPS: &str = "No next steps yet.";

/// The title of the section ccmem adds after the Executive Summary.
pub const WORK: &str = "Where You Left Off";

/// The format version written in the header.
pub const FORMAT_VERSION: &str = "1.0";
/// The report stays under this size.
pub const MAX_BYTES: usize = 50 * 1024;

/// Between the items of the header's `**Left Out**` line.
pub const LEFT_OUT_SEPARATOR: &str = "; ";

/// Seed 000's limits.
pub mod limits {
    /// Blockers kept (low priority dropped first).
    pub const BLOCKERS: usize = 50;
    /// Characters of a blocker's title.
    pub const TITLE_CHARS: usize = 100;
    /// Files needing attention.
    pub const FILES: usize = 50;
    /// Next steps.
    pub const NEXT_STEPS: usize = 10;
    /// Next tasks.
    pub const NEXT_TASKS: usize = 5;
}

/// The whole report (seed 000's SessionMemory).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionMemory {
    /// Where and when.
    pub metadata: SessionMetadata,
    /// Five sentences.
    pub summary: ExecutiveSummary,
    /// Where the agent left off (ccmem's addition to seed 000): the task, the todo list with
    /// each item's status, unresolved failures, finished work, the agent's last words,
    /// decisions and findings. One line each; `### ` lines head its parts.
    pub work: Vec<String>,
    /// The task list's progress.
    pub task_status: TaskStatus,
    /// What stands in the way, high priority first.
    pub blockers: Vec<BlockerEntry>,
    /// Unit and end-to-end tests.
    pub test_results: TestResults,
    /// Servers, dependencies, build.
    pub environment: EnvironmentState,
    /// Files to look at.
    pub files_needing_attention: Vec<FileReference>,
    /// What to do, most urgent first.
    pub next_steps: Vec<NextStep>,
}

/// Seed 000's SessionMetadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionMetadata {
    /// From the manifest, else the directory.
    pub project_name: String,
    /// ISO 8601.
    pub generated_at: String,
    /// Current git branch, or `unknown`.
    pub branch: String,
    /// e.g. `2h 15m`.
    pub session_duration: Option<String>,
    /// Format version, e.g. `1.0`.
    pub version: String,
    /// What was left out to keep the report under [`MAX_BYTES`], one item each (`280 of 300
    /// phases`, `12 blockers`): ccmem's addition to seed 000, so that a reader knows the
    /// lists are not whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// The Task Status source of a project without a task list: the agent's own todos.
pub const AGENT_TODOS: &str = "the agent's todos";

/// Seed 000's ExecutiveSummary: one sentence each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutiveSummary {
    /// What the project is.
    pub project_description: String,
    /// e.g. `60/155 tasks complete (38.7%)`.
    pub completion_status: String,
    /// The phase in progress.
    pub current_phase: String,
    /// The first high-priority blocker, if any.
    pub major_blocker: Option<String>,
    /// The first thing to do.
    pub next_action: String,
}

/// Seed 000's TaskStatus.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskStatus {
    /// The task list, relative to the root; empty when there is none.
    pub source_file: String,
    /// Per phase, in file order.
    pub phases: Vec<PhaseStatus>,
    /// The first incomplete task.
    pub current_task: Option<TaskReference>,
    /// The incomplete tasks after it (at most 5).
    pub next_tasks: Vec<TaskReference>,
}

/// One phase's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PhaseStatus {
    /// e.g. `Setup`.
    pub name: String,
    /// Tasks done.
    pub completed: u64,
    /// Tasks in all.
    pub total: u64,
    /// completed / total × 100, one decimal.
    pub percentage: f64,
}

/// A task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskReference {
    /// e.g. `T032` (may be empty in a plain checklist).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its phase.
    pub phase: String,
}

/// High, medium or low.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Stops the work.
    High,
    /// Slows it.
    #[default]
    Medium,
    /// Worth a look.
    Low,
}

/// Seed 000's BlockerEntry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BlockerEntry {
    /// How much it matters.
    pub priority: Priority,
    /// The task it blocks, if one.
    pub task_id: Option<String>,
    /// At most 100 characters.
    pub title: String,
    /// The detail.
    pub description: String,
    /// Starts with an imperative verb.
    pub required_action: String,
    /// ISO 8601.
    pub detected_at: Option<String>,
}

/// Seed 000's FileReference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FileReference {
    /// Relative, forward slashes.
    pub path: String,
    /// Where in it.
    pub line: Option<u32>,
    /// Why: "Failing test", "TODO comment", …
    pub reason: String,
    /// How much it matters.
    pub priority: Priority,
}

/// When a step is due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepPriority {
    /// Now: blockers, failing tests.
    Immediate,
    /// This phase.
    #[default]
    ShortTerm,
    /// The next phase.
    MediumTerm,
    /// Later.
    LongTerm,
}

/// Seed 000's NextStep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NextStep {
    /// When.
    pub priority: StepPriority,
    /// Starts with an imperative verb.
    pub action: String,
    /// A file or task it concerns.
    pub reference: Option<String>,
}

impl TaskStatus {
    /// (done, total) over every phase.
    pub fn totals(&self) -> (u64, u64) {
        self.phases.iter().fold((0, 0), |a, p| (a.0 + p.completed, a.1 + p.total))
    }
}

impl SessionMemory {
    /// What an empty file reads as.
    pub fn no_data() -> Self {
        SessionMemory {
            metadata: SessionMetadata {
                project_name: "unknown".into(),
                generated_at: "unknown".into(),
                branch: "unknown".into(),
                session_duration: None,
                version: FORMAT_VERSION.into(),
                left_out: Vec::new(),
            },
            summary: ExecutiveSummary {
                project_description: "No session data".into(),
                completion_status: "0/0 tasks complete (0.0%)".into(),
                current_phase: "unknown".into(),
                major_blocker: None,
                next_action: "Start a session".into(),
            },
            ..Default::default()
        }
    }
}
