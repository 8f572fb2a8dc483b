use super::*;
use ccmem_proto::model::session::Todo;
use serde_json::{json, Value};
use std::path::PathBuf;

mod tasks;

fn session() -> Session {
    let now = Utc::now();
    session::start(PathBuf::from("/w/app"), "app".into(), session::new_id(now, None), now, None)
}

fn hook(v: Value) -> Hook {
    parse(&v).expect("a hook payload")
}

/// Replays payloads the real CLI sent (tests/fixtures/claude-code) as the project task
/// would: each applied in order, edits recorded, a delivery seen twice skipped.
fn replay(jsonl: &str) -> (Session, Vec<Effects>) {
    let payloads: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let root = PathBuf::from(payloads[0]["cwd"].as_str().expect("cwd"));
    let now = Utc::now();
    let mut s = session::start(root, "calc".into(), session::new_id(now, None), now, None);
    let mut seen = std::collections::HashSet::new();
    let mut effects = Vec::new();
    for p in &payloads {
        let h = parse(p).unwrap_or_else(|| panic!("not read: {p}"));
        if h.delivery.as_ref().is_some_and(|d| !seen.insert(d.clone())) {
            continue;
        }
        let fx = apply(&mut s, &h, now);
        for e in &fx.agent_edits {
            let edit = SessionEvent::FileEdited {
                path: e.rel.clone(),
                summary: Some(e.summary.clone()),
                workflow: Some(e.tool.clone()),
                created: e.created,
            };
            session::apply_quietly(&mut s, edit, now).expect("edit");
        }
        effects.push(fx);
    }
    (s, effects)
}

#[test]
fn a_failed_edit_changed_nothing_and_a_long_prompt_is_named_by_its_first_line() {
    let mut s = session();
    let fx = apply(
        &mut s,
        &hook(
            json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app", "tool_name": "Edit",
            "tool_input": {"file_path": "/w/app/src/a.rs", "old_string": "x", "new_string": "y"},
            "error": "String to replace not found in file."}),
        ),
        Utc::now(),
    );
    assert_eq!(fx.agent_edits, []);
    assert_eq!(s.agent_lines, Default::default());
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "cwd": "/w/app",
            "prompt": "Fix the login redirect\n\nSteps:\n1. open /login\n2. it loops"})),
        Utc::now(),
    );
    assert_eq!(s.context_snapshot.active_task, "Fix the login redirect");
}

#[test]
fn a_test_run_in_another_project_is_not_this_ones() {
    let mut s = session();
    let run = |s: &mut Session, cmd: &str| {
        let h = hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app",
            "tool_name": "Bash", "tool_input": {"command": cmd}, "error": "Exit code 1\n1 failing"}));
        apply(s, &h, Utc::now());
    };
    run(&mut s, "cd /w/other && npm test");
    run(&mut s, "cd ../other && cargo build");
    assert!(s.failures.is_empty() && s.test_results.unit.command.is_empty(), "{:?}", s.failures);
    run(&mut s, "cd packages/api && npm test");
    assert_eq!(s.failures.len(), 1);
    assert_eq!(s.failures[0].command, "cd packages/api && npm test");
    // From a subdirectory, or into the root: named from the root.
    let h = hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app/packages",
        "tool_name": "Bash", "tool_input": {"command": "cd web && npm run build"}, "error": "Exit code 1"}));
    apply(&mut s, &h, Utc::now());
    assert!(s.failures.iter().any(|f| f.command == "cd packages/web && npm run build"), "{:?}", s.failures);
    run(&mut s, "cd /w/app && cargo build");
    assert!(s.failures.iter().any(|f| f.command == "cargo build"), "{:?}", s.failures);
}

