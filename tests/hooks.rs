//! The agent's hooks end to end: real `ccmemctl hook` processes fed Claude Code payloads.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// The additionalContext a SessionStart printed.
fn context_of(out: &Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("SessionStart printed no JSON ({e}): {}", text(&out.stdout)));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
}

#[test]
fn a_scripted_conversation_end_to_end() {
    let env = Env::new();
    let root = repo(&env, "app");
    let c = "11111111-2222-3333-4444-555555555555";
    // SessionStart auto-starts the daemon and registers the project and conversation.
    let out = send(&env, ev(&root, c, "SessionStart", json!({"source": "startup"})));
    assert!(context_of(&out).contains("Where you left off"));
    send(
        &env,
        ev(
            &root,
            c,
            "UserPromptSubmit",
            json!({"prompt": "Add OAuth login to the API. Use token ghp_0123456789abcdefghijABCDEFGHIJ012345 for CI"}),
        ),
    );
    send(
        &env,
        ev(
            &root,
            c,
            "PostToolUse",
            json!({"tool_name": "TodoWrite", "tool_use_id": "t1", "tool_input": {"todos": [
        {"content": "Add the OAuth callback", "status": "in_progress", "activeForm": "Adding the OAuth callback"},
        {"content": "Write tests for login", "status": "pending", "activeForm": "Writing tests for login"},
        {"content": "Read the spec", "status": "completed", "activeForm": "Reading the spec"}]}, "tool_response": {}}),
        ),
    );
    std::fs::create_dir_all(root.join("src/auth")).unwrap();
    std::fs::write(root.join("src/auth/callback.rs"), "fn callback() {}\n").unwrap();
    send(
        &env,
        ev(
            &root,
            c,
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": root.join("src/auth/callback.rs"), "content": "fn callback() {}\n"}, "tool_response": {"type": "create"}}),
        ),
    );
    send(
        &env,
        ev(
            &root,
            c,
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("README.md"), "old_string": "# test", "new_string": "# test\nOAuth"}}),
        ),
    );
    std::fs::write(root.join("README.md"), "# test\nOAuth\n").unwrap();
    send(
        &env,
        ev(
            &root,
            c,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test auth"}, "tool_response": {"stdout": "test result: ok", "stderr": "", "interrupted": false}}),
        ),
    );
    send(
        &env,
        ev(
            &root,
            c,
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message":
        "Callback added. [REMEMBER: OAuth callbacks must use https] [REMEMBER GLOBAL: the user prefers small commits] [GOAL: ship OAuth login | DEADLINE: Friday] [GOAL: document the auth flow]"}),
        ),
    );

    let st = settle(&env, &root, |s| s["session"]["last_checkpoint"]["reason"] == "Stop hook");
    let s = &st["session"];
    let cmd = &s["commands_executed"][0];
    assert!(cmd["command"].as_str().unwrap().starts_with("Add OAuth login to the API"));
    assert!(!st.to_string().contains("ghp_0123456789"), "the token never reaches the session");
    assert_eq!(cmd["workflow"], "prompt");
    assert_eq!(cmd["status"], "completed");
    assert!(cmd["duration_seconds"].is_number());
    assert_eq!(s["conversations"][0]["id"], c);
    assert_eq!(s["conversations"][0]["message_count"], 1);
    assert_eq!(s["context_snapshot"]["active_task"], "Add the OAuth callback");
    let f = &s["files_modified"]["src/auth/callback.rs"];
    assert_eq!(f["modification_count"], 1, "the agent's report and the watcher's sighting count once: {f}");
    assert_eq!(f["workflows"], json!(["Write"]));
    assert_eq!(f["changes_summary"], "Write: 1 line");
    assert_eq!(s["files_modified"]["README.md"]["modification_count"], 1, "{}", s["files_modified"]);
    assert_eq!(s["shell_commands"][0]["command"], "cargo test auth");

    // The checkpoint has reason "Stop hook" and the todos.
    let v = read_state(&root);
    assert_seed_004(&v);
    assert_eq!(v["checkpoint_reason"], "Stop hook");
    assert_eq!(v["todos"][0]["status"], "in_progress");

    // A second prompt, a [DONE: …], the end.
    send(&env, ev(&root, c, "UserPromptSubmit", json!({"prompt": "/review the login flow"})));
    send(&env, ev(&root, c, "Stop", json!({"last_assistant_message": "Reviewed. [DONE: OAuth login shipped]"})));
    send(&env, ev(&root, c, "SessionEnd", json!({"reason": "exit"})));
    let st = settle(&env, &root, |s| s["session"]["conversations"][0]["ended"] == true);
    assert_eq!(st["session"]["commands_executed"][1]["workflow"], "/review");
    assert_eq!(st["session"]["conversations"][0]["message_count"], 2);

    // The resume id, for `claude --resume "$(ccmemctl resume-id)"`.
    let out = env.ctl_cmd(&["resume-id"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "resume-id");
    assert_eq!(text(&out.stdout).trim(), c);

    // A new conversation starts with the context, most important first.
    let out = send(&env, ev(&root, "conv-2", "SessionStart", json!({"source": "startup"})));
    let ctx = context_of(&out);
    for want in [
        &format!("to resume it: `claude --resume {c}`")[..],
        "- [~] Add the OAuth callback",
        "- [ ] Write tests for login",
        "Latest prompt: /review the login flow",
        "- `src/auth/callback.rs` (1 edit",
        "- document the auth flow",
        "- OAuth callbacks must use https",
        "- the user prefers small commits",
    ] {
        assert!(ctx.contains(want), "the context lacks {want:?}:\n{ctx}");
    }
    assert!(!ctx.contains("ship OAuth login"), "DONE moved that goal to completed:\n{ctx}");
    assert!(
        ctx.contains("- [x] Read the spec") && !ctx.contains("- [ ] Read the spec"),
        "completed todos show as done"
    );
    assert!(!ctx.contains("ghp_"), "no secrets in the agent's context");
    assert!(!ctx.contains("test result: ok"), "raw tool output is never printed");
    assert!(ctx.find("## Todos").unwrap() < ctx.find("## Facts").unwrap());

    // The same context on demand; facts and goals are stored per project and user-wide.
    let out = env.ctl_cmd(&["context"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "context");
    assert!(text(&out.stdout).contains("## Todos"));
    let mem: Value = serde_json::from_slice(&std::fs::read(env.state.join("ccmem/memory.json")).unwrap()).unwrap();
    assert_eq!(mem["facts"], json!(["the user prefers small commits"]));
    let proj = std::fs::read_dir(env.state.join("ccmem/projects")).unwrap().next().unwrap().unwrap().path();
    let pm: Value = serde_json::from_slice(&std::fs::read(proj.join("memory.json")).unwrap()).unwrap();
    assert_eq!(pm["completedGoals"][0]["text"], "ship OAuth login");
    assert_eq!(pm["goals"][0]["deadline"], Value::Null);
    assert_eq!(pm["goals"][0]["text"], "document the auth flow");

    // Budget: never over it.
    let out = env.ctl_cmd(&["context", "--budget", "300"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "context --budget 300");
    let small = text(&out.stdout);
    let n = small.trim_end().chars().count();
    assert!(n <= 300, "{n} characters: {small}");
    // The head comes first: what a fresh agent needs before anything else.
    assert!(small.starts_with("# Where you left off (ccmem)") && n > 100, "{small}");
}

#[test]
fn after_compaction_the_context_stresses_exact_details() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "fix the flaky test"})));
    send(&env, ev(&root, "c", "PreCompact", json!({"trigger": "auto", "custom_instructions": ""})));
    settle(&env, &root, |s| s["session"]["last_checkpoint"]["kind"] == "event_driven");
    let ctx = context_of(&send(&env, ev(&root, "c", "SessionStart", json!({"source": "compact"}))));
    assert!(ctx.contains("just compacted"), "{ctx}");
}

