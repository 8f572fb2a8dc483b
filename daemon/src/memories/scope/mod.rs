//! One scope directory: its memories (the `.md` files, the source of truth), the link graph
//! (`graph.json`), the index (`index.json`, derived) and the full-text index (in memory).
//!
//! Only the memory task touches a scope, so nothing here locks. Every write is atomic.

use super::search;
use ccmem_proto::files::atomic;
use ccmem_proto::model::memory::frontmatter::{self, Layout};
use ccmem_proto::model::memory::{self as model, Edge, Graph, Index, IndexEntry, Memory, Scope};
use ccmem_proto::wire::memory::InvalidFile;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

mod disk;
mod graph;
mod index;

/// Largest memory file read (content is at most 50,000 characters; the rest is frontmatter).
const MAX_MEMORY_FILE: u64 = 1 << 20;
/// Largest `graph.json` or `index.json` read: they come with the repository too.
const MAX_DERIVED_FILE: u64 = 64 << 20;
/// Memory files read in one scope at most, and their bytes: a repository that commits tens
/// of thousands held the one memory thread, every project's, for most of a minute, and
/// a gigabyte of the daemon's memory (round three's tester). The rest are not read, and
/// `memory health` says so.
const MAX_MEMORIES: usize = 2_000;
const MAX_SCOPE_BYTES: u64 = 16 << 20;

/// A file's identity for "did it change": modification time and length.
pub type Stamp = Option<(SystemTime, u64)>;

/// The stamp of `path` now.
pub fn stamp(path: &Path) -> Stamp {
    fs::metadata(path).ok().map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
}

/// A memory as kept: the model, how its file was laid out, and the file's stamp.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The memory.
    pub memory: Memory,
    /// Its file's layout.
    pub layout: Layout,
    /// Its file's stamp after we last read or wrote it.
    pub stamp: Stamp,
    /// Its `index.json` entry, serialised once (with `hasEmbedding` false, last): the index
    /// is rewritten after every change, and re-serialising thousands of entries each time
    /// would be most of a write's cost.
    entry: Box<str>,
    /// SHA-256 of the text that is embedded, worked out on first use: every semantic search
    /// compares it with the cached embedding's. A changed memory is a new `Stored`.
    text_hash: std::cell::OnceCell<String>,
}

impl Stored {
    fn new(memory: Memory, layout: Layout, stamp: Stamp, file: PathBuf) -> Self {
        let entry = serde_json::to_string(&index_entry(&memory, file, false)).unwrap_or_default().into_boxed_str();
        Stored { memory, layout, stamp, entry, text_hash: Default::default() }
    }

    /// SHA-256 of the memory's embedded text (title, tags, content).
    pub fn text_hash(&self) -> &str {
        self.text_hash.get_or_init(|| super::embed::sha256(&super::embed::text_of(&self.memory)))
    }
}

/// A memory's `index.json` entry. The index is written beside the memories, from files a
/// clone may have committed that were never filtered: the title and tags are redacted (the
/// title as the markdown it is), and so is the file's path when the project's directory
/// name holds a secret (the entry then names no file that exists; it is derived data, and
/// what it is checked against is derived the same way).
pub(super) fn index_entry(memory: &Memory, file: PathBuf, has_embedding: bool) -> IndexEntry {
    let mut e = memory.index_entry(file, has_embedding);
    e.title = crate::text::redact_markdown(&e.title);
    for t in &mut e.tags {
        if let std::borrow::Cow::Owned(r) = ccmem_proto::redact::redact(t) {
            *t = r;
        }
    }
    let redacted = match ccmem_proto::redact::redact(&e.file_path.to_string_lossy()) {
        std::borrow::Cow::Owned(r) => Some(PathBuf::from(r)),
        std::borrow::Cow::Borrowed(_) => None,
    };
    if let Some(p) = redacted {
        e.file_path = p;
    }
    e
}

/// One scope's memories, graph and indexes.
#[derive(Debug)]
pub struct ScopeStore {
    /// Which scope.
    pub scope: Scope,
    /// Its directory.
    pub dir: PathBuf,
    /// Valid memories by slug.
    pub memories: BTreeMap<String, Stored>,
    /// `.md` files that are not valid memories, with every broken rule.
    pub invalid: BTreeMap<PathBuf, Vec<String>>,
    /// The link graph.
    pub graph: Graph,
    /// Full-text index.
    pub text: search::Index,
    /// Cached embeddings, loaded on the first semantic search.
    pub vectors: Option<HashMap<String, super::embed::Cached>>,
    /// The models `vectors` were loaded for (primary first).
    pub vector_models: Vec<String>,
    /// The embedding cache's directory name (`embedding.cacheDirectory`).
    pub cache_dir: String,
    /// The index on disk differed from the files when loaded (and was rewritten).
    pub index_drift: Option<String>,
    graph_stamp: Stamp,
    index_dirty: bool,
    graph_dirty: bool,
}