#[test]
fn notices_compactions_and_endings_are_recorded() {
    let mut s = session();
    let now = Utc::now();
    let ev = |name: &str, extra: Value| {
        let mut v = json!({"hook_event_name": name, "session_id": "c1", "cwd": "/w/app", "transcript_path": "~/.claude/projects/x/c1.jsonl"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        hook(v)
    };
    apply(&mut s, &ev("SessionStart", json!({"source": "startup"})), now);
    apply(
        &mut s,
        &ev(
            "Notification",
            json!({"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}),
        ),
        now,
    );
    let c = &s.conversations[0];
    assert_eq!((c.notice.as_str(), c.notice_at.is_empty()), ("Claude needs your permission to use Bash", false));
    assert!(!c.transcript_path.as_deref().unwrap_or("").starts_with('~'), "~/ is the user's home");
    let fx = apply(
        &mut s,
        &ev("PreCompact", json!({"trigger": "manual", "custom_instructions": "keep the API notes"})),
        now,
    );
    let c = &s.conversations[0];
    assert!(!c.compacted, "not compacted before it happens");
    assert_eq!((c.compact_trigger.as_str(), c.compact_instructions.as_str()), ("manual", "keep the API notes"));
    assert!(fx.checkpoint.is_some() && fx.read_transcript.is_some());
    apply(&mut s, &ev("SessionStart", json!({"source": "compact"})), now);
    assert!(s.conversations[0].compacted);
    apply(&mut s, &ev("SessionEnd", json!({"reason": "clear"})), now);
    assert_eq!((s.conversations[0].ended, s.conversations[0].end_reason.as_str()), (true, "clear"));
    // A subagent's stop reads its own transcript, not the conversation's.
    let fx = apply(
        &mut s,
        &ev("SubagentStop", json!({"agent_transcript_path": "/t/agent-1.jsonl", "last_assistant_message": "ok"})),
        now,
    );
    assert_eq!((fx.read_transcript, fx.read_agent_transcript.as_deref()), (None, Some("/t/agent-1.jsonl")));
}

/// Found by the independent tester: a failed command's secret, which the filter finds in
/// the command as written (across its lines, or with the words around it), passed in the
/// one-line form a failure keeps and reached the agent's context. The command is redacted
/// whole before anything is cut out of it.
#[test]
fn a_failed_commands_secret_is_masked_before_its_failure_is_cut_out() {
    for (command, secret) in [
        ("python -c \"httpx.get(u, auth=httpx.BasicAuth('bob', 'HttpxPw2x9'))\"", "HttpxPw2x9"),
        ("ftp -inv host <<'END'\nuser bob FtpPw77zq\nls\nEND", "FtpPw77zq"),
        ("expect <<'E'\nspawn ssh bob@h\nexpect \"*assword*\"\nsend -- \"ExpPw55kq\\r\"\nE", "ExpPw55kq"),
    ] {
        let mut s = session();
        let h = hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app",
            "tool_name": "Bash", "tool_input": {"command": command}, "error": "Exit code 1"}));
        apply(&mut s, &h, Utc::now());
        assert!(!s.failures.is_empty(), "{command}: the failure is kept");
        let state = serde_json::to_string(&s).unwrap();
        assert!(!state.contains(secret), "{command}: {state}");
    }
}

/// Issue #33: a failure outside any test is said so in the session's failures (and the
/// report's Where You Left Off), not by the runner's placeholder name.
#[test]
fn an_error_outside_any_test_is_said_in_words() {
    let out = crate::observe::testout::tests::fixture("bun-tail-errors.txt");
    let mut s = session();
    let h = hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "cwd": "/w/app", "tool_name": "Bash",
        "tool_input": {"command": "bun test packages/cli/src/ 2>&1 | tail -30"},
        "tool_response": {"stdout": out, "stderr": "", "interrupted": false}}));
    apply(&mut s, &h, Utc::now());
    let errors: Vec<&str> = s.failures.iter().filter(|f| f.kind == "tests").map(|f| f.error.as_str()).collect();
    assert_eq!(errors, ["2 failed, 86 passed; outside any test: error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST"]);
}

