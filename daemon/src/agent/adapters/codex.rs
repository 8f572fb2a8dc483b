//! Codex CLI's hook payloads (`hooks.json`, in Claude Code's shape), as Codex 0.169 sends
//! them (fixtures in `tests/fixtures/codex/`): `Bash` with the command's output alone (its
//! exit status is added by `ccmemctl hook --agent codex` from the rollout file, or read from
//! the text), `apply_patch` with the patch as its `command`, `update_plan` with the whole
//! plan.

use super::*;
use crate::agent::hooks::{FileEdit, Kind, Tool};
use std::path::Path;

/// Files of one patch taken at most: more is not a patch a person would review.
const PATCH_FILES: usize = 500;

/// Reads a Codex payload.
pub(super) fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let cwd = path(v, "cwd");
    let kind = match name.as_str() {
        "SessionStart" => {
            let source = word(v, "source");
            Kind::SessionStart { source: if source.is_empty() { "startup".into() } else { source } }
        }
        "UserPromptSubmit" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "PostToolUse" => {
            let tool_name = text(v, "tool_name").unwrap_or_default();
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            let output = response_text(v.get("tool_response"));
            let exit = v.get(ccmem_proto::wire::api::EXIT_CODE_KEY).and_then(Value::as_i64);
            let tool = match tool_name.as_str() {
                "Bash" | "shell" | "exec_command" | "local_shell" => shell(input, output, exit),
                "apply_patch" => patch(input, &output, cwd.as_deref()),
                "update_plan" => todo_list(input.get("plan"), "step"),
                _ => Tool::Other,
            };
            Kind::ToolUse { name: tool_name, tool }
        }
        "Stop" => {
            Kind::Stop { last_message: text(v, "last_assistant_message"), subagent: false, agent_transcript: None }
        }
        "SubagentStop" => Kind::Stop { last_message: None, subagent: true, agent_transcript: None },
        "PreCompact" => Kind::PreCompact { trigger: word(v, "trigger"), instructions: String::new() },
        "SessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        _ => Kind::Other(name.clone()),
    };
    let delivery = match name.as_str() {
        "PostToolUse" => text(v, "tool_use_id"),
        "UserPromptSubmit" => text(v, "turn_id"),
        _ => None,
    };
    Some(Hook {
        agent: Agent::Codex,
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        // The rollout is not Claude Code's transcript: what the daemon reads from one (last
        // words, the compaction's summary) comes in Codex's payloads or not at all.
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

/// A tool's response as text: Codex sends a string; anything else is read as JSON text.
fn response_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The exit status a tool's text reports: `Process exited with code N` (exec_command's
/// output as the model sees it) or `Exit code: N` (apply_patch's).
pub(crate) fn exit_in_text(text: &str) -> Option<i64> {
    text.lines().take(8).find_map(|l| {
        let l = l.trim();
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .and_then(|n| n.trim().parse().ok())
    })
}

fn shell(input: &Value, output: String, exit: Option<i64>) -> Tool {
    // `command` is a string in the hook; older shell tools sent an argv array.
    let command = match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(c)) => c.clone(),
        Some(Value::Array(argv)) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            // `bash -lc "…"`: the script is what ran.
            match words.as_slice() {
                [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') => {
                    script.to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => return Tool::Other,
    };
    let exit = exit.or_else(|| exit_in_text(&output));
    Tool::Shell { command, output, exit, failed: exit.is_some_and(|c| c != 0), interrupted: false }
}

/// The files an `apply_patch` changed, with the lines it added and removed. A patch that did
/// not apply (`Exit code: 1`) changed nothing.
fn patch(input: &Value, output: &str, cwd: Option<&Path>) -> Tool {
    if exit_in_text(output).is_some_and(|c| c != 0) {
        return Tool::Other;
    }
    let Some(text) = input.get("command").or_else(|| input.get("input")).and_then(Value::as_str) else {
        return Tool::Other;
    };
    let files = parse_patch(text);
    if files.is_empty() {
        return Tool::Other;
    }
    Tool::Edits(files.into_iter().map(|f| FileEdit { path: absolute(&f.path, cwd), ..f }).collect())
}

/// The files of an apply_patch text (`*** Add File:`, `*** Update File:` with an optional
/// `*** Move to:`, `*** Delete File:`), each with its `+`/`-` lines counted.
pub(crate) fn parse_patch(text: &str) -> Vec<FileEdit> {
    let mut files: Vec<FileEdit> = Vec::new();
    for line in text.lines() {
        let header = |prefix: &str| line.strip_prefix(prefix).map(str::trim).filter(|p| !p.is_empty());
        if let Some(p) = header("*** Add File: ") {
            files.push(FileEdit { path: p.into(), tool: "apply_patch".into(), created: true, ..Default::default() });
        } else if let Some(p) = header("*** Update File: ") {
            files.push(FileEdit { path: p.into(), tool: "apply_patch".into(), ..Default::default() });
        } else if let Some(p) = header("*** Delete File: ") {
            files.push(FileEdit { path: p.into(), tool: "apply_patch".into(), deleted: true, ..Default::default() });
        } else if let Some(p) = header("*** Move to: ") {
            if let Some(f) = files.last_mut() {
                // Renamed: the old name is gone, the new one holds the changes.
                let old = std::mem::replace(&mut f.path, p.into());
                let gone = FileEdit { path: old, tool: "apply_patch".into(), deleted: true, ..Default::default() };
                files.insert(files.len() - 1, gone);
            }
        } else if line.starts_with("***") {
            // `*** Begin Patch`, `*** End Patch`, `*** End of File`.
        } else if let Some(f) = files.last_mut() {
            match line.as_bytes().first() {
                Some(b'+') => f.added += 1,
                Some(b'-') => f.removed += 1,
                _ => {}
            }
        }
    }
    files.truncate(PATCH_FILES);
    for f in &mut files {
        f.summary = match (f.created, f.deleted) {
            (true, _) => format!("apply_patch: {} line{}", f.added, if f.added == 1 { "" } else { "s" }),
            (_, true) => "apply_patch: deleted".into(),
            _ => format!("apply_patch: +{} −{}", f.added, f.removed),
        };
    }
    files
}
