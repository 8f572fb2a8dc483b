//! Running as a user service: the units pass `systemd-analyze verify`, a real socket
//! activation (`systemd-socket-activate`) serves `ccmemctl status` on the inherited socket
//! and leaves it in place, the launchd plist is well-formed, `service install` writes the
//! right files into a temp HOME; doctor, completions and the man page.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

/// Installs the units with `ccmemctl service install` into the env's config dir.
fn install(env: &Env) -> std::process::Output {
    let out = env.ctl(&["service", "install"]);
    assert_ok(&out, "service install");
    out
}

#[test]
fn service_install_writes_units_that_systemd_accepts() {
    let env = Env::new();
    let out = install(&env);
    let said = text(&out.stdout);
    let dir = env.path().join("config/systemd/user");
    let socket = std::fs::read_to_string(dir.join("ccmemd.socket")).unwrap();
    let service = std::fs::read_to_string(dir.join("ccmemd.service")).unwrap();
    assert!(
        socket.contains("ListenStream=%t/ccmem/ccmemd.sock")
            && socket.contains("SocketMode=0600")
            && socket.contains("DirectoryMode=0700")
    );
    let exe = std::fs::canonicalize(CCMEMD).unwrap();
    assert!(service.contains(&format!("ExecStart=\"{}\"", exe.display())), "{service}");
    assert!(service.contains("Type=notify") && service.contains("Restart=on-failure"));
    if said.contains("no systemd user manager") {
        println!("no user service manager here: enabling was skipped, as the command said");
    }

    let status = text(&env.ctl(&["service", "status"]).stdout);
    assert!(status.contains(&format!("starts {} (version {})", exe.display(), env!("CARGO_PKG_VERSION"))), "{status}");
    // A unit pointing at a binary that moved is called out.
    std::fs::write(dir.join("ccmemd.service"), service.replace(&exe.display().to_string(), "/gone/ccmemd")).unwrap();
    let status = text(&env.ctl(&["service", "status"]).stdout);
    assert!(status.contains("warning: it starts /gone/ccmemd, which does not exist any more"), "{status}");

    let out = env.ctl(&["service", "uninstall"]);
    assert_ok(&out, "uninstall");
    assert!(!dir.join("ccmemd.service").exists() && !dir.join("ccmemd.socket").exists());
}

#[test]
#[cfg_attr(not(ccmem_systemd_analyze), ignore = "needs systemd-analyze (then touch build.rs)")]
fn the_units_pass_systemd_analyze_verify() {
    let env = Env::new();
    install(&env);
    let dir = env.path().join("config/systemd/user");
    let verify = |unit_dir: &std::path::Path| {
        Command::new("systemd-analyze")
            .args(["verify", "--user"])
            .arg(unit_dir.join("ccmemd.socket"))
            .arg(unit_dir.join("ccmemd.service"))
            .env("XDG_RUNTIME_DIR", &env.runtime)
            .env("HOME", &env.home)
            .output()
            .unwrap()
    };
    let out = verify(&dir);
    assert!(out.status.success() && out.stderr.is_empty(), "systemd-analyze verify: {}", text(&out.stderr));
    // And it does catch a broken unit.
    let broken = env.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::copy(dir.join("ccmemd.socket"), broken.join("ccmemd.socket")).unwrap();
    std::fs::write(
        broken.join("ccmemd.service"),
        std::fs::read_to_string(dir.join("ccmemd.service")).unwrap().replace("Type=notify", "Type=notifyy"),
    )
    .unwrap();
    let out = verify(&broken);
    assert!(!out.stderr.is_empty() || !out.status.success(), "a bad Type= goes unnoticed");
}

