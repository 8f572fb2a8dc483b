//! The project's environment end to end: real dev servers on real ports, test results from
//! the agent's Bash commands and from `ccmemctl test-report`.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use std::time::Duration;

/// A process group the test started, killed when the test ends, pass or fail.
struct Server(Child);

impl Server {
    fn spawn(cmd: &mut Command) -> Self {
        use std::os::unix::process::CommandExt;
        Server(cmd.process_group(0).spawn().expect("start a server"))
    }

    fn kill(&mut self) {
        // SAFETY: kill(2) on the group this test created; no memory is involved.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// `python3 -m http.server PORT` in `dir`, through `sh` (so it has a parent of its own).
/// With `wander`, the server moves its own cwd to the parent directory of `dir` first: only
/// its parent process stays in `dir`.
fn http_server(dir: &Path, port: u16, wander: bool) -> Server {
    let script = format!(
        "import os, sys, runpy\n{}sys.argv = ['http.server', '{port}', '--bind', '127.0.0.1']\nrunpy.run_module('http.server', run_name='__main__')",
        if wander { "os.chdir('..')\n" } else { "" }
    );
    // `; true` keeps sh from exec'ing python: sh stays its parent.
    let server = Server::spawn(
        Command::new("sh")
            .arg("-c")
            .arg("python3 -c \"$0\"; true")
            .arg(script)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    assert!(
        wait_until(Duration::from_secs(10), || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()),
        "the http server on {port} did not start"
    );
    server
}

fn servers(status: &Value) -> Vec<Value> {
    status["session"]["environment"]["servers"].as_array().cloned().unwrap_or_default()
}

fn server_on(status: &Value, port: u16) -> Option<Value> {
    servers(status).into_iter().find(|s| s["port"] == port)
}

#[test]
fn servers_started_from_the_project_come_and_go_and_others_never_show() {
    let env = Env::new();
    let _d = env.start_daemon(&["--port-scan-interval", "200ms"]);
    let app = repo(&env, "app");
    let elsewhere = env.path().join("elsewhere");
    std::fs::create_dir_all(app.join("web")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert_ok(&env.ctl(&["watch", app.to_str().unwrap()]), "watch");

    let (p1, p2, p3) = (free_port(), free_port(), free_port());
    let mut inside = http_server(&app.join("web"), p1, false);
    // Started from the project but working above it (as a model server beside the project
    // would): not the project's.
    let _above = http_server(&app, p2, true);
    let _outside = http_server(&elsewhere, p3, false);

    // All three listen already, so the scan that shows p1 saw them all.
    let st = settle(&env, &app, |st| server_on(st, p1).is_some());
    let s1 = server_on(&st, p1).unwrap();
    assert_eq!(s1["status"], "running");
    assert_eq!(s1["url"], format!("http://localhost:{p1}"));
    assert!(s1["process"].as_str().unwrap().starts_with("python"), "{s1}");
    assert!(s1["pid"].as_u64().is_some() && s1["startedAt"].is_string(), "{s1}");
    assert!(server_on(&st, p3).is_none(), "a server started elsewhere is not the project's: {st:#}");
    assert!(server_on(&st, p2).is_none(), "a server working above the project is not the project's: {st:#}");

    // The on-demand path: a status finds a server at once, whatever the interval.
    let text = text(&env.ctl(&["status", app.to_str().unwrap()]).stdout);
    assert!(text.contains(&format!("http://localhost:{p1} · running")), "{text}");
    let ctx = text_of_context(&env, &app);
    assert!(ctx.contains(&format!("- dev server http://localhost:{p1} (`python")), "{ctx}");

    inside.kill();
    let st = settle(&env, &app, |st| server_on(st, p1).is_some_and(|s| s["status"] == "stopped"));
    assert!(server_on(&st, p1).unwrap()["stoppedAt"].is_string());
    let timeline: Vec<String> = st["session"]["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{} {}", t["kind"].as_str().unwrap(), t["text"].as_str().unwrap()))
        .collect();
    assert!(timeline.iter().any(|t| t.starts_with("server_started") && t.contains(&p1.to_string())), "{timeline:?}");
    assert!(timeline.iter().any(|t| t.starts_with("server_stopped") && t.contains(&p1.to_string())), "{timeline:?}");
    assert!(!servers(&st).iter().any(|s| s["port"] == p3));
}

fn text_of_context(env: &Env, root: &Path) -> String {
    let out = env.ctl(&["context", root.to_str().unwrap()]);
    assert_ok(&out, "context");
    text(&out.stdout)
}

#[test]
fn another_users_server_is_skipped_without_errors() {
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    let d = env.start_daemon(&["--port-scan-interval", "off"]);
    // A project that user nobody can enter.
    let public = tempfile::Builder::new().prefix("ccm-pub").tempdir_in("/tmp").unwrap();
    set_mode(public.path(), 0o755);
    let app = public.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q"]);
    let app = std::fs::canonicalize(&app).unwrap();
    assert_ok(&env.ctl(&["watch", app.to_str().unwrap()]), "watch");

    let (theirs, mine) = (free_port(), free_port());
    let _theirs = Server::spawn(
        Command::new("python3")
            .args(["-m", "http.server", &theirs.to_string(), "--bind", "127.0.0.1"])
            .current_dir(&app)
            .uid(65534)
            .gid(65534)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    assert!(wait_until(Duration::from_secs(10), || std::net::TcpStream::connect(("127.0.0.1", theirs)).is_ok()));
    let _mine = http_server(&app, mine, false);
    let st = settle(&env, &app, |st| server_on(st, mine).is_some());
    assert!(server_on(&st, theirs).is_none(), "another user's server is not listed: {st:#}");
    // This daemon's own log (its stderr): read, and free of errors and warnings.
    let log = d.log();
    assert!(log.contains("ccmemd ready"), "not the daemon's log: {log}");
    assert!(!log.contains("ERROR") && !log.contains("WARN"), "{log}");
}

const CARGO_FAIL: &str = include_str!("../daemon/fixtures/testout/cargo-fail.txt");
const CARGO_1800: &str = include_str!("../daemon/fixtures/testout/cargo-1800-tests.txt");

/// A real 89 KB `cargo test` output (three binaries, 1,800 tests, one failing), through the
/// hook client, which cuts long outputs: every test is counted.
#[test]
fn a_long_test_output_is_counted_whole_through_the_hook() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    send(&env, ev(&app, "c1", "SessionStart", json!({"source": "startup"})));
    send(
        &env,
        ev(
            &app,
            "c1",
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test --no-fail-fast"},
                "error": format!("Exit code 101\n{CARGO_1800}")}),
        ),
    );
    let st = settle(&env, &app, |s| s["session"]["test_results"]["unit"]["framework"] == "cargo");
    let unit = &st["session"]["test_results"]["unit"];
    assert_eq!((unit["passed"].as_u64(), unit["failed"].as_u64()), (Some(1799), Some(1)), "{unit:#}");
    assert_eq!(unit["failures"][0]["testName"], "api_parses_the_input_of_case_0417", "{unit:#}");
}
const PYTEST_FAIL: &str = include_str!("../daemon/fixtures/testout/pytest-fail.txt");

#[test]
fn a_failing_cargo_test_in_bash_reaches_context_and_checkpoint() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    let ev = |name: &str, extra: Value| ev(&app, "c1", name, extra);
    send(&env, ev("SessionStart", json!({"source": "startup"})));
    send(
        &env,
        ev(
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{CARGO_FAIL}"), "is_interrupt": false}),
        ),
    );
    let st = settle(&env, &app, |st| st["session"]["test_results"]["unit"]["status"] == "failed");
    let unit = &st["session"]["test_results"]["unit"];
    assert_eq!(
        (unit["passed"].as_u64(), unit["failed"].as_u64(), unit["framework"].as_str()),
        (Some(3), Some(1), Some("cargo"))
    );
    assert_eq!(unit["failures"][0]["testName"], "tests::parses");
    assert_eq!(unit["failures"][0]["file"], "src/lib.rs");
    assert_eq!(unit["failures"][0]["line"], 8);
    assert_eq!(unit["percentage"], 75.0);