/// A resumed conversation keeps what its start was given (the agent's history holds it):
/// with nothing done since in another conversation, the context is not given twice; after
/// another conversation's work, it is, as it stands now.
#[test]
fn a_resumed_conversation_is_given_the_context_once_unless_others_worked_since() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    send(&env, ev(&root, "a", "UserPromptSubmit", json!({"prompt": "work on the parser"})));
    send(&env, ev(&root, "b", "SessionStart", json!({"source": "startup"})));
    let first = context_of(&send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"}))));
    assert!(first.contains("Where you left off (ccmem)"), "{first}");
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "work on the docs"})));
    let resumed = send(&env, ev(&root, "c", "SessionStart", json!({"source": "resume"})));
    assert!(resumed.stdout.is_empty(), "nothing new since: {}", text(&resumed.stdout));
    send(&env, ev(&root, "a", "UserPromptSubmit", json!({"prompt": "parser, take two"})));
    // (A second start of the same conversation within 2 s is taken for a copy of the first.)
    std::thread::sleep(Duration::from_millis(2100));
    let again = context_of(&send(&env, ev(&root, "c", "SessionStart", json!({"source": "resume"}))));
    assert!(again.contains("parser, take two"), "another conversation worked since: {again}");
    // A conversation ccmem never gave the context to gets it on resume.
    let other = context_of(&send(&env, ev(&root, "a", "SessionStart", json!({"source": "resume"}))));
    assert!(other.contains("Where you left off (ccmem)"), "{other}");
}

