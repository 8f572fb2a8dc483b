//! Watching a project's files.
//!
//! The project is walked with the `ignore` crate (gitignore, `.ignore`, git's global and
//! repository excludes, plus a few trees no one edits by hand) and each directory gets a
//! non-recursive watch, so ignored trees (`node_modules/`, `target/`, `.git/objects`) never
//! take one. Notifications only name paths; what happened is decided by comparing each path
//! with what was last seen (mtime, size, inode) when the coalescing window closes, which
//! makes every route the same: events, rescans after an overflow, and polling of the
//! directories left over when the watch limit is reached.
//!
//! `.git/HEAD`, the index and refs are watched through `.git` itself and `.git/refs` only,
//! and trigger a git refresh.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify::{EventKind, RecursiveMode, Watcher};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Trees never watched, ignore files or not: nobody edits them by hand.
pub const ALWAYS_IGNORED: &[&str] =
    &[".git", "node_modules", "__pycache__", ".venv", ".tox", ".mypy_cache", ".pytest_cache", ".next", ".direnv"];

/// The daemon's own files in a project: never the user's edits. Knowledge memories are
/// watched by the memory store, not counted as work on the project.
fn is_own_file(rel: &str) -> bool {
    use ccmem_proto::files::atomic::TMP_MARK;
    let Some(rest) = rel.strip_prefix(".claude/") else { return false };
    rest == "memory"
        || rest.starts_with("memory/")
        || [".project-state.json", "session-memory.md"].iter().any(|f| {
            // The file, its backup, and the temporary files they are written through.
            rest.strip_prefix(f).is_some_and(|suffix| {
                suffix.is_empty()
                    || suffix == ".bak"
                    || suffix.strip_prefix(".bak").unwrap_or(suffix).starts_with(TMP_MARK) && !suffix.contains('/')
            })
        })
}

/// Settings shared by every project's watcher.
#[derive(Debug)]
pub struct Settings {
    /// Quiet time before changes are counted: an editor's burst of events for one save
    /// counts once.
    pub coalesce: Duration,
    /// How often directories that could not be watched are polled.
    pub poll_interval: Duration,
    /// Notifications buffered per project; beyond it they are dropped and a rescan follows.
    pub queue: usize,
    /// Most watches for the whole daemon (the kernel's limit applies too).
    pub max_watches: usize,
    /// Watches in use, across projects.
    pub watches_used: AtomicUsize,
    /// Set once a limit (ours or the kernel's) was hit.
    pub kernel_limit_hit: AtomicBool,
    /// Most files one project's watcher remembers ([`MAX_PROJECT_FILES`], or
    /// `CCMEM_MAX_PROJECT_FILES`).
    pub max_project_files: usize,
    /// Most directories one project's watcher watches or polls ([`MAX_PROJECT_DIRS`], or
    /// `CCMEM_MAX_PROJECT_DIRS`).
    pub max_project_dirs: usize,
}

impl Settings {
    /// Settings with the given limits.
    pub fn new(coalesce: Duration, poll_interval: Duration, queue: usize, max_watches: usize) -> Self {
        Self {
            coalesce,
            poll_interval,
            queue: queue.max(1),
            max_watches,
            watches_used: AtomicUsize::new(0),
            kernel_limit_hit: AtomicBool::new(false),
            max_project_files: env_limit("CCMEM_MAX_PROJECT_FILES", MAX_PROJECT_FILES),
            max_project_dirs: env_limit("CCMEM_MAX_PROJECT_DIRS", MAX_PROJECT_DIRS),
        }
    }
}

/// What a change to one file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A file that was not there.
    Created,
    /// A known file with new content or times.
    Modified,
    /// A known file that is gone.
    Deleted,
}

/// Counters a project's watcher publishes for `status`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Directories with a watch.
    pub dirs_watched: AtomicUsize,
    /// Directories polled instead (watch limit).
    pub dirs_polled: AtomicUsize,
    /// Files known.
    pub files: AtomicUsize,
    /// Full rescans after an overflow.
    pub rescans: AtomicU64,
    /// The initial walk is done.
    pub ready: AtomicBool,
    /// The project holds more than [`MAX_PROJECT_FILES`] files or [`MAX_PROJECT_DIRS`]
    /// directories: what is past the cap is not tracked.
    pub capped: AtomicBool,
}

