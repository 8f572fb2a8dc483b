//! What a repository's tree can hold: FIFOs, device links, symlinked directories, overlong paths,
//! left-over temp files; and which directories are never projects.

use super::*;

#[test]
fn the_filesystem_root_the_home_directory_and_system_trees_are_never_projects() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let home = std::fs::canonicalize(&env.home).unwrap();
    std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(env.state.join("ccmem")).unwrap();
    let dirs = [
        Path::new("/").to_path_buf(),
        home.clone(),
        home.join(".claude/projects"),
        "/proc".into(),
        "/usr/lib".into(),
        "/var/tmp".into(),
        // Round three's tester: ccmem's own state dir, and a directory of keys.
        std::fs::canonicalize(env.state.join("ccmem")).unwrap(),
        home.join(".ssh"),
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
    // Files named as a crash's leftovers would be, where the link points: not swept.
    let leftovers = [".project-state.json.tmp-precious", ".project-state.json.bak.tmp-2"];
    for n in leftovers {
        std::fs::write(victim.join(n), "mine\n").unwrap();
    }
    env.event(&a, json!({"kind": "file_edited", "path": "x.rs"}));
    let out = within(&env, &["checkpoint", a.to_str().unwrap()], Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1), "the checkpoint is refused");
    assert!(text(&out.stderr).contains("is a symbolic link"), "{}", text(&out.stderr));
    for n in leftovers {
        assert!(victim.join(n).exists(), "{n} was removed through the link");
    }
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
    let mut left: Vec<String> =
        walk(&victim).iter().map(|p| p.strip_prefix(&victim).unwrap().display().to_string()).collect();
    left.sort();
    let mut was = vec!["", "exclude", "memory"];
    was.extend(leftovers);
    was.sort();
    assert_eq!(left, was, "nothing written into (or removed from) the link's target");
    assert_eq!(std::fs::read_to_string(victim.join("exclude")).unwrap(), "keep me\n");
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
    let state: i64 = env.query_journal("SELECT max(length(state)) FROM sessions");
    assert!(state < 1 << 20, "the session's state holds the junk paths: {state} bytes");
    let (rss, _) = rss_kib(d.pid);
    assert!(rss < 120 * 1024, "RSS {rss} KiB");
}

