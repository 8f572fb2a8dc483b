//! GitHub Copilot CLI's sessions (`~/.copilot/session-state/<id>/events.jsonl`: one
//! `{type, data, id, timestamp, parentId}` per line), replayed as the hooks ccmem installs
//! for it deliver them: SessionStart, the user's prompts (`user.message`'s `content`; a
//! message with a `source` is text Copilot injected: instructions, skills, reminders), each
//! tool call (`tool.execution_start` for its input, `tool.execution_complete` for its
//! result), PreCompact at a compaction, Stop with the turn's last message.
//!
//! A sub-agent's records carry a top-level `agentId`: its tool calls are sent as a
//! sub-agent's (`parent_agent_id`), its prompt and words are not the conversation's.

use super::{Emit, Reader, Turns};
use serde_json::{json, Value};
use std::collections::HashMap;

pub(super) struct Copilot {
    turns: Turns,
    /// Calls waiting for their result: id → (tool, input).
    calls: HashMap<String, (String, Value)>,
}

impl Default for Copilot {
    fn default() -> Self {
        Self {
            turns: Turns::new("SessionStart", ("UserPromptSubmit", "prompt"), ("Stop", "last_assistant_message")),
            calls: HashMap::new(),
        }
    }
}

impl Reader for Copilot {
    fn record(&mut self, v: &Value, e: &mut Emit) {
        let d = v.get("data").unwrap_or(&Value::Null);
        let s = |k: &str| d.get(k).and_then(Value::as_str);
        let agent = v.get("agentId").and_then(Value::as_str).filter(|a| !a.is_empty());
        match v.get("type").and_then(Value::as_str).unwrap_or_default() {
            "session.start" => {
                e.conversation(s("sessionId"));
                e.origin(d.pointer("/context/cwd").and_then(Value::as_str));
                self.turns.start(e);
            }
            "user.message" if agent.is_none() && d.get("source").is_none_or(Value::is_null) => {
                let text = s("content").unwrap_or_default();
                if !text.trim().is_empty() {
                    self.turns.prompt(e, text);
                }
            }
            "assistant.message" if agent.is_none() => self.turns.said(e, s("content").unwrap_or_default()),
            "tool.execution_start" => {
                if let (Some(id), Some(name)) = (s("toolCallId"), s("toolName")) {
                    let input = d.get("arguments").cloned().unwrap_or(json!({}));
                    self.calls.insert(id.to_string(), (name.to_string(), input));
                }
            }
            "tool.execution_complete" => {
                let Some((name, input)) = s("toolCallId").and_then(|id| self.calls.remove(id)) else { return };
                self.turns.within(e);
                e.summary.tool_calls += 1;
                let ok = d.get("success").and_then(Value::as_bool).unwrap_or(true);
                let text = d
                    .pointer("/result/content")
                    .and_then(Value::as_str)
                    .or_else(|| d.pointer("/error/message").and_then(Value::as_str))
                    .unwrap_or_default();
                let mut fields = json!({
                    "tool_name": name,
                    "tool_input": input,
                    "tool_result": {"result_type": if ok { "success" } else { "failure" }, "text_result_for_llm": text},
                });
                if let Some(a) = agent {
                    fields["parent_agent_id"] = json!(a);
                }
                e.push(if ok { "PostToolUse" } else { "PostToolUseFailure" }, fields);
            }
            "session.compaction_complete"
                if agent.is_none() && d.get("success").and_then(Value::as_bool) != Some(false) =>
            {
                self.turns.within(e);
                e.summary.compactions += 1;
                e.push("PreCompact", json!({"trigger": "auto"}));
            }
            _ => {}
        }
    }

    fn finish(&mut self, e: &mut Emit) {
        self.turns.within(e);
        self.turns.end(e);
    }
}
