//! Load: many clients, each on its own connection, sending hook events back to back into one
//! project for a while. No request may fail, no event may be lost (each client's file must
//! show exactly as many edits as it sent), and the daemon's memory must stay bounded.
//!
//! Short by default (200 clients, 3 s). Long: `CCMEM_LOAD_CLIENTS=1000 CCMEM_LOAD_SECS=60
//! cargo test --release --test load -- --nocapture`.
// The harness (tests/common) drives daemons over Unix sockets; on Windows the wine smoke
// test (scripts/wine-smoke) runs the binaries instead.
#![cfg(unix)]
#![cfg(unix)]

mod common;

use common::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn many_clients_sending_hook_events_lose_nothing() {
    raise_fd_limit();
    let clients = env_num("CCMEM_LOAD_CLIENTS", 200) as usize;
    let secs = env_num("CCMEM_LOAD_SECS", 3);
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    env.request("project.watch", json!({"path": root}));
    let (rss_before, _) = rss_kib(d.pid);

    let start = Arc::new(Barrier::new(clients + 1));
    let deadline = Duration::from_secs(secs);
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (socket, root, start) = (env.socket.clone(), root.clone(), start.clone());
            std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    let s = UnixStream::connect(&socket).expect("connect");
                    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
                    let mut w = s.try_clone().expect("clone");
                    let mut r = BufReader::new(s);
                    let file = root.join(format!("src/client_{c}.rs"));
                    let payload = json!({
                        "hook_event_name": "PostToolUse", "session_id": "load", "cwd": root,
                        "tool_name": "Edit",
                        "tool_input": {"file_path": file, "old_string": "a", "new_string": "b"},
                        "tool_response": {"filePath": file},
                    });
                    let line = format!("{}\n", json!({"jsonrpc": "2.0", "id": 1, "method": "hook", "params": payload}));
                    let mut reply = String::new();
                    let (mut sent, mut errors) = (0u64, 0u64);
                    start.wait();
                    let t = Instant::now();
                    while t.elapsed() < deadline {
                        w.write_all(line.as_bytes()).expect("send");
                        reply.clear();
                        r.read_line(&mut reply).expect("reply");
                        if reply.contains("\"error\"") || reply.is_empty() {
                            errors += 1;
                        }
                        sent += 1;
                    }
                    (sent, errors)
                })
                .expect("spawn client")
        })
        .collect();
    // Sample the daemon's memory while the load runs.
    let sampler = {
        let pid = d.pid;
        std::thread::spawn(move || {
            let t = Instant::now();
            let mut peak = 0;
            while t.elapsed() < deadline + Duration::from_secs(1) {
                peak = peak.max(rss_kib(pid).0);
                std::thread::sleep(Duration::from_millis(200));
            }
            peak
        })
    };
    start.wait();
    let t = Instant::now();
    let results: Vec<(u64, u64)> = threads.into_iter().map(|t| t.join().expect("client thread")).collect();
    let elapsed = t.elapsed().as_secs_f64();
    let peak = sampler.join().expect("sampler");
    let sent: u64 = results.iter().map(|r| r.0).sum();
    let errors: u64 = results.iter().map(|r| r.1).sum();
    assert_eq!(errors, 0, "{errors} of {sent} requests failed");

    // Every event counted: each client's file shows exactly its edits.
    let counts = |env: &Env| -> Vec<u64> {
        let s = env.project_status(&root);
        (0..clients)
            .map(|c| {
                s["session"]["files_modified"][format!("src/client_{c}.rs")]["modification_count"].as_u64().unwrap_or(0)
            })
            .collect()
    };
    let want: Vec<u64> = results.iter().map(|r| r.0).collect();
    assert!(
        wait_until(Duration::from_secs(60), || counts(&env) == want),
        "events lost: sent {} in all, counted {}",
        sent,
        counts(&env).iter().sum::<u64>()
    );
    let (rss_after, _) = rss_kib(d.pid);
    eprintln!(
        "{clients} clients, {elapsed:.1} s: {sent} hook events ({:.0}/s), none lost; RSS {} → peak {} → {} KiB",
        sent as f64 / elapsed,
        rss_before,
        peak,
        rss_after
    );
    // Bounded: what the session holds for a few thousand files, not what passed through.
    assert!(peak < 256 * 1024, "daemon RSS peaked at {peak} KiB");
    assert!(!d.log().contains("panicked"));
}
