//! The view (`ccmemctl ui`) on real sessions: the five dev transcripts and a Codex session
//! (tests/fixtures/dev-transcripts, tests/fixtures/agent-sessions: SOURCES.md) imported into
//! a real daemon. Each screen is drawn on ratatui's test backend at 80×24 and 200×60 and
//! compared with its snapshot in `tests/snapshots/ui/` (`CCMEM_UPDATE_SNAPSHOTS=1` writes
//! them); and the real binary runs in tmux, driven by keys and read from the pane, while a
//! hook is delivered.
#![cfg(unix)]

mod common;

use ccmem_client::ui::{App, Clock, Flow, Input, Look, Source, Theme};
use common::*;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The screens' "now": 2026-08-01T00:00:00Z, after every imported session.
const NOW_MS: i64 = 1_785_542_400_000;

/// Imports `rel` into the project at `root`, as a past session (`history`) or into its live
/// session.
fn import(env: &Env, rel: &str, root: &Path, history: bool) {
    let file = env.unpack(rel);
    let mut args = vec!["import", file.to_str().unwrap(), "--project", root.to_str().unwrap()];
    if history {
        args.push("--into-history");
    }
    assert_ok(&env.ctl(&args), "import");
}

fn key(app: &mut App, code: KeyCode) -> Flow {
    app.input(Input::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// The screen as text, a line per row, the test's directory written `<tmp>`.
fn screen(app: &mut App, env: &Env, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.replace(env.path().to_str().unwrap(), "<tmp>")
}

/// Compares `text` with the snapshot `name` (written instead with CCMEM_UPDATE_SNAPSHOTS=1).
fn snapshot(name: &str, text: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/ui");
    let file = dir.join(format!("{name}.txt"));
    if std::env::var_os("CCMEM_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(&file, text).expect("write snapshot");
        return;
    }
    let want = std::fs::read_to_string(&file)
        .unwrap_or_else(|_| panic!("no snapshot {}: run with CCMEM_UPDATE_SNAPSHOTS=1 to write it", file.display()));
    if want != text {
        let new = file.with_extension("txt.new");
        let _ = std::fs::write(&new, text);
        panic!("screen {name} differs from its snapshot {} (now in {}):\n{text}", file.display(), new.display());
    }
}

/// Every screen at both sizes, from the projects to a step in full, a search and the
/// memories, drawn from the daemon's answers about real sessions.
#[test]
fn every_screen_draws_real_sessions_at_both_sizes() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let web = repo(&env, "sequant");
    let cli = repo(&env, "entire-cli");
    import(&env, "dev-transcripts/admarble_sequant_170a6d5b.jsonl.gz", &web, true);
    import(&env, "dev-transcripts/jnarowski_agentcmd_2d984148.jsonl.gz", &web, true);
    import(&env, "dev-transcripts/entireio_cli_6113e919.jsonl.gz", &cli, true);
    import(&env, "agent-sessions/jdx_fnox_codex_019f1f6f.jsonl.gz", &cli, true);
    for (title, tag) in [("Run vitest with --run in CI", "testing"), ("Worktrees live under .worktrees", "git")] {
        let out = env.ctl(&[
            "memory",
            "write",
            "--type",
            "gotcha",
            "--title",
            title,
            "--tag",
            tag,
            "--scope",
            "project",
            "--project",
            cli.to_str().unwrap(),
            "--content",
            "Found while refactoring run.ts.",
        ]);
        assert_ok(&out, "memory write");
    }
    let out = env.ctl(&[
        "memory",
        "link",
        "gotcha-run-vitest-with-run-in-ci",
        "gotcha-worktrees-live-under-worktrees",
        "--project",
        cli.to_str().unwrap(),
    ]);
    assert_ok(&out, "memory link");

    let look = Look { theme: Theme::new(true), clock: Clock { now_ms: Some(NOW_MS), utc: true } };
    let mut app = App::new(Source::new(&env.socket), look);
    let shots = |app: &mut App, name: &str| {
        for (w, h) in [(80, 24), (200, 60)] {
            snapshot(&format!("{name}-{w}x{h}"), &screen(app, &env, w, h));
        }
    };
    // The projects, the one with the newest activity selected (entire-cli: Codex, 2026-07-01).
    shots(&mut app, "projects");
    assert!(selected_line(&mut app, &env).contains("entire-cli"));
    key(&mut app, KeyCode::Char('?'));
    shots(&mut app, "help");
    key(&mut app, KeyCode::Esc);
    // Its sessions, then the newest one's timeline, then a step in full.
    key(&mut app, KeyCode::Enter);
    shots(&mut app, "sessions");
    key(&mut app, KeyCode::Enter);
    shots(&mut app, "timeline");
    let text = screen(&mut app, &env, 200, 60);
    assert!(text.contains("tests ▮▮▮▮▮▮▮▮▮▮▮  11 runs") && text.contains("✓ all 204 passed"), "{text}");
    for _ in 0..6 {
        key(&mut app, KeyCode::Char('k'));
    }
    key(&mut app, KeyCode::Enter);
    shots(&mut app, "step");
    // A search as typed, its hit opened in its timeline.
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('/'));
    // A paste is text for the search, its line break no Enter, its `q` no quit.
    app.input(Input::Terminal(Event::Paste("work\nq".into())));
    let text = screen(&mut app, &env, 80, 24);
    assert!(text.contains("/ work q") && text.contains("search"), "{text}");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "worktree");
    let text = screen(&mut app, &env, 80, 24);
    assert!(text.contains("«") || text.contains("worktree"), "{text}");
    shots(&mut app, "search");
    key(&mut app, KeyCode::Enter);
    let text = screen(&mut app, &env, 200, 60);
    let selected = selected_line(&mut app, &env);
    assert!(selected.to_lowercase().contains("worktree"), "the hit is selected in its timeline: {selected:?}\n{text}");
    // The memories of the first project.
    for _ in 0..6 {
        key(&mut app, KeyCode::Esc);
    }
    key(&mut app, KeyCode::Char('m'));
    shots(&mut app, "memories");
    // q leaves, printing nothing; r on a session prints the command that resumes it, there
    // (the Claude Code one: its transcript is on this machine).
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('j'));
    match key(&mut app, KeyCode::Char('r')) {
        Flow::Quit(Some(c)) => {
            assert_eq!(c, format!("cd -- '{}' && claude --resume 6113e919-67d3-417b-b525-c63700228d19", cli.display()))
        }
        other => panic!("r did not print a command: {other:?}"),
    }
    assert_eq!(key(&mut app, KeyCode::Char('q')), Flow::Quit(None));
}