/// Most files one project's watcher remembers: a tree this large is a home directory or a
/// disk, not a project, and tracking it would cost memory without bound.
pub const MAX_PROJECT_FILES: usize = 500_000;
/// Most directories one project's watcher watches or polls.
pub const MAX_PROJECT_DIRS: usize = 50_000;

fn env_limit(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

/// What `status` and `doctor` say of a capped project.
pub fn cap_warning(root: &Path, s: &Settings) -> String {
    format!(
        "{} has more than {} files or {} directories outside its ignore rules: \
         changes past that are not tracked; add the big trees to `watch.ignore` in {}/.claude/ccmem.toml",
        root.display(),
        s.max_project_files,
        s.max_project_dirs,
        root.display()
    )
}

/// A running watcher; dropping it stops the watcher and releases all its watches.
#[derive(Debug)]
pub struct Handle {
    cancel: CancellationToken,
    /// Its counters.
    pub stats: Arc<Stats>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// What a watcher tells its project.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Files changed (relative paths), in the order of their latest event.
    Changes(Vec<(String, Change)>),
    /// The repository's state may have changed (HEAD, the index, refs).
    GitChanged,
}

/// Starts watching `root`. What changes goes to `mailbox` as [`Event`]s (converted into the
/// mailbox's own messages). With `since`, files modified after it count as modified
/// (changes made while the daemon was not running).
pub fn spawn<M: From<Event> + Send + 'static>(
    root: PathBuf,
    mailbox: mpsc::Sender<M>,
    settings: Arc<Settings>,
    since: Option<SystemTime>,
    ignore: Vec<String>,
) -> Handle {
    let cancel = CancellationToken::new();
    let stats = Arc::new(Stats::default());
    let task = Task { root, mailbox, settings, stats: stats.clone(), cancel: cancel.clone(), ignore };
    tokio::spawn(task.run(since));
    Handle { cancel, stats }
}

struct Task<M> {
    root: PathBuf,
    mailbox: mpsc::Sender<M>,
    settings: Arc<Settings>,
    stats: Arc<Stats>,
    cancel: CancellationToken,
    /// Patterns from the configuration, on top of the project's ignore files.
    ignore: Vec<String>,
}

/// Delay before git is asked again after files changed (at most one `git status` per delay).
const GIT_AFTER_EDITS: Duration = Duration::from_secs(2);

/// How long a woken watcher lets notifications gather before taking them.
const INBOX_GATHER: Duration = Duration::from_millis(5);

/// Notifications on their way from notify's thread to the watcher task. One wake-up covers
/// whatever arrived meanwhile: a burst of events costs a few wake-ups, not one each.
struct Inbox {
    notes: std::sync::Mutex<Vec<Note>>,
    woken: AtomicBool,
    wake: Notify,
    overflowed: AtomicBool,
    cap: usize,
}

impl Inbox {
    fn new(cap: usize) -> Self {
        Self {
            notes: Default::default(),
            woken: AtomicBool::new(false),
            wake: Notify::new(),
            overflowed: AtomicBool::new(false),
            cap,
        }
    }

    fn push(&self, note: Note) {
        {
            let mut q = self.notes.lock().unwrap_or_else(|p| p.into_inner());
            if q.len() >= self.cap {
                // Full: changes are being dropped. A rescan will find them.
                self.overflowed.store(true, Relaxed);
            } else {
                q.push(note);
            }
        }
        if !self.woken.swap(true, Relaxed) {
            self.wake.notify_one();
        }
    }

