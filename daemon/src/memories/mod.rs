//! Knowledge memories (seed 003): the one writer of every scope's files.
//!
//! A single thread owns every scope that has been touched (global, each project's project
//! and local scopes, the enterprise one). Requests, file notifications and finished
//! embeddings arrive as messages; the thread drains what is queued, then writes each dirty
//! `index.json`/`graph.json` once and answers. Several agents writing at once are thus
//! serialised without a lock, and a burst of writes costs one index write.
//!
//! It is a thread rather than a task because everything it does is file I/O: it would
//! otherwise hold an async worker (of two, on a small machine) for each read.

pub mod config;
pub mod embed;
pub mod health;
mod ops;
pub mod scope;
pub mod search;

use ccmem_proto::model::memory::Scope;
use ccmem_proto::wire::memory::*;
use scope::ScopeStore;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Quiet time after a file notification before the files are read: an editor's save is
/// several events.
const FS_SETTLE: Duration = Duration::from_millis(100);
/// When the global scope is read without being asked for.
const PRELOAD_AFTER: Duration = Duration::from_millis(300);
/// Messages handled before dirty files are written and replies sent.
const BATCH: usize = 64;

/// A memory request, with its params.
#[derive(Debug)]
pub enum Request {
    /// `memory.write`.
    Write(WriteParams),
    /// `memory.show`.
    Show(SlugParams),
    /// `memory.list`.
    List(ListParams),
    /// `memory.search`.
    Search(SearchParams),
    /// `memory.update`.
    Update(UpdateParams),
    /// `memory.delete`.
    Delete(SlugParams),
    /// `memory.link`.
    Link(LinkParams),
    /// `memory.unlink`.
    Unlink(LinkParams),
    /// `memory.health`.
    Health(HealthParams),
    /// `memory.rebuild`.
    Rebuild(ScopeParams),
    /// `memory.suggest_links`.
    Suggest(SuggestParams),
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The request broke a rule (bad value, unknown slug) rather than the store failing.
    pub invalid: bool,
    /// What went wrong, naming the field and rule where there is one.
    pub message: String,
}

impl Failure {
    /// A broken rule.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { invalid: true, message: message.into() }
    }
    /// The store failed.
    pub fn io(message: impl Into<String>) -> Self {
        Self { invalid: false, message: message.into() }
    }
}

type Reply = oneshot::Sender<Result<Value, Failure>>;

/// A memory for the resume context: its line, and whether its file is the repository's
/// (the project's own scopes), which the context shows as quoted data.
#[derive(Debug, Clone)]
pub struct Relevant {
    /// `- [type] title (slug, scope): first line`, or for the repository's, the text quoted.
    pub line: String,
    /// The file lies in the project (`.claude/memory/`, `local/`): a clone can bring it.
    pub from_repository: bool,
}

enum Msg {
    Request {
        project: Option<PathBuf>,
        req: Request,
        reply: Reply,
    },
    Relevant {
        project: PathBuf,
        topics: Vec<String>,
        limit: usize,
        reply: oneshot::Sender<Vec<Relevant>>,
    },
    Fs(Vec<PathBuf>),
    /// A semantic search finished: its embeddings to cache, its results' snippets to make
    /// (from the memories, which only this thread holds), then its answer.
    Searched {
        embedded: Vec<ops::Embedded>,
        reply: Reply,
        result: SearchReply,
        query: String,
    },
}

/// A handle on the memory thread.
#[derive(Debug, Clone)]
pub struct Memories {
    tx: mpsc::Sender<Msg>,
}