    let ctx = text_of_context(&env, &app);
    let failing = ctx.find("## Unresolved failures").unwrap_or_else(|| panic!("no failing tests in {ctx}"));
    assert!(failing < ctx.find("## Files edited").unwrap_or(usize::MAX), "failing tests come near the top: {ctx}");
    assert!(ctx.contains("- tests: `cargo test` failed"), "{ctx}");
    // The failing test with its place and message, once: the error line names it already.
    assert!(ctx.contains("tests::parses (src/lib.rs:8): length was 5"), "{ctx}");
    assert!(!ctx.contains("  - test `tests::parses`"), "not repeated under its own error line: {ctx}");

    send(&env, ev("Stop", json!({"last_assistant_message": "done"})));
    assert!(wait_until(Duration::from_secs(10), || {
        app.join(".claude/.project-state.json").exists()
            && read_state(&app)["warnings"].to_string().contains("1 unit test failing (`cargo`): `tests::parses`")
    }));
    assert_seed_004(&read_state(&app));

    // A passing run replaces it; the warning goes.
    let pass = include_str!("../daemon/fixtures/testout/cargo-pass.txt");
    send(
        &env,
        ev(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": pass, "stderr": "", "interrupted": false}}),
        ),
    );
    settle(&env, &app, |st| st["session"]["test_results"]["unit"]["status"] == "passed");
    assert_ok(&env.ctl(&["checkpoint", app.to_str().unwrap()]), "checkpoint");
    assert!(!read_state(&app)["warnings"].to_string().contains("failing"));
}