#[test]
#[cfg_attr(not(ccmem_socket_activate), ignore = "needs systemd-socket-activate (then touch build.rs)")]
fn socket_activation_serves_on_the_inherited_socket_and_leaves_it() {
    let env = Env::new();
    let dir = env.socket.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    set_mode(dir, 0o700);
    let mut cmd = Command::new("systemd-socket-activate");
    env.apply(&mut cmd);
    cmd.arg("-l").arg(&env.socket).arg(CCMEMD);
    let mut activator = Daemon::spawn(&mut cmd, env.path().join("activate.stderr"));
    assert!(wait_until(Duration::from_secs(10), || env.socket.exists()), "the activator did not listen");
    assert!(env.daemons_running().is_empty(), "ccmemd starts on the first connection, not before");

    let out = env.ctl(&["--no-start", "status", "--json"]);
    assert_ok(&out, "status through the activated socket");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pid = v["daemon"]["pid"].as_u64().unwrap() as u32;
    assert_eq!(v["daemon"]["socket"], env.socket.to_str().unwrap());
    assert_eq!(mode_of(&env.socket) & 0o777, 0o600, "ccmemd makes an inherited socket of ours private");
    let log = activator.log();
    assert!(
        log.contains("activated=true") && log.contains("serving on the socket passed by the service manager"),
        "{log}"
    );

    assert_ok(&env.ctl(&["--no-start", "shutdown"]), "shutdown");
    assert!(wait_until(Duration::from_secs(10), || !alive(pid)));
    assert!(env.socket.exists(), "a socket the service manager made is not ccmemd's to remove");
    let _ = activator.signal_and_wait(libc::SIGTERM, Duration::from_secs(5));
}

#[test]
fn a_non_socket_descriptor_is_refused() {
    let env = Env::new();
    // LISTEN_FDS claims fd 3 for us, but it is an ordinary file.
    let file = env.path().join("not-a-socket");
    std::fs::write(&file, "x").unwrap();
    let mut cmd = Command::new("sh");
    env.apply(&mut cmd);
    cmd.arg("-c").arg("export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$0\" 3<\"$1\"").arg(CCMEMD).arg(&file);
    // Bounded: a daemon that wrongly served instead would be stopped by its guard.
    let mut d = Daemon::spawn(&mut cmd, env.path().join("refused.stderr"));
    assert!(!d.wait(Duration::from_secs(10)).success());
    assert!(d.log().contains("is not a socket"), "{}", d.log());
}

