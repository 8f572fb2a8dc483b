//! Load a repository or a client can put on the daemon: bursts, huge trees, idle connections, hung
//! git, signals during a shutdown.

use super::*;

#[test]
fn a_slow_background_job_and_a_burst_of_events_do_not_deadlock_the_project() {
    let env = Env::new();
    // git that takes a second: the background checkpoint after Stop is still running when
    // the burst fills the project's mailbox.
    let root = repo(&env, "app");
    let marker = env.path().join("git-is-slow");
    std::fs::write(&marker, "").unwrap();
    let mut d = Daemon::spawn(&mut slow_git(&env, &marker, 1), env.path().join("ccmemd.stderr"));
    d.wait_ready(&env.socket);
    send(&env, ev(&root, "c", "Stop", json!({})));
    let p = root.to_str().unwrap().to_string();
    let mut checkpoint = env
        .ctl_cmd(&["checkpoint", &p])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // 400 hook notifications (no id: nobody waits for them) while the checkpoint waits.
    let mut raw = env.raw();
    for n in 0..400 {
        let payload = ev(
            &root,
            "c",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": format!("echo {n}")}, "tool_response": {"stdout": "x"}}),
        );
        raw.send(format!("{}\n", json!({"jsonrpc": "2.0", "method": "hook", "params": payload})).as_bytes());
    }
    let start = Instant::now();
    while checkpoint.try_wait().unwrap().is_none() {
        // Every git call sleeps a second here: a checkpoint takes seconds, a deadlock for ever.
        if start.elapsed() > Duration::from_secs(90) {
            let _ = checkpoint.kill();
            panic!("the checkpoint never answered: the project task deadlocked on its own job");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(checkpoint.wait().unwrap().code(), Some(0));
    let out = within(&env, &["status", &p], Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0));
    let out = within(&env, &["shutdown"], Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0));
    d.wait(Duration::from_secs(10));
}

#[test]
fn a_huge_tree_is_tracked_up_to_a_cap_and_says_so() {
    let env = Env::new();
    let root = repo(&env, "big");
    for d in 0..30 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..20 {
            std::fs::write(dir.join(format!("f{f}.txt")), "x").unwrap();
        }
    }
    let mut cmd = env.daemon_cmd(&[]);
    cmd.env("CCMEM_MAX_PROJECT_FILES", "100").env("CCMEM_MAX_PROJECT_DIRS", "10");
    let d = Daemon::spawn(&mut cmd, env.path().join("ccmemd.stderr"));
    d.wait_ready(&env.socket);
    let p = root.to_str().unwrap();
    assert_ok(&env.ctl(&["watch", p]), "watch");
    let st = settle(&env, &root, |s| s["watch"]["ready"] == true);
    assert_eq!(st["watch"]["capped"], true, "{st}");
    assert!(st["watch"]["files"].as_u64().unwrap() < 600, "the walk stopped at the cap: {st}");
    assert!(st["warnings"].to_string().contains("changes past that are not tracked"), "{st}");
    let out = env.ctl_cmd(&["doctor", "--json"]).current_dir(&root).output().unwrap();
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    assert!(
        checks.as_array().unwrap().iter().any(|c| c["name"] == "project size" && c["status"] == "warn"),
        "{checks}"
    );
}

#[test]
fn idle_connections_at_the_cap_make_room_for_new_clients() {
    let env = Env::new();
    let _d = env.start_daemon(&["--max-connections", "8"]);
    // Only this test's connections from here: the start-up check's is gone (a loaded machine
    // may take a moment to see it close).
    let open = |env: &Env| env.request("status", json!({}))["daemon"]["connections"]["active"].as_u64();
    assert!(wait_until(Duration::from_secs(10), || open(&env) == Some(1)), "{:?}", open(&env));
    // Each is accepted (a ping answered), one after the other, then sits there saying nothing.
    let mut idle: Vec<Raw> = Vec::new();
    for _ in 0..8 {
        let mut r = env.raw();
        assert_eq!(r.call(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)["result"], "pong");
        idle.push(r);
    }
    for round in 0..3 {
        let out = within(&env, &["ping", "--no-start"], Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(0), "round {round}: {}", text(&out.stderr));
    }
    // The oldest idle ones made room, one per new client; the newest are still served.
    assert!(idle[0].is_closed(), "the connection idle longest was closed");
    let newest = idle.last_mut().unwrap();
    assert_eq!(newest.call(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)["result"], "pong");
}

/// A `git` that sleeps `secs` whenever `marker` exists, first on the daemon's PATH.
fn slow_git(env: &Env, marker: &Path, secs: u32) -> std::process::Command {
    let bin = env.path().join("slow-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap();
    let real_git = text(&out.stdout).trim().to_string();
    let script = format!("#!/bin/sh\n[ -e '{}' ] && sleep {secs}\nexec {real_git} \"$@\"\n", marker.display());
    write_executable(&bin.join("git"), &script);
    let mut cmd = env.daemon_cmd(&[]);
    cmd.env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()));
    cmd
}