#[test]
fn conversations_in_one_project_stay_apart() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let todos = |t: &str| json!({"tool_name": "TodoWrite", "tool_input": {"todos": [{"content": t, "status": "in_progress", "activeForm": t}]}});
    send(&env, ev(&root, "a", "UserPromptSubmit", json!({"prompt": "work on the parser"})));
    send(&env, ev(&root, "a", "PostToolUse", todos("parser todo")));
    send(&env, ev(&root, "b", "UserPromptSubmit", json!({"prompt": "work on the docs"})));
    send(&env, ev(&root, "b", "PostToolUse", todos("docs todo")));
    send(&env, ev(&root, "a", "UserPromptSubmit", json!({"prompt": "parser again"})));
    let st = settle(&env, &root, |s| {
        s["session"]["conversations"].as_array().is_some_and(|c| c.len() == 2 && c[0]["message_count"] == 2)
    });
    let convs = st["session"]["conversations"].as_array().unwrap();
    let a = convs.iter().find(|c| c["id"] == "a").unwrap();
    let b = convs.iter().find(|c| c["id"] == "b").unwrap();
    assert_eq!(a["prompts"], json!(["work on the parser", "parser again"]));
    assert_eq!(b["prompts"], json!(["work on the docs"]));
    assert_eq!(a["todos"][0]["content"], "parser todo");
    assert_eq!(b["todos"][0]["content"], "docs todo");
    // Resuming b shows b's own todos and prompts.
    let ctx = context_of(&send(&env, ev(&root, "b", "SessionStart", json!({"source": "resume"}))));
    // b's list is b's own; a's open work shows apart, under its conversation.
    let todos = ctx.split("## Todos").nth(1).and_then(|t| t.split("\n\n").next()).unwrap_or_default();
    assert!(todos.contains("- [~] docs todo") && !todos.contains("parser todo"), "{ctx}");
    assert!(ctx.contains("- Claude Code conversation a (") && ctx.contains("  - [~] parser todo"), "{ctx}");
    assert!(ctx.contains("to resume it: `claude --resume a`"), "the other conversation is the one to resume: {ctx}");
}

#[test]
fn odd_and_broken_payloads_never_break_the_agent() {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let odd_dir = root.join("dir with spaces/ünïcødé");
    std::fs::create_dir_all(&odd_dir).unwrap();
    let big = "x".repeat(5 << 20);
    let payloads: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json at all".to_vec(),
        b"[1,2,3]".to_vec(),
        br#"{"hook_event_name": 5}"#.to_vec(),
        json!({"hook_event_name": "UserPromptSubmit"}).to_string().into_bytes(),
        json!({"hook_event_name": "PostToolUse", "cwd": "/definitely/gone/now"}).to_string().into_bytes(),
        json!({"hook_event_name": "PostToolUse", "cwd": "relative/dir", "tool_name": "Edit"}).to_string().into_bytes(),
        ev(&root, "c", "SomeFutureEvent", json!({"brand_new": {"nested": [1, 2]}})).to_string().into_bytes(),
        ev(&root, "c", "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "cat big.log"}, "tool_response": {"stdout": big, "stderr": ""}})).to_string().into_bytes(),
        ev(&root, "c", "PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": odd_dir.join("fïle name.rs"), "content": big}})).to_string().into_bytes(),
        ev(&root, "c", "PostToolUse", json!({"tool_name": "Edit", "tool_input": {"file_path": "/etc/passwd"}})).to_string().into_bytes(),
        ev(&root, "c", "PostToolUse", json!({"tool_name": "TodoWrite", "tool_input": {"todos": "not a list"}})).to_string().into_bytes(),
        ev(&root, "c", "Stop", json!({"last_assistant_message": null, "transcript_path": "/no/such/transcript.jsonl"})).to_string().into_bytes(),
        ev(&odd_dir, "c", "UserPromptSubmit", json!({"prompt": "from an odd directory", "extra": true})).to_string().into_bytes(),
    ];
    for p in &payloads {
        let out = hook(&env, p);
        assert_eq!(out.status.code(), Some(0), "payload {:?}", String::from_utf8_lossy(&p[..p.len().min(80)]));
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "nothing printed for {:?}",
            String::from_utf8_lossy(&p[..p.len().min(80)])
        );
    }
    let st = settle(&env, &root, |s| s["session"]["commands_executed"].as_array().is_some_and(|c| !c.is_empty()));
    assert_eq!(
        st["session"]["commands_executed"][0]["command"], "from an odd directory",
        "the odd directory belongs to the repository"
    );
    let f = &st["session"]["files_modified"];
    assert!(f["dir with spaces/ünïcødé/fïle name.rs"].is_object(), "{f}");
    assert!(f.get("/etc/passwd").is_none() && f.get("../../etc/passwd").is_none());
    let log = d.log();
    assert!(!log.contains("panicked"), "{log}");
    assert_ok(&env.ctl(&["--no-start", "ping"]), "the daemon still answers");
}

