//! The journal (`journal.db` in the state dir): what the daemon answered survives a
//! `kill -9`, it is the user's alone, and one that cannot be used is moved aside.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn journal(env: &Env) -> PathBuf {
    env.state.join("ccmem/journal.db")
}

fn context_of(out: &std::process::Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string()
}

/// A PostToolUse of conversation `conv` in `root`, with the tool's fields.
fn tool_use(env: &Env, root: &Path, conv: &str, fields: Value) -> std::process::Output {
    send(env, ev(root, conv, "PostToolUse", fields))
}

/// The newcomer's case: a prompt, a task list, an edit and a failing test run, then the
/// daemon dies before the agent ever stops (no checkpoint of it on disk).
fn work_then_kill(env: &Env, root: &Path) {
    let c = "conv-1";
    send(env, ev(root, c, "SessionStart", json!({"source": "startup"})));
    send(env, ev(root, c, "UserPromptSubmit", json!({"prompt": "Make fetch_user retry on timeouts"})));
    tool_use(
        env,
        root,
        c,
        json!({"tool_name": "TodoWrite", "tool_input": {"todos": [
                {"content": "Add a retry loop to fetch_user", "status": "in_progress", "activeForm": "Adding a retry loop"},
                {"content": "Test the retry on a timeout", "status": "pending", "activeForm": "Testing the retry"}]},
                "tool_response": {}}),
    );
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/client.rs"), "fn fetch_user() { retry() }\n").unwrap();
    tool_use(
        env,
        root,
        c,
        json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("src/client.rs"),
                "old_string": "fn fetch_user() {}", "new_string": "fn fetch_user() { retry() }"}}),
    );
    tool_use(
        env,
        root,
        c,
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test retry_on_timeout"},
                "tool_response": {"stdout": "running 1 test\ntest client::tests::retry_on_timeout ... FAILED\n\nfailures:\n\n---- client::tests::retry_on_timeout stdout ----\nthread panicked at src/client.rs:9:5:\nassertion failed: attempts == 3\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored",
                "stderr": "error: test failed, to rerun pass `--lib`", "interrupted": false}}),
    );
    assert!(!root.join(".claude/.project-state.json").exists(), "no checkpoint was written before the kill");
    let pid = env.ctl_json(&["ping"])["pid"].as_u64().unwrap() as u32;
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(10), || !alive(pid)), "the daemon did not die");
}

#[test]
fn what_the_daemon_answered_survives_kill_9_before_any_checkpoint() {
    let env = Env::new();
    let root = repo(&env, "proj");
    work_then_kill(&env, &root);

    // The next start (auto-started by the hook) gives a new conversation all of it.
    // (At once: the dying daemon's socket may still take the connection, and reset it.)
    let out = send(&env, ev(&root, "conv-2", "SessionStart", json!({"source": "startup"})));
    let ctx = context_of(&out);
    for want in [
        "Make fetch_user retry on timeouts",
        "Add a retry loop to fetch_user",
        "Test the retry on a timeout",
        "src/client.rs",
        "retry_on_timeout",
    ] {
        assert!(ctx.contains(want), "{want:?} lost with the daemon:\n{ctx}");
    }
    let st = env.project_status(&root);
    let s = &st["session"];
    assert_eq!(s["files_modified"]["src/client.rs"]["modification_count"], 1, "counted once: {}", s["files_modified"]);
}

#[test]
fn every_event_is_a_row_and_the_files_are_the_users_alone() {
    let env = Env::new();
    let root = repo(&env, "proj");
    work_then_kill(&env, &root);
    let db = journal(&env);
    for f in [db.clone(), db.with_extension("db-wal")] {
        assert_eq!(mode_of(&f) & 0o777, 0o600, "{} is not private", f.display());
    }
    assert_eq!(mode_of(db.parent().unwrap()) & 0o777, 0o700);
    let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let kinds: Vec<String> = conn
        .prepare("SELECT kind FROM events ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for want in ["start", "prompt", "todos", "edit", "command"] {
        assert!(kinds.iter().any(|k| k == want), "no {want} event in {kinds:?}");
    }
    // What recall will search: the words of the failing run, through the full-text index.
    let hits: i64 = conn
        .query_row("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'retry_on_timeout'", [], |r| r.get(0))
        .unwrap();
    assert!(hits >= 1, "the failing test is not searchable");
    let path: String = conn.query_row("SELECT path FROM events WHERE kind = 'edit'", [], |r| r.get(0)).unwrap();
    assert_eq!(path, "src/client.rs");
    let (sid, live): (String, Option<i64>) =
        conn.query_row("SELECT sid, ended_ms FROM sessions", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert!(sid.starts_with("session_") && live.is_none(), "{sid} {live:?}");
}

#[test]
fn no_secret_reaches_the_journal() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let token = "ghp_J0urnalT0kenAbCdEfGhIjKlMnOpQrStUv12";
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": format!("push with token {token} please")})));
    tool_use(
        &env,
        &root,
        "c",
        json!({"tool_name": "Bash", "tool_input": {"command": format!("GITHUB_TOKEN={token} git push")},
                "tool_response": {"stdout": "", "stderr": format!("remote: invalid token {token}"), "interrupted": false, "exit_code": 1}}),
    );
    assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    let found = holding(&env.state, token);
    assert!(found.is_empty(), "the token is on disk in {found:?}");
    assert!(journal(&env).exists());
}

