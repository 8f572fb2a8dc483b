//! Gemini CLI's hook payloads (`settings.json`'s `hooks`), as Gemini CLI 0.61 sends them
//! (fixtures in `tests/fixtures/gemini/`): `BeforeAgent` carries the prompt, `AfterTool` the
//! tool's input and its `{llmContent, returnDisplay}` (a shell command's exit status only as
//! text), `AfterAgent` the turn's answer. Tool calls carry no id.
//!
//! `PreCompress` fires before every model call whether or not anything is compressed, so it
//! is activity, not a compaction.

use super::*;
use crate::agent::hooks::{Kind, Tool};
use std::path::Path;

/// Reads a Gemini CLI payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let cwd = path(v, "cwd");
    let kind = match name.as_str() {
        "SessionStart" => {
            let source = word(v, "source");
            Kind::SessionStart { source: if source.is_empty() { "startup".into() } else { source } }
        }
        "BeforeAgent" => {
            Kind::Prompt { text: without_hook_context(&text(v, "prompt").unwrap_or_default()).to_string() }
        }
        "AfterTool" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let response = v.get("tool_response").unwrap_or(&Value::Null);
            let failed_call = response.get("error").is_some_and(|e| !e.is_null());
            let tool = match tool_name.as_str() {
                _ if failed_call => Tool::Other,
                "run_shell_command" => shell(input, response),
                "write_file" | "replace" | "edit" => edit(&tool_name, input, response, cwd.as_deref()),
                "write_todos" => todo_list(input.get("todos"), "description"),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        "AfterAgent" => Kind::Stop {
            last_message: text(v, "prompt_response").filter(|m| !m.trim().is_empty()),
            subagent: false,
            agent_transcript: None,
        },
        "SessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        "Notification" => Kind::Notification { message: text(v, "message").unwrap_or_default() },
        _ => Kind::Other(name.clone()),
    };
    Some(Hook {
        agent: Agent::Gemini,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        // The chat file is not Claude Code's transcript: what ccmem needs is in the payloads.
        transcript: None,
        kept_at: super::kept_at(v),
        cwd,
        project_dir: None,
        // No tool-call ids: an event is told from another by its time and what it carries.
        delivery: match name.as_str() {
            "BeforeAgent" | "AfterAgent" | "AfterTool" => super::delivery(&name, timed_delivery(v)),
            _ => None,
        },
        import_seq: v.get(ccmem_proto::wire::api::IMPORT_SEQ).and_then(Value::as_u64).filter(|n| *n > 0),
        at: None,
        kind,
    })
}

/// The user's prompt without the context a SessionStart hook put in front of it: headless
/// Gemini CLI sends `<hook_context>…</hook_context>\n\n<prompt>` as the prompt, and ccmem's own
/// context must not come back as the user's words.
pub(crate) fn without_hook_context(prompt: &str) -> &str {
    let mut rest = prompt.trim_start();
    while let Some(after) = rest.strip_prefix("<hook_context>") {
        // Gemini CLI escapes `<` and `>` inside the context, so the first end tag is its own.
        match after.find("</hook_context>") {
            Some(end) => rest = after[end + "</hook_context>".len()..].trim_start(),
            None => return "",
        }
    }
    rest
}

/// A tool's text as the model saw it: `llmContent` (a string, or parts with text).
fn llm_text(response: &Value) -> String {
    match response.get("llmContent") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What `run_shell_command` reports after its output, one line each (`Exit Code: 1`,
/// `Signal: 15`, `Process Group PGID: …`): read from the end, so that an output holding
/// such a line is not taken for the report.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ShellReport {
    pub exit: Option<i64>,
    pub signal: bool,
    /// Cancelled, timed out or sent to the background: the output says nothing about the end.
    pub unfinished: bool,
}

pub(crate) fn shell_report(llm: &str) -> ShellReport {
    let body = llm.trim().trim_start_matches("<untrusted_context>").trim_end_matches("</untrusted_context>").trim();
    let mut report = ShellReport::default();
    if body.starts_with("Command was cancelled")
        || body.starts_with("Command was automatically cancelled")
        || body.starts_with("Command moved to background")
    {
        report.unfinished = true;
        return report;
    }
    if !body.starts_with("Output:") {
        return report; // not the shell tool's report: nothing known
    }
    for line in body.lines().rev() {
        if let Some(n) = line.strip_prefix("Exit Code: ") {
            report.exit = n.trim().parse().ok();
        } else if line.starts_with("Signal: ") {
            report.signal = true;
        } else if !(line.starts_with("Process Group PGID: ")
            || line.starts_with("Background PIDs: ")
            || line.starts_with("Error: "))
        {
            break;
        }
    }
    // The code is written only when it is not 0; a report without one ended well.
    if report.exit.is_none() && !report.signal {
        report.exit = Some(0);
    }
    report
}

fn shell(input: &Value, response: &Value) -> Tool {
    let Some(command) = input.get("command").and_then(Value::as_str) else { return Tool::Other };
    let llm = llm_text(response);
    let report = shell_report(&llm);
    // What the user sees is the output alone; the model's text has it after `Output: `.
    let output = match response.get("returnDisplay").and_then(Value::as_str) {
        Some(shown) if !report.unfinished => shown.to_string(),
        _ => llm,
    };
    let command = match input.get("dir_path").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        // Run in a directory of the project's: as `cd DIR && …` reads to the session rules.
        Some(dir) => format!("cd {} && {command}", ccmem_proto::sh_quote(dir)),
        None => command.to_string(),
    };
    Tool::Shell {
        command,
        output,
        exit: report.exit,
        failed: report.exit.is_some_and(|c| c != 0),
        interrupted: report.signal || report.unfinished,
    }
}

/// `write_file` and `replace`: the file, and the lines the tool says it added and removed.
fn edit(tool: &str, input: &Value, response: &Value, cwd: Option<&Path>) -> Tool {
    let display = response.get("returnDisplay").filter(|d| d.is_object());
    let path = display
        .and_then(|d| d.get("filePath"))
        .and_then(Value::as_str)
        .or_else(|| input.get("file_path").and_then(Value::as_str));
    let Some(path) = path.filter(|p| !p.is_empty() && p.len() <= crate::text::MAX_PATH_BYTES) else {
        return Tool::Other;
    };
    let path = absolute(path, cwd);
    let stat = display.and_then(|d| d.get("diffStat"));
    let count = |k: &str| stat.and_then(|s| s.get(k)).and_then(Value::as_u64).unwrap_or(0);
    let (added, removed) = (count("model_added_lines"), count("model_removed_lines"));
    let created = display.and_then(|d| d.get("isNewFile")).and_then(Value::as_bool).unwrap_or(false);
    Tool::Edits(vec![edit_of(tool, path, created, added, removed)])
}