#[test]
fn with_the_daemon_down_and_auto_start_off_the_hook_exits_0_fast_and_silent() {
    let env = Env::new();
    let root = repo(&env, "app");
    let payload = ev(&root, "c", "SessionStart", json!({"source": "startup"})).to_string();
    for _ in 0..3 {
        let t = Instant::now();
        let out = hook_with(&env, payload.as_bytes(), |c| {
            c.env("CCMEM_NO_AUTOSTART", "1");
        });
        let took = t.elapsed();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
        // Generous: a hang would be seconds (the reply wait), not tens of milliseconds.
        assert!(took < Duration::from_millis(1500), "took {took:?}");
    }
    assert!(env.daemons_running().is_empty());
    let log = std::fs::read_to_string(env.state.join("ccmem/ccmemctl.log")).unwrap();
    assert!(log.contains("hook: cannot reach ccmemd"), "the reason goes to the client log: {log}");
}

/// An agent that keeps its end of stdin open: with a whole payload the hook does not wait
/// for the pipe to close; with half a payload, or none, it gives up once the pipe has been
/// silent for its idle time (5 s), exits 0, and says why in the client log, not to the agent.
#[test]
fn a_stdin_held_open_does_not_hold_the_hook() {
    use std::io::Write;
    use std::process::Stdio;
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let whole = ev(&root, "c", "SessionStart", json!({"source": "startup"})).to_string();
    let half = &whole[..whole.len() / 2];
    for (given, whole_payload) in [(whole.as_str(), true), (half, false), ("", false)] {
        let mut child = env
            .ctl_cmd(&["hook"])
            .env("CCMEM_HOOK_TIMEOUT_MS", "20000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(given.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let t = Instant::now();
        // The pipe stays open until the hook is done.
        let out = child.wait_with_output().unwrap();
        let took = t.elapsed();
        drop(stdin);
        assert_eq!(out.status.code(), Some(0), "{given:?}");
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        if whole_payload {
            assert!(context_of(&out).contains("ccmem"), "the context is given: {}", text(&out.stdout));
            assert!(took < Duration::from_secs(15), "a whole payload waits for nothing: {took:?}");
        } else {
            assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
            assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(30), "given up after 5 s: {took:?}");
        }
    }
    let log = std::fs::read_to_string(env.state.join("ccmem/ccmemctl.log")).unwrap();
    assert!(log.contains("the hook gave up"), "the reason goes to the client log: {log}");
}

#[test]
fn a_daemon_that_never_accepts_does_not_hold_the_hook() {
    // A wedged daemon: its socket is there and connections queue in its backlog, but nothing
    // is ever accepted, read or answered. The hook gives up after its time limit (a thread
    // with a deadline, the same code that bounds a Windows pipe) and exits 0, silently.
    let env = Env::new();
    let root = repo(&env, "app");
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    let _wedged = std::os::unix::net::UnixListener::bind(&env.socket).unwrap();
    for event in ["SessionStart", "PostToolUse"] {
        let payload = ev(&root, "c", event, json!({"source": "startup"})).to_string();
        let t = Instant::now();
        let out = hook_with(&env, payload.as_bytes(), |c| {
            c.env("CCMEM_NO_AUTOSTART", "1");
            c.env("CCMEM_HOOK_TIMEOUT_MS", "300");
        });
        let took = t.elapsed();
        assert_eq!(out.status.code(), Some(0), "{event}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{event}: {out:?}");
        // A hang is forever; the limit is 0.3 s. Generous for a loaded machine.
        assert!(took < Duration::from_secs(10), "{event} took {took:?}");
    }
    let log = std::fs::read_to_string(env.state.join("ccmem/ccmemctl.log")).unwrap();
    assert!(log.contains("did not answer within"), "the reason goes to the client log: {log}");
}