/// #42: a daemon quiet for its delay lets go of its compiled redaction rules and the
/// journal's caches; what comes after is redacted and journaled as before (the rules
/// compile again, the reader reopens).
#[test]
fn after_the_daemon_let_go_of_its_caches_secrets_are_still_kept_out() {
    let env = Env::new();
    let _d = env.start_daemon_with(&[], |c| {
        c.env("CCMEM_QUIET_AFTER_MS", "300");
    });
    let root = repo(&env, "proj");
    let first = "ghp_BeforeQu1etAbCdEfGhIjKlMnOpQrStUv1234";
    let second = "ghp_AfterQu1etAbCdEfGhIjKlMnOpQrStUvW5678";
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": format!("use token {first}")})));
    for round in 0..2 {
        // Quiet for longer than the delay: everything let go (twice: it comes back each time).
        std::thread::sleep(Duration::from_millis(1200));
        let out =
            send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": format!("then token {second} ({round})")})));
        assert_eq!(out.status.code(), Some(0));
    }
    let history = env.ctl(&["--json", "status", root.to_str().unwrap()]);
    assert_ok(&history, "status after the quiet");
    assert!(text(&history.stdout).contains("then token [REDACTED"), "{}", text(&history.stdout));
    assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    for token in [first, second] {
        let found = holding(&env.state, token);
        assert!(found.is_empty(), "{token} is on disk in {found:?}");
    }
    let conn = rusqlite::Connection::open(journal(&env)).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM events WHERE kind = 'prompt' AND text LIKE 'then token [REDACTED%'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 2, "both prompts after the quiet are journaled, redacted");
}

#[test]
fn a_journal_that_cannot_be_used_is_moved_aside_and_said() {
    let env = Env::new();
    let db = journal(&env);
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    set_mode(db.parent().unwrap(), 0o700);
    std::fs::write(&db, b"this is not a database, it is a file of text that is long enough to be read as a header")
        .unwrap();
    let root = repo(&env, "proj");
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "after the broken journal"})));
    let st = text(&env.ctl(&["status"]).stdout);
    assert!(st.contains("could not be used") && st.contains("moved to"), "status does not say it:\n{st}");
    let aside: Vec<_> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("journal.db.broken-"))
        .collect();
    assert_eq!(aside.len(), 1, "the broken journal is kept, once");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn.query_row("SELECT count(*) FROM events WHERE kind = 'prompt'", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1, "the new journal is written");
}

/// Found by the independent tester: a journal whose pages are damaged behind a whole
/// header opened, failed every write from then on, and the events answered meanwhile were
/// lost at the next kill. It is moved aside at start, as one that does not open, and the
/// session goes on in a new one.
#[test]
fn a_journal_damaged_inside_is_moved_aside_at_start() {
    let env = Env::new();
    let root = repo(&env, "proj");
    {
        let _d = env.start_daemon(&[]);
        send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
        for i in 0..200 {
            send(
                &env,
                ev(
                    &root,
                    "c",
                    "UserPromptSubmit",
                    json!({"prompt": format!("a prompt before the damage {i} {}", "x".repeat(200))}),
                ),
            );
        }
        assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    }
    let db = journal(&env);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    }
    // The header (the first page) whole; the pages after it garbage.
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 8 * 4096, "{} bytes", bytes.len());
    for (i, b) in bytes[4096..4096 * 8].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(7);
    }
    std::fs::write(&db, &bytes).unwrap();
    let _d = env.start_daemon(&[]);
    send(&env, ev(&root, "c2", "UserPromptSubmit", json!({"prompt": "after the damage"})));
    let st = text(&env.ctl(&["status"]).stdout);
    assert!(st.contains("could not be used") && st.contains("moved to"), "status does not say it:\n{st}");
    assert!(
        std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("journal.db.broken-")),
        "moved aside"
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM events WHERE kind = 'prompt' AND text LIKE '%after the damage%'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 1, "the new journal is written");
}

