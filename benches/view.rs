//! The view's benchmark (`ccmemctl ui`): `cargo bench --bench view`.
//!
//! A journal of 1,000 ended sessions in 50 projects (`CCMEM_BENCH_QUICK=1`: 100), each with
//! the events of a real transcript of the dev set (`../shared/transcripts/`, or
//! `CCMEM_RECALL_TRANSCRIPTS`) and the last state a real import of it left, is written
//! through the journal's own append; a real daemon then serves it. Timed:
//! - **the first frame**: the view opened on a new connection (the projects read from the
//!   daemon) and drawn at 200×60, beside a new connection's `hello` alone;
//! - **a keystroke**: a key moving the selection in a session's timeline, and the frame
//!   redrawn, beside a frame redrawn with nothing changed;
//! - **at rest**: the real `ccmemctl ui` in a terminal (tmux) for a minute (quick: 10 s), its
//!   CPU time and wakeups (context switches) from `/proc`, beside the daemon's over the same
//!   minute.

#[cfg(target_os = "linux")]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(target_os = "linux")]
mod figures;
#[cfg(target_os = "linux")]
mod inputs;

#[cfg(target_os = "linux")]
mod bench {
    use super::{common, figures, inputs};
    use ccmem_client::ui::{App, Clock, Input, Look, Source, Theme};
    use ccmem_daemon::journal::{Entry, Journal, Retention};
    use ccmem_proto::model::session::Session;
    use common::*;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{Event, KeyCode, KeyEvent};
    use ratatui::Terminal;
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    const PROJECTS: usize = 50;
    /// Events written per session at most.
    const EVENTS: usize = 300;

    /// Each transcript imported for real, and the state its session was left in.
    fn states(files: &[PathBuf]) -> Vec<Session> {
        let env = Env::new();
        let _d = env.start_daemon(&[]);
        let root = repo(&env, "p");
        for (i, f) in files.iter().enumerate() {
            let plain = env.path().join(format!("t{i}.jsonl"));
            std::fs::write(&plain, inputs::read_maybe_gz(f)).expect("write");
            let out =
                env.ctl(&["import", plain.to_str().unwrap(), "--project", root.to_str().unwrap(), "--into-history"]);
            assert_ok(&out, "import");
        }
        let states: Vec<String> = {
            let db = rusqlite::Connection::open(env.state.join("ccmem/journal.db")).expect("journal");
            let mut q = db.prepare("SELECT state FROM sessions WHERE state IS NOT NULL").expect("prepare");
            let rows = q.query_map([], |r| r.get(0)).expect("query");
            rows.map(|r| r.expect("row")).collect()
        };
        states.iter().map(|s| serde_json::from_str(s).expect("a state reads back")).collect()
    }

    /// Writes `sessions` ended sessions into the journal of the state dir `dir`.
    fn write(dir: &Path, pool: &[Vec<Entry>], states: &[Session], sessions: usize) {
        let journal = Journal::open(dir, Retention::default());
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let month_ago = chrono::Utc::now().timestamp_millis() - 30 * 86_400_000;
        for i in 0..sessions {
            let root = PathBuf::from(format!("/bench/p{:02}", i % PROJECTS));
            let sid = format!("session_bench_{i:05}");
            let start = month_ago + (i as i64) * (30 * 86_400_000 / sessions as i64);
            let events: Vec<Entry> = pool[i % pool.len()]
                .iter()
                .take(EVENTS)
                .enumerate()
                .map(|(k, e)| Entry {
                    root: root.clone(),
                    root_name: format!("p{:02}", i % PROJECTS),
                    session: sid.clone(),
                    at_ms: start + k as i64 * 5_000,
                    conversation: e.conversation.as_ref().map(|c| format!("{c}-{i}")),
                    ..e.clone()
                })
                .collect();
            if let Some(done) = journal.append(events, None) {
                let _ = done.blocking_recv();
            }
            let mut s = states[i % states.len()].clone();
            s.session_id = sid;
            s.project_root = root;
            s.project_name = format!("p{:02}", i % PROJECTS);
            rt.block_on(journal.ended_at(Box::new(s), "imported", start + EVENTS as i64 * 5_000));
        }
        rt.block_on(journal.flush());
        assert!(journal.health().problems().is_empty(), "{:?}", journal.health().problems());
    }

