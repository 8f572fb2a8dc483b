//! OpenCode's conversations, from `opencode export <id>` (its storage is SQLite): one JSON
//! document `{info, messages: [{info, parts}]}`, replayed as ccmem's OpenCode plugin sends
//! its events: session.start, chat.message with each prompt, tool.execute.after for each
//! finished tool part (tool.error for one that threw), session.idle with the turn's last
//! words, session.compacted with a compaction's summary (the assistant message marked
//! `summary`).

use super::{Emit, Reader, Turns};
use serde_json::{json, Value};

#[derive(Default)]
pub(super) struct Opencode;

impl Reader for Opencode {
    fn record(&mut self, doc: &Value, e: &mut Emit) {
        e.conversation(doc.pointer("/info/id").and_then(Value::as_str));
        e.origin(doc.pointer("/info/directory").and_then(Value::as_str));
        let mut turns =
            Turns::new("session.start", ("chat.message", "prompt"), ("session.idle", "last_assistant_message"));
        for m in doc.get("messages").and_then(Value::as_array).into_iter().flatten() {
            let info = m.get("info").unwrap_or(&Value::Null);
            e.at(m);
            let parts = m.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            match info.get("role").and_then(Value::as_str) {
                Some("user") => {
                    let text: Vec<&str> = parts
                        .iter()
                        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                        .filter(|p| p.get("synthetic").and_then(Value::as_bool) != Some(true))
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect();
                    if !text.is_empty() {
                        turns.prompt(e, &text.join("\n"));
                    }
                }
                Some("assistant") if info.get("summary").and_then(Value::as_bool) == Some(true) => {
                    turns.within(e);
                    e.summary.compactions += 1;
                    e.push("session.compacted", json!({"compact_summary": texts(parts)}));
                    e.push("session.start", json!({"source": "compact"}));
                }
                Some("assistant") => {
                    for p in parts {
                        match p.get("type").and_then(Value::as_str) {
                            Some("tool") => tool(&mut turns, e, p),
                            Some("text") => turns.said(e, p.get("text").and_then(Value::as_str).unwrap_or_default()),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        turns.within(e);
        turns.end(e);
    }

    fn finish(&mut self, _: &mut Emit) {}
}

/// A tool part: finished (`tool.execute.after`), or thrown (`tool.error`); one still running
/// when the export was made is left out.
fn tool(turns: &mut Turns, e: &mut Emit, p: &Value) {
    let state = p.get("state").unwrap_or(&Value::Null);
    let status = state.get("status").and_then(Value::as_str);
    if !matches!(status, Some("completed" | "error")) {
        return;
    }
    turns.within(e);
    e.summary.tool_calls += 1;
    let mut fields = json!({
        "tool_name": p.get("tool").cloned().unwrap_or(Value::Null),
        "tool_use_id": p.get("callID").cloned().unwrap_or(Value::Null),
        "tool_input": state.get("input").cloned().unwrap_or(json!({})),
    });
    if status == Some("error") {
        fields["error"] = state.get("error").cloned().unwrap_or(Value::Null);
        e.push("tool.error", fields);
    } else {
        fields["tool_response"] = json!({
            "output": state.get("output").cloned().unwrap_or(Value::Null),
            "metadata": state.get("metadata").cloned().unwrap_or(json!({})),
        });
        e.push("tool.execute.after", fields);
    }
}

/// The text parts of a message.
fn texts(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}
