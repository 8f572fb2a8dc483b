//! Idle benchmark: `cargo bench --bench idle`.
//!
//! A daemon with one live, watched project (200 files, a dev-server scan every 10 s, and a
//! real session in it: the smallest dev transcript of `../shared/transcripts/` imported, so
//! that its text has been through the redaction rules and the journal) left alone for 60 s:
//! its CPU time, how often its threads woke (context switches, summed over every thread,
//! sampled every half second), its RSS and its private memory (anonymous: heap and stacks;
//! the rest of the RSS is the program's code, mapped from the page cache and shared with
//! it), against the same daemon with no project over the same window. The daemon must not
//! wake up needlessly.
//!
//! `CCMEM_BENCH_QUICK=1` watches for 10 s instead.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;
#[cfg(unix)]
mod inputs;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures, inputs};
    use common::*;
    use serde_json::json;
    use std::collections::HashMap;
    use std::time::Duration;

    /// The anonymous part of `pid`'s RSS (heap, stacks): what it holds that no file backs.
    fn anon_kib(pid: u32) -> u64 {
        status_kib(pid, &["RssAnon:"])[0]
    }

    /// Context switches of each thread of `pid` (each one a time the thread slept and woke).
    fn switches(pid: u32) -> HashMap<String, u64> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return HashMap::new() };
        tasks
            .flatten()
            .filter_map(|t| {
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                let n = status
                    .lines()
                    .filter(|l| l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches"))
                    .filter_map(|l| l.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()))
                    .sum();
                Some((t.file_name().to_string_lossy().into_owned(), n))
            })
            .collect()
    }

    /// Switches of every thread seen during a window, sampled every half second so that a
    /// thread that ends (the blocking pool's idle threads end after 10 s) keeps what it did up to
    /// its last sample; a thread that starts counts whole.
    struct Wakeups {
        start: HashMap<String, u64>,
        last: HashMap<String, u64>,
    }

    impl Wakeups {
        fn begin(pid: u32) -> Self {
            let start = switches(pid);
            Wakeups { last: start.clone(), start }
        }

        fn sample(&mut self, pid: u32) {
            for (tid, n) in switches(pid) {
                let e = self.last.entry(tid).or_insert(0);
                *e = (*e).max(n);
            }
        }

        fn total(&self) -> u64 {
            self.last.iter().map(|(tid, n)| n.saturating_sub(self.start.get(tid).copied().unwrap_or(0))).sum()
        }
    }

    /// The daemon's quiet delay here (`CCMEM_QUIET_AFTER_MS`; a minute by default): after it,
    /// a daemon lets go of its compiled redaction rules and caches.
    const QUIET: Duration = Duration::from_secs(3);

    /// A daemon of `env` that lets go of its caches after [`QUIET`].
    fn quiet_daemon(env: &Env) -> Daemon {
        env.start_daemon_with(&[], |c| {
            c.env("CCMEM_QUIET_AFTER_MS", QUIET.as_millis().to_string());
        })
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let window = Duration::from_secs(if quick { 10 } else { 60 });
        println!(
            "ccmem idle benchmark: {} s with one watched project{}",
            window.as_secs(),
            if quick { " [quick]" } else { "" }
        );
        let env = Env::new();
        let d = quiet_daemon(&env);
        let root = repo(&env, "app");
        for i in 0..200 {
            let dir = root.join(format!("src/m{}", i % 20));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(format!("f{i}.rs")), "fn f() {}\n").expect("write");
        }
        env.request("project.watch", json!({"path": root}));
        // A real session in it, the smallest of the dev set (the rules its text needed stay
        // compiled; the session stays in memory).
        let (dir, mut files) = inputs::transcripts("CCMEM_IDLE_TRANSCRIPTS", "transcripts");
        files.sort_by_key(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(u64::MAX));
        let Some(t) = files.first() else {
            println!("idle: no transcripts in {} (set CCMEM_IDLE_TRANSCRIPTS)", dir.display());
            return std::process::ExitCode::FAILURE;
        };
        let plain = env.path().join("session.jsonl");
        std::fs::write(&plain, inputs::read_maybe_gz(t)).expect("write transcript");
        let out = env
            .ctl_cmd(&["import", plain.to_str().unwrap_or_default(), "--project", root.to_str().unwrap_or_default()])
            .output()
            .expect("ccmemctl import");
        assert!(out.status.success(), "import failed: {}", String::from_utf8_lossy(&out.stderr));
        println!("session imported: {}", t.file_name().unwrap_or_default().to_string_lossy());
        // The baseline: the same daemon with nothing to watch, over the same window: what a
        // project adds is the difference.
        let bare_env = Env::new();
        let bare = quiet_daemon(&bare_env);
        // Both quiet for longer than their delay before the window: what is measured is an
        // idle daemon, after it let go of what only speeds up the next request.
        std::thread::sleep(QUIET + Duration::from_secs(2));
        let (cpu0, base_cpu0) = (cpu_secs(d.pid), cpu_secs(bare.pid));
        let (mut sw, mut base_sw) = (Wakeups::begin(d.pid), Wakeups::begin(bare.pid));
        let start = std::time::Instant::now();
        while start.elapsed() < window {
            std::thread::sleep(Duration::from_millis(500));
            sw.sample(d.pid);
            base_sw.sample(bare.pid);
        }
        let elapsed = start.elapsed();
        let (cpu1, base_cpu1) = (cpu_secs(d.pid), cpu_secs(bare.pid));
        let (rss, _) = rss_kib(d.pid);
        let (base_rss, _) = rss_kib(bare.pid);
        let (anon, base_anon) = (anon_kib(d.pid), anon_kib(bare.pid));

        let minutes = elapsed.as_secs_f64() / 60.0;
        let cpu_pct = (cpu1 - cpu0) / elapsed.as_secs_f64() * 100.0;
        let base_pct = (base_cpu1 - base_cpu0) / elapsed.as_secs_f64() * 100.0;
        let wakeups = sw.total() as f64 / minutes;
        let base_wakeups = base_sw.total() as f64 / minutes;
        let threads = std::fs::read_dir(format!("/proc/{}/task", d.pid)).map(|t| t.count()).unwrap_or(0);
        println!();
        let row = |what: &str, v: f64, unit: &str, base: f64| {
            println!("{what:<30} {v:>10.3} {unit:<10} baseline (no project) {base:>10.3}");
            figures::record(what, v, unit, "the same daemon with no project, same window", base);
        };
        row("idle CPU", cpu_pct, "% of a core", base_pct);
        row("idle wakeups", wakeups, "per minute", base_wakeups);
        row("idle RSS", rss as f64 / 1024.0, "MiB", base_rss as f64 / 1024.0);
        row("idle private memory", anon as f64 / 1024.0, "MiB", base_anon as f64 / 1024.0);
        println!("daemon threads: {threads}");
        println!();
        figures::target(&format!("idle CPU ≤ 0.1% of a core ({cpu_pct:.3}%)"), cpu_pct <= 0.1);
        figures::target(&format!("≤ 60 wakeups a minute, all threads ({wakeups:.0})"), wakeups <= 60.0);
        figures::target(&format!("idle RSS ≤ 20 MiB ({:.1} MiB)", rss as f64 / 1024.0), rss as f64 / 1024.0 <= 20.0);
        figures::target(
            &format!("idle private memory ≤ 12 MiB ({:.1} MiB)", anon as f64 / 1024.0),
            anon as f64 / 1024.0 <= 12.0,
        );
        assert!(!d.log().contains("panicked"));
        figures::finish("idle", quick)
    }
}

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    bench::main()
}

/// Elsewhere it says so and fails: it measures nothing there.
#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!("this benchmark runs on Linux and macOS: it drives ccmemd over Unix sockets");
    std::process::ExitCode::FAILURE
}