#[test]
fn the_launchd_plist_is_well_formed() {
    let plist = include_str!("../launchd/dev.ccmem.ccmemd.plist");
    // (plutil is macOS's; this file runs on Linux.) Balanced tags and the keys launchd needs.
    let mut stack: Vec<&str> = Vec::new();
    for tag in plist.split('<').skip(1).map(|t| t.split('>').next().unwrap_or("")) {
        if tag.starts_with('?') || tag.starts_with('!') || tag.ends_with('/') {
            continue;
        }
        match tag.strip_prefix('/') {
            Some(close) => assert_eq!(stack.pop(), Some(close), "unbalanced </{close}>"),
            None => stack.push(tag.split_whitespace().next().unwrap_or(tag)),
        }
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    for key in ["Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "Crashed", "StandardErrorPath"] {
        assert!(plist.contains(&format!("<key>{key}</key>")), "{key}");
    }
    assert!(plist.contains("@CCMEMD@") && plist.contains("@HOME@/Library/Logs/ccmem/"));
}

#[test]
fn doctor_completions_and_man_page() {
    let env = Env::new();
    let out = env.ctl(&["doctor", "--json"]);
    assert_ok(&out, "doctor");
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = checks.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    for n in
        ["daemon", "socket permissions", "user service", "agent hooks", "inotify watches", "git", "state directory"]
    {
        assert!(names.contains(&n), "{n} not in {names:?}");
    }
    assert!(env.daemons_running().is_empty(), "doctor never starts the daemon");
    let hooks = checks.as_array().unwrap().iter().find(|c| c["name"] == "agent hooks").unwrap();
    assert!(hooks["fix"].as_str().unwrap().contains("ccmemctl hooks install"));

    // A socket directory others can read is a failure with its fix.
    let _d = env.start_daemon(&[]);
    set_mode(env.socket.parent().unwrap(), 0o755);
    let out = env.ctl(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("✗ socket permissions") && text(&out.stdout).contains("fix: `chmod 700"),
        "{}",
        text(&out.stdout)
    );
    set_mode(env.socket.parent().unwrap(), 0o700);

    for shell in ["bash", "zsh", "fish"] {
        let out = env.ctl(&["completions", shell]);
        assert_ok(&out, shell);
        let t = text(&out.stdout);
        assert!(t.contains("ccmemctl") && t.contains("test-report") && t.contains("service"), "{shell}");
    }
    let man = env.ctl(&["man"]);
    assert_ok(&man, "man");
    let t = text(&man.stdout);
    assert!(t.starts_with(".ie") && t.contains(".TH ccmemctl 1") && t.contains("doctor"), "{t}");
}

#[test]
fn type_notify_says_ready_pings_the_watchdog_and_says_stopping() {
    use std::os::unix::net::UnixDatagram;
    let env = Env::new();
    let path = env.path().join("notify.sock");
    let listener = UnixDatagram::bind(&path).unwrap();
    listener.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut cmd = env.daemon_cmd(&[]);
    cmd.env("NOTIFY_SOCKET", &path).env("WATCHDOG_USEC", "200000");
    let mut d = Daemon::spawn(&mut cmd, env.path().join("notify.stderr"));
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.iter().filter(|m: &&String| m.as_str() == "WATCHDOG=1").count() < 2 {
        let n = listener
            .recv(&mut buf)
            .unwrap_or_else(|e| panic!("no notification ({e}); so far {got:?}; log:\n{}", d.log()));
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    assert_eq!(got[0], format!("READY=1\nMAINPID={}", d.pid), "READY first, once accepting");
    assert_ok(&env.ctl(&["--no-start", "ping"]), "ping after READY");
    let _ = d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    let mut rest = Vec::new();
    while let Ok(n) = listener.recv(&mut buf) {
        rest.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        if rest.last().is_some_and(|m| m == "STOPPING=1") {
            break;
        }
    }
    assert!(rest.iter().any(|m| m == "STOPPING=1"), "{rest:?}");
}

/// `service start` and `stop` say what there is to do when there is no service to act on:
/// not installed, or no user service manager here (this machine, unless it runs one).
#[test]
fn service_start_and_stop_say_what_to_do_instead() {
    let env = Env::new();
    for (verb, hint) in [("start", "starts it on demand"), ("stop", "ccmemctl shutdown")] {
        let out = env.ctl(&["service", verb]);
        assert_eq!(out.status.code(), Some(1), "{verb}");
        let err = text(&out.stderr);
        assert!(err.contains("not installed as a user service") && err.contains(hint), "{verb}: {err}");
    }
    install(&env);
    let manager = std::process::Command::new("systemctl").args(["--user", "is-system-running"]).output();
    if manager.is_ok_and(|o| !o.stdout.is_empty() && !text(&o.stdout).contains("offline")) {
        return; // A real user manager: start and stop act on it (not tested here, to leave it alone).
    }
    let out = env.ctl(&["service", "stop"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("no systemd user manager") && err.contains("ccmemctl shutdown"), "{err}");
    assert_ok(&env.ctl(&["service", "uninstall"]), "uninstall");
}

/// Doctor's other failures: hooks whose program is gone, and a stale socket with no daemon
/// behind it; each with its fix, exit 1.
#[test]
fn doctor_names_gone_hook_programs_and_a_stale_socket() {
    let env = Env::new();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::write(
        env.home.join(".claude/settings.json"),
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/gone/ccmemctl hook"}]}]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(env.socket.parent().unwrap()).unwrap();
    set_mode(env.socket.parent().unwrap(), 0o700);
    drop(std::os::unix::net::UnixListener::bind(&env.socket).unwrap());
    let out = env.ctl(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = |n: &str| checks.as_array().unwrap().iter().find(|c| c["name"] == n).cloned().unwrap();
    let hooks = check("agent hooks");
    assert_eq!(hooks["status"], "fail", "{hooks}");
    assert!(hooks["detail"].as_str().unwrap().contains("/gone/ccmemctl, which cannot be found"), "{hooks}");
    assert!(hooks["fix"].as_str().unwrap().contains("ccmemctl hooks install"), "{hooks}");
    let daemon = check("daemon");
    assert!(daemon["status"] != "ok" && daemon["detail"].as_str().unwrap().contains("not running"), "{daemon}");
    assert!(env.daemons_running().is_empty(), "doctor never starts the daemon");
}