    fn take(&self) -> Vec<Note> {
        // Cleared before taking: a note pushed after this wakes the task again.
        self.woken.store(false, Relaxed);
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What a notification asks of the watcher.
enum Note {
    Paths(Vec<PathBuf>),
    Rescan,
    Git,
}

impl<M: From<Event> + Send + 'static> Task<M> {
    async fn run(mut self, since: Option<SystemTime>) {
        let inbox = Arc::new(Inbox::new(self.settings.queue));
        let git_dir = self.root.join(".git");
        let handler = {
            let inbox = inbox.clone();
            move |res: notify::Result<notify::Event>| {
                let note = match res {
                    Ok(ev) if ev.need_rescan() => Note::Rescan,
                    // Reads (the agent, compilers, grep) say nothing about changes.
                    Ok(ev)
                        if matches!(ev.kind, EventKind::Access(notify::event::AccessKind::Open(_)))
                            || matches!(
                                ev.kind,
                                EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Read))
                            ) =>
                    {
                        return
                    }
                    Ok(ev) if ev.paths.iter().all(|p| p.starts_with(&git_dir)) => Note::Git,
                    Ok(ev) => Note::Paths(ev.paths),
                    Err(e) => {
                        tracing::warn!(error = %e, "file watcher error; rescanning");
                        Note::Rescan
                    }
                };
                inbox.push(note);
            }
        };
        let watcher = match notify::recommended_watcher(handler) {
            Ok(w) => w,
            Err(e) => {
                tracing::error!(project = %self.root.display(), error = %e, "cannot watch files; changes will not be seen");
                return;
            }
        };
        let settings = self.settings.clone();
        let root = self.root.clone();
        let extra = std::mem::take(&mut self.ignore);
        let started = std::time::Instant::now();
        let job = tokio::task::spawn_blocking(move || {
            let mut tree = Tree::new(root, watcher, settings, &extra);
            let changes = tree.scan(since);
            crate::heap::trim();
            (tree, changes)
        });
        let Ok((tree, changes)) = job.await else { return };
        tree.publish(&self.stats);
        self.stats.ready.store(true, Relaxed);
        tracing::info!(
            project = %self.root.display(),
            directories = tree.watched.len(),
            polled = tree.polled.len(),
            files = tree.files.len(),
            ms = started.elapsed().as_millis() as u64,
            "watching"
        );
        if !changes.is_empty() && !self.deliver(changes).await {
            return;
        }
        // Taken by each job on the blocking pool and given back: the loop owns it between.
        let mut tree = Some(tree);

        // Each path with the sequence number of its latest event: a batch is resolved in the
        // order things happened (the session lists files most recent first).
        let mut pending: HashMap<PathBuf, u64> = HashMap::new();
        let mut seq: u64 = 0;
        let mut first_pending: Option<Instant> = None;
        let mut last_event = Instant::now();
        let mut rescan = false;
        let mut git_pending: Option<Instant> = None;
        let mut poll = tokio::time::interval(self.settings.poll_interval);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let coalesce = self.settings.coalesce;
        // Under a steady stream of events, changes are still counted at least this often.
        let max_delay = coalesce * 10;
        loop {
            let flush_at = first_pending.map(|f| (last_event + coalesce).min(f + max_delay));
            tokio::select! {
                _ = self.cancel.cancelled() => break,
                _ = inbox.wake.notified() => {
                    // Let a burst gather first: one wake-up then covers many notifications
                    // (notify's thread wakes no one while this one has not taken them).
                    tokio::time::sleep(INBOX_GATHER).await;
                    for note in inbox.take() {
                        match note {
                            Note::Rescan => rescan = true,
                            Note::Git => { git_pending.get_or_insert_with(|| Instant::now() + Duration::from_millis(300)); }
                            Note::Paths(paths) => {
                                last_event = Instant::now();
                                first_pending.get_or_insert(last_event);
                                for p in paths {
                                    seq += 1;
                                    pending.insert(p, seq);
                                }
                            }
                        }
                    }
                }
                _ = sleep_until_opt(flush_at) => {
                    first_pending = None;
                    let paths = in_order(std::mem::take(&mut pending));
                    let Some(changes) = self.blocking(&mut tree, move |t| {
                        let large = paths.len() > crate::heap::LARGE_BATCH;
                        let changes = t.resolve(paths);
                        if large {
                            crate::heap::trim();
                        }
                        changes
                    }).await else { break };
                    // Edits change what git reports too; refresh it once things settle.
                    if !changes.is_empty() {
                        git_pending.get_or_insert_with(|| Instant::now() + GIT_AFTER_EDITS);
                    }
                    if !self.deliver(changes).await { break }
                }
                _ = sleep_until_opt(git_pending) => {
                    git_pending = None;
                    if self.mailbox.send(Event::GitChanged.into()).await.is_err() { break }
                }
                _ = poll.tick(), if tree.as_ref().is_some_and(|t| !t.polled.is_empty()) => {
                    let Some(changes) = self.blocking(&mut tree, |t| t.poll()).await else { break };
                    if !self.deliver(changes).await { break }
                }
            }
            if inbox.overflowed.swap(false, Relaxed) {
                rescan = true;
                // Whatever is still queued is covered by the rescan.
                drop(inbox.take());
            }
            if rescan {
                rescan = false;
                pending.clear();
                first_pending = None;
                self.stats.rescans.fetch_add(1, Relaxed);
                tracing::warn!(project = %self.root.display(), "file events were lost (queue overflow); rescanning the project");
                let Some(changes) = self
                    .blocking(&mut tree, |t| {
                        let changes = t.rescan();
                        crate::heap::trim();
                        changes
                    })
                    .await
                else {
                    break;
                };
                if !self.deliver(changes).await {
                    break;
                }
                git_pending.get_or_insert_with(Instant::now);
            }
        }
        let released = tree.as_ref().map_or(0, |t| t.watched.len());
        drop(tree);
        tracing::debug!(project = %self.root.display(), watches = released, "watches released");
    }

    /// Runs `f` on the tree in the blocking pool (stat calls, directory walks).
    async fn blocking<T: Send + 'static>(
        &self,
        tree: &mut Option<Tree>,
        f: impl FnOnce(&mut Tree) -> T + Send + 'static,
    ) -> Option<T> {
        let mut t = tree.take()?;
        let (t, out) = tokio::task::spawn_blocking(move || {
            let out = f(&mut t);
            (t, out)
        })
        .await
        .ok()?;
        t.publish(&self.stats);
        *tree = Some(t);
        Some(out)
    }

    async fn deliver(&self, changes: Vec<(String, Change)>) -> bool {
        changes.is_empty() || self.mailbox.send(Event::Changes(changes).into()).await.is_ok()
    }
}