impl Memories {
    /// Starts the memory thread. `global_dir` is `~/.claude/memory` (none without a home).
    pub fn spawn(global_dir: Option<PathBuf>) -> Self {
        let (tx, rx) = mpsc::channel();
        let rt = tokio::runtime::Handle::current();
        let me = tx.clone();
        let spawned = std::thread::Builder::new().name("ccmem-memories".into()).spawn(move || {
            let mut a = Actor::new(global_dir, me, rt);
            a.run(rx);
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the memory thread; memory requests will fail");
        }
        Self { tx }
    }

    /// Runs a request; `project` is the project root, when there is one.
    pub async fn request(&self, project: Option<PathBuf>, req: Request) -> Result<Value, Failure> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Request { project, req, reply })
            .map_err(|_| Failure::io("the memory store has stopped; restart ccmemd"))?;
        rx.await.map_err(|_| Failure::io("the memory store stopped while answering; restart ccmemd"))?
    }

    /// Lines naming the memories most relevant to a project's current work, for the resume
    /// context: at most `limit`. Never waits long: the context is needed now.
    pub async fn relevant(&self, project: PathBuf, topics: Vec<String>, limit: usize) -> Vec<Relevant> {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Msg::Relevant { project, topics, limit, reply }).is_err() {
            return Vec::new();
        }
        tokio::time::timeout(Duration::from_millis(250), rx).await.ok().and_then(Result::ok).unwrap_or_default()
    }
}

/// The thread's state: every scope touched so far, by directory.
struct Actor {
    global_dir: Option<PathBuf>,
    scopes: HashMap<PathBuf, ScopeStore>,
    configs: config::Files,
    watcher: Option<notify::RecommendedWatcher>,
    watched: HashSet<PathBuf>,
    tx: mpsc::Sender<Msg>,
    rt: tokio::runtime::Handle,
    pending_fs: HashSet<PathBuf>,
    fs_deadline: Option<Instant>,
    /// Give freed memory back once the batch is answered.
    trim: bool,
}