#[test]
fn a_signal_ends_a_shutdown_asked_for_over_the_socket() {
    let env = Env::new();
    let root = repo(&env, "app");
    let marker = env.path().join("git-is-slow");
    let mut d = Daemon::spawn(&mut slow_git(&env, &marker, 15), env.path().join("ccmemd.stderr"));
    d.wait_ready(&env.socket);
    env.event(&root, json!({"kind": "file_edited", "path": "a.rs"}));
    // The final checkpoint will wait for git; a client asks for the shutdown.
    std::fs::write(&marker, "").unwrap();
    let mut shutdown = env
        .ctl_cmd(&["shutdown"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The daemon took the request (it says so), and is held in its final checkpoint by git.
    assert!(
        wait_until(Duration::from_secs(20), || d.log().contains("shutdown requested by a client")),
        "the shutdown request never arrived: {}",
        d.log()
    );
    assert!(d.child.as_mut().unwrap().try_wait().unwrap().is_none(), "still in its final checkpoint");
    let start = Instant::now();
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(5));
    assert!(start.elapsed() < Duration::from_secs(5), "SIGTERM during a requested shutdown is not swallowed");
    let _ = shutdown.wait();
}

#[test]
fn a_git_that_hangs_is_stopped() {
    let env = Env::new();
    let root = repo(&env, "app");
    // git reads its exclude file: a FIFO there blocks every `git status` for good.
    std::fs::remove_file(root.join(".git/info/exclude")).ok();
    mkfifo(&root.join(".git/info/exclude"));
    let mut d = env.start_daemon(&[]);
    let p = root.to_str().unwrap();
    let out =
        within(&env, &["event", r#"{"kind": "file_edited", "path": "a.rs"}"#, "--project", p], Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = within(&env, &["checkpoint", p], Duration::from_secs(90));
    assert!(text(&out.stderr).contains("exclude") || out.status.code() == Some(0), "{}", text(&out.stderr));
    let out = within(&env, &["shutdown"], Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(0));
    d.wait(Duration::from_secs(10));
}

/// Found by the independent tester: a repository whose `HEAD` is a FIFO made git hang on a
/// project's first SessionStart for git's whole time limit (5 s): past the hook's own 2 s,
/// the agent got no context and the daemon was marked stalled. The commands that read only
/// the repository's own small files are given a second.
#[test]
fn a_repository_that_hangs_git_costs_its_first_session_start_no_context() {
    let env = Env::new();
    let root = repo(&env, "app");
    std::fs::remove_file(root.join(".git/HEAD")).unwrap();
    mkfifo(&root.join(".git/HEAD"));
    let _d = env.start_daemon(&[]);
    let start = Instant::now();
    // The hook's own 2 s, with a second more for a loaded machine: git's 5 s is past both.
    let payload = ev(&root, "c1", "SessionStart", json!({"source": "startup"})).to_string();
    let out = hook_with(&env, payload.as_bytes(), |c| {
        c.env("CCMEM_HOOK_TIMEOUT_MS", "3000");
    });
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let context = v["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(!context.is_empty(), "the context, in {took:?}: {}", text(&out.stdout));
    assert_eq!(stall_marks(&env), 0, "a slow repository is no stalled daemon");
}

/// Found by the independent tester: a repository whose `.git/config` includes a FIFO makes
/// every git call wait out its time limit; a checkpoint made of several took over 30 s. After
/// the first, git is not run for that project for a while.
#[test]
fn a_git_config_that_hangs_git_costs_one_time_limit_not_one_per_call() {
    let env = Env::new();
    let root = repo(&env, "app");
    mkfifo(&root.join(".git/held"));
    let mut config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    config.push_str("[include]\n\tpath = held\n");
    std::fs::write(root.join(".git/config"), config).unwrap();
    let mut d = env.start_daemon(&[]);
    let p = root.to_str().unwrap();
    let out =
        within(&env, &["event", r#"{"kind": "file_edited", "path": "a.rs"}"#, "--project", p], Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Each checkpoint would run git several times, each held for its whole time limit.
    for _ in 0..3 {
        let out = within(&env, &["checkpoint", p], Duration::from_secs(25));
        assert_ok(&out, "checkpoint");
    }
    assert!(d.log().contains("not run for this project"), "{}", d.log());
    // And `status` says so, not only the log (found by the independent tester).
    let st = text(&within(&env, &["status", p], Duration::from_secs(25)).stdout);
    assert!(st.contains("git did not finish in time"), "{st}");
    let out = within(&env, &["shutdown"], Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(0));
    d.wait(Duration::from_secs(10));
}
