//! Foundation benchmark: `cargo bench --bench foundation`.
//!
//! Prints, each beside a baseline measured in the same run on the same machine:
//! - daemon start-to-ready (spawn → first answered ping), against spawning `/bin/true`;
//! - `ccmemctl ping` as a whole process, median and p99, against `/bin/true`;
//! - requests per second over one connection, against a bare socket echo server;
//! - latency (p50, p99) and requests/s with 1, 100 and 1,000 concurrent clients, against the
//!   same echo server;
//! - the client's cold auto-start (`ccmemctl ping` with no daemon), against a warm ping.
//!
//! Targets (issue 2): ping ≤ 3× /bin/true; ≥ 20,000 requests/s on one connection;
//! start-to-ready < 20 ms. Set `CCMEM_BENCH_QUICK=1` for a short smoke run.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures};
    use common::*;
    use figures::quantile;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const PING: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

    struct Scale {
        starts: usize,
        pings: usize,
        one_conn: Duration,
        concurrent: Duration,
    }

    pub(crate) fn main() -> std::process::ExitCode {
        // `cargo bench` passes `--bench`; nothing else is accepted.
        let quick = figures::quick();
        let scale = if quick {
            Scale { starts: 5, pings: 40, one_conn: Duration::from_millis(300), concurrent: Duration::from_millis(300) }
        } else {
            Scale { starts: 30, pings: 400, one_conn: Duration::from_secs(3), concurrent: Duration::from_secs(3) }
        };
        println!("ccmem foundation benchmark ({} cores){}", cores(), if quick { " [quick]" } else { "" });
        println!();

        let env = Env::new();
        let (ready, internal) = start_to_ready(&env, scale.starts);
        let spawn_true = time_process(Command::new("/bin/true"), scale.starts);
        row("start-to-ready, median (ms)", median(&ready), "spawn /bin/true", median(&spawn_true));
        row("start-to-ready, p99 (ms)", p99(&ready), "spawn /bin/true", p99(&spawn_true));
        println!("  (daemon's own measure, process start to accepting: median {:.2} ms)", median(&internal));

        let _daemon = env.start_daemon(&[]);
        let mut ping = env.ctl_cmd(&["--no-start", "ping"]);
        ping.stdout(Stdio::null());
        let (ping_t, true_t) = interleaved(ping, Command::new("/bin/true"), scale.pings);
        row("ccmemctl ping, median (ms)", median(&ping_t), "/bin/true", median(&true_t));
        row("ccmemctl ping, p99 (ms)", p99(&ping_t), "/bin/true", p99(&true_t));

        let echo_dir = tempfile::tempdir().expect("tmp");
        let echo = echo_dir.path().join("echo.sock");
        spawn_echo_server(&echo);
        let daemon_rps = one_connection_rps(&env.socket, scale.one_conn);
        let echo_rps = one_connection_rps(&echo, scale.one_conn);
        row_rate("requests/s, one connection", daemon_rps, "bare echo socket", echo_rps);

        raise_fd_limit();
        for clients in [1, 100, 1000] {
            let (d50, d99, drps) = concurrent(&env.socket, clients, scale.concurrent);
            let (e50, e99, erps) = concurrent(&echo, clients, scale.concurrent);
            row(&format!("{clients} clients, p50 latency (ms)"), d50, "bare echo socket", e50);
            row(&format!("{clients} clients, p99 latency (ms)"), d99, "bare echo socket", e99);
            row_rate(&format!("{clients} clients, requests/s total"), drps, "bare echo socket", erps);
        }
        drop(_daemon);

        // The client's cold auto-start: no daemon; `ccmemctl ping` starts one and is answered.
        let (cold, warm) = cold_start(scale.starts);
        row("cold auto-start + ping, median (ms)", median(&cold), "ping, daemon running", median(&warm));
        row("cold auto-start + ping, p99 (ms)", p99(&cold), "ping, daemon running", p99(&warm));

        println!();
        println!("targets:");
        target("ccmemctl ping median ≤ 3× /bin/true", median(&ping_t) <= 3.0 * median(&true_t));
        target("≥ 20,000 requests/s on one connection", daemon_rps >= 20_000.0);
        target("start-to-ready median < 20 ms", median(&ready) < 20.0);
        figures::finish("foundation", quick)
    }

    /// `ccmemctl ping` in a fresh environment, which starts the daemon, against the same ping
    /// once it runs. Each daemon is stopped by its pid before the next round.
    fn cold_start(n: usize) -> (Vec<f64>, Vec<f64>) {
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let env = Env::new();
            let mut ping = env.ctl_cmd(&["ping"]);
            ping.stdout(Stdio::null()).stderr(Stdio::null());
            let t = Instant::now();
            assert!(ping.status().expect("ping").success(), "cold ping failed");
            cold.push(ms(t.elapsed()));
            env.note_daemon();
            let t = Instant::now();
            assert!(ping.status().expect("ping").success());
            warm.push(ms(t.elapsed()));
        }
        (cold, warm)
    }

    fn cores() -> usize {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    }

    /// Spawns the daemon `n` times; each time measures spawn → first pong, then stops it.
    fn start_to_ready(env: &Env, n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut outside = Vec::new();
        let mut inside = Vec::new();
        for _ in 0..n {
            let mut cmd = env.daemon_cmd(&[]);
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
            let t = Instant::now();
            let mut child = cmd.spawn().expect("spawn ccmemd");
            loop {
                if let Ok(mut s) = UnixStream::connect(&env.socket) {
                    if s.write_all(PING).is_ok() {
                        let mut line = String::new();
                        if BufReader::new(&s).read_line(&mut line).is_ok() && line.contains("pong") {
                            break;
                        }
                    }
                }
                assert!(t.elapsed() < Duration::from_secs(10), "ccmemd did not start");
                std::thread::sleep(Duration::from_micros(100));
            }
            outside.push(ms(t.elapsed()));
            let v = env.ctl_json(&["--no-start", "status"]);
            inside.push(v["daemon"]["ready_ms"].as_f64().unwrap_or(f64::NAN));
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
        }
        (outside, inside)
    }

    fn time_process(mut cmd: Command, n: usize) -> Vec<f64> {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        (0..n)
            .map(|_| {
                let t = Instant::now();
                let st = cmd.status().expect("run");
                assert!(st.success());
                ms(t.elapsed())
            })
            .collect()
    }

    /// Runs `a` and `b` alternately so that both see the same machine load.
    fn interleaved(mut a: Command, mut b: Command, n: usize) -> (Vec<f64>, Vec<f64>) {
        b.stdout(Stdio::null()).stderr(Stdio::null());
        let (mut ta, mut tb) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let t = Instant::now();
            let st = a.status().expect("run a");
            ta.push(ms(t.elapsed()));
            assert!(st.success(), "benchmarked command failed");
            let t = Instant::now();
            b.status().expect("run b");
            tb.push(ms(t.elapsed()));
        }
        (ta, tb)
    }

    /// A minimal line server: answers each line with a pong line. The floor for any daemon.
    fn spawn_echo_server(path: &Path) {
        let listener = UnixListener::bind(path).expect("bind echo");
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut w = stream.try_clone().expect("clone");
                    let mut r = BufReader::new(stream);
                    let mut line = Vec::new();
                    while r.read_until(b'\n', &mut line).map(|n| n > 0).unwrap_or(false) {
                        if w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"pong\"}\n").is_err() {
                            break;
                        }
                        line.clear();
                    }
                });
            }
        });
    }

    fn one_connection_rps(socket: &Path, dur: Duration) -> f64 {
        let s = UnixStream::connect(socket).expect("connect");
        let mut w = s.try_clone().expect("clone");
        let mut r = BufReader::new(s);
        let mut line = Vec::new();
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed() < dur {
            for _ in 0..100 {
                w.write_all(PING).expect("write");
                line.clear();
                r.read_until(b'\n', &mut line).expect("read");
            }
            n += 100;
        }
        n as f64 / t.elapsed().as_secs_f64()
    }

    /// `clients` connections pinging back to back for `dur`: (p50 ms, p99 ms, requests/s).
    fn concurrent(socket: &Path, clients: usize, dur: Duration) -> (f64, f64, f64) {
        let start = std::sync::Arc::new(std::sync::Barrier::new(clients));
        let threads: Vec<_> = (0..clients)
            .map(|_| {
                let socket = socket.to_path_buf();
                let start = start.clone();
                std::thread::spawn(move || {
                    let s = UnixStream::connect(&socket).expect("connect");
                    let mut w = s.try_clone().expect("clone");
                    let mut r = BufReader::new(s);
                    let mut line = Vec::new();
                    let mut lat = Vec::new();
                    start.wait();
                    let t0 = Instant::now();
                    while t0.elapsed() < dur {
                        let t = Instant::now();
                        w.write_all(PING).expect("write");
                        line.clear();
                        r.read_until(b'\n', &mut line).expect("read");
                        lat.push(ms(t.elapsed()));
                    }
                    lat
                })
            })
            .collect();
        let t = Instant::now();
        let all: Vec<f64> = threads.into_iter().flat_map(|t| t.join().expect("client")).collect();
        let secs = t.elapsed().as_secs_f64();
        (median(&all), p99(&all), all.len() as f64 / secs)
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    fn median(v: &[f64]) -> f64 {
        quantile(v, 0.5)
    }

    fn p99(v: &[f64]) -> f64 {
        quantile(v, 0.99)
    }

    fn row(what: &str, value: f64, base_name: &str, base: f64) {
        println!("{what:<36} {value:>10.3}   baseline {base_name:<20} {base:>10.3}   ratio {:>6.2}×", value / base);
        figures::record(what, value, "ms", base_name, base);
    }

    fn row_rate(what: &str, value: f64, base_name: &str, base: f64) {
        println!("{what:<36} {value:>10.0}   baseline {base_name:<20} {base:>10.0}   ratio {:>6.2}×", value / base);
        figures::record(what, value, "req/s", base_name, base);
    }

    use figures::target;
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