impl ScopeStore {
    /// Reads a scope directory (which need not exist yet).
    pub fn load(scope: Scope, dir: PathBuf) -> Self {
        let mut s = ScopeStore {
            scope,
            dir,
            memories: BTreeMap::new(),
            invalid: BTreeMap::new(),
            graph: Graph::new(),
            text: search::Index::default(),
            vectors: None,
            cache_dir: super::embed::CACHE_DIR_DEFAULT.to_string(),
            vector_models: Vec::new(),
            index_drift: None,
            graph_stamp: None,
            index_dirty: false,
            graph_dirty: false,
        };
        s.sweep_temp_files();
        s.read_all();
        s
    }

    /// Reads every file again, discarding what was known (the rebuild of seed 003).
    pub fn read_all(&mut self) {
        self.graph = Graph::new();
        self.graph_stamp = None;
        self.graph_dirty = false;
        self.memories.clear();
        self.invalid.clear();
        self.text = search::Index::default();
        self.vectors = None;
        // With nothing known, every file reads as new.
        self.rescan();
        self.check_index();
    }

    /// Looks at the directory for changes nobody reported: files added, changed or removed,
    /// and the graph.
    pub fn rescan(&mut self) {
        let mut seen = std::collections::HashSet::new();
        let mut files: Vec<(PathBuf, u64)> = fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| is_memory_file(&e.path()) && e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default();
        // By name: which ones are read past the limits does not depend on the disk's order.
        files.sort();
        let (mut bytes, mut left_out) = (0u64, 0usize);
        for (path, len) in files {
            if seen.len() >= MAX_MEMORIES || bytes + len > MAX_SCOPE_BYTES {
                left_out += 1;
                continue;
            }
            bytes += len;
            self.read_file(&path);
            seen.insert(path);
        }
        self.invalid.remove(&self.dir);
        if left_out > 0 {
            tracing::warn!(dir = %self.dir.display(), left_out, "too many memory files: the rest are not read");
            let why = format!(
                "{left_out} memory files not read: a scope holds at most {MAX_MEMORIES} files and {} MiB",
                MAX_SCOPE_BYTES >> 20
            );
            self.invalid.insert(self.dir.clone(), vec![why]);
        }
        let gone: Vec<PathBuf> = self
            .memories
            .keys()
            .map(|s| self.path_of(s))
            .chain(self.invalid.keys().cloned())
            .filter(|p| !seen.contains(p))
            .collect();
        for p in gone {
            self.read_file(&p);
        }
        self.load_graph();
    }

    /// The file of a slug.
    pub fn path_of(&self, slug: &str) -> PathBuf {
        self.dir.join(format!("{slug}.md"))
    }

    /// Takes in a memory file that changed on disk (or vanished). Returns whether anything
    /// changed; memories deleted by hand lose their edges as `memory delete` would.
    pub fn read_file(&mut self, path: &Path) -> bool {
        let Some(slug) = slug_of(path) else { return false };
        // A scope at its limit takes no new file from a notification either.
        if self.memories.len() >= MAX_MEMORIES && !self.memories.contains_key(&slug) && path.exists() {
            return false;
        }
        let now_stamp = stamp(path);
        if let Some(known) = self.memories.get(&slug) {
            if known.stamp == now_stamp && now_stamp.is_some() {
                return false;
            }
        }
        let text =
            match now_stamp.map(|_| self.read_own(path, MAX_MEMORY_FILE).map(ccmem_proto::files::untrusted::text)) {
                None | Some(Err(_)) if !path.exists() => {
                    let had = self.invalid.remove(path).is_some();
                    if self.memories.contains_key(&slug) {
                        tracing::info!(scope = %self.scope, slug, "memory file removed by hand");
                        self.forget(&slug);
                        return true;
                    }
                    return had;
                }
                Some(Ok(t)) => t,
                Some(Err(e)) => {
                    self.invalid.insert(path.to_path_buf(), vec![format!("cannot read: {e}")]);
                    return true;
                }
                None => return false,
            };
        match frontmatter::parse(&slug, self.scope, &text).and_then(|(m, l)| {
            let slug_ok = model::check_slug("slug (the file name)", &slug).map_err(|e| vec![e]);
            slug_ok.map(|_| (m, l))
        }) {
            Ok((memory, layout)) => {
                self.invalid.remove(path);
                self.text.put(&memory);
                if let Some(v) = self.vectors.as_mut() {
                    v.remove(&slug);
                }
                let stored = Stored::new(memory, layout, now_stamp, path.to_path_buf());
                self.memories.insert(slug, stored);
                self.index_dirty = true;
            }
            Err(errors) => {
                if self.memories.remove(&slug).is_some() {
                    self.text.remove(&slug);
                    self.index_dirty = true;
                }
                self.invalid.insert(path.to_path_buf(), errors.iter().map(|e| e.to_string()).collect());
            }
        }
        true
    }

