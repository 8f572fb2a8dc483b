//! Daemon lifecycle and client behaviour, end to end with the real binaries.
#![cfg(unix)]

mod common;

use common::*;
use std::os::unix::net::UnixListener;
use std::time::Duration;

#[test]
fn status_autostarts_the_daemon_and_reports_the_project() {
    let env = Env::new();
    let project = env.path().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src/deep")).unwrap();

    let mut cmd = env.ctl_cmd(&["status"]);
    cmd.current_dir(project.join("src/deep"));
    let out = cmd.output().unwrap();
    env.note_daemon();
    assert_ok(&out, "ccmemctl status");
    let stdout = text(&out.stdout);
    let root = std::fs::canonicalize(&project).unwrap();
    assert!(stdout.contains(&format!("project      {}", root.display())), "{stdout}");
    assert!(stdout.contains("ccmemd 0.1.0 (protocol 1)"), "{stdout}");

    let v = env.ctl_json(&["status", project.join("src").to_str().unwrap()]);
    assert_eq!(v["project"]["root"], root.to_str().unwrap());
    assert_eq!(v["project"]["live"], false);
    assert_eq!(v["daemon"]["protocol_version"], 1);
    assert_eq!(v["daemon"]["version"], env!("CARGO_PKG_VERSION"));
    let pid = v["daemon"]["pid"].as_u64().unwrap() as u32;
    assert_eq!(env.pidfile_pid(), Some(pid));
    assert!(v["daemon"]["ready_ms"].as_f64().unwrap() > 0.0);

    // The socket is the user's alone; the auto-started daemon logs to the state dir.
    assert_eq!(mode_of(env.socket.parent().unwrap()), 0o700);
    assert_eq!(mode_of(&env.socket), 0o600);
    let log = std::fs::read_to_string(env.log_file()).unwrap();
    assert!(log.contains("ccmemd ready"), "{log}");
    // Detached: its own session, not the client's.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    assert_eq!(fields[3], pid.to_string(), "the daemon leads its own session: {stat}");
}