#[test]
fn a_journal_of_a_newer_ccmem_is_never_written_to() {
    let env = Env::new();
    let db = journal(&env);
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    set_mode(db.parent().unwrap(), 0o700);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;").unwrap();
    }
    let root = repo(&env, "proj");
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    let st = text(&env.ctl(&["status"]).stdout);
    assert!(st.contains("newer than this ccmem knows"), "{st}");
    let moved = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("journal.db.broken-"))
        .expect("moved aside");
    let old = rusqlite::Connection::open(moved.path()).unwrap();
    let v: i64 = old.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let tables: i64 = old.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).unwrap();
    assert_eq!((v, tables), (99, 1), "the newer journal is left as it was");
}

/// Every file under `dir` that holds `needle`'s bytes.
fn holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|f| std::fs::read(f).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes())))
        .collect()
}

/// Found by the independent tester: what a command that prints a secret printed (`pass
/// show`, `vault kv get -field`, `echo $DB_PASSWORD`: a line holding the secret alone) was
/// masked in the event's text, read after its command, but kept in the event's replay,
/// where the output was read alone. It is read after its command everywhere now: nothing
/// of it in the state dir (the journal, its log, the tracker) nor in the project.
#[test]
fn what_a_secret_printing_command_printed_is_nowhere_on_disk() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    let secrets = ["Ev5Cb6Nm7Qw8Er9T", "Gq4Wx9Lm2Zt7Kp3R", "Hn8Vb3Cx6Mz1Qw5E"];
    send(
        &env,
        ev(
            &root,
            "c",
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "pass show prod/db && ./migrate"},
                "error": format!("Exit code 1\n{}\nmigrate: error: connection refused", secrets[0])}),
        ),
    );
    tool_use(
        &env,
        &root,
        "c",
        json!({"tool_name": "Bash", "tool_input": {"command": "vault kv get -field=token secret/ci; npm run build"},
            "tool_response": {"stdout": format!("{}\n> build\nok", secrets[1]), "stderr": "", "interrupted": false}}),
    );
    tool_use(
        &env,
        &root,
        "c",
        json!({"tool_name": "Bash", "tool_input": {"command": "echo $DB_PASSWORD && cargo test"},
            "tool_response": {"stdout": format!("{}\nerror: test failed", secrets[2]), "stderr": "", "interrupted": false}}),
    );
    assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    std::thread::sleep(Duration::from_millis(1500));
    let db = journal(&env);
    let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let commands: i64 = conn.query_row("SELECT count(*) FROM events WHERE kind = 'command'", [], |r| r.get(0)).unwrap();
    assert_eq!(commands, 3, "the three commands are journaled");
    for secret in secrets {
        for dir in [env.state.clone(), root.clone()] {
            let found = holding(&dir, secret);
            assert!(found.is_empty(), "{secret} is in {found:?}");
        }
    }
}

fn forget(env: &Env, args: &[&str]) -> std::process::Output {
    let mut all = vec!["forget"];
    all.extend_from_slice(args);
    env.ctl(&all)
}