#[test]
fn tests_that_do_not_build_fail_even_when_a_pipe_hides_the_exit_status() {
    let fixture = |n: &str| crate::observe::testout::tests::fixture(n);
    let run = |cmd: &str, out: &str, failed: bool| {
        let mut s = session();
        let h = hook(json!({"hook_event_name": if failed { "PostToolUseFailure" } else { "PostToolUse" },
            "session_id": "c1", "cwd": "/w/app", "tool_name": "Bash", "tool_input": {"command": cmd},
            "tool_response": {"stdout": out, "stderr": "", "interrupted": false}, "error": out}));
        apply(&mut s, &h, Utc::now());
        s
    };
    // Real: `cargo test 2>&1 | tail -15` on a test that does not compile (exit 0).
    let s = run("cargo test 2>&1 | tail -15", &fixture("cargo-compile-error-tail.txt"), false);
    let unit = &s.test_results.unit;
    assert_eq!(unit.status, SuiteStatus::Failed, "{unit:?}");
    assert_eq!(unit.failures[0].test_name, "(build)");
    assert!(unit.failures[0].message.as_deref().is_some_and(|m| m.contains("error[E0308]: mismatched types")));
    assert!(s.failures.iter().any(|f| f.kind == "tests" && f.error.contains("did not build")), "{:?}", s.failures);
    // A run whose output names no runner and no error: not recognised, never a pass.
    let s = run("npm test 2>&1 | tail -3", "> calc@1.0.0 test\n> ./run-tests.sh\n\nall good\n", false);
    assert_eq!(s.test_results.unit.status, SuiteStatus::default(), "{:?}", s.test_results.unit);
    assert!(s.test_results.unit.command.is_empty());
}

#[test]
fn a_subagents_stop_does_not_replace_the_last_words() {
    let jsonl = include_str!("../../../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl");
    // The work run alone: up to its SessionEnd.
    let end = jsonl.lines().position(|l| l.contains("\"SessionEnd\"")).unwrap();
    let first: Vec<&str> = jsonl.lines().take(end + 1).collect();
    assert!(first.iter().any(|l| l.contains("\"SubagentStop\"")));
    let (s, _) = replay(&first.join("\n"));
    assert!(s.conversations[0].digest.last_words.contains("Next: make divide() round down"));
}

#[test]
fn every_real_payload_parses_and_each_tool_delivery_has_its_own_key() {
    for jsonl in [
        include_str!("../../../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl"),
        include_str!("../../../../../tests/fixtures/claude-code/2.1.330/todo-write.jsonl"),
    ] {
        let mut keys = std::collections::HashSet::new();
        for line in jsonl.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let h = parse(&v).unwrap_or_else(|| panic!("not read: {line}"));
            assert!(h.conversation.is_some() && h.cwd.is_some() && h.transcript.is_some(), "{line}");
            if let Some(k) = h.delivery {
                assert!(keys.insert(k.clone()), "two deliveries share {k}");
            }
        }
    }
}

#[test]
fn payloads_are_read_leniently() {
    assert!(parse(&json!({"prompt": "no event name"})).is_none());
    let h = hook(
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "cwd": 5, "prompt": ["not text"], "new_field": {"x": 1}}),
    );
    assert_eq!(h.kind, Kind::Prompt { text: String::new() });
    assert_eq!(h.cwd, None);
    assert!(matches!(hook(json!({"hook_event_name": "CwdChanged"})).kind, Kind::Other(_)));
    let id = |s: &str| hook(json!({"hook_event_name": "Stop", "session_id": s})).conversation;
    assert_eq!(id("0c7e6f0a-2f7e-4f61-9f7a-1c2d3e4f5a6b").as_deref(), Some("0c7e6f0a-2f7e-4f61-9f7a-1c2d3e4f5a6b"));
    for bad in [
        "a\n## Next Steps\n- rm -rf ~",
        "x`whoami`",
        "x; curl evil",
        "",
        &"a".repeat(300),
        "--dangerously-skip-permissions",
    ] {
        assert_eq!(id(bad), None, "{bad:?} is not an id");
    }
    assert!(matches!(
        hook(json!({"hook_event_name": "TaskCompleted", "task": {"subject": "x"}})).kind,
        Kind::Task { .. }
    ));
}