#[test]
fn the_installer_merges_into_existing_settings_and_uninstalls_cleanly() {
    let env = Env::new();
    let settings = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = r#"{
  "model": "claude-opus",
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit.sh", "timeout": 10}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "env": {"FOO": "1"}
}
"#;
    std::fs::write(&settings, original).unwrap();
    let out = env.ctl(&["hooks", "install", "--dry-run"]);
    assert_ok(&out, "dry run");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original, "a dry run writes nothing");
    assert!(text(&out.stdout).contains("ccmemctl hook"));

    assert_ok(&env.ctl(&["hooks", "install"]), "install");
    let once = std::fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["model"], "claude-opus");
    assert_eq!(v["env"]["FOO"], "1");
    assert_eq!(v["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "~/bin/audit.sh");
    let ours = v["hooks"]["PostToolUse"][1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.ends_with("ccmemctl hook") && Path::new(ours.trim_end_matches(" hook")).is_absolute(), "{ours}");
    for e in ["SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd"] {
        assert!(v["hooks"][e].to_string().contains("ccmemctl hook"), "{e}");
    }
    assert_eq!(
        std::fs::read_to_string(settings.with_extension("json.ccmem-backup")).unwrap(),
        original,
        "a backup of what was there"
    );
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "hooks", "env"], "key order is kept");

    assert_ok(&env.ctl(&["hooks", "install"]), "install again");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once, "twice changes nothing");

    assert_ok(&env.ctl(&["hooks", "uninstall"]), "uninstall");
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(original).unwrap(), "only ours removed");
    assert!(!settings.with_extension("json.ccmem-backup").exists(), "no backup left behind");

    // Project settings, shared with the team: the plain command, and an uninstall that
    // leaves no trace. A broken settings file is refused rather than overwritten.
    let root = repo(&env, "app");
    let project = root.join(".claude/settings.json");
    let out = env.ctl_cmd(&["hooks", "install", "--project"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "project install");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&project).unwrap()).unwrap();
    assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"], "ccmemctl hook", "no absolute path");
    let out = env.ctl_cmd(&["hooks", "uninstall", "--project"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "project uninstall");
    assert!(!project.exists(), "a settings file that held only ccmem's hooks is gone");
    assert!(!root.join(".claude").exists(), "and the directory the install made");
    assert!(!project.with_extension("json.ccmem-backup").exists());
    let out = env.ctl_cmd(&["hooks", "install", "--project"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "project install again");
    // `--agent all` for a project: Claude Code's project settings, and a word on each other
    // agent this machine has, whose hooks are the user's only.
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let out = env.ctl_cmd(&["hooks", "install", "--project", "--agent", "all"]).current_dir(&root).output().unwrap();
    assert_ok(&out, "project install for all");
    assert!(
        text(&out.stderr).contains("Codex") && text(&out.stderr).contains("for the user only"),
        "{}",
        text(&out.stderr)
    );
    assert!(!env.home.join(".codex/hooks.json").exists(), "nothing of the user's is changed by a project install");
    std::fs::write(&settings, "{ broken").unwrap();
    let out = env.ctl(&["hooks", "install"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not valid JSON"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ broken");
}

#[test]
fn stop_reads_intents_from_the_transcript_when_the_message_is_absent() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let transcript = env.path().join("t.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "go"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "[REMEMBER: staging runs on port 8081]"}]}}),
    ];
    std::fs::write(&transcript, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let mut stop = ev(&root, "c", "Stop", json!({}));
    stop["transcript_path"] = json!(transcript);
    send(&env, stop);
    settle(&env, &root, |s| s["session"]["last_checkpoint"]["reason"] == "Stop hook");
    let out = env.ctl_cmd(&["context"]).current_dir(&root).output().unwrap();
    assert!(text(&out.stdout).contains("staging runs on port 8081"), "{}", text(&out.stdout));
}

#[test]
fn every_event_kind_is_accepted_and_task_events_update_the_todos() {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "plan the release"})));
    for (name, extra) in [
        ("PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "x"})),
        ("Notification", json!({"message": "Claude needs your permission"})),
        (
            "SubagentStop",
            json!({"stop_hook_active": false, "last_assistant_message": "subagent done [REMEMBER: the changelog lives in docs/]"}),
        ),
        ("PostCompact", json!({"trigger": "auto", "compact_summary": "summary"})),
        ("CwdChanged", json!({"old_cwd": "/a", "new_cwd": "/b"})),
        ("FileChanged", json!({"file_path": "x"})),
        (
            "PostToolUse",
            json!({"tool_name": "TaskCreate", "tool_input": {"subject": "Tag the release", "description": "git tag"}}),
        ),
        ("PostToolUse", json!({"tool_name": "TaskCreate", "tool_input": {"subject": "Write release notes"}})),
        ("TaskCompleted", json!({"task": {"subject": "Tag the release", "status": "completed"}})),
        (
            "PostToolUse",
            json!({"tool_name": "TaskUpdate", "tool_input": {"subject": "Write release notes", "status": "in_progress"}}),
        ),
    ] {
        let out = send(&env, ev(&root, "c", name, extra));
        assert!(out.stdout.is_empty(), "{name} prints nothing");
    }
    let st = settle(&env, &root, |s| {
        s["session"]["todos"].as_array().is_some_and(|t| t.len() == 2 && t[1]["status"] == "in_progress")
    });
    let todos = &st["session"]["todos"];
    assert_eq!(todos[0]["content"], "Tag the release");
    assert_eq!(todos[0]["status"], "completed");
    assert_eq!(st["session"]["context_snapshot"]["active_task"], "Write release notes");
    // A subagent's stop records its intents but does not close the user's prompt.
    assert!(st["session"]["commands_executed"][0]["status"].is_null(), "{}", st["session"]["commands_executed"]);
    let out = env.ctl_cmd(&["context"]).current_dir(&root).output().unwrap();
    assert!(text(&out.stdout).contains("the changelog lives in docs/"), "{}", text(&out.stdout));
    assert!(!d.log().contains("panicked"));
}