#[test]
fn forget_text_leaves_no_byte_of_it_anywhere() {
    let env = Env::new();
    let (a, b) = (repo(&env, "alpha"), repo(&env, "beta"));
    // Not a credential shape: nothing redacts it, so only `forget` can take it out.
    let phrase = "zebra-quartz-77-Moonlight";
    for (root, c) in [(&a, "ca"), (&b, "cb")] {
        send(&env, ev(root, c, "SessionStart", json!({"source": "startup"})));
        send(
            &env,
            ev(root, c, "UserPromptSubmit", json!({"prompt": format!("the staging passphrase is {phrase}, use it")})),
        );
        tool_use(
            &env,
            root,
            c,
            json!({"tool_name": "Bash", "tool_input": {"command": format!("deploy --pass {phrase}")},
                    "tool_response": {"stdout": "", "stderr": format!("rejected: {phrase}"), "interrupted": false, "exit_code": 1}}),
        );
        send(
            &env,
            ev(
                root,
                c,
                "Stop",
                json!({"last_assistant_message": format!("Deploy failed with {phrase}. [REMEMBER: staging wants {phrase}]")}),
            ),
        );
        // Two checkpoints: the copy kept before the last one holds it too.
        assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
        assert_ok(&env.ctl(&["checkpoint", root.to_str().unwrap()]), "checkpoint");
    }
    // One session ended (an archive), a new one live. The phrase written in capitals is
    // the same phrase: forgotten with it.
    assert_ok(&env.ctl(&["reset-session", a.to_str().unwrap()]), "reset");
    let shouted = phrase.to_uppercase();
    send(&env, ev(&a, "ca2", "UserPromptSubmit", json!({"prompt": format!("again {phrase}, or {shouted}")})));
    let before = [holding(&env.state, phrase), holding(&a, phrase), holding(&b, phrase)].concat();
    assert!(before.len() >= 5, "the phrase should be in many places before: {before:?}");
    let newest = |env: &Env| -> i64 {
        let conn =
            rusqlite::Connection::open_with_flags(journal(env), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        conn.query_row("SELECT max(seq) FROM events", [], |r| r.get(0)).unwrap()
    };
    let newest_before = newest(&env);

    // No terminal and no --yes: nothing goes.
    let out = forget(&env, &["--text", phrase, "--all"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("add --yes"), "{}", text(&out.stderr));
    assert!(!holding(&env.state, phrase).is_empty());

    let out = forget(&env, &["--text", phrase, "--all", "--yes"]);
    assert_ok(&out, "forget --text");
    assert!(text(&out.stdout).contains("forgotten:"), "{}", text(&out.stdout));
    for dir in [&env.state, &a, &b] {
        let left = [holding(dir, phrase), holding(dir, &shouted)].concat();
        assert!(left.is_empty(), "{phrase} is still in {left:?}");
    }
    let ctx = text(&env.ctl(&["context", a.to_str().unwrap()]).stdout);
    assert!(!ctx.contains(phrase) && ctx.contains("[forgotten]"), "{ctx}");
    // The newest events went with it; their numbers are not given again.
    send(&env, ev(&a, "ca2", "UserPromptSubmit", json!({"prompt": "carry on"})));
    assert!(newest(&env) > newest_before, "an event number was given twice");
    // Nothing brings it back: the next checkpoint, a restart.
    assert_ok(&env.ctl(&["checkpoint", a.to_str().unwrap()]), "checkpoint");
    assert_ok(&env.ctl(&["shutdown"]), "shutdown");
    assert_ok(&env.ctl(&["status", a.to_str().unwrap()]), "restart");
    for dir in [&env.state, &a, &b] {
        assert!(holding(dir, phrase).is_empty(), "{phrase} came back in {:?}", holding(dir, phrase));
    }
    let again = forget(&env, &["--text", phrase, "--all", "--yes"]);
    assert!(text(&again.stdout).contains("nothing to forget"), "{}", text(&again.stdout));
}

/// #40: a `sqlite3` shell that held the journal's write lock (a transaction left open) made
/// every hook wait for it until the hook gave up, and then the following hooks' stall
/// guard gave the agent no context at all. Hooks now get their answers at once; what could
/// not be written waits in memory, said in `status`, and is written when the lock goes.
#[test]
fn a_journal_locked_by_another_program_holds_up_no_hook_and_loses_nothing() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "first prompt"})));
    let locker = rusqlite::Connection::open(journal(&env)).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(key, value) VALUES('lock-test', 'x');").unwrap();
    for i in 0..4 {
        let start = send(&env, ev(&root, &format!("c{i}"), "SessionStart", json!({"source": "startup"})));
        assert!(context_of(&start).contains("first prompt"), "start {i} gets its context: {}", text(&start.stdout));
        send(&env, ev(&root, &format!("c{i}"), "UserPromptSubmit", json!({"prompt": format!("held-prompt-{i}")})));
    }
    let st = text(&env.ctl(&["status"]).stdout);
    assert!(st.contains("locked by another program"), "status says why nothing is written: {st}");
    assert_eq!(stall_marks(&env), 0, "no hook waited in vain");
    locker.execute_batch("ROLLBACK").unwrap();
    drop(locker);
    let end = std::time::Instant::now() + Duration::from_secs(20);
    let reader =
        rusqlite::Connection::open_with_flags(journal(&env), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    loop {
        let n: i64 = reader
            .query_row("SELECT count(*) FROM events WHERE kind = 'prompt' AND text LIKE 'held-prompt-%'", [], |r| {
                r.get(0)
            })
            .unwrap();
        if n == 4 {
            break;
        }
        assert!(std::time::Instant::now() < end, "{n} of the 4 held prompts written after the lock went");
        std::thread::sleep(Duration::from_millis(200));
    }
    let st = text(&env.ctl(&["status"]).stdout);
    assert!(!st.contains("locked by another program"), "{st}");
}

