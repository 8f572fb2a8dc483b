//! A repository is untrusted input: trees an attacker (or an odd checkout) could hand the
//! daemon, on a real daemon. Each test would hang or flood the daemon without its fix, so
//! every client call here runs under a deadline.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs `ccmemctl args` and fails the test if it does not finish within `limit`.
fn within(env: &Env, args: &[&str], limit: Duration) -> Output {
    let mut child = env
        .ctl_cmd(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ccmemctl");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ccmemctl {args:?} did not answer within {limit:?}: the daemon is stuck");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(p: &Path) {
    ccmem_proto::files::untrusted::mkfifo(p).unwrap_or_else(|e| panic!("mkfifo {}: {e}", p.display()));
}

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
fn the_filesystem_root_the_home_directory_and_system_trees_are_never_projects() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let home = std::fs::canonicalize(&env.home).unwrap();
    std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
    let dirs = [
        Path::new("/").to_path_buf(),
        home.clone(),
        home.join(".claude/projects"),
        "/proc".into(),
        "/usr/lib".into(),
        "/var/tmp".into(),
    ];
    for dir in &dirs {
        for (name, extra) in [("SessionStart", json!({"source": "startup"})), ("Stop", json!({}))] {
            let out = send(&env, ev(dir, "c", name, extra));
            assert!(out.stdout.is_empty(), "{}: nothing to say for a non-project", dir.display());
        }
        let d = dir.to_str().unwrap();
        let out = within(&env, &["watch", d], Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(1), "watch {d}");
        assert!(text(&out.stderr).contains("is not a project"), "watch {d}: {}", text(&out.stderr));
        let st = env.ctl_json(&["status", d]);
        assert_eq!(st["project"]["live"], false, "{st}");
        assert!(st["project"]["warnings"][0].as_str().unwrap_or("").contains("is not a project"), "{st}");
    }
    assert_eq!(env.ctl_json(&["projects"])["projects"], json!([]), "no session anywhere");
    assert!(!home.join(".claude/.project-state.json").exists(), "nothing written into ~/.claude");
    // `doctor` says so, and probes nothing there.
    let out = env.ctl_cmd(&["doctor", "--json"]).current_dir(&home).output().unwrap();
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let project = checks.as_array().unwrap().iter().find(|c| c["name"] == "project").expect("a project check");
    assert_eq!(project["status"], "warn", "{project}");
    assert!(project["detail"].as_str().unwrap().contains("is not a project (your home directory)"), "{project}");
    // A directory of one's own is a project as ever.
    let mine = repo(&env, "mine");
    send(&env, ev(&mine, "c", "SessionStart", json!({"source": "startup"})));
    assert_eq!(env.project_status(&mine)["live"], true);
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
    std::fs::write(bin.join("git"), script).unwrap();
    set_mode(&bin.join("git"), 0o755);
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
fn fifos_and_links_to_devices_in_a_repository_neither_stall_nor_flood_the_daemon() {
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    let root = repo(&env, "hostile");
    std::fs::create_dir_all(root.join("specs/001")).unwrap();
    mkfifo(&root.join("specs/001/tasks.md"));
    std::os::unix::fs::symlink("/dev/zero", root.join("package.json")).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join(".claude/ccmem.toml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("TODO.md")).unwrap();
    // Ignore files the watcher's walk reads: a link to a device, a FIFO.
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("sub/.gitignore")).unwrap();
    mkfifo(&root.join("sub/deeper/.ignore"));
    let fifo_transcript = env.path().join("transcript.jsonl");
    mkfifo(&fifo_transcript);

    let p = root.to_str().unwrap();
    let limit = Duration::from_secs(10);
    for (name, extra) in [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": "go"})),
        (
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("package.json"), "old_string": "a", "new_string": "b"}, "tool_response": {}}),
        ),
        ("Stop", json!({})),
    ] {
        let mut payload = ev(&root, "c", name, extra);
        payload["transcript_path"] = json!(fifo_transcript);
        let out = send(&env, payload);
        assert_eq!(out.status.code(), Some(0));
    }
    for args in [vec!["status", p], vec!["checkpoint", p], vec!["context", p], vec!["report", p, "--stdout"]] {
        let out = within(&env, &args, limit);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
    }
    assert!(
        wait_until(Duration::from_secs(10), || env.project_status(&root)["watch"]["ready"] == true),
        "the watcher's walk finished"
    );
    let (rss, _) = rss_kib(d.pid);
    assert!(rss < 200 * 1024, "the daemon read a device: RSS {rss} KiB");
    let out = within(&env, &["shutdown"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "shutdown: {}", text(&out.stderr));
    d.wait(Duration::from_secs(10));

    // Restoring the session at start-up reads the same files again.
    let mut d = env.start_daemon(&[]);
    let out = within(&env, &["status", p], limit);
    assert_eq!(out.status.code(), Some(0));
    let (rss, _) = rss_kib(d.pid);
    assert!(rss < 200 * 1024, "the restored session read a device: RSS {rss} KiB");
    let out = within(&env, &["shutdown"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    d.wait(Duration::from_secs(10));
}

#[test]
fn nothing_is_written_through_a_symlinked_directory() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let victim = env.path().join("victim");
    std::fs::create_dir_all(victim.join("memory")).unwrap();
    std::fs::write(victim.join("exclude"), "keep me\n").unwrap();
    // `.claude` a link to another project's directory.
    let a = repo(&env, "a");
    std::os::unix::fs::symlink(&victim, a.join(".claude")).unwrap();
    env.event(&a, json!({"kind": "file_edited", "path": "x.rs"}));
    let out = within(&env, &["checkpoint", a.to_str().unwrap()], Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1), "the checkpoint is refused");
    assert!(text(&out.stderr).contains("is a symbolic link"), "{}", text(&out.stderr));
    // `.claude/memory` a link, and `.git/info` a link.
    let b = repo(&env, "b");
    std::fs::create_dir_all(b.join(".claude")).unwrap();
    std::os::unix::fs::symlink(victim.join("memory"), b.join(".claude/memory")).unwrap();
    std::fs::remove_dir_all(b.join(".git/info")).unwrap();
    std::os::unix::fs::symlink(&victim, b.join(".git/info")).unwrap();
    let out = env.ctl(&[
        "memory",
        "write",
        "--project",
        b.to_str().unwrap(),
        "--scope",
        "project",
        "--type",
        "learning",
        "--title",
        "x",
        "--tag",
        "t",
        "--content",
        "y",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("is a symbolic link"), "{}", text(&out.stderr));
    env.event(&b, json!({"kind": "file_edited", "path": "x.rs"}));
    let out = within(&env, &["checkpoint", b.to_str().unwrap()], Duration::from_secs(10));
    assert!(
        text(&out.stdout).contains("is a symbolic link") || text(&out.stderr).contains("is a symbolic link"),
        "the exclude is refused: {} {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The other directory is as it was.
    let left: Vec<String> =
        walk(&victim).iter().map(|p| p.strip_prefix(&victim).unwrap().display().to_string()).collect();
    assert_eq!(left, ["", "exclude", "memory"], "nothing written into the link's target");
    assert_eq!(std::fs::read_to_string(victim.join("exclude")).unwrap(), "keep me\n");
}

#[test]
fn a_repositorys_git_config_runs_nothing() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let marker = env.path().join("ran");
    let hook = env.path().join("fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    set_mode(&hook, 0o755);
    git(&root, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    // A filter driver that every file goes through, as `git diff` compares the work tree.
    git(&root, &["config", "filter.evil.clean", &format!("{} && cat", hook.display())]);
    // One defined in an included file, and one whose name `-c` cannot express.
    let included = env.path().join("included.cfg");
    std::fs::write(&included, format!("[filter \"inc\"]\n\tclean = {} && cat\n", hook.display())).unwrap();
    git(&root, &["config", "include.path", included.to_str().unwrap()]);
    git(&root, &["config", "filter.x=y.clean", &format!("{} && cat", hook.display())]);
    std::fs::write(root.join(".gitattributes"), "* filter=evil\n*.txt filter=inc\n*.dat filter=x=y\n").unwrap();
    std::fs::write(root.join("notes.txt"), "n\n").unwrap();
    std::fs::write(root.join("blob.dat"), "d\n").unwrap();
    git(
        &root,
        &[
            "-c",
            "filter.evil.clean=cat",
            "-c",
            "filter.inc.clean=cat",
            "-c",
            "filter.x=y.clean=cat",
            "add",
            "notes.txt",
            "blob.dat",
        ],
    );
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    std::fs::write(root.join("blob.dat"), "changed\n").unwrap();
    // Setting the files up ran the `x=y` driver here (`-c` cannot name it): only what ccmem
    // does from now on counts.
    let _ = std::fs::remove_file(&marker);
    std::fs::write(root.join("README.md"), "# changed\n").unwrap();
    std::fs::write(root.join("a.rs"), "x").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "a.rs"}));
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_ne!(read_state(&root)["git"]["branch"], "", "a checkpoint was written");
    assert!(!marker.exists(), "a command from the repository's git config was executed");

    // A driver in `.git/config.worktree` (which `git config --local` does not list), in a
    // repository git does run for.
    let wt = repo(&env, "wt");
    git(&wt, &["config", "extensions.worktreeConfig", "true"]);
    git(&wt, &["config", "--worktree", "filter.wt.clean", &format!("{} && cat", hook.display())]);
    std::fs::write(wt.join(".gitattributes"), "*.md filter=wt\n").unwrap();
    env.event(&wt, json!({"kind": "file_edited", "path": "README.md"}));
    std::fs::write(wt.join("README.md"), "# changed\n").unwrap();
    assert_ok(&within(&env, &["checkpoint", wt.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_eq!(read_state(&wt)["git"]["branch"], "main", "git ran for it");
    assert!(!marker.exists(), "a filter from the repository's config.worktree was executed");
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

#[test]
fn overlong_paths_are_refused_where_they_enter() {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    for n in 0..20 {
        let path = root.join(format!("{n}{}", "x".repeat(900_000)));
        let payload = ev(
            &root,
            "c",
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}, "tool_response": {}}),
        );
        // Straight to the socket: `ccmemctl hook` shortens long strings, another client need not.
        env.request("hook", payload);
    }
    // A prompt, a conversation id and a transcript path of 300 KB each, too (one frame).
    let mut junk = ev(&root, "c", "UserPromptSubmit", json!({"prompt": "x".repeat(300_000)}));
    junk["session_id"] = json!("i".repeat(300_000));
    junk["transcript_path"] = json!(format!("/{}", "t".repeat(300_000)));
    for n in 0..5 {
        junk["session_id"] = json!(format!("{n}{}", "i".repeat(300_000)));
        env.request("hook", junk.clone());
    }
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(20)), "checkpoint");
    let tracker: u64 = walk(&env.state)
        .iter()
        .filter(|p| p.ends_with("tracker.json"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(tracker < 1 << 20, "tracker.json holds the junk paths: {tracker} bytes");
    let (rss, _) = rss_kib(d.pid);
    assert!(rss < 120 * 1024, "RSS {rss} KiB");
}

#[test]
fn the_exclude_entries_come_before_the_first_state_file() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    env.event(&root, json!({"kind": "file_edited", "path": "a.rs"}));
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    let at = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.mtime(), m.mtime_nsec())
    };
    assert!(
        at(&root.join(".git/info/exclude")) <= at(&root.join(".claude/.project-state.json")),
        "an agent's `git add -A` between the two would stage the state files"
    );
    assert_eq!(git(&root, &["status", "--porcelain", "--untracked-files=all", ".claude"]), "");
}