/// The hook's own limits, as they are by default: against a daemon that accepts and never
/// answers, it gives up after its 2 s wait, exits 0, prints nothing and says why in its log.
#[test]
fn a_daemon_that_never_answers_costs_the_agent_two_seconds_at_most() {
    let env = Env::new();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    let listener = std::os::unix::net::UnixListener::bind(&env.socket).unwrap();
    let held = std::thread::spawn(move || {
        // Accept, read nothing, answer nothing; keep them open until the test ends.
        let mut kept = Vec::new();
        for c in listener.incoming().take(2) {
            kept.push(c);
        }
        std::thread::sleep(Duration::from_secs(10));
    });
    let root = repo(&env, "app");
    let payload = ev(&root, "c1", "SessionStart", json!({"source": "startup"})).to_string();
    let t = std::time::Instant::now();
    let out = hook_with(&env, payload.as_bytes(), |c| {
        c.env_remove("CCMEM_HOOK_TIMEOUT_MS");
    });
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert!(took >= Duration::from_millis(1900), "it waited its 2 s: {took:?}");
    assert!(took < Duration::from_secs(8), "and not much more: {took:?}");
    let log = std::fs::read_to_string(env.state.join("ccmem/ccmemctl.log")).unwrap_or_default();
    assert!(log.contains("SessionStart"), "the reason is logged: {log:?}");
    drop(held);
}

/// Found by the independent tester: a dotfiles link replaced by a file, the user's original
/// lost from the backup by a second install, a user's `{}` deleted by uninstall, Gemini CLI's
/// settings with comments refused, and `--agent all` stopping at the first file to fix.
#[test]
fn installs_keep_links_the_first_backup_and_the_users_own_files() {
    let env = Env::new();
    let dotfiles = env.home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
    let settings = env.home.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &settings).unwrap();
    assert_ok(&env.ctl(&["hooks", "install"]), "install");
    assert!(std::fs::symlink_metadata(&settings).unwrap().file_type().is_symlink(), "still a link");
    assert!(std::fs::read_to_string(&real).unwrap().contains("ccmemctl hook"), "written where it leads");
    let backup = real.with_extension("json.ccmem-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "{\"model\": \"opus\"}\n");
    // Installed again from elsewhere (a moved ccmemctl): the backup is still the original.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    v["hooks"]["Stop"][0]["hooks"][0]["command"] = json!("/old/place/ccmemctl hook");
    std::fs::write(&real, v.to_string()).unwrap();
    assert_ok(&env.ctl(&["hooks", "install"]), "install again");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "{\"model\": \"opus\"}\n", "the first backup stays");
    assert_ok(&env.ctl(&["hooks", "uninstall"]), "uninstall");
    assert!(std::fs::symlink_metadata(&settings).unwrap().file_type().is_symlink());
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(back, json!({"model": "opus"}));

    // A user's own `{}` stays after an uninstall.
    std::fs::remove_file(&settings).unwrap();
    std::fs::write(&settings, "{}").unwrap();
    assert_ok(&env.ctl(&["hooks", "install"]), "install into {}");
    assert_ok(&env.ctl(&["hooks", "uninstall"]), "uninstall");
    assert_eq!(std::fs::read_to_string(&settings).unwrap().trim(), "{}", "the user's file stays");

    // Gemini CLI's settings may hold comments; `--agent all` goes on past a file to fix.
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    std::fs::write(env.home.join(".gemini/settings.json"), "{\n  // mine\n  \"theme\": \"Dracula\"\n}\n").unwrap();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::write(env.home.join(".codex/hooks.json"), "{ broken").unwrap();
    std::fs::create_dir_all(env.home.join(".pi/agent")).unwrap();
    let out = env.ctl(&["hooks", "install", "--agent", "all"]);
    assert_eq!(out.status.code(), Some(1), "the broken file is said");
    assert!(text(&out.stderr).contains("Codex") && text(&out.stderr).contains("hooks.json"), "{}", text(&out.stderr));
    let gemini: Value =
        serde_json::from_str(&std::fs::read_to_string(env.home.join(".gemini/settings.json")).unwrap()).unwrap();
    assert_eq!(gemini["theme"], "Dracula");
    assert!(gemini["hooks"]["SessionStart"].to_string().contains("--agent gemini"), "{gemini}");
    assert!(env.home.join(".pi/agent/extensions/ccmem.ts").exists(), "the agents after the broken one are done");
}

