//! The watcher's task: notifications gathered into an inbox, coalesced, and turned into
//! changes, git refreshes and rescans.

use super::tree::*;
use super::*;

pub(super) struct Task<M> {
    pub(super) root: PathBuf,
    pub(super) mailbox: mpsc::Sender<M>,
    pub(super) settings: Arc<Settings>,
    pub(super) stats: Arc<Stats>,
    pub(super) cancel: CancellationToken,
    /// Patterns from the configuration, on top of the project's ignore files.
    pub(super) ignore: Vec<String>,
}

/// Delay before git is asked again after files changed (at most one `git status` per delay).
pub(super) const GIT_AFTER_EDITS: Duration = Duration::from_secs(2);

/// How long a woken watcher lets notifications gather before taking them.
pub(super) const INBOX_GATHER: Duration = Duration::from_millis(5);

/// Notifications on their way from notify's thread to the watcher task. One wake-up covers
/// whatever arrived meanwhile: a burst of events costs a few wake-ups, not one each.
pub(super) struct Inbox {
    pub(super) notes: std::sync::Mutex<Vec<Note>>,
    pub(super) woken: AtomicBool,
    pub(super) wake: Notify,
    pub(super) overflowed: AtomicBool,
    pub(super) cap: usize,
}

impl Inbox {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            notes: Default::default(),
            woken: AtomicBool::new(false),
            wake: Notify::new(),
            overflowed: AtomicBool::new(false),
            cap,
        }
    }

    pub(super) fn push(&self, note: Note) {
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

    pub(super) fn take(&self) -> Vec<Note> {
        // Cleared before taking: a note pushed after this wakes the task again.
        self.woken.store(false, Relaxed);
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What a notification asks of the watcher.
pub(super) enum Note {
    Paths(Vec<PathBuf>),
    Rescan,
    Git,
    /// A synchronization cookie appeared (or went): its number.
    Cookie(u64),
    /// The project's directory itself was deleted. A directory made again at its path may
    /// even get its inode number back, so this is the only sure sign.
    RootRemoved,
}

/// How long a sync waits for its cookie's notification before counting what it has: a
/// cookie that cannot be written, or whose notification was lost in an overflow (a rescan
/// follows then), must not hold a `status` up.
const COOKIE_WAIT: Duration = Duration::from_millis(1000);

/// This process's part of its cookies' names: random, so that nobody can plant a link or a
/// FIFO at a cookie's name before it is made (a pid and a counter can be guessed).
fn cookie_token() -> &'static str {
    static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TOKEN.get_or_init(ccmem_proto::files::dir::unguessable)
}

/// The number in a cookie's file name, when `p` is one of this process's cookies.
fn cookie_number(p: &Path) -> Option<u64> {
    let name = p.file_name()?.to_str()?;
    let rest = name.strip_prefix(COOKIE_PREFIX)?;
    let (token, n) = rest.split_once('-')?;
    (token == cookie_token()).then_some(())?;
    n.parse().ok()
}

/// Syncs under way: the cookie each waits for, and when it stops waiting.
#[derive(Default)]
struct Syncs {
    next: u64,
    waiting: Vec<(u64, PathBuf, Instant, tokio::sync::oneshot::Sender<()>)>,
    /// The highest cookie number seen.
    seen: u64,
}

impl Syncs {
    /// Writes a cookie for `reply` into `dir` (the watched `.git` or the project `root`).
    /// One that cannot be written is due at once: the sync is answered at the next turn.
    /// The cookie is made new under a name nobody can guess, in a directory opened without
    /// following a link, and never blocks: a link, a file or a FIFO in its way fails it at
    /// once, and nothing outside the project is ever truncated.
    fn start(&mut self, root: &Path, dir: &Path, reply: tokio::sync::oneshot::Sender<()>) {
        self.next += 1;
        let name = format!("{COOKIE_PREFIX}{}-{}", cookie_token(), self.next);
        let path = dir.join(&name);
        let made = match ccmem_proto::files::owned_by_another(root) {
            // Nothing of ccmem's in a repository another user owns.
            Some(why) => Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why)),
            None => ccmem_proto::files::dir::Dir::open_under(root, dir, false)
                .and_then(|d| d.create_new(std::ffi::OsStr::new(&name), 0o600)),
        };
        let deadline = match made {
            Ok(_) => Instant::now() + COOKIE_WAIT,
            Err(e) => {
                tracing::debug!(cookie = %path.display(), error = %e, "cannot write a sync cookie");
                Instant::now()
            }
        };
        self.waiting.push((self.next, path, deadline, reply));
    }

    /// The earliest time a sync stops waiting.
    fn deadline(&self) -> Option<Instant> {
        self.waiting.iter().map(|w| w.2).min()
    }

    /// Whether a sync is due: its cookie was seen, or it waited long enough.
    fn due(&self, now: Instant) -> bool {
        self.waiting.iter().any(|(n, _, at, _)| *n <= self.seen || *at <= now)
    }

    /// Answers the syncs that are due, removing their cookies.
    fn answer(&mut self, now: Instant) {
        let seen = self.seen;
        let (due, rest): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.waiting).into_iter().partition(|(n, _, at, _)| *n <= seen || *at <= now);
        self.waiting = rest;
        for (_, path, _, reply) in due {
            let _ = std::fs::remove_file(&path);
            let _ = reply.send(());
        }
    }
}

