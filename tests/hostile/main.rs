//! A repository is untrusted input: trees an attacker (or an odd checkout) could hand the
//! daemon, on a real daemon. Each test would hang or flood the daemon without its fix, so
//! every client call here runs under a deadline.
// The harness (tests/common) drives daemons over Unix sockets; on Windows the wine smoke
// test (scripts/wine-smoke) runs the binaries instead.
#![cfg(unix)]

mod code;
#[path = "../common/mod.rs"]
mod common;
mod load;
mod repo_text;
mod tree;

use common::*;
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs `ccmemctl args` and fails the test if it does not finish within `limit`.
fn within(env: &Env, args: &[&str], limit: Duration) -> Output {
    let mut child = env
        .ctl_cmd(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ccmemctl");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ccmemctl {args:?} did not answer within {limit:?}: the daemon is stuck");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(p: &Path) {
    ccmem_proto::files::untrusted::mkfifo(p).unwrap_or_else(|e| panic!("mkfifo {}: {e}", p.display()));
}