fn test_report(env: &Env, args: &[&str], stdin: &str) -> std::process::Output {
    let mut child =
        env.ctl_cmd(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut i = child.stdin.take().unwrap();
    let _ = i.write_all(stdin.as_bytes());
    drop(i);
    child.wait_with_output().unwrap()
}

#[test]
fn test_report_reads_output_and_junit_and_says_what_is_wrong() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let app = repo(&env, "app");
    let a = app.to_str().unwrap();

    let out = test_report(&env, &["test-report", a, "--command", "pytest -q"], PYTEST_FAIL);
    assert_ok(&out, "test-report from stdin");
    assert!(text(&out.stdout).contains("`test_len` `tests/test_calc.py`:5"), "{}", text(&out.stdout));
    let st = env.project_status(&app);
    assert_eq!(st["session"]["test_results"]["unit"]["framework"], "pytest");
    assert_eq!(st["session"]["test_results"]["unit"]["command"], "pytest -q");

    let junit = app.join("report.xml");
    std::fs::write(&junit, include_str!("../daemon/fixtures/testout/vitest-fail.junit.xml")).unwrap();
    let out = test_report(&env, &["test-report", a, "--junit", junit.to_str().unwrap(), "--e2e", "--json"], "");
    assert_ok(&out, "test-report --junit");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["runs"][0]["e2e"].as_bool(), v["runs"][0]["suite"]["failed"].as_u64()), (Some(true), Some(1)));
    assert_eq!(env.project_status(&app)["session"]["test_results"]["e2e"]["framework"], "vitest");

    let readme = app.join("README.md");
    let bad = [
        (vec!["test-report", a, "--framework", "nosuch"], "ok", "unknown framework \"nosuch\""),
        (vec!["test-report", a], "hello world", "no test results recognised"),
        (vec!["test-report", a, "--framework", "jest"], PYTEST_FAIL, "no jest results found"),
        (vec!["test-report", a, "--junit", "/no/such/file.xml"], "", "cannot read /no/such/file.xml"),
        (vec!["test-report", a, "--junit", readme.to_str().unwrap()], "", "not a JUnit report"),
    ];
    for (args, input, want) in bad {
        let out = test_report(&env, &args, input);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(text(&out.stderr).contains(want), "{args:?}: {}", text(&out.stderr));
    }
}