#[test]
fn temp_files_left_by_a_crash_in_the_memory_directory_are_swept() {
    let env = Env::new();
    let root = repo(&env, "app");
    let dir = root.join(".claude/memory");
    std::fs::create_dir_all(dir.join(".embedding-cache")).unwrap();
    for f in ["index.json.tmp-11519-30", "decision-x.md.tmp-11519-31", ".embedding-cache/decision-x.json.tmp-1-2"] {
        std::fs::write(dir.join(f), "torn").unwrap();
    }
    let _d = env.start_daemon(&[]);
    assert_ok(&env.ctl(&["memory", "list", "--project", root.to_str().unwrap(), "--scope", "project"]), "memory list");
    let left: Vec<String> =
        walk(&dir).iter().map(|p| p.display().to_string()).filter(|p| p.contains(".tmp-")).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn secrets_in_names_bare_passwords_and_runner_output_are_redacted() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let file = root.join(format!("src/AKIAIOSFODNN7EXAMPLE_{token}.txt"));
    send(
        &env,
        ev(
            &root,
            "c",
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": file, "content": "x"}, "tool_response": {}}),
        ),
    );
    env.event(
        &root,
        json!({"kind": "note", "text": "db: password=CorrectHorseBatteryStaple and db_password: SuperSecretValue"}),
    );
    let mut child = env
        .ctl_cmd(&["test-report", root.to_str().unwrap(), "--framework", "pytest"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let out = format!("F\n=== FAILURES ===\n___ test_login ___\n>       assert token == \"{token}\"\nE       AssertionError: got {token}\ntest_app.py:3: AssertionError\n=== short test summary info ===\nFAILED test_app.py::test_login - AssertionError: got {token}\n1 failed in 0.01s\n");
        child.stdin.take().unwrap().write_all(out.as_bytes()).unwrap();
    }
    let shown = child.wait_with_output().unwrap();
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    let everything = [
        text(&shown.stdout),
        env.project_status(&root).to_string(),
        text(&env.ctl(&["context", root.to_str().unwrap()]).stdout),
        std::fs::read_to_string(root.join(".claude/.project-state.json")).unwrap(),
        std::fs::read_to_string(root.join(".claude/session-memory.md")).unwrap(),
        walk(&env.state).iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect(),
    ];
    for (i, t) in everything.iter().enumerate() {
        for secret in [token, "AKIAIOSFODNN7EXAMPLE", "CorrectHorseBatteryStaple", "SuperSecretValue"] {
            assert!(!t.contains(secret), "{secret} in place {i}: {t}");
        }
    }
}

#[test]
fn reads_never_leave_the_project_and_a_foreign_git_directory_is_left_alone() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    // What lies outside: a task list, a manifest, a memory, another repository.
    let outside = env.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("todo.md"), "- [ ] OUTSIDE_TASK\n").unwrap();
    std::fs::write(outside.join("package.json"), r#"{"name": "OUTSIDE_NAME"}"#).unwrap();
    std::fs::write(outside.join("id.md"), "---\ntitle: OUTSIDE_MEMORY\ntype: learning\n---\nOUTSIDE_MEMORY\n").unwrap();
    std::fs::write(outside.join("util.rs"), "// FIXME: OUTSIDE_COMMENT\n").unwrap();
    let root = repo(&env, "app");
    std::fs::create_dir_all(root.join(".claude/memory")).unwrap();
    std::os::unix::fs::symlink(outside.join("todo.md"), root.join("TODO.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("package.json"), root.join("package.json")).unwrap();
    std::os::unix::fs::symlink(outside.join("id.md"), root.join(".claude/memory/learning-id.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("util.rs"), root.join("util.rs")).unwrap();
    send(
        &env,
        ev(
            &root,
            "c1",
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("util.rs")}, "tool_response": {}}),
        ),
    );
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    let seen = [
        env.project_status(&root).to_string(),
        text(&env.ctl(&["context", root.to_str().unwrap()]).stdout),
        std::fs::read_to_string(root.join(".claude/session-memory.md")).unwrap(),
        text(&env.ctl(&["memory", "list", "--project", root.to_str().unwrap()]).stdout),
    ];
    for (i, t) in seen.iter().enumerate() {
        for marker in ["OUTSIDE_TASK", "OUTSIDE_NAME", "OUTSIDE_MEMORY", "OUTSIDE_COMMENT"] {
            assert!(!t.contains(marker), "{marker} read through a link, in place {i}: {t}");
        }
    }

    // A `.git` file naming another repository's git directory: that repository's exclude
    // is not touched. A real worktree's shared exclude is.
    let victim = repo(&env, "victim");
    let before = std::fs::read_to_string(victim.join(".git/info/exclude")).unwrap();
    let fake = env.path().join("fake");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join(".git"), format!("gitdir: {}\n", victim.join(".git").display())).unwrap();
    env.event(&fake, json!({"kind": "file_edited", "path": "x.rs"}));
    let out = within(&env, &["checkpoint", fake.to_str().unwrap()], Duration::from_secs(10));
    assert!(text(&out.stderr).contains("does not change it"), "{} {}", text(&out.stdout), text(&out.stderr));
    assert_eq!(std::fs::read_to_string(victim.join(".git/info/exclude")).unwrap(), before);
    // An exclude file that is a link out (to a key) is neither read nor replaced.
    let linked = repo(&env, "linked");
    let key = env.path().join("id_rsa");
    std::fs::write(&key, "PRIVATE KEY\n").unwrap();
    std::fs::remove_file(linked.join(".git/info/exclude")).unwrap();
    std::os::unix::fs::symlink(&key, linked.join(".git/info/exclude")).unwrap();
    env.event(&linked, json!({"kind": "file_edited", "path": "x.rs"}));
    let _ = within(&env, &["checkpoint", linked.to_str().unwrap()], Duration::from_secs(10));
    assert!(std::fs::symlink_metadata(linked.join(".git/info/exclude")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "PRIVATE KEY\n");
    // Nor one laid out to look like a worktree of it.
    let fake2 = env.path().join("fake2");
    std::fs::create_dir_all(fake2.join("fakewt")).unwrap();
    std::fs::write(fake2.join(".git"), "gitdir: fakewt\n").unwrap();
    std::fs::write(fake2.join("fakewt/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(fake2.join("fakewt/commondir"), format!("{}\n", victim.join(".git").display())).unwrap();
    env.event(&fake2, json!({"kind": "file_edited", "path": "x.rs"}));
    let _ = within(&env, &["checkpoint", fake2.to_str().unwrap()], Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(victim.join(".git/info/exclude")).unwrap(), before, "through a fake worktree");
    let tree = env.path().join("tree");
    git(&root, &["worktree", "add", "-q", tree.to_str().unwrap()]);
    env.event(&tree, json!({"kind": "file_edited", "path": "x.rs"}));
    let out = within(&env, &["checkpoint", tree.to_str().unwrap()], Duration::from_secs(10));
    assert_ok(&out, "worktree checkpoint");
    assert!(!text(&out.stderr).contains("does not change it"), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(root.join(".git/info/exclude")).unwrap().contains(".project-state.json"));
}

#[test]
fn hooks_install_for_a_project_never_writes_through_a_link() {
    let env = Env::new();
    let home_settings = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(home_settings.parent().unwrap()).unwrap();
    std::fs::write(&home_settings, "{\"model\": \"mine\"}\n").unwrap();
    // A cloned repository whose `.claude` is a link to the user's own `~/.claude`, and one
    // whose settings file is a link out of the project.
    let a = repo(&env, "a");
    std::os::unix::fs::symlink(env.home.join(".claude"), a.join(".claude")).unwrap();
    let b = repo(&env, "b");
    std::fs::create_dir_all(b.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&home_settings, b.join(".claude/settings.json")).unwrap();
    for root in [&a, &b] {
        let out = env.ctl_cmd(&["hooks", "install", "--project"]).current_dir(root).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        assert!(text(&out.stderr).contains("leads out of the project"), "{}", text(&out.stderr));
    }
    assert_eq!(std::fs::read_to_string(&home_settings).unwrap(), "{\"model\": \"mine\"}\n");
    assert!(!env.home.join(".claude/settings.json.ccmem-backup").exists());
    // A plain project is set up as ever.
    let c = repo(&env, "c");
    let out = env.ctl_cmd(&["hooks", "install", "--project"]).current_dir(&c).output().unwrap();
    assert_ok(&out, "install --project");
    assert!(std::fs::read_to_string(c.join(".claude/settings.json")).unwrap().contains("SessionStart"));
}

#[test]
fn a_partial_clone_with_a_missing_object_fetches_nothing_and_runs_nothing() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let marker = env.path().join("ran");
    let root = repo(&env, "app");
    std::fs::write(root.join("a.txt"), "hi\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "a"]);
    let blob = git(&root, &["rev-parse", "HEAD:a.txt"]);
    let blob = blob.trim();
    std::fs::remove_file(root.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..]))).unwrap();
    for (k, v) in [
        ("core.repositoryformatversion", "1".to_string()),
        ("extensions.partialClone", "origin".into()),
        ("remote.origin.promisor", "true".into()),
        ("remote.origin.url", "/nonexistent".into()),
        ("remote.origin.uploadpack", format!("touch '{}'; false", marker.display())),
    ] {
        git(&root, &["config", k, &v]);
    }
    std::fs::write(root.join("a.txt"), "changed\n").unwrap();
    env.event(&root, json!({"kind": "file_edited", "path": "a.txt"}));
    assert_ok(&within(&env, &["checkpoint", root.to_str().unwrap()], Duration::from_secs(20)), "checkpoint");
    assert!(!marker.exists(), "a lazy fetch ran the repository's upload-pack command");
}