/// Found by the independent tester: a project directory named after a token put the token
/// in the checkpoint and its copy, the tracker's copies of paths, the state dir's name and
/// the daemon's log; a transcript path and a refused hook's directory likewise. What is
/// kept for a reader is redacted; the journal keeps the project's path as it is (it is how
/// the session is found again when the daemon starts), and the session is.
#[test]
fn a_token_in_a_path_reaches_no_copy_of_it() {
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    let token = "ghp_Pj7mE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zD7";
    let root = repo(&env, &format!("proj_{token}"));
    let r = root.to_str().unwrap();
    let mut start = ev(&root, "c1", "SessionStart", json!({"source": "startup"}));
    start["transcript_path"] = json!("/tmp/nonexist_AKIAQWERTYUIOPLOGGG5.jsonl");
    send(&env, start);
    send(&env, ev(&root, "c1", "UserPromptSubmit", json!({"prompt": "x"})));
    std::fs::write(root.join("TODO.md"), "- [ ] one\n- [x] two\n").unwrap();
    // A hook from a directory that is no project: refused, and logged.
    let refused = "/etc/xoxb-123456789012-1234567890123-LoG4E5fG7hJ9kL1mN3pQ5rS";
    send(&env, ev(Path::new(refused), "c1", "UserPromptSubmit", json!({"prompt": "z"})));
    assert_ok(&within(&env, &["checkpoint", r], Duration::from_secs(20)), "checkpoint");
    assert_ok(&within(&env, &["checkpoint", r], Duration::from_secs(20)), "checkpoint (the .bak)");
    assert!(root.join(".claude/.project-state.json.bak").exists());
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".claude/.project-state.json")).unwrap()).unwrap();
    assert!(state["project_root"].as_str().unwrap().ends_with("proj_[REDACTED:github-token]"), "{state}");
    // An ended session's archive too.
    assert_ok(&within(&env, &["reset-session", r], Duration::from_secs(20)), "reset-session");
    send(&env, ev(&root, "c1", "UserPromptSubmit", json!({"prompt": "again"})));
    assert_ok(&within(&env, &["checkpoint", r], Duration::from_secs(20)), "checkpoint");
    let secrets = [token, &token[4..], "AKIAQWERTYUIOPLOGGG5", "LoG4E5fG7hJ9kL1mN3pQ5rS"];
    let check = |log: &str| {
        let mut files = walk(&env.state);
        files.extend(walk(&root.join(".claude")));
        let mut trackers = 0;
        for f in &files {
            let name = f.strip_prefix(&env.state).or_else(|_| f.strip_prefix(&root)).unwrap_or(f);
            let name = name.to_string_lossy().into_owned();
            let body = std::fs::read_to_string(f).unwrap_or_default();
            let body = if f.ends_with("tracker.json") {
                trackers += 1;
                // The one raw copy: the live tracker's project_root.
                let mut v: serde_json::Value = serde_json::from_str(&body).unwrap();
                assert_eq!(v["project_root"], json!(root), "the tracker finds its project again");
                v["project_root"] = json!("");
                v.to_string()
            } else {
                body
            };
            for s in secrets {
                assert!(!name.contains(s), "{s} in the name {name}");
                assert!(!body.contains(s), "{s} in {}:\n{body}", f.display());
            }
        }
        // The journal holds the live session (and its path, to find it again): no tracker.
        assert_eq!(trackers, 0, "{files:?}");
        for s in secrets {
            assert!(!log.contains(s), "{s} in the daemon's log:\n{log}");
        }
        assert!(log.contains("proj_[REDACTED:github-token]"), "{log}");
    };
    check(&d.log());
    assert!(d.log().contains("/etc/[REDACTED:slack-token]"), "the refused hook is logged:\n{}", d.log());
    // Restarted, the daemon finds the session by the tracker's path.
    let live = env.project_status(&root)["session"]["session_id"].clone();
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));
    drop(d);
    let d = env.start_daemon(&[]);
    let st = env.project_status(&root);
    assert_eq!((&st["live"], &st["session"]["session_id"]), (&json!(true), &live), "{st}");
    check(&d.log());
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
fn a_memory_directory_that_came_with_the_repository_gets_no_derived_file_git_would_stage() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "cloned");
    // Committed memories, without ccmem's `.gitignore` beside them.
    std::fs::create_dir_all(root.join(".claude/memory")).unwrap();
    std::fs::write(
        root.join(".claude/memory/setup.md"),
        "---\ntype: hub\ntitle: Setup\ntags: [setup]\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\nRun make.\n",
    )
    .unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "memories"]);
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    let out = env
        .ctl_cmd(&[
            "memory",
            "write",
            "--type",
            "learning",
            "--title",
            "Cache",
            "--tag",
            "ci",
            "--content",
            "x",
            "--scope",
            "project",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    assert_ok(&out, "memory write");
    assert!(root.join(".claude/memory/index.json").exists(), "the index is written");
    let status = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("index.json") && !status.contains(".embedding-cache"), "{status}");
    assert!(!root.join(".claude/memory/.gitignore").exists(), "the repository's directory is left as it came");
}