async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

type Batch = Vec<(PathBuf, Option<Seen>)>;

/// Makes one [`Collector`] per walker thread.
struct Collectors {
    tx: std::sync::mpsc::Sender<Batch>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Collectors {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Collector { tx: self.tx.clone(), batch: Vec::with_capacity(256) })
    }
}

/// Sends what one walker thread finds in batches; the last one when the walk ends.
struct Collector {
    tx: std::sync::mpsc::Sender<Batch>,
    batch: Batch,
}

impl ignore::ParallelVisitor for Collector {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        if let Ok(entry) = entry {
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                self.batch.push((entry.into_path(), None));
            } else if let Ok(m) = entry.metadata() {
                self.batch.push((entry.into_path(), Some(Seen::of(&m))));
            }
        }
        if self.batch.len() >= 256 && self.tx.send(std::mem::take(&mut self.batch)).is_err() {
            return ignore::WalkState::Quit;
        }
        ignore::WalkState::Continue
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if !self.batch.is_empty() {
            let _ = self.tx.send(std::mem::take(&mut self.batch));
        }
    }
}

/// What was last seen of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    mtime_ns: i64,
    size: u64,
    ino: u64,
}

impl Seen {
    fn of(m: &std::fs::Metadata) -> Self {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(m);
        #[cfg(not(unix))]
        let ino = 0;
        Self { mtime_ns, size: m.len(), ino }
    }
}

/// The watched tree: what is known of every file, and which directories are watched or polled.
struct Tree {
    root: PathBuf,
    watcher: Option<notify::RecommendedWatcher>,
    settings: Arc<Settings>,
    files: HashMap<Box<str>, Seen>,
    watched: HashSet<Box<str>>,
    polled: HashSet<Box<str>>,
    ignores: Ignores,
    /// The project is over the cap: the rest of it is not tracked.
    capped: bool,
}

impl Drop for Tree {
    fn drop(&mut self) {
        self.settings.watches_used.fetch_sub(self.watched.len(), Relaxed);
    }
}

impl Tree {
    fn new(root: PathBuf, watcher: notify::RecommendedWatcher, settings: Arc<Settings>, extra: &[String]) -> Self {
        let ignores = Ignores::new(&root).with_patterns(&root, extra);
        Self {
            root,
            watcher: Some(watcher),
            settings,
            files: HashMap::new(),
            watched: HashSet::new(),
            polled: HashSet::new(),
            capped: false,
            ignores,
        }
    }

