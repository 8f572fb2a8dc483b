//! `ccmemctl hook`: run by the agent on every hook event, so it must cost little more than
//! starting a process and must never break or slow the agent.
//!
//! Reads the payload from stdin, trims what the daemon does not need (tool outputs can be
//! megabytes), and sends it. The daemon answers as soon as the event is queued for its
//! project (so events keep their order and nobody waits for a checkpoint); SessionStart's
//! answer carries the resume context, which is printed. Whatever happens, the exit code is 0 and nothing reaches stderr; reasons go to
//! the daemon's log, or to a client log when the daemon cannot be reached.

use crate::conn::{CallError, Conn};
use ccmem_proto::wire::api::{method, HookReply};
use ccmem_proto::{model::session::Timestamp, wire::paths};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

mod codex;
mod copilot;
mod gemini;
mod notice;
mod payload;
mod stall;

/// How much of the end of an agent's own record of the conversation a hook reads.
const TAIL: u64 = 512 * 1024;

/// The last [`TAIL`] bytes of `path`, as text (a regular file only, opened without blocking:
/// a payload can name anything).
fn tail(path: &Path) -> Option<String> {
    tail_of(path, TAIL)
}

/// The last `n` bytes of `path`, as [`tail`] reads them.
fn tail_of(path: &Path, n: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut f, meta) = ccmem_proto::files::untrusted::open(path).ok()?;
    f.seek(SeekFrom::Start(meta.len().saturating_sub(n))).ok()?;
    let mut bytes = Vec::new();
    f.take(n).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// How long the hook may spend starting a daemon that is not running.
const START_BUDGET: Duration = Duration::from_millis(300);
/// How long SessionStart waits for its context.
const REPLY_WAIT: Duration = Duration::from_secs(2);
/// Overrides all three, in milliseconds, for machines where 300 ms does not start a process
/// (a loaded CI runner, a home on a network file system).
const TIMEOUT_VAR: &str = "CCMEM_HOOK_TIMEOUT_MS";

/// `CCMEM_HOOK_TIMEOUT_MS`, when set (at most a minute; the agent's own hook timeout is the
/// real limit).
fn timeout_override() -> Option<Duration> {
    let ms = std::env::var(TIMEOUT_VAR).ok().and_then(|v| v.trim().parse::<u64>().ok())?;
    Some(Duration::from_millis(ms.min(60_000)))
}

/// (start budget, reply wait): the defaults, or both the override.
fn budgets() -> (Duration, Duration) {
    timeout_override().map_or((START_BUDGET, REPLY_WAIT), |d| (d, d))
}

/// How long a hook waits for the agent to have written the turn's end to its own log:
/// [`LOG_WAIT`], or the override on a machine too loaded for it.
fn log_wait() -> Duration {
    timeout_override().unwrap_or(LOG_WAIT)
}
/// See [`log_wait`]: the agent writes its log behind, seldom by more than a few milliseconds.
const LOG_WAIT: Duration = Duration::from_millis(1000);
/// Characters of any one string kept from a tool's input (or other text of the agent's).
const KEEP_CHARS: usize = 32 * 1024;
/// Characters of any one string kept from a tool's output: its start and its end, where a
/// runner prints what it ran and its summary...
const OUTPUT_KEEP: usize = 32 * 1024;
/// ...and, from the middle cut out, the lines that read like results (a summary per test
/// binary, each failure), at most this many bytes: 1,800 Rust tests in three binaries print
/// 71 KB, of which the three summaries and the failures are what the daemon counts from.
/// The hook sends little more than before for any output, and counts stay whole.
const MIDDLE_KEEP: usize = 64 * 1024;
/// A payload larger than this once trimmed is trimmed again with [`KEEP_CHARS`] for outputs
/// too (a response with many long strings).
const PAYLOAD_BUDGET: usize = 768 * 1024;

