//! Codex's rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: one `{timestamp, type,
//! payload}` per line), replayed as Codex's hooks deliver them: SessionStart, the user's
//! prompts (`event_msg` `user_message`; the `response_item` copies and the instructions
//! Codex injects are not prompts), each tool call with its output (`function_call` or
//! `custom_tool_call` and its `…_output`), PreCompact and SessionStart `compact` at a
//! `compacted` record, Stop with the turn's last message (`task_complete`).
//!
//! A shell command's exit status is in its output's text (`Process exited with code N`), or,
//! in older rollouts, in the output's JSON (`metadata.exit_code`).
//!
//! What the model called is not always what happened. In code mode (Codex 0.144+) the model
//! calls one tool, `exec`, whose input is a JavaScript program calling the real tools itself:
//! the edits are then only in Codex's own `patch_apply_end` events (keyed by absolute path),
//! commands in `exec_command_end` events where the version records them, else in the
//! program's literal `tools.exec_command({cmd: …})` calls. An event for a call the model made
//! itself is not read twice.

use super::{js, Emit, Reader, Turns};
use ccmem_proto::wire::api::EXIT_CODE_KEY;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// A running code-mode cell: the tool calls of its program, its output so far, its call id.
type Cell = (Vec<(String, Option<Value>)>, String, String);

pub(super) struct Codex {
    turns: Turns,
    /// Calls waiting for their output: id → (tool, input).
    calls: HashMap<String, (String, Value)>,
    /// Every call id the model used: Codex's events for those calls are not read again.
    model_calls: HashSet<String>,
    /// Events read for calls made inside code-mode cells: a cell whose commands came as
    /// events is not read again from its program.
    inner_events: u64,
    /// Code-mode cells still running (`Script running with cell ID N`, finished by `wait`):
    /// cell id → the tool calls of its program, its output so far, its id.
    running: HashMap<String, Cell>,
    /// `wait` calls waiting for their output: call id → cell id.
    waits: HashMap<String, String>,
    /// The session's working directory: a command run elsewhere is `cd DIR && …`.
    cwd: Option<String>,
}

impl Default for Codex {
    fn default() -> Self {
        Self {
            turns: Turns::new("SessionStart", ("UserPromptSubmit", "prompt"), ("Stop", "last_assistant_message")),
            calls: HashMap::new(),
            model_calls: HashSet::new(),
            inner_events: 0,
            running: HashMap::new(),
            waits: HashMap::new(),
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
                "patch_apply_end" | "exec_command_end" if !self.is_models(p) => self.inner_event(e, kind, p),
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
                        self.model_calls.insert(id.to_string());
                        if name == "wait" {
                            if let Some(cell) = input.get("cell_id").and_then(Value::as_str) {
                                self.waits.insert(id.to_string(), cell.to_string());
                            }
                        }
                        self.calls.insert(id.to_string(), (name, input));
                    }
                }
                "function_call_output" | "custom_tool_call_output" => {
                    let Some(id) = p.get("call_id").and_then(Value::as_str) else { return };
                    let Some((name, input)) = self.calls.remove(id) else { return };
                    match name.as_str() {
                        "exec" => {
                            let program = input.get("command").and_then(Value::as_str).unwrap_or_default();
                            let events_before = self.inner_events;
                            self.cell(e, id, program, p.get("output"), events_before);
                        }
                        "wait" => {
                            if let Some(cell) = self.waits.remove(id) {
                                self.cell_continued(e, &cell, p.get("output"));
                            }
                        }
                        _ => self.tool(e, id, &name, input, p.get("output")),
                    }
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
        // Cells never waited for to their end: what they ran, with what they printed.
        let mut running: Vec<_> = self.running.drain().collect();
        running.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, (calls, output, id)) in running {
            self.cell_calls(e, &id, calls, &output);
        }
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

impl Codex {
    /// Whether an event is about a call the model made itself (read from its output).
    fn is_models(&self, p: &Value) -> bool {
        p.get("call_id").and_then(Value::as_str).is_some_and(|id| self.model_calls.contains(id))
    }

