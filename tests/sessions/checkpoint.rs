//! Checkpoints: seed 004's file, its size, restarts, kill -9 at any moment, periodic writes, shutdown.

use super::*;

#[test]
fn a_checkpoint_follows_seed_004_keeps_a_backup_and_stays_out_of_git() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"my-app\"\n").unwrap();
    let out = env.ctl_cmd(&["watch"]).current_dir(root.join(".")).output().unwrap();
    assert_ok(&out, "watch");
    env.event(&root, json!({"kind": "command", "command": "add OAuth login to the API", "workflow": "complete_system", "status": "completed", "duration_seconds": 42}));
    env.event(&root, json!({"kind": "file_edited", "path": root.join("src/auth/login.rs"), "summary": "added login", "created": true}));
    env.event(&root, json!({"kind": "file_edited", "path": "src/auth/login.rs", "summary": "fixed redirect"}));
    env.event(
        &root,
        json!({"kind": "todos", "todos": [
        {"content": "Add login", "status": "completed", "activeForm": "Adding login"},
        {"content": "Add logout", "status": "in_progress", "activeForm": "Adding logout"}]}),
    );
    env.event(&root, json!({"kind": "phase", "name": "Phase 2: Auth", "completion": 50}));

    let out = env.ctl(&["checkpoint", root.to_str().unwrap(), "--note", "cookie domain is wrong in dev"]);
    assert_ok(&out, "checkpoint");
    let first = std::fs::read(root.join(".claude/.project-state.json")).unwrap();
    let v = read_state(&root);
    assert_seed_004(&v);
    assert_eq!(v["project_name"], "my-app");
    assert_eq!(v["project_root"], root.to_str().unwrap());
    assert_eq!(v["checkpoint_reason"], "manual");
    assert_eq!(v["checkpoint_type"], "user_requested");
    assert_eq!(v["edited_files"], json!(["src/auth/login.rs"]));
    assert_eq!(v["todos"][1]["activeForm"], "Adding logout");
    assert_eq!(v["phase"]["name"], "Phase 2: Auth");
    assert_eq!(v["context_notes"], "cookie domain is wrong in dev");
    assert_eq!(v["activity_summary"]["files_created"], 1);
    assert_eq!(v["git"]["branch"], "main");
    assert!(v["git"]["last_commit"].as_str().unwrap().ends_with(" initial commit"));

    // The second checkpoint keeps the first as .bak.
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap(), "--reason", "phase_complete"]), "second checkpoint");
    assert_eq!(std::fs::read(root.join(".claude/.project-state.json.bak")).unwrap(), first);
    assert_eq!(read_state(&root)["checkpoint_reason"], "phase_complete");

    // The daemon's files never show up as changes to commit; the user's .gitignore is untouched.
    let porcelain = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!porcelain.contains(".claude"), "{porcelain}");
    assert!(!root.join(".gitignore").exists());
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches(".claude/.project-state.json\n").count(), 1, "added once: {exclude}");

    // The full tracker (seed 001) is in the journal, as the session's state; no file beside it.
    assert!(tracker_files(&env).is_empty());
    let t: String = env.query_journal("SELECT state FROM sessions");
    let t: serde_json::Value = serde_json::from_str(&t).unwrap();
    for f in [
        "session_id",
        "created_at",
        "last_updated",
        "commands_executed",
        "files_modified",
        "patterns_detected",
        "workflows_used",
        "context_snapshot",
        "statistics",
    ] {
        assert!(t.get(f).is_some(), "tracker lacks {f}: {t}");
    }
    let f = &t["files_modified"]["src/auth/login.rs"];
    assert_eq!(f["modification_count"], 2);
    assert_eq!(f["changes_summary"], "added login, fixed redirect");
    assert_eq!(t["commands_executed"][0]["workflow"], "complete_system");
    assert_eq!(t["workflows_used"]["complete_system"], 1);
    assert_eq!(t["context_snapshot"]["active_task"], "Add logout");
    assert_eq!(t["statistics"]["total_commands"], 1);
    let patterns = t["patterns_detected"].as_array().unwrap();
    assert!(patterns.contains(&json!("authentication")) && patterns.contains(&json!("src/auth/*")), "{patterns:?}");

    // And people see seed 001's block.
    let out = env.ctl(&["status", root.to_str().unwrap()]);
    let s = text(&out.stdout);
    for want in [
        "SESSION CONTEXT",
        "Current Focus: Add logout",
        "`src/auth/login.rs` (2 changes)",
        "Next Steps",
        "Patterns Detected",
    ] {
        assert!(s.contains(want), "status lacks {want:?}:\n{s}");
    }
}

