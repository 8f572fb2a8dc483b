//! `ccmemctl hook`: run by the agent on every hook event, so it must cost little more than
//! starting a process and must never break or slow the agent.
//!
//! Reads the payload from stdin, trims what the daemon does not need (tool outputs can be
//! megabytes), and sends it. The daemon answers as soon as the event is queued for its
//! project (so events keep their order and nobody waits for a checkpoint); SessionStart's
//! answer carries the resume context, which is printed. Whatever happens, the exit code is 0 and nothing reaches stderr; reasons go to
//! the daemon's log, or to a client log when the daemon cannot be reached.

use crate::conn::Conn;
use ccmem_proto::api::{method, HookReply};
use ccmem_proto::{paths, session::Timestamp};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// How long the hook may spend starting a daemon that is not running.
const START_BUDGET: Duration = Duration::from_millis(300);
/// How long SessionStart waits for its context.
const REPLY_WAIT: Duration = Duration::from_secs(2);
/// Characters of any one string kept from a tool's input or output.
const KEEP_CHARS: usize = 32 * 1024;
/// Payloads larger than this are not read.
const MAX_INPUT: u64 = 64 << 20;

/// Runs the hook against `socket` (default: the usual resolution), starting the daemon if
/// `autostart`; always exit code 0.
pub fn run(socket: Option<&Path>, autostart: bool) -> std::process::ExitCode {
    let result = std::panic::catch_unwind(|| forward(socket, autostart));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(why)) => log(&why),
        Err(_) => log("the hook panicked"),
    }
    std::process::ExitCode::SUCCESS
}

fn forward(socket: Option<&Path>, autostart: bool) -> Result<(), String> {
    let mut input = Vec::new();
    std::io::stdin().take(MAX_INPUT).read_to_end(&mut input).map_err(|e| format!("cannot read the payload: {e}"))?;
    let mut payload: Value = serde_json::from_slice(&input).map_err(|e| format!("the payload is not JSON: {e}"))?;
    let event =
        payload.get("hook_event_name").and_then(Value::as_str).ok_or("the payload has no hook_event_name")?.to_string();
    trim(&mut payload);
    // Claude Code tells its hooks where it was started in the environment only.
    if let (Some(map), Some(dir)) = (payload.as_object_mut(), std::env::var_os("CLAUDE_PROJECT_DIR")) {
        if let Some(dir) = dir.to_str().filter(|d| !d.is_empty()) {
            map.entry("project_dir").or_insert_with(|| Value::String(dir.to_string()));
        }
    }
    let socket = paths::socket_path(socket).map_err(|e| e.to_string())?;
    let mut conn = connect(&socket, autostart)?;
    conn.set_timeout(REPLY_WAIT).map_err(|e| e.to_string())?;
    // Every event waits for the daemon's word that it is queued (before it is handled), so
    // that the agent's next event cannot overtake it. Only SessionStart waits for more.
    let reply: HookReply = conn.call(method::HOOK, &payload).map_err(|e| format!("{event}: {e:?}"))?;
    {
        if !reply.additional_context.is_empty() {
            let out = serde_json::json!({
                "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": reply.additional_context}
            });
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}");
            let _ = stdout.flush();
        }
    }
    Ok(())
}

fn connect(socket: &Path, autostart: bool) -> Result<Conn, String> {
    match Conn::connect(socket) {
        Ok(c) => Ok(c),
        Err(e) if autostart && crate::autostart::is_absent(&e) => {
            crate::autostart::start_and_connect(socket, START_BUDGET)
        }
        Err(e) => Err(format!("cannot reach ccmemd at {}: {e}", socket.display())),
    }
}

/// Keeps what the daemon reads and bounds the rest: tool outputs keep the start and the end
/// of each long string (where test summaries and errors are), tool inputs the start.
fn trim(payload: &mut Value) {
    for key in ["tool_response", "error"] {
        if let Some(resp) = payload.get_mut(key) {
            shorten(resp, true);
        }
    }
    if let Some(input) = payload.get_mut("tool_input") {
        shorten(input, false);
    }
    for key in ["last_assistant_message", "prompt", "compact_summary"] {
        if let Some(v) = payload.get_mut(key) {
            shorten(v, false);
        }
    }
}

fn shorten(v: &mut Value, keep_end: bool) {
    match v {
        Value::String(s) if s.len() > KEEP_CHARS => {
            let head = floor(s, KEEP_CHARS / 2);
            let tail = if keep_end { ceil(s, s.len() - KEEP_CHARS / 2) } else { s.len() };
            let cut = s.len() - head - (s.len() - tail);
            *s = format!("{}\n[… {cut} bytes cut by ccmemctl …]\n{}", &s[..head], &s[tail..]);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| shorten(i, keep_end)),
        Value::Object(map) => map.values_mut().for_each(|i| shorten(i, keep_end)),
        _ => {}
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Appends a line to the client's log (kept under 1 MiB), never to the agent's terminal.
fn log(why: &str) {
    let Ok(dir) = paths::state_dir() else { return };
    if let Ok(mut f) = paths::open_log(&dir.join("ccmemctl.log"), 1 << 20) {
        let _ = writeln!(f, "{} hook: {why}", Timestamp::now().iso());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn big_tool_output_keeps_its_start_and_end() {
        let out = format!("START{}END", "x".repeat(5 << 20));
        let mut p = json!({"hook_event_name": "PostToolUse", "tool_response": {"stdout": out, "n": 1}, "tool_input": {"command": "é".repeat(40_000)}});
        trim(&mut p);
        let s = p["tool_response"]["stdout"].as_str().unwrap();
        assert!(s.len() < KEEP_CHARS + 200 && s.starts_with("START") && s.ends_with("END"), "{}", s.len());
        assert!(s.contains("bytes cut by ccmemctl"));
        let c = p["tool_input"]["command"].as_str().unwrap();
        assert!(c.len() < KEEP_CHARS + 200 && c.starts_with('é'));
        assert_eq!(p["tool_response"]["n"], 1);
    }
}
