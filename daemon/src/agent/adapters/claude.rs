//! Claude Code's hook payloads (and the ones `ccmemctl import` replays from its
//! transcripts): tools by Claude's names, edits with their patches, TodoWrite's whole list,
//! the Task tools' changes by id.

use super::*;
use crate::agent::hooks::{FileEdit, Kind, TaskChange, Tool};
use ccmem_proto::model::session::Todo;

/// Reads a Claude Code payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let kind = match name.as_str() {
        "SessionStart" => Kind::SessionStart { source: text(v, "source").unwrap_or_else(|| "startup".into()) },
        "UserPromptSubmit" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "PostToolUse" | "PostToolUseFailure" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let failed = name == "PostToolUseFailure";
            let response = match failed {
                false => v.get("tool_response").cloned().unwrap_or(Value::Null),
                true => {
                    serde_json::json!({"error": text(v, "error").unwrap_or_default(), "interrupted": v.get("is_interrupt")})
                }
            };
            let tool = tool(&tool_name, input, &response, failed);
            Kind::ToolUse { name: tool_name, tool }
        }
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
        n if n.starts_with("Task") => task_event(&name, v),
        _ => Kind::Other(name.clone()),
    };
    let delivery = match name.as_str() {
        "PostToolUse" | "PostToolUseFailure" => text(v, "tool_use_id"),
        // Not the prompt id alone: a background agent's `<task-notification>` comes with
        // the id of the prompt that started it.
        "UserPromptSubmit" => text(v, "prompt_id")
            .map(|id| format!("{id}:{:016x}", fnv(text(v, "prompt").unwrap_or_default().as_bytes()))),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Claude,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        transcript: text(v, "transcript_path").filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(|p| home(&p)),
        kept_at: None,
        cwd: path(v, "cwd"),
        project_dir: path(v, "project_dir").filter(|p| p.is_absolute()),
        delivery: super::delivery(&name, delivery),
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

/// TaskCreated / TaskCompleted: `task_id`, `task_subject`, `task_description` (older
/// payloads nest a `task` object).
fn task_event(name: &str, payload: &Value) -> Kind {
    let v = payload.get("task").filter(|t| t.is_object()).unwrap_or(payload);
    let id = id_of(v.get("task_id").or_else(|| v.get("id")).or_else(|| v.get("taskId")));
    let subject = v.get("task_subject").and_then(Value::as_str).map(crate::text::clean).or_else(|| task_subject(v));
    let status = name.contains("Complet").then_some(ccmem_proto::model::session::TodoStatus::Completed);
    Kind::Task(TaskChange { id, subject, status, active_form: None, delete: false })
}

/// What a tool call did. A call that failed changed nothing (an Edit refused, a Write of an
/// unread file); only a shell command's failure is news.
fn tool(name: &str, input: &Value, response: &Value, failed: bool) -> Tool {
    match name {
        "Bash" => shell(input, response, failed),
        _ if failed => Tool::Other,
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => edit(name, input, response),
        "TodoWrite" => Tool::Plan(
            input
                .get("todos")
                .and_then(Value::as_array)
                .map(|items| items.iter().take(crate::session::rules::caps::TODOS).filter_map(todo_of).collect())
                .unwrap_or_default(),
        ),
        "TaskCreate" => Tool::Task(TaskChange {
            // The id comes back in the response (`{"task": {"id": "3", …}}`); updates name only it.
            id: id_of(response.get("task").and_then(|t| t.get("id"))),
            subject: task_subject(input),
            status: input.get("status").and_then(Value::as_str).and_then(status_of),
            active_form: input.get("activeForm").and_then(Value::as_str).map(crate::text::clean),
            delete: false,
        }),
        "TaskUpdate" => {
            let raw = input.get("status").and_then(Value::as_str);
            Tool::Task(TaskChange {
                id: id_of(input.get("taskId").or_else(|| input.get("task_id")).or_else(|| input.get("id"))),
                subject: task_subject(input),
                status: raw.and_then(status_of),
                active_form: input.get("activeForm").and_then(Value::as_str).map(crate::text::clean),
                delete: raw == Some("deleted"),
            })
        }
        _ => Tool::Other,
    }
}

fn shell(input: &Value, response: &Value, failed: bool) -> Tool {
    let Some(command) = text(input, "command") else { return Tool::Other };
    let exit = ["exit_code", "exitCode", "returncode"].iter().find_map(|k| response.get(*k).and_then(Value::as_i64));
    let output = match response {
        Value::String(t) => t.clone(),
        r => ["stdout", "stderr", "error", "output"]
            .iter()
            .filter_map(|k| r.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Tool::Shell {
        command,
        output,
        exit,
        failed: failed || exit.is_some_and(|c| c != 0),
        interrupted: response.get("interrupted").and_then(Value::as_bool) == Some(true),
    }
}

fn edit(tool: &str, input: &Value, response: &Value) -> Tool {
    let Some(path) = text(input, "file_path").or_else(|| text(input, "notebook_path")).or_else(|| text(input, "path"))
    else {
        return Tool::Other;
    };
    let lines = |k: &str| input.get(k).and_then(Value::as_str).map(|x| x.lines().count()).unwrap_or(0);
    let summary = match tool {
        "Edit" => format!("Edit: {} → {} lines", lines("old_string"), lines("new_string")),
        "Write" => format!("Write: {} line{}", lines("content"), if lines("content") == 1 { "" } else { "s" }),
        "MultiEdit" => format!("MultiEdit: {} edits", input.get("edits").and_then(Value::as_array).map_or(0, Vec::len)),
        _ => format!("NotebookEdit: {}", text(input, "edit_mode").unwrap_or_else(|| "cell".into())),
    };
    // Write says whether it made the file (`"type": "create"`) or replaced it.
    let created = tool == "Write" && response.get("type").and_then(Value::as_str) == Some("create");
    let (added, removed) = edit_lines(tool, input, response);
    Tool::Edits(vec![FileEdit { path, summary, tool: tool.to_string(), created, deleted: false, added, removed }])
}

/// Lines an edit added and deleted: from the patch Claude Code sends back
/// (`structuredPatch`), else from the edit's own strings (older versions, imports).
pub(crate) fn edit_lines(tool: &str, input: &Value, response: &Value) -> (u64, u64) {
    if let Some(hunks) = response.get("structuredPatch").and_then(Value::as_array).filter(|h| !h.is_empty()) {
        let lines = hunks.iter().filter_map(|h| h.get("lines").and_then(Value::as_array)).flatten();
        return lines.filter_map(Value::as_str).fold((0, 0), |(a, d), l| match l.as_bytes().first() {
            Some(b'+') => (a + 1, d),
            Some(b'-') => (a, d + 1),
            _ => (a, d),
        });
    }
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match tool {
        // A new file is all added; a replaced one without a patch says nothing reliable.
        "Write" if response.get("type").and_then(Value::as_str) != Some("update") => {
            (crate::observe::git::line_count(str_of(input, "content").as_bytes()), 0)
        }
        "Edit" => changed_lines(&str_of(input, "old_string"), &str_of(input, "new_string")),
        "MultiEdit" => input.get("edits").and_then(Value::as_array).into_iter().flatten().fold((0, 0), |(a, d), e| {
            let (x, y) = changed_lines(&str_of(e, "old_string"), &str_of(e, "new_string"));
            (a + x, d + y)
        }),
        _ => (0, 0),
    }
}

fn todo_of(v: &Value) -> Option<Todo> {
    let status = v.get("status").and_then(Value::as_str);
    todo(v.get("content").and_then(Value::as_str)?, status, v.get("activeForm").and_then(Value::as_str))
}

fn task_subject(v: &Value) -> Option<String> {
    ["subject", "title", "content", "description"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(crate::text::clean)
        .filter(|x| !x.is_empty())
}

/// Task ids arrive as strings (`"3"`) or numbers.
fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.trim().trim_start_matches('#').to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