/// The text of the selected row (drawn reversed) at 200×60.
fn selected_line(app: &mut App, env: &Env) -> String {
    let mut t = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    let buf = t.backend().buffer();
    (1..59)
        .find(|&y| buf[(0, y)].modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(|y| (0..200).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .unwrap_or_default()
        .replace(env.path().to_str().unwrap(), "<tmp>")
}

/// With `NO_COLOR` nothing is coloured, and a failed test still reads as failed.
#[test]
fn no_color_draws_without_colours() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let web = repo(&env, "sequant");
    import(&env, "dev-transcripts/admarble_sequant_170a6d5b.jsonl.gz", &web, true);
    let look = Look { theme: Theme::new(false), clock: Clock { now_ms: Some(NOW_MS), utc: true } };
    let mut app = App::new(Source::new(&env.socket), look);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    let buf = t.backend().buffer();
    let colours: Vec<_> = buf.content.iter().filter(|c| c.fg != ratatui::style::Color::Reset).collect();
    assert!(colours.is_empty(), "coloured cells without colour: {:?}", &colours[..colours.len().min(3)]);
    let text = screen(&mut app, &env, 80, 24);
    assert!(text.contains("tests ✗") || text.contains("tests ✓"), "the runs are told by their marks: {text}");
}

/// The real `ccmemctl ui` in a real terminal (tmux): to a project, its session, its
/// timeline; a hook delivered meanwhile appears with no key pressed; a search lands on its
/// hit; `r` prints the resume command on standard output and leaves the terminal as it was;
/// Ctrl-C leaves too, printing nothing.
#[test]
#[cfg_attr(not(ccmem_tmux), ignore = "needs tmux (apt-get install tmux; .ci/run installs it)")]
fn the_real_view_runs_in_a_terminal_and_hands_back_a_command() {
    let tmux = which("tmux").expect("tmux is needed for this test (.ci/run installs it: apt-get install tmux)");
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let web = repo(&env, "sequant");
    import(&env, "dev-transcripts/admarble_sequant_170a6d5b.jsonl.gz", &web, false);

    // The pane runs the view twice: the first time left with r, the second with Ctrl-C.
    let base = env.path();
    let script = base.join("view.sh");
    let q = |p: &Path| format!("'{}'", p.display());
    let exports = env.shell_exports();
    let body = format!(
        "#!/bin/sh\n{exports}cd {web}\n{ctl} ui > {o1}; echo \"exit=$?\" >> {o1}; stty -a > {s1}\n{ctl} ui > {o2}; echo \"exit=$?\" >> {o2}\nsh -c 'echo $$ > {p3}; exec {ctl} ui'; stty -a > {s3}\nsleep 600\n",
        web = q(&web),
        ctl = q(Path::new(CCMEMCTL)),
        o1 = q(&base.join("out1")),
        s1 = q(&base.join("stty1")),
        o2 = q(&base.join("out2")),
        p3 = base.join("pid3").display(),
        s3 = q(&base.join("stty3")),
    );
    write_executable(&script, &body);
    let sock = base.join("tmux.sock");
    let tmux_cmd = |args: &[&str]| {
        let out = common::tmux(&tmux, &sock, args).expect("tmux");
        assert!(out.status.success(), "tmux {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let _server = TmuxServer(tmux.clone(), sock.clone());
    tmux_cmd(&["new-session", "-d", "-x", "100", "-y", "30", script.to_str().unwrap()]);
    let pane = || tmux_cmd(&["capture-pane", "-p"]);
    let wait_for = |what: &str, cond: &dyn Fn(&str) -> bool| {
        let mut last = String::new();
        let ok = wait_until(Duration::from_secs(15), || {
            last = pane();
            cond(&last)
        });
        assert!(ok, "{what}; the pane shows:\n{last}");
        last
    };
    let send = |keys: &[&str]| {
        for k in keys {
            tmux_cmd(&["send-keys", k]);
            // One key at a time: an Escape followed at once by a key reads as Alt+key.
            std::thread::sleep(Duration::from_millis(150));
        }
    };

    wait_for("the projects, live", &|p| p.contains("sequant") && p.contains("● live"));
    send(&["Enter"]);
    wait_for("the project's sessions", &|p| p.contains("events") && p.contains("› sequant"));
    send(&["Enter"]);
    wait_for("the session's timeline", &|p| p.contains("› session_") && p.contains("tests ▮"));

    // A prompt sent by a hook while the view waits for a key.
    let payload = serde_json::json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": "170a6d5b-e79c-4a12-9d22-60730e148b83",
        "cwd": web,
        "prompt": "zebra stripes for the ledger table, please",
    });
    let out = hook(&env, payload.to_string().as_bytes());
    assert!(out.status.success(), "hook: {}", text(&out.stderr));
    wait_for("the hook's prompt, with no key pressed", &|p| p.contains("zebra stripes for the ledger"));

    // A search, as typed, lands on its hit in the timeline.
    send(&["/"]);
    wait_for("the search", &|p| p.contains("search every project"));
    tmux_cmd(&["send-keys", "-l", "worktree"]);
    wait_for("the search's results", &|p| p.contains("found"));
    send(&["Enter"]);
    let shown = wait_for("the hit in its timeline", &|p| p.contains("› search ›"));
    let coloured = tmux_cmd(&["capture-pane", "-p", "-e"]);
    let selected = coloured.lines().find(|l| l.contains("\u{1b}[7m")).unwrap_or_default().to_lowercase();
    assert!(selected.contains("worktree"), "the hit is the selected step: {selected:?}\n{shown}");

    // r: the command, on standard output only; the terminal as it was.
    send(&["r"]);
    let out1 = base.join("out1");
    assert!(wait_until(Duration::from_secs(10), || std::fs::read_to_string(&out1).is_ok_and(|s| s.contains("exit="))));
    let printed = std::fs::read_to_string(&out1).expect("out1");
    let want = format!("cd -- '{}' && claude --resume 170a6d5b-e79c-4a12-9d22-60730e148b83\nexit=0\n", web.display());
    assert_eq!(printed, want);
    let stty = std::fs::read_to_string(base.join("stty1")).unwrap_or_default();
    let words: Vec<&str> = stty.split_whitespace().collect();
    assert!(words.contains(&"icanon") && words.contains(&"echo"), "the terminal is back in its usual mode: {stty}");

    // The second run, left with Ctrl-C: nothing printed.
    wait_for("the view again", &|p| p.contains("sequant") && p.contains("● live"));
    send(&["C-c"]);
    let out2 = base.join("out2");
    assert!(wait_until(Duration::from_secs(10), || std::fs::read_to_string(&out2).is_ok_and(|s| s.contains("exit="))));
    assert_eq!(std::fs::read_to_string(&out2).expect("out2"), "exit=0\n");

    // The third, stopped by a signal: the terminal is given back all the same.
    wait_for("the view a third time", &|p| p.contains("sequant") && p.contains("● live"));
    let pid3: i32 = std::fs::read_to_string(base.join("pid3")).expect("pid3").trim().parse().expect("a pid");
    // SAFETY: kill(2) on the pid the view's shell wrote; a stale pid only fails.
    unsafe { libc::kill(pid3, libc::SIGTERM) };
    let stty3 = base.join("stty3");
    assert!(wait_until(Duration::from_secs(10), || std::fs::read_to_string(&stty3).is_ok_and(|s| !s.is_empty())));
    let stty = std::fs::read_to_string(&stty3).expect("stty3");
    let words: Vec<&str> = stty.split_whitespace().collect();
    assert!(words.contains(&"icanon") && words.contains(&"echo"), "a signal leaves the terminal as it was: {stty}");
}

/// Stops the test's own tmux server (its socket is the test's), pass or fail.
struct TmuxServer(PathBuf, PathBuf);

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(&self.0).arg("-S").arg(&self.1).arg("kill-server").output();
    }
}