#[test]
fn the_checkpoint_stays_under_10_kb_after_500_files_and_100_todos() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "big");
    let mut c = env.raw();
    let mut batch = String::new();
    for i in 0..500 {
        let e = json!({"jsonrpc": "2.0", "method": "session.event", "params": {"path": root, "event": edit(&format!("src/area_{}/module_{i:03}/some_fairly_long_file_name_{i}.rs", i % 7))}});
        batch.push_str(&format!("{e}\n"));
    }
    c.send(batch.as_bytes());
    // On one connection, frames are handled in order: this request's answer comes after all
    // 500 notifications reached the project.
    let done = c.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "session.event", "params": {"path": root, "event": edit("last.rs")}}).to_string());
    assert_eq!(done["result"], json!({}));
    let todos: Vec<_> = (0..100)
        .map(|i| {
            let status = ["pending", "in_progress", "completed"][i % 3];
            json!({"content": format!("Task {i}: {}", "describe the work in detail ".repeat(10)), "status": status, "activeForm": format!("Working on {i}")})
        })
        .collect();
    env.event(&root, json!({"kind": "todos", "todos": todos}));
    for i in 0..30 {
        env.event(&root, json!({"kind": "warning", "text": format!("warning {i}: {}", "w".repeat(800))}));
    }
    env.event(&root, json!({"kind": "note", "text": "n".repeat(5000)}));
    let st = env.project_status(&root);
    assert_eq!(st["session"]["files_modified"].as_object().unwrap().len(), 501);

    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    let bytes = std::fs::read(root.join(".claude/.project-state.json")).unwrap();
    assert!(bytes.len() < 10 * 1024, "checkpoint is {} bytes", bytes.len());
    let v = read_state(&root);
    assert_seed_004(&v);
    assert!(!v["edited_files"].as_array().unwrap().is_empty());
    assert_eq!(v["edited_files"][0], "last.rs", "most recent first");
    assert_eq!(v["edited_files"][1], "src/area_2/module_499/some_fairly_long_file_name_499.rs");
}

#[test]
fn a_restart_continues_the_same_session() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut d = env.start_daemon(&[]);
    env.event(&root, edit("a.rs"));
    env.event(&root, json!({"kind": "command", "command": "refactor the parser"}));
    let id = env.project_status(&root)["session"]["session_id"].as_str().unwrap().to_string();
    // A graceful stop writes the final checkpoint.
    assert_eq!(d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10)).code(), Some(0));
    assert_eq!(read_state(&root)["session_id"], id.as_str());
    assert_eq!(read_state(&root)["checkpoint_type"], "event_driven");

    let _d = env.start_daemon(&[]);
    let st = env.project_status(&root);
    assert_eq!(st["live"], true, "restored at start-up, before any activity");
    assert_eq!(st["session"]["session_id"], id.as_str());
    assert_eq!(st["session"]["files_modified"]["a.rs"]["modification_count"], 1);
    assert_eq!(st["session"]["commands_executed"][0]["command"], "refactor the parser");
    let list = env.ctl_json(&["projects"]);
    assert_eq!(list["projects"][0]["session_id"], id.as_str());
}

#[test]
fn kill_9_loses_nothing_that_was_checkpointed() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut d = env.start_daemon(&[]);
    env.event(&root, edit("kept.rs"));
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    env.event(&root, edit("not-yet-checkpointed.rs"));
    let id = read_state(&root)["session_id"].as_str().unwrap().to_string();
    d.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
    let _d = env.start_daemon(&[]);
    let st = env.project_status(&root);
    assert_eq!(st["session"]["session_id"], id.as_str());
    assert!(st["session"]["files_modified"]["kept.rs"].is_object(), "{st}");
}

