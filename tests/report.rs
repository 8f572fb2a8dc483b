//! The session memory report end to end: written at every checkpoint from a real project
//! (task list, edited files with marker comments, a failing test run), read back and checked
//! by `ccmemctl report --check`; and the sensitive-data filter on everything written.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const TASKS: &str = "# Tasks: Login

## Phase 1: Setup

- [x] T001 Create project structure
- [X] T002 [P] Add CI workflow

## Phase 2: Core

- [ ] T003 [US1] Connect the database using `.env.local`
- [ ] T004 [P] [US1] Implement login form
- [ ] T005 Write session tests

## Phase 3: Polish

- [ ] T006 Document the API
";

fn report_file(root: &Path) -> std::path::PathBuf {
    root.join(".claude/session-memory.md")
}

fn wait_report(root: &Path, cond: impl Fn(&str) -> bool) -> String {
    let mut last = String::new();
    assert!(
        wait_until(Duration::from_secs(10), || {
            last = std::fs::read_to_string(report_file(root)).unwrap_or_default();
            cond(&last)
        }),
        "the report never became right:\n{last}"
    );
    last
}

#[test]
fn every_checkpoint_writes_a_report_that_reads_back_and_checks_clean() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    std::fs::create_dir_all(app.join("specs/001-login")).unwrap();
    std::fs::write(app.join("specs/001-login/tasks.md"), TASKS).unwrap();
    std::fs::create_dir_all(app.join("src")).unwrap();

    send(&env, ev(&app, "conv-1", "SessionStart", json!({"source": "startup"})));
    std::fs::write(
        app.join("src/login.rs"),
        "fn login() {}\n// FIXME: passwords are compared in plain text\n// TODO(ana): rate limit\n",
    )
    .unwrap();
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": app.join("src/login.rs"), "content": "x"}}),
        ),
    );
    let out = include_str!("../daemon/fixtures/testout/cargo-fail.txt");
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{out}")}),
        ),
    );
    send(&env, ev(&app, "conv-1", "Stop", json!({"last_assistant_message": "Done for now."})));

    let md = wait_report(&app, |t| t.contains("FIXME in \"src/login.rs\" line 2") && t.contains("failing unit test"));
    assert!(md.starts_with("# Session Memory: `app`\n"), "{md}");
    for section in ccmem_proto::model::report::SECTIONS {
        assert!(md.contains(&format!("\n## {section}\n")), "{section} missing:\n{md}");
    }
    assert!(md.contains("2. 2/6 tasks complete (33.3%)"), "{md}");
    assert!(md.contains("3. Current phase: \"Core\""), "{md}");
    assert!(md.contains("**Source**: `specs/001-login/tasks.md`"), "{md}");
    assert!(md.contains("| \"Core\" | 0 | 3 | 0.0% |"), "{md}");
    assert!(md.contains("| T003 | \"Connect the database using \\`.env.local\\`\" | \"Core\" |"), "{md}");
    assert!(md.contains("Missing \".env.local\""), "a file the current task needs is a blocker:\n{md}");
    assert!(md.contains("[high] `src/lib.rs`:8 — Failing test: \"tests::parses\""), "{md}");
    assert!(!md.contains("### Dependencies"), "no manifest or lockfile, no Dependencies block:\n{md}");

    // What the file says is what `report --check` and the parser accept.
    let check = env.ctl(&["report", "--check", report_file(&app).to_str().unwrap()]);
    assert_ok(&check, "report --check");
    assert!(text(&check.stdout).contains(": valid"));
    let parsed = ccmem_proto::model::report::parse(&md);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    assert_eq!(parsed.memory.task_status.current_task.as_ref().unwrap().id, "T003");

    // The task list changes: the watcher sees it and the report follows, with no checkpoint asked.
    std::fs::write(app.join("specs/001-login/tasks.md"), TASKS.replace("- [ ] T003", "- [x] T003")).unwrap();
    let md = wait_report(&app, |t| t.contains("3/6 tasks complete (50.0%)"));
    assert!(
        md.contains("Restore \".env.local\" or reopen \"T003\""),
        "a done task's file that is gone is a blocker:\n{md}"
    );
    let status = env.project_status(&app);
    assert_eq!(status["session"]["task_status"]["currentTask"]["id"], "T004");
    assert_eq!(status["session"]["plan"]["completed_tasks"], 3);
    assert_eq!(status["session"]["phase"]["name"], "Core");
    let ctx = text(&env.ctl(&["context", app.to_str().unwrap()]).stdout);
    assert!(
        ctx.contains("## From the repository's files")
            && ctx.contains("- its current task: \"T004 Implement login form\" (phase \"Core\")"),
        "{ctx}"
    );

    // On demand, printed or written.
    let printed = env.ctl(&["report", app.to_str().unwrap(), "--stdout"]);
    assert_ok(&printed, "report --stdout");
    assert!(text(&printed.stdout).starts_with("# Session Memory: `app`"));
    let wrote = env.ctl(&["report", app.to_str().unwrap()]);
    assert_ok(&wrote, "report");
    assert!(text(&wrote.stdout).contains("session-memory.md"));
    let exclude = std::fs::read_to_string(app.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains(".claude/session-memory.md"), "the report stays out of commits");
}

