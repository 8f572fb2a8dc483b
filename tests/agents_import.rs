//! `ccmemctl import` of the other agents' own records, into a real daemon: real sessions of
//! Codex and Oh My Pi (tests/fixtures/agent-sessions/SOURCES.md), and the chats and exports
//! the real Gemini CLI and OpenCode wrote (tests/fixtures/gemini/, tests/fixtures/opencode/).
#![cfg(unix)]

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel)
}

/// Imports `file` into a fresh project; the summary and the project's status.
fn import(env: &Env, file: &Path) -> (Value, Value) {
    let root = repo(env, "proj");
    let out = env.ctl(&["--json", "import", file.to_str().unwrap(), "--project", root.to_str().unwrap()]);
    assert_ok(&out, "import");
    let summary: Value = serde_json::from_slice(&out.stdout).expect("import --json");
    (summary, env.project_status(&root))
}

fn todos(status: &Value) -> Vec<(String, String)> {
    status["session"]["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (t["content"].as_str().unwrap_or("").to_string(), t["status"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn a_real_codex_rollout_is_imported_as_codex_sessions_hooks_would_have_sent_it() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let rollout = env.unpack("agent-sessions/jdx_fnox_codex_019f1f6f.jsonl.gz");
    let (summary, status) = import(&env, &rollout);
    assert_eq!(summary["agent"], "codex", "{summary:#}");
    assert_eq!(summary["conversation_id"], "019f1f6f-311c-7543-b0f9-f126da3c5434");
    // 163 exec_command, 21 apply_patch, 1 write_stdin; 7 prompts; 1 compaction.
    assert_eq!(
        (summary["tool_calls"].as_u64(), summary["prompts"].as_u64(), summary["compactions"].as_u64()),
        (Some(185), Some(7), Some(1)),
        "{summary:#}"
    );
    let conv = &status["session"]["conversations"][0];
    assert_eq!(conv["agent"], "codex");
    // The files its patches touched, under the project (they were under /Users/jdx/src/fnox).
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.keys().any(|f| f.ends_with(".rs")), "{files:?}");
    assert!(!status.to_string().contains("/Users/jdx/src/fnox"), "paths are the project's");
    assert!(conv["digest"]["last_words"].as_str().is_some_and(|w| !w.is_empty()), "{conv:#}");
    assert!(conv["compacted"] == true, "{conv:#}");
    let ctx = text(&env.ctl(&["context", status["root"].as_str().unwrap_or_default()]).stdout);
    assert!(ctx.contains("codex resume 019f1f6f-311c-7543-b0f9-f126da3c5434"), "{ctx}");

    // It keeps its own times (2026-07-01, 20:46:51 to 21:17:16), not the import's.
    assert_eq!(conv["last_activity"], "2026-07-01T21:17:16Z", "{conv:#}");
    assert_eq!(status["session"]["created_at"], "2026-07-01T20:46:51Z");
    let x = &status["session"];
    let env_times = format!("{} {} {}", x["test_results"], x["done"], x["failures"]);
    let today = chrono_today();
    assert!(!env_times.contains(&today) && env_times.contains("2026-07-01T2"), "{env_times}");
    let files = status["session"]["files_modified"].as_object().unwrap();
    assert!(
        files.values().all(|f| f["last_modified"].as_str().is_some_and(|t| t.starts_with("2026-07-01T2"))),
        "{files:?}"
    );
    // `import` and `history` count the same tool calls.
    let history = env.ctl_json(&["history", status["root"].as_str().unwrap()]);
    assert_eq!(history["conversations"][0]["tool_calls"], summary["tool_calls"], "{history:#}");
}

/// Today's date as the daemon writes it (`YYYY-MM-DD`), from the system clock.
fn chrono_today() -> String {
    let out = std::process::Command::new("date").args(["-u", "+%Y-%m-%d"]).output().expect("date");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Code mode: the model's one tool is `exec`, a JavaScript cell calling the real tools; the
/// edits are only in Codex's `patch_apply_end` events, the commands in the cells' programs.
#[test]
fn a_real_codex_code_mode_rollout_keeps_what_its_cells_did() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let rollout = env.unpack("agent-sessions/entireio_entire-graph_codex_019f8c04.jsonl.gz");
    let (summary, status) = import(&env, &rollout);
    assert_eq!(summary["agent"], "codex", "{summary:#}");
    let files = status["session"]["files_modified"].as_object().expect("files");
    for f in ["internal/sem/parser.go", "internal/sem/parser_postgres_regression_test.go"] {
        assert!(files.contains_key(f), "{f} in {files:?}");
    }
    // The newest commands are kept (each cell's, several to a cell).
    let commands = status["session"]["shell_commands"].to_string();
    for c in [
        "mise run vet",
        "git commit -m",
        "git push -u origin fix/corpus-parse-errors",
        "gofmt -w internal/sem/parser.go",
    ] {
        assert!(commands.contains(c), "{c} in {commands}");
    }
    let ctx = text(&env.ctl(&["context", status["root"].as_str().unwrap_or_default()]).stdout);
    // The Codex app's directives are not words; what they say was done is kept.
    assert!(!ctx.contains("::git-"), "{ctx}");
    assert!(ctx.contains("Pushed."), "{ctx}");
    assert!(!status.to_string().contains("/Users/thomi/Projects/entire-graph"), "paths are the project's");
}