#[test]
fn periodic_checkpoints_write_only_when_something_changed() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut cmd = env.daemon_cmd(&["--checkpoint-interval", "200ms"]);
    cmd.env("RUST_LOG", "info,ccmem_daemon::project=debug");
    let d = Daemon::spawn(&mut cmd, env.path().join("periodic.stderr"));
    d.wait_ready(&env.socket);
    env.event(&root, edit("a.rs"));
    let file = root.join(".claude/.project-state.json");
    assert!(wait_until(Duration::from_secs(5), || file.exists()), "no periodic checkpoint");
    let v = read_state(&root);
    assert_eq!((v["checkpoint_reason"].as_str(), v["checkpoint_type"].as_str()), (Some("automatic"), Some("periodic")));
    let ino = std::fs::metadata(&file).unwrap().ino();
    // Three ticks that found nothing changed (the daemon says so), and no write.
    let idle_ticks = |d: &Daemon| d.log().matches("periodic tick: nothing changed").count();
    let seen = idle_ticks(&d);
    assert!(wait_until(Duration::from_secs(20), || idle_ticks(&d) >= seen + 3), "no idle ticks: {}", d.log());
    assert_eq!(std::fs::metadata(&file).unwrap().ino(), ino, "nothing changed, so nothing may be written");
    env.event(&root, edit("b.rs"));
    assert!(
        wait_until(Duration::from_secs(5), || std::fs::metadata(&file).map(|m| m.ino() != ino).unwrap_or(false)),
        "a change must be checkpointed by the next tick"
    );
    assert_eq!(read_state(&root)["edited_files"][0], "b.rs");
}

/// `kill -9` at random moments while events and checkpoints stream in: the checkpoint, its
/// backup and the tracker are always whole, and the restarted daemon continues the session.
/// `CCMEM_CRASH_ROUNDS` sets the number of rounds (default 20).
#[test]
fn kill_9_during_a_checkpoint_and_memory_storm_never_leaves_a_torn_file() {
    let rounds: u32 = std::env::var("CCMEM_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut session_id: Option<String> = None;
    let acked: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    for round in 0..rounds {
        let mut d = env.start_daemon(&[]);
        if let Some(id) = &session_id {
            assert_eq!(
                env.project_status(&root)["session"]["session_id"],
                id.as_str(),
                "round {round}: session not restored"
            );
        }
        all_acknowledged_memories_listed(&env, &root, &acked.lock().unwrap(), round);
        let socket = env.socket.clone();
        let r = root.clone();
        // Each writer ends when the kill closes its connection; an error reply before that
        // is a failure (and a torn reply panics the thread, which the join reports).
        let storm = std::thread::spawn(move || -> Result<(), String> {
            let mut c = Raw::connect(&socket);
            for i in 0.. {
                let ev = json!({"jsonrpc": "2.0", "method": "session.event", "params": {"path": r, "event": {"kind": "file_edited", "path": format!("f{}.rs", i % 80)}}});
                let ck = json!({"jsonrpc": "2.0", "id": i, "method": "session.checkpoint", "params": {"path": r}});
                if c.stream.write_all(format!("{ev}\n{ck}\n").as_bytes()).is_err() {
                    return Ok(());
                }
                match c.recv() {
                    None => return Ok(()),
                    Some(reply) if reply.get("error").is_some() => return Err(format!("checkpoint {i}: {reply}")),
                    Some(_) => {}
                }
            }
            Ok(())
        });
        // Memories written (and linked) at the same time: each one acknowledged must survive.
        let acked_before = acked.lock().unwrap().len();
        let (socket, r, acked2) = (env.socket.clone(), root.clone(), acked.clone());
        let memories = std::thread::spawn(move || -> Result<(), String> {
            let mut c = Raw::connect(&socket);
            for i in 0.. {
                let w = json!({"jsonrpc": "2.0", "id": i, "method": "memory.write", "params": {"path": r, "type": "learning",
                    "title": format!("Crash {round} note {i}"), "tags": ["crash"], "content": "x ".repeat(200)}});
                if c.stream.write_all(format!("{w}\n").as_bytes()).is_err() {
                    return Ok(());
                }
                let Some(reply) = c.recv() else { return Ok(()) };
                let Some(slug) = reply["result"]["memory"]["slug"].as_str() else {
                    return Err(format!("memory.write {i}: {reply}"));
                };
                let prev = acked2.lock().unwrap().last().cloned();
                acked2.lock().unwrap().push(slug.to_string());
                if let Some(prev) = prev.filter(|_| i % 3 == 0) {
                    let l = json!({"jsonrpc": "2.0", "id": i, "method": "memory.link", "params": {"path": r, "source": slug, "target": prev}});
                    if c.stream.write_all(format!("{l}\n").as_bytes()).is_err() {
                        return Ok(());
                    }
                    match c.recv() {
                        None => return Ok(()),
                        Some(reply) if reply.get("error").is_some() => return Err(format!("memory.link {i}: {reply}")),
                        Some(_) => {}
                    }
                }
            }
            Ok(())
        });
        if round == 0 {
            // A loaded machine may need more than the random pause for the first checkpoint;
            // the rounds after it test the promise that one exists.
            assert!(
                wait_until(Duration::from_secs(30), || root.join(".claude/.project-state.json").exists()),
                "round 0: no checkpoint"
            );
        }
        // At least one memory per round is acknowledged before the kill, which then lands
        // among the writes that follow.
        assert!(
            wait_until(Duration::from_secs(30), || acked.lock().unwrap().len() > acked_before),
            "round {round}: no memory write was acknowledged"
        );
        std::thread::sleep(Duration::from_millis(5 + next() % 60));
        d.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
        for (what, t) in [("the checkpoint storm", storm), ("the memory storm", memories)] {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("round {round}: {what} got an error reply: {e}"),
                Err(_) => panic!("round {round}: {what} panicked (a torn reply?)"),
            }
        }
        memories_whole(&root, round);
        if !root.join(".claude/.project-state.json").exists() {
            // Killed before the very first checkpoint: nothing was promised yet.
            assert!(session_id.is_none(), "round {round}: a checkpoint that existed has vanished");
            continue;
        }
        let v = read_state(&root);
        assert_seed_004(&v);
        let bak = root.join(".claude/.project-state.json.bak");
        if bak.exists() {
            let b: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&bak).unwrap()).expect("the backup is whole");
            assert_seed_004(&b);
        }
        for t in tracker_files(&env) {
            let _: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&t).unwrap()).expect("the tracker is whole");
        }
        if let Ok(md) = std::fs::read_to_string(root.join(".claude/session-memory.md")) {
            let p = ccmem_proto::model::report::parse(&md);
            assert!(p.warnings.is_empty(), "round {round}: the report is torn: {:?}", p.warnings);
        }
        session_id = Some(v["session_id"].as_str().unwrap().to_string());
    }
    let _d = env.start_daemon(&[]);
    assert_eq!(env.project_status(&root)["session"]["session_id"], session_id.unwrap().as_str());
    let acked = acked.lock().unwrap();
    assert!(!acked.is_empty(), "the memory storm wrote nothing");
    all_acknowledged_memories_listed(&env, &root, &acked, rounds);
    eprintln!("{rounds} rounds; {} memories acknowledged, none lost, no file torn", acked.len());
}