/// Found by the independent tester: a program holding a lock on the bytes of the journal's
/// shared-memory file where SQLite's readers and writer take theirs (`-shm`, bytes 120 to
/// 127: the write, checkpoint, recovery and read locks) made `status`
/// take ten seconds, each read of the journal waiting its full time. `status` and the
/// hooks answer at once, and `status` says the journal is locked.
#[test]
#[cfg(unix)]
#[cfg_attr(not(ccmem_python), ignore = "needs python3 (to hold a byte-range lock)")]
fn a_lock_on_the_journals_shared_memory_holds_up_neither_status_nor_a_hook() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "first prompt"})));
    let shm = ccmem_proto::files::atomic::with_suffix(&journal(&env), "-shm");
    assert!(shm.exists(), "the journal is open in WAL mode");
    let (locker, line) = KillOnDrop::start_ready(
        std::process::Command::new("python3")
            .args(["-c", "import fcntl, sys, time\nf = open(sys.argv[1], 'r+b')\nfcntl.lockf(f, fcntl.LOCK_EX, 8, 120)\nprint('locked', flush=True)\ntime.sleep(60)\n"])
            .arg(&shm),
    );
    assert_eq!(line, "locked");
    let t = std::time::Instant::now();
    let start = send(&env, ev(&root, "c2", "SessionStart", json!({"source": "startup"})));
    assert!(context_of(&start).contains("first prompt"), "{}", text(&start.stdout));
    send(&env, ev(&root, "c2", "UserPromptSubmit", json!({"prompt": "held-under-shm-lock"})));
    // A new project reads the journal for its session's id and its handoff: it gets its
    // context within the hook's time all the same (the tester's SessionStart got nothing).
    let other = repo(&env, "other");
    let start = send(&env, ev(&other, "o1", "SessionStart", json!({"source": "startup"})));
    assert!(!context_of(&start).is_empty(), "a new project's start gets its context: {}", text(&start.stdout));
    // The writer has met the lock by now (it waits a quarter of a second for one).
    std::thread::sleep(Duration::from_millis(500));
    let out = env.ctl_cmd(&["status"]).current_dir(&root).output().unwrap();
    let history = env.ctl_cmd(&["history"]).current_dir(&root).output().unwrap();
    let took = t.elapsed();
    let st = text(&out.stdout);
    assert!(took < Duration::from_secs(6), "a start, a prompt, status and history took {took:?}: {st}");
    assert_ok(&history, "history");
    assert!(st.contains("locked by another program"), "status says why nothing is written: {st}");
    assert_eq!(stall_marks(&env), 0, "no hook waited in vain");
    drop(locker);
    let end = std::time::Instant::now() + Duration::from_secs(20);
    let reader =
        rusqlite::Connection::open_with_flags(journal(&env), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    while reader
        .query_row("SELECT count(*) FROM events WHERE text = 'held-under-shm-lock'", [], |r| r.get::<_, i64>(0))
        .unwrap_or(0)
        == 0
    {
        assert!(std::time::Instant::now() < end, "the held prompt is written once the lock goes");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Found by both independent testers: with a reader holding the journal, `forget` could
/// not empty the log and said so; run again after the reader closed, it found nothing to
/// forget and the text stayed in `-wal`. The daemon now empties the log as soon as the
/// reader lets go, whether or not anyone forgets again.
#[test]
fn a_forget_a_reader_held_up_is_finished_once_the_reader_lets_go() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "proj");
    let phrase = "walrus-heldopen-4471-Marimba";
    send(&env, ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": format!("the codename is {phrase}")})));
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let db = journal(&env);
    let reader = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let _: i64 = reader.query_row("SELECT count(*) FROM events", [], |r| r.get(0)).unwrap();
    let out = forget(&env, &["--text", phrase, "--all", "--yes"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("is reading the journal"), "{said}");
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    let wal = ccmem_proto::files::atomic::with_suffix(&db, "-wal");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let left = holding(db.parent().unwrap(), phrase);
        if left.iter().all(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("journal.db"))) {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "still in {left:?} ({} bytes of log)",
            std::fs::metadata(&wal).map_or(0, |m| m.len())
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn forget_a_conversation_a_session_and_a_project() {
    let env = Env::new();
    let (a, b) = (repo(&env, "alpha"), repo(&env, "beta"));
    for c in ["keep-me", "drop-me"] {
        send(&env, ev(&a, c, "UserPromptSubmit", json!({"prompt": format!("prompt of {c}")})));
    }
    let out = forget(&env, &["--conversation", "drop-me", "--project", a.to_str().unwrap(), "--yes"]);
    assert_ok(&out, "forget --conversation");
    let st = env.project_status(&a);
    let convs: Vec<&str> =
        st["session"]["conversations"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(convs, ["keep-me"], "{st}");
    let conn = rusqlite::Connection::open(journal(&env)).unwrap();
    let n = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(n("SELECT count(*) FROM events WHERE conversation = 'drop-me'"), 0);
    assert!(n("SELECT count(*) FROM events WHERE conversation = 'keep-me'") >= 1);

    // A live session cannot be forgotten; once ended, it can.
    let sid = st["session"]["session_id"].as_str().unwrap().to_string();
    let out = forget(&env, &["--session", &sid, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is live"), "{}", text(&out.stderr));
    assert_ok(&env.ctl(&["reset-session", a.to_str().unwrap()]), "reset");
    assert_ok(&forget(&env, &["--session", &sid, "--yes"]), "forget --session");
    assert_eq!(n(&format!("SELECT count(*) FROM sessions WHERE sid = '{sid}'")), 0);
    let history = text(&env.ctl(&["history", a.to_str().unwrap()]).stdout);
    assert!(!history.contains(&sid), "{history}");

    // A project's whole past: its rows, its state dir, its files; the other project stays.
    send(&env, ev(&b, "cb", "UserPromptSubmit", json!({"prompt": "work in beta"})));
    assert_ok(&env.ctl(&["checkpoint", b.to_str().unwrap()]), "checkpoint");
    assert_ok(&forget(&env, &["--project", b.to_str().unwrap(), "--yes"]), "forget --project");
    assert_eq!(n(&format!("SELECT count(*) FROM projects WHERE root = '{}'", b.display())), 0);
    assert!(n("SELECT count(*) FROM projects") >= 1, "alpha stays");
    assert!(!b.join(".claude/.project-state.json").exists());
    assert!(holding(&env.state, "work in beta").is_empty());
}

#[test]
fn a_corrupt_tracker_is_stood_in_for_by_the_journal() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let mut d = env.start_daemon(&[]);
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "keep this prompt"})));
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    // With the journal, no tracker is written (one copy of the state, not two): one left
    // from a ccmem before it, or from a run without it, is corrupt.
    let dir = ccmem_daemon::store::Store::new(env.state.join("ccmem"), 20).project_dir(&root);
    assert!(!dir.join("tracker.json").exists(), "the journal holds the live session");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tracker.json"), b"{\"session_id\": \"session_2026").unwrap();
    let _d = env.start_daemon(&[]);
    let st = env.project_status(&root);
    assert_eq!(st["live"], true, "{st}");
    assert!(st.to_string().contains("keep this prompt"), "{st}");
}

/// An archive as a ccmem before the journal wrote it (`projects/*/sessions/<id>.json`), of a
/// session of `root` that ended `days_ago`, holding `filler` bytes of prompt.
fn old_archive(env: &Env, root: &Path, sid: &str, days_ago: i64, filler: usize) {
    use ccmem_proto::model::session::{ArchivedSession, EndReason, Session};
    let ended = chrono::Utc::now() - chrono::Duration::days(days_ago);
    let iso = ended.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut s = Session {
        session_id: sid.into(),
        project_root: root.to_path_buf(),
        project_name: "proj".into(),
        created_at: iso.clone(),
        last_updated: iso.clone(),
        last_activity: iso.clone(),
        ..Default::default()
    };
    s.conversations.push(ccmem_proto::model::session::Conversation {
        id: format!("conv-{sid}"),
        first_prompt: format!("the first prompt of {sid} {}", "x".repeat(filler)),
        ..Default::default()
    });
    let a = ArchivedSession { ended: EndReason::Expired, ended_at: iso, session: s };
    let dir = env.state.join("ccmem/projects/proj-0000000000000000/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{sid}.json")), serde_json::to_vec_pretty(&a).unwrap()).unwrap();
}

