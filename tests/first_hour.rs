//! A new user's first hour: ccmem never goes silent when it cannot work (a broken
//! configuration, a HOME that is a file), its help reads well, and its output suits where it
//! goes (a terminal or a pipe).
#![cfg(unix)]

mod common;

use common::*;
use serde_json::{json, Value};

fn config_file(env: &Env) -> std::path::PathBuf {
    let dir = env.path().join("config/ccmem");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("config.toml")
}

const BROKEN: &str = "session_ttl = \"2 days\"\n";
/// The daemon's own words about [`BROKEN`].
const ITS_ERROR: &str = "key `session_ttl`: invalid duration \"2 days\"";

fn start(root: &std::path::Path, session: &str) -> Vec<u8> {
    json!({"hook_event_name": "SessionStart", "session_id": session, "cwd": root, "source": "startup"})
        .to_string()
        .into_bytes()
}

/// The JSON objects a hook printed, one per line.
fn printed(out: &std::process::Output) -> Vec<Value> {
    assert_eq!(out.status.code(), Some(0), "the hook always exits 0");
    assert!(out.stderr.is_empty(), "the hook never writes to stderr: {}", text(&out.stderr));
    text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn a_broken_config_is_said_by_config_show_doctor_status_and_the_session_start() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let r = root.to_str().unwrap();
    // The daemon runs on a good configuration; then the file is broken.
    assert_ok(&env.ctl(&["status", r]), "status");
    std::fs::write(config_file(&env), BROKEN).unwrap();

    // `config show` still shows the values in force, and fails with the daemon's error.
    let out = env.ctl(&["config", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("session_ttl"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains(ITS_ERROR), "{}", text(&out.stderr));
    let out = env.ctl(&["config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["problem"].as_str().unwrap().contains(ITS_ERROR), "{v}");

    // doctor fails on it, with the same words.
    let out = env.ctl(&["doctor"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains(&format!("✗ configuration: {}", config_file(&env).display())),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains(ITS_ERROR));

    // The session start tells the user (systemMessage, never the context), once a session.
    let out = hook(&env, &start(&root, "c1"));
    let p = printed(&out);
    assert_eq!(p.len(), 1, "{p:?}");
    let said = p[0]["systemMessage"].as_str().unwrap_or_else(|| panic!("{p:?}"));
    assert!(said.contains(ITS_ERROR) && said.contains("config show"), "{said}");
    assert!(!p[0]["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or("").contains(ITS_ERROR));
    let again = printed(&hook(&env, &start(&root, "c1")));
    assert!(again.iter().all(|o| o.get("systemMessage").is_none()), "once per session: {again:?}");
    let other = printed(&hook(&env, &start(&root, "c2")));
    assert!(other.iter().any(|o| o.get("systemMessage").is_some()), "another session hears it: {other:?}");

    // After a restart: status gives the start-up error itself, and doctor says the daemon
    // cannot start (not "nothing to do").
    assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    let out = env.ctl(&["status", r]);
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(err.contains("ccmemd cannot start") && err.contains(ITS_ERROR), "{err}");
    let out = env.ctl(&["doctor"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("✗ daemon") && !said.contains("nothing to do"), "{said}");
    assert!(said.contains(ITS_ERROR), "{said}");
    let out = env.daemon_cmd(&["--check-config"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(ITS_ERROR));

    // The hook cannot start the daemon: the user hears why, once for the session.
    let p = printed(&hook(&env, &start(&root, "c3")));
    let said = p.first().and_then(|o| o["systemMessage"].as_str()).unwrap_or_else(|| panic!("{p:?}"));
    assert!(said.contains("not recording this session") && said.contains(ITS_ERROR), "{said}");
    assert!(printed(&hook(&env, &start(&root, "c3"))).is_empty(), "once per session");
    // Copilot CLI hears it as a progress line, which it keeps from the model.
    let payload = json!({"hook_event_name": "sessionStart", "sessionId": "c4", "cwd": root}).to_string();
    let out = hook_with(&env, payload.as_bytes(), |c| {
        c.env("CCMEM_HOOK_TIMEOUT_MS", "20000").args(["--agent", "copilot"]);
    });
    let p = printed(&out);
    assert_eq!(p[0]["type"], "progress", "{p:?}");
    assert!(p[0]["message"].as_str().unwrap().contains(ITS_ERROR));
    // Other events stay silent.
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "c5", "cwd": root, "prompt": "hi"});
    assert!(printed(&hook(&env, prompt.to_string().as_bytes())).is_empty());

    std::fs::remove_file(config_file(&env)).unwrap();
    let out = env.daemon_cmd(&["--check-config"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_ok(&env.ctl(&["status", r]), "status once the file is fixed");
}

#[test]
fn a_home_that_is_a_file_is_named_as_the_cause() {
    let env = Env::new();
    let file = env.path().join("home-file");
    std::fs::write(&file, "").unwrap();
    let out = env
        .ctl_cmd(&["status"])
        .env("HOME", &file)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    env.note_daemon();
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{} is a file, not a directory", file.display())), "{err}");
    assert!(!err.contains("see ") && !err.contains("its log"), "names no log that cannot exist: {err}");
}

#[test]
fn help_has_global_options_apart_hides_the_hook_and_speaks_plainly() {
    let env = Env::new();
    let help = |args: &[&str]| {
        let out = env.ctl(args);
        assert_ok(&out, &format!("{args:?}"));
        text(&out.stdout)
    };
    let write = help(&["memory", "write", "--help"]);
    let (own, global) = write.split_once("Global options:").unwrap_or_else(|| panic!("{write}"));
    for flag in ["--socket", "--json", "--no-start"] {
        assert!(global.contains(flag) && !own.contains(flag), "{flag} under its own heading:\n{write}");
    }
    assert!(own.contains("--tag <TAG>"), "{write}");
    let usage = own.lines().find(|l| l.starts_with("Usage:")).unwrap();
    assert!(usage.contains("--tag <TAG>"), "a required --tag is in the usage line: {usage}");

    let top = help(&["--help"]);
    assert!(!top.lines().any(|l| l.trim_start().starts_with("hook ")), "hook is hidden:\n{top}");
    assert!(top.lines().all(|l| l.chars().count() <= 100), "no line over 100 characters:\n{top}");
    // Every command's help fits 100 columns in a pipe (clap wraps it).
    for args in [
        &["import", "--help"][..],
        &["memory", "write", "--help"],
        &["hooks", "install", "--help"],
        &["status", "--help"],
    ] {
        let h = help(args);
        assert!(h.lines().all(|l| l.chars().count() <= 100), "{args:?}:\n{h}");
    }
    let checkpoint = help(&["checkpoint", "--help"]);
    assert!(checkpoint.contains("phase_complete (a phase of the work is finished)"), "{checkpoint}");
    for args in [&["report", "--help"][..], &["--help"], &["memory", "--help"], &["hooks", "install", "--help"]] {
        let h = help(args);
        assert!(!h.to_lowercase().contains("seed"), "no jargon in {args:?}:\n{h}");
    }
    // A missing --tag is clap's usage error, not the daemon's.
    let out = env.ctl(&["--no-start", "memory", "write", "--type", "learning", "--title", "t", "--content", "body"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--tag <TAG>"));
}

#[test]
fn output_is_plain_in_pipes_aligned_and_complete() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let r = root.to_str().unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    assert_ok(&env.ctl(&["watch", r]), "watch");
    env.event(&root, json!({"kind": "todos", "todos": [{"content": "Add login", "status": "in_progress", "activeForm": "Adding login"}]}));
    env.event(&root, json!({"kind": "warning", "text": "disk almost full"}));
    // Piped: no emoji.
    let out = env.ctl(&["status", &format!("{r}/sub/..")]);
    assert_ok(&out, "status");
    let s = text(&out.stdout);
    assert!(s.contains("SESSION CONTEXT") && s.contains("Warnings:"), "{s}");
    for emoji in ["📋", "🎯", "⚠"] {
        assert!(!s.contains(emoji), "{emoji} in a pipe:\n{s}");
    }
    // Paths are printed normalised.
    assert!(!s.contains("/sub/..") && !s.contains("/./"), "{s}");
    let out = env.ctl(&["projects"]);
    assert!(!text(&out.stdout).contains('⚠'), "{}", text(&out.stdout));
    // doctor: no colour codes in a pipe.
    assert!(!text(&env.ctl(&["doctor"]).stdout).contains('\x1b'));

    // config show: aligned columns, the memories' settings with their sources.
    let memory = env.home.join(".claude/memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("config.json"), r#"{"quality": {"orphanThreshold": 7}}"#).unwrap();
    let out = env.ctl(&["config", "show", r]);
    assert_ok(&out, "config show");
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().skip_while(|l| !l.starts_with("KEY")).collect();
    let column = rows[0].find("VALUE").unwrap();
    let applies = rows[0].find("APPLIES").unwrap();
    for row in &rows {
        // A value too long for its column has its row to itself, the rest aligned below it.
        let at = if row.starts_with(' ') { applies } else { column };
        assert_eq!(row.chars().nth(at).map(|c| c != ' '), Some(true), "aligned: {row:?}\n{s}");
        assert_eq!(row.chars().nth(at - 1), Some(' '), "aligned: {row:?}\n{s}");
    }
    let orphan = rows.iter().find(|l| l.starts_with("memory.quality.orphanThreshold")).unwrap_or_else(|| panic!("{s}"));
    assert!(orphan.contains(" 7 ") && orphan.contains(&memory.join("config.json").display().to_string()), "{orphan}");
    assert!(rows.iter().any(|l| l.starts_with("memory.embedding.provider") && l.ends_with("default")), "{s}");

    // service status: non-zero when nothing is installed.
    let out = env.ctl(&["service", "status"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).is_empty());
}

/// `watch ng2`, then a Claude Code session started in `ng2/sub`: one project, one session.
#[test]
fn a_session_inside_a_live_project_without_git_joins_it() {
    let env = Env::new();
    let ng2 = env.path().join("ng2");
    std::fs::create_dir_all(ng2.join("sub")).unwrap();
    let ng2 = std::fs::canonicalize(&ng2).unwrap();
    assert_ok(&env.ctl(&["watch", ng2.to_str().unwrap()]), "watch");
    let p = printed(&hook(&env, &start(&ng2.join("sub"), "c1")));
    let ctx = p[0]["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_else(|| panic!("{p:?}"));
    assert!(ctx.contains(&format!("(`{}`)", ng2.display())), "{ctx}");
    let projects = env.ctl_json(&["projects"]);
    let roots: Vec<&str> = projects["projects"].as_array().unwrap().iter().filter_map(|p| p["root"].as_str()).collect();
    assert_eq!(roots, [ng2.to_str().unwrap()], "{projects:#}");
}

/// A ccmemctl without its ccmemd (a broken install): the session's start tells the user.
#[test]
fn a_missing_daemon_program_is_told_at_the_session_start() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let bin = env.path().join("lonely");
    std::fs::create_dir_all(&bin).unwrap();
    copy_executable(std::path::Path::new(CCMEMCTL), &bin.join("ccmemctl"));
    let mut cmd = std::process::Command::new(bin.join("ccmemctl"));
    env.apply(&mut cmd);
    cmd.arg("hook").env("PATH", "/usr/bin:/bin").env("CCMEM_HOOK_TIMEOUT_MS", "20000");
    let p = printed(&feed(&env, cmd, &start(&root, "c1")));
    let said = p.first().and_then(|o| o["systemMessage"].as_str()).unwrap_or_else(|| panic!("{p:?}"));
    assert!(said.contains("cannot find ccmemd") && said.contains("install ccmem again"), "{said}");
    assert!(env.daemons_running().is_empty());
}

/// A bad `CCMEM_*` variable is a bad flag of the daemon's: the start-up error says which.
/// A knowledge memories' config.json that every memory command would refuse fails
/// `config show` and `doctor` too.
#[test]
fn a_bad_variable_or_memory_config_is_said_too() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let out = env.ctl_cmd(&["status", root.to_str().unwrap()]).env("CCMEM_SESSION_TTL", "2 days").output().unwrap();
    env.note_daemon();
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(err.contains("ccmemd cannot start") && err.contains("--session-ttl"), "{err}");

    let memory = env.home.join(".claude/memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("config.json"), r#"{"embedding": {"provider": "olama"}}"#).unwrap();
    let out = env.ctl(&["config", "show"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("olama"), "{}", text(&out.stderr));
    let out = env.ctl(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("✗ configuration") && text(&out.stdout).contains("olama"),
        "{}",
        text(&out.stdout)
    );
}
