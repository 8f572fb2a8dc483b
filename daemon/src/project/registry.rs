//! Projects and their sessions.
//!
//! A project is identified by its root: the git top-level of a path, else the path itself,
//! canonicalised. Each live project is owned by a task of its own ([`crate::project`]);
//! this registry only maps roots to those tasks' mailboxes. The lock guards the map, never
//! a session, and is never held across an await.

use crate::project::lock;
use crate::project::task::{Msg, Place, Project, Services};
use crate::store::Found;
use ccmem_proto::model::environment::ServerInfo;
use ccmem_proto::model::session::{ArchivedSession, EndReason, Session};
use ccmem_proto::wire::api::ProjectSummary;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Mailbox depth per project: beyond it, senders wait (back-pressure on a flooding client).
const MAILBOX: usize = 256;

/// How long the final checkpoints of all projects may take together at shutdown.
const FINAL_CHECKPOINTS: Duration = Duration::from_secs(30);

#[derive(Clone)]
struct Entry {
    tx: mpsc::Sender<Msg>,
    generation: u64,
    /// Cancelled once the task has left the map.
    gone: CancellationToken,
}

/// Live projects.
pub struct Projects {
    live: Mutex<HashMap<PathBuf, Entry>>,
    ctx: Arc<Services>,
    generations: AtomicU64,
    closing: AtomicBool,
    /// Projects another daemon keeps, said once in the log.
    refused_once: Mutex<std::collections::HashSet<PathBuf>>,
    /// Past conversations being imported into projects' histories.
    pub past: super::past_import::PastImports,
}

impl std::fmt::Debug for Projects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projects").field("live", &self.len()).finish()
    }
}

/// A task's place in the registry; dropping it (even in a panic) frees the place.
pub struct Registration {
    registry: Arc<Projects>,
    root: PathBuf,
    generation: u64,
    /// The project's claim, held for the session's life.
    lock: Option<lock::Claim>,
}

