//! The npm route, as a user without Rust takes it: the packages made as the release makes
//! them (`npm/stage.mjs`, from the programs under test), packed and installed with the real
//! npm into a prefix of their own (`npm i -g`), then used: status, a hook, `hooks install`,
//! `doctor`. What must hold: the `ccmemctl` npm puts on PATH is the native program (no node
//! on an agent's hook), with or without install scripts; the daemon it starts is the one
//! beside it; the hooks it installs name a native program; and a broken install says so to
//! the user while the hook stays silent for the agent.
//!
//! Offline: the tarballs hold everything. Without npm the tests are listed as ignored
//! (build.rs). The cost of a hook through this route is measured by `cargo bench --bench
//! install`.
#![cfg(unix)]

mod common;

use common::npm::{self, Packages};
use common::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

/// The packages, made once per test run (staging and packing take a few seconds).
fn packages() -> &'static Packages {
    static PACKAGES: OnceLock<Packages> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("npm-packages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        npm::pack(Path::new(CCMEMCTL).parent().expect("bin dir"), &out, None, true)
    })
}

/// A prefix for `npm i -g` inside the test's environment, with a space in it, as a Windows
/// profile or a macOS volume name may have: the hook command must then be quoted.
fn prefix(env: &Env) -> PathBuf {
    env.path().join("npm global")
}

fn installed(env: &Env, extra: &[&str]) -> PathBuf {
    let p = packages();
    let prefix = prefix(env);
    let out = npm::install(&prefix, &[&p.platform, &p.main], extra);
    assert_ok(&out, "npm install -g");
    prefix
}

/// `program` from the prefix's bin/, in the test's environment, in `dir`.
fn run(env: &Env, prefix: &Path, program: &str, args: &[&str], dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(prefix.join("bin").join(program));
    env.apply(&mut cmd);
    cmd.args(args).current_dir(dir);
    cmd
}

/// `ctl hook` in the test's environment, its time limits raised as `hook` raises them.
fn hook_cmd(env: &Env, ctl: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(ctl);
    env.apply(&mut cmd);
    cmd.arg("hook").env("CCMEM_HOOK_TIMEOUT_MS", "20000");
    cmd
}

fn hook_through(env: &Env, ctl: &Path, payload: Value) -> std::process::Output {
    feed(env, hook_cmd(env, ctl), payload.to_string().as_bytes())
}

fn user_settings(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.home.join(".claude/settings.json")).expect("settings.json");
    serde_json::from_str(&text).expect("settings JSON")
}

/// The program every ccmem hook command in the user's settings runs.
fn hook_programs(env: &Env) -> Vec<PathBuf> {
    let settings = user_settings(env);
    let mut found: Vec<PathBuf> = settings["hooks"]
        .as_object()
        .expect("hooks")
        .values()
        .flat_map(|groups| groups.as_array().cloned().unwrap_or_default())
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(|c| PathBuf::from(c.trim_end_matches(" hook").trim_matches('\''))))
        .collect();
    found.dedup();
    found
}

/// The user's settings: the ccmem plugin enabled, and no hooks of their own.
fn enable_plugin_only(env: &Env) {
    std::fs::create_dir_all(env.home.join(".claude")).expect("mkdir");
    let settings = json!({"enabledPlugins": {"ccmem@ccmem": true}});
    std::fs::write(env.home.join(".claude/settings.json"), settings.to_string()).expect("settings");
}

