//! Environment benchmark: `cargo bench --bench environment`.
//!
//! - The port scan (`ports::Scanner::scan`, what ccmemd runs every 10 s while a project is
//!   live) against netstat2's own `get_sockets_info` with pids (which reads every process's
//!   `/proc/<pid>/fd`), in the same run, with 50 listening sockets of ours and 200 idle
//!   processes of ours. Target (issue 6): ≤ 10 ms per scan.
//! - Reading test results from a runner's output (the Bash hook path): a 32 KB cargo test
//!   output, against a plain line count of the same text.
//!
//! `CCMEM_BENCH_QUICK=1` for a short run.

mod figures;

use ccmem_daemon::{ports::Scanner, testout};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

fn q(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[((s.len() - 1) as f64 * p).round() as usize]
}

fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1000.0
}

struct Kids(Vec<Child>);

impl Drop for Kids {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn main() {
    let quick = std::env::var_os("CCMEM_BENCH_QUICK").is_some();
    let runs = if quick { 30 } else { 200 };
    println!(
        "ccmem environment benchmark ({} cores, {runs} runs){}",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        if quick { " [quick]" } else { "" }
    );
    let listeners: Vec<std::net::TcpListener> =
        (0..50).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind")).collect();
    let _idle =
        Kids((0..200).map(|_| Command::new("sleep").arg("600").stdin(Stdio::null()).spawn().expect("sleep")).collect());
    let procs = std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok()).count())
        .unwrap_or(0);
    println!("{} listening sockets of ours, {procs} processes on the machine", listeners.len());
    println!();

    let mut scanner = Scanner::new();
    let first = ms(|| {
        scanner.scan();
    });
    let (mut ours, mut full) = (Vec::new(), Vec::new());
    let mut found = 0;
    for _ in 0..runs {
        ours.push(ms(|| found = scanner.scan().len()));
        full.push(ms(|| {
            let af = netstat2::AddressFamilyFlags::IPV4 | netstat2::AddressFamilyFlags::IPV6;
            let _ = netstat2::get_sockets_info(af, netstat2::ProtocolFlags::TCP);
        }));
    }
    let fds = std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0);
    println!("{:<44} {:>9} {:>9}", "", "median ms", "p99 ms");
    println!("{:<44} {:>9.3} {:>9.3}", "port scan (first, cold)", first, first);
    println!("{:<44} {:>9.3} {:>9.3}", "port scan (ccmemd's, warm)", q(&ours, 0.5), q(&ours, 0.99));
    println!("{:<44} {:>9.3} {:>9.3}", "baseline: netstat2 get_sockets_info + pids", q(&full, 0.5), q(&full, 0.99));
    println!(
        "ratio to baseline: {:.2}×; servers found: {found}; our open fds after scans: {fds}",
        q(&ours, 0.5) / q(&full, 0.5)
    );
    figures::record(
        "port scan, warm, median",
        q(&ours, 0.5),
        "ms",
        "netstat2 get_sockets_info + pids, median",
        q(&full, 0.5),
    );
    figures::record(
        "port scan, warm, p99",
        q(&ours, 0.99),
        "ms",
        "netstat2 get_sockets_info + pids, p99",
        q(&full, 0.99),
    );
    figures::record("port scan, first (cold)", first, "ms", "netstat2 get_sockets_info + pids, median", q(&full, 0.5));

    let output = include_str!("../daemon/fixtures/testout/cargo-fail.txt").repeat(20);
    let (mut parse, mut lines) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        parse.push(ms(|| {
            std::hint::black_box(testout::parse(&output, Some("cargo")));
        }));
        parse.push(ms(|| {
            std::hint::black_box(testout::parse(&output, None));
        }));
        lines.push(ms(|| {
            std::hint::black_box(output.lines().filter(|l| l.contains("test")).count());
        }));
    }
    println!();
    println!(
        "test output parse ({} KB cargo output, with and without a hint): median {:.3} ms, p99 {:.3} ms; line scan {:.3} ms",
        output.len() / 1024,
        q(&parse, 0.5),
        q(&parse, 0.99),
        q(&lines, 0.5)
    );
    figures::record(
        "test output parse (cargo), median",
        q(&parse, 0.5),
        "ms",
        "line scan of the same text",
        q(&lines, 0.5),
    );
    println!();
    figures::target(&format!("port scan ≤ 10 ms ({:.3} ms)", q(&ours, 0.5)), q(&ours, 0.5) <= 10.0);
    drop(listeners);
    figures::finish("environment", quick);
}