fn history_ids(env: &Env, root: &Path) -> Vec<String> {
    let v = env.ctl_json(&["history", root.to_str().unwrap()]);
    v["sessions"].as_array().unwrap().iter().map(|s| s["session_id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn history_is_read_from_the_journal_and_old_archives_are_taken_in_once() {
    let env = Env::new();
    let root = repo(&env, "proj");
    old_archive(&env, &root, "session_2026-01-02_00-00-00", 300, 0);
    old_archive(&env, &root, "session_2026-01-03_00-00-00", 200, 0);
    let _d = env.start_daemon(&[]);
    assert_eq!(history_ids(&env, &root), ["session_2026-01-03_00-00-00", "session_2026-01-02_00-00-00"]);

    // A session ended now is in the journal's history, and in no file of the state dir.
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "the newest work"})));
    tool_use(
        &env,
        &root,
        "c",
        json!({"tool_name": "TodoWrite", "tool_input": {"todos": [
                {"content": "Finish the handed-on task", "status": "in_progress", "activeForm": "Finishing"}]},
                "tool_response": {}}),
    );
    let sid = env.project_status(&root)["session"]["session_id"].as_str().unwrap().to_string();
    assert_ok(&env.ctl(&["reset-session", root.to_str().unwrap()]), "reset");
    let ids = history_ids(&env, &root);
    assert_eq!(ids.first(), Some(&sid), "{ids:?}");
    assert_eq!(ids.len(), 3, "{ids:?}");
    let archives: Vec<PathBuf> =
        walk(&env.state.join("ccmem/projects")).into_iter().filter(|p| p.to_string_lossy().contains(&sid)).collect();
    assert!(archives.is_empty(), "an archive file was written: {archives:?}");
    // The next session starts from the one that ended: its work is handed on.
    let out = send(&env, ev(&root, "c2", "SessionStart", json!({"source": "startup"})));
    assert!(context_of(&out).contains("Finish the handed-on task"), "{}", context_of(&out));

    // Taken in once: an archive removed from the journal is not brought back by a restart.
    let out = forget(&env, &["--session", "session_2026-01-02_00-00-00", "--yes"]);
    assert_ok(&out, "forget --session");
    drop(_d);
    old_archive(&env, &root, "session_2026-01-02_00-00-00", 300, 0);
    let _d = env.start_daemon(&[]);
    assert!(!history_ids(&env, &root).contains(&"session_2026-01-02_00-00-00".to_string()));
}