impl<M: From<Event> + Send + 'static> Task<M> {
    pub(super) async fn run(
        mut self,
        since: Option<SystemTime>,
        mut sync_rx: mpsc::UnboundedReceiver<tokio::sync::oneshot::Sender<()>>,
    ) {
        let inbox = Arc::new(Inbox::new(self.settings.queue));
        let git_dir = self.root.join(".git");
        let handler = {
            let inbox = inbox.clone();
            let git_dir = git_dir.clone();
            let root = self.root.clone();
            move |res: notify::Result<notify::Event>| {
                let note = match res {
                    Ok(ev) if ev.need_rescan() => Note::Rescan,
                    // Our own cookie: it syncs, it is no change.
                    Ok(ev) if ev.paths.iter().any(|p| cookie_number(p).is_some()) => {
                        match ev.paths.iter().filter_map(|p| cookie_number(p)).max() {
                            Some(n) => Note::Cookie(n),
                            None => return,
                        }
                    }
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
                    Ok(ev) if matches!(ev.kind, EventKind::Remove(_)) && ev.paths.contains(&root) => Note::RootRemoved,
                    Ok(ev) if ev.paths.iter().all(|p| p.starts_with(&git_dir)) => Note::Git,
                    // A recursive watch (macOS) also hears the trees never watched elsewhere
                    // (an `npm install`): dropped here, before they can fill the queue.
                    Ok(ev) if ev.paths.iter().all(|p| in_never_watched(&root, p)) => return,
                    Ok(ev) => Note::Paths(ev.paths),
                    Err(e) => {
                        tracing::warn!(error = %e, "file watcher error; rescanning");
                        Note::Rescan
                    }
                };
                inbox.push(note);
            }
        };
        // The daemon's one watcher; without one, every directory is polled (and status says
        // why), never a project that silently sees nothing.
        let watcher = match self.settings.hub.route(Arc::new(handler)) {
            Ok(w) => Some(w),
            Err(why) => {
                tracing::warn!(project = %self.root.display(), "{why}");
                *self.stats.unwatched.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                None
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
        let mut syncs = Syncs::default();
        let mut root_removed = false;
        // Cookies go where a notification is sure to come from: `.git` when it is watched
        // (git ignores files it does not know there), else the project's root.
        // Never in a `.git` that is a link: it leads outside the project, and ccmem writes
        // nothing there.
        let own_git = std::fs::symlink_metadata(&git_dir).is_ok_and(|m| m.is_dir());
        let cookie_dir = if own_git && tree.as_ref().is_some_and(|t| t.watched.iter().any(|d| d.starts_with("\0git:")))
        {
            git_dir.clone()
        } else {
            self.root.clone()
        };
        let mut poll = tokio::time::interval(self.settings.poll_interval);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let coalesce = self.settings.coalesce;
        // Under a steady stream of events, changes are still counted at least this often.
        let max_delay = coalesce * 10;
        loop {
            let flush_at = first_pending.map(|f| (last_event + coalesce).min(f + max_delay));
            tokio::select! {
                _ = self.cancel.cancelled() => break,
                Some(reply) = sync_rx.recv() => syncs.start(&self.root, &cookie_dir, reply),
                _ = sleep_until_opt(syncs.deadline()) => {}
                _ = inbox.wake.notified() => {
                    // Let a burst gather first: one wake-up then covers many notifications
                    // (notify's thread wakes no one while this one has not taken them).
                    tokio::time::sleep(INBOX_GATHER).await;
                    for note in inbox.take() {
                        match note {
                            Note::Rescan => rescan = true,
                            Note::Cookie(n) => syncs.seen = syncs.seen.max(n),
                            Note::RootRemoved => root_removed = true,
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
                    if !self.count(&mut tree, paths, &mut git_pending).await { break }
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
            if root_removed {
                tracing::info!(project = %self.root.display(), "the project's directory was deleted; watching stops");
                let _ = self.mailbox.send(Event::RootGone { deleted: true }.into()).await;
                break;
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
                if self.stop_if_gone(&tree).await || !self.deliver(changes).await {
                    break;
                }
                git_pending.get_or_insert_with(Instant::now);
            }
            let now = Instant::now();
            if syncs.due(now) {
                // Every change made before the sync was asked for has been notified: count
                // them now, without the coalescing wait, and deliver them before answering.
                first_pending = None;
                let paths = in_order(std::mem::take(&mut pending));
                if !paths.is_empty() && !self.count(&mut tree, paths, &mut git_pending).await {
                    break;
                }
                syncs.answer(now);
            }
        }
        syncs.answer(Instant::now() + COOKIE_WAIT * 2);
        let released = tree.as_ref().map_or(0, |t| t.watched.len());
        drop(tree);
        tracing::debug!(project = %self.root.display(), watches = released, "watches released");
    }

    /// Runs `f` on the tree in the blocking pool (stat calls, directory walks).
    pub(super) async fn blocking<T: Send + 'static>(
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

    /// Counts the paths notified (a closed coalescing window, or a sync) and delivers what
    /// changed. False when watching stops: the project's directory is gone (the project is
    /// told), or nobody listens any more.
    async fn count(&self, tree: &mut Option<Tree>, paths: Vec<PathBuf>, git_pending: &mut Option<Instant>) -> bool {
        let Some(changes) = self
            .blocking(tree, move |t| {
                let large = paths.len() > crate::heap::LARGE_BATCH;
                let changes = t.resolve(paths);
                if large {
                    crate::heap::trim();
                }
                changes
            })
            .await
        else {
            return false;
        };
        // A directory that is gone has no changes worth counting, only its end.
        if self.stop_if_gone(tree).await {
            return false;
        }
        // Edits change what git reports too; refresh it once things settle.
        if !changes.is_empty() {
            git_pending.get_or_insert_with(|| Instant::now() + GIT_AFTER_EDITS);
        }
        self.deliver(changes).await
    }

    /// Whether the tree found the project's directory gone; the project is told so.
    async fn stop_if_gone(&self, tree: &Option<Tree>) -> bool {
        if !tree.as_ref().is_some_and(|t| t.gone) {
            return false;
        }
        tracing::info!(project = %self.root.display(), "the project's directory is gone; watching stops");
        let _ = self.mailbox.send(Event::RootGone { deleted: false }.into()).await;
        true
    }

    pub(super) async fn deliver(&self, changes: Vec<(String, Change)>) -> bool {
        changes.is_empty() || self.mailbox.send(Event::Changes(changes).into()).await.is_ok()
    }
}

pub(super) async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Whether `path` lies in a tree never watched ([`super::ALWAYS_IGNORED`]) below `root`.
fn in_never_watched(root: &std::path::Path, path: &std::path::Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.components().any(|c| c.as_os_str().to_str().is_some_and(|n| super::ALWAYS_IGNORED.contains(&n)))
    })
}