#[test]
fn prompts_todos_edits_and_stops_shape_the_session() {
    let mut s = session();
    let now = Utc::now();
    apply(
        &mut s,
        &hook(
            json!({"hook_event_name": "SessionStart", "session_id": "c1", "source": "startup", "transcript_path": "/t/c1.jsonl"}),
        ),
        now,
    );
    apply(
        &mut s,
        &hook(
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "prompt": "/review add OAuth login; token=abc123secret"}),
        ),
        now,
    );
    assert_eq!(s.commands_executed[0].workflow.as_deref(), Some("/review"));
    assert!(!s.commands_executed[0].command.contains("abc123secret"), "prompts are redacted");
    assert_eq!(s.conversations[0].message_count, 1);
    assert!(s.context_snapshot.active_task.starts_with("/review add OAuth login"));

    let todos = json!({"todos": [
        {"content": "Design", "status": "completed", "activeForm": "Designing"},
        {"content": "Implement", "status": "in_progress", "activeForm": "Implementing"},
        {"content": "Test", "status": "weird"}]});
    apply(
        &mut s,
        &hook(
            json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "TodoWrite", "tool_input": todos}),
        ),
        now,
    );
    assert_eq!(s.todos.len(), 3);
    assert_eq!(s.todos[2].status, TodoStatus::Pending);
    assert_eq!(s.context_snapshot.active_task, "Implement");
    assert_eq!(s.conversations[0].todos.len(), 3);

    let fx = apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "Edit",
        "tool_input": {"file_path": "/w/app/src/a.rs", "old_string": "a", "new_string": "a\nb"}, "tool_response": {"x": "y"}})),
        now,
    );
    assert_eq!(
        fx.agent_edits,
        [AgentEdit {
            rel: "src/a.rs".into(),
            summary: "Edit: 1 → 2 lines".into(),
            tool: "Edit".into(),
            created: false
        }]
    );
    let fx = apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": "/etc/x"}})),
        now,
    );
    assert_eq!(fx.agent_edits, [], "paths outside the project are not the project's");

    apply(
        &mut s,
        &hook(
            json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "Bash", "tool_input": {"command": "PGPASSWORD=hunter2 psql"}}),
        ),
        now,
    );
    assert_eq!(s.shell_commands[0].command, "PGPASSWORD=[REDACTED:secret] psql");

    let fx = apply(
        &mut s,
        &hook(json!({"hook_event_name": "Stop", "session_id": "c1", "last_assistant_message": "[REMEMBER: x]"})),
        now,
    );
    assert_eq!(fx.checkpoint, Some((CheckpointReason::StopHook, CheckpointType::EventDriven)));
    assert_eq!(fx.intents_in.as_deref(), Some("[REMEMBER: x]"));
    assert_eq!(s.conversations[0].digest.last_words, "", "nothing but an intent: no last words");
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "Stop", "session_id": "c1",
            "last_assistant_message": "Fixed the callback. Next: run the e2e tests. [REMEMBER: y]"})),
        now,
    );
    assert_eq!(s.conversations[0].digest.last_words, "Fixed the callback. Next: run the e2e tests.");
    assert_eq!(s.commands_executed[0].status.as_deref(), Some("completed"));
    assert!(s.commands_executed[0].duration_seconds.is_some());
    let fx = apply(
        &mut s,
        &hook(json!({"hook_event_name": "Stop", "session_id": "c1", "transcript_path": "/t/c1.jsonl"})),
        now,
    );
    assert_eq!(fx.read_transcript.as_deref(), Some("/t/c1.jsonl"));

    apply(&mut s, &hook(json!({"hook_event_name": "SessionEnd", "session_id": "c1", "reason": "exit"})), now);
    assert!(s.conversations[0].ended);
}

#[test]
fn test_runs_and_builds_in_bash_output_are_recorded() {
    let mut s = session();
    let now = Utc::now();
    let out = crate::observe::testout::tests::fixture("cargo-fail.txt");
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "tool_name": "Bash",
            "tool_input": {"command": "cargo test 2>&1"}, "error": format!("Exit code 101\n{out}")})),
        now,
    );
    let u = &s.test_results.unit;
    assert_eq!((u.status, u.framework.as_str(), u.passed, u.failed), (SuiteStatus::Failed, "cargo", 3, 1));
    assert_eq!(u.command, "cargo test", "the part of the line that ran the tests");
    assert_eq!(u.failures[0].test_name, "tests::parses");

    let out = crate::observe::testout::tests::fixture("playwright-pass.txt");
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "npm run test:e2e"}, "tool_response": {"stdout": out, "stderr": "", "interrupted": false}})),
        now,
    );
    assert_eq!((s.test_results.e2e.status, s.test_results.e2e.passed), (SuiteStatus::Passed, 2));
    assert_eq!(s.test_results.unit.status, SuiteStatus::Failed, "the unit suite is left as it was");

    let out = crate::observe::testout::tests::fixture("cargo-build-fail.txt");
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{out}")})),
        now,
    );
    let u = &s.test_results.unit;
    assert_eq!(
        u.failures[0].message.as_deref(),
        Some("src/lib.rs:10:3: error: this file contains an unclosed delimiter")
    );
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo build"}, "error": format!("Exit code 101\n{out}")})),
        now,
    );
    assert_eq!(s.environment.build.status, ccmem_proto::model::environment::BuildState::Failed);
    let before = s.test_results.clone();
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo test"}, "error": "interrupted", "is_interrupt": true})),
        now,
    );
    assert_eq!(s.test_results, before, "an interrupted run changes nothing");
}

