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
use notify::{EventKind, RecursiveMode};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub mod hub;
mod ignores;
mod task;
mod tree;

use task::Task;
pub use tree::limit_warning;

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
        || rest == ".ccmemd.lock"
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
    /// Most watches one project takes: three quarters of the limit (ours, or the kernel's),
    /// so that one large repository opened first leaves the next projects watches of their
    /// own rather than polled (round three's tester).
    pub fair_share: usize,
    /// Set once a limit (ours or the kernel's) was hit.
    pub kernel_limit_hit: AtomicBool,
    /// Most files one project's watcher remembers ([`MAX_PROJECT_FILES`], or
    /// `CCMEM_MAX_PROJECT_FILES`).
    pub max_project_files: usize,
    /// Most directories one project's watcher watches or polls ([`MAX_PROJECT_DIRS`], or
    /// `CCMEM_MAX_PROJECT_DIRS`).
    pub max_project_dirs: usize,
    /// One recursive watch of the root instead of one per directory: on macOS, where notify's
    /// FSEvents backend restarts its one stream for every path added (dropping what happens
    /// meanwhile) and watches whole trees natively anyway. The tree still lists and ignores
    /// directories as elsewhere; only the watch calls change. `CCMEM_WATCH_RECURSIVE=1`
    /// chooses it on other systems (the tests run the watcher so on Linux).
    pub recursive_root: bool,
    /// The daemon's one file watcher, which every project's watches share.
    pub hub: Arc<hub::Hub>,
}

/// Three quarters of `limit` (no limit: none).
fn fair_share(limit: usize) -> usize {
    if limit == usize::MAX {
        usize::MAX
    } else {
        (limit / 4 * 3).max(1)
    }
}

/// The kernel's limit of watches per user (`fs.inotify.max_user_watches`), where there is one.
fn kernel_watch_limit() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches").ok()?.trim().parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
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
            fair_share: fair_share(max_watches.min(kernel_watch_limit().unwrap_or(usize::MAX))),
            kernel_limit_hit: AtomicBool::new(false),
            max_project_files: env_limit("CCMEM_MAX_PROJECT_FILES", MAX_PROJECT_FILES),
            max_project_dirs: env_limit("CCMEM_MAX_PROJECT_DIRS", MAX_PROJECT_DIRS),
            recursive_root: cfg!(target_os = "macos")
                || std::env::var_os("CCMEM_WATCH_RECURSIVE").is_some_and(|v| v == "1"),
            hub: Arc::default(),
        }
    }
}

/// What a change to one file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Directories that could be neither watched nor read (a path too long for the system,
    /// a directory chain thousands deep, no permission): changes there are not seen.
    pub unwatchable: AtomicUsize,
    /// The first of them, to name in the warning.
    pub unwatchable_example: std::sync::Mutex<Option<String>>,
    /// Why no file watcher could be had (the project's directories are polled instead).
    pub unwatched: std::sync::Mutex<Option<String>>,
}

/// What `status` and `doctor` say of directories that could not be watched, and of a
/// project for which no watcher could be had.
pub fn unwatchable_warning(root: &Path, stats: &Stats) -> Option<String> {
    if let Some(why) = stats.unwatched.lock().unwrap_or_else(|p| p.into_inner()).clone() {
        return Some(format!("{}: {why}", root.display()));
    }
    let n = stats.unwatchable.load(Relaxed);
    if n == 0 {
        return None;
    }
    let example = stats.unwatchable_example.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default();
    let more = if example.chars().count() > 120 { "…" } else { "" };
    // A directory's name is the repository's: a code span of one line.
    let shown = ccmem_proto::quote::name_code(&format!("{}{more}", example.chars().take(120).collect::<String>()));
    Some(format!(
        "{}: {} could not be watched or read (paths too long or too deep, or no permission), \
         so changes there are not seen; the first: {shown}",
        root.display(),
        ccmem_proto::count(n as u64, "directory", "directories"),
    ))
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
    sync: mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>,
}

impl Handle {
    /// What lets a query wait until the watcher has seen every change made before it.
    pub fn syncer(&self) -> Syncer {
        Syncer(self.sync.clone())
    }
}

/// Brings a watcher up to date, as watchman's synchronization cookies do: the watcher
/// creates a cookie file and waits for its own notification of it. Notifications of one
/// watcher arrive in order, so once the cookie's has come, every change made before the
/// request has been seen too; the watcher then counts what it holds at once, without the
/// coalescing wait, and delivers it to the project before answering.
#[derive(Debug, Clone)]
pub struct Syncer(mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>);

impl Syncer {
    /// Waits, at most `limit`, until the changes made before this call have been delivered
    /// to the project's mailbox. Whether the watcher answered in time.
    pub async fn sync(&self, limit: Duration) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.0.send(tx).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(limit, rx).await, Ok(Ok(())))
    }
}

/// Cookie files start with this; the watcher never counts them as changes.
pub const COOKIE_PREFIX: &str = ".ccmem-cookie-";

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
    /// The project's directory is gone (deleted, or moved away): the watcher has stopped.
    /// `deleted`: the directory itself was seen deleted, so whatever is at its path now is
    /// another, whatever its identity says.
    RootGone { deleted: bool },
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
    let (sync, sync_rx) = mpsc::unbounded_channel();
    let task = Task { root, mailbox, settings, stats: stats.clone(), cancel: cancel.clone(), ignore };
    tokio::spawn(task.run(since, sync_rx));
    Handle { cancel, stats, sync }
}

#[cfg(test)]
mod tests;
