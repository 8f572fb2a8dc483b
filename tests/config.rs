//! Configuration end to end: the file, its precedence under flags, per-project overrides,
//! reload by SIGHUP and by `ccmemctl config reload`, and bad files.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;

fn config_file(env: &Env) -> std::path::PathBuf {
    let dir = env.path().join("config/ccmem");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("config.toml")
}

fn entry(show: &Value, key: &str) -> (String, String) {
    let e =
        show["entries"].as_array().unwrap().iter().find(|e| e["key"] == key).unwrap_or_else(|| panic!("{key}: {show}"));
    (e["value"].as_str().unwrap().to_string(), e["source"].as_str().unwrap().to_string())
}

#[test]
fn a_bad_file_stops_the_start_naming_key_and_file() {
    let env = Env::new();
    let f = config_file(&env);
    for (body, want) in
        [("sesion_ttl = \"2h\"\n", "unknown key `sesion_ttl`"), ("[watch]\nqueue = -1\n", "key `watch.queue`")]
    {
        std::fs::write(&f, body).unwrap();
        let out = env.daemon_cmd(&[]).output().unwrap();
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(err.contains(want) && err.contains(f.to_str().unwrap()), "{err}");
    }
    assert!(!env.socket.exists());
    assert!(!env.pidfile().exists(), "a refused start leaves no pidfile");
}

