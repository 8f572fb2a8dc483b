//! What Gemini CLI's payloads get wrong and its chat file has right: the turn's last words.
//!
//! Gemini CLI 0.61's `AfterAgent` gives `prompt_response` with the last streamed chunk
//! repeated when the answer came in more than one. Just before the hook runs, the chat
//! file its `transcript_path` names has the answer whole, as the newest `gemini` message;
//! the end of that file is read for it.

use serde_json::Value;
use std::path::Path;

/// Replaces an `AfterAgent`'s `prompt_response` with the answer in the chat file, when the
/// chat's newest message is the model's answer with text.
pub fn take_last_words_from_the_chat(payload: &mut Value) {
    if payload.get("hook_event_name").and_then(Value::as_str) != Some("AfterAgent") {
        return;
    }
    let Some(chat) = payload.get("transcript_path").and_then(Value::as_str) else { return };
    if let Some(words) = last_answer(Path::new(chat)) {
        payload["prompt_response"] = Value::String(words);
    }
}

/// The text of the chat's newest message, when it is the model's (a record of type
/// `gemini` with text; a message updated is written again, so the last copy is the one).
fn last_answer(chat: &Path) -> Option<String> {
    let text = super::tail(chat)?;
    let newest = text.lines().rev().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        matches!(v.get("type")?.as_str()?, "user" | "gemini").then_some(v)
    })?;
    let content = newest.get("content")?.as_str()?.trim();
    (newest.get("type")?.as_str()? == "gemini" && !content.is_empty()).then(|| content.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_words_come_from_the_chat_gemini_wrote() {
        // The end of a real Gemini CLI 0.61.0 chat and the AfterAgent it sent
        // (tests/fixtures/gemini/).
        let dir = tempfile::tempdir().unwrap();
        let chat = dir.path().join("session.jsonl");
        std::fs::write(&chat, include_str!("../../../tests/fixtures/gemini/chat-tail.jsonl")).unwrap();
        let mut p: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/gemini/after-agent.json")).unwrap();
        p["transcript_path"] = Value::String(chat.to_string_lossy().into_owned());
        assert!(p["prompt_response"]
            .as_str()
            .unwrap()
            .ends_with("fixed the file. ran tests (test_x failed), and fixed the file."));
        take_last_words_from_the_chat(&mut p);
        assert_eq!(p["prompt_response"], "All done: created hello.txt, ran tests (test_x failed), and fixed the file.");
        // A chat whose newest message is the user's (the answer not yet written): kept.
        std::fs::write(&chat, "{\"id\":\"1\",\"type\":\"gemini\",\"content\":\"old answer\"}\n{\"id\":\"2\",\"type\":\"user\",\"content\":[{\"text\":\"next\"}]}\n").unwrap();
        let mut q = p.clone();
        q["prompt_response"] = Value::String("as sent".into());
        take_last_words_from_the_chat(&mut q);
        assert_eq!(q["prompt_response"], "as sent");
        // A missing file: as sent.
        q["transcript_path"] = Value::String(dir.path().join("gone").to_string_lossy().into_owned());
        take_last_words_from_the_chat(&mut q);
        assert_eq!(q["prompt_response"], "as sent");
    }
}