#[test]
fn report_check_lists_what_is_wrong_and_reads_damage() {
    let env = Env::new();
    let bad = env.path().join("bad.md");
    let md = "# Session Memory: x\n\n**Generated**: yesterday\n**Branch**: main\n**Format Version**: 1.0\n\n## Executive Summary\n\n1. x\n2. half done\n3. Current phase: a\n4. No critical blockers\n5. Next action: maybe later\n";
    std::fs::write(&bad, md).unwrap();
    let out = env.ctl(&["report", "--check", bad.to_str().unwrap(), "--no-start"]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    for want in [
        "missing section: Task Status",
        "metadata.generatedAt must be ISO 8601",
        "summary.completionStatus must give a fraction and a percentage",
    ] {
        assert!(t.contains(want), "{want} not in:\n{t}");
    }
    assert!(env.daemons_running().is_empty(), "--check needs no daemon");
    let empty = env.path().join("empty.md");
    std::fs::write(&empty, "").unwrap();
    let out = env.ctl(&["report", "--check", empty.to_str().unwrap(), "--no-start", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["problems"].to_string().contains("no session data"), "{v}");
    let out = env.ctl(&["report", "--check", "/no/such/file.md", "--no-start"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read /no/such/file.md"));
}

#[test]
fn secrets_never_reach_disk_or_context_and_users_add_patterns() {
    let env = Env::new();
    std::fs::create_dir_all(env.path().join("config/ccmem")).unwrap();
    std::fs::write(env.path().join("config/ccmem/redact-patterns"), "# ours\nemployee-id = \\bEMP-\\d{6}\\b\n")
        .unwrap();
    // Logging all it can: the log is written to disk too.
    let mut cmd = env.daemon_cmd(&[]);
    cmd.env("RUST_LOG", "debug");
    let d = Daemon::spawn(&mut cmd, env.path().join("ccmemd-debug.stderr"));
    d.wait_ready(&env.socket);
    let app = repo(&env, "app");
    let secrets = [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "AKIAQ4XBV7MNP2KD6RTY",
        "hunter2hunter2",
        "EMP-123456",
        "my-ssn-is-078-05-1120",
    ];
    send(&env, ev(&app, "conv-1", "SessionStart", json!({"source": "startup"})));
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "UserPromptSubmit",
            json!({"prompt": "deploy with ghp_0123456789abcdefghijABCDEFGHIJ012345 and ask EMP-123456 <private>my-ssn-is-078-05-1120</private> about it"}),
        ),
    );
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "AWS_ACCESS_KEY_ID=AKIAQ4XBV7MNP2KD6RTY DB_PASSWORD=hunter2hunter2 ./deploy.sh"}}),
        ),
    );
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "PostToolUse",
            json!({"tool_name": "TodoWrite", "tool_input": {"todos": [{"content": "then rotate DB_PASSWORD=hunter2hunter2", "status": "pending"}]}}),
        ),
    );
    send(
        &env,
        ev(
            &app,
            "conv-1",
            "Stop",
            json!({"last_assistant_message": "[REMEMBER: the token is ghp_0123456789abcdefghijABCDEFGHIJ012345]"}),
        ),
    );
    // Where the hook client logs: a payload it cannot use, and one for no project.
    let _ = hook(&env, b"{not json ghp_0123456789abcdefghijABCDEFGHIJ012345");
    send(&env, ev(Path::new("/"), "conv-2", "UserPromptSubmit", json!({"prompt": "use AKIAQ4XBV7MNP2KD6RTY"})));
    wait_report(&app, |t| t.contains("rotate"));
    let ctx = text(&env.ctl(&["context", app.to_str().unwrap()]).stdout);
    assert!(ctx.contains("[REDACTED:github-token]") && ctx.contains("[REDACTED:employee-id]"), "{ctx}");
    let log = d.log();
    assert!(log.contains("DEBUG"), "the daemon's log: {log}");
    drop(d);
    // The context, the project's files, the state directory (tracker, archive, the client's
    // log) and the daemon's own log.
    let mut written = vec![ctx, log];
    for dir in [app.join(".claude"), env.state.clone()] {
        for f in walk(&dir).into_iter().filter(|p| p.is_file()) {
            written.push(std::fs::read_to_string(&f).unwrap_or_default());
        }
    }
    for s in secrets {
        for w in &written {
            assert!(!w.contains(s), "{s} reached disk or the context:\n{w}");
        }
    }
}