impl Actor {
    fn new(global_dir: Option<PathBuf>, tx: mpsc::Sender<Msg>, rt: tokio::runtime::Handle) -> Self {
        let events = tx.clone();
        use notify::event::{AccessKind, AccessMode, EventKind};
        let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| match r {
            // Reads say nothing about changes, and our own reads of the directory would
            // otherwise come back as events without end.
            Ok(ev)
                if matches!(
                    ev.kind,
                    EventKind::Access(AccessKind::Open(_) | AccessKind::Close(AccessMode::Read | AccessMode::Execute))
                ) => {}
            Ok(ev) => {
                let rescan = ev.need_rescan();
                let mut paths = ev.paths;
                if rescan {
                    paths.push(PathBuf::from("/"));
                }
                let _ = events.send(Msg::Fs(paths));
            }
            Err(e) => tracing::debug!(error = %e, "memory watcher error"),
        })
        .inspect_err(|e| tracing::warn!(error = %e, "cannot watch memory directories; hand edits are read on requests"))
        .ok();
        Actor {
            global_dir,
            scopes: HashMap::new(),
            configs: config::Files::default(),
            watcher,
            watched: HashSet::new(),
            tx,
            rt,
            pending_fs: HashSet::new(),
            fs_deadline: None,
            trim: false,
        }
    }

    fn run(&mut self, rx: mpsc::Receiver<Msg>) {
        // The user-wide scope is wanted by every project's first request: read it soon, while
        // nobody waits, but not during the daemon's start, where it would compete for the CPU.
        let mut preload = Some(Instant::now() + PRELOAD_AFTER);
        loop {
            let wake = [self.fs_deadline, preload].into_iter().flatten().min();
            let first = match wake {
                Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(m) => Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => break,
                },
            };
            if preload.is_some_and(|t| t <= Instant::now()) {
                preload = None;
                if let Ok(cfg) = self.config(None) {
                    let _ = self.scopes_for(None, &cfg, Some(Scope::Global));
                }
            }
            let mut replies = Vec::new();
            if let Some(m) = first {
                self.handle(m, &mut replies);
                for _ in 0..BATCH {
                    match rx.try_recv() {
                        Ok(m) => self.handle(m, &mut replies),
                        Err(_) => break,
                    }
                }
            }
            if self.fs_deadline.is_some_and(|d| d <= Instant::now()) {
                self.fs_deadline = None;
                self.apply_fs();
            }
            self.flush();
            for (reply, outcome) in replies {
                let _ = reply.send(outcome);
            }
            // Reading a large scope, or answering about one, allocates a great deal briefly.
            if std::mem::take(&mut self.trim) {
                crate::heap::trim();
            }
        }
        self.flush();
    }

    fn handle(&mut self, msg: Msg, replies: &mut Vec<(Reply, Result<Value, Failure>)>) {
        match msg {
            Msg::Request { project, req, reply } => {
                // Hand edits that the watcher has not delivered yet are read first, so a
                // request never answers from a state older than the files.
                if !self.pending_fs.is_empty() {
                    self.fs_deadline = None;
                    self.apply_fs();
                }
                match self.request(project.as_deref(), req) {
                    ops::Outcome::Now(r) => replies.push((reply, r)),
                    ops::Outcome::Later(job) => {
                        let tx = self.tx.clone();
                        let query = job.query().to_string();
                        self.rt.spawn(async move {
                            let (result, embedded) = job.run().await;
                            // Answered by the thread once the cache is written, so that a
                            // caller sees the files in step with the answer.
                            let _ = tx.send(Msg::Searched { embedded, reply, result, query });
                        });
                    }
                }
            }
            Msg::Relevant { project, topics, limit, reply } => {
                let _ = reply.send(self.relevant(&project, &topics, limit));
            }
            Msg::Fs(paths) => {
                self.pending_fs.extend(paths);
                self.fs_deadline.get_or_insert_with(|| Instant::now() + FS_SETTLE);
            }
            Msg::Searched { embedded, reply, mut result, query } => {
                self.store_embeddings(embedded);
                for hit in &mut result.hits {
                    let memory =
                        hit.file.parent().and_then(|d| self.scopes.get(d)).and_then(|s| s.memories.get(&hit.slug));
                    if let Some(s) = memory {
                        hit.snippet = search::snippet(&s.memory.content, &query);
                    }
                }
                let outcome =
                    serde_json::to_value(result).map_err(|e| Failure::io(format!("cannot encode the reply: {e}")));
                replies.push((reply, outcome));
            }
        }
    }

    /// Reads the files notifications named.
    fn apply_fs(&mut self) {
        let paths: Vec<PathBuf> = self.pending_fs.drain().collect();
        let rescan_all = paths.iter().any(|p| p == Path::new("/"));
        for store in self.scopes.values_mut() {
            if rescan_all || paths.iter().any(|p| p == &store.dir) {
                store.rescan();
            }
        }
        for p in paths {
            let Some(dir) = p.parent() else { continue };
            let Some(store) = self.scopes.get_mut(dir) else { continue };
            if p.file_name().is_some_and(|n| n == "graph.json") {
                if store.load_graph() {
                    tracing::info!(dir = %dir.display(), "graph.json changed on disk; read again");
                }
            } else if scope::is_memory_file(&p) && store.read_file(&p) {
                tracing::debug!(file = %p.display(), "memory file changed on disk");
            }
        }
    }

    fn flush(&mut self) {
        for store in self.scopes.values_mut().filter(|s| s.is_dirty()) {
            if let Err(e) = store.flush() {
                // The memory files are whole; the index is derived and is rebuilt from them.
                tracing::warn!(dir = %store.dir.display(), error = %e, "cannot write the index or graph");
            }
        }
    }

    /// The configuration for a project: the global `config.json` under the project's.
    fn config(&mut self, project: Option<&Path>) -> Result<config::Config, Failure> {
        let global = self.global_dir.clone().unwrap_or_default().join("config.json");
        let project = match project {
            Some(root) => {
                let file = project_dir(root).join("config.json");
                match ccmem_proto::files::untrusted::within(root, &file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Failure::invalid(e.to_string())),
                    _ => Some(file),
                }
            }
            None => None,
        };
        self.configs.config(&global, project.as_deref()).map_err(Failure::invalid)
    }

    /// The directory of a scope, for a project.
    fn dir_of(&self, scope: Scope, project: Option<&Path>, cfg: &config::Config) -> Result<PathBuf, Failure> {
        let need_project =
            || Failure::invalid(format!("scope: {scope} needs a project; run inside one or pass --project"));
        // In the home directory, `.claude/memory` is the global scope, not a project's.
        let project = project.filter(|p| Some(project_dir(p)) != self.global_dir);
        match scope {
            Scope::Global => self.global_dir.clone().ok_or_else(|| Failure::io("scope: global needs a home directory")),
            Scope::Project => project.map(project_dir).ok_or_else(need_project),
            Scope::Local => project.map(|p| project_dir(p).join("local")).ok_or_else(need_project),
            Scope::Enterprise => cfg.enterprise_dir().map(Path::to_path_buf).ok_or_else(|| {
                Failure::invalid(
                    "scope: enterprise is not enabled (scopes.enterprise.enabled and .path in config.json)",
                )
            }),
        }
    }

    /// Every scope a project sees, in lookup order; `only` restricts to one.
    fn scopes_for(
        &mut self,
        project: Option<&Path>,
        cfg: &config::Config,
        only: Option<Scope>,
    ) -> Result<Vec<PathBuf>, Failure> {
        if let Some(s) = only {
            let dir = self.dir_of(s, project, cfg)?;
            self.open(s, &dir, cfg);
            return Ok(vec![dir]);
        }
        let mut dirs = Vec::new();
        for s in Scope::PRECEDENCE {
            if let Ok(dir) = self.dir_of(s, project, cfg) {
                self.open(s, &dir, cfg);
                dirs.push(dir);
            }
        }
        Ok(dirs)
    }

    /// Loads a scope on first use, and watches its directory once it exists.
    fn open(&mut self, scope: Scope, dir: &Path, cfg: &config::Config) -> &mut ScopeStore {
        let known = self.scopes.contains_key(dir);
        let fresh_watch = dir.is_dir() && !self.watched.contains(dir) && self.watch(dir);
        let unwatched = !self.watched.contains(dir);
        self.trim |= !known;
        let store = self.scopes.entry(dir.to_path_buf()).or_insert_with(|| ScopeStore::load(scope, dir.to_path_buf()));
        // Files made while nobody watched (the directory did not exist, or cannot be
        // watched) are found by looking.
        if known && (fresh_watch || unwatched) {
            store.rescan();
        }
        store.cache_dir.clone_from(&cfg.embedding.cache_directory);
        store
    }

    fn watch(&mut self, dir: &Path) -> bool {
        use notify::Watcher;
        let Some(w) = self.watcher.as_mut() else { return false };
        match w.watch(dir, notify::RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.watched.insert(dir.to_path_buf());
                true
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch a memory directory");
                false
            }
        }
    }

    /// After a write created a scope's directory, start watching it.
    fn watch_new(&mut self, dir: &Path) {
        if !self.watched.contains(dir) && dir.is_dir() {
            self.watch(dir);
        }
    }

    fn store_embeddings(&mut self, items: Vec<ops::Embedded>) {
        for e in items {
            let Some(store) = self.scopes.get_mut(&e.dir) else { continue };
            // The memory may have changed while it was being embedded.
            if store.memories.get(&e.slug).map(|s| s.text_hash()) != Some(e.cached.hash.as_str()) {
                continue;
            }
            if let Err(err) = embed::store_cache(store.cache_path().as_deref(), &e.slug, &e.cached) {
                tracing::warn!(slug = e.slug, error = %err, "cannot write an embedding to the cache");
            }
            let had = store.vectors.as_ref().is_some_and(|v| v.contains_key(&e.slug));
            if let Some(v) = store.vectors.as_mut() {
                v.insert(e.slug, e.cached);
            }
            if !had {
                store.touch_index();
            }
        }
    }
}

/// `.claude/memory` of a project.
pub fn project_dir(root: &Path) -> PathBuf {
    root.join(".claude").join("memory")
}

/// `~/.claude/memory`.
pub fn global_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().join(".claude").join("memory"))
}
