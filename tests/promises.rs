//! What the README promises and no other test checks: shutdown with requests in flight,
//! the memory commands' options, build state from a hook and from the output directory,
//! outdated dependencies as a blocker, PLAN.md as the task list, the caps on facts and
//! goals shown, and auto-start finding `ccmemd` on PATH.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// A `git` that sleeps `secs` before running, first on the daemon's PATH: a checkpoint (which
/// asks git for the branch) then takes that long.
fn slow_git_daemon(env: &Env, secs: u32, args: &[&str]) -> Daemon {
    let bin = env.path().join("slow-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real =
        String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
    let script = bin.join("git");
    write_executable(
        &script,
        &format!("#!/bin/sh\n[ -e '{}' ] && sleep {secs}\nexec {real} \"$@\"\n", env.path().join("slow").display()),
    );
    let mut cmd = env.daemon_cmd(args);
    cmd.env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()));
    let d = Daemon::spawn(&mut cmd, env.path().join(format!("slow-{secs}.stderr")));
    d.wait_ready(&env.socket);
    d
}

/// A request in flight when the daemon is told to stop is answered, within
/// `--shutdown-grace`, before it exits.
#[test]
fn a_request_in_flight_at_shutdown_is_answered() {
    let env = Env::new();
    let mut d = slow_git_daemon(&env, 1, &["--shutdown-grace", "30s"]);
    let root = repo(&env, "app");
    env.event(&root, json!({"kind": "file_edited", "path": "a.rs"}));
    std::fs::write(env.path().join("slow"), "").unwrap();
    let mut c = env.raw();
    // Each git call of the checkpoint sleeps a second: it takes several.
    c.stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    c.send(
        format!("{}\n", json!({"jsonrpc": "2.0", "id": 7, "method": "session.checkpoint", "params": {"path": root}}))
            .as_bytes(),
    );
    // The checkpoint is under way (git is sleeping) when the signal comes.
    assert!(wait_until(Duration::from_secs(10), || git_running(&env)), "git never ran");
    unsafe { libc::kill(d.pid as i32, libc::SIGTERM) };
    let reply = c.recv().expect("the checkpoint's reply, before the daemon exits");
    assert_eq!(reply["id"], 7);
    assert!(reply["result"]["checkpoint"]["bytes"].as_u64().is_some_and(|b| b > 0), "{reply}");
    assert!(d.wait(Duration::from_secs(60)).success());
}

/// Whether a sleeping git of this environment's slow wrapper is running.
fn git_running(env: &Env) -> bool {
    let marker = env.path().join("slow-bin").to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker)))
}

/// The memory commands' options, through the CLI as a person types them.
#[test]
fn memory_options_do_what_they_say() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let p = root.to_str().unwrap();
    let body = env.path().join("body.md");
    std::fs::write(&body, "Use a connection pool of 10.\n\nMore made it slower.").unwrap();
    let w = env.ctl_json(&[
        "memory",
        "write",
        "--type",
        "learning",
        "--title",
        "Pool size",
        "--tag",
        "db",
        "--tag",
        "perf",
        "--file",
        body.to_str().unwrap(),
        "--project",
        p,
    ]);
    let slug = w["memory"]["slug"].as_str().unwrap().to_string();
    assert!(w["memory"]["content"].as_str().unwrap().contains("More made it slower."), "--file: {w}");
    env.ctl_json(&[
        "memory",
        "write",
        "--type",
        "gotcha",
        "--title",
        "Pool leaks on panic",
        "--tag",
        "db",
        "--content",
        "Wrap it.",
        "--scope",
        "local",
        "--project",
        p,
    ]);
    env.ctl_json(&[
        "memory",
        "write",
        "--type",
        "decision",
        "--title",
        "Postgres for the pool",
        "--tag",
        "db",
        "--content",
        "Chosen.",
        "--scope",
        "global",
        "--project",
        p,
    ]);

    let u = env.ctl_json(&[
        "memory",
        "update",
        &slug,
        "--append",
        "Measured on the staging box.",
        "--add-tag",
        "measured",
        "--project",
        p,
    ]);
    assert!(u["memory"]["content"].as_str().unwrap().ends_with("Measured on the staging box."), "{u}");
    assert!(u["memory"]["tags"].to_string().contains("measured"), "{u}");

    let slugs = |v: &Value, key: &str| -> Vec<String> {
        v[key].as_array().unwrap().iter().map(|m| m["slug"].as_str().unwrap().to_string()).collect()
    };
    let local = env.ctl_json(&["memory", "list", "--scope", "local", "--project", p]);
    assert_eq!(slugs(&local, "memories"), ["gotcha-pool-leaks-on-panic"], "{local}");
    let tagged = env.ctl_json(&["memory", "search", "pool", "--tag", "perf", "--project", p]);
    assert_eq!(slugs(&tagged, "hits"), std::slice::from_ref(&slug), "--tag: {tagged}");
    let global = env.ctl_json(&["memory", "search", "pool", "--scope", "global", "--project", p]);
    assert_eq!(slugs(&global, "hits"), ["decision-postgres-for-the-pool"], "--scope: {global}");
    let one = env.ctl_json(&["memory", "search", "pool", "--limit", "1", "--project", p]);
    assert_eq!(one["hits"].as_array().unwrap().len(), 1, "--limit: {one}");
    let text = env.ctl_json(&["memory", "search", "pool", "--mode", "text", "--project", p]);
    assert_eq!((text["mode"].as_str(), text["hits"].as_array().map(Vec::len)), (Some("text"), Some(3)), "{text}");
    // Semantic search without an embedding provider says so and falls back.
    let sem = env.ctl_json(&["memory", "search", "pool", "--mode", "semantic", "--project", p]);
    assert_eq!(sem["mode"], "text", "{sem}");
    assert!(sem["notes"].to_string().to_lowercase().contains("embedding"), "{sem}");
}