#[test]
fn the_journal_keeps_the_past_as_long_and_as_large_as_the_user_says() {
    let env = Env::new();
    let root = repo(&env, "proj");
    // 40 ended sessions of 100 KB each (4 MB): the limit is 1 MiB; and one older than 30 days.
    old_archive(&env, &root, "session_2025-12-01_00-00-00", 40, 0);
    for i in 0..40 {
        old_archive(&env, &root, &format!("session_2026-02-{:02}_00-00-{i:02}", 1 + i / 20), 10, 100 * 1024);
    }
    let _d = env.start_daemon(&["--history-keep", "30d", "--history-max-size", "1MiB"]);
    // The writer prunes as it starts, beside the daemon's first answers (a loaded machine
    // answered `history` before it was done): what it keeps, once it has.
    let kept = |ids: &Vec<String>| !ids.is_empty() && ids.len() < 20;
    wait_until(Duration::from_secs(10), || kept(&history_ids(&env, &root)));
    let ids = history_ids(&env, &root);
    assert!(kept(&ids), "{} sessions kept: {ids:?}", ids.len());
    assert!(!ids.iter().any(|i| i.starts_with("session_2025")), "older than 30 days kept: {ids:?}");
    assert_eq!(ids.first().map(String::as_str), Some("session_2026-02-02_00-00-39"), "the newest stay");
    // Said once the prune is done (its rows go before it says so).
    let problems = || env.ctl_json(&["status"])["daemon"]["journal_problems"].to_string();
    wait_until(Duration::from_secs(10), || problems().contains("history_max_size"));
    let problems = problems();
    assert!(problems.contains("history_max_size"), "status does not say: {problems}");
    // A new session still works and is kept.
    send(&env, ev(&root, "c", "UserPromptSubmit", json!({"prompt": "after the limit"})));
    assert!(env.project_status(&root)["session"]["conversations"].to_string().contains("after the limit"));
}