/// Runs the hook against `socket` (default: the usual resolution), starting the daemon if
/// `autostart`, for `agent` (`codex`, …; Claude Code when None); always exit code 0.
pub fn run(socket: Option<&Path>, autostart: bool, agent: Option<&str>) -> std::process::ExitCode {
    let mut to = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| forward(socket, autostart, agent, &mut to)));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(Failed { why, unreachable })) => {
            log(&why);
            // The daemon cannot be reached or started: the session goes unrecorded, and the
            // user (never the agent) hears of it when it starts.
            if let Some(to) = to.filter(|t| unreachable && t.starts) {
                let text = format!("ccmem is not recording this session: {why}. `ccmemctl doctor` says how to fix it.");
                notice::print(&to, "", Some(&text));
            }
        }
        Err(_) => log("the hook panicked"),
    }
    std::process::ExitCode::SUCCESS
}

/// Why a hook did not get through, and whether it is because ccmem cannot run (rather
/// than a payload it refused).
struct Failed {
    why: String,
    unreachable: bool,
}

impl Failed {
    /// The daemon cannot be reached or started.
    fn unreachable(why: String) -> Self {
        Failed { why, unreachable: true }
    }
}

impl From<String> for Failed {
    fn from(why: String) -> Self {
        Failed { why, unreachable: false }
    }
}

impl From<&str> for Failed {
    fn from(why: &str) -> Self {
        Failed { why: why.to_string(), unreachable: false }
    }
}

/// Sends the payload and prints the reply; `to` is set to who hears it once the payload is
/// read.
fn forward(
    socket: Option<&Path>,
    autostart: bool,
    agent: Option<&str>,
    to: &mut Option<notice::Audience>,
) -> Result<(), Failed> {
    // When the agent ran this hook: its events' order, should they reach the daemon late.
    let sent = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut payload = payload::read(std::io::stdin(), payload::INPUT_IDLE)?;
    if let Some(map) = payload.as_object_mut() {
        map.insert(ccmem_proto::wire::api::SENT_TIME.into(), Value::from(sent));
    }
    let event =
        payload.get("hook_event_name").and_then(Value::as_str).ok_or("the payload has no hook_event_name")?.to_string();
    trim(&mut payload);
    // GitHub Copilot CLI runs a project's Claude Code hooks too (`.claude/settings.json`),
    // with payloads of its own: it says so in the hook's environment.
    // So does Cursor (from `~/.claude/settings.json` too), saying so with CURSOR_VERSION.
    let copilot = std::env::var_os("COPILOT_CLI").is_some_and(|v| v == "1");
    let cursor = std::env::var_os("CURSOR_VERSION").is_some_and(|v| !v.is_empty());
    let agent = match agent {
        None | Some("") if copilot => Some("copilot"),
        None | Some("") if cursor => Some("cursor"),
        a => a,
    };
    // The agent is named for the daemon's adapters; Claude Code's payloads go as they come.
    let agent = agent.map(str::trim).filter(|a| !a.is_empty() && !a.eq_ignore_ascii_case("claude"));
    let agent = agent.map(str::to_ascii_lowercase);
    let agent = agent.as_deref();
    if let (Some(map), Some(name)) = (payload.as_object_mut(), agent) {
        map.insert(ccmem_proto::wire::api::AGENT_KEY.into(), Value::String(name.to_string()));
    }
    let audience = to.insert(notice::Audience::of(&event, agent, &payload));
    if agent == Some("codex") {
        codex::add_exit_code(&mut payload);
    }
    if agent == Some("gemini") {
        gemini::take_last_words_from_the_chat(&mut payload);
    }
    if agent == Some("copilot") {
        copilot::take_last_words_from_the_events(&mut payload, log_wait());
    }
    // Claude Code tells its hooks where it was started in the environment only.
    if let (Some(map), Some(dir)) = (payload.as_object_mut(), std::env::var_os("CLAUDE_PROJECT_DIR")) {
        if let Some(dir) = dir.to_str().filter(|d| !d.is_empty()) {
            map.entry("project_dir").or_insert_with(|| Value::String(dir.to_string()));
        }
    }
    let socket = paths::socket_path(socket).map_err(|e| Failed::unreachable(e.to_string()))?;
    let (start_budget, full_wait) = budgets();
    // A daemon that took a connection and never answered (stopped, hung) made an earlier
    // hook wait its whole time: until it answers again, each hook asks only briefly.
    let mut stalled = stall::marked(&socket);
    let reply_wait = if stalled { full_wait.min(stall::WAIT) } else { full_wait };
    let (mut conn, started) = connect(&socket, autostart, start_budget, reply_wait)?;
    if started {
        // A daemon this hook just started is not the one that did not answer: it is waited
        // for fully (its first answer builds the context), and the mark goes.
        stall::clear(&socket);
        stalled = false;
        conn.set_timeout(full_wait).map_err(|e| Failed::unreachable(e.to_string()))?;
    }
    // Every event waits for the daemon's word that it is recorded (applied and in the
    // journal, before any read or checkpoint it starts): the agent's next event cannot
    // overtake it, and a crash of the daemon after the answer loses nothing. Only
    // SessionStart waits for more. (A daemon that took the event but answered late still
    // records it: nothing to tell.)
    let mut result = conn.call(method::HOOK, &payload);
    if audience.starts && died_under(&result) {
        // The daemon died as the agent started (killed, crashed, stopping): what it had
        // answered is in its journal, and a new one gives the context from it.
        drop(conn);
        std::thread::sleep(std::time::Duration::from_millis(50));
        if let Ok((mut again, _)) = connect(&socket, autostart, start_budget, reply_wait) {
            result = again.call(method::HOOK, &payload);
        }
    }
    let reply: HookReply = match result {
        Ok(r) => r,
        Err(CallError::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
            // Marked from the full wait only: a daemon catching up may miss a brief ask, and
            // the mark's age bounds how long hooks ask briefly. And only when the daemon
            // itself does not answer: one project's slow answer (a repository whose git
            // hangs) must not shorten every other project's wait.
            if !stalled && !answers_ping(&socket) {
                stall::mark(&socket);
            }
            // The event is in the daemon's queue: a daemon that answers late still records
            // it, so there is nothing to tell the user of.
            return Err(format!("{event}: ccmemd at {} did not answer: {e}", socket.display()).into());
        }
        Err(e) => return Err(format!("{event}: {e:?}").into()),
    };
    if stalled {
        stall::clear(&socket);
    }
    notice::print(audience, &reply.additional_context, reply.notice.as_deref().filter(|_| audience.starts));
    Ok(())
}