#[test]
fn conversations_stay_apart() {
    let mut s = session();
    let now = Utc::now();
    for (c, p) in [("a", "first in a"), ("b", "first in b"), ("a", "second in a")] {
        apply(&mut s, &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": c, "prompt": p})), now);
    }
    let a = s.conversations.iter().find(|c| c.id == "a").unwrap();
    let b = s.conversations.iter().find(|c| c.id == "b").unwrap();
    assert_eq!((a.message_count, b.message_count), (2, 1));
    assert_eq!(a.prompts, ["first in a", "second in a"]);
    assert_eq!(b.prompts, ["first in b"]);
    let later = now + chrono::Duration::seconds(5);
    apply(&mut s, &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": "b", "prompt": "again"})), later);
    assert_eq!(resumable(&s, std::time::Duration::from_secs(3600), later, None).unwrap().id, "b");
    assert_eq!(resumable(&s, std::time::Duration::from_secs(3600), later, Some("b")).unwrap().id, "a");
    assert!(resumable(&s, std::time::Duration::from_secs(1), later + chrono::Duration::seconds(10), None).is_none());
}

#[test]
fn an_agent_whose_transcript_is_not_read_leaves_its_findings_in_its_last_message_and_its_summary() {
    let mut s = session();
    let now = Utc::now();
    let stop = json!({"hook_event_name": "Stop", "session_id": "x1", "cwd": "/w/app", "agent": "codex",
        "last_assistant_message": "We decided to round down in divide() because the tests expect whole numbers.\n\nNext: run the suite."});
    apply(&mut s, &hook(stop), now);
    let d = &s.conversations[0].digest;
    assert!(d.findings.iter().any(|f| f.contains("round down in divide()")), "{:?}", d.findings);
    assert!(d.last_words.contains("Next: run the suite."), "{}", d.last_words);
    // A compaction whose agent gives the summary in plain text (Pi's `## Next Steps`).
    let h = Hook {
        kind: Kind::Compacted {
            summary: "## Goal\nA calculator.\n\n## Next Steps\n1. Fix rounding in divide\n".into(),
        },
        ..hook(json!({"hook_event_name": "Stop", "session_id": "x1", "cwd": "/w/app", "agent": "codex"}))
    };
    apply(&mut s, &h, now);
    let c = &s.conversations[0];
    assert!(c.compacted && c.digest.compactions == 1, "{c:?}");
    assert!(c.digest.next_step.contains("Fix rounding in divide"), "{:?}", c.digest);
}

/// Found on real sessions: a pytest run named `echo … && pytest … | grep …` as its command.
/// The suite's (and the build's) command is the part of the line that ran it, where it ran.
#[test]
fn a_runs_command_is_the_part_of_the_line_that_ran_it() {
    let mut s = session();
    let h = hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "cwd": "/w/app", "tool_name": "Bash",
        "tool_input": {"command": "cd api && echo 'running' && python -m pytest -q tests/ 2>&1 | grep -E 'passed|failed'"},
        "tool_response": {"stdout": "running\n12 passed in 0.40s", "stderr": "", "interrupted": false}}));
    apply(&mut s, &h, Utc::now());
    assert_eq!(s.test_results.unit.command, "cd api && python -m pytest -q tests/");
    let h = hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "cwd": "/w/app", "tool_name": "Bash",
        "tool_input": {"command": "cargo build --release && cargo test 2>&1 | tail -3"},
        "tool_response": {"stdout": "    Finished `release` profile\nrunning 4 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\ntest d ... ok\n\ntest result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s", "stderr": "", "interrupted": false}}));
    apply(&mut s, &h, Utc::now());
    assert_eq!(s.test_results.unit.command, "cargo test");
    assert_eq!(s.environment.build.command, "cargo build --release");
}