#[test]
fn status_of_a_missing_path_is_a_daemon_error() {
    let env = Env::new();
    let out = env.ctl(&["status", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("/definitely/not/here"), "{}", text(&out.stderr));
}

#[test]
fn no_start_reports_unreachable_with_exit_3() {
    let env = Env::new();
    let out = env.ctl(&["--no-start", "ping"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("cannot reach ccmemd"), "{}", text(&out.stderr));

    let out = env.ctl_cmd(&["status"]).env("CCMEM_NO_AUTOSTART", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(env.daemons_running().is_empty(), "no daemon may have been started");
    assert!(!env.socket.exists());
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    assert_eq!(env.ctl(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(env.ctl(&["status", "a", "b"]).status.code(), Some(2));
}

#[test]
fn racing_clients_end_with_exactly_one_daemon() {
    let env = Env::new();
    let procs: Vec<_> = (0..8)
        .map(|_| {
            env.ctl_cmd(&["ping", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut pids = Vec::new();
    for p in procs {
        let out = p.wait_with_output().unwrap();
        assert_ok(&out, "racing ccmemctl ping");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        pids.push(v["pid"].as_u64().unwrap() as u32);
    }
    env.note_daemon();
    pids.dedup();
    assert_eq!(pids.len(), 1, "all clients must reach one daemon: {pids:?}");
    // Losers of the race exit on their own; give them a moment.
    assert!(
        wait_until(Duration::from_secs(5), || env.daemons_running() == pids),
        "exactly one ccmemd must remain: {:?} vs {pids:?}",
        env.daemons_running()
    );
}

#[test]
fn a_second_daemon_exits_0_when_one_is_live() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let out = env.daemon_cmd(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already running"), "{}", text(&out.stderr));
    assert_eq!(env.daemons_running().len(), 1);
}

#[test]
fn a_stale_socket_is_replaced() {
    let env = Env::new();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    // A socket file that nobody listens on, as a crashed daemon leaves behind.
    drop(UnixListener::bind(&env.socket).unwrap());
    assert!(env.socket.exists());
    let _d = env.start_daemon(&[]);
    assert_ok(&env.ctl(&["--no-start", "ping"]), "ping after stale socket");
}

#[test]
fn after_kill_9_the_next_client_starts_a_fresh_daemon() {
    let env = Env::new();
    let first = env.ctl_json(&["ping"])["pid"].as_u64().unwrap() as u32;
    unsafe { libc::kill(first as i32, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(5), || !alive(first)));
    assert!(env.socket.exists(), "kill -9 leaves the socket file behind");
    let second = env.ctl_json(&["ping"])["pid"].as_u64().unwrap() as u32;
    assert_ne!(first, second);
}

#[test]
fn sigterm_and_sigint_shut_down_gracefully() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let env = Env::new();
        let mut d = env.start_daemon(&[]);
        // A connected, idle client must not hold the shutdown up.
        let _idle = env.raw();
        let status = d.signal_and_wait(sig, Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "signal {sig}: {}", d.log());
        assert!(!env.socket.exists(), "socket removed");
        assert!(!env.pidfile().exists(), "pidfile removed");
        let log = d.log();
        assert!(log.contains("final checkpoint of every live project"), "{log}");
        assert!(log.contains("ccmemd stopped"), "{log}");
    }
}

#[test]
fn shutdown_command_stops_the_daemon_and_waits_for_it() {
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    let out = env.ctl(&["shutdown"]);
    assert_ok(&out, "ccmemctl shutdown");
    assert!(text(&out.stdout).contains(&format!("ccmemd (pid {}) stopped", d.pid)), "{}", text(&out.stdout));
    // `shutdown` returned only after the daemon released everything.
    assert!(!env.socket.exists() && !env.pidfile().exists());
    assert_eq!(d.wait(Duration::from_secs(5)).code(), Some(0));

    // Stopping a stopped daemon is not an error, and does not start one.
    let out = env.ctl(&["shutdown"]);
    assert_ok(&out, "second shutdown");
    assert!(text(&out.stdout).contains("not running"));
    assert!(env.daemons_running().is_empty());
}

#[test]
fn version_never_starts_a_daemon() {
    let env = Env::new();
    let v = env.ctl_json(&["version"]);
    assert_eq!(v["client"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(v["daemon"].is_null());
    assert!(env.daemons_running().is_empty());
    let _d = env.start_daemon(&[]);
    let v = env.ctl_json(&["version"]);
    assert_eq!(v["daemon"]["protocol_version"], 1);
}

#[test]
fn socket_can_be_moved_by_env_or_flag() {
    let env = Env::new();
    let alt_dir = env.path().join("alt");
    let alt = alt_dir.join("d.sock");
    let mut d = env.daemon_cmd(&[]);
    d.env("CCMEM_SOCKET", &alt);
    let d = Daemon::spawn(&mut d, env.path().join("alt.stderr"));
    d.wait_ready(&alt);
    assert_eq!(mode_of(&alt_dir), 0o700);
    assert!(alt_dir.join("d.pid").exists(), "pidfile beside the socket");
    assert!(!env.socket.exists(), "default socket untouched");
    let out = env.ctl(&["--socket", alt.to_str().unwrap(), "--no-start", "ping"]);
    assert_ok(&out, "ping via --socket");
    let out = env.ctl_cmd(&["--no-start", "ping"]).env("CCMEM_SOCKET", &alt).output().unwrap();
    assert_ok(&out, "ping via CCMEM_SOCKET");
}

#[test]
fn refuses_a_socket_directory_others_can_write() {
    // A socket the user names (`--socket`): refused, not moved (the default one moves to
    // the state dir instead: `a_runtime_directory_others_may_write_in_moves_the_socket`).
    let env = Env::new();
    let dir = env.path().join("open");
    std::fs::create_dir_all(&dir).unwrap();
    set_mode(&dir, 0o777);
    let socket = dir.join("ccmemd.sock");
    let s = socket.to_str().unwrap();
    let mut child = env.daemon_cmd(&["--socket", s]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "refused at once, not served");
    assert!(text(&out.stderr).contains("writable by others"), "{}", text(&out.stderr));
    // The client refuses it too, rather than talk to whatever might be there.
    let out = env.ctl(&["--socket", s, "--no-start", "ping"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("writable by others"), "{}", text(&out.stderr));
}

#[test]
fn refuses_to_replace_a_file_that_is_not_a_socket() {
    let env = Env::new();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    std::fs::write(&env.socket, "precious").unwrap();
    let out = env.daemon_cmd(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a socket"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&env.socket).unwrap(), "precious");
}

/// A daemon of another protocol version (played here by a tiny server on a real socket)
/// is named, and the client stops with exit 1.
#[test]
fn client_notices_a_daemon_of_another_protocol() {
    let env = Env::new();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    let listener = UnixListener::bind(&env.socket).unwrap();
    let server = std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).unwrap();
        assert!(line.contains("\"hello\""), "{line}");
        let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"daemon_version":"9.0.0","protocol_version":99,"pid":1,"compatible":false}}"#;
        s.write_all(format!("{reply}\n").as_bytes()).unwrap();
    });
    let out = env.ctl(&["--no-start", "status"]);
    server.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("9.0.0") && err.contains("protocol 99") && err.contains("ccmemctl shutdown"), "{err}");
}

/// Peers of another uid are refused by the daemon; a daemon of another uid is refused by the
/// client. Needs root to play two users; reported as ignored otherwise.
#[test]
#[cfg_attr(not(ccmem_root), ignore = "needs root to run a daemon as another user")]
fn other_users_are_refused_both_ways() {
    let env = Env::new();
    let d = env.start_daemon_as_nobody(&[]);
    // Root can reach the 0700 directory; the peer check is what stops it.
    let mut raw = env.raw();
    // The daemon may already have closed it: a failed write is part of being refused.
    let _ = std::io::Write::write_all(&mut raw.stream, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    assert!(raw.is_closed(), "a peer of another uid must get no answer");
    assert!(
        wait_until(Duration::from_secs(5), || d.log().contains("refused connection from another user")),
        "{}",
        d.log()
    );
    // The client refuses a socket directory owned by someone else (named: by default it
    // would use one of its own in the state dir)...
    let out = env.ctl(&["--no-start", "--socket", env.socket.to_str().unwrap(), "ping"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("owned by uid 65534"), "{}", text(&out.stderr));
    // ...and, reached through a directory of its own (a hard link to the same socket), a
    // daemon of another uid.
    let mine = env.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    set_mode(&mine, 0o700);
    let link = mine.join("ccmemd.sock");
    std::fs::hard_link(&env.socket, &link).unwrap();
    let out = env.ctl(&["--no-start", "--socket", link.to_str().unwrap(), "ping"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("runs as uid 65534"), "{}", text(&out.stderr));
}

#[test]
fn logs_are_json_lines_on_request_and_follow_rust_log() {
    let env = Env::new();
    let mut cmd = env.daemon_cmd(&["--log-format", "json"]);
    cmd.env("RUST_LOG", "debug");
    let mut d = Daemon::spawn(&mut cmd, env.path().join("json.stderr"));
    d.wait_ready(&env.socket);
    // A rejected message is logged at debug level.
    env.raw().call("not json");
    let status = d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    let log = d.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}")))
        .collect();
    assert!(lines.iter().any(|l| l["message"] == "ccmemd ready" && l["level"] == "INFO"), "{log}");
    assert!(lines.iter().any(|l| l["message"] == "rejected message" && l["level"] == "DEBUG"), "{log}");

    // At the default level, debug lines are not written.
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    env.raw().call("not json");
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    assert!(!d.log().contains("rejected message"), "{}", d.log());
}

/// `ccmemctl shutdown` works whatever the daemon's version: it asks without a handshake
/// (played here by a server of protocol 99 that answers `shutdown` and goes).
#[test]
fn shutdown_works_across_versions() {
    let env = Env::new();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    let listener = UnixListener::bind(&env.socket).unwrap();
    let socket = env.socket.clone();
    let server = std::thread::spawn(move || -> Vec<String> {
        use std::io::{BufRead, BufReader, Write};
        let mut seen = Vec::new();
        for conn in listener.incoming() {
            let mut s = conn.unwrap();
            let reader = BufReader::new(s.try_clone().unwrap());
            for line in reader.lines().map_while(Result::ok) {
                seen.push(line.clone());
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let result = match v["method"].as_str() {
                    Some("hello") => {
                        serde_json::json!({"daemon_version": "9.0.0", "protocol_version": 99, "pid": 1, "compatible": false})
                    }
                    Some("shutdown") => serde_json::json!({"pid": std::process::id()}),
                    _ => serde_json::json!(null),
                };
                let reply = serde_json::json!({"jsonrpc": "2.0", "id": v["id"], "result": result});
                s.write_all(format!("{reply}\n").as_bytes()).unwrap();
                if v["method"] == "shutdown" {
                    // It goes: the socket with it.
                    std::fs::remove_file(&socket).unwrap();
                    return seen;
                }
            }
        }
        seen
    });
    let out = env.ctl(&["--no-start", "shutdown"]);
    let seen = server.join().unwrap();
    assert_ok(&out, "shutdown of a daemon of another version");
    assert!(seen.iter().any(|l| l.contains("\"shutdown\"")), "{seen:?}");
}

/// Without `XDG_RUNTIME_DIR` the socket goes in the shared temp directory's `ccmem-<uid>`. A
/// co-user who makes that directory first (one that is not this user's, or one others can
/// write) cannot stop ccmem for good: it is refused, and ccmem uses a directory in its state
/// directory, which only this user can make; the log and `doctor` say so.
#[test]
fn a_socket_directory_taken_by_someone_else_moves_the_socket_not_stops_ccmem() {
    let env = Env::new();
    let tmp = env.path().join("shared-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    set_mode(&tmp, 0o1777);
    let uid = unsafe { libc::geteuid() };
    let squatted = tmp.join(format!("ccmem-{uid}"));
    std::fs::create_dir(&squatted).unwrap();
    let root_user = uid == 0;
    if root_user {
        // A co-user's (nobody's) directory.
        let c = std::ffi::CString::new(squatted.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        set_mode(&squatted, 0o755);
    } else {
        set_mode(&squatted, 0o777);
    }
    let shared = |args: &[&str]| {
        let mut c = env.ctl_cmd(args);
        c.env_remove("XDG_RUNTIME_DIR").env("TMPDIR", &tmp);
        c.output().unwrap()
    };
    let out = shared(&["status"]);
    env.note_daemon();
    assert_ok(&out, "status starts a daemon all the same");
    let moved = env.state.join("ccmem/run/ccmemd.sock");
    assert!(moved.exists(), "the socket is in the state directory");
    assert_eq!(mode_of(moved.parent().unwrap()), 0o700);
    assert_eq!(std::fs::read_dir(&squatted).unwrap().count(), 0, "nothing of ccmem's in the squatted directory");
    let doctor = text(&shared(&["doctor"]).stdout);
    assert!(doctor.contains("the socket is in") && doctor.contains("instead"), "{doctor}");
    assert_ok(&shared(&["shutdown"]), "shutdown");
}

/// Round three's tester: an `XDG_RUNTIME_DIR` others may write in (a co-user's, mode 0777)
/// was taken as it came, and a co-user who swapped its `ccmem/` for a directory of their own
/// stopped ccmem for good. Such a runtime directory is not this user's private one: the
/// socket goes in the state directory, and `doctor` says so.
#[test]
fn a_runtime_directory_others_may_write_in_moves_the_socket() {
    let env = Env::new();
    let run = env.path().join("open-run");
    std::fs::create_dir_all(run.join("ccmem")).unwrap();
    set_mode(&run, 0o777);
    let open = |args: &[&str]| {
        let mut c = env.ctl_cmd(args);
        c.env("XDG_RUNTIME_DIR", &run);
        c.output().unwrap()
    };
    let out = open(&["status"]);
    env.note_daemon();
    assert_ok(&out, "status starts a daemon all the same");
    assert!(env.state.join("ccmem/run/ccmemd.sock").exists(), "the socket is in the state directory");
    assert_eq!(std::fs::read_dir(run.join("ccmem")).unwrap().count(), 0, "nothing in the open runtime directory");
    let doctor = text(&open(&["doctor"]).stdout);
    assert!(doctor.contains("XDG_RUNTIME_DIR") && doctor.contains("instead"), "{doctor}");
    assert_ok(&open(&["shutdown"]), "shutdown");
}