/// Whether the call failed because the daemon went away before it answered (not because it
/// was slow, or said no).
fn died_under(result: &Result<HookReply, CallError>) -> bool {
    use std::io::ErrorKind::*;
    matches!(result, Err(CallError::Io(e)) if matches!(e.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof))
}

/// Connects within `wait`, or starts the daemon within `budget` (then says so); either way
/// each request then waits `wait` at most. A daemon that is simply not running while auto-start is off is the user's choice (a
/// service to come, a pause): that failure is not theirs to hear of at every session start.
/// Whether the daemon at `socket` answers a ping within [`stall::WAIT`]: alive, whatever
/// one project's answer costs.
fn answers_ping(socket: &Path) -> bool {
    let Ok(mut conn) = Conn::connect_within(socket, stall::WAIT) else { return false };
    conn.set_timeout(stall::WAIT).is_ok() && conn.call::<_, String>(method::PING, &serde_json::json!({})).is_ok()
}

fn connect(socket: &Path, autostart: bool, budget: Duration, wait: Duration) -> Result<(Conn, bool), Failed> {
    let mut started = false;
    let mut conn = match Conn::connect_within(socket, wait) {
        Ok(c) => c,
        Err(e) if crate::autostart::is_absent(&e) && autostart => {
            started = true;
            crate::autostart::start_and_connect(socket, budget).map_err(Failed::unreachable)?
        }
        Err(e) => {
            let why = format!("cannot reach ccmemd at {}: {e}", socket.display());
            return Err(Failed { why, unreachable: !crate::autostart::is_absent(&e) });
        }
    };
    conn.set_timeout(wait).map_err(|e| Failed::unreachable(e.to_string()))?;
    Ok((conn, started))
}

