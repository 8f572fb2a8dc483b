//! What Copilot CLI's payloads lack and its session log has: the turn's last words.
//!
//! Copilot CLI 1.0's `Stop` gives the path of the session's `events.jsonl` but not what the
//! agent said. Just before the hook runs, that log has the turn's messages; its end is read
//! for the newest `assistant.message` with text (after the newest `user.message`).

use serde_json::Value;
use std::path::Path;

/// Adds `last_assistant_message` to a `Stop` of the main agent, from its session's log.
/// Waits at most `wait` for the log to have the turn's end.
pub fn take_last_words_from_the_events(payload: &mut Value, wait: std::time::Duration) {
    let is_stop = payload.get("hook_event_name").and_then(Value::as_str) == Some("Stop");
    let subagent = payload.get("parent_agent_id").and_then(Value::as_str).is_some_and(|p| !p.is_empty());
    if !is_stop || subagent || payload.get("last_assistant_message").is_some_and(|m| !m.is_null()) {
        return;
    }
    let Some(log) = payload.get("transcript_path").and_then(Value::as_str) else { return };
    let Some(at) = payload.get("timestamp").and_then(Value::as_str) else { return };
    if let Some(words) = last_words(Path::new(log), at, wait) {
        payload["last_assistant_message"] = Value::String(words);
    }
}

/// The text of the newest assistant message of the turn in the log's end. Copilot CLI
/// writes its log behind: the turn's last message, even its prompt, may land after the hook
/// has started, but before the log's record of this very hook starting (`hook.start` of
/// `agentStop`, with the payload's time), which is waited for (at most `wait`).
fn last_words(log: &Path, at: &str, wait: std::time::Duration) -> Option<String> {
    let started = std::time::Instant::now();
    loop {
        let text = super::tail(log)?;
        if let Some(before) = before_stop(&text, at) {
            return words_in(before);
        }
        if started.elapsed() >= wait {
            return None; // not this turn's words: none rather than the last turn's
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The log up to its record of the `agentStop` hook started at `at` (the payload's time), when
/// it has one. The record names that time in its input, in milliseconds; its own `timestamp`
/// is taken apart from it and is sometimes a millisecond later.
fn before_stop<'t>(text: &'t str, at: &str) -> Option<&'t str> {
    let millis = chrono::DateTime::parse_from_rfc3339(at).ok().map(|t| t.timestamp_millis());
    let mut offset = 0;
    let mut found = None;
    for line in text.split('\n') {
        if line.contains("\"agentStop\"") {
            let ours = serde_json::from_str::<Value>(line).is_ok_and(|v| {
                v.get("type").and_then(Value::as_str) == Some("hook.start")
                    && v.pointer("/data/hookType").and_then(Value::as_str) == Some("agentStop")
                    && match v.pointer("/data/input/timestamp").and_then(Value::as_i64) {
                        Some(input) => Some(input) == millis,
                        None => v.get("timestamp").and_then(Value::as_str) == Some(at),
                    }
            });
            if ours {
                found = Some(offset);
            }
        }
        offset += line.len() + 1;
    }
    found.map(|o| &text[..o])
}

/// The newest assistant message with text after the last prompt.
fn words_in(text: &str) -> Option<String> {
    for line in text.lines().rev() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        match v.get("type").and_then(Value::as_str) {
            Some("user.message") => return None, // the turn has no words yet
            // A subagent's messages name the tool call that started it.
            Some("assistant.message") if v.pointer("/data/parentToolCallId").is_none_or(Value::is_null) => {
                let content = v.pointer("/data/content").and_then(Value::as_str).unwrap_or_default().trim();
                if !content.is_empty() {
                    return Some(content.to_string());
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_words_come_from_the_session_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        std::fs::write(
            &log,
            concat!(
                r#"{"type":"user.message","data":{"content":"Say hi"}}"#,
                "\n",
                r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"bash"}]}}"#,
                "\n",
                r#"{"type":"tool.execution_complete","data":{"success":true}}"#,
                "\n",
                r#"{"type":"assistant.message","data":{"content":"Done: the file is there. Next: run the tests."}}"#,
                "\n",
                r#"{"type":"assistant.turn_end","data":{}}"#,
                "\n",
                r#"{"type":"hook.start","data":{"hookType":"agentStop"},"timestamp":"2026-11-27T04:22:36.097Z"}"#,
                "\n",
            ),
        )
        .unwrap();
        let mut p = serde_json::json!({"hook_event_name": "Stop", "transcript_path": log, "timestamp": "2026-11-27T04:22:36.097Z"});
        take_last_words_from_the_events(&mut p, std::time::Duration::from_millis(100));
        assert_eq!(p["last_assistant_message"], "Done: the file is there. Next: run the tests.");
        // A subagent's Stop: not the agent's words.
        let mut sub = serde_json::json!({"hook_event_name": "Stop", "transcript_path": log, "timestamp": "2026-11-27T04:22:36.097Z", "parent_agent_id": "x"});
        take_last_words_from_the_events(&mut sub, std::time::Duration::from_millis(100));
        assert!(sub.get("last_assistant_message").is_none());
        // The log not yet written up to this turn's stop (Copilot CLI writes it behind): not
        // the last turn's words, none.
        let mut later = serde_json::json!({"hook_event_name": "Stop", "transcript_path": log, "timestamp": "2026-11-27T04:30:00.000Z"});
        take_last_words_from_the_events(&mut later, std::time::Duration::from_millis(100));
        assert!(later.get("last_assistant_message").is_none());
    }

    /// As Copilot CLI 1.0.102 writes it: the hook's input has the payload's time in
    /// milliseconds; the record's own time was taken after it (here a millisecond later).
    #[test]
    fn the_stop_is_found_by_the_time_in_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        std::fs::write(
            &log,
            concat!(
                r#"{"type":"user.message","data":{"content":"Go on"},"timestamp":"2026-11-27T09:15:58.885Z"}"#,
                "\n",
                r#"{"type":"assistant.message","data":{"content":"Still here."},"timestamp":"2026-11-27T09:15:59.686Z"}"#,
                "\n",
                r#"{"type":"hook.start","data":{"hookInvocationId":"f236d2d3","hookType":"agentStop","input":{"stopReason":"end_turn","timestamp":1795770959690}},"timestamp":"2026-11-27T09:15:59.691Z"}"#,
                "\n",
            ),
        )
        .unwrap();
        let mut p = serde_json::json!({"hook_event_name": "Stop", "transcript_path": log, "timestamp": "2026-11-27T09:15:59.690Z"});
        take_last_words_from_the_events(&mut p, std::time::Duration::from_millis(100));
        assert_eq!(p["last_assistant_message"], "Still here.");
        // Another stop's record (its input a millisecond apart) is not this one's.
        let mut other = serde_json::json!({"hook_event_name": "Stop", "transcript_path": log, "timestamp": "2026-11-27T09:15:59.691Z"});
        take_last_words_from_the_events(&mut other, std::time::Duration::from_millis(100));
        assert!(other.get("last_assistant_message").is_none());
    }
}