/// A program on the PATH.
fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The subscription on the wire: a subscriber is told each project whose past the journal
/// took; it only listens (whatever it sends ends it); it is not the only
/// client (a hook and another request are served beside it); and the projects and sessions
/// it then reads hold what it was told of.
#[test]
fn a_subscriber_is_told_what_the_journal_takes_and_only_listens() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "p");
    let mut sub = Raw::connect(&env.socket);
    let r = sub.call(r#"{"jsonrpc":"2.0","id":1,"method":"view.subscribe","params":{}}"#);
    assert_eq!(r["result"]["subscribed"], true, "{r}");
    // Three prompts: the change told names the project.
    for i in 0..3 {
        let payload = serde_json::json!({
            "hook_event_name": "UserPromptSubmit", "session_id": "c0ffee00-0000-4000-8000-000000000001",
            "cwd": root, "prompt": format!("prompt number {i}"),
        });
        assert!(hook(&env, payload.to_string().as_bytes()).status.success());
    }
    let told = sub.recv().expect("a notification");
    assert_eq!(told["method"], "view.changed", "{told}");
    assert!(told.get("id").is_none(), "a notification has no id: {told}");
    let projects: Vec<String> = told["params"]["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .map(|p| p.as_str().unwrap_or("").into())
        .collect();
    assert_eq!(projects, vec![root.display().to_string()], "{told}");
    // What it then reads holds the prompts.
    let listed = env.request("view.projects", serde_json::json!({}));
    assert_eq!(listed["projects"][0]["root"], root.display().to_string(), "{listed}");
    assert_eq!(listed["projects"][0]["live"], true, "{listed}");
    let sessions = env.request("view.sessions", serde_json::json!({ "path": root }));
    let s = &sessions["sessions"][0];
    assert!(s["events"].as_u64().unwrap_or(0) >= 3 && s.get("ended_ms").is_none(), "{sessions}");
    assert_eq!(s["brief"]["task"], "prompt number 0", "{sessions}");
    // A relative path is refused with a clear error.
    let mut other = Raw::connect(&env.socket);
    let bad = other.call(r#"{"jsonrpc":"2.0","id":2,"method":"view.sessions","params":{"path":"p"}}"#);
    assert!(bad["error"]["message"].as_str().unwrap_or("").contains("must be absolute"), "{bad}");
    // A directory named with an invisible character is shown without it, and asked about
    // so: its sessions are found all the same.
    let odd = env.path().join("odd\u{200b}name");
    std::fs::create_dir_all(&odd).expect("mkdir");
    git(&odd, &["init", "-q"]);
    let payload = serde_json::json!({
        "hook_event_name": "UserPromptSubmit", "session_id": "c0ffee00-0000-4000-8000-000000000002",
        "cwd": odd, "prompt": "an odd name",
    });
    assert!(hook(&env, payload.to_string().as_bytes()).status.success());
    let listed = env.request("view.projects", serde_json::json!({}));
    let shown = env.path().join("oddname").display().to_string();
    assert!(listed["projects"].as_array().expect("projects").iter().any(|p| p["root"] == shown.as_str()), "{listed}");
    let sessions = env.request("view.sessions", serde_json::json!({ "path": shown }));
    assert_eq!(sessions["sessions"].as_array().map(Vec::len), Some(1), "{sessions}");
    // Anything sent on the subscription ends it.
    sub.send(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
    assert!(sub.is_closed(), "a subscriber that speaks is cut off");
}
