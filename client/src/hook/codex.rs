//! What Codex's payloads lack and its rollout file has: a shell command's exit status.
//!
//! Codex 0.169 sends a `Bash` PostToolUse with the command's output alone. Before it runs
//! the hook it has written the command's `item_completed` event (with `exit_code`) to the
//! rollout its `transcript_path` names; the end of that file is read for it (a few hundred
//! KiB, so the hook's cost stays that of starting a process; more only for a command that
//! printed more than that).

use ccmem_proto::wire::api::EXIT_CODE_KEY;
use serde_json::Value;
use std::path::Path;

/// Adds the exit status of a shell command's PostToolUse, when the rollout has it.
pub fn add_exit_code(payload: &mut Value) {
    let is_shell = payload.get("hook_event_name").and_then(Value::as_str) == Some("PostToolUse")
        && payload.get("tool_name").and_then(Value::as_str) == Some("Bash");
    if !is_shell || payload.get(EXIT_CODE_KEY).is_some() {
        return;
    }
    let (Some(call), Some(rollout)) =
        (payload.get("tool_use_id").and_then(Value::as_str), payload.get("transcript_path").and_then(Value::as_str))
    else {
        return;
    };
    if let Some(code) = exit_code(Path::new(rollout), call) {
        payload[EXIT_CODE_KEY] = Value::from(code);
    }
}

/// How far back in the rollout a command's end is looked for when the usual tail does not
/// hold it whole: a command that printed megabytes has them in its `item_completed` line.
const LONG_TAIL: u64 = 16 << 20;

/// The exit status of tool call `call` in the end of `rollout`: its last [`super::TAIL`]
/// bytes, or, when they do not hold the call's end whole, its last [`LONG_TAIL`].
fn exit_code(rollout: &Path, call: &str) -> Option<i64> {
    exit_code_in(&super::tail(rollout)?, call).or_else(|| exit_code_in(&super::tail_of(rollout, LONG_TAIL)?, call))
}

fn exit_code_in(text: &str, call: &str) -> Option<i64> {
    // Newest first; only lines naming the call are parsed.
    text.lines().rev().filter(|l| l.contains(call)).find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        let p = v.get("payload")?;
        match p.get("type").and_then(Value::as_str)? {
            // `{"type":"item_completed","item":{"type":"CommandExecution","id":…,"exit_code":3}}`
            "item_completed" | "exec_command_end" => {
                let item = p.get("item").unwrap_or(p);
                let id = item.get("id").or_else(|| item.get("call_id")).and_then(Value::as_str)?;
                (id == call).then(|| item.get("exit_code").and_then(Value::as_i64)).flatten()
            }
            // What the model was told: `Process exited with code 3`.
            "function_call_output" if p.get("call_id").and_then(Value::as_str) == Some(call) => {
                let out = p.get("output").and_then(Value::as_str)?;
                out.lines()
                    .take(8)
                    .find_map(|l| l.trim().strip_prefix("Process exited with code ")?.trim().parse().ok())
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_status_comes_from_the_rollout_codex_wrote() {
        // Lines of a real Codex 0.169.0 rollout (tests/fixtures/codex/rollout-tail.jsonl).
        let dir = tempfile::tempdir().unwrap();
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(&rollout, include_str!("../../../tests/fixtures/codex/rollout-tail.jsonl")).unwrap();
        let mut p = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "call_2_0",
            "transcript_path": rollout, "tool_response": ""});
        add_exit_code(&mut p);
        assert_eq!(p[EXIT_CODE_KEY], 3);
        // Another call, a missing file, a FIFO: nothing added, nothing waited for.
        for (call, path) in [("call_9_9", rollout.clone()), ("call_2_0", dir.path().join("gone.jsonl"))] {
            let mut p = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": call, "transcript_path": path});
            add_exit_code(&mut p);
            assert!(p.get(EXIT_CODE_KEY).is_none(), "{p}");
        }
        // A failing command that printed 600 KiB: its line begins before the usual tail.
        let big = dir.path().join("big.jsonl");
        let output = "x".repeat(600 << 10);
        let line = serde_json::json!({"type": "event_msg", "payload": {"type": "item_completed",
            "item": {"type": "CommandExecution", "id": "call_7_0", "aggregated_output": output, "exit_code": 2}}});
        std::fs::write(
            &big,
            format!("{line}\n{{\"type\": \"event_msg\", \"payload\": {{\"type\": \"task_started\"}}}}\n"),
        )
        .unwrap();
        let mut p = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "call_7_0",
            "transcript_path": big});
        add_exit_code(&mut p);
        assert_eq!(p[EXIT_CODE_KEY], 2, "round three's tester: a large failure's status was lost");
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let mut p = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "call_2_0", "transcript_path": fifo});
            add_exit_code(&mut p);
            assert!(p.get(EXIT_CODE_KEY).is_none());
        }
    }
}
