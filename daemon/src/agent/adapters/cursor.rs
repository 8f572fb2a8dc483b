//! Cursor's hook payloads (`~/.cursor/hooks.json`), **written from Cursor's documentation
//! (cursor.com/docs/hooks) and third-party captures, untested here**: Cursor cannot be
//! installed or run offline on this project's machines. Its own events are camelCase
//! (`sessionStart`, `beforeSubmitPrompt`, `postToolUse` with the tool's output as JSON text,
//! `afterFileEdit`, `afterAgentResponse`, `stop`, `preCompact`, `sessionEnd`), every one with
//! `conversation_id` and `workspace_roots`; the Claude Code hooks Cursor also runs (from
//! `.claude/settings*.json`) are read as Claude Code's, named Cursor's.

use super::*;
use crate::agent::hooks::{Kind, Tool};

/// Reads a Cursor payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    // A Claude Code hook Cursor runs: Claude's event names (and, it seems, its shape).
    if name.starts_with(|c: char| c.is_ascii_uppercase()) {
        let mut hook = super::claude::parse(v)?;
        hook.agent = Agent::Cursor;
        return Some(hook);
    }
    // The CLI sends `cwd: ""`: the workspace is where the agent works.
    let cwd = path(v, "cwd").filter(|c| !c.as_os_str().is_empty()).or_else(|| {
        v.get("workspace_roots").and_then(Value::as_array)?.first()?.as_str().map(std::path::PathBuf::from)
    });
    let kind = match name.as_str() {
        // No field tells a resumed conversation from a new one.
        "sessionStart" => Kind::SessionStart { source: "startup".into() },
        "beforeSubmitPrompt" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "postToolUse" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            // The tool's output is JSON text: `{"output": "…", "exitCode": 0}`.
            let output = match v.get("tool_output") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            let tool = match tool_name.as_str() {
                "Shell" => shell(input, &output),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        "postToolUseFailure" => Kind::ToolUse { name: text(v, "tool_name").unwrap_or_default(), tool: Tool::Other },
        "afterFileEdit" => Kind::ToolUse { name: "Write".into(), tool: file_edit(v) },
        // The turn's answer (the editor and the TUI; not `-p`).
        "afterAgentResponse" => Kind::Stop {
            last_message: text(v, "text").filter(|t| !t.trim().is_empty()),
            subagent: false,
            agent_transcript: None,
        },
        "preCompact" => Kind::PreCompact { trigger: word(v, "trigger"), instructions: String::new() },
        "sessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        _ => Kind::Other(name.clone()),
    };
    let delivery = match name.as_str() {
        "postToolUse" | "postToolUseFailure" => text(v, "tool_use_id"),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Cursor,
        conversation: text(v, "conversation_id").or_else(|| text(v, "session_id")).filter(|s| is_id(s)),
        transcript: None,
        kept_at: super::kept_at(v),
        cwd,
        // CLAUDE_PROJECT_DIR, which Cursor sets for its hooks too.
        project_dir: path(v, "project_dir").filter(|p| p.is_absolute()),
        delivery: super::delivery(&name, delivery),
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

fn shell(input: &Value, output: &Value) -> Tool {
    let Some(command) = input.get("command").and_then(Value::as_str) else { return Tool::Other };
    let exit = output.get("exitCode").or_else(|| output.get("exit_code")).and_then(Value::as_i64);
    let text = match output.get("output") {
        Some(Value::String(s)) => s.clone(),
        _ => output.as_str().unwrap_or_default().to_string(),
    };
    let command = match input.get("working_directory").or_else(|| input.get("cwd")).and_then(Value::as_str) {
        Some(dir) if !dir.is_empty() => format!("cd {} && {command}", ccmem_proto::sh_quote(dir)),
        _ => command.to_string(),
    };
    Tool::Shell { command, output: text, exit, failed: exit.is_some_and(|c| c != 0), interrupted: false }
}

/// `afterFileEdit`: the file and its edits (`[{old_string, new_string}]`).
fn file_edit(v: &Value) -> Tool {
    let Some(path) = text(v, "file_path").filter(|p| !p.is_empty() && p.len() <= crate::text::MAX_PATH_BYTES) else {
        return Tool::Other;
    };
    let (added, removed) = v
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            changed_lines(&s("old_string"), &s("new_string"))
        })
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    Tool::Edits(vec![edit_of("Write", path, false, added, removed)])
}