/// After a kill: every memory file reads as a memory, and the graph and index are whole
/// JSON (they may lag the files: they are rebuilt and repaired from them).
fn memories_whole(root: &std::path::Path, round: u32) {
    let dir = root.join(".claude/memory");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(slug) = name.strip_suffix(".md") {
            let text = std::fs::read_to_string(&p).unwrap();
            ccmem_proto::model::memory::frontmatter::parse(slug, ccmem_proto::model::memory::Scope::Project, &text)
                .unwrap_or_else(|e| panic!("round {round}: {name} is torn: {e:?}"));
        } else if name == "graph.json" || name == "index.json" {
            let _: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("round {round}: {name} is torn: {e}"));
        }
    }
}

/// Every memory whose write was answered is there after the restart.
fn all_acknowledged_memories_listed(env: &Env, root: &std::path::Path, acked: &[String], round: u32) {
    let list = env.request("memory.list", json!({"path": root, "scope": "project"}));
    let listed: std::collections::HashSet<&str> =
        list["memories"].as_array().unwrap().iter().filter_map(|m| m["slug"].as_str()).collect();
    let lost: Vec<&String> = acked.iter().filter(|s| !listed.contains(s.as_str())).collect();
    assert!(lost.is_empty(), "round {round}: acknowledged memories lost: {lost:?}");
}

#[test]
fn shutdown_checkpoints_every_live_project() {
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    let roots: Vec<_> = (0..3).map(|i| repo(&env, &format!("p{i}"))).collect();
    for r in &roots {
        env.event(r, edit("x.rs"));
    }
    let t = Instant::now();
    assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    assert!(t.elapsed() < Duration::from_secs(10));
    d.wait(Duration::from_secs(5));
    for r in &roots {
        let v = read_state(r);
        assert_seed_004(&v);
        assert_eq!(v["edited_files"], json!(["x.rs"]));
    }
}
