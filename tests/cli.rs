//! The command line as a new user meets it: a reader that stops early, bad values, help that
//! says what to type.
#![cfg(unix)]

mod common;

use common::*;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

/// Runs `ccmemctl args` with its stdout's reader already gone, as `… | head -0` would.
fn with_closed_stdout(env: &Env, args: &[&str]) -> std::process::Output {
    let mut child = env.ctl_cmd(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_reader_that_stops_early_is_a_quiet_end_for_every_command() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let r = root.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["completions", "bash"],
        &["man"],
        &["config", "show"],
        &["--help"],
        &["event", "--help"],
        &["status", r],
        &["status", r, "--json"],
        &["context", r],
        &["projects"],
        &["doctor"],
        &["version"],
    ];
    for args in commands {
        let out = with_closed_stdout(&env, args);
        let quiet = out.status.code() == Some(0) || out.status.signal() == Some(libc::SIGPIPE);
        assert!(quiet, "{args:?}: {:?}", out.status);
        assert!(!text(&out.stderr).contains("panicked"), "{args:?}: {}", text(&out.stderr));
    }
    // The hook still exits 0, whatever happens to its stdout.
    let mut child = env.ctl_cmd(&["hook"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let payload = ev(&root, "c", "SessionStart", serde_json::json!({"source": "startup"}));
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.to_string().as_bytes()).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn event_help_lists_every_kind() {
    let env = Env::new();
    let out = env.ctl(&["event", "--help"]);
    assert_ok(&out, "event --help");
    let help = text(&out.stdout);
    for kind in [
        "file_edited",
        "file_deleted",
        "command",
        "todos",
        "context",
        "phase",
        "note",
        "warning",
        "server",
        "tests",
        "build",
    ] {
        assert!(help.contains(&format!("  {kind} ")), "{kind} missing:\n{help}");
    }
}

#[test]
fn json_errors_budgets_and_messages_a_user_can_act_on() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let r = root.to_str().unwrap();
    // Out-of-range budgets are refused with the range, by the client and by the daemon.
    let out = env.ctl(&["context", r, "--budget", "50"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("200..=10000"), "{}", text(&out.stderr));
    let e = env.try_request("session.context", serde_json::json!({"path": root, "budget": 50})).unwrap_err();
    assert!(e.to_string().contains("out of range: 200 to 10000"), "{e}");
    // With --json, an error is JSON on stdout.
    let out = env.ctl(&["memory", "show", "nosuch", "--project", r, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON error");
    assert_eq!(v["error"]["code"], 1, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("nosuch"), "{v}");
    let out = env.ctl(&["--no-start", "--socket", "/nonexistent/ccmemd.sock", "status", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON error");
    assert_eq!(v["error"]["code"], 3, "{v}");
    // `service status --json` is structured, not text in a field (exit 1: nothing installed).
    let out = env.ctl(&["service", "status", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["files"].as_array().is_some_and(|f| !f.is_empty() && f[0]["installed"] == false), "{v}");
    // Bad params are explained without the protocol's method names.
    let out = env.ctl(&["test-report", r, "--framework", "nosuchrunner"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out.stderr).contains("session."), "{}", text(&out.stderr));
    // Results recorded without their command print no empty backticks.
    env.event(
        &root,
        serde_json::json!({"kind": "tests", "suite": {"framework": "jest", "status": "failed", "passed": 1, "failed": 1, "total": 2}}),
    );
    env.event(&root, serde_json::json!({"kind": "build", "status": "failed"}));
    let context = text(&env.ctl(&["context", r]).stdout);
    let report = text(&env.ctl(&["report", r, "--stdout"]).stdout);
    let status = text(&env.ctl(&["status", r]).stdout);
    for (what, t) in [("context", &context), ("report", &report), ("status", &status)] {
        assert!(!t.contains("``"), "{what}:\n{t}");
    }
    assert!(context.contains("(`jest`: 1 of 2 failed)") && context.contains("The build failed"), "{context}");
    assert!(!report.contains("- Command: \n"), "{report}");
}

#[test]
fn facts_and_goals_are_listed_forgotten_and_finished_by_number() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let r = root.to_str().unwrap();
    let said = "Noted. [REMEMBER: the API uses cursor pagination] [REMEMBER: staging is read-only] \
                [REMEMBER GLOBAL: prefers pnpm] [GOAL: ship OAuth login | DEADLINE: Friday]";
    send(&env, ev(&root, "c1", "Stop", serde_json::json!({"last_assistant_message": said})));
    let list = |env: &Env, args: &[&str]| {
        let mut a = vec!["facts"];
        a.extend(args);
        a.extend(["--project", r, "--json"]);
        let out = env.ctl(&a);
        (out.status.code(), serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default())
    };
    let mut v = serde_json::Value::Null;
    assert!(wait_until(Duration::from_secs(10), || {
        v = list(&env, &[]).1;
        v["goals"].as_array().is_some_and(|g| !g.is_empty())
    }));
    assert_eq!(v["facts"], serde_json::json!(["the API uses cursor pagination", "staging is read-only"]), "{v}");
    // Said by an agent: listed with where, as waiting.
    let global = v["global_facts"][0].as_str().unwrap_or_default();
    assert!(global.starts_with(&format!("prefers pnpm (said by an agent in {r}: ")), "{v}");
    assert_eq!(v["global_facts"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["goals"][0]["deadline"], "Friday");
    let (code, v) = list(&env, &["forget", "1"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["changed"], "forgot: the API uses cursor pagination");
    assert_eq!(v["facts"], serde_json::json!(["staging is read-only"]));
    let (_, v) = list(&env, &["done", "1"]);
    assert_eq!(v["goals"], serde_json::json!([]));
    assert_eq!(v["completed_goals"][0]["text"], "ship OAuth login");
    let (_, v) = list(&env, &["forget", "1", "--global"]);
    assert_eq!(v["global_facts"], serde_json::json!([]));
    let (code, v) = list(&env, &["forget", "7"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["error"]["message"], "there is no fact 7: they are numbered 1 to 1", "{v}");
    // Facts outlive the session: listed and edited with no live session.
    assert_ok(&env.ctl(&["unwatch", r]), "unwatch");
    let (_, v) = list(&env, &["forget", "1"]);
    assert_eq!(v["facts"], serde_json::json!([]), "{v}");
    assert_eq!(env.project_status(&root)["live"], false, "listing facts starts no session");
    let human = text(&env.ctl(&["facts", "--project", r]).stdout);
    assert!(human.contains("Facts of this project: none") && human.contains("ship OAuth login"), "{human}");
}

/// `doctor --json`'s check of the agent's hooks, as `doctor` (a command to run) gives it.
fn hooks_check(mut doctor: std::process::Command) -> serde_json::Value {
    let out = doctor.output().unwrap();
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    checks.as_array().unwrap().iter().find(|c| c["name"] == "agent hooks").cloned().expect("the hooks check")
}

/// The settings file's text, and the program its Stop hook runs (what `hooks install` wrote).
fn installed_program(settings: &std::path::Path) -> (String, String) {
    let text = std::fs::read_to_string(settings).unwrap();
    let ours = serde_json::from_str::<serde_json::Value>(&text).unwrap()["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .trim_end_matches(" hook")
        .to_string();
    (text, ours)
}

#[test]
fn doctor_says_when_the_hooks_run_a_program_that_is_gone() {
    let env = Env::new();
    assert_ok(&env.ctl(&["hooks", "install"]), "hooks install");
    let settings = env.home.join(".claude/settings.json");
    let check = |env: &Env| hooks_check(env.ctl_cmd(&["doctor", "--json"]));
    assert_eq!(check(&env)["status"], "ok", "{}", check(&env));
    let (text, ours) = installed_program(&settings);
    std::fs::write(&settings, text.replace(&ours, "/nonexistent/ccmemctl")).unwrap();
    let c = check(&env);
    assert_eq!(c["status"], "fail", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("/nonexistent/ccmemctl, which cannot be found"), "{c}");
}

/// Round three's tester: a repository's `.claude/settings.json` that runs a script of its own
/// under ccmemctl's name (`./tools/ccmemctl hook`) was "✓ all events hooked". Such a program
/// is not ccmem, and `doctor` says so (without running it).
#[test]
fn doctor_says_when_the_hooks_run_a_program_of_the_repository() {
    let env = Env::new();
    let root = repo(&env, "app");
    let mark = root.join("ran");
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::write(root.join("tools/ccmemctl"), format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
    set_mode(&root.join("tools/ccmemctl"), 0o755);
    assert_ok(&env.ctl_cmd(&["hooks", "install", "--project"]).current_dir(&root).output().unwrap(), "install");
    // Good hooks of the user's own hide nothing of the repository's.
    assert_ok(&env.ctl(&["hooks", "install"]), "the user's hooks");
    let settings = root.join(".claude/settings.json");
    let (text, ours) = installed_program(&settings);
    for theirs in ["./tools/ccmemctl", &root.join("tools/ccmemctl").display().to_string()] {
        std::fs::write(&settings, text.replace(&ours, theirs)).unwrap();
        let mut doctor = env.ctl_cmd(&["doctor", "--json"]);
        doctor.current_dir(&root);
        let c = hooks_check(doctor);
        assert_eq!(c["status"], "warn", "{theirs}: {c}");
        assert!(c["detail"].as_str().unwrap().contains("a program of the repository's"), "{c}");
    }
    assert!(!mark.exists(), "doctor ran nothing");
}