/// The build's state from a failing build command through the hook, and from the output
/// directory when something else built it since.
#[test]
fn build_state_from_a_hook_and_from_the_output_directory() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    send(&env, ev(&root, "c1", "SessionStart", json!({"source": "startup"})));
    let out = include_str!("../daemon/fixtures/testout/cargo-build-fail.txt");
    send(
        &env,
        ev(
            &root,
            "c1",
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"}, "error": format!("Exit code 101\n{out}")}),
        ),
    );
    let st = settle(&env, &root, |s| s["session"]["environment"]["build"]["status"] == "failed");
    let b = &st["session"]["environment"]["build"];
    assert!(b["errors"][0].as_str().unwrap().contains("error"), "{b}");
    assert_eq!(b["command"], "cargo build");
    let ctx = text(&env.ctl(&["context", root.to_str().unwrap()]).stdout);
    assert!(ctx.contains("cargo build"), "{ctx}");

    // Something else built it since: target/ is newer than the failure.
    let target = root.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    std::fs::File::open(&target).unwrap().set_modified(later).unwrap();
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    let b = env.project_status(&root)["session"]["environment"]["build"].clone();
    assert_eq!(
        (b["status"].as_str(), b["outputDir"].as_str().or(b["output_dir"].as_str())),
        (Some("success"), Some("target/")),
        "{b}"
    );
}

/// A lockfile newer than what is installed is a blocker in the report.
#[test]
fn outdated_dependencies_are_a_blocker() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    std::fs::write(root.join("package.json"), r#"{"name": "app", "dependencies": {"left-pad": "1.3.0"}}"#).unwrap();
    std::fs::create_dir_all(root.join("node_modules")).unwrap();
    std::fs::write(root.join("node_modules/.package-lock.json"), "{}").unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(root.join("node_modules/.package-lock.json")).unwrap().set_modified(old).unwrap();
    std::fs::write(root.join("package-lock.json"), "{}").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "package-lock.json"}));
    let r = env.ctl(&["report", root.to_str().unwrap(), "--stdout"]);
    assert_ok(&r, "report");
    let report = text(&r.stdout);
    let blockers = report.split("## Blockers").nth(1).unwrap_or("").split("\n## ").next().unwrap_or("");
    assert!(blockers.contains("npm install"), "the outdated install is a blocker:\n{blockers}");
}

/// A root PLAN.md is the project's task list when there is no spec-kit one.
#[test]
fn plan_md_is_the_task_list() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    std::fs::write(
        root.join("PLAN.md"),
        "# Plan\n\n## Phase 1: Setup\n\n- [x] init\n- [ ] config\n\n## Phase 2: Build\n\n- [ ] api\n",
    )
    .unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "PLAN.md"}));
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    let v = read_state(&root);
    assert_eq!(v["plan"]["file"], "PLAN.md", "{v}");
    assert_eq!((v["plan"]["completed_tasks"].as_u64(), v["plan"]["total_tasks"].as_u64()), (Some(1), Some(3)), "{v}");
    assert_eq!(v["phase"]["name"], "Setup", "{v}");
}

/// At most 50 facts and 20 active goals are shown, the newest.
#[test]
fn the_context_shows_at_most_fifty_facts_and_twenty_goals() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let facts: String = (1..=60).map(|i| format!("[REMEMBER: fact number {i:02}] ")).collect();
    let goals: String = (1..=25).map(|i| format!("[GOAL: goal number {i:02}] ")).collect();
    send(&env, ev(&root, "c1", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c1", "Stop", json!({"last_assistant_message": format!("{facts}{goals}")})));
    let out = env.ctl(&["context", root.to_str().unwrap(), "--budget", "10000"]);
    assert_ok(&out, "context");
    let ctx = text(&out.stdout);
    let shown = |word: &str| ctx.lines().filter(|l| l.starts_with(&format!("- {word} number"))).count();
    assert_eq!((shown("fact"), shown("goal")), (50, 20), "{ctx}");
    assert!(ctx.contains("- fact number 60") && !ctx.contains("- fact number 10"), "the newest: {ctx}");
    assert!(ctx.contains("- goal number 25") && !ctx.contains("- goal number 05"), "the newest: {ctx}");
    let kept = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert_eq!(kept["facts"].as_array().map(Vec::len), Some(60), "all are kept, only the shown are capped");
}

/// A `ccmemctl` with no `ccmemd` beside it starts the one on PATH.
#[test]
fn auto_start_finds_ccmemd_on_path() {
    let env = Env::new();
    let alone = env.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let ctl = alone.join("ccmemctl");
    copy_executable(Path::new(CCMEMCTL), &ctl);
    let dir = Path::new(CCMEMD).parent().unwrap();
    let mut cmd = std::process::Command::new(&ctl);
    env.apply(&mut cmd);
    cmd.env("PATH", format!("{}:/usr/bin:/bin", dir.display())).args(["status", "--json"]);
    let out = cmd.output().unwrap();
    env.note_daemon();
    assert_ok(&out, "status from a lone ccmemctl");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pid = v["daemon"]["pid"].as_u64().unwrap() as u32;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe, std::fs::canonicalize(CCMEMD).unwrap(), "the ccmemd on PATH was started");
}
