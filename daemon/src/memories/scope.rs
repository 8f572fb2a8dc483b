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

/// Largest memory file read (content is at most 50,000 characters; the rest is frontmatter).
const MAX_MEMORY_FILE: u64 = 1 << 20;
/// Largest `graph.json` or `index.json` read: they come with the repository too.
const MAX_DERIVED_FILE: u64 = 64 << 20;

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
        let entry = serde_json::to_string(&memory.index_entry(file, false)).unwrap_or_default().into_boxed_str();
        Stored { memory, layout, stamp, entry, text_hash: Default::default() }
    }

    /// SHA-256 of the memory's embedded text (title, tags, content).
    pub fn text_hash(&self) -> &str {
        self.text_hash.get_or_init(|| super::embed::sha256(&super::embed::text_of(&self.memory)))
    }
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

    /// Removes the temp files a crash left in the directory (`index.json.tmp-…`,
    /// `x.md.tmp-…`): only this thread writes there, and while it loads the scope it writes
    /// nothing, so every one is a leftover. The project's directory is committed: they would
    /// show in `git status`.
    fn sweep_temp_files(&self) {
        let dirs = [self.own_dir().map(Path::to_path_buf), self.cache_path()];
        for dir in dirs.into_iter().flatten() {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let name = e.file_name();
                if name.to_string_lossy().contains(atomic::TMP_MARK) && e.file_type().is_ok_and(|t| t.is_file()) {
                    match fs::remove_file(e.path()) {
                        Ok(()) => tracing::info!(file = %e.path().display(), "removed a temp file left by a crash"),
                        Err(err) => {
                            tracing::warn!(file = %e.path().display(), error = %err, "cannot remove a leftover temp file")
                        }
                    }
                }
            }
        }
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
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let path = e.path();
                if is_memory_file(&path) && e.file_type().is_ok_and(|t| t.is_file()) {
                    self.read_file(&path);
                    seen.insert(path);
                }
            }
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

    fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    fn graph_path(&self) -> PathBuf {
        self.dir.join("graph.json")
    }

    /// Takes in a memory file that changed on disk (or vanished). Returns whether anything
    /// changed; memories deleted by hand lose their edges as `memory delete` would.
    pub fn read_file(&mut self, path: &Path) -> bool {
        let Some(slug) = slug_of(path) else { return false };
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

    /// Reads `graph.json` if it changed since we last read or wrote it. A file that is not a
    /// graph is set aside (renamed `.corrupt`) and the graph starts empty; the health check
    /// then reports the links it lost.
    pub fn load_graph(&mut self) -> bool {
        let path = self.graph_path();
        let st = stamp(&path);
        // Unwritten changes of ours are newer than anything on disk (we are the one writer).
        if st == self.graph_stamp || self.graph_dirty {
            return false;
        }
        self.graph_stamp = st;
        self.graph = match self.read_own(&path, MAX_DERIVED_FILE) {
            Err(_) => Graph::new(),
            Ok(bytes) => match serde_json::from_slice::<Graph>(&bytes) {
                Ok(g) => g,
                Err(e) => {
                    let aside = atomic::with_suffix(&path, ".corrupt");
                    tracing::warn!(file = %path.display(), error = %e, "graph.json is not a graph; set aside");
                    let _ = fs::rename(&path, aside);
                    Graph::new()
                }
            },
        };
        self.graph.retain(|_, edges| !edges.is_empty());
        true
    }

    /// Compares `index.json` with the files; a missing, corrupt or drifted index is rewritten
    /// at the next flush.
    fn check_index(&mut self) {
        let drift = self.index_drift_on_disk();
        if let Some(d) = &drift {
            tracing::info!(scope = %self.scope, dir = %self.dir.display(), "{d}; rebuilding it");
            self.index_dirty = true;
        }
        self.index_drift = drift;
    }

    /// How `index.json` on disk differs from the files now, if it does.
    pub fn index_drift_on_disk(&self) -> Option<String> {
        let expected = self.index_entries();
        match self.read_own(&self.index_path(), MAX_DERIVED_FILE) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                (!self.memories.is_empty() || !self.invalid.is_empty()).then(|| "index.json is missing".to_string())
            }
            Err(e) => Some(format!("index.json cannot be read: {e}")),
            Ok(bytes) => match serde_json::from_slice::<Index>(&bytes) {
                Err(e) => Some(format!("index.json is corrupt: {e}")),
                Ok(i) if i.memories != expected => {
                    let missing = expected.keys().filter(|k| !i.memories.contains_key(*k)).count();
                    let extra = i.memories.keys().filter(|k| !expected.contains_key(*k)).count();
                    Some(format!(
                        "index.json differs from the files ({missing} missing, {extra} extra, {} changed)",
                        expected.iter().filter(|(k, v)| i.memories.get(*k).is_some_and(|o| o != *v)).count()
                    ))
                }
                Ok(_) => None,
            },
        }
    }

    /// Seed 003's index entries, from the memories held.
    pub fn index_entries(&self) -> BTreeMap<String, IndexEntry> {
        let cached = self.cached_embeddings();
        self.memories
            .iter()
            .map(|(slug, s)| (slug.clone(), s.memory.index_entry(self.path_of(slug), cached(slug))))
            .collect()
    }

    /// `index.json`, compact (derived, not committed, rewritten on every change), from the
    /// entries serialised when each memory was stored.
    pub fn index_bytes(&self) -> Vec<u8> {
        let cached = self.cached_embeddings();
        let head = serde_json::json!({"version": model::INDEX_VERSION, "lastUpdated": chrono::Utc::now()});
        let mut out = serde_json::to_vec(&head).unwrap_or_default();
        out.pop();
        out.extend_from_slice(b",\"memories\":{");
        for (n, (slug, s)) in self.memories.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(serde_json::to_string(slug).unwrap_or_default().as_bytes());
            out.push(b':');
            let entry = &s.entry;
            match entry.strip_suffix("\"hasEmbedding\":false}") {
                Some(body) if cached(slug) => {
                    out.extend_from_slice(body.as_bytes());
                    out.extend_from_slice(b"\"hasEmbedding\":true}");
                }
                _ => out.extend_from_slice(entry.as_bytes()),
            }
        }
        out.extend_from_slice(b"}}\n");
        out
    }

    /// Whether a memory has a cached embedding: the loaded cache, else one listing of the
    /// cache directory.
    fn cached_embeddings(&self) -> impl Fn(&str) -> bool + '_ {
        let on_disk: std::collections::HashSet<String> = match &self.vectors {
            Some(_) => Default::default(),
            None => self
                .cache_path()
                .and_then(|c| fs::read_dir(c).ok())
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        };
        move |slug: &str| match &self.vectors {
            Some(v) => v.contains_key(slug),
            None => on_disk.contains(&format!("{slug}.json")),
        }
    }

    /// Whether `index.json` or `graph.json` waits to be written.
    pub fn is_dirty(&self) -> bool {
        self.index_dirty || self.graph_dirty
    }

    /// Marks the graph for rewriting (after a repair changed it directly).
    pub fn mark_graph(&mut self) {
        self.graph_dirty = true;
    }

    /// Marks the index for rewriting.
    pub fn touch_index(&mut self) {
        self.index_dirty = true;
    }

    /// Writes what changed of `index.json` and `graph.json`.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.is_dirty() {
            return Ok(());
        }
        self.make_dir()?;
        if self.graph_dirty {
            let path = self.graph_path();
            atomic::write(&path, &to_json(&self.graph), false)?;
            self.graph_stamp = stamp(&path);
            self.graph_dirty = false;
        }
        if self.index_dirty {
            atomic::write(&self.index_path(), &self.index_bytes(), false)?;
            self.index_dirty = false;
            self.index_drift = None;
        }
        Ok(())
    }

    /// Writes a memory's file and takes it in.
    pub fn save(&mut self, memory: Memory, layout: Layout) -> io::Result<PathBuf> {
        self.prepare_dir()?;
        let path = self.path_of(&memory.slug);
        atomic::write(&path, frontmatter::render(&memory, &layout).as_bytes(), false)?;
        self.text.put(&memory);
        self.invalid.remove(&path);
        let slug = memory.slug.clone();
        let stored = Stored::new(memory, layout, stamp(&path), path.clone());
        self.memories.insert(slug, stored);
        self.index_dirty = true;
        Ok(path)
    }

    /// Makes the scope's directory. A project's (`<root>/.claude/memory`, `…/local`) is never
    /// made through a symbolic link inside the project: the repository could point it at
    /// another project's memories.
    /// The project a project or local scope belongs to (what its files must stay inside).
    fn project_root(&self) -> Option<&Path> {
        match self.scope {
            Scope::Project | Scope::Local => {
                self.dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == ".claude")).and_then(Path::parent)
            }
            Scope::Global | Scope::Enterprise => None,
        }
    }

    /// The scope's directory, unless a link takes it elsewhere: for a project's scopes, the
    /// directory must be where it says (no link on the way from the project root, which is
    /// canonical). What is read, written and deleted by name there stays in the project.
    pub fn own_dir(&self) -> Option<&Path> {
        match self.project_root() {
            Some(_) => std::fs::canonicalize(&self.dir).map_or(true, |real| real == self.dir).then_some(&self.dir),
            None => Some(&self.dir),
        }
    }

    /// The embedding cache directory, unless it (or the scope's directory) is a link: a
    /// repository can make `.embedding-cache` point at `~/.claude`, and cache files are
    /// written, listed and deleted by name.
    pub fn cache_path(&self) -> Option<PathBuf> {
        let d = self.own_dir()?.join(&self.cache_dir);
        match fs::symlink_metadata(&d) {
            Ok(m) if !m.is_dir() => None,
            _ => Some(d),
        }
    }

    /// Reads one of the scope's files; a project's may not lead out of the project.
    fn read_own(&self, path: &Path, max: u64) -> io::Result<Vec<u8>> {
        match self.project_root() {
            Some(root) => ccmem_proto::files::untrusted::read_in(root, path, max),
            None => ccmem_proto::files::untrusted::read(path, max),
        }
    }

    fn make_dir(&self) -> io::Result<()> {
        match self.project_root() {
            Some(root) => ccmem_proto::files::untrusted::create_dir_under(root, &self.dir),
            None => fs::create_dir_all(&self.dir),
        }
    }

    /// Creates the directory, with the ignore file that keeps derived files (and the whole
    /// local scope) out of git, unless one is there.
    fn prepare_dir(&self) -> io::Result<()> {
        // Also for the first memory of a directory made by someone else (the local scope's
        // directory makes the project's).
        self.make_dir()?;
        if !self.memories.is_empty() {
            return Ok(());
        }
        let ignore = match self.scope {
            Scope::Local => Some("# ccmem: the local scope is never committed\n*\n"),
            Scope::Project => {
                Some("# ccmem: derived files, rebuilt from the memories\nindex.json\n.embedding-cache/\n")
            }
            Scope::Global | Scope::Enterprise => None,
        };
        if let Some(text) = ignore {
            let path = self.dir.join(".gitignore");
            if !path.exists() {
                atomic::write(&path, text.as_bytes(), false)?;
            }
        }
        Ok(())
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

    /// The edges of a memory.
    pub fn edges(&self, slug: &str) -> Vec<Edge> {
        self.graph.get(slug).cloned().unwrap_or_default()
    }

    /// Adds `source -label-> target` and its inverse, and both memories' `links`.
    pub fn link(&mut self, source: &str, target: &str, label: &str) -> Result<Vec<(String, String, String)>, String> {
        if source == target {
            return Err(format!("cannot link {source} to itself: the graph has no self edges"));
        }
        for s in [source, target] {
            if !self.memories.contains_key(s) {
                return Err(format!("no memory {s} in the {} scope", self.scope));
            }
        }
        if self.graph.get(source).is_some_and(|e| e.iter().any(|e| e.target == target && e.label == label)) {
            return Err(format!("{source} is already linked to {target} as {label}"));
        }
        let inverse = model::inverse_label(label).to_string();
        let timestamp = model::iso(chrono::Utc::now());
        let mut made = Vec::new();
        for (a, b, l) in [(source, target, label), (target, source, inverse.as_str())] {
            let edges = self.graph.entry(a.to_string()).or_default();
            if !edges.iter().any(|e| e.target == b && e.label == l) {
                edges.push(Edge { target: b.to_string(), label: l.to_string(), timestamp: timestamp.clone() });
                made.push((a.to_string(), l.to_string(), b.to_string()));
            }
        }
        self.graph_dirty = true;
        for s in [source, target] {
            self.sync_links(s, None).map_err(|e| format!("cannot write {s}: {e}"))?;
        }
        Ok(made)
    }

    /// Removes the edges between two memories (only those labelled `label`, and their
    /// inverses, when given), and updates `links`.
    pub fn unlink(
        &mut self,
        source: &str,
        target: &str,
        label: Option<&str>,
    ) -> Result<Vec<(String, String, String)>, String> {
        let inverse = label.map(model::inverse_label);
        let mut removed = Vec::new();
        for (a, b, l) in [(source, target, label), (target, source, inverse)] {
            if let Some(edges) = self.graph.get_mut(a) {
                edges.retain(|e| {
                    let hit = e.target == b && l.is_none_or(|l| e.label == l);
                    if hit {
                        removed.push((a.to_string(), e.label.clone(), b.to_string()));
                    }
                    !hit
                });
            }
        }
        if removed.is_empty() {
            let how = label.map(|l| format!(" as {l}")).unwrap_or_default();
            return Err(format!("{source} and {target} are not linked{how}"));
        }
        self.graph.retain(|_, e| !e.is_empty());
        self.graph_dirty = true;
        for (s, other) in [(source, target), (target, source)] {
            if !self.neighbours(s).iter().any(|n| n == other) {
                self.sync_links(s, Some(other)).map_err(|e| format!("cannot write {s}: {e}"))?;
            }
        }
        Ok(removed)
    }

    /// Brings a memory's frontmatter `links` in step with the graph: `dropped` leaves it,
    /// neighbours missing are added. A link the graph does not know (added by hand) stays:
    /// the health check reports it.
    pub fn sync_links(&mut self, slug: &str, dropped: Option<&str>) -> io::Result<()> {
        let Some(stored) = self.memories.get(slug) else { return Ok(()) };
        let mut links: Vec<String> =
            stored.memory.links.iter().filter(|l| Some(l.as_str()) != dropped).cloned().collect();
        for n in self.neighbours(slug) {
            if !links.contains(&n) {
                links.push(n);
            }
        }
        if links == stored.memory.links {
            return Ok(());
        }
        let mut m = stored.memory.clone();
        m.links = links;
        let layout = stored.layout.clone();
        self.save(m, layout).map(|_| ())
    }

    /// Memories joined to `slug` by an edge in either direction, in the graph's order.
    pub fn neighbours(&self, slug: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in self.graph.get(slug).into_iter().flatten() {
            if !out.contains(&e.target) {
                out.push(e.target.clone());
            }
        }
        for (src, edges) in &self.graph {
            if edges.iter().any(|e| e.target == slug) && !out.contains(src) {
                out.push(src.clone());
            }
        }
        out
    }

    /// Every memory's neighbours, as [`Self::neighbours`] gives them, in one pass over the
    /// graph: for work on all memories, where asking each would scan the graph each time.
    pub fn neighbour_map(&self) -> std::collections::HashMap<&str, Vec<&str>> {
        fn add<'a>(map: &mut std::collections::HashMap<&'a str, Vec<&'a str>>, a: &'a str, b: &'a str) {
            let v = map.entry(a).or_default();
            if !v.contains(&b) {
                v.push(b);
            }
        }
        let mut map = std::collections::HashMap::new();
        for (src, edges) in &self.graph {
            for e in edges {
                add(&mut map, src, &e.target);
            }
        }
        for (src, edges) in &self.graph {
            for e in edges {
                add(&mut map, &e.target, src);
            }
        }
        map
    }

    /// Edges in the graph, each direction counted.
    pub fn edge_count(&self) -> usize {
        self.graph.values().map(Vec::len).sum()
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