#[test]
fn the_daemon_leaves_the_directory_it_was_started_from_and_relative_path_entries() {
    let env = Env::new();
    // Started from inside a hostile repository whose `node_modules/.bin/git` a relative PATH
    // entry would find.
    let evil = repo(&env, "evil");
    let marker = env.path().join("fake-git-ran");
    let bin = evil.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("git"), format!("#!/bin/sh\ntouch '{}'\nexec /usr/bin/git \"$@\"\n", marker.display()))
        .unwrap();
    set_mode(&bin.join("git"), 0o755);
    let path = format!("node_modules/.bin::{}", std::env::var("PATH").unwrap_or_default());
    let mut cmd = env.daemon_cmd(&[]);
    cmd.current_dir(&evil).env("PATH", path);
    let d = Daemon::spawn(&mut cmd, env.path().join("cwd.stderr"));
    d.wait_ready(&env.socket);
    assert_eq!(std::fs::read_link(format!("/proc/{}/cwd", d.pid)).unwrap(), Path::new("/"));
    let other = repo(&env, "other");
    env.event(&other, json!({"kind": "file_edited", "path": "x.rs"}));
    assert_ok(&within(&env, &["checkpoint", other.to_str().unwrap()], Duration::from_secs(10)), "checkpoint");
    assert_eq!(read_state(&other)["git"]["branch"], "main", "git ran");
    assert!(!marker.exists(), "the project's own git ran");
}

