//! A session's life: expiry, archive, reset, history, projects apart, bad requests and unwritable
//! projects.

use super::*;

#[test]
fn an_idle_session_expires_is_archived_and_a_new_one_starts() {
    let env = Env::new();
    let root = repo(&env, "proj");
    // The TTL from the environment variable, as a service file would set it.
    let mut cmd = env.daemon_cmd(&["--checkpoint-interval", "1h"]);
    cmd.env("CCMEM_SESSION_TTL", "3s");
    let d = Daemon::spawn(&mut cmd, env.path().join("d.stderr"));
    d.wait_ready(&env.socket);
    // When the session would end, as the daemon says it: now plus what is left.
    let deadline = |env: &Env| {
        let st = env.project_status(&root);
        assert_eq!(st["live"], true, "{st}");
        Instant::now() + Duration::from_secs_f64(st["expires_in_secs"].as_f64().expect("expires_in_secs"))
    };
    env.event(&root, edit("a.rs"));
    let first = env.project_status(&root)["session"]["session_id"].as_str().unwrap().to_string();
    let before = deadline(&env);
    // Activity pushes the deadline back by the time between the two (at least the pause).
    std::thread::sleep(Duration::from_millis(500));
    env.event(&root, edit("b.rs"));
    let after = deadline(&env);
    assert!(after >= before + Duration::from_millis(400), "the deadline did not move: {:?}", after - before);

    assert!(
        wait_until(Duration::from_secs(10), || env.project_status(&root)["live"] == false),
        "the session never expired"
    );
    // Final checkpoint, archived, tracker gone.
    let v = read_state(&root);
    assert_eq!(v["session_id"], first.as_str());
    assert_eq!(
        (v["checkpoint_reason"].as_str(), v["checkpoint_type"].as_str()),
        (Some("automatic"), Some("event_driven"))
    );
    assert_eq!(v["edited_files"], json!(["b.rs", "a.rs"]));
    assert!(tracker_files(&env).is_empty());
    let h = env.ctl_json(&["history", root.to_str().unwrap()]);
    assert_eq!(h["sessions"][0]["session_id"], first.as_str());
    assert_eq!(h["sessions"][0]["ended"], "expired");
    assert_eq!(h["sessions"][0]["files_modified"], 2);
    assert!(h["live_session"].is_null());

    // The next activity starts a new session.
    env.event(&root, edit("c.rs"));
    let st = env.project_status(&root);
    let second = st["session"]["session_id"].as_str().unwrap();
    assert_ne!(second, first);
    assert!(is_session_id(second));
    assert!(second > first.as_str());
    assert!(st["session"]["files_modified"].get("a.rs").is_none(), "a new session starts empty");
    assert!(d.log().contains("session ended and archived"), "{}", d.log());
}

#[test]
fn an_expired_session_found_at_start_up_is_archived() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut d = env.start_daemon(&[]);
    env.event(&root, edit("a.rs"));
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(1100));
    let _d = env.start_daemon(&["--session-ttl", "1s"]);
    assert_eq!(env.project_status(&root)["live"], false);
    let h = env.ctl_json(&["history", root.to_str().unwrap()]);
    assert_eq!(h["sessions"][0]["ended"], "expired");
}

#[test]
fn two_projects_stay_apart() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let a = repo(&env, "alpha");
    let b = repo(&env, "beta");
    env.event(&a, edit("only-in-alpha.rs"));
    env.event(&a, json!({"kind": "command", "command": "alpha work"}));
    env.event(&b, edit("only-in-beta.rs"));
    // A path inside beta, sent with alpha's root, is refused rather than filed under alpha.
    let err = env
        .try_request("session.event", json!({"path": a, "event": edit(b.join("x.rs").to_str().unwrap())}))
        .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("outside the project"), "{err}");
    for r in [&a, &b] {
        assert_ok(&env.ctl(&["checkpoint", r.to_str().unwrap()]), "checkpoint");
    }
    assert_eq!(read_state(&a)["edited_files"], json!(["only-in-alpha.rs"]));
    assert_eq!(read_state(&b)["edited_files"], json!(["only-in-beta.rs"]));
    let sb = env.project_status(&b);
    assert!(sb["session"]["commands_executed"].as_array().unwrap().is_empty());
    assert_ne!(env.project_status(&a)["session"]["session_id"], json!(null));
    let list = env.ctl_json(&["projects"]);
    assert_eq!(list["projects"].as_array().unwrap().len(), 2);
    // The journal holds both live sessions; no tracker file is written beside it.
    assert!(tracker_files(&env).is_empty());
    let live: i64 = env.query_journal("SELECT count(*) FROM sessions WHERE ended_ms IS NULL");
    assert_eq!(live, 2);
}