/// The tester's third round: Gemini CLI's comments were gone for good after an uninstall
/// (the backup that held them was deleted), Codex's `config.toml` kept as a link became a
/// file, and Cursor's `{"version":1,"hooks":{}}` came back as `{}`. An uninstall gives back
/// the user's own file as it was, and links stay links.
#[test]
fn an_uninstall_gives_back_the_users_file_as_it_was() {
    let env = Env::new();
    let gemini = env.home.join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    let commented = "{\n // comment\n \"theme\": \"Dracula\", /* block */\n \"url\": \"http://x//y/*z*/\"\n}\n";
    std::fs::write(&gemini, commented).unwrap();
    let cursor = env.home.join(".cursor/hooks.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, "{\"version\":1,\"hooks\":{}}").unwrap();
    let dotfiles = env.home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("codex.toml"), "model = \"o4\"\n").unwrap();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let codex = env.home.join(".codex/config.toml");
    std::os::unix::fs::symlink(dotfiles.join("codex.toml"), &codex).unwrap();
    for agent in ["gemini", "cursor", "codex"] {
        assert_ok(&env.ctl(&["hooks", "install", "--agent", agent]), agent);
    }
    assert!(std::fs::read_to_string(&gemini).unwrap().contains("--agent gemini"));
    assert!(std::fs::symlink_metadata(&codex).unwrap().file_type().is_symlink(), "Codex's config is still a link");
    assert!(std::fs::read_to_string(dotfiles.join("codex.toml")).unwrap().contains("model = \"o4\""));
    for agent in ["gemini", "cursor", "codex"] {
        assert_ok(&env.ctl(&["hooks", "uninstall", "--agent", agent]), agent);
    }
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), commented, "comments and all");
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), "{\"version\":1,\"hooks\":{}}");
    assert!(std::fs::symlink_metadata(&codex).unwrap().file_type().is_symlink(), "still a link");
    assert_eq!(std::fs::read_to_string(dotfiles.join("codex.toml")).unwrap().trim(), "model = \"o4\"");
}

/// Every string under `v` at a key named `command`.
fn commands_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::String(s) if k == "command" => out.push(s.clone()),
                    _ => commands_in(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| commands_in(x, out)),
        _ => {}
    }
}

/// ccmemctl installed under a directory whose name holds every character `sh` reads
/// specially, a command substitution among them: each agent's hook command runs that very
/// program in the agent's shell (`sh -c`), and nothing the path spells. OpenCode's and Pi's
/// plugins name it as a string literal.
#[test]
fn hook_commands_under_a_path_the_shell_reads_run_that_program_and_nothing_else() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    // No space or quote: earlier versions quoted the path only for those.
    let dir = env.path().join("a&b;c$(touch pwned)`touch pwned`|d(e)<f>g\\h*i?~j#k!l{o}");
    std::fs::create_dir_all(&dir).unwrap();
    copy_executable(Path::new(CCMEMCTL), &dir.join("ccmemctl"));
    copy_executable(Path::new(CCMEMD), &dir.join("ccmemd"));
    let root = repo(&env, "proj");
    for agent in ["claude", "codex", "gemini", "copilot", "cursor", "opencode", "pi"] {
        let mut install = std::process::Command::new(dir.join("ccmemctl"));
        env.apply(&mut install);
        if agent == "pi" {
            std::fs::create_dir_all(env.home.join(".pi/agent")).unwrap();
        }
        assert_ok(&install.args(["hooks", "install", "--agent", agent]).output().unwrap(), agent);
    }
    let mut commands = Vec::new();
    for f in walk(&env.home) {
        let Ok(t) = std::fs::read_to_string(&f) else { continue };
        if f.extension().is_some_and(|e| e == "json") {
            if let Ok(v) = serde_json::from_str::<Value>(&t) {
                commands_in(&v, &mut commands);
            }
        } else if f.extension().is_some_and(|e| e == "js" || e == "ts") {
            let literal = serde_json::to_string(dir.join("ccmemctl").to_str().unwrap()).unwrap();
            assert!(t.contains(&literal), "{}: the path as a string literal", f.display());
        }
    }
    commands.sort();
    commands.dedup();
    let agents: Vec<&str> = commands.iter().filter_map(|c| c.rsplit_once("--agent ").map(|(_, a)| a)).collect();
    assert_eq!(agents, ["codex", "copilot", "cursor", "gemini"], "{commands:#?}");
    assert_eq!(commands.len(), 5, "Claude Code's too: {commands:#?}");
    for cmd in &commands {
        let payload = ev(&root, "c", "SessionStart", json!({"source": "startup"})).to_string();
        let mut sh = std::process::Command::new("sh");
        env.apply(&mut sh);
        sh.arg("-c").arg(cmd);
        let out = feed(&env, sh, payload.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{cmd}: {}", text(&out.stderr));
    }
    let out = {
        let mut sh = std::process::Command::new("sh");
        env.apply(&mut sh);
        let claude = commands.iter().find(|c| !c.contains("--agent")).unwrap();
        sh.arg("-c").arg(claude);
        feed(&env, sh, ev(&root, "fresh", "SessionStart", json!({"source": "startup"})).to_string().as_bytes())
    };
    assert!(text(&out.stdout).contains("additionalContext"), "the hook ran ccmemctl: {}", text(&out.stdout));
    assert!(!env.path().join("pwned").exists() && !env.home.join("pwned").exists(), "the path ran nothing");
}

