//! Knowledge memories end to end (seed 003): a real daemon, real scope directories, the
//! command line, hand edits picked up by the watcher, concurrent writers, the health check
//! and its repairs, semantic search through a local HTTP stub of ollama, and the MCP server.
#![cfg(unix)]

#[path = "../common/mod.rs"]
mod common;
mod disk;
mod mcp;
mod search;
mod secrets;
mod store;

use ccmem_proto::model::memory::frontmatter;
use ccmem_proto::model::memory::{inverse_label, Scope};
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A daemon in its own environment, and a git project.
fn started() -> (Env, Daemon, PathBuf) {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    (env, d, root)
}

fn mem_dir(root: &Path) -> PathBuf {
    root.join(".claude/memory")
}

/// `ccmemctl memory ARGS --project ROOT`.
fn mem(env: &Env, root: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["memory"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--project", root.to_str().expect("utf-8 path")]);
    env.ctl(&a)
}

fn mem_json(env: &Env, root: &Path, args: &[&str]) -> Value {
    let mut a = vec!["memory"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--project", root.to_str().expect("utf-8 path")]);
    env.ctl_json(&a)
}

fn write(env: &Env, root: &Path, args: &[&str]) -> String {
    let mut a = vec!["write"];
    a.extend_from_slice(args);
    let out = mem(env, root, &a);
    assert_ok(&out, &format!("memory write {args:?}"));
    text(&out.stdout).trim().to_string()
}

fn failure(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "expected a failure: {}", text(&out.stdout));
    text(&out.stderr)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()))
}

/// Parses a memory file as the daemon would, panicking with the file on any error.
fn parse_file(dir: &Path, slug: &str) -> ccmem_proto::model::memory::Memory {
    let p = dir.join(format!("{slug}.md"));
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    frontmatter::parse(slug, Scope::Project, &t).unwrap_or_else(|e| panic!("{}: {e:?}\n{t}", p.display())).0
}

/// Every edge of a graph.json has its inverse, and each memory's frontmatter `links` are
/// exactly its neighbours.
fn assert_graph_consistent(dir: &Path) {
    let g = read_json(&dir.join("graph.json"));
    let g = g.as_object().expect("graph object");
    for (src, edges) in g {
        for e in edges.as_array().expect("edges") {
            let (t, l) = (e["target"].as_str().unwrap(), e["label"].as_str().unwrap());
            let back = g
                .get(t)
                .and_then(Value::as_array)
                .is_some_and(|b| b.iter().any(|x| x["target"] == src.as_str() && x["label"] == inverse_label(l)));
            assert!(back, "{src} -{l}-> {t} has no inverse in {}", dir.display());
        }
        let mut links = parse_file(dir, src).links;
        links.sort();
        let mut want: Vec<String> =
            edges.as_array().unwrap().iter().map(|e| e["target"].as_str().unwrap().to_string()).collect();
        want.sort();
        want.dedup();
        assert_eq!(links, want, "{src}: frontmatter links and graph differ");
    }
}

/// A stand-in for ollama's `/api/embed`: vectors from keyword classes, so that "feline"
/// and "cat" meet without sharing a word. Model `missing` answers 404, like a model not
/// pulled. Counts the texts it embedded.
struct Stub {
    port: u16,
    embedded: Arc<AtomicUsize>,
}