    fn key(app: &mut App, code: KeyCode) {
        app.input(Input::Terminal(Event::Key(KeyEvent::from(code))));
    }

    /// CPU time (ms) of a process, and each of its threads' context switches, from `/proc`.
    fn cost(pid: u32) -> (f64, HashMap<String, u64>) {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks: f64 = f.get(11).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
            + f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let mut switches = HashMap::new();
        for t in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let n: u64 = status
                .lines()
                .filter(|l| l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            switches.insert(t.file_name().to_string_lossy().into_owned(), n);
        }
        // Clock ticks are 100 a second on Linux.
        (ticks * 10.0, switches)
    }

    /// Context switches between two readings of [`cost`]: the threads alive at the second
    /// (one started since counts from zero).
    fn woke(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> u64 {
        after.iter().map(|(t, n)| n.saturating_sub(before.get(t).copied().unwrap_or(0))).sum()
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let (_, files) = inputs::transcripts("CCMEM_RECALL_TRANSCRIPTS", "transcripts");
        if files.is_empty() {
            eprintln!("no transcripts found (../shared/transcripts, or CCMEM_RECALL_TRANSCRIPTS)");
            return std::process::ExitCode::FAILURE;
        }
        let sessions = if quick { 100 } else { 1000 };
        println!("view: {sessions} sessions in {PROJECTS} projects, from {} real transcripts", files.len());
        let states = states(&files);
        let env = Env::new();
        let mut pool = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let plain = env.path().join(format!("t{i}.jsonl"));
            std::fs::write(&plain, inputs::read_maybe_gz(f)).expect("write");
            pool.push(inputs::journal_entries(&plain));
        }
        let t = std::time::Instant::now();
        write(&env.state.join("ccmem"), &pool, &states, sessions);
        println!("  journal written in {:.1} s", t.elapsed().as_secs_f64());
        let daemon = env.start_daemon(&[]);
        let look = Look { theme: Theme::new(true), clock: Clock::real() };

        // The first frame, beside a connection's hello.
        let runs = if quick { 10 } else { 30 };
        let mut first = Vec::new();
        let mut hello = Vec::new();
        for _ in 0..runs {
            hello.push(figures::time_ms(|| {
                let mut c = ccmem_client::conn::Conn::connect(&env.socket).expect("connect");
                c.hello().expect("hello");
            }));
            first.push(figures::time_ms(|| {
                let mut app = App::new(Source::new(&env.socket), look);
                let mut term = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
                term.draw(|f| app.draw(f)).expect("draw");
            }));
        }
        let p = |v: &[f64], q| figures::quantile(v, q);
        println!(
            "  first frame: p50 {:.1} ms, p95 {:.1} ms (hello p50 {:.2} ms)",
            p(&first, 0.5),
            p(&first, 0.95),
            p(&hello, 0.5)
        );
        figures::record(
            "view first frame p95 (1,000 sessions)",
            p(&first, 0.95),
            "ms",
            "a new connection's hello, p50",
            p(&hello, 0.5),
        );
        figures::target("view first frame ≤ 100 ms at p95", p(&first, 0.95) <= 100.0);

        // A keystroke in a session's timeline, beside a frame redrawn unchanged.
        let mut app = App::new(Source::new(&env.socket), look);
        let mut term = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Home);
        term.draw(|f| app.draw(f)).expect("draw");
        let keys = if quick { 200 } else { 1000 };
        let (mut moved, mut still) = (Vec::new(), Vec::new());
        for i in 0..keys {
            let code = if (i / 100) % 2 == 0 { KeyCode::Down } else { KeyCode::Up };
            moved.push(figures::time_ms(|| {
                key(&mut app, code);
                term.draw(|f| app.draw(f)).expect("draw");
            }));
            still.push(figures::time_ms(|| {
                term.draw(|f| app.draw(f)).expect("draw");
            }));
        }
        println!(
            "  keystroke: p50 {:.2} ms, p99 {:.2} ms (a frame unchanged p50 {:.2} ms)",
            p(&moved, 0.5),
            p(&moved, 0.99),
            p(&still, 0.5)
        );
        figures::record(
            "view keystroke redrawn p99",
            p(&moved, 0.99),
            "ms",
            "a frame redrawn unchanged, p50",
            p(&still, 0.5),
        );
        figures::target("view keystroke redrawn ≤ 16 ms at p99", p(&moved, 0.99) <= 16.0);