#[test]
fn temp_files_left_by_a_crash_in_the_memory_directory_are_swept() {
    let env = Env::new();
    let root = repo(&env, "app");
    let dir = root.join(".claude/memory");
    std::fs::create_dir_all(dir.join(".embedding-cache")).unwrap();
    for f in
        ["index.json.tmp-11519-30", "decision-x.md.tmp-0123456789abcdef", ".embedding-cache/decision-x.json.tmp-1-2"]
    {
        std::fs::write(dir.join(f), "torn").unwrap();
    }
    // The repository's own files that look like temp files stay (round three's tester),
    // and so do committed ones with ccmem's very names (round four's).
    for f in
        ["README.tmp-notes", "graph.json.tmp-x", "userdata.tmp-abc", "plan.md.tmp-12-34", "backup.tmp-0123456789abcdef"]
    {
        std::fs::write(dir.join(f), "theirs").unwrap();
    }
    git(&root, &["add", ".claude/memory/plan.md.tmp-12-34", ".claude/memory/backup.tmp-0123456789abcdef"]);
    git(&root, &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "look-alikes"]);
    let _d = env.start_daemon(&[]);
    assert_ok(&env.ctl(&["memory", "list", "--project", root.to_str().unwrap(), "--scope", "project"]), "memory list");
    let mut left: Vec<String> = walk(&dir)
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n.contains(".tmp-"))
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "README.tmp-notes",
            "backup.tmp-0123456789abcdef",
            "graph.json.tmp-x",
            "plan.md.tmp-12-34",
            "userdata.tmp-abc"
        ]
    );
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

/// Found by the independent tester: with `.git` a link to another repository's directory,
/// the watcher's synchronization files were written (and removed) there at every query.
#[test]
fn a_git_directory_that_is_a_link_gets_no_file_of_ccmems() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let victim = env.path().join("victim-repo");
    std::fs::create_dir_all(&victim).unwrap();
    git(&victim, &["init", "-q"]);
    let root = env.path().join("linked");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(victim.join(".git"), root.join(".git")).unwrap();
    std::fs::write(root.join("a.txt"), "x").unwrap();
    let r = root.to_str().unwrap();
    assert_ok(&env.ctl(&["watch", r]), "watch");
    // What is made in the linked directory while queries run: ccmem's files there are made
    // and removed at once, so inotify (through python3's ctypes) is asked.
    let script = r#"
import ctypes, os, select, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x100 | 0x8)  # IN_CREATE | IN_CLOSE_WRITE
print("ready", flush=True)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        buf = os.read(fd, 65536)
        i = 0
        while i < len(buf):
            n = int.from_bytes(buf[i+12:i+16], "little")
            print(buf[i+16:i+16+n].rstrip(b"\0").decode(errors="replace"), flush=True)
            i += 16 + n