#[test]
fn a_linked_embedding_cache_and_a_project_memory_config_reach_nothing_outside() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    // The user's own files, which the repository's links point at.
    let victim = env.home.join(".claude");
    std::fs::create_dir_all(&victim).unwrap();
    for f in ["settings.json", "keybindings.json"] {
        std::fs::write(victim.join(f), "{\"mine\": true}\n").unwrap();
    }
    let root = repo(&env, "app");
    let mem = root.join(".claude/memory");
    std::fs::create_dir_all(&mem).unwrap();
    std::os::unix::fs::symlink(&victim, mem.join(".embedding-cache")).unwrap();
    // A server the repository chose, and an enterprise scope aimed at another directory.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let elsewhere = env.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        mem.join("config.json"),
        json!({"embedding": {"provider": "ollama", "endpoint": format!("http://127.0.0.1:{port}"), "model": "m"},
               "scopes": {"enterprise": {"enabled": true, "path": elsewhere}}})
        .to_string(),
    )
    .unwrap();
    let r = root.to_str().unwrap();
    let m = |args: &[&str]| {
        let mut a = vec!["memory"];
        a.extend(args);
        a.extend(["--project", r]);
        env.ctl(&a)
    };
    let out = m(&[
        "write",
        "--scope",
        "project",
        "--type",
        "learning",
        "--title",
        "settings",
        "--tag",
        "t",
        "--content",
        "x",
    ]);
    assert_ok(&out, "memory write");
    let _ = m(&["search", "settings"]);
    let _ = m(&["update", "settings", "--append", "more"]);
    let _ = m(&["health", "--fix"]);
    let _ = m(&["delete", "settings"]);
    let out =
        m(&["write", "--scope", "enterprise", "--type", "learning", "--title", "e", "--tag", "t", "--content", "x"]);
    assert_eq!(out.status.code(), Some(1), "the enterprise scope stays off: {}", text(&out.stdout));
    for f in ["settings.json", "keybindings.json"] {
        assert_eq!(
            std::fs::read_to_string(victim.join(f)).unwrap(),
            "{\"mine\": true}\n",
            "{f} changed through the link"
        );
    }
    assert_eq!(walk(&elsewhere).len(), 1, "nothing written into the enterprise path");
    assert!(listener.accept().is_err(), "the repository's embedding server was contacted");
}
