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

/// A transcript's events as the journal takes them, replayed as `import` reads it (root,
/// session and time are the caller's to set).
pub fn journal_entries(transcript: &Path) -> Vec<ccmem_daemon::journal::Entry> {
    use ccmem_daemon::agent::hooks;
    use ccmem_daemon::journal::Entry;
    let root = Path::new("/bench/project");
    let mut out = Vec::new();
    let _ = ccmem_client::import::replay(transcript, root, |p| {
        let Some(h) = hooks::parse(p) else { return Ok(()) };
        let base = |kind: &'static str, text: String| Entry {
            source: "import",
            kind,
            agent: Some(h.agent.to_string()),
            conversation: h.conversation.clone(),
            text,
            ..Entry::default()
        };
        match &h.kind {
            hooks::Kind::Prompt { text } => out.push(base("prompt", text.clone())),
            hooks::Kind::Stop { last_message: Some(m), .. } => out.push(base("stop", m.clone())),
            hooks::Kind::Compacted { summary } => out.push(base("compacted", summary.clone())),
            hooks::Kind::ToolUse { tool: hooks::Tool::Shell { command, .. }, .. } => {
                out.push(base("command", command.clone()))
            }
            hooks::Kind::ToolUse { tool: hooks::Tool::Edits(edits), .. } => {
                for e in edits {
                    let rel = e.path.trim_start_matches("/bench/project/").to_string();
                    out.push(Entry { path: Some(rel.clone()), ..base("edit", format!("{rel} {}", e.summary)) });
                }
            }
            hooks::Kind::ToolUse { name, .. } => out.push(base("tool", name.clone())),
            _ => {}
        }
        Ok(())
    });
    out
}
