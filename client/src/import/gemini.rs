//! Gemini CLI's chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`), replayed as its
//! hooks deliver them: SessionStart, BeforeAgent with each prompt, AfterTool for each tool
//! call of the model's messages (with its result as the model saw it), AfterAgent with the
//! turn's last words.
//!
//! The JSONL is a log, not a list: a message updated is written again (the last copy is the
//! message), `{"$set": {"messages": […]}}` replaces the whole list (at a compression, a
//! resume), `{"$rewindTo": id}` drops that message and those after it. So the file is read
//! whole and replayed at its end. Older versions wrote one JSON document,
//! `{sessionId, messages: […]}`, of the same messages.

use super::{Emit, Reader, Turns};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

pub(super) struct Gemini {
    /// The chat's messages, in order, each its latest copy.
    messages: Vec<Value>,
    /// Where each message is in `messages`, by id: a chat of many messages, each written
    /// again when updated (and `$rewindTo`s by id), is read in linear time.
    at: HashMap<String, usize>,
    /// The project the chat was recorded in (`tmp/<project>/.project_root`, beside `chats/`).
    project_root: Option<String>,
}

impl Gemini {
    pub(super) fn new(chat: &Path) -> Self {
        let root = chat.parent().and_then(Path::parent).map(|d| d.join(".project_root"));
        let project_root = root
            .and_then(|p| ccmem_proto::files::untrusted::read_string(&p, 4096).ok())
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty() && !t.contains('\n'));
        Self { messages: Vec::new(), at: HashMap::new(), project_root }
    }

    fn upsert(&mut self, m: &Value) {
        let id = m.get("id").and_then(Value::as_str);
        match id.and_then(|id| self.at.get(id)) {
            Some(&i) => self.messages[i] = m.clone(),
            None => {
                if let Some(id) = id {
                    self.at.insert(id.to_string(), self.messages.len());
                }
                self.messages.push(m.clone());
            }
        }
    }

    /// The whole list replaced (`$set.messages`).
    fn replace(&mut self, all: &[Value]) {
        self.messages.clear();
        self.at.clear();
        all.iter().for_each(|m| self.upsert(m));
    }

    /// That message and those after it dropped (`$rewindTo`).
    fn rewind(&mut self, id: &str) {
        let Some(&at) = self.at.get(id) else { return };
        for m in self.messages.drain(at..) {
            if let Some(id) = m.get("id").and_then(Value::as_str) {
                self.at.remove(id);
            }
        }
    }
}

impl Reader for Gemini {
    fn record(&mut self, v: &Value, e: &mut Emit) {
        if v.get("sessionId").is_some() && v.get("type").is_none() {
            e.conversation(v.get("sessionId").and_then(Value::as_str));
            e.origin(self.project_root.as_deref());
            // An older chat: the whole conversation in one document.
            if let Some(all) = v.get("messages").and_then(Value::as_array) {
                self.replace(all);
            }
            return;
        }
        if let Some(set) = v.get("$set") {
            if let Some(all) = set.get("messages").and_then(Value::as_array) {
                self.replace(all);
            }
            return;
        }
        if let Some(id) = v.get("$rewindTo").and_then(Value::as_str) {
            self.rewind(id);
            return;
        }
        if v.get("type").is_some() {
            self.upsert(v);
        }
    }

    fn finish(&mut self, e: &mut Emit) {
        // Without `.project_root` beside the chats (a chat copied elsewhere), the folder is
        // the first of the workspace directories Gemini CLI told the model of.
        if let Some(dir) = self.messages.iter().find_map(|m| workspace(&super::text_of(m.get("content")))) {
            e.origin(Some(&dir));
        }
        let mut turns = Turns::new("SessionStart", ("BeforeAgent", "prompt"), ("AfterAgent", "prompt_response"));
        self.at.clear();
        for m in std::mem::take(&mut self.messages) {
            e.at(&m);
            match m.get("type").and_then(Value::as_str) {
                Some("user") => {
                    let parts = m.get("content").and_then(Value::as_array);
                    // Tool results come back as the user's; they are the model's calls' results.
                    if parts.is_some_and(|p| p.iter().any(|x| x.get("functionResponse").is_some())) {
                        continue;
                    }
                    let shown = m.get("displayContent").filter(|d| !d.is_null());
                    let text = super::text_of(shown.or(m.get("content")));
                    // The context Gemini CLI put before the first prompt is taken off by the
                    // daemon's adapter, as for a live prompt; the session's own context
                    // (`<session_context>`, the folder's listing) is Gemini CLI's, not a prompt.
                    if !text.trim().is_empty() && !text.trim_start().starts_with("<session_context>") {
                        turns.prompt(e, &text);
                    }
                }
                Some("gemini") => {
                    for call in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                        turns.within(e);
                        e.summary.tool_calls += 1;
                        e.push("AfterTool", after_tool(call));
                    }
                    turns.said(e, m.get("content").and_then(Value::as_str).unwrap_or_default());
                }
                _ => {}
            }
        }
        turns.within(e);
        turns.end(e);
    }
}

/// A tool call of a model message as Gemini CLI's AfterTool has it: the result's text as
/// the model saw it (`llmContent`), what the user was shown (`returnDisplay`), an error.
fn after_tool(call: &Value) -> Value {
    let output = call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/functionResponse/response"))
        .map(|r| match r.get("output").or_else(|| r.get("error")) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let error = (call.get("status").and_then(Value::as_str) == Some("error")).then(|| json!({"message": output}));
    json!({
        "tool_name": call.get("name").cloned().unwrap_or(Value::Null),
        "tool_input": call.get("args").cloned().unwrap_or(json!({})),
        "tool_response": {"llmContent": output, "returnDisplay": call.get("resultDisplay").cloned().unwrap_or(Value::Null), "error": error},
    })
}

/// The first workspace directory of Gemini CLI's `<session_context>` message:
/// `- **Workspace Directories:**` followed by `  - /path` lines.
fn workspace(text: &str) -> Option<String> {
    if !text.trim_start().starts_with("<session_context>") {
        return None;
    }
    let mut lines = text.lines().skip_while(|l| !l.contains("Workspace Directories"));
    lines.next()?;
    let dir = lines.next()?.trim().strip_prefix("- ")?.trim();
    (dir.starts_with('/') || dir.chars().nth(1) == Some(':')).then(|| dir.to_string())
}
