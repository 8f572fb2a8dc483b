//! Codex's rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: one `{timestamp, type,
//! payload}` per line), replayed as Codex's hooks deliver them: SessionStart, the user's
//! prompts (`event_msg` `user_message`; the `response_item` copies and the instructions
//! Codex injects are not prompts), each tool call with its output (`function_call` or
//! `custom_tool_call` and its `…_output`), PreCompact and SessionStart `compact` at a
//! `compacted` record, Stop with the turn's last message (`task_complete`).
//!
//! A shell command's exit status is in its output's text (`Process exited with code N`), or,
//! in older rollouts, in the output's JSON (`metadata.exit_code`).

use super::{Emit, Reader, Turns};
use ccmem_proto::wire::api::EXIT_CODE_KEY;
use serde_json::{json, Value};
use std::collections::HashMap;

pub(super) struct Codex {
    turns: Turns,
    /// Calls waiting for their output: id → (tool, input).
    calls: HashMap<String, (String, Value)>,
    /// The session's working directory: a command run elsewhere is `cd DIR && …`.
    cwd: Option<String>,
}

impl Default for Codex {
    fn default() -> Self {
        Self {
            turns: Turns::new("SessionStart", ("UserPromptSubmit", "prompt"), ("Stop", "last_assistant_message")),
            calls: HashMap::new(),
            cwd: None,
        }
    }
}

impl Reader for Codex {
    fn record(&mut self, v: &Value, e: &mut Emit) {
        let p = v.get("payload").unwrap_or(&Value::Null);
        let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
        match v.get("type").and_then(Value::as_str).unwrap_or_default() {
            "session_meta" => {
                e.conversation(p.get("id").and_then(Value::as_str));
                let cwd = p.get("cwd").and_then(Value::as_str);
                e.origin(cwd);
                self.cwd = self.cwd.take().or(cwd.map(str::to_string));
            }
            "event_msg" => match kind {
                "user_message" => {
                    let text = p.get("message").and_then(Value::as_str).unwrap_or_default();
                    if !text.trim().is_empty() {
                        self.turns.prompt(e, text);
                    }
                }
                "agent_message" => self.turns.said(e, p.get("message").and_then(Value::as_str).unwrap_or_default()),
                "task_complete" => {
                    if let Some(words) = p.get("last_agent_message").and_then(Value::as_str) {
                        self.turns.said(e, words);
                    }
                    self.turns.end(e);
                }
                "turn_aborted" => self.turns.end(e),
                _ => {}
            },
            "response_item" => match kind {
                "function_call" | "custom_tool_call" | "local_shell_call" => {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or(kind).to_string();
                    let input = match p.get("arguments") {
                        // Function calls carry their arguments as JSON text.
                        Some(Value::String(args)) => serde_json::from_str(args).unwrap_or(json!({"input": args})),
                        Some(other) => other.clone(),
                        None => match p.get("input") {
                            Some(Value::String(text)) => json!({"command": text}),
                            _ => p.get("action").cloned().unwrap_or(Value::Null),
                        },
                    };
                    if let Some(id) = p.get("call_id").and_then(Value::as_str) {
                        self.calls.insert(id.to_string(), (name, input));
                    }
                }
                "function_call_output" | "custom_tool_call_output" => {
                    let Some(id) = p.get("call_id").and_then(Value::as_str) else { return };
                    let Some((name, input)) = self.calls.remove(id) else { return };
                    self.tool(e, id, &name, input, p.get("output"));
                }
                _ => {}
            },
            "compacted" => {
                self.turns.within(e);
                e.summary.compactions += 1;
                e.push("PreCompact", json!({"trigger": "auto"}));
                // Codex's summary is encrypted: the context after it has ccmem's lists.
                e.push("SessionStart", json!({"source": "compact"}));
            }
            _ => {}
        }
    }

    fn finish(&mut self, e: &mut Emit) {
        self.turns.within(e);
        self.turns.end(e);
    }
}

impl Codex {
    /// One finished tool call, as Codex's PostToolUse has it.
    fn tool(&mut self, e: &mut Emit, id: &str, name: &str, mut input: Value, output: Option<&Value>) {
        self.turns.within(e);
        e.summary.tool_calls += 1;
        let (mut text, mut exit) = match output {
            Some(Value::String(s)) => (s.clone(), None),
            Some(other) => (other.to_string(), None),
            None => (String::new(), None),
        };
        // Older rollouts: `{"output": "...", "metadata": {"exit_code": 1}}` as text.
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            if let Some(code) = v.pointer("/metadata/exit_code").and_then(Value::as_i64) {
                exit = Some(code);
                text = v.get("output").and_then(Value::as_str).unwrap_or_default().to_string();
            }
        }
        let tool_name = match name {
            "exec_command" | "shell" | "local_shell_call" | "container.exec" => "Bash",
            other => other,
        };
        if tool_name == "Bash" {
            // Run in another directory: as `cd DIR && …` reads to the session rules.
            let dir = input.get("workdir").and_then(Value::as_str).map(str::to_string);
            if let (Some(dir), Some(cmd)) = (dir.filter(|d| Some(d) != self.cwd.as_ref()), command(&input)) {
                input = json!({"command": format!("cd {} && {cmd}", ccmem_proto::sh_quote(&dir))});
            }
        }
        let mut fields = json!({"tool_name": tool_name, "tool_input": input, "tool_use_id": id, "tool_response": text});
        if let Some(code) = exit {
            fields[EXIT_CODE_KEY] = json!(code);
        }
        e.push("PostToolUse", fields);
    }
}

/// A shell call's command line: `cmd` (exec_command), or `command` as text or argv
/// (`bash -lc SCRIPT` gives the script).
fn command(input: &Value) -> Option<String> {
    match input.get("cmd").or_else(|| input.get("command"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') => {
                    Some(script.to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}
