//! Pi's events, as ccmem's Pi extension (`client/agent-plugins/pi/ccmem.ts`) sends them from
//! Pi 0.73 (fixtures in `tests/fixtures/pi/`), and as `ccmemctl import` replays a Pi or Oh My
//! Pi session file: Pi's own event names, the tool call in the hooks' usual fields. A shell
//! command's exit status is only in its text (`Command exited with code N`); Pi has no todo
//! tool, Oh My Pi's `todo` is read.

use super::*;
use crate::agent::hooks::{Kind, TaskChange, Tool};
use ccmem_proto::model::session::TodoStatus;
use std::path::Path;

/// Reads a Pi payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let cwd = path(v, "cwd");
    let kind = match name.as_str() {
        "session_start" => {
            let source = word(v, "source");
            Kind::SessionStart { source: if source.is_empty() { "startup".into() } else { source } }
        }
        "before_agent_start" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "tool_result" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let response = v.get("tool_response").unwrap_or(&Value::Null);
            let is_error = response.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            let output = content_text(response.get("content"));
            let tool = match tool_name.as_str() {
                "bash" => shell(input, output, is_error),
                _ if is_error => Tool::Other,
                "write" | "edit" => edit(&tool_name, input, response, cwd.as_deref()),
                "todo" => todo_op(input, &output),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        "agent_end" => Kind::Stop {
            last_message: text(v, "last_assistant_message").filter(|m| !m.trim().is_empty()),
            subagent: false,
            agent_transcript: None,
        },
        "session_before_compact" => Kind::PreCompact {
            trigger: String::new(),
            instructions: text(v, "custom_instructions").unwrap_or_default(),
        },
        "session_compact" => Kind::Compacted { summary: text(v, "compact_summary").unwrap_or_default() },
        "session_shutdown" => Kind::SessionEnd { reason: word(v, "reason") },
        _ => Kind::Other(name.clone()),
    };
    let delivery = match name.as_str() {
        "tool_result" => text(v, "tool_use_id"),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Pi,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        // Pi's session file is a tree the extension already walks: what ccmem needs is in the events.
        transcript: None,
        kept_at: super::kept_at(v),
        cwd,
        project_dir: None,
        delivery: super::delivery(&name, delivery.map(|d| format!("{:016x}", fnv(d.as_bytes())))),
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

/// The text blocks of a tool result's `content`.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// How Pi's bash tool ended, from the end of its text: `Command exited with code N` (an
/// error), `Command timed out after N seconds`, `Command aborted`; no such line and no
/// error: 0.
pub(crate) fn shell_end(output: &str, is_error: bool) -> (Option<i64>, bool) {
    let last = output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if let Some(n) = last.strip_prefix("Command exited with code ") {
        return (n.trim().parse().ok(), false);
    }
    if last.starts_with("Command timed out") || last == "Command aborted" {
        return (None, true);
    }
    (if is_error { None } else { Some(0) }, false)
}

fn shell(input: &Value, output: String, is_error: bool) -> Tool {
    let Some(command) = input.get("command").and_then(Value::as_str) else { return Tool::Other };
    let (exit, interrupted) = shell_end(&output, is_error);
    Tool::Shell {
        command: command.to_string(),
        failed: exit.is_some_and(|c| c != 0) || (is_error && !interrupted && exit.is_none()),
        output,
        exit,
        interrupted,
    }
}

/// `write` (`path`, `content`) and `edit` (`path`, `edits: [{oldText, newText}]`, or one
/// `oldText`/`newText` pair in older versions): the file and the lines changed. Pi does not
/// say whether a write made the file: ccmem's extension looks before the call runs, and says
/// so in `tool_response.created`.
///
/// Oh My Pi's `edit` may instead take an apply_patch body (`*** Begin Patch`, `*** Update
/// File: PATH`) in `input`: its files are the patch's.
fn edit(tool: &str, input: &Value, response: &Value, cwd: Option<&Path>) -> Tool {
    if let Some(patch) =
        input.get("input").and_then(Value::as_str).filter(|p| p.trim_start().starts_with("*** Begin Patch"))
    {
        let files = super::codex::parse_patch(patch);
        if files.is_empty() {
            return Tool::Other;
        }
        return Tool::Edits(
            files
                .into_iter()
                .map(|f| crate::agent::hooks::FileEdit {
                    path: absolute(&f.path, cwd),
                    summary: f.summary.replacen("apply_patch", tool, 1),
                    tool: tool.into(),
                    ..f
                })
                .collect(),
        );
    }
    let path = input
        .get("path")
        .or_else(|| input.get("file_path"))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty() && p.len() <= crate::text::MAX_PATH_BYTES);
    let Some(path) = path else { return Tool::Other };
    let path = absolute(path, cwd);
    let (added, removed) = if tool == "write" {
        (input.get("content").and_then(Value::as_str).map_or(0, |c| c.lines().count() as u64), 0)
    } else {
        let pair = |e: &Value| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            changed_lines(&s("oldText"), &s("newText"))
        };
        match input.get("edits").and_then(Value::as_array) {
            Some(edits) => edits.iter().map(pair).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
            None => pair(input),
        }
    };
    let created = tool == "write" && response.get("created").and_then(Value::as_bool) == Some(true);
    Tool::Edits(vec![edit_of(tool, path, created, added, removed)])
}

/// Oh My Pi's `todo` tool: `init` sets the whole list (phases of items; the result says
/// each one's status), `done` finishes one item by its text.
fn todo_op(input: &Value, result: &str) -> Tool {
    match input.get("op").and_then(Value::as_str) {
        Some("init") => {
            let statuses = remaining(result);
            let items = input.get("list").and_then(Value::as_array).into_iter().flatten().flat_map(|phase| {
                phase.get("items").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
            });
            Tool::Plan(
                items
                    .take(crate::session::rules::caps::TODOS)
                    .filter_map(|item| {
                        let status = statuses.iter().find(|(t, _)| t == item).map(|(_, s)| s.as_str());
                        todo(item, status, None)
                    })
                    .collect(),
            )
        }
        Some("done") => match input.get("task").and_then(Value::as_str).map(crate::text::clean) {
            Some(subject) if !subject.is_empty() => Tool::Task(TaskChange {
                subject: Some(subject),
                status: Some(TodoStatus::Completed),
                ..Default::default()
            }),
            _ => Tool::Other,
        },
        _ => Tool::Other,
    }
}

/// The items of a `todo` result (`Remaining items (N):\n  - text [status] (phase)`), with
/// their statuses.
fn remaining(result: &str) -> Vec<(String, String)> {
    result
        .lines()
        .filter_map(|l| {
            let item = l.trim().strip_prefix("- ")?;
            let (text, rest) = item.rsplit_once(" [")?;
            let (status, _) = rest.split_once(']')?;
            Some((text.to_string(), status.to_string()))
        })
        .collect()
}