#[test]
fn a_subdirectory_belongs_to_its_repository_and_a_plain_dir_is_its_own_project() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "mono");
    std::fs::create_dir_all(root.join("pkg/web")).unwrap();
    let out = env.ctl_cmd(&["watch", "--json"]).current_dir(root.join("pkg/web")).output().unwrap();
    assert_ok(&out, "watch from a subdirectory");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["root"], root.to_str().unwrap());

    let plain = env.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    env.event(&plain, edit("notes.txt"));
    assert_ok(&env.ctl(&["checkpoint", plain.to_str().unwrap()]), "checkpoint outside git");
    let v = read_state(&plain);
    assert_seed_004(&v);
    assert_eq!(
        v["git"],
        json!({"branch": "unknown", "has_uncommitted_changes": false, "staged_files": 0, "unstaged_files": 0, "untracked_files": 0, "last_commit": ""})
    );
    assert_eq!(v["activity_summary"]["commits"], 0);
}

#[test]
fn git_activity_is_counted_from_the_session_start() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    std::fs::write(root.join("old.txt"), "1\n2\n3\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "before the session"]);
    env.ctl_json(&["watch", root.to_str().unwrap()]);
    std::fs::write(root.join("old.txt"), "1\n3\nnew a\nnew b\n").unwrap();
    git(&root, &["commit", "-q", "-am", "during the session"]);
    std::fs::write(root.join("lib.rs"), "fn a() {}\n").unwrap();
    git(&root, &["add", "lib.rs"]);
    std::fs::write(root.join("scratch.txt"), "x\n").unwrap();
    std::fs::write(root.join("README.md"), "# changed\n").unwrap();
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    let v = read_state(&root);
    let g = &v["git"];
    assert_eq!(g["branch"], "main");
    assert_eq!(
        (g["staged_files"].as_u64(), g["unstaged_files"].as_u64(), g["untracked_files"].as_u64()),
        (Some(1), Some(1), Some(1)),
        "{g}"
    );
    assert_eq!(g["has_uncommitted_changes"], true);
    assert!(g["last_commit"].as_str().unwrap().ends_with(" during the session"), "{g}");
    let a = &v["activity_summary"];
    assert_eq!(a["commits"], 1, "{a}");
    // old.txt: +2 -1, lib.rs: +1, README.md: +1 -1, and scratch.txt: +1 (untracked, but
    // created this session: the checkpoint waits for the watcher to have seen it).
    assert_eq!((a["lines_added"].as_u64(), a["lines_deleted"].as_u64()), (Some(5), Some(2)), "{a}");
}

#[test]
fn reset_session_and_unwatch_archive_the_session() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    let p = root.to_str().unwrap();
    let w = env.ctl_json(&["watch", p]);
    let first = w["session_id"].as_str().unwrap().to_string();
    env.event(&root, edit("a.rs"));
    let r = env.ctl_json(&["reset-session", p]);
    assert_eq!(r["ended_session"], first.as_str());
    let second = r["new_session"].as_str().unwrap().to_string();
    assert!(second > first, "ids stay unique and ordered even within one second");
    assert!(env.project_status(&root)["session"]["files_modified"].get("a.rs").is_none());

    let u = env.ctl_json(&["unwatch", p]);
    assert_eq!(u["ended_session"], second.as_str());
    assert!(env.ctl_json(&["projects"])["projects"].as_array().unwrap().is_empty());
    assert!(tracker_files(&env).is_empty());
    let h = env.ctl_json(&["history", p]);
    let ended: Vec<_> =
        h["sessions"].as_array().unwrap().iter().map(|s| (s["session_id"].clone(), s["ended"].clone())).collect();
    assert_eq!(ended, [(json!(second), json!("unwatched")), (json!(first), json!("reset"))]);
    // Unwatching what is not watched is not an error.
    let u = env.ctl_json(&["unwatch", p]);
    assert!(u["ended_session"].is_null());
    // Text forms.
    assert!(text(&env.ctl(&["history", p]).stdout).contains("(unwatched)"));
}

