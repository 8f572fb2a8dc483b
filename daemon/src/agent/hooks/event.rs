//! The neutral hook event: what any agent's adapter (`crate::agent::adapters`) makes of its
//! payloads and transcripts, and all the session rules below it see. Nothing here knows
//! which agent spoke, beyond [`Hook::agent`], kept for display and the resume command.

use ccmem_proto::model::agent::Agent;
use ccmem_proto::model::session::{Todo, TodoStatus};
use std::path::PathBuf;

/// One hook event, read from an agent's payload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hook {
    /// The agent that sent it.
    pub agent: Agent,
    /// The agent's conversation id.
    pub conversation: Option<String>,
    /// The conversation's transcript, in the form the daemon reads ([`Hook::transcript_kind`]).
    pub transcript: Option<String>,
    /// Where the agent keeps the conversation, in its own format (a Codex rollout, a Pi
    /// session file): never read, only looked for, so that recall offers to resume the
    /// conversation while it is there.
    #[serde(default)]
    pub kept_at: Option<String>,
    /// Where the agent works.
    pub cwd: Option<PathBuf>,
    /// Where the agent was started (`CLAUDE_PROJECT_DIR`, which `ccmemctl hook` adds): the
    /// project, even when a command has moved `cwd` out of it.
    pub project_dir: Option<PathBuf>,
    /// What identifies this delivery (the event and its tool call or prompt id): the same
    /// event delivered twice (the plugin and `hooks install` both in place) counts once.
    pub delivery: Option<String>,
    /// The event's place in a transcript `ccmemctl import` replays (1, 2, …): an event the
    /// conversation already took from an import is not counted again, whatever stopped the
    /// import and sent it twice (a daemon shut down midway, the command run again).
    pub import_seq: Option<u64>,
    /// When it happened, for an event replayed from a transcript; None: now.
    pub at: Option<chrono::DateTime<chrono::Utc>>,
    /// What happened.
    pub kind: Kind,
}

/// Hook events this daemon acts on.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// A conversation began (startup, resume, clear, compact, fork).
    SessionStart { source: String },
    /// The user sent a prompt.
    Prompt { text: String },
    /// A tool finished: its name (for counts and display) and what it did.
    ToolUse { name: String, tool: Tool },
    /// The agent (or a subagent, with its own transcript) stopped.
    Stop { last_message: Option<String>, subagent: bool, agent_transcript: Option<String> },
    /// The conversation is about to be compacted: `manual` or `auto`, with the user's
    /// instructions for it.
    PreCompact { trigger: String, instructions: String },
    /// The conversation was compacted, with the summary that now stands for what came
    /// before (empty when the agent does not say it).
    Compacted { summary: String },
    /// The agent told the user something (it needs a permission, it waits for input).
    Notification { message: String },
    /// The conversation ended, and why (clear, logout, prompt_input_exit, other).
    SessionEnd { reason: String },
    /// One change to the task list, said outside a tool call (Claude Code's TaskCreated
    /// and TaskCompleted events).
    Task(TaskChange),
    /// Anything else: accepted, registers activity, nothing more.
    Other(String),
}

/// What a finished tool call did, whichever agent's tool it was.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Tool {
    /// A shell command ran.
    Shell {
        /// The command line.
        command: String,
        /// What it printed (stdout and stderr, trimmed by `ccmemctl hook`).
        output: String,
        /// Its exit status, when the agent says it.
        exit: Option<i64>,
        /// It failed (a non-zero exit, or the agent said it failed).
        failed: bool,
        /// It was cut short: its output says nothing about the code.
        interrupted: bool,
    },
    /// Files were written, changed or deleted.
    Edits(Vec<FileEdit>),
    /// The agent's whole plan or todo list, as it now stands.
    Plan(Vec<Todo>),
    /// One change to the task list (made, renamed, its status changed, deleted).
    Task(TaskChange),
    /// Anything else (a read, a search, a call that failed and changed nothing).
    Other,
}

/// One file an agent's tool changed.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FileEdit {
    /// As the agent named it: absolute, or relative to the working directory.
    pub path: String,
    /// What changed, in a few words (`Edit: 2 → 3 lines`).
    pub summary: String,
    /// The tool's name, for the report.
    pub tool: String,
    /// The tool made the file.
    pub created: bool,
    /// The tool deleted the file.
    pub deleted: bool,
    /// Lines added and deleted, when the tool says.
    pub added: u64,
    /// See `added`.
    pub removed: u64,
}

/// One change to the agent's task list.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TaskChange {
    /// The task's id, when the agent gives tasks ids.
    pub id: Option<String>,
    /// Its subject (new, or renamed to).
    pub subject: Option<String>,
    /// Its new status.
    pub status: Option<TodoStatus>,
    /// Its "…ing" form.
    pub active_form: Option<String>,
    /// It was deleted.
    pub delete: bool,
}