/// Copilot CLI's `events.jsonl`: its prompt, tool calls (shell exit codes in the results'
/// `<shellId: N completed with exit code X>` trailer), the file it edited, its last words.
#[test]
fn a_real_copilot_cli_session_is_imported() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let events = env.unpack("agent-sessions/EntityProcess_agentv_copilot_10fb4666.jsonl.gz");
    let (summary, status) = import(&env, &events);
    assert_eq!(summary["agent"], "copilot", "{summary:#}");
    assert_eq!(summary["conversation_id"], "10fb4666-56f0-4352-90fc-715caf95b418");
    assert_eq!((summary["tool_calls"].as_u64(), summary["prompts"].as_u64()), (Some(68), Some(1)), "{summary:#}");
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key(".github/hooks/entire.json"), "{files:?}");
    let conv = &status["session"]["conversations"][0];
    assert!(conv["first_prompt"].as_str().is_some_and(|p| p.starts_with("investigate why i get")), "{conv:#}");
    assert!(conv["digest"]["last_words"].as_str().is_some_and(|w| w.contains("Root cause")), "{conv:#}");
    let ctx = text(&env.ctl(&["context", status["root"].as_str().unwrap_or_default()]).stdout);
    assert!(ctx.contains("copilot --resume=10fb4666-56f0-4352-90fc-715caf95b418"), "{ctx}");
    assert!(!status.to_string().contains("/home/entity/projects/EntityProcess/agentv"), "paths are the project's");
}

#[test]
fn a_real_oh_my_pi_session_is_imported_with_its_todo_list() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let session = env.unpack("agent-sessions/preloopdev_preloop_ohmypi_01a025c5.jsonl.gz");
    let (summary, status) = import(&env, &session);
    assert_eq!(summary["agent"], "pi", "{summary:#}");
    // 222 calls, one of which has no result in the file (the session was recorded mid-call).
    assert_eq!(summary["tool_calls"].as_u64(), Some(221), "{summary:#}");
    let list = todos(&status);
    assert!(list.len() >= 10, "{list:?}");
    let done = list.iter().filter(|(_, s)| s == "completed").count();
    assert_eq!(done, 11, "the eleven `done` of the session: {list:?}");
    assert!(list.iter().any(|(t, _)| t.starts_with("Fork pullfrog")), "{list:?}");
    let conv = &status["session"]["conversations"][0];
    assert_eq!(conv["agent"], "pi");
    assert!(conv["digest"]["last_words"].as_str().is_some_and(|w| !w.is_empty()), "{conv:#}");
}

#[test]
fn gemini_cli_chats_are_imported_their_latest_copies_after_a_compression() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let (summary, status) = import(&env, &fixture("gemini/chat-first-run.jsonl"));
    assert_eq!(summary["agent"], "gemini", "{summary:#}");
    assert_eq!((summary["tool_calls"].as_u64(), summary["prompts"].as_u64()), (Some(4), Some(1)), "{summary:#}");
    assert_eq!(
        todos(&status).iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>(),
        ["in_progress", "pending", "pending"],
        "{status:#}"
    );
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key("hello.txt"), "its paths are the project's: {files:?}");
    assert!(status["session"].to_string().contains("echo FAIL test_x"), "the command is kept: {status:#}");
    let words = status["session"]["conversations"][0]["digest"]["last_words"].as_str().unwrap_or_default().to_string();
    assert_eq!(words, "All done: created hello.txt, ran tests (test_x failed), and fixed the file.");
    let prompts = status["session"]["conversations"][0]["prompts"].to_string();
    assert!(prompts.contains("Create hello.txt and run tests") && !prompts.contains("hook_context"), "{prompts}");

    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let (summary, _) = import(&env, &fixture("gemini/chat-resumed-compressed.jsonl"));
    assert_eq!(summary["agent"], "gemini", "{summary:#}");
    assert!(summary["prompts"].as_u64() >= Some(1), "{summary:#}");
}

#[test]
fn an_opencode_export_is_imported_with_its_compactions() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let (summary, status) = import(&env, &fixture("opencode/export.json"));
    assert_eq!(summary["agent"], "opencode", "{summary:#}");
    assert_eq!(summary["conversation_id"], "ses_de524fe06ffeuNixJr0vnLmqlt");
    assert_eq!(summary["compactions"].as_u64(), Some(2), "{summary:#}");
    let conv = &status["session"]["conversations"][0];
    assert!(conv["compacted"] == true && conv["digest"]["compactions"].as_u64() == Some(2), "{conv:#}");
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key("hello.txt"), "{files:?}");
    assert_eq!(todos(&status).len(), 3, "{status:#}");
}