    fn publish(&self, stats: &Stats) {
        stats.dirs_watched.store(self.watched.len(), Relaxed);
        stats.dirs_polled.store(self.polled.len(), Relaxed);
        stats.files.store(self.files.len(), Relaxed);
        stats.capped.store(self.capped, Relaxed);
    }

    fn rel(&self, p: &Path) -> Option<String> {
        let r = p.strip_prefix(&self.root).ok()?;
        Some(r.to_string_lossy().replace('\\', "/"))
    }

    /// The initial walk: watch every directory, remember every file. Nothing counts as a
    /// change, except files modified after `since`.
    fn scan(&mut self, since: Option<SystemTime>) -> Vec<(String, Change)> {
        self.watch_git();
        let mut out = Vec::new();
        let since_ns = since.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()).map(|d| d.as_nanos() as i64);
        for (rel, seen) in self.walk("") {
            if let Some(seen) = seen {
                if since_ns.is_some_and(|s| seen.mtime_ns > s) {
                    out.push((rel.clone(), Change::Modified));
                }
                self.files.insert(rel.into_boxed_str(), seen);
            }
        }
        out
    }

    /// Walks `rel_dir` (recursively, honouring the ignore rules), watching each directory.
    /// Returns files with what is seen of them, and directories (`None`).
    ///
    /// The walk runs on its own threads and streams what it finds here, where directories
    /// are watched while the walk goes on: adding a watch is a round trip to notify's thread.
    fn walk(&mut self, rel_dir: &str) -> Vec<(String, Option<Seen>)> {
        let start = if rel_dir.is_empty() { self.root.clone() } else { self.root.join(rel_dir) };
        let extra = self.ignores.extra.clone();
        // The crate reads the starting directory's ignore files and the repository's exclude
        // itself: when one is not a plain file, its rules are left out rather than read.
        let exclude = self.root.join(".git/info/exclude");
        let plain = ignore_files_are_plain(&start)
            && std::fs::symlink_metadata(&exclude).map_or(true, |m| m.is_file() && m.len() <= MAX_IGNORE_FILE)
            && start.ancestors().skip(1).take_while(|a| a.starts_with(&self.root)).all(ignore_files_are_plain);
        if !plain {
            tracing::warn!(dir = %start.display(), "an ignore file here is not a plain file: walking without ignore rules");
        }
        let walker = ignore::WalkBuilder::new(&start)
            .hidden(false)
            .parents(plain)
            .ignore(plain)
            .git_ignore(plain)
            .git_global(true)
            .git_exclude(plain)
            .require_git(false)
            .follow_links(false)
            .threads(std::thread::available_parallelism().map_or(2, |n| n.get().min(4)))
            .filter_entry(move |e| {
                let dir = e.file_type().is_some_and(|t| t.is_dir());
                if dir && !ignore_files_are_plain(e.path()) {
                    tracing::warn!(dir = %e.path().display(), "not watched: its .gitignore or .ignore is not a plain file");
                    return false;
                }
                !e.file_name().to_str().is_some_and(|n| ALWAYS_IGNORED.contains(&n))
                    && !extra.as_ref().is_some_and(|g| {
                        g.matched_path_or_any_parents(e.path(), e.file_type().is_some_and(|t| t.is_dir())).is_ignore()
                    })
            })
            .build_parallel();
        let (tx, rx) = std::sync::mpsc::channel::<Batch>();
        let mut found = Vec::new();
        std::thread::scope(|scope| {
            scope.spawn(move || walker.visit(&mut Collectors { tx }));
            // The visitors flush their last batches when the walk ends and drops them.
            for batch in rx {
                if self.files.len() + found.len() >= self.settings.max_project_files
                    || self.watched.len() + self.polled.len() >= self.settings.max_project_dirs
                {
                    // Past the cap: stop reading (dropping the channel ends the walk).
                    if !std::mem::replace(&mut self.capped, true) {
                        tracing::warn!("{}", cap_warning(&self.root, &self.settings));
                    }
                    break;
                }
                for (path, seen) in batch {
                    let Some(rel) = self.rel(&path) else { continue };
                    match seen {
                        None => {
                            self.add_dir(&rel);
                            found.push((rel, None));
                        }
                        Some(seen) if !is_own_file(&rel) => found.push((rel, Some(seen))),
                        Some(_) => {}
                    }
                }
            }
        });
        found
    }

    /// Watches a directory, or polls it when no watch can be had.
    fn add_dir(&mut self, rel: &str) {
        if self.watched.contains(rel) || self.polled.contains(rel) {
            return;
        }
        let path = if rel.is_empty() { self.root.clone() } else { self.root.join(rel) };
        let within_budget = self.settings.watches_used.fetch_add(1, Relaxed) < self.settings.max_watches;
        let result = match (&mut self.watcher, within_budget) {
            (Some(w), true) => w.watch(&path, RecursiveMode::NonRecursive),
            _ => Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch)),
        };
        match result {
            Ok(()) => {
                self.watched.insert(rel.into());
            }
            Err(e) => {
                self.settings.watches_used.fetch_sub(1, Relaxed);
                if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) {
                    if !self.settings.kernel_limit_hit.swap(true, Relaxed) {
                        tracing::warn!("{}", limit_warning(&self.settings));
                    }
                    self.polled.insert(rel.into());
                } else {
                    tracing::debug!(dir = %path.display(), error = %e, "cannot watch directory");
                }
            }
        }
    }

    fn drop_dir(&mut self, rel: &str) {
        let prefix = format!("{rel}/");
        let gone: Vec<Box<str>> =
            self.watched.iter().filter(|d| &***d == rel || d.starts_with(&prefix)).cloned().collect();
        for d in gone {
            if let Some(w) = &mut self.watcher {
                let _ = w.unwatch(&self.root.join(&*d));
            }
            self.watched.remove(&d);
            self.settings.watches_used.fetch_sub(1, Relaxed);
        }
        self.polled.retain(|d| &**d != rel && !d.starts_with(&prefix));
    }

    /// `.git` (HEAD, index, packed-refs) and `.git/refs/**`; not objects, not logs.
    fn watch_git(&mut self) {
        let git = self.root.join(".git");
        if !git.is_dir() {
            return;
        }
        let Some(w) = &mut self.watcher else { return };
        let mut dirs = vec![git.clone()];
        let mut stack = vec![git.join("refs")];
        while let Some(d) = stack.pop() {
            if let Ok(rd) = std::fs::read_dir(&d) {
                stack.extend(rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
                dirs.push(d);
            }
        }
        for d in dirs {
            if w.watch(&d, RecursiveMode::NonRecursive).is_ok() {
                self.settings.watches_used.fetch_add(1, Relaxed);
                self.watched.insert(format!("\0git:{}", d.display()).into());
            }
        }
    }

    /// Decides what happened to each path named by notifications.
    fn resolve(&mut self, paths: Vec<PathBuf>) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        for p in paths {
            let Some(rel) = self.rel(&p) else { continue };
            if rel.is_empty() || is_own_file(&rel) || rel.split('/').any(|c| ALWAYS_IGNORED.contains(&c)) {
                continue;
            }
            if rel.ends_with(".gitignore") || rel.ends_with(".ignore") {
                self.ignores.forget(&rel);
            }
            self.check(&rel, &mut out);
        }
        out
    }

    /// Compares one path with what was last seen of it.
    fn check(&mut self, rel: &str, out: &mut Vec<(String, Change)>) {
        match std::fs::symlink_metadata(self.root.join(rel)) {
            Ok(m) if m.is_dir() => {
                if !self.watched.contains(rel)
                    && !self.polled.contains(rel)
                    && !self.ignores.is_ignored(&self.root, rel, true)
                {
                    // A new directory: watch it, then look inside, since files may have been
                    // created before the watch landed (`mkdir -p a/b/c && touch a/b/c/f`).
                    for (f, seen) in self.walk(rel) {
                        if let Some(seen) = seen {
                            self.record(f, seen, out);
                        }
                    }
                }
            }
            Ok(m) => {
                if !self.ignores.is_ignored(&self.root, rel, false) {
                    self.record(rel.to_string(), Seen::of(&m), out);
                }
            }
            Err(_) => {
                if self.files.remove(rel).is_some() {
                    out.push((rel.to_string(), Change::Deleted));
                } else if self.watched.contains(rel) || self.polled.contains(rel) {
                    // A directory moved or deleted: everything known under it is gone.
                    let prefix = format!("{rel}/");
                    let gone: Vec<Box<str>> = self.files.keys().filter(|f| f.starts_with(&prefix)).cloned().collect();
                    for f in gone {
                        self.files.remove(&f);
                        out.push((f.into(), Change::Deleted));
                    }
                    self.drop_dir(rel);
                }
            }
        }
    }

    fn record(&mut self, rel: String, seen: Seen, out: &mut Vec<(String, Change)>) {
        match self.files.get_mut(rel.as_str()) {
            Some(old) if *old == seen => {}
            Some(old) => {
                *old = seen;
                out.push((rel, Change::Modified));
            }
            None => {
                self.files.insert(rel.clone().into_boxed_str(), seen);
                out.push((rel, Change::Created));
            }
        }
    }

    /// After lost notifications: walks the whole project and compares with what is known.
    fn rescan(&mut self) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        let mut present: HashSet<String> = HashSet::with_capacity(self.files.len());
        let mut dirs: HashSet<String> = HashSet::new();
        for (rel, seen) in self.walk("") {
            match seen {
                Some(seen) => {
                    present.insert(rel.clone());
                    self.record(rel, seen, &mut out);
                }
                None => {
                    dirs.insert(rel);
                }
            }
        }
        let gone: Vec<Box<str>> = self.files.keys().filter(|f| !present.contains(&***f)).cloned().collect();
        for f in gone {
            self.files.remove(&f);
            out.push((f.into(), Change::Deleted));
        }
        let stale: Vec<Box<str>> = self
            .watched
            .iter()
            .chain(self.polled.iter())
            .filter(|d| !d.starts_with('\0') && !dirs.contains(&***d))
            .cloned()
            .collect();
        for d in stale {
            self.drop_dir(&d);
        }
        out
    }

    /// Directories without a watch: compare their entries with what is known.
    fn poll(&mut self) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        let dirs: Vec<Box<str>> = self.polled.iter().cloned().collect();
        for d in dirs {
            let abs = if d.is_empty() { self.root.clone() } else { self.root.join(&*d) };
            let prefix = if d.is_empty() { String::new() } else { format!("{d}/") };
            let Ok(rd) = std::fs::read_dir(&abs) else {
                self.check(&d, &mut out);
                continue;
            };
            let mut seen_here = HashSet::new();
            for e in rd.flatten() {
                let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
                if is_own_file(&rel) || ALWAYS_IGNORED.contains(&&*e.file_name().to_string_lossy()) {
                    continue;
                }
                seen_here.insert(rel.clone());
                self.check(&rel, &mut out);
            }
            let gone: Vec<Box<str>> = self
                .files
                .keys()
                .filter(|f| {
                    f.strip_prefix(prefix.as_str()).is_some_and(|rest| !rest.contains('/'))
                        && !seen_here.contains(&***f)
                })
                .cloned()
                .collect();
            for f in gone {
                self.files.remove(&f);
                out.push((f.into(), Change::Deleted));
            }
        }
        out
    }
}