#[test]
fn history_keeps_the_newest_sessions() {
    let env = Env::new();
    let _d = env.start_daemon(&["--keep-sessions", "3"]);
    let root = repo(&env, "proj");
    let p = root.to_str().unwrap();
    let mut ended = Vec::new();
    for _ in 0..5 {
        ended.push(env.ctl_json(&["reset-session", p])["new_session"].as_str().unwrap().to_string());
    }
    env.ctl_json(&["unwatch", p]);
    let h = env.ctl_json(&["history", p]);
    let ids: Vec<_> =
        h["sessions"].as_array().unwrap().iter().map(|s| s["session_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, [ended[4].clone(), ended[3].clone(), ended[2].clone()]);
}

#[test]
fn a_corrupt_tracker_is_moved_aside_and_a_fresh_session_starts() {
    let env = Env::new();
    let root = repo(&env, "proj");
    // Without the journal (with it, the session would come back from there:
    // tests/journal.rs), the tracker is all there is to restore from.
    let mut d = env.start_daemon(&["--no-journal"]);
    env.event(&root, edit("a.rs"));
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    let t = tracker_files(&env).pop().expect("tracker written at shutdown");
    std::fs::write(&t, b"{\"session_id\": \"session_2026").unwrap();
    let d = env.start_daemon(&["--no-journal"]);
    assert_eq!(env.project_status(&root)["live"], false);
    let dir = t.parent().unwrap();
    let aside: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("tracker.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "the corrupt file is kept for inspection");
    assert!(d.log().contains("corrupt session tracker moved aside"), "{}", d.log());
    env.event(&root, edit("b.rs"));
    assert_eq!(env.project_status(&root)["live"], true);
}

#[test]
fn bad_session_requests_get_clear_errors() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    let code = |m: &str, p: serde_json::Value| env.try_request(m, p).unwrap_err()["code"].as_i64().unwrap();
    assert_eq!(code("session.event", json!({"path": root, "event": {"kind": "nope"}})), -32602);
    assert_eq!(code("session.event", json!({"path": root})), -32602);
    assert_eq!(code("session.event", json!({"path": "relative", "event": edit("a")})), -32602);
    assert_eq!(code("session.event", json!({"path": root, "event": edit("../../etc/passwd")})), -32000);
    assert_eq!(
        code("session.event", json!({"path": root, "event": {"kind": "phase", "name": "x", "completion": 300}})),
        -32000
    );
    assert_eq!(code("session.checkpoint", json!({"path": root, "reason": "Stop hook"})), -32602);
    assert_eq!(code("project.watch", json!({"path": "/no/such/dir"})), -32000);
    // From the command line: exit 1 with the reason; bad JSON is caught before sending.
    let out =
        env.ctl(&["event", "--project", root.to_str().unwrap(), "{\"kind\":\"file_edited\",\"path\":\"/etc/passwd\"}"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("outside the project"), "{}", text(&out.stderr));
    let out = env.ctl(&["event", "--project", root.to_str().unwrap(), "{not json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not JSON"), "{}", text(&out.stderr));
    // Events read from stdin work too.
    let mut child = env
        .ctl_cmd(&["event", "--project", root.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(edit("from-stdin.rs").to_string().as_bytes()).unwrap();
    assert_ok(&child.wait_with_output().unwrap(), "event from stdin");
    assert!(env.project_status(&root)["session"]["files_modified"]["from-stdin.rs"].is_object());
}

/// An unwritable project directory: a warning in status and the log, no crash, and the next
/// checkpoint succeeds once it is writable again. Uses a second user when run as root (root
/// writes everywhere), plain permissions otherwise.
#[test]
fn an_unwritable_project_gives_a_warning_and_the_daemon_carries_on() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let as_root = unsafe { libc::geteuid() } == 0;
    let d = if as_root {
        // The repository stays root's: the daemon, as nobody, can read but not write it.
        env.start_daemon_as_nobody(&[])
    } else {
        let d = env.start_daemon(&[]);
        set_mode(&root, 0o555);
        d
    };
    let ctl = |args: &[&str]| {
        let mut cmd = env.ctl_cmd(args);
        if as_root {
            use std::os::unix::process::CommandExt;
            cmd.uid(NOBODY).gid(NOBODY);
        }
        cmd.output().unwrap()
    };
    let p = root.to_str().unwrap();
    let out = ctl(&["event", "--project", p, &edit("a.rs").to_string()]);
    assert_ok(&out, "event");
    let out = ctl(&["checkpoint", p]);
    assert_eq!(out.status.code(), Some(1), "a checkpoint that cannot be written is an error for the one who asked");
    assert!(text(&out.stderr).contains("cannot write the checkpoint"), "{}", text(&out.stderr));
    let out = ctl(&["status", p, "--json"]);
    assert_ok(&out, "status");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = v["project"]["warnings"].to_string();
    assert!(warnings.contains("cannot write the checkpoint"), "{v}");
    assert_eq!(v["project"]["unsaved_changes"], true);
    assert!(d.log().contains("cannot write the checkpoint"), "{}", d.log());
    // The session's state was still saved (in the journal), and the daemon still answers.
    assert!(env.query_journal::<i64>("SELECT count(*) FROM sessions WHERE state LIKE '%a.rs%'") >= 1);
    assert_ok(&ctl(&["ping"]), "ping");

    // Writable again: the next checkpoint succeeds and the warning goes.
    if as_root {
        for entry in walk(&root) {
            std::os::unix::fs::lchown(&entry, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    } else {
        set_mode(&root, 0o755);
    }
    assert_ok(&ctl(&["checkpoint", p]), "checkpoint once writable");
    assert_seed_004(&read_state(&root));
    let out = ctl(&["status", p, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["project"].get("warnings").is_none(), "{v}");
}

#[test]
fn a_second_daemon_leaves_a_project_another_keeps_alone_and_says_why() {
    // Two daemons that share nothing but the project: another runtime dir, state and home,
    // as under sudo or in a tmux with its own XDG_RUNTIME_DIR.
    let (a, b) = (Env::new(), Env::new());
    let mut da = a.start_daemon(&[]);
    let _db = b.start_daemon(&[]);
    let root = repo(&a, "shared");
    let p = root.to_str().unwrap();
    send(&a, ev(&root, "conv-a", "SessionStart", json!({"source": "startup"})));
    send(&a, ev(&root, "conv-a", "UserPromptSubmit", json!({"prompt": "fix the login bug"})));
    a.event(&root, json!({"kind": "file_edited", "path": "src/login.rs"}));
    assert_ok(&a.ctl(&["checkpoint", p]), "checkpoint by the first daemon");
    let before = std::fs::read(root.join(".claude/.project-state.json")).unwrap();

    // The second daemon is told of the project by every route: hooks, events, commands.
    for name in ["SessionStart", "UserPromptSubmit", "Stop"] {
        let out = send(&b, ev(&root, "conv-b", name, json!({"source": "startup", "prompt": "x"})));
        assert!(out.stdout.is_empty() || !text(&out.stdout).contains("Where you left off"), "{}", text(&out.stdout));
    }
    let out = b.ctl(&["checkpoint", p]);
    assert_eq!(out.status.code(), Some(1), "refused: {}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(said.contains("another ccmemd") && said.contains(&format!("pid {}", da.pid)), "{said}");
    let st = b.project_status(&root);
    assert_eq!(st["live"], false, "{st}");
    assert!(st["warnings"].to_string().contains("leaves the project alone"), "{st}");
    assert_eq!(b.ctl_json(&["projects"])["projects"], json!([]));
    assert_eq!(
        std::fs::read(root.join(".claude/.project-state.json")).unwrap(),
        before,
        "the checkpoint was overwritten"
    );
    assert!(read_state(&root).to_string().contains("src/login.rs"));
    // The lock file stays out of commits.
    assert!(git(&root, &["status", "--porcelain", "--untracked-files=all"]).trim().is_empty());

    // Once the first daemon is gone, the second may keep the project.
    assert_ok(&a.ctl(&["shutdown"]), "shutdown");
    da.wait(Duration::from_secs(10));
    send(&b, ev(&root, "conv-b", "SessionStart", json!({"source": "startup"})));
    assert_eq!(b.project_status(&root)["live"], true);
}

#[test]
fn a_claim_removed_midway_does_not_let_two_daemons_write_one_project() {
    let (a, b) = (Env::new(), Env::new());
    let _da = a.start_daemon(&[]);
    let _db = b.start_daemon(&[]);
    let root = repo(&a, "shared");
    let p = root.to_str().unwrap();
    send(&a, ev(&root, "conv-a", "SessionStart", json!({"source": "startup"})));
    assert_ok(&a.ctl(&["checkpoint", p]), "checkpoint by the first daemon");
    // What `git clean -fdx` does to it.
    std::fs::remove_file(root.join(".claude/.ccmemd.lock")).unwrap();
    send(&b, ev(&root, "conv-b", "SessionStart", json!({"source": "startup"})));
    let by_b = b.ctl(&["checkpoint", p]);
    let by_a = a.ctl(&["checkpoint", p]);
    let written = [&by_a, &by_b].iter().filter(|o| o.status.success()).count();
    assert_eq!(
        written,
        1,
        "both wrote: a: {} {}; b: {} {}",
        text(&by_a.stdout),
        text(&by_a.stderr),
        text(&by_b.stdout),
        text(&by_b.stderr)
    );
    let refused = if by_a.status.success() { &by_b } else { &by_a };
    assert!(text(&refused.stderr).contains("another ccmemd"), "{}", text(&refused.stderr));
}

/// A repository another user owns, open to this daemon's user by its permissions (a shared
/// checkout): the daemon keeps its session, as ever, but writes nothing there (no `.claude`,
/// no claim, no report, no exclude entry, no sync cookie), and `status` says why. Run as
/// root, with the daemon as a second user.
#[test]
#[cfg_attr(not(ccmem_root), ignore = "needs root to run a daemon as another user")]
fn a_repository_another_user_owns_is_left_alone_and_status_says_so() {
    let env = Env::new();
    let root = repo(&env, "shared");
    // Everyone may write in it, as in a group-writable shared checkout.
    for entry in walk(&root) {
        if entry.is_dir() {
            set_mode(&entry, 0o777);
        }
    }
    let before: Vec<_> = walk(&root);
    let _d = env.start_daemon_as_nobody(&[]);
    let ctl = |args: &[&str]| {
        use std::os::unix::process::CommandExt;
        let mut cmd = env.ctl_cmd(args);
        cmd.uid(NOBODY).gid(NOBODY);
        cmd.output().unwrap()
    };
    let p = root.to_str().unwrap();
    assert_ok(&ctl(&["event", "--project", p, &edit("a.rs").to_string()]), "event");
    let out = ctl(&["checkpoint", p]);
    assert_eq!(out.status.code(), Some(1), "nothing written in the project");
    assert!(text(&out.stderr).contains("as git's safe.directory does"), "{}", text(&out.stderr));
    // #40: nor a report, nor a project memory (the tester found both wrote there).
    let out = ctl(&["report", p]);
    assert!(!out.status.success(), "report writes nothing: {}", text(&out.stdout));
    {
        use std::os::unix::process::CommandExt;
        let mut cmd = env.ctl_cmd(&[
            "memory",
            "write",
            "--scope",
            "project",
            "--type",
            "decision",
            "--title",
            "t",
            "--content",
            "c",
        ]);
        let _ = cmd.uid(NOBODY).gid(NOBODY).current_dir(&root).output().unwrap();
    }
    let out = ctl(&["status", p, "--json"]);
    assert_ok(&out, "status");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["project"]["warnings"].to_string().contains("owned by uid 0, not by you"), "{v}");
    assert!(v["project"]["session"]["files_modified"]["a.rs"].is_object(), "the session is kept: {v}");
    assert_eq!(walk(&root), before, "not a file of ccmem's in the repository");
    assert!(!std::fs::read_to_string(root.join(".git/info/exclude")).unwrap_or_default().contains("ccmem"));
}

/// Round three's tester: in the user's own repository, a `.git` (or its `info`) another user
/// owns (git itself refuses it: "dubious ownership") still had its exclude file replaced.
/// Round five's: ccmem's files were then written with no exclude entry, for `git add -A` to
/// stage. Such a repository is left alone whole, as git leaves it.
#[test]
#[cfg_attr(not(ccmem_root), ignore = "needs root to give a directory to another user")]
fn a_git_directory_another_user_owns_gets_no_exclude_entry() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    for whose in [".git", ".git/info"] {
        let root = repo(&env, &format!("p{}", whose.len()));
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        for entry in walk(&root.join(whose)).into_iter().chain([root.join(whose)]) {
            std::os::unix::fs::lchown(&entry, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let before = std::fs::read(root.join(".git/info/exclude")).ok();
        env.event(&root, edit("a.rs"));
        let _ = env.ctl(&["checkpoint", root.to_str().unwrap()]);
        assert_eq!(std::fs::read(root.join(".git/info/exclude")).ok(), before, "{whose}: exclude untouched");
        assert!(!root.join(".claude").exists(), "{whose}: nothing of ccmem's in the repository");
        let status = text(&env.ctl(&["status", root.to_str().unwrap()]).stdout);
        assert!(status.contains(&format!("`{whose}` another user owns")), "{whose}: {status}");
    }
}

/// Found by the independent tester: in the user's own repository, a `.claude/` a co-user made
/// (the repository is group- or world-writable) let the co-user replace what ccmem wrote
/// there. Such a `.claude/` is left alone like a repository another user owns; and what
/// ccmem writes in a project with the user's prompts in it is the user's alone (0600).
#[test]
#[cfg_attr(not(ccmem_root), ignore = "needs root to make a directory as another user")]
fn a_claude_directory_a_co_user_made_is_left_alone_and_reports_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    // The user's own project: the report and the state file are 0600.
    let mine = repo(&env, "mine");
    let m = mine.to_str().unwrap();
    assert_ok(&env.ctl(&["event", "--project", m, &edit("a.rs").to_string()]), "event");
    assert_ok(&env.ctl(&["checkpoint", m]), "checkpoint");
    for f in [".claude/session-memory.md", ".claude/.project-state.json"] {
        let mode = std::fs::metadata(mine.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{f} is {mode:o}");
    }
    // A shared repository, world-writable, whose `.claude/` a co-user made.
    let shared = repo(&env, "shared");
    set_mode(&shared, 0o777);
    std::fs::create_dir(shared.join(".claude")).unwrap();
    std::os::unix::fs::lchown(shared.join(".claude"), Some(NOBODY), Some(NOBODY)).unwrap();
    let s = shared.to_str().unwrap();
    assert_ok(&env.ctl(&["event", "--project", s, &edit("a.rs").to_string()]), "event");
    let out = env.ctl(&["checkpoint", s]);
    assert_eq!(out.status.code(), Some(1), "nothing written in the project");
    assert!(text(&out.stderr).contains("whose `.claude` another user owns"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(shared.join(".claude")).unwrap().count(), 0, "nothing written in it");
}

/// #40, the tester's second round: a claim file committed in the repository (copied from
/// another project) claimed nothing, but was rewritten in place with this daemon's claim,
/// so `git status` showed it changed and a `git commit -a` would take it. It is the
/// repository's file: left as it is, and the log says why the project has no claim.
#[test]
fn a_committed_claim_file_is_left_as_the_repository_has_it() {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    let foreign = "{\"pid\":4242,\"socket\":\"/tmp/elsewhere/ccmemd.sock\",\"root\":\"0123456789abcdef\"}\n";
    std::fs::write(root.join(".claude/.ccmemd.lock"), foreign).unwrap();
    git(&root, &["add", "-f", ".claude/.ccmemd.lock"]);
    git(&root, &["commit", "-qm", "a claim from elsewhere"]);
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "Stop", json!({"last_assistant_message": "done"})));
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    assert_eq!(std::fs::read_to_string(root.join(".claude/.ccmemd.lock")).unwrap(), foreign, "left as committed");
    let changed = git(&root, &["status", "--porcelain"]);
    assert!(!changed.contains(".ccmemd.lock"), "git sees no change to it: {changed}");
    assert!(d.log().contains("is committed in the repository"), "the log says why: {}", d.log());
}