impl Place for Registration {
    fn release(self: Box<Self>) -> Box<dyn Fn(PathBuf, Msg) + Send> {
        let registry = self.registry.clone();
        drop(self);
        Box::new(move |root, msg| {
            let registry = registry.clone();
            tokio::spawn(async move { registry.send(&root, msg).await });
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Released first: a session starting here right after finds the project unclaimed.
        drop(self.lock.take());
        let mut live = self.registry.lock();
        if live.get(&self.root).is_some_and(|e| e.generation == self.generation) {
            if let Some(e) = live.remove(&self.root) {
                e.gone.cancel();
            }
        }
    }
}

impl Projects {
    /// An empty registry.
    pub fn new(ctx: Services) -> Arc<Self> {
        Arc::new(Self {
            live: Mutex::new(HashMap::new()),
            ctx: Arc::new(ctx),
            generations: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            refused_once: Mutex::new(Default::default()),
            past: Default::default(),
        })
    }

    /// The shared settings.
    pub fn ctx(&self) -> &Services {
        &self.ctx
    }

    /// Delivers `msg` to the project at `root`, starting a session if the message calls for
    /// one. A task that is ending is waited for, then the message goes to its successor.
    pub async fn send(self: &Arc<Self>, root: &Path, mut msg: Msg) {
        // The project's claim, made before its session starts here (see `lock`).
        let mut lock: Option<lock::Claim> = None;
        loop {
            if msg.starts_session() && lock.is_none() && !self.is_live(root) && !self.closing.load(Ordering::SeqCst) {
                match self.claim(root).await {
                    Some(lock::Taken::Mine(f)) => lock = Some(f),
                    Some(lock::Taken::Elsewhere(why)) => {
                        if self.refused_once.lock().unwrap_or_else(|p| p.into_inner()).insert(root.to_path_buf()) {
                            tracing::warn!(project = %root.display(), "{why}");
                        }
                        msg.answer_refused(root, &why);
                        return;
                    }
                    Some(lock::Taken::None(why)) => tracing::info!(project = %root.display(), "{why}"),
                    None => {}
                }
            }
            let Some(entry) = self.entry(root, msg.starts_session(), &mut lock) else {
                match msg {
                    Msg::Status { reply } => {
                        // Without a session here: another daemon's, perhaps.
                        let (r, socket) = (root.to_path_buf(), self.ctx.socket.clone());
                        let why =
                            tokio::task::spawn_blocking(move || lock::held_elsewhere(&r, &socket)).await.ok().flatten();
                        match why {
                            Some(why) => Msg::Status { reply }.answer_refused(root, &why),
                            None => Msg::Status { reply }.answer_not_live(root),
                        }
                    }
                    // Coming back after the session ended (expired, reset): what it left.
                    Msg::Context { budget, reply } if !self.closing.load(Ordering::SeqCst) => {
                        let (ctx, root) = (self.ctx.clone(), root.to_path_buf());
                        let global = self.ctx.global.for_project(&root).await;
                        let job = tokio::task::spawn_blocking(move || {
                            crate::project::views::ended_context(&ctx, &root, &global, budget)
                        });
                        if let Ok(r) = job.await {
                            let _ = reply.send(r);
                        }
                    }
                    // Facts and goals outlive sessions: read (and edited) where they are kept.
                    Msg::Facts { edit, reply } if !self.closing.load(Ordering::SeqCst) => {
                        let (ctx, root) = (self.ctx.clone(), root.to_path_buf());
                        let job = tokio::task::spawn_blocking(move || {
                            crate::project::views::edit_stored_facts(&ctx, &root, edit.as_ref())
                        });
                        if let Ok(r) = job.await {
                            let _ = reply.send(r);
                        }
                    }
                    msg => msg.answer_not_live(root),
                }
                return;
            };
            match entry.tx.send(msg).await {
                Ok(()) => return,
                Err(mpsc::error::SendError(m)) => {
                    msg = m;
                    entry.gone.cancelled().await;
                }
            }
        }
    }

    /// Claims `root` for this daemon, on the blocking pool (it reads and writes files).
    async fn claim(&self, root: &Path) -> Option<lock::Taken> {
        let (r, socket) = (root.to_path_buf(), self.ctx.socket.clone());
        tokio::task::spawn_blocking(move || lock::take(&r, &socket)).await.ok()
    }

    fn entry(self: &Arc<Self>, root: &Path, start: bool, lock: &mut Option<lock::Claim>) -> Option<Entry> {
        let mut live = self.lock();
        if let Some(e) = live.get(root) {
            return Some(e.clone());
        }
        if !start || self.closing.load(Ordering::SeqCst) {
            return None;
        }
        let e = self.spawn(root.to_path_buf(), None, lock.take());
        live.insert(root.to_path_buf(), e.clone());
        Some(e)
    }

    fn spawn(self: &Arc<Self>, root: PathBuf, restored: Option<Restored>, lock: Option<lock::Claim>) -> Entry {
        let (tx, rx) = mpsc::channel(MAILBOX);
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let registration = Registration { registry: self.clone(), root: root.clone(), generation, lock };
        let ctx = self.ctx.clone();
        let mailbox = tx.clone();
        tokio::spawn(async move {
            let project = match restored {
                Some(r) => Project::restored(r.session, r.remaining, r.ahead, ctx),
                None => Project::open(root, ctx).await,
            };
            project.run(rx, mailbox, Box::new(registration)).await;
        });
        Entry { tx, generation, gone: CancellationToken::new() }
    }

    /// Restores the sessions saved in the state dir: those still within the TTL continue
    /// with the same id, the others are archived as expired. Returns (restored, archived).
    pub async fn restore(self: &Arc<Self>) -> (usize, usize) {
        let ctx = self.ctx.clone();
        let found = tokio::task::spawn_blocking(move || ctx.store.scan()).await.unwrap_or_default();
        let found = newest(found, self.ctx.journal.take_live());
        let (mut restored, mut archived) = (0, 0);
        let now = chrono::Utc::now();
        for (f, ahead) in found {
            let s = match f {
                Found::Session(s) => *s,
                Found::Corrupt { moved_to, error } => {
                    tracing::error!(moved_to = %moved_to.display(), error = %error, "corrupt session tracker moved aside; a fresh session will start");
                    continue;
                }
            };
            let last = crate::clock::parse_iso(&s.last_activity)
                .or_else(|| crate::clock::parse_iso(&s.created_at))
                .unwrap_or(now);
            let idle = (now - last).to_std().unwrap_or(Duration::ZERO);
            let alive = s.project_root.is_dir();
            let ttl = self.ctx.live.borrow().session_ttl;
            if alive && idle < ttl {
                let root = s.project_root.clone();
                let lock = match self.claim(&root).await {
                    Some(lock::Taken::Mine(f)) => Some(f),
                    Some(lock::Taken::Elsewhere(why)) => {
                        // Its tracker stays: the other daemon keeps the session meanwhile.
                        tracing::warn!(project = %root.display(), "not restored: {why}");
                        continue;
                    }
                    _ => None,
                };
                tracing::info!(project = %root.display(), session = %s.session_id, "session restored");
                let e = self.spawn(root.clone(), Some(Restored { session: s, remaining: ttl - idle, ahead }), lock);
                self.lock().insert(root, e);
                restored += 1;
            } else {
                let reason = if alive { EndReason::Expired } else { EndReason::Restored };
                let ended_at = crate::clock::iso(last + chrono::Duration::from_std(ttl).unwrap_or_default());
                let a = ArchivedSession { ended: reason, ended_at, session: s };
                self.ctx.journal.ended(Box::new(a.session.clone()), crate::store::end_reason_text(reason)).await;
                let ctx = self.ctx.clone();
                let r = tokio::task::spawn_blocking(move || {
                    super::past::archive(&ctx, &a)?;
                    ctx.store.remove_tracker(&a.session.project_root)
                })
                .await;
                if let Ok(Err(e)) = r {
                    tracing::error!(error = %e, "cannot archive a session found at start-up");
                }
                archived += 1;
            }
        }
        (restored, archived)
    }

    /// Summaries of every live project, by root.
    pub async fn list(self: &Arc<Self>) -> Vec<ProjectSummary> {
        let mut out = Vec::new();
        for root in self.roots() {
            let (tx, rx) = oneshot::channel();
            self.send(&root, Msg::Summary { conversations: false, reply: tx }).await;
            if let Ok(s) = rx.await {
                out.push(s);
            }
        }
        out
    }

    /// Roots of live projects, sorted.
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut r: Vec<PathBuf> = self.lock().keys().cloned().collect();
        r.sort();
        r
    }

    /// Whether `root` has a live session.
    pub fn is_live(&self, root: &Path) -> bool {
        self.lock().contains_key(root)
    }

    /// Number of live projects.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no project is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops new sessions, asks every live project for its final checkpoint and waits for all,
    /// for `FINAL_CHECKPOINTS` at most: a project that cannot finish (a disk that hangs)
    /// must not keep the daemon from stopping; its last checkpoint on disk stays whole.
    pub async fn final_checkpoint_all(self: &Arc<Self>) {
        self.closing.store(true, Ordering::SeqCst);
        let roots = self.roots();
        tracing::info!(projects = roots.len(), "final checkpoint of every live project");
        let deadline = tokio::time::Instant::now() + FINAL_CHECKPOINTS;
        let mut waits = Vec::with_capacity(roots.len());
        for root in roots {
            let (tx, rx) = oneshot::channel();
            if tokio::time::timeout_at(deadline, self.send(&root, Msg::Shutdown { reply: tx })).await.is_err() {
                tracing::error!(project = %root.display(), "project did not take its final checkpoint request in time");
                continue;
            }
            waits.push((root, rx));
        }
        for (root, wait) in waits {
            match tokio::time::timeout_at(deadline, wait).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    tracing::warn!(project = %root.display(), "project task ended before its final checkpoint")
                }
                Err(_) => {
                    tracing::error!(project = %root.display(), "final checkpoint not finished in time; stopping anyway")
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Entry>> {
        // The map holds no invariant a panicking holder could break.
        self.live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Why `root` can never be a project, if it cannot: watching it would walk a whole disk or
/// a system tree, and checkpoints would be written where they do not belong (`/.claude`,
/// `~/.claude`, Claude Code's own directory).
pub fn refused(root: &Path) -> Option<String> {
    // Every hook asks: the home directory is resolved once, not per event.
    // `$HOME`, and the account's own home from the password database (`$HOME` may be set
    // elsewhere, and the real one must stay refused).
    static HOMES: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let homes = HOMES.get_or_init(|| {
        #[cfg(unix)]
        let account = ccmem_proto::wire::paths::account_home();
        // Windows: the profile folder (HOME is seldom set there).
        #[cfg(not(unix))]
        let account = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
        let mut v: Vec<PathBuf> = [std::env::var_os("HOME").map(PathBuf::from), account]
            .into_iter()
            .flatten()
            // As roots are made canonical (on Windows without the `\\?\` prefix).
            .filter_map(|h| ccmem_proto::files::within::canonical(&h).ok())
            .collect();
        v.dedup();
        v
    });
    // ccmem's own directories: a project there would have its checkpoints, claim and
    // watcher inside the daemon's private state (round three's tester).
    static OWN: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| {
        use ccmem_proto::wire::paths;
        [paths::state_dir().ok(), paths::config_dir().ok()]
            .into_iter()
            .flatten()
            .filter_map(|d| ccmem_proto::files::within::canonical(&d).ok())
            .collect()
    });
    let why = if root.parent().is_none() {
        "the filesystem root"
    } else if homes.iter().any(|h| h == root) {
        "your home directory"
    } else if homes.iter().any(|h| root.starts_with(h.join(".claude"))) {
        "Claude Code's own directory"
    } else if own.iter().any(|d| root.starts_with(d)) {
        "ccmem's own directory"
    } else if homes.iter().any(|h| CREDENTIAL_DIRS.iter().any(|c| root.starts_with(h.join(c)))) {
        "a directory of credentials"
    } else if SYSTEM_TREES.iter().any(|t| root.starts_with(t)) {
        "a system directory"
    } else if SYSTEM_ROOTS.iter().any(|t| root == Path::new(t)) {
        "a directory that holds other people's or programs' files"
    } else {
        return None;
    };
    Some(format!(
        "{} is not a project ({why}): ccmem tracks a git repository or a directory of your own, \
         never the filesystem root, your home directory, ~/.claude or system directories",
        root.display()
    ))
}

/// Directories of the home that hold keys and tokens: never projects, nor anything under
/// them (a project's files are read, journaled and shown to the agent).
const CREDENTIAL_DIRS: &[&str] =
    &[".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".config/gh", ".config/gcloud"];

/// Never projects, nor anything under them.
const SYSTEM_TREES: &[&str] = &[
    "/proc", "/sys", "/dev", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/run",
    "/snap", "/System", "/Library",
];
/// Never projects themselves (what is under them may be).
const SYSTEM_ROOTS: &[&str] = &[
    "/home",
    "/Users",
    "/tmp",
    "/var",
    "/var/tmp",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/opt",
    "/mnt",
    "/media",
    "/srv",
    "/private",
    "/private/tmp",
    "/private/var",
    "/Volumes",
    "/Applications",
];

/// What marks a project's top directory when there is no git: a manifest, or the
/// `.claude` directory Claude Code (and ccmem) keep there.
const MARKERS: &[&str] = &[
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "deno.json",
    "pubspec.yaml",
    "Package.swift",
    ".claude",
];

/// The project root for `path`, given the roots of the live projects:
/// - the nearest ancestor (or itself) holding `.git` (a directory, or a file for worktrees
///   and submodules), or the live project that holds it, whichever is nearer: a directory
///   inside a live project without git is part of it, not a project of its own;
/// - else the nearest ancestor with a project marker ([`MARKERS`]) that may be a project
///   (not the home directory, whose `.claude` is Claude Code's own);
/// - else the directory itself.
pub fn resolve_root(path: &Path, live: &[PathBuf]) -> io::Result<PathBuf> {
    let canon = ccmem_proto::files::within::canonical(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {}: {e}", path.display())))?;
    let dir = if canon.is_dir() { canon } else { canon.parent().map(Path::to_path_buf).unwrap_or(canon) };
    let git = dir.ancestors().find(|a| a.join(".git").exists());
    let holder = live.iter().filter(|r| dir.starts_with(r)).max_by_key(|r| r.components().count());
    let nearest = match (git, holder) {
        (Some(g), Some(h)) if h.starts_with(g) => Some(h.as_path()),
        (Some(g), _) => Some(g),
        (None, h) => h.map(PathBuf::as_path),
    };
    if let Some(root) = nearest {
        return Ok(root.to_path_buf());
    }
    // A manifest is a file, `.claude` a directory: a directory named `package.json` marks nothing.
    let marks =
        |a: &Path| MARKERS.iter().any(|m| if *m == ".claude" { a.join(m).is_dir() } else { a.join(m).is_file() });
    let marked = dir.ancestors().filter(|a| marks(a)).find(|a| refused(a).is_none());
    Ok(marked.unwrap_or(&dir).to_path_buf())
}

/// The scanner tells each project its dev servers through the registry.
impl crate::observe::ports::Audience for Projects {
    fn roots(&self) -> Vec<PathBuf> {
        Projects::roots(self)
    }

    fn tell(self: Arc<Self>, root: PathBuf, servers: Vec<ServerInfo>) -> crate::observe::ports::BoxFuture {
        Box::pin(async move { self.send(&root, Msg::Servers(servers)).await })
    }
}

/// The sessions to restore: each project's tracker (its last checkpoint), or the journal's
/// state of it where that is newer (events after the checkpoint, a daemon killed before
/// its first one).
/// A session taken up again at start-up.
struct Restored {
    session: Session,
    /// Inactivity left before it expires.
    remaining: Duration,
    /// The journal held more than its last checkpoint: one is written at once.
    ahead: bool,
}

/// The trackers `found`, each replaced by the journal's state of its project when that is
/// newer (its last state plus the events after it), and told whether it was.
///
/// Of the same session, the journal's is taken: every event the daemon answered is in it,
/// while a checkpoint is a copy taken some time before it was written. Their clocks cannot
/// decide (a checkpoint written after the journal's last state may still be a copy from
/// before the events that state holds: a kill then would lose them). The checkpoint is
/// written again at once when it differs.
fn newest(found: Vec<Found>, journal: Vec<crate::journal::Live>) -> Vec<(Found, bool)> {
    let mut found: Vec<(Found, bool)> = found.into_iter().map(|f| (f, false)).collect();
    for live in journal {
        let mut s = live.session;
        super::replay::apply_all(&mut s, live.replays);
        // The watcher counts what changed on disk after the state it starts from.
        s.saved_at_ms = s.saved_at_ms.max(live.at_ms);
        let same = found.iter_mut().find_map(|(f, ahead)| match f {
            Found::Session(t) if t.project_root == s.project_root => Some((t, ahead)),
            _ => None,
        });
        match same {
            None => found.push((Found::Session(Box::new(s)), true)),
            Some((t, ahead)) => {
                if s.session_id < t.session_id {
                    continue;
                }
                let differs = s.session_id > t.session_id || !same_content(&s, t);
                if differs {
                    tracing::info!(project = %s.project_root.display(), session = %s.session_id, "the journal holds a newer state than the last checkpoint");
                }
                s.saved_at_ms = s.saved_at_ms.max(t.saved_at_ms);
                **t = s;
                *ahead = differs;
            }
        }
    }
    found
}

/// Whether two states of a session hold the same, but for when each was saved.
fn same_content(a: &Session, b: &Session) -> bool {
    let strip = |s: &Session| {
        let mut v = serde_json::to_value(s).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.remove("saved_at_ms");
        }
        v
    };
    strip(a) == strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A race a kill can hit: a checkpoint copied before some events and
    /// written after the journal's last state (which holds them) must not win on its clock.
    #[test]
    fn the_journal_wins_over_a_checkpoint_written_later() {
        let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let root = PathBuf::from("/p");
        let mut old = crate::session::rules::start(root.clone(), "p".into(), "session_a".into(), at, None);
        let mut new = old.clone();
        new.warnings.push("an event after the checkpoint's copy".into());
        old.saved_at_ms = 2_000;
        let live = |s: &Session| crate::journal::Live { session: s.clone(), replays: Vec::new(), at_ms: 1_000 };
        let got = newest(vec![Found::Session(Box::new(old.clone()))], vec![live(&new)]);
        let [(Found::Session(s), ahead)] = &got[..] else { panic!("one session") };
        assert_eq!(s.warnings, new.warnings);
        assert!(*ahead, "a checkpoint is written again");
        // The same content: nothing to write again.
        let got = newest(vec![Found::Session(Box::new(old.clone()))], vec![live(&old)]);
        let [(Found::Session(_), ahead)] = &got[..] else { panic!("one session") };
        assert!(!*ahead);
        // An older session in the journal does not replace a newer one.
        let mut older = old.clone();
        older.session_id = "session_0".into();
        let got = newest(vec![Found::Session(Box::new(old.clone()))], vec![live(&older)]);
        let [(Found::Session(s), false)] = &got[..] else { panic!("one session") };
        assert_eq!(s.session_id, "session_a");
    }

    #[test]
    fn root_is_the_git_toplevel_else_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let plain = base.join("plain/sub");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(resolve_root(&plain, &[]).unwrap(), plain);

        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join("src/deep/f.rs"), "").unwrap();
        assert_eq!(resolve_root(&repo.join("src/deep"), &[]).unwrap(), repo);
        assert_eq!(resolve_root(&repo.join("src/deep/f.rs"), &[]).unwrap(), repo);
        assert_eq!(resolve_root(&repo.join("src/deep/../deep"), &[]).unwrap(), repo);

        let wt = base.join("worktree");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(resolve_root(&wt, &[]).unwrap(), wt);

        assert!(resolve_root(&base.join("missing"), &[]).is_err());
    }

    /// Found by a new user: `watch ng2`, then a session started in `ng2/sub`, gave two
    /// sessions. A directory inside a live project is part of it; without one, the nearest
    /// directory with a project's marker is the project.
    #[test]
    fn a_directory_inside_a_live_project_without_git_belongs_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let ng2 = base.join("ng2");
        std::fs::create_dir_all(ng2.join("sub/deeper")).unwrap();
        assert_eq!(resolve_root(&ng2.join("sub/deeper"), std::slice::from_ref(&ng2)).unwrap(), ng2);
        assert_eq!(resolve_root(&ng2.join("sub"), &[]).unwrap(), ng2.join("sub"), "no marker: the directory");
        // The deepest live project that holds it.
        let inner = ng2.join("sub");
        assert_eq!(resolve_root(&ng2.join("sub/deeper"), &[ng2.clone(), inner.clone()]).unwrap(), inner);
        // A git repository inside a live project is its own.
        let repo = ng2.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        assert_eq!(resolve_root(&repo.join("src"), std::slice::from_ref(&ng2)).unwrap(), repo);
        // A live project inside a repository (tracked before `git init`) keeps its own.
        assert_eq!(resolve_root(&repo.join("src"), &[repo.join("src")]).unwrap(), repo.join("src"));

        // No live project: the nearest marker.
        let app = base.join("app");
        std::fs::create_dir_all(app.join("src/components")).unwrap();
        std::fs::write(app.join("package.json"), "{}").unwrap();
        assert_eq!(resolve_root(&app.join("src/components"), &[]).unwrap(), app);
        let tool = base.join("tool");
        std::fs::create_dir_all(tool.join(".claude")).unwrap();
        std::fs::create_dir_all(tool.join("src")).unwrap();
        assert_eq!(resolve_root(&tool.join("src"), &[]).unwrap(), tool);
    }
}