/// The text `status` shows once a watch limit is reached.
pub fn limit_warning(s: &Settings) -> String {
    format!(
        "the file-watch limit is reached ({} watches in use); the remaining directories are polled every {:?}. \
         Raise the limit: sudo sysctl fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/ to keep it), \
         or --max-watches if you set it lower",
        s.watches_used.load(Relaxed),
        s.poll_interval
    )
}

/// Ignore rules for single paths named by notifications: each directory's `.gitignore` and
/// `.ignore` from the root down (the deeper rule wins), the repository's exclude file and
/// git's global excludes. Matchers are built once per directory and dropped when their file
/// changes.
#[derive(Default)]
struct Ignores {
    per_dir: HashMap<String, Option<Arc<Gitignore>>>,
    base: Vec<Gitignore>,
    /// The configuration's patterns (`watch.ignore`): they cover whole trees.
    extra: Option<Arc<Gitignore>>,
}

/// Adds an ignore file's rules, read as any project file is: a regular file only (a link
/// to `/dev/zero` or a FIFO named `.gitignore` is skipped), within a size cap.
fn add_ignore_file(b: &mut GitignoreBuilder, path: &Path) -> bool {
    let Ok(text) = ccmem_proto::files::untrusted::read_string(path, MAX_IGNORE_FILE) else { return false };
    for line in text.lines() {
        let _ = b.add_line(Some(path.to_path_buf()), line);
    }
    true
}