#[test]
fn a_bad_redaction_pattern_stops_the_daemon_with_the_file_and_line() {
    let env = Env::new();
    let file = env.path().join("patterns.txt");
    std::fs::write(&file, "ok = abc\nbroken = (unclosed\n").unwrap();
    let out = env.daemon_cmd(&["--redact-patterns", file.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}:2: broken", file.display())), "{err}");
    assert!(!env.socket.exists());
}

#[test]
fn a_report_with_redacted_credentials_passes_its_own_check() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    for command in [
        "curl -H 'Authorization: Bearer abcdef0123456789xyz' https://api.example.com",
        "curl -u admin:S3cretPassw0rd https://example.com",
        "docker login -p Hunter2Hunter2 registry.example.com",
        "redis-cli -a R3disPassw0rd ping",
        "export DB_PASS=hunter2hunter2 SECRET_KEY_BASE=9f8e7d6c5b4a39281706",
    ] {
        env.event(&app, json!({"kind": "command", "command": command}));
    }
    assert_ok(&env.ctl(&["checkpoint", app.to_str().unwrap()]), "checkpoint");
    let md = std::fs::read_to_string(report_file(&app)).unwrap();
    for secret in
        ["abcdef0123456789xyz", "S3cretPassw0rd", "Hunter2Hunter2", "R3disPassw0rd", "hunter2hunter2", "9f8e7d6c5b4a"]
    {
        assert!(!md.contains(secret), "{secret} in the report:\n{md}");
    }
    assert!(md.contains("[REDACTED:"), "the commands are in the report, masked:\n{md}");
    // Redacting is idempotent: what the daemon wrote is not "sensitive data" to its own check.
    let check = env.ctl(&["report", "--check", report_file(&app).to_str().unwrap()]);
    assert_ok(&check, "report --check");
    assert!(text(&check.stdout).contains(": valid"), "{}", text(&check.stdout));
}

/// Found by the independent tester: a TODO.md of 300 phases with ~150-character names made
/// a 56,576-byte report that `report --check` rejected ("at most 51200"). The daemon writes
/// the phases around the current one, says how many it left out, and the file checks clean.
#[test]
fn a_task_list_too_long_for_the_report_is_cut_and_still_checks_clean() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    let mut todo = String::from("# Plan\n\n");
    for i in 0..300 {
        let name = format!("{i} {}", "a phase whose name is long enough to fill the table ".repeat(3));
        todo.push_str(&format!(
            "## Phase {i}: {}\n\n- [{}] T{i:03} task {i}\n\n",
            &name[..150],
            if i < 40 { "x" } else { " " }
        ));
    }
    std::fs::write(app.join("TODO.md"), todo).unwrap();
    send(&env, ev(&app, "c1", "SessionStart", json!({"source": "startup"})));
    assert_ok(&env.ctl(&["checkpoint", app.to_str().unwrap()]), "checkpoint");
    let md = std::fs::read_to_string(report_file(&app)).unwrap();
    assert!(md.len() <= ccmem_proto::model::report::MAX_BYTES, "{} bytes", md.len());
    assert!(md.contains("2. 40/300 tasks complete (13.3%)"), "the summary counts every task:\n{md}");
    assert!(md.contains("**Left Out**: 270 of 300 phases"), "{md}");
    assert!(md.contains("| \"40 a phase whose name"), "the current phase is listed:\n{md}");
    let check = env.ctl(&["report", "--check", report_file(&app).to_str().unwrap()]);
    assert_ok(&check, "report --check");
    assert!(text(&check.stdout).contains(": valid"), "{}", text(&check.stdout));
}
