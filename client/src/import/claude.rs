//! Claude Code's transcripts, replayed as its hooks deliver them: SessionStart,
//! UserPromptSubmit, PostToolUse / PostToolUseFailure with the tool's input and structured
//! result, PreCompact and SessionStart `compact` at a compaction, Stop at the end of each
//! turn. The daemon then reads the transcript itself for the assistant's words, as it does
//! for a live conversation.

use super::{Emit, Reader, Turns};
use ccmem_proto::model::transcript::{self, Entry};
use serde_json::{json, Value};
use std::collections::HashMap;

pub(super) struct Claude {
    turns: Turns,
    calls: HashMap<String, (String, Value)>,
    /// Commands the user ran with `!`, numbered: each is a call of its own.
    user_commands: u64,
}

impl Default for Claude {
    fn default() -> Self {
        Self {
            turns: Turns::new("SessionStart", ("UserPromptSubmit", "prompt"), ("Stop", "last_assistant_message")),
            calls: HashMap::new(),
            user_commands: 0,
        }
    }
}

impl Reader for Claude {
    fn record(&mut self, v: &Value, e: &mut Emit) {
        let r = transcript::parse_record(v);
        if r.sidechain {
            return; // a subagent's work arrives as its Task tool's result
        }
        e.conversation(r.session_id.as_deref());
        e.origin(r.cwd.as_deref());
        for entry in r.entries {
            match entry {
                Entry::Prompt { text } => self.turns.prompt(e, &text),
                Entry::ToolUse { id, name, input } => {
                    // Counted as the daemon counts them (a call left without its result
                    // too), so that `import` and `history` agree.
                    if !transcript::is_user_command(&id) {
                        e.summary.tool_calls += 1;
                    }
                    self.calls.insert(id, (name, input));
                }
                Entry::ToolResult { id, is_error, text, structured } => {
                    let Some((name, input)) = self.calls.remove(&id) else { continue };
                    self.turns.within(e);
                    let id = if id == transcript::USER_BASH {
                        self.user_commands += 1;
                        format!("{id}-{}", self.user_commands)
                    } else {
                        id
                    };
                    if is_error {
                        let p = json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "error": text});
                        e.push("PostToolUseFailure", p);
                    } else {
                        let response = match structured {
                            Value::Object(_) => structured,
                            _ => json!({"stdout": text, "stderr": "", "interrupted": false}),
                        };
                        let p = json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "tool_response": response});
                        e.push("PostToolUse", p);
                    }
                }
                Entry::CompactSummary { .. } => {
                    self.turns.within(e);
                    e.summary.compactions += 1;
                    e.push("PreCompact", json!({"trigger": "auto", "custom_instructions": ""}));
                    e.push("SessionStart", json!({"source": "compact"}));
                }
                // The daemon reads these from the transcript itself (the Stop names it).
                Entry::AssistantText { .. } | Entry::CompactBoundary | Entry::Clear | Entry::PullRequest { .. } => {}
            }
        }
    }

    fn finish(&mut self, e: &mut Emit) {
        self.turns.within(e);
        self.turns.end(e);
    }
}