/// Largest ignore file read.
const MAX_IGNORE_FILE: u64 = 4 << 20;

/// Whether the ignore files the walker would read in `dir` are all plain files (or absent):
/// the `ignore` crate reads them itself, following links and blocking on FIFOs, so a
/// directory holding another kind is not entered.
fn ignore_files_are_plain(dir: &Path) -> bool {
    [".gitignore", ".ignore"].iter().all(|f| match std::fs::symlink_metadata(dir.join(f)) {
        Ok(m) => m.is_file() && m.len() <= MAX_IGNORE_FILE,
        Err(_) => true,
    })
}

impl Ignores {
    fn new(root: &Path) -> Self {
        let mut base = Vec::new();
        let (global, _) = Gitignore::global();
        base.push(global);
        let mut b = GitignoreBuilder::new(root);
        add_ignore_file(&mut b, &root.join(".git/info/exclude"));
        if let Ok(g) = b.build() {
            base.push(g);
        }
        Self { per_dir: HashMap::new(), base, extra: None }
    }

    /// Adds the configuration's patterns (already checked when the configuration was read).
    fn with_patterns(mut self, root: &Path, patterns: &[String]) -> Self {
        if !patterns.is_empty() {
            let mut b = GitignoreBuilder::new(root);
            for p in patterns {
                let _ = b.add_line(None, p);
            }
            self.extra = b.build().ok().map(Arc::new);
        }
        self
    }