fn doctor_check(env: &Env, name: &str, path_dirs: &[&Path], dir: &Path) -> Value {
    let mut cmd = env.ctl_cmd(&["doctor", "--json"]);
    let path: Vec<PathBuf> =
        path_dirs.iter().map(|d| d.to_path_buf()).chain([PathBuf::from("/usr/bin"), "/bin".into()]).collect();
    cmd.env("PATH", std::env::join_paths(path).expect("PATH")).current_dir(dir);
    let out = cmd.output().expect("doctor");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("doctor: {}", text(&out.stdout)));
    v.as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name).cloned())
        .unwrap_or_else(|| panic!("no {name} check: {v}"))
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn npm_puts_the_native_programs_on_path_and_they_work() {
    let env = Env::new();
    let root = repo(&env, "app");
    let prefix = installed(&env, &[]);
    // The commands npm linked are the native programs themselves: no node on the hook path.
    for program in ["ccmemctl", "ccmemd", "ccmem-mcp"] {
        let linked = prefix.join("bin").join(program);
        assert!(npm::is_native(&linked), "{} is not the native {program}", linked.display());
    }
    let ctl = prefix.join("bin/ccmemctl");

    // status starts the daemon beside it: the npm-installed one, not one from elsewhere.
    let out = run(&env, &prefix, "ccmemctl", &["status"], &root).output().expect("status");
    env.note_daemon();
    assert_ok(&out, "ccmemctl status (npm)");
    let pid = env.pidfile_pid().expect("a daemon was started");
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("daemon exe");
    assert!(exe.starts_with(&prefix), "the daemon started is {}, not the npm-installed one", exe.display());

    // A hook through it is recorded.
    let out =
        hook_through(&env, &ctl, ev(&root, "npm-conv", "UserPromptSubmit", json!({"prompt": "ship the npm route"})));
    assert_ok(&out, "hook (npm)");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}{}", text(&out.stdout), text(&out.stderr));
    settle(&env, &root, |s| s.to_string().contains("ship the npm route"));

    // `hooks install` writes a native program's path, inside the npm install.
    let out = run(&env, &prefix, "ccmemctl", &["hooks", "install"], &root).output().expect("hooks install");
    assert_ok(&out, "hooks install (npm)");
    let programs = hook_programs(&env);
    assert_eq!(programs.len(), 1, "{programs:?}");
    assert!(programs[0].starts_with(&prefix) && npm::is_native(&programs[0]), "{programs:?}");
    let check = doctor_check(&env, "agent hooks", &[], &root);
    assert_eq!(check["status"], "ok", "{check}");

    // The plugin's hooks run `ccmemctl` by name: doctor finds npm's, native.
    enable_plugin_only(&env);
    let check = doctor_check(&env, "agent hooks", &[&prefix.join("bin")], &root);
    assert_eq!(check["status"], "ok", "{check}");
    assert!(check["detail"].as_str().is_some_and(|d| d.contains(&prefix.display().to_string())), "{check}");
    // And says when there is none on PATH.
    let check = doctor_check(&env, "agent hooks", &[], &root);
    assert_eq!(check["status"], "fail", "{check}");
}

/// Where install scripts do not run (`--ignore-scripts`; pnpm and bun unless allowed), the
/// stand-ins work through node, even several first runs at once, and never replace
/// themselves (pnpm's commands run `node <stand-in>` whatever it holds); doctor says the
/// plugin's hooks would start node until `npm rebuild` runs the install script.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn without_install_scripts_the_stand_ins_work_until_a_rebuild() {
    let env = Env::new();
    let root = repo(&env, "app");
    let prefix = installed(&env, &["--ignore-scripts"]);
    let linked = prefix.join("bin/ccmemctl");
    assert!(!npm::is_native(&linked), "install.js ran despite --ignore-scripts");

    enable_plugin_only(&env);
    let check = doctor_check(&env, "agent hooks", &[&prefix.join("bin")], &root);
    assert_eq!(check["status"], "warn", "{check}");
    assert!(check["detail"].as_str().is_some_and(|d| d.contains("starts node")), "{check}");
    assert!(check["fix"].as_str().is_some_and(|d| d.contains("npm rebuild -g ccmem")), "{check}");

    // Several first hooks at once (a session's start runs more than one): each is recorded,
    // exits 0 and says nothing.
    let mut children: Vec<_> = (0..6)
        .map(|_| {
            hook_cmd(&env, &linked)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("hook")
        })
        .collect();
    for (i, child) in children.iter_mut().enumerate() {
        let payload = ev(&root, "npm-conv", "UserPromptSubmit", json!({"prompt": format!("through the stand-in {i}")}));
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    let hooks: Vec<_> = children.into_iter().map(|c| c.wait_with_output().expect("hook")).collect();
    env.note_daemon();
    for out in &hooks {
        assert_ok(out, "hook (stand-in)");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}{}", text(&out.stdout), text(&out.stderr));
    }
    settle(&env, &root, |s| (0..6).all(|i| s.to_string().contains(&format!("through the stand-in {i}"))));
    assert!(!npm::is_native(&linked), "a stand-in replaced itself at run time");

    // npm rebuild runs the install script: the native programs take the stand-ins' place.
    let out = std::process::Command::new("npm")
        .args(["rebuild", "--global", "--offline", "--loglevel=warn", "--prefix"])
        .arg(&prefix)
        .arg("ccmem")
        .output()
        .expect("npm rebuild");
    assert_ok(&out, "npm rebuild -g ccmem");
    for program in ["ccmemctl", "ccmemd", "ccmem-mcp"] {
        assert!(npm::is_native(&prefix.join("bin").join(program)), "{program} is still the stand-in");
    }
    let check = doctor_check(&env, "agent hooks", &[&prefix.join("bin")], &root);
    assert_eq!(check["status"], "ok", "{check}");
}

