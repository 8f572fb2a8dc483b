//! A hook's payload read: the event, its conversation, and the fields each event carries.

use super::*;

/// Longest conversation id taken (Claude Code's are 36-character UUIDs).
pub(super) const MAX_ID_BYTES: usize = 256;

/// One hook event, read from the agent's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// The agent's conversation id.
    pub conversation: Option<String>,
    /// The conversation's transcript file.
    pub transcript: Option<String>,
    /// Where the agent works.
    pub cwd: Option<PathBuf>,
    /// Where the agent was started (`CLAUDE_PROJECT_DIR`, which `ccmemctl hook` adds): the
    /// project, even when a command has moved `cwd` out of it.
    pub project_dir: Option<PathBuf>,
    /// What identifies this delivery (the event and its `tool_use_id` or `prompt_id`): the
    /// same event delivered twice (the plugin and `hooks install` both in place) counts once.
    pub delivery: Option<String>,
    /// The event's place in a transcript `ccmemctl import` replays (1, 2, …): an event the
    /// conversation already took from an import is not counted again, whatever stopped the
    /// import and sent it twice (a daemon shut down midway, the command run again).
    pub import_seq: Option<u64>,
    /// What happened.
    pub kind: Kind,
}

/// Hook events this daemon acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A conversation began (startup, resume, clear, compact, fork).
    SessionStart { source: String },
    /// The user sent a prompt.
    Prompt { text: String },
    /// A tool finished; `failed` when it reported an error (PostToolUseFailure: for Bash, a
    /// non-zero exit), whose text is then the response.
    ToolUse { tool: String, input: Value, response: Value, failed: bool },
    /// The agent (or a subagent, with its own transcript) stopped.
    Stop { last_message: Option<String>, subagent: bool, agent_transcript: Option<String> },
    /// The conversation is about to be compacted: `manual` (`/compact`) or `auto`, with the
    /// user's instructions for it.
    PreCompact { trigger: String, instructions: String },
    /// Claude Code told the user something (it needs a permission, it waits for input).
    Notification { message: String },
    /// The conversation ended, and why (clear, logout, prompt_input_exit, other).
    SessionEnd { reason: String },
    /// A task event (TaskCreated, TaskCompleted, …) with its payload.
    Task { event: String, payload: Value },
    /// Anything else: accepted, registers activity, nothing more.
    Other(String),
}

pub(super) fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Reads a payload; None when it is not a hook payload at all.
pub fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let kind = match name.as_str() {
        "SessionStart" => Kind::SessionStart { source: text(v, "source").unwrap_or_else(|| "startup".into()) },
        "UserPromptSubmit" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "PostToolUse" | "PostToolUseFailure" => Kind::ToolUse {
            tool: text(v, "tool_name").unwrap_or_default(),
            input: v.get("tool_input").cloned().unwrap_or(Value::Null),
            response: match name.as_str() {
                "PostToolUse" => v.get("tool_response").cloned().unwrap_or(Value::Null),
                _ => {
                    serde_json::json!({"error": text(v, "error").unwrap_or_default(), "interrupted": v.get("is_interrupt")})
                }
            },
            failed: name == "PostToolUseFailure",
        },
        "Stop" | "SubagentStop" => Kind::Stop {
            last_message: text(v, "last_assistant_message"),
            subagent: name == "SubagentStop",
            agent_transcript: text(v, "agent_transcript_path")
                .filter(|p| p.len() <= crate::text::MAX_PATH_BYTES)
                .map(|p| home(&p)),
        },
        "PreCompact" => Kind::PreCompact {
            trigger: word(v, "trigger"),
            instructions: text(v, "custom_instructions").unwrap_or_default(),
        },
        "Notification" => Kind::Notification { message: text(v, "message").unwrap_or_default() },
        "SessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        n if n.starts_with("Task") => Kind::Task { event: name.clone(), payload: v.clone() },
        _ => Kind::Other(name.clone()),
    };
    // Identifiers and paths have real sizes; anything longer is junk that would only cost
    // memory (a conversation id is kept with every conversation).
    let path = |key: &str| text(v, key).filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(PathBuf::from);
    let delivery = match name.as_str() {
        "PostToolUse" | "PostToolUseFailure" => text(v, "tool_use_id"),
        // Not the prompt id alone: a background agent's `<task-notification>` comes with
        // the id of the prompt that started it.
        "UserPromptSubmit" => text(v, "prompt_id")
            .map(|id| format!("{id}:{:016x}", fnv(text(v, "prompt").unwrap_or_default().as_bytes()))),
        _ => None,
    }
    .filter(|id| is_id(id))
    .map(|id| format!("{name}:{id}"));
    Some(Hook {
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        transcript: text(v, "transcript_path").filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(|p| home(&p)),
        cwd: path("cwd"),
        project_dir: path("project_dir").filter(|p| p.is_absolute()),
        delivery,
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        kind,
    })
}

/// FNV-1a: a cheap fingerprint, to tell two texts apart.
pub(super) fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3))
}

/// A short keyword of the payload (a reason, a trigger), or "" when it is not one.
pub(super) fn word(v: &Value, key: &str) -> String {
    text(v, key).filter(|w| w.len() <= 64 && is_id(w)).unwrap_or_default()
}

/// `~/x` is the user's `x`: Claude Code has sent transcript paths that way.
pub(super) fn home(path: &str) -> String {
    match (path.strip_prefix("~/"), directories::BaseDirs::new()) {
        (Some(rest), Some(dirs)) => dirs.home_dir().join(rest).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A conversation id as agents make them (UUIDs, or words of letters, digits, `-`, `_`, `.`
/// and `:`, starting with a letter or digit): it is printed in the context, the report and
/// `claude --resume` commands, so an id with line breaks, backticks or shell characters
/// would be an injection, not an id.
pub(super) fn is_id(s: &str) -> bool {
    // It starts with a letter or digit: `--dangerously-skip-permissions` is an option to
    // `claude --resume "$(ccmemctl resume-id)"`, not an id.
    s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.len() <= MAX_ID_BYTES
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}