    fn forget(&mut self, rel_file: &str) {
        let dir = rel_file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        self.per_dir.remove(dir);
    }

    fn matcher(&mut self, root: &Path, rel_dir: &str) -> Option<Arc<Gitignore>> {
        self.per_dir
            .entry(rel_dir.to_string())
            .or_insert_with(|| {
                let dir = if rel_dir.is_empty() { root.to_path_buf() } else { root.join(rel_dir) };
                let mut b = GitignoreBuilder::new(&dir);
                let mut any = false;
                for f in [".gitignore", ".ignore"] {
                    any |= add_ignore_file(&mut b, &dir.join(f));
                }
                any.then(|| b.build().ok().map(Arc::new)).flatten()
            })
            .clone()
    }

    fn is_ignored(&mut self, root: &Path, rel: &str, is_dir: bool) -> bool {
        let path = root.join(rel);
        if self.extra.as_ref().is_some_and(|g| g.matched_path_or_any_parents(&path, is_dir).is_ignore()) {
            return true;
        }
        let mut verdict = None;
        for g in &self.base {
            match g.matched(&path, is_dir) {
                ignore::Match::Ignore(_) => verdict = Some(true),
                ignore::Match::Whitelist(_) => verdict = Some(false),
                ignore::Match::None => {}
            }
        }
        let comps: Vec<&str> = rel.split('/').collect();
        for depth in 0..comps.len() {
            let dir = comps[..depth].join("/");
            if let Some(g) = self.matcher(root, &dir) {
                // Rules apply to the path and to every directory on the way to it.
                for k in depth + 1..=comps.len() {
                    let sub = root.join(comps[..k].join("/"));
                    match g.matched(&sub, k < comps.len() || is_dir) {
                        ignore::Match::Ignore(_) => verdict = Some(true),
                        ignore::Match::Whitelist(_) => verdict = Some(false),
                        ignore::Match::None => {}
                    }
                }
            }
        }
        verdict.unwrap_or(false)
    }
}

/// Pending paths in the order of their latest event.
fn in_order(pending: HashMap<PathBuf, u64>) -> Vec<PathBuf> {
    let mut paths: Vec<(PathBuf, u64)> = pending.into_iter().collect();
    paths.sort_unstable_by_key(|(_, n)| *n);
    paths.into_iter().map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests;