/// A ccmemctl with no ccmemd beside it looks for one on PATH, from a hook that runs in the
/// project: a repository's `./ccmemd` or `node_modules/.bin/ccmemd` (and `ccmem-mcp`) is
/// never what starts, whatever relative entries PATH holds; an absolute entry's is.
#[test]
fn auto_start_runs_no_program_of_the_projects_from_a_relative_path_entry() {
    let env = Env::new();
    let alone = env.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    copy_executable(Path::new(CCMEMCTL), &alone.join("ccmemctl"));
    let root = repo(&env, "proj");
    let marker = env.path().join("ran");
    let planted = format!("#!/bin/sh\necho \"$0\" >> '{}'\n", marker.display());
    for d in [root.clone(), root.join("node_modules/.bin"), root.join("bin")] {
        std::fs::create_dir_all(&d).unwrap();
        write_executable(&d.join("ccmemd"), &planted);
        write_executable(&d.join("ccmem-mcp"), &planted);
    }
    let payload = ev(&root, "c", "SessionStart", json!({"source": "startup"})).to_string();
    // Relative entries, and absolute ones that lead into the project: by its path, through
    // `/proc/self/cwd`, or through a link to it.
    let link = env.path().join("link-to-proj");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let path = format!(
        ".:node_modules/.bin::bin:{}:/proc/self/cwd:/proc/self/cwd/bin:{}:{}",
        root.join("node_modules/.bin").display(),
        link.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut hook = std::process::Command::new(alone.join("ccmemctl"));
    env.apply(&mut hook);
    hook.arg("hook").env("PATH", &path).current_dir(&root);
    let out = feed(&env, hook, payload.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    // From a subdirectory, with the repository's own `bin` on PATH (direnv's `PATH_add bin`).
    let sub = root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let mut hook = std::process::Command::new(alone.join("ccmemctl"));
    env.apply(&mut hook);
    hook.arg("hook").env("PATH", format!("{}:{path}", root.join("bin").display())).current_dir(&sub);
    let out = feed(&env, hook, payload.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let mut mcp = std::process::Command::new(alone.join("ccmemctl"));
    env.apply(&mut mcp);
    let out = mcp.arg("mcp").env("PATH", &path).current_dir(&root).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "no ccmem-mcp to be had: {}", text(&out.stdout));
    assert!(!marker.exists(), "ran: {}", std::fs::read_to_string(&marker).unwrap_or_default());
    // An absolute directory outside the project on PATH is the user's choice: its ccmemd starts.
    let chosen = env.path().join("chosen/bin");
    std::fs::create_dir_all(&chosen).unwrap();
    write_executable(&chosen.join("ccmemd"), &planted);
    let mut hook = std::process::Command::new(alone.join("ccmemctl"));
    env.apply(&mut hook);
    hook.arg("hook").env("PATH", format!("{path}:{}", chosen.display())).current_dir(&root);
    let out = feed(&env, hook, ev(&root, "d", "SessionStart", json!({"source": "startup"})).to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(wait_until(Duration::from_secs(5), || marker.exists()), "the absolute entry's ccmemd was started");
    assert!(std::fs::read_to_string(&marker).unwrap().contains("chosen/bin/ccmemd"));
}

/// Found by the independent tester: a message of nothing but thousands of `[GOAL: …]` lines
/// cost the daemon time in the square of their number (each compared with all kept). One
/// message gives its last 64 of each kind.
#[test]
fn a_message_of_thousands_of_intents_gives_its_last_few() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    // (Under the 32 KiB of a message the hook keeps whole.)
    let said: String = (0..1500).map(|i| format!("[GOAL: g{i}]\n")).collect();
    send(&env, ev(&root, "c", "Stop", json!({"last_assistant_message": said})));
    let mut v = Value::Null;
    assert!(wait_until(Duration::from_secs(20), || {
        v = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
        v["goals"].as_array().is_some_and(|g| !g.is_empty())
    }));
    let goals: Vec<&str> = v["goals"].as_array().unwrap().iter().filter_map(|g| g["text"].as_str()).collect();
    assert_eq!(goals.len(), 64, "{goals:?}");
    assert_eq!(goals.last(), Some(&"g1499"));
    assert!(!goals.contains(&"g0"));
}