        // At rest: the real view in a terminal.
        let Some(tmux) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("tmux"))
            .find(|p| p.is_file())
        else {
            eprintln!("tmux not found: the view at rest is not measured (apt-get install tmux)");
            return std::process::ExitCode::FAILURE;
        };
        let base = env.path();
        let pidfile = base.join("ui.pid");
        let q = |p: &Path| format!("'{}'", p.display());
        let script = format!(
            "#!/bin/sh\n{}echo $$ > {}\nexec {} ui\n",
            env.shell_exports(),
            q(&pidfile),
            q(Path::new(CCMEMCTL))
        );
        write_executable(&base.join("ui.sh"), &script);
        let sock = base.join("tmux.sock");
        let tmux_run = |args: &[&str]| common::tmux(&tmux, &sock, args);
        tmux_run(&["new-session", "-d", "-x", "200", "-y", "60", base.join("ui.sh").to_str().unwrap()]).expect("tmux");
        assert!(wait_until(Duration::from_secs(10), || std::fs::read_to_string(&pidfile)
            .is_ok_and(|s| !s.trim().is_empty())));
        let pid: u32 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("a pid");
        // Its first frame drawn, the subscription up, then quiet.
        std::thread::sleep(Duration::from_secs(2));
        let secs = if quick { 10 } else { 60 };
        let (ui0, ui_sw0) = cost(pid);
        let (d0, d_sw0) = cost(daemon.pid);
        std::thread::sleep(Duration::from_secs(secs));
        let (ui1, ui_sw1) = cost(pid);
        let (d1, d_sw1) = cost(daemon.pid);
        let _ = tmux_run(&["kill-server"]);
        let ui_cpu = (ui1 - ui0) / (secs as f64 * 1000.0) * 100.0;
        let d_cpu = (d1 - d0) / (secs as f64 * 1000.0) * 100.0;
        let ui_woke = woke(&ui_sw0, &ui_sw1);
        let wakeups = ui_woke as f64 / secs as f64;
        let d_wakeups = woke(&d_sw0, &d_sw1) as f64 / secs as f64;
        println!(
            "  at rest over {secs} s: the view {ui_cpu:.3} % CPU, {wakeups:.2} wakeups/s; the daemon {d_cpu:.3} % CPU, {:.2} wakeups/s",
            d_wakeups
        );
        figures::record("view CPU at rest", ui_cpu, "%", "the idle daemon's CPU, same minute", d_cpu);
        figures::record("view wakeups at rest", wakeups, "/s", "the idle daemon's, same minute", d_wakeups);
        figures::target("view at rest: 0 % CPU (under 0.05 %) and no wakeups", ui_cpu < 0.05 && ui_woke == 0);
        drop(daemon);
        figures::finish("view", quick)
    }
}

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    bench::main()
}

/// Elsewhere it says so and fails: it reads `/proc` and drives a daemon over a Unix socket.
#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("this benchmark runs on Linux: it reads /proc and drives ccmemd over a Unix socket");
    std::process::ExitCode::FAILURE
}