    /// A patch applied or a command run inside a code-mode cell, from Codex's own event.
    fn inner_event(&mut self, e: &mut Emit, kind: &str, p: &Value) {
        let id = p.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
        self.inner_events += 1;
        if kind == "patch_apply_end" {
            if p.get("success").and_then(Value::as_bool) == Some(false) {
                return;
            }
            let patch = patch_of_changes(p.get("changes"));
            if !patch.is_empty() {
                self.tool(e, &id, "apply_patch", json!({"command": patch}), Some(&json!("Exit code: 0")));
            }
            return;
        }
        let mut input = json!({"command": p.get("command").cloned().unwrap_or(Value::Null)});
        if let Some(dir) = p.get("cwd").and_then(Value::as_str) {
            input["workdir"] = json!(dir);
        }
        let output = ["aggregated_output", "formatted_output", "stdout"]
            .iter()
            .find_map(|k| p.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
            .unwrap_or_default();
        let exit = p.get("exit_code").and_then(Value::as_i64);
        self.shell(e, &id, input, output.to_string(), exit);
    }

    /// A code-mode cell's output: its program's tool calls now, or when it ends (`wait`).
    fn cell(&mut self, e: &mut Emit, id: &str, program: &str, output: Option<&Value>, events_before: u64) {
        // The commands came as Codex's events while the cell ran: they are in already.
        let calls: Vec<_> = js::tool_calls(program)
            .into_iter()
            .filter(|(name, _)| name != "exec_command" || self.inner_events == events_before)
            .filter(|(name, _)| matches!(name.as_str(), "exec_command" | "update_plan"))
            .collect();
        let text = output_text(output);
        if let Some(cell) = text.strip_prefix("Script running with cell ID ").and_then(|t| t.split_whitespace().next())
        {
            let body = body(&text).to_string();
            self.running.insert(cell.to_string(), (calls, body, id.to_string()));
            return;
        }
        self.cell_calls(e, id, calls, body(&text));
    }

    /// A `wait` on a running cell: the cell's calls once it has ended.
    fn cell_continued(&mut self, e: &mut Emit, cell: &str, output: Option<&Value>) {
        let text = output_text(output);
        let Some((calls, mut so_far, id)) = self.running.remove(cell) else { return };
        so_far.push_str(body(&text));
        if text.starts_with("Script running") {
            self.running.insert(cell.to_string(), (calls, so_far, id));
        } else {
            self.cell_calls(e, &id, calls, &so_far);
        }
    }

    /// The literal tool calls of a finished cell. A cell of one command gives it the cell's
    /// output (and its exit code when the program printed the call's result as JSON); with
    /// several, each gets its own result when the program printed them as a JSON array.
    fn cell_calls(&mut self, e: &mut Emit, id: &str, calls: Vec<(String, Option<Value>)>, output: &str) {
        let commands = calls.iter().filter(|(n, _)| n == "exec_command").count();
        let printed: Option<Value> = serde_json::from_str(output.trim()).ok();
        let results: Vec<Option<&Value>> = match &printed {
            Some(Value::Array(items)) if items.len() == commands => items.iter().map(Some).collect(),
            Some(v @ Value::Object(_)) if commands == 1 => vec![Some(v)],
            _ => vec![None; commands],
        };
        let mut results = results.into_iter();
        for (n, (name, arg)) in calls.into_iter().enumerate() {
            let call_id = format!("{id}.{n}");
            match name.as_str() {
                "exec_command" => {
                    let result = results.next().flatten();
                    let Some(input) = arg.filter(|a| a.get("cmd").is_some_and(Value::is_string)) else { continue };
                    let (text, exit) = match result {
                        Some(r) => (
                            r.get("output").and_then(Value::as_str).unwrap_or_default().to_string(),
                            r.get("exit_code").and_then(Value::as_i64),
                        ),
                        None if commands == 1 => (output.to_string(), None),
                        None => (String::new(), None),
                    };
                    self.shell(e, &call_id, input, text, exit);
                }
                _ => {
                    if let Some(input) = arg {
                        self.tool(e, &call_id, &name, input, None);
                    }
                }
            }
        }
    }

    /// A shell command that ran, as exec_command's PostToolUse has it.
    fn shell(&mut self, e: &mut Emit, id: &str, input: Value, output: String, exit: Option<i64>) {
        let text = match exit {
            Some(code) => format!("Process exited with code {code}\nOutput:\n{output}"),
            None => output,
        };
        self.tool(e, id, "exec_command", input, Some(&json!(text)));
    }
}

/// The text of a tool's output: a string, or the `text` of its items (code mode's cells).
fn output_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    }
}

/// What a cell printed: after its `Script completed` / `Wall time` / `Output:` header.
fn body(text: &str) -> &str {
    match text.split_once("\nOutput:\n") {
        Some((head, rest)) if head.lines().count() <= 3 => rest,
        _ => text,
    }
}

/// An apply_patch text naming what a `patch_apply_end` event's `changes` say: each file
/// added (its lines), deleted, or updated (its diff's lines; `move_path` its new name).
fn patch_of_changes(changes: Option<&Value>) -> String {
    let Some(changes) = changes.and_then(Value::as_object) else { return String::new() };
    let mut out = String::from("*** Begin Patch\n");
    // A name holding a line break would spell headers of its own.
    for (path, change) in changes.iter().filter(|(p, _)| !p.contains(['\n', '\r'])) {
        let s =
            |k: &str| change.get(k).and_then(Value::as_str).filter(|v| !v.contains(['\n', '\r']) || k != "move_path");
        match s("type") {
            Some("add") => {
                out.push_str(&format!("*** Add File: {path}\n"));
                for line in s("content").unwrap_or_default().lines() {
                    out.push_str(&format!("+{line}\n"));
                }
            }
            Some("delete") => out.push_str(&format!("*** Delete File: {path}\n")),
            Some("update") => {
                out.push_str(&format!("*** Update File: {path}\n"));
                if let Some(to) = s("move_path") {
                    out.push_str(&format!("*** Move to: {to}\n"));
                }
                for line in s("unified_diff").unwrap_or_default().lines() {
                    if !line.starts_with("+++") && !line.starts_with("---") && !line.starts_with("***") {
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
    }
    if out.len() == "*** Begin Patch\n".len() {
        return String::new();
    }
    out.push_str("*** End Patch\n");
    out
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