/// Keeps what the daemon reads and bounds the rest: tool outputs keep the start and the end
/// of each long string and the result lines between (where test summaries and errors are),
/// tool inputs the start.
///
/// Whatever keys the payload has (an agent's own, a transcript record an import replays),
/// it then fits the protocol's frame: strings anywhere in it are cut shorter and shorter
/// until it does, so that no record can stop an import or a hook for good.
pub(crate) fn trim(payload: &mut Value) {
    let original = payload.clone();
    trim_outputs(payload, OUTPUT_KEEP);
    if size(payload) > PAYLOAD_BUDGET {
        *payload = original;
        trim_outputs(payload, KEEP_CHARS);
    }
    // Every string cut shorter, then, for many short strings (a TodoWrite of thousands of
    // items), which no cut of a string makes fit, the longest lists to their first half: a
    // payload over the frame was lost whole (an import died at it every time). One size
    // computed per step.
    let mut keep = KEEP_CHARS;
    while size(payload) > PAYLOAD_BUDGET {
        if keep > 64 {
            shorten(payload, keep, false);
            keep /= 4;
        } else if !halve_longest_list(payload) {
            break;
        }
    }
}

/// Drops the second half of the longest list in `v` (of two items or more); false when
/// there is none.
fn halve_longest_list(v: &mut Value) -> bool {
    fn longest(v: &Value) -> usize {
        match v {
            Value::Array(items) => items.iter().map(longest).max().unwrap_or(0).max(items.len()),
            Value::Object(map) => map.values().map(longest).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn halve(v: &mut Value, len: usize) -> bool {
        match v {
            Value::Array(items) if items.len() == len => {
                items.truncate(len / 2);
                true
            }
            Value::Array(items) => items.iter_mut().any(|i| halve(i, len)),
            Value::Object(map) => map.values_mut().any(|i| halve(i, len)),
            _ => false,
        }
    }
    let len = longest(v);
    len >= 2 && halve(v, len)
}

fn size(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(0, |b| b.len())
}

fn trim_outputs(payload: &mut Value, output_keep: usize) {
    for key in ["tool_response", "error"] {
        if let Some(resp) = payload.get_mut(key) {
            shorten(resp, output_keep, true);
        }
    }
    if let Some(input) = payload.get_mut("tool_input") {
        shorten(input, KEEP_CHARS, false);
    }
    for key in ["last_assistant_message", "prompt", "compact_summary"] {
        if let Some(v) = payload.get_mut(key) {
            shorten(v, KEEP_CHARS, false);
        }
    }
}

fn shorten(v: &mut Value, keep: usize, output: bool) {
    match v {
        Value::String(s) if s.len() > keep => {
            let head = floor(s, keep / 2);
            let tail = if output { ceil(s, s.len() - keep / 2) } else { s.len() };
            let cut = s.len() - head - (s.len() - tail);
            let middle = if output { result_lines(&s[head..tail]) } else { String::new() };
            *s = format!("{}\n{middle}[… {cut} bytes cut by ccmemctl …]\n{}", &s[..head], &s[tail..]);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| shorten(i, keep, output)),
        Value::Object(map) => map.values_mut().for_each(|i| shorten(i, keep, output)),
        _ => {}
    }
}

/// The lines of a cut part of an output that read like results (summaries, failures,
/// errors), in order, at most [`MIDDLE_KEEP`] bytes.
fn result_lines(cut: &str) -> String {
    const WORDS: &[&str] = &[
        "test result:",
        "passed",
        "failed",
        "FAILED",
        "FAIL",
        "panicked",
        "error",
        "Error",
        "Tests:",
        "Test Suites:",
        "not ok",
        "# pass",
        "# fail",
        "# tests",
        "Failures:",
        "examples,",
        "●",
        "✕",
        "✗",
        "✖",
    ];
    let mut out = String::new();
    for line in cut.lines().filter(|l| l.len() <= 500 && WORDS.iter().any(|w| l.contains(w))) {
        if out.len() + line.len() + 1 > MIDDLE_KEEP {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
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
        // A reason can quote the payload or the daemon's reply (a path the agent gave): the
        // log holds nothing the daemon would not keep. Only failures are logged, so the
        // filter's cost is not on the hook's way.
        let why = ccmem_proto::redact::redact(why);
        let _ = writeln!(f, "{} hook: {why}", Timestamp::now().iso());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_summaries_in_the_middle_of_a_huge_output_are_kept() {
        // Three test binaries, each with 20,000 passing tests and its summary line.
        let mut out = String::new();
        for bin in 0..3 {
            for t in 0..20_000 {
                out.push_str(&format!("test tests::case_{bin}_{t} ... ok\n"));
            }
            out.push_str(&format!("test result: ok. 20000 passed; 0 failed; 0 ignored; finished in 1.{bin}s\n\n"));
        }
        let mut p = json!({"hook_event_name": "PostToolUse", "tool_response": {"stdout": out}});
        trim(&mut p);
        let s = p["tool_response"]["stdout"].as_str().unwrap();
        assert!(s.len() < OUTPUT_KEEP + MIDDLE_KEEP + 200, "{}", s.len());
        assert_eq!(s.matches("test result: ok. 20000 passed").count(), 3, "every binary's summary is kept");
        assert!(serde_json::to_vec(&p).unwrap().len() < ccmem_proto::wire::frame::MAX_FRAME);
    }

    /// Found by both independent testers: a TodoWrite of thousands of short items was over
    /// the frame whatever its strings were cut to, and was lost whole.
    #[test]
    fn a_list_of_thousands_of_short_items_stays_within_a_frame() {
        let todos: Vec<Value> = (0..12_000)
            .map(|i| json!({"content": format!("task number {i} {}", "y".repeat(80)), "status": "pending", "activeForm": "x"}))
            .collect();
        let mut p = json!({"hook_event_name": "PostToolUse", "tool_name": "TodoWrite", "tool_input": {"todos": todos}});
        trim(&mut p);
        assert!(serde_json::to_vec(&p).unwrap().len() < PAYLOAD_BUDGET);
        let kept = p["tool_input"]["todos"].as_array().unwrap();
        assert!(kept.len() > 1000, "the first items are kept: {}", kept.len());
        assert_eq!(
            kept[0]["content"].as_str().unwrap().split(' ').take(3).collect::<Vec<_>>(),
            ["task", "number", "0"]
        );
    }

    #[test]
    fn a_response_of_many_long_strings_stays_within_a_frame() {
        let long = "y".repeat(1 << 20);
        let mut p =
            json!({"hook_event_name": "PostToolUse", "tool_response": {"a": long, "b": long, "c": long, "d": long}});
        trim(&mut p);
        assert!(serde_json::to_vec(&p).unwrap().len() < PAYLOAD_BUDGET);
    }

    #[test]
    fn big_tool_output_keeps_its_start_and_end() {
        let out = format!("START{}END", "x".repeat(5 << 20));
        let mut p = json!({"hook_event_name": "PostToolUse", "tool_response": {"stdout": out, "n": 1}, "tool_input": {"command": "é".repeat(40_000)}});
        trim(&mut p);
        let s = p["tool_response"]["stdout"].as_str().unwrap();
        assert!(s.len() < OUTPUT_KEEP + 200 && s.starts_with("START") && s.ends_with("END"), "{}", s.len());
        assert!(s.contains("bytes cut by ccmemctl"));
        let c = p["tool_input"]["command"].as_str().unwrap();
        assert!(c.len() < KEEP_CHARS + 200 && c.starts_with('é'));
        assert_eq!(p["tool_response"]["n"], 1);
    }
}