#[test]
fn layers_show_their_sources_and_reloads_apply_or_keep_the_previous() {
    let env = Env::new();
    let f = config_file(&env);
    std::fs::write(&f, "session_ttl = \"2h\"\ncontext_budget = 800\n[ports]\nscan_interval = \"off\"\n").unwrap();
    let mut d = env.start_daemon(&["--context-budget", "900"]);
    let app = repo(&env, "app");
    assert_ok(&env.ctl(&["watch", app.to_str().unwrap()]), "watch");

    let show = env.ctl_json(&["config", "show"]);
    assert_eq!(entry(&show, "session_ttl"), ("2h".into(), format!("config file {}", f.display())));
    assert_eq!(entry(&show, "context_budget").0, "900", "the flag wins over the file");
    assert!(entry(&show, "context_budget").1.starts_with("command line"));
    assert_eq!(entry(&show, "checkpoint_interval"), ("15m".into(), "default".into()));
    let left = env.project_status(&app)["expires_in_secs"].as_f64().unwrap();
    assert!(left <= 7200.0 && left > 7000.0, "{left}");

    // A bad file on SIGHUP: logged, and the previous configuration stays.
    std::fs::write(&f, "session_ttl = \"later\"\n").unwrap();
    unsafe { libc::kill(d.pid as i32, libc::SIGHUP) };
    assert!(wait_until(Duration::from_secs(10), || d.log().contains("configuration not reloaded")), "{}", d.log());
    // `config show` gives the values in force, and fails on the file as it is.
    let out = env.ctl(&["config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let show: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(entry(&show, "session_ttl").0, "2h");
    assert!(show["problem"].as_str().is_some_and(|p| p.contains("key `session_ttl`")), "{show}");
    let out = env.ctl(&["config", "reload"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("key `session_ttl`") && text(&out.stderr).contains("previous configuration stays")
    );

    // A good one applies at once: live sessions take the new TTL.
    std::fs::write(&f, "session_ttl = \"1h\"\n").unwrap();
    unsafe { libc::kill(d.pid as i32, libc::SIGHUP) };
    assert!(wait_until(Duration::from_secs(10), || entry(&env.ctl_json(&["config", "show"]), "session_ttl").0 == "1h"));
    assert!(
        wait_until(Duration::from_secs(10), || env.project_status(&app)["expires_in_secs"].as_f64().unwrap() <= 3600.0)
    );
    std::fs::write(&f, "session_ttl = \"3h\"\n").unwrap();
    let r = env.ctl_json(&["config", "reload"]);
    assert_eq!(entry(&r, "session_ttl").0, "3h");
    assert!(d.log().contains("configuration reloaded"));
    let _ = d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
}

#[test]
fn a_project_overrides_its_keys_and_ignores_trees() {
    let env = Env::new();
    let f = config_file(&env);
    std::fs::write(&f, "[watch]\nignore = [\"*.tmp\"]\n").unwrap();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    std::fs::create_dir_all(app.join(".claude")).unwrap();
    std::fs::create_dir_all(app.join("fixtures/big")).unwrap();
    std::fs::write(app.join(".claude/ccmem.toml"), "session_ttl = \"30m\"\n[watch]\nignore = [\"fixtures/\"]\n")
        .unwrap();
    assert_ok(&env.ctl(&["watch", app.to_str().unwrap()]), "watch");
    let st = settle(&env, &app, |st| st["watch"]["ready"] == true);
    assert!(st["expires_in_secs"].as_f64().unwrap() <= 1800.0, "{st}");
    let show = env.ctl_json(&["config", "show", app.to_str().unwrap()]);
    assert_eq!(entry(&show, "session_ttl").0, "30m");
    assert!(entry(&show, "session_ttl").1.starts_with("project file"));

    std::fs::write(app.join("fixtures/big/data.json"), "{}").unwrap();
    std::fs::write(app.join("scratch.tmp"), "x").unwrap();
    std::fs::write(app.join("counted.rs"), "fn x() {}").unwrap();
    let st = settle(&env, &app, |st| st["session"]["files_modified"].get("counted.rs").is_some());
    let files = st["session"]["files_modified"].as_object().unwrap();
    assert!(!files.contains_key("fixtures/big/data.json") && !files.contains_key("scratch.tmp"), "{files:?}");

    std::fs::write(app.join(".claude/ccmem.toml"), "keep_sessions = 2\n").unwrap();
    let show = env.ctl_json(&["config", "show", app.to_str().unwrap()]);
    assert!(show["warnings"][0].as_str().unwrap().contains("unknown key `keep_sessions`"), "{show}");
}

/// The environment's layer: CCMEM_CONFIG names the file, CCMEM_* variables win over it, and
/// flags win over both.
#[test]
fn environment_variables_sit_between_the_file_and_the_flags() {
    let env = Env::new();
    let f = env.path().join("elsewhere.toml");
    std::fs::write(&f, "checkpoint_interval = \"30m\"\nsession_ttl = \"3h\"\n[ports]\nscan_interval = \"20s\"\n")
        .unwrap();
    let patterns = env.path().join("patterns.txt");
    std::fs::write(&patterns, "ticket = \\bTICKET-\\d{4}\\b\n").unwrap();
    let mut cmd = env.daemon_cmd(&["--session-ttl", "5h"]);
    cmd.env("CCMEM_CONFIG", &f)
        .env("CCMEM_CHECKPOINT_INTERVAL", "45m")
        .env("CCMEM_PORT_SCAN_INTERVAL", "off")
        .env("CCMEM_SESSION_TTL", "4h")
        .env("CCMEM_REDACT_PATTERNS", &patterns);
    let d = Daemon::spawn(&mut cmd, env.path().join("env.stderr"));
    d.wait_ready(&env.socket);
    let show = env.ctl_json(&["config", "show"]);
    assert_eq!(show["file"], serde_json::json!(f), "{show}");
    let (v, src) = entry(&show, "checkpoint_interval");
    assert_eq!(v, "45m", "the variable wins over the file");
    assert!(src.contains("CCMEM_CHECKPOINT_INTERVAL"), "{src}");
    assert_eq!(entry(&show, "ports.scan_interval").0, "off");
    let (v, src) = entry(&show, "session_ttl");
    assert_eq!(v, "5h", "the flag wins over the variable and the file");
    assert!(src.starts_with("command line"), "{src}");
    // The patterns file the variable names is in force.
    let app = repo(&env, "app");
    env.event(&app, serde_json::json!({"kind": "note", "text": "see TICKET-1234 for the outage"}));
    let st = env.project_status(&app).to_string();
    assert!(st.contains("[REDACTED:ticket]") && !st.contains("TICKET-1234"), "{st}");
}

/// `--config-template` prints every key, commented, and the file it prints is a valid
/// configuration that gives the defaults.
#[test]
fn the_config_template_is_a_valid_file_of_the_defaults() {
    let env = Env::new();
    let out = env.daemon_cmd(&["--config-template"]).output().unwrap();
    assert_ok(&out, "--config-template");
    let template = text(&out.stdout);
    let bare = env.start_daemon(&[]);
    let defaults = env.ctl_json(&["config", "show"]);
    drop(bare);
    // The knowledge memories' settings (`memory.*`) live in their config.json, not here.
    for e in
        defaults["entries"].as_array().unwrap().iter().filter(|e| !e["key"].as_str().unwrap().starts_with("memory."))
    {
        let key = e["key"].as_str().unwrap();
        let leaf = key.rsplit('.').next().unwrap();
        assert!(template.contains(&format!("{leaf} = ")), "{key} is not in the template:\n{template}");
    }
    let f = config_file(&env);
    std::fs::write(&f, &template).unwrap();
    let _d = env.start_daemon(&[]);
    let show = env.ctl_json(&["config", "show"]);
    // The knowledge memories' settings (`memory.*`) live in their config.json, not here.
    for e in
        defaults["entries"].as_array().unwrap().iter().filter(|e| !e["key"].as_str().unwrap().starts_with("memory."))
    {
        let key = e["key"].as_str().unwrap();
        assert_eq!(entry(&show, key).0, e["value"].as_str().unwrap(), "{key}");
    }
}
