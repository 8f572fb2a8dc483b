//! What a hook prints: the resume context for the agent, and a notice for the user alone
//! when ccmem cannot work (it cannot start, its configuration is broken), once per session.
//!
//! Each agent has its own user-only channel: a `systemMessage` (Claude Code, Codex CLI,
//! Gemini CLI; ccmem's OpenCode plugin and Pi extension read it and show a toast or a
//! warning), a progress line (Copilot CLI). Cursor shows a hook's message only when the
//! hook blocks the session, which ccmem never does: it gets none.

use ccmem_proto::wire::paths;
use serde_json::{json, Value};
use std::io::Write;

/// Who hears a hook's output: the agent, its conversation, and whether the event starts it.
pub(super) struct Audience {
    agent: Option<String>,
    session: Option<String>,
    /// A session start: the one event a notice goes with.
    pub(super) starts: bool,
}

impl Audience {
    /// For `event` of `agent` (None: Claude Code), whose payload is `payload`.
    pub(super) fn of(event: &str, agent: Option<&str>, payload: &Value) -> Self {
        // SessionStart, sessionStart (Copilot CLI, Cursor), session.start (OpenCode's
        // plugin), session_start (Pi's extension).
        let name: String = event.chars().filter(char::is_ascii_alphanumeric).collect();
        let session = ["session_id", "sessionId", "conversation_id"]
            .iter()
            .find_map(|k| payload.get(k).and_then(Value::as_str))
            // One line of the file that remembers them.
            .filter(|s| !s.is_empty() && s.len() <= 256 && !s.chars().any(char::is_control))
            .map(str::to_string);
        Audience { agent: agent.map(str::to_string), session, starts: name.eq_ignore_ascii_case("sessionstart") }
    }
}

/// Prints the hook's output: `context` for the agent and `notice` for the user (when this
/// conversation has not had one yet); nothing when both are empty.
pub(super) fn print(to: &Audience, context: &str, notice: Option<&str>) {
    let notice = notice.filter(|_| first_notice(to.session.as_deref()));
    let mut out = String::new();
    if let (Some(text), Some("copilot")) = (notice, to.agent.as_deref()) {
        // Copilot CLI shows progress lines in its timeline and keeps them from the model.
        out.push_str(&json!({"type": "progress", "message": user_text(text)}).to_string());
        out.push('\n');
    }
    let mut reply = serde_json::Map::new();
    if !context.is_empty() {
        reply.insert(
            "hookSpecificOutput".into(),
            json!({"hookEventName": "SessionStart", "additionalContext": context}),
        );
        // Copilot CLI reads the context from the top level only, Cursor (by its
        // documentation) as `additional_context`.
        match to.agent.as_deref() {
            Some("copilot") => {
                reply.insert("additionalContext".into(), context.into());
            }
            Some("cursor") => {
                reply.insert("additional_context".into(), context.into());
            }
            _ => {}
        }
    }
    if let (Some(text), false) = (notice, matches!(to.agent.as_deref(), Some("copilot" | "cursor"))) {
        reply.insert("systemMessage".into(), user_text(text).into());
    }
    if !reply.is_empty() {
        out.push_str(&Value::Object(reply).to_string());
        out.push('\n');
    }
    if !out.is_empty() {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

/// A notice as the user sees it: one line, no control characters, secrets masked.
fn user_text(text: &str) -> String {
    let text = ccmem_proto::redact::redact(text);
    ccmem_proto::printable::text(&text).lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// Bytes of told conversations kept: past this, the file starts again with the latest.
const REMEMBERED_BYTES: u64 = 16 << 10;

/// Whether `session` has not been told yet (then it is, from now on). Without a session id
/// or a place to remember it in, every start is told: a start is rare, silence is worse.
/// Each id is one line appended (one write, whole, however many hooks run at once).
fn first_notice(session: Option<&str>) -> bool {
    use std::io::Write;
    let (Some(session), Ok(dir)) = (session, paths::state_dir()) else { return true };
    let file = dir.join("hook-notices");
    let told = ccmem_proto::files::untrusted::read(&file, REMEMBERED_BYTES).unwrap_or_default();
    if String::from_utf8_lossy(&told).lines().any(|l| l == session) {
        return false;
    }
    if told.len() as u64 >= REMEMBERED_BYTES {
        let _ = std::fs::remove_file(&file);
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    if let Ok(mut f) = paths::create_private_dirs(&dir).and_then(|()| opts.open(&file)) {
        let _ = f.write_all(format!("{session}\n").as_bytes());
    }
    true
}
