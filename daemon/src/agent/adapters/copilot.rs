//! GitHub Copilot CLI's hook payloads, in the Claude-like form it sends to hooks declared
//! under PascalCase event names (the form of the hooks ccmem installs, and of a project's
//! `.claude/settings.json` hooks, which Copilot CLI runs too), as Copilot CLI 1.0 sends them
//! (fixtures in `tests/fixtures/copilot/`): Claude's tool names with Copilot's own inputs
//! (`Write` is `create` with `path` and `file_text`), a tool's result as
//! `{result_type, text_result_for_llm}`, a shell command's exit status only in its text
//! (`<shellId: N completed with exit code X>`). Events inside a subagent name its parent.

use super::*;
use crate::agent::hooks::{Kind, Tool};
use std::path::Path;

/// Reads a Copilot CLI payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let cwd = path(v, "cwd");
    // A subagent's own events: its work reaches the conversation through its tool calls.
    let subagent = v.get("parent_agent_id").and_then(Value::as_str).is_some_and(|p| !p.is_empty());
    let kind = match name.as_str() {
        "SessionStart" => Kind::SessionStart {
            source: match word(v, "source").as_str() {
                "resume" => "resume".into(),
                _ => "startup".into(),
            },
        },
        "UserPromptSubmit" if subagent => Kind::Other(name.clone()),
        "UserPromptSubmit" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "PostToolUse" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let result = v.pointer("/tool_result/text_result_for_llm").and_then(Value::as_str).unwrap_or_default();
            let tool = match tool_name.as_str() {
                // `powershell` on Windows, with the same `<shellId: …>` trailer.
                "Bash" | "bash" | "powershell" => shell(input, result),
                "Write" | "create" | "Edit" | "edit" => edit(&tool_name, input, cwd.as_deref()),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        // A tool that failed (a file that is already there, a path not found) changed nothing.
        "PostToolUseFailure" => Kind::ToolUse { name: text(v, "tool_name").unwrap_or_default(), tool: Tool::Other },
        "Stop" | "SubagentStop" => Kind::Stop {
            last_message: text(v, "last_assistant_message").filter(|m| !m.trim().is_empty()),
            subagent: subagent || name == "SubagentStop",
            agent_transcript: None,
        },
        "PreCompact" => Kind::PreCompact {
            trigger: word(v, "trigger"),
            instructions: text(v, "custom_instructions").unwrap_or_default(),
        },
        "Notification" => Kind::Notification { message: text(v, "message").unwrap_or_default() },
        "SessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        _ => Kind::Other(name.clone()),
    };
    // No tool-call ids: an event is told from another by its time and what it carries.
    let delivery = match name.as_str() {
        "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure" | "Stop" => timed_delivery(v),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Copilot,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        // Its `events.jsonl` is not Claude Code's transcript: the last words come in the payload.
        transcript: None,
        kept_at: super::kept_at(v),
        cwd,
        project_dir: path(v, "project_dir").filter(|p| p.is_absolute()),
        delivery: super::delivery(&name, delivery),
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

/// The exit status at the end of a shell command's result, `<shellId: N completed with exit
/// code X>`, and the output before it. A command still running (`mode: async`, or past its
/// wait) reports no code.
pub(crate) fn shell_result(text: &str) -> (String, Option<i64>) {
    let trimmed = text.trim_end();
    let Some(start) = trimmed.rfind("<shellId: ") else { return (text.to_string(), None) };
    let tail = &trimmed[start..];
    let code = tail
        .strip_suffix('>')
        .and_then(|t| t.rsplit_once("completed with exit code "))
        .and_then(|(_, n)| n.trim().parse().ok());
    match code {
        Some(c) if !tail[1..].contains('<') => (trimmed[..start].trim_end().to_string(), Some(c)),
        _ => (text.to_string(), None),
    }
}

fn shell(input: &Value, result: &str) -> Tool {
    let Some(command) = input.get("command").and_then(Value::as_str) else { return Tool::Other };
    let (output, exit) = shell_result(result);
    Tool::Shell { command: command.to_string(), output, exit, failed: exit.is_some_and(|c| c != 0), interrupted: false }
}

/// `create` (`path`, `file_text`) and `edit` (`path`, `old_str`, `new_str`).
fn edit(tool: &str, input: &Value, cwd: Option<&Path>) -> Tool {
    let path = input
        .get("path")
        .or_else(|| input.get("file_path"))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty() && p.len() <= crate::text::MAX_PATH_BYTES);
    let Some(path) = path else { return Tool::Other };
    let path = absolute(path, cwd);
    let s = |k: &[&str]| k.iter().find_map(|k| input.get(*k).and_then(Value::as_str)).unwrap_or_default();
    let created = matches!(tool, "Write" | "create");
    let (added, removed) = if created {
        (s(&["file_text", "content"]).lines().count() as u64, 0)
    } else {
        changed_lines(s(&["old_str", "old_string"]), s(&["new_str", "new_string"]))
    };
    Tool::Edits(vec![edit_of(tool, path, created, added, removed)])
}
