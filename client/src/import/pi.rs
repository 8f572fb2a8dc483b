//! Pi's and Oh My Pi's sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, format
//! version 3), replayed as ccmem's Pi extension sends its events: session_start,
//! before_agent_start with each prompt, tool_result for each tool call (its input from the
//! assistant's `toolCall` block), agent_end with the turn's last words, session_compact with
//! a compaction's summary.
//!
//! A session file is a tree (`id`, `parentId`): going back to an earlier point and on from
//! there leaves the abandoned branch in the file. The conversation is the branch that leads
//! to the last entry, so the file is read whole and that branch replayed at its end.

use super::{Emit, Reader, Turns};
use serde_json::{json, Value};
use std::collections::HashMap;

#[derive(Default)]
pub(super) struct Pi {
    entries: Vec<Value>,
}

impl Reader for Pi {
    fn record(&mut self, v: &Value, e: &mut Emit) {
        if v.get("type").and_then(Value::as_str) == Some("session") {
            e.conversation(v.get("id").and_then(Value::as_str));
            e.origin(v.get("cwd").and_then(Value::as_str));
            return;
        }
        if v.get("id").is_some() {
            self.entries.push(v.clone());
        }
    }

    fn finish(&mut self, e: &mut Emit) {
        let mut turns =
            Turns::new("session_start", ("before_agent_start", "prompt"), ("agent_end", "last_assistant_message"));
        let mut calls: HashMap<String, Value> = HashMap::new();
        for entry in branch(std::mem::take(&mut self.entries)) {
            match entry.get("type").and_then(Value::as_str) {
                Some("message") => {
                    let m = entry.get("message").unwrap_or(&Value::Null);
                    match m.get("role").and_then(Value::as_str) {
                        Some("user") => {
                            let text = super::text_of(m.get("content"));
                            if !text.trim().is_empty() {
                                turns.prompt(e, &text);
                            }
                        }
                        Some("assistant") => {
                            for block in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                                match block.get("type").and_then(Value::as_str) {
                                    Some("toolCall") => {
                                        if let Some(id) = block.get("id").and_then(Value::as_str) {
                                            calls.insert(
                                                id.to_string(),
                                                block.get("arguments").cloned().unwrap_or(json!({})),
                                            );
                                        }
                                    }
                                    Some("text") => {
                                        turns.said(e, block.get("text").and_then(Value::as_str).unwrap_or_default())
                                    }
                                    _ => {}
                                }
                            }
                        }
                        Some("toolResult") => {
                            let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
                            turns.within(e);
                            e.summary.tool_calls += 1;
                            e.push(
                                "tool_result",
                                json!({
                                    "tool_name": m.get("toolName").cloned().unwrap_or(Value::Null),
                                    "tool_use_id": id,
                                    "tool_input": calls.remove(id).unwrap_or(json!({})),
                                    "tool_response": {
                                        "content": m.get("content").cloned().unwrap_or(Value::Null),
                                        "details": m.get("details").cloned().unwrap_or(Value::Null),
                                        "is_error": m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                                    },
                                }),
                            );
                        }
                        _ => {}
                    }
                }
                Some("compaction") => {
                    turns.within(e);
                    e.summary.compactions += 1;
                    let summary = entry.get("summary").and_then(Value::as_str).unwrap_or_default();
                    e.push("session_compact", json!({"compact_summary": summary}));
                    e.push("session_start", json!({"source": "compact"}));
                }
                _ => {}
            }
        }
        turns.within(e);
        turns.end(e);
    }
}

/// The entries on the way from the root to the last entry, in order. Entries without a
/// parent link (an older format) are all on it.
fn branch(entries: Vec<Value>) -> Vec<Value> {
    let id = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_string);
    if !entries.iter().any(|v| v.get("parentId").is_some()) {
        return entries;
    }
    let index: HashMap<String, usize> = entries.iter().enumerate().filter_map(|(i, v)| Some((id(v)?, i))).collect();
    let mut on = vec![false; entries.len()];
    let mut at = entries.len().checked_sub(1);
    // At most one step per entry: a loop of links cannot hold the walk.
    for _ in 0..entries.len() {
        let Some(i) = at else { break };
        if on[i] {
            break;
        }
        on[i] = true;
        at = entries[i].get("parentId").and_then(Value::as_str).and_then(|p| index.get(p).copied());
    }
    entries.into_iter().zip(on).filter_map(|(v, keep)| keep.then_some(v)).collect()
}
