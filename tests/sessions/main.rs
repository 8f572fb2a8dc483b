//! Project sessions end to end: checkpoints in seed 004's schema, the tracker, restore,
//! expiry, periodic checkpoints, crashes, git, and projects kept apart.
#![cfg(unix)]

mod checkpoint;
#[path = "../common/mod.rs"]
mod common;
mod lifecycle;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn edit(path: &str) -> serde_json::Value {
    json!({"kind": "file_edited", "path": path})
}

fn tracker_files(env: &Env) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(env.state.join("ccmem/projects"))
        .map(|rd| rd.flatten().map(|e| e.path().join("tracker.json")).filter(|p| p.exists()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

use std::io::Write;
