//! OpenCode's events, as ccmem's OpenCode plugin (`client/agent-plugins/opencode/ccmem.js`)
//! sends them from OpenCode 1.18 (fixtures in `tests/fixtures/opencode/`): its own hook and
//! event names, the tool call in the hooks' usual fields. A shell command's exit status is
//! `metadata.exit`; a tool that threw comes as `tool.error`, with no result.

use super::*;
use crate::agent::hooks::{Kind, Tool};
use std::path::Path;

/// Reads an OpenCode payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let cwd = path(v, "cwd");
    let kind = match name.as_str() {
        "session.start" => {
            let source = word(v, "source");
            Kind::SessionStart { source: if source.is_empty() { "startup".into() } else { source } }
        }
        "chat.message" => Kind::Prompt { text: unquoted(&text(v, "prompt").unwrap_or_default()).to_string() },
        "tool.execute.after" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let response = v.get("tool_response").unwrap_or(&Value::Null);
            let tool = match tool_name.as_str() {
                "bash" => shell(input, response),
                "write" | "edit" => edit(&tool_name, input, response, cwd.as_deref()),
                "todowrite" => todo_list(input.get("todos"), "content"),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        // A tool that threw changed nothing; a command that could not run is no test result.
        "tool.error" => Kind::ToolUse { name: text(v, "tool_name").unwrap_or_default(), tool: Tool::Other },
        "session.idle" => Kind::Stop {
            last_message: text(v, "last_assistant_message").filter(|m| !m.trim().is_empty()),
            subagent: false,
            agent_transcript: None,
        },
        "session.compacted" => Kind::Compacted { summary: text(v, "compact_summary").unwrap_or_default() },
        "session.end" => Kind::SessionEnd { reason: word(v, "reason") },
        _ => Kind::Other(name.clone()),
    };
    let delivery = match name.as_str() {
        "tool.execute.after" | "tool.error" => text(v, "tool_use_id"),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Opencode,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        // OpenCode keeps its conversations in SQLite: what ccmem needs is in the events.
        transcript: None,
        kept_at: super::kept_at(v),
        cwd,
        project_dir: None,
        delivery: super::delivery(&name, delivery),
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

/// `opencode run "fix the tests"` sends the prompt inside the quotes it was given in.
fn unquoted(prompt: &str) -> &str {
    let t = prompt.trim();
    match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('"') => inner,
        _ => t,
    }
}

fn shell(input: &Value, response: &Value) -> Tool {
    let Some(command) = input.get("command").and_then(Value::as_str) else { return Tool::Other };
    let metadata = response.get("metadata").unwrap_or(&Value::Null);
    let exit = metadata.get("exit").and_then(Value::as_i64);
    let output = response
        .get("output")
        .and_then(Value::as_str)
        .or_else(|| metadata.get("output").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    let command = match input.get("workdir").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        Some(dir) => format!("cd {} && {command}", ccmem_proto::sh_quote(dir)),
        None => command.to_string(),
    };
    // A command stopped by its time limit reports no code.
    let interrupted = exit.is_none() && output.contains("bash tool terminated command after exceeding timeout");
    Tool::Shell { command, output, exit, failed: exit.is_some_and(|c| c != 0), interrupted }
}

/// `write` (`filePath`, `content`; `metadata.exists` says whether it was there) and `edit`
/// (`metadata.filediff` with its additions and deletions).
fn edit(tool: &str, input: &Value, response: &Value, cwd: Option<&Path>) -> Tool {
    let metadata = response.get("metadata").unwrap_or(&Value::Null);
    let path = input
        .get("filePath")
        .and_then(Value::as_str)
        .or_else(|| metadata.get("filepath").and_then(Value::as_str))
        .filter(|p| !p.is_empty() && p.len() <= crate::text::MAX_PATH_BYTES);
    let Some(path) = path else { return Tool::Other };
    let path = absolute(path, cwd);
    let (created, added, removed) = if tool == "write" {
        let lines = input.get("content").and_then(Value::as_str).map_or(0, |c| c.lines().count() as u64);
        (metadata.get("exists").and_then(Value::as_bool) == Some(false), lines, 0)
    } else {
        let diff = metadata.get("filediff").unwrap_or(&Value::Null);
        let n = |k: &str| diff.get(k).and_then(Value::as_u64).unwrap_or(0);
        (false, n("additions"), n("deletions"))
    };
    Tool::Edits(vec![edit_of(tool, path, created, added, removed)])
}
