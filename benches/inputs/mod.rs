//! What the benches read and draw from: the real transcripts of a set, gzipped or not, and a
//! small fixed pseudo-random sequence (the same on every run).
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

/// The directory in `var`, else `../shared/<default>` beside the repository, and the
/// transcripts in it (`*.jsonl`, `*.jsonl.gz`), sorted.
pub fn transcripts(var: &str, default: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(default));
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|rd| rd.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.retain(|p| {
        let n = p.to_string_lossy();
        n.ends_with(".jsonl") || n.ends_with(".jsonl.gz")
    });
    files.sort();
    (dir, files)
}

/// A transcript's bytes, gunzipped when it ends in `.gz`.
pub fn read_maybe_gz(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).expect("read transcript");
    if p.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out).expect("gunzip transcript");
        out
    } else {
        raw
    }
}

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// In [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<'a>(&mut self, v: &'a [String]) -> &'a str {
        &v[(self.next() % v.len() as u64) as usize]
    }
}