/// What the agent wrote to its transcript after the daemon last read it (while no daemon
/// ran, or a killed one had not read it yet) is read at the next start: its last words and
/// what it asked to remember are not lost with the daemon.
#[test]
fn a_transcript_is_read_on_after_a_kill() {
    let env = Env::new();
    let root = repo(&env, "proj");
    let t = env.path().join("conv-1.jsonl");
    let say = |text: &str| {
        json!({"type": "assistant", "sessionId": "conv-1", "timestamp": "2026-03-01T10:30:00Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})
        .to_string()
            + "\n"
    };
    std::fs::write(&t, say("First I read the code of the client.")).unwrap();
    let payload = |name: &str, extra: Value| {
        let mut p = ev(&root, "conv-1", name, extra);
        p["transcript_path"] = json!(t);
        p
    };
    send(&env, payload("SessionStart", json!({"source": "startup"})));
    send(&env, payload("UserPromptSubmit", json!({"prompt": "Make fetch_user retry"})));
    let pid = env.ctl_json(&["ping"])["pid"].as_u64().unwrap() as u32;
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(10), || !alive(pid)), "the daemon did not die");

    let mut more = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    std::io::Write::write_all(
        &mut more,
        say("The retry loop is in fetch_user now. [REMEMBER: retries live in fetch_user, three at most]").as_bytes(),
    )
    .unwrap();
    drop(more);
    send(&env, ev(&root, "conv-2", "SessionStart", json!({"source": "startup"})));
    env.note_daemon();
    let facts = text(&env.ctl(&["facts", "--project", root.to_str().unwrap()]).stdout);
    assert!(facts.contains("retries live in fetch_user"), "the transcript was not read on: {facts}");
    let st = env.project_status(&root);
    let conv =
        st["session"]["conversations"].as_array().and_then(|cs| cs.iter().find(|c| c["id"] == "conv-1")).cloned();
    let words = conv.map(|c| c["digest"]["last_words"].to_string()).unwrap_or_default();
    assert!(words.contains("The retry loop is in fetch_user now"), "last words: {words}\n{}", st["session"]);
}

/// A project's `.claude/ccmem.toml` may keep its own past less long than the user does
/// (not less than 7 days), never longer; the others keep the user's.
#[test]
fn a_project_keeps_its_past_less_long_when_its_file_says() {
    let env = Env::new();
    let short = repo(&env, "short");
    let other = repo(&env, "other");
    std::fs::create_dir_all(short.join(".claude")).unwrap();
    std::fs::write(short.join(".claude/ccmem.toml"), "history_keep = \"30d\"\n").unwrap();
    old_archive(&env, &short, "session_2026-01-01_00-00-01", 60, 0);
    old_archive(&env, &short, "session_2026-01-01_00-00-02", 10, 0);
    old_archive(&env, &other, "session_2026-01-01_00-00-03", 60, 0);
    let _d = env.start_daemon(&["--history-keep", "90d"]);
    // Applied once the project's file is read: when it has a session.
    send(&env, ev(&short, "c", "UserPromptSubmit", json!({"prompt": "work"})));
    send(&env, ev(&other, "c2", "UserPromptSubmit", json!({"prompt": "work"})));
    assert!(
        wait_until(Duration::from_secs(10), || !history_ids(&env, &short)
            .contains(&"session_2026-01-01_00-00-01".into())),
        "the project's 30 days were not applied: {:?}",
        history_ids(&env, &short)
    );
    assert_eq!(history_ids(&env, &short), ["session_2026-01-01_00-00-02"]);
    assert_eq!(history_ids(&env, &other), ["session_2026-01-01_00-00-03"], "the user's 90 days elsewhere");
    let shown = env.ctl_json(&["config", "show", short.to_str().unwrap()]);
    let keep = shown["entries"].as_array().unwrap().iter().find(|e| e["key"] == "history_keep").unwrap().clone();
    assert_eq!(keep["value"], "720h", "{keep}");
    assert!(keep["source"].as_str().unwrap().starts_with("project file"), "{keep}");
}