/// `hooks install` run through a stand-in writes the native program's path: the hooks
/// never go through node, whatever the install.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn hooks_installed_through_a_stand_in_name_the_native_program() {
    let env = Env::new();
    let root = repo(&env, "app");
    let prefix = installed(&env, &["--ignore-scripts"]);
    let out = run(&env, &prefix, "ccmemctl", &["hooks", "install"], &root).output().expect("hooks install");
    assert_ok(&out, "hooks install (stand-in)");
    let programs = hook_programs(&env);
    assert_eq!(programs.len(), 1, "{programs:?}");
    assert!(programs[0].starts_with(&prefix) && npm::is_native(&programs[0]), "{programs:?}");
    assert!(!npm::is_native(&prefix.join("bin/ccmemctl")));
    let check = doctor_check(&env, "agent hooks", &[], &root);
    assert_eq!(check["status"], "ok", "{check}");
}

/// Installed without its platform package (`--omit=optional`, or a machine with no build):
/// the install fails saying what is missing; forced through without scripts, each command
/// fails saying so, and the agent's hook exits 0 without a word.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn without_the_platform_package_commands_say_so_and_hooks_stay_silent() {
    let env = Env::new();
    let root = repo(&env, "app");
    let prefix = prefix(&env);
    let missing = format!("@ccmem/{}", npm::platform_key());
    let out = npm::install(&prefix, &[&packages().main], &[]);
    assert!(!out.status.success(), "installed without {missing}");
    assert!(text(&out.stderr).contains(&missing), "install said: {}", text(&out.stderr));
    assert!(!prefix.join("bin/ccmemctl").exists(), "a failed install left a runnable ccmemctl on PATH");

    let out = npm::install(&prefix, &[&packages().main], &["--ignore-scripts"]);
    assert_ok(&out, "npm install -g --ignore-scripts (main package alone)");
    let out = run(&env, &prefix, "ccmemctl", &["status"], &root).output().expect("status");
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(said.contains(&missing) && said.contains("npm i -g ccmem"), "{said}");
    let out =
        hook_through(&env, &prefix.join("bin/ccmemctl"), ev(&root, "c", "SessionStart", json!({"source": "startup"})));
    assert_ok(&out, "hook without programs");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(env.pidfile_pid().is_none());
}

/// A platform package whose programs are another version (a stale or mixed install) is
/// refused at install, before any hook can run it.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn programs_of_another_version_are_refused_at_install() {
    let env = Env::new();
    let out = env.path().join("packages-9.9.9");
    let other = npm::pack(Path::new(CCMEMCTL).parent().expect("bin dir"), &out, Some("9.9.9"), true);
    let prefix = prefix(&env);
    let res = npm::install(&prefix, &[&other.platform, &other.main], &[]);
    assert!(!res.status.success(), "npm installed programs that say they are {}", npm::VERSION);
    let said = text(&res.stderr);
    assert!(said.contains(&format!("ccmemctl {}", npm::VERSION)) && said.contains("9.9.9"), "{said}");
    assert!(!prefix.join("bin/ccmemctl").exists(), "a failed install left a runnable ccmemctl on PATH");
}

/// The staging script refuses a build for another platform, and bad arguments.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm")]
fn staging_refuses_a_build_for_another_platform() {
    let env = Env::new();
    let bin_dir = Path::new(CCMEMCTL).parent().expect("bin dir");
    let other = if npm::platform_key() == "darwin-arm64" { "linux-x64" } else { "darwin-arm64" };
    for (args, said) in [
        (vec![format!("{other}={}", bin_dir.display())], format!("not {other}")),
        (vec![format!("beos-x64={}", bin_dir.display())], "unknown platform beos-x64".to_string()),
        (vec![format!("{}={}", npm::platform_key(), env.path().display())], "is missing".to_string()),
    ] {
        let out = npm::stage(|cmd| {
            cmd.arg("--out").arg(env.path().join("out")).args(&args);
        });
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(&said), "{args:?}: {}", text(&out.stderr));
    }
}
