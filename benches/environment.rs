//! Environment benchmark: `cargo bench --bench environment`.
//!
//! - The port scan (`ports::Scanner::scan`, what ccmemd runs every 10 s while a project is
//!   live), cold (a new scanner: no socket owner remembered) against netstat2's own
//!   `get_sockets_info` with pids (which reads every process's `/proc/<pid>/fd` every time),
//!   and warm (owners remembered) against cold, interleaved in the same run, with 50
//!   listening sockets of ours and 200 idle processes of ours. Target (issue 6): ≤ 10 ms per
//!   scan, judged on the cold one.
//! - Reading test results from a runner's output (the Bash hook path): a 32 KB cargo test
//!   output, against a plain line count of the same text.
//!
//! `CCMEM_BENCH_QUICK=1` for a short run.

#[cfg(unix)]
mod figures;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::figures;
    use ccmem_daemon::{observe::ports::Scanner, observe::testout};
    use figures::{quantile as q, time_ms as ms};
    use std::process::{Child, Command, Stdio};

    struct Kids(Vec<Child>);

    impl Drop for Kids {
        fn drop(&mut self) {
            for c in &mut self.0 {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let runs = if quick { 30 } else { 200 };
        println!(
            "ccmem environment benchmark ({} cores, {runs} runs){}",
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            if quick { " [quick]" } else { "" }
        );
        let listeners: Vec<std::net::TcpListener> =
            (0..50).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind")).collect();
        let _idle = Kids(
            (0..200).map(|_| Command::new("sleep").arg("600").stdin(Stdio::null()).spawn().expect("sleep")).collect(),
        );
        let procs = std::fs::read_dir("/proc")
            .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok()).count())
            .unwrap_or(0);
        println!("{} listening sockets of ours, {procs} processes on the machine", listeners.len());
        println!();

        // Each run measures, interleaved: ccmemd's scanner as it runs every 10 s (warm: socket
        // owners remembered from the scan before), a fresh scanner (cold: what the first scan
        // after start costs, and what netstat2 pays every time), and netstat2 itself.
        let mut scanner = Scanner::new();
        scanner.scan();
        let (mut warm, mut cold, mut full) = (Vec::new(), Vec::new(), Vec::new());
        let mut found = 0;
        for _ in 0..runs {
            warm.push(ms(|| found = scanner.scan().len()));
            cold.push(ms(|| {
                std::hint::black_box(Scanner::new().scan());
            }));
            full.push(ms(|| {
                let af = netstat2::AddressFamilyFlags::IPV4 | netstat2::AddressFamilyFlags::IPV6;
                let _ = netstat2::get_sockets_info(af, netstat2::ProtocolFlags::TCP);
            }));
        }
        let fds = std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0);
        println!("{:<44} {:>9} {:>9}", "", "median ms", "p99 ms");
        println!("{:<44} {:>9.3} {:>9.3}", "port scan, cold (a new scanner)", q(&cold, 0.5), q(&cold, 0.99));
        println!("{:<44} {:>9.3} {:>9.3}", "port scan, warm (ccmemd's every 10 s)", q(&warm, 0.5), q(&warm, 0.99));
        println!("{:<44} {:>9.3} {:>9.3}", "baseline: netstat2 get_sockets_info + pids", q(&full, 0.5), q(&full, 0.99));
        println!(
            "cold to baseline: {:.2}×; warm to cold: {:.2}×; servers found: {found}; our open fds after scans: {fds}",
            q(&cold, 0.5) / q(&full, 0.5),
            q(&warm, 0.5) / q(&cold, 0.5)
        );
        figures::record(
            "port scan, cold, median",
            q(&cold, 0.5),
            "ms",
            "netstat2 get_sockets_info + pids, median",
            q(&full, 0.5),
        );
        figures::record(
            "port scan, cold, p99",
            q(&cold, 0.99),
            "ms",
            "netstat2 get_sockets_info + pids, p99",
            q(&full, 0.99),
        );
        figures::record("port scan, warm, median", q(&warm, 0.5), "ms", "port scan, cold, median", q(&cold, 0.5));

        let output = include_str!("../daemon/fixtures/testout/cargo-fail.txt").repeat(20);
        let (mut hinted, mut unhinted, mut lines) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            hinted.push(ms(|| {
                std::hint::black_box(testout::parse(&output, Some("cargo")));
            }));
            unhinted.push(ms(|| {
                std::hint::black_box(testout::parse(&output, None));
            }));
            lines.push(ms(|| {
                std::hint::black_box(output.lines().filter(|l| l.contains("test")).count());
            }));
        }
        println!();
        println!(
        "test output parse ({} KB cargo output): with the runner named {:.3} ms, without {:.3} ms (medians); line scan {:.3} ms",
        output.len() / 1024,
        q(&hinted, 0.5),
        q(&unhinted, 0.5),
        q(&lines, 0.5)
    );
        figures::record(
            "test output parse, runner named, median",
            q(&hinted, 0.5),
            "ms",
            "line scan of the same text",
            q(&lines, 0.5),
        );
        figures::record(
            "test output parse, runner found, median",
            q(&unhinted, 0.5),
            "ms",
            "line scan of the same text",
            q(&lines, 0.5),
        );
        println!();
        // The target holds for the scan that costs most: the cold one.
        figures::target(&format!("port scan ≤ 10 ms, cold ({:.3} ms)", q(&cold, 0.5)), q(&cold, 0.5) <= 10.0);
        drop(listeners);
        figures::finish("environment", quick)
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
