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
    /// A prompt (Claude Code's UserPromptSubmit): its context is the prompt's.
    prompt: bool,
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
        Audience {
            agent: agent.map(str::to_string),
            session,
            starts: name.eq_ignore_ascii_case("sessionstart"),
            prompt: name.eq_ignore_ascii_case("userpromptsubmit"),
        }
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
            json!({"hookEventName": if to.prompt { "UserPromptSubmit" } else { "SessionStart" }, "additionalContext": context}),
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

/// Bytes of told conversations kept: past twice this, the file is cut to its latest ones.
const REMEMBERED_BYTES: u64 = 16 << 10;

/// Whether `session` has not been told yet (then it is, from now on). Without a session id
/// or a place to remember it in, every start is told: a start is rare, silence is worse.
/// Each id is one line appended (one write, whole, however many hooks run at once). Only
/// the file's end is read, and a file grown past twice [`REMEMBERED_BYTES`] (by hooks at
/// once, or by an earlier version) is replaced by its latest lines: it stays bounded, and
/// what it says stays readable.
fn first_notice(session: Option<&str>) -> bool {
    let (Some(session), Ok(dir)) = (session, paths::state_dir()) else { return true };
    first_in(&dir, session)
}

/// [`first_notice`] with its list in `dir`.
fn first_in(dir: &std::path::Path, session: &str) -> bool {
    use std::io::Write;
    let file = dir.join("hook-notices");
    let (told, len) = tail(&file, 2 * REMEMBERED_BYTES).unwrap_or_default();
    let told = String::from_utf8_lossy(&told);
    // The first line of a tail may be cut: it names nobody.
    let whole = if len > told.len() as u64 { told.split_once('\n').map_or("", |(_, rest)| rest) } else { &told };
    if whole.lines().any(|l| l == session) {
        return false;
    }
    if len >= 2 * REMEMBERED_BYTES {
        let keep = &whole[whole.len().saturating_sub(REMEMBERED_BYTES as usize)..];
        let keep = keep.split_once('\n').map_or("", |(_, rest)| rest);
        let _ = ccmem_proto::files::atomic::write(&file, keep.as_bytes(), false);
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    if let Ok(mut f) = paths::create_private_dirs(dir).and_then(|()| opts.open(&file)) {
        let _ = f.write_all(format!("{session}\n").as_bytes());
    }
    true
}

/// The last `max` bytes of the regular file at `path` (read without blocking), and its length.
fn tail(path: &std::path::Path, max: u64) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut f, meta) = ccmem_proto::files::untrusted::open(path)?;
    let len = meta.len();
    f.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut b = Vec::new();
    f.take(max).read_to_end(&mut b)?;
    Ok((b, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file grown past its cap (as an earlier version let it) is read at its end, and cut
    /// back: the conversation told is not told again, and the file stays bounded.
    #[test]
    fn the_told_list_stays_bounded_and_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("hook-notices");
        let old: String = (0..20_000).map(|i| format!("conversation-{i:08}\n")).collect();
        std::fs::write(&file, &old).unwrap();
        let (told, len) = tail(&file, 2 * REMEMBERED_BYTES).unwrap();
        assert_eq!(len, old.len() as u64);
        assert_eq!(told.len() as u64, 2 * REMEMBERED_BYTES);
        assert!(String::from_utf8_lossy(&told).contains("conversation-00019999"));
        assert!(!first_in(tmp.path(), "conversation-00019998"), "told already: read at the end");
        assert!(first_in(tmp.path(), "new-one"), "a new one is told");
        let after = std::fs::read_to_string(&file).unwrap();
        assert!(after.len() as u64 <= REMEMBERED_BYTES + 64, "cut back: {}", after.len());
        assert!(after.ends_with("conversation-00019999\nnew-one\n"), "whole lines, the latest kept");
        assert!(!first_in(tmp.path(), "new-one"), "and remembered");
        assert!(!first_in(tmp.path(), "conversation-00019999"));
    }
}