    /// Whether `index.json` or `graph.json` waits to be written.
    pub fn is_dirty(&self) -> bool {
        self.index_dirty || self.graph_dirty
    }

    /// Writes what changed of `index.json` and `graph.json`.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.is_dirty() {
            return Ok(());
        }
        self.make_dir()?;
        if self.graph_dirty {
            let path = self.graph_path();
            self.write_own(&path, &to_json(&self.graph))?;
            self.graph_stamp = stamp(&path);
            self.graph_dirty = false;
        }
        if self.index_dirty {
            self.write_own(&self.index_path(), &self.index_bytes())?;
            self.index_dirty = false;
            self.index_drift = None;
        }
        Ok(())
    }

    /// Writes a memory's file and takes it in.
    pub fn save(&mut self, memory: Memory, layout: Layout) -> io::Result<PathBuf> {
        self.prepare_dir()?;
        let path = self.path_of(&memory.slug);
        self.write_own(&path, frontmatter::render(&memory, &layout).as_bytes())?;
        self.text.put(&memory);
        self.invalid.remove(&path);
        let slug = memory.slug.clone();
        let stored = Stored::new(memory, layout, stamp(&path), path.clone());
        self.memories.insert(slug, stored);
        self.index_dirty = true;
        Ok(path)
    }

    /// Removes a memory's file and everything that refers to it. Returns the memories that
    /// lost an edge.
    pub fn delete(&mut self, slug: &str) -> io::Result<Vec<String>> {
        let path = self.path_of(slug);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if let Some(dir) = path.parent() {
            let _ = atomic::sync_dir(dir);
        }
        Ok(self.forget(slug))
    }

    /// Drops a memory whose file is gone: cascade delete of its edges (both directions, and
    /// the other memories' `links`), its cache file and index entry.
    fn forget(&mut self, slug: &str) -> Vec<String> {
        self.memories.remove(slug);
        self.text.remove(slug);
        let cache = self.cache_path();
        super::embed::remove_cache(cache.as_deref(), slug, self.vectors.as_mut());
        self.index_dirty = true;
        let mut touched: Vec<String> =
            self.graph.remove(slug).unwrap_or_default().into_iter().map(|e| e.target).collect();
        for (src, edges) in self.graph.iter_mut() {
            let before = edges.len();
            edges.retain(|e| e.target != slug);
            if edges.len() != before {
                touched.push(src.clone());
            }
        }
        self.graph.retain(|_, e| !e.is_empty());
        self.graph_dirty = true;
        touched.sort();
        touched.dedup();
        for other in &touched {
            if let Err(e) = self.sync_links(other, Some(slug)) {
                tracing::warn!(scope = %self.scope, slug = other, error = %e, "cannot update links");
            }
        }
        touched
    }

    /// Invalid files, for replies.
    pub fn invalid_files(&self) -> Vec<InvalidFile> {
        self.invalid.iter().map(|(f, e)| InvalidFile { file: f.clone(), errors: e.clone() }).collect()
    }
}

/// `<slug>.md` files a memory may live in: not hidden, not our temp files.
pub fn is_memory_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    name.ends_with(".md") && !name.starts_with('.') && !name.contains(atomic::TMP_MARK)
}

fn slug_of(path: &Path) -> Option<String> {
    is_memory_file(path).then(|| path.file_stem().and_then(|s| s.to_str()).map(str::to_string)).flatten()
}

fn to_json<T: serde::Serialize>(v: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(v).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests;