"#;
    let mut spy = std::process::Command::new("python3")
        .args(["-c", script, victim.join(".git").to_str().unwrap(), "6"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut out = std::io::BufReader::new(spy.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    for _ in 0..5 {
        assert_ok(&env.ctl(&["status", r]), "status");
        let _ = env.ctl(&["context", r]);
    }
    let mut made = String::new();
    std::io::Read::read_to_string(&mut out, &mut made).unwrap();
    let _ = spy.wait();
    assert!(!made.contains("ccmem"), "ccmem wrote into the linked git directory:\n{made}");
}

/// FIFOs (and links to a file of the user's) at every name ccmem opens or makes in a project (the claim, the state file and its
/// backup, the report, the exclude file, the memories' files, the project's settings, and
/// sync cookies named as earlier versions named them, with the daemon's pid): more such
/// projects than the machine has cores, all asking at once, and the daemon still answers
/// every other project within its usual time. An `open(2)` of one of them on a worker thread
/// would block it for ever.
#[test]
fn fifos_at_every_name_ccmem_opens_hang_no_daemon_thread() {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let names = [
        ".claude/.ccmemd.lock",
        ".claude/.project-state.json",
        ".claude/.project-state.json.bak",
        ".claude/session-memory.md",
        ".claude/ccmem.toml",
        ".claude/memory/config.json",
        ".claude/memory/index.json",
        ".claude/memory/graph.json",
        ".git/info/exclude",
        "package.json",
        "TODO.md",
        ".gitignore",
    ];
    let victim = env.path().join("bashrc");
    std::fs::write(&victim, "keep me\n").unwrap();
    let hostile: Vec<_> = (0..cores * 2 + 2)
        .map(|i| {
            let root = repo(&env, &format!("fifos{i}"));
            std::fs::create_dir_all(root.join(".claude/memory")).unwrap();
            std::fs::create_dir_all(root.join(".git/info")).unwrap();
            for n in names {
                let _ = std::fs::remove_file(root.join(n));
                mkfifo(&root.join(n));
            }
            // Half of them FIFOs, half links to a file of the user's (a co-user can plant
            // either in a shared repository's group-writable `.git`).
            for n in 1..=40 {
                for dir in [".git/", ""] {
                    let at = root.join(format!("{dir}.ccmem-cookie-{}-{n}", d.pid));
                    if i % 2 == 0 {
                        mkfifo(&at);
                    } else {
                        std::os::unix::fs::symlink(&victim, &at).unwrap();
                    }
                }
            }
            root
        })
        .collect();
    let clean = repo(&env, "clean");
    let start = Instant::now();
    // Every hostile project at once: hooks, a status (which syncs with the watcher through
    // a cookie), a checkpoint (the claim, state, report and exclude files).
    let busy: Vec<_> = hostile
        .iter()
        .flat_map(|root| {
            let p = root.to_str().unwrap().to_string();
            let mut start = env.ctl_cmd(&["hook"]);
            start.stdin(std::process::Stdio::piped());
            let mut start = start.stdout(std::process::Stdio::null()).spawn().unwrap();
            let payload = ev(root, "c", "SessionStart", json!({"source": "startup"})).to_string();
            std::io::Write::write_all(&mut start.stdin.take().unwrap(), payload.as_bytes()).unwrap();
            let asks = [vec!["status".to_string(), p.clone()], vec!["checkpoint".to_string(), p.clone()]];
            std::iter::once(start)
                .chain(asks.into_iter().map(|args| {
                    env.ctl_cmd(&args.iter().map(String::as_str).collect::<Vec<_>>())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .spawn()
                        .unwrap()
                }))
                .collect::<Vec<_>>()
        })
        .collect();
    // Meanwhile another project's session starts and is answered, as is a plain status.
    let c = clean.to_str().unwrap();
    let out = hook(&env, &serde_json::to_vec(&ev(&clean, "ok", "SessionStart", json!({"source": "startup"}))).unwrap());
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("ccmem"), "the clean project's context: {}", text(&out.stdout));
    assert_ok(&within(&env, &["status", c], Duration::from_secs(10)), "status of the clean project");
    assert_ok(&within(&env, &["status"], Duration::from_secs(10)), "the daemon's status");
    for mut child in busy {
        let waited = wait_until(Duration::from_secs(30), || child.try_wait().unwrap().is_some());
        assert!(waited, "a command on a hostile project never ended: a daemon thread is stuck");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n", "nothing truncated through a link");
    // A FIFO at one of ccmem's own names (the claim, the state file, the report) is
    // replaced by the file; one at a file of the project's is left as it is.
    for root in &hostile {
        for n in [".claude/ccmem.toml", ".claude/memory/config.json", ".git/info/exclude", "package.json", "TODO.md"] {
            let m = std::fs::symlink_metadata(root.join(n)).unwrap();
            assert!(std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()), "{n} was replaced");
        }
    }
    // The hostile projects' own git reads (git itself blocks on a FIFO `.gitignore`) cost
    // them one time limit each, not the daemon's other projects anything.
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());
}

/// Round eight's tester: a FIFO where git reads while it walks the work tree (a `.gitignore`)
/// held `git status` to its time limit, and the project's first SessionStart, which waited
/// for it, gave the agent no context. Git's state is read in the background now: the agent
/// gets its context at once; git's state follows (here, never: git is benched).
#[test]
fn a_fifo_where_git_reads_costs_the_agent_no_context() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "gitfifo");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    mkfifo(&root.join(".gitignore"));
    mkfifo(&root.join("sub/.gitignore"));
    // With the hook's own time limit, as an agent runs it.
    for conv in ["first", "second"] {
        let payload = serde_json::to_vec(&ev(&root, conv, "SessionStart", json!({"source": "startup"}))).unwrap();
        let out = hook_with(&env, &payload, |_| {});
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).contains("ccmem"), "{conv}: no context: {}", text(&out.stdout));
    }
}
