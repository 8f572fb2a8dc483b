//! What was last seen of the tree, and the walk, diff and poll that compare it with disk.

use super::ignores::*;
use super::*;

/// What a walk found at a path: a directory, a file (with what was seen of it), or a
/// directory it could not read.
pub(super) enum Found {
    Dir,
    File(Seen),
    Unreadable,
}

pub(super) type Batch = Vec<(PathBuf, Found)>;

/// Makes one [`Collector`] per walker thread.
pub(super) struct Collectors {
    pub(super) tx: std::sync::mpsc::Sender<Batch>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Collectors {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Collector { tx: self.tx.clone(), batch: Vec::with_capacity(256) })
    }
}

/// Sends what one walker thread finds in batches; the last one when the walk ends.
pub(super) struct Collector {
    pub(super) tx: std::sync::mpsc::Sender<Batch>,
    pub(super) batch: Batch,
}

impl ignore::ParallelVisitor for Collector {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        match entry {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_dir()) => {
                self.batch.push((entry.into_path(), Found::Dir))
            }
            Ok(entry) => {
                if let Ok(m) = entry.metadata() {
                    self.batch.push((entry.into_path(), Found::File(Seen::of(&m))));
                }
            }
            // A directory that cannot be read (a path past the system's limit, no
            // permission): said in `status`, not passed over in silence.
            Err(e) => {
                if let Some(path) = error_path(&e) {
                    self.batch.push((path, Found::Unreadable));
                }
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

/// The path an error of the walk is about, when it is about reading one.
fn error_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, err } if err.io_error().is_some() => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        _ => None,
    }
}

/// What was last seen of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seen {
    pub(super) mtime_ns: i64,
    pub(super) size: u64,
    pub(super) ino: u64,
}

impl Seen {
    pub(super) fn of(m: &std::fs::Metadata) -> Self {
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
pub(super) struct Tree {
    pub(super) root: PathBuf,
    pub(super) watcher: Option<super::hub::Route>,
    pub(super) settings: Arc<Settings>,
    pub(super) files: HashMap<Box<str>, Seen>,
    pub(super) watched: HashSet<Box<str>>,
    pub(super) polled: HashSet<Box<str>>,
    pub(super) ignores: Ignores,
    /// The project is over the cap: the rest of it is not tracked.
    pub(super) capped: bool,
    /// Directories that could be neither watched nor read.
    pub(super) unwatchable: HashSet<Box<str>>,
    /// The root is gone.
    pub(super) gone: bool,
    /// The root's identity when watching began.
    pub(super) root_id: Option<(u64, u64)>,
    /// notify's own watches are known to be in place for every creation heard so far
    /// (see [`Tree::await_recursive_watches`]); reset for each batch.
    watches_settled: bool,
    /// Directories listed since then: their creation, heard in this batch, needs no second
    /// look (a burst's chain of nested directories would otherwise be listed again for
    /// each of its creations, quadratic in its depth).
    listed_in_batch: HashSet<Box<str>>,
}

impl Drop for Tree {
    fn drop(&mut self) {
        self.settings.watches_used.fetch_sub(self.watched.len(), Relaxed);
    }
}

impl Tree {
    pub(super) fn new(
        root: PathBuf,
        watcher: Option<super::hub::Route>,
        settings: Arc<Settings>,
        extra: &[String],
    ) -> Self {
        let ignores = Ignores::new(&root).with_patterns(&root, extra);
        let root_id = ccmem_proto::files::dir_id(&root);
        Self {
            root,
            watcher,
            settings,
            files: HashMap::new(),
            watched: HashSet::new(),
            polled: HashSet::new(),
            capped: false,
            unwatchable: HashSet::new(),
            gone: false,
            root_id,
            ignores,
            watches_settled: false,
            listed_in_batch: HashSet::new(),
        }
    }

    pub(super) fn publish(&self, stats: &Stats) {
        stats.dirs_watched.store(self.watched.len(), Relaxed);
        stats.dirs_polled.store(self.polled.len(), Relaxed);
        stats.files.store(self.files.len(), Relaxed);
        stats.capped.store(self.capped, Relaxed);
        stats.unwatchable.store(self.unwatchable.len(), Relaxed);
        let mut example = stats.unwatchable_example.lock().unwrap_or_else(|p| p.into_inner());
        if example.as_deref().is_none_or(|e| !self.unwatchable.contains(e)) {
            *example = self.unwatchable.iter().min_by_key(|d| d.len()).map(|d| d.to_string());
        }
    }

    /// Whether the root is still the directory watching began in.
    pub(super) fn root_is_ours(&self) -> bool {
        ccmem_proto::files::is_same_dir(&self.root, self.root_id)
    }

    pub(super) fn rel(&self, p: &Path) -> Option<String> {
        let r = p.strip_prefix(&self.root).ok()?;
        Some(r.to_string_lossy().replace('\\', "/"))
    }

    /// The initial walk: watch every directory, remember every file. Nothing counts as a
    /// change, except files modified after `since`.
    pub(super) fn scan(&mut self, since: Option<SystemTime>) -> Vec<(String, Change)> {
        self.watch_git();
        let mut out = Vec::new();
        let since_ns = since.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()).map(|d| d.as_nanos() as i64);
        for (rel, seen) in self.walk("") {
            if let Some(seen) = seen {
                if let Some(since) = since.filter(|_| since_ns.is_some_and(|s| seen.mtime_ns > s)) {
                    // Born after `since` (where the system records birth times): created.
                    let born = std::fs::symlink_metadata(self.root.join(&rel)).and_then(|m| m.created());
                    let change = if born.is_ok_and(|b| b > since) { Change::Created } else { Change::Modified };
                    out.push((rel.clone(), change));
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
    pub(super) fn walk(&mut self, rel_dir: &str) -> Vec<(String, Option<Seen>)> {
        let below = depth(rel_dir);
        if below >= MAX_DEPTH {
            self.unwatchable.insert(rel_dir.into());
            return Vec::new();
        }
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
            .max_depth(Some(MAX_DEPTH - below))
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
                for (path, what) in batch {
                    let Some(rel) = self.rel(&path) else { continue };
                    match what {
                        Found::Dir if depth(&rel) >= MAX_DEPTH => {
                            self.unwatchable.insert(rel.into());
                        }
                        Found::Dir => {
                            self.add_dir(&rel);
                            found.push((rel, None));
                        }
                        Found::File(seen) if !is_own_file(&rel) && !is_cookie(&rel) => found.push((rel, Some(seen))),
                        Found::File(_) => {}
                        Found::Unreadable => {
                            tracing::debug!(dir = %path.display(), "cannot read directory");
                            self.unwatchable.insert(rel.into());
                        }
                    }
                }
            }
        });
        self.relist(&mut found);
        found
    }

    /// Looks again into each directory the walk found, now that its watch is in place. The
    /// walk lists a directory before its watch lands: what was created in between (a file,
    /// or a whole subdirectory of a burst) would have no notification and never be seen.
    /// What the second look finds that the walk did not is added, and new directories are
    /// walked the same way. From the watch on, notifications cover the rest.
    fn relist(&mut self, found: &mut Vec<(String, Option<Seen>)>) {
        let mut known: HashSet<String> = found.iter().map(|(r, _)| r.clone()).collect();
        let mut dirs: Vec<String> = found.iter().filter(|(_, s)| s.is_none()).map(|(r, _)| r.clone()).collect();
        while let Some(dir) = dirs.pop() {
            if !self.watched.contains(dir.as_str()) {
                continue; // polled (its poll finds new entries) or not watched at all
            }
            let Ok(rd) = std::fs::read_dir(self.root.join(&dir)) else { continue };
            for e in rd.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                let rel = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
                if known.contains(&rel)
                    || self.files.contains_key(rel.as_str())
                    || self.watched.contains(rel.as_str())
                    || self.polled.contains(rel.as_str())
                    || is_own_file(&rel)
                    || is_cookie(&rel)
                    || ALWAYS_IGNORED.contains(&&*name)
                {
                    continue;
                }
                let Ok(m) = std::fs::symlink_metadata(e.path()) else { continue };
                if self.ignores.is_ignored(&self.root, &rel, m.is_dir()) {
                    continue;
                }
                known.insert(rel.clone());
                if m.is_dir() {
                    for (r, seen) in self.walk(&rel) {
                        if known.insert(r.clone()) {
                            found.push((r, seen));
                        }
                    }
                } else {
                    found.push((rel, Some(Seen::of(&m))));
                }
            }
        }
    }

    /// Watches a directory, or polls it when no watch can be had.
    pub(super) fn add_dir(&mut self, rel: &str) {
        if self.watched.contains(rel) || self.polled.contains(rel) {
            return;
        }
        if self.watcher.is_none() {
            // No watcher could be had (status says why): polled, as over the limit.
            self.polled.insert(rel.into());
            return;
        }
        let path = if rel.is_empty() { self.root.clone() } else { self.root.join(rel) };
        // One project takes at most its fair share of the budget (counted per directory in
        // either mode, as the budget is).
        let fair = self.watched.len() < self.settings.fair_share;
        let within_budget = fair && self.settings.watches_used.fetch_add(1, Relaxed) < self.settings.max_watches;
        let result = match (&mut self.watcher, within_budget) {
            // The root's recursive watch covers every directory below it.
            (Some(_), true) if self.settings.recursive_root && !rel.is_empty() => Ok(()),
            (Some(w), true) if self.settings.recursive_root => w.watch(&path, RecursiveMode::Recursive),
            (Some(w), true) => w.watch(&path, RecursiveMode::NonRecursive),
            _ => Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch)),
        };
        match result {
            Ok(()) => {
                self.watched.insert(rel.into());
            }
            Err(e) => {
                if fair {
                    self.settings.watches_used.fetch_sub(1, Relaxed);
                }
                if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) {
                    if !self.settings.kernel_limit_hit.swap(true, Relaxed) {
                        tracing::warn!("{}", limit_warning(&self.settings));
                    }
                    self.polled.insert(rel.into());
                } else {
                    tracing::debug!(dir = %path.display(), error = %e, "cannot watch directory");
                    self.unwatchable.insert(rel.into());
                }
            }
        }
    }

    pub(super) fn drop_dir(&mut self, rel: &str) {
        let prefix = format!("{rel}/");
        let gone: Vec<Box<str>> =
            self.watched.iter().filter(|d| &***d == rel || d.starts_with(&prefix)).cloned().collect();
        for d in gone {
            if let Some(w) = self.watcher.as_mut().filter(|_| !self.settings.recursive_root || d.is_empty()) {
                let _ = w.unwatch(&self.root.join(&*d));
            }
            self.watched.remove(&d);
            self.settings.watches_used.fetch_sub(1, Relaxed);
        }
        self.polled.retain(|d| &**d != rel && !d.starts_with(&prefix));
        self.unwatchable.retain(|d| &**d != rel && !d.starts_with(&prefix));
    }

    /// `.git` (HEAD, index, packed-refs) and `.git/refs/**`; not objects, not logs.
    pub(super) fn watch_git(&mut self) {
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
            // Under a recursive root watch `.git` is already covered: only recorded.
            if self.settings.recursive_root || w.watch(&d, RecursiveMode::NonRecursive).is_ok() {
                self.settings.watches_used.fetch_add(1, Relaxed);
                self.watched.insert(format!("\0git:{}", d.display()).into());
            }
        }
    }

    /// Decides what happened to each path named by notifications.
    pub(super) fn resolve(&mut self, paths: Vec<PathBuf>) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        self.watches_settled = false;
        self.listed_in_batch.clear();
        for p in paths {
            let Some(rel) = self.rel(&p) else { continue };
            if rel.is_empty() && !self.root_is_ours() {
                // The root itself was deleted or moved away (and perhaps made again).
                self.gone = true;
            }
            if rel.is_empty()
                || is_own_file(&rel)
                || is_cookie(&rel)
                || rel.split('/').any(|c| ALWAYS_IGNORED.contains(&c))
            {
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
    pub(super) fn check(&mut self, rel: &str, out: &mut Vec<(String, Change)>) {
        match std::fs::symlink_metadata(self.root.join(rel)) {
            Ok(m) if m.is_dir() => {
                let known = self.watched.contains(rel) || self.polled.contains(rel);
                if !known && !self.ignores.is_ignored(&self.root, rel, true) {
                    // A new directory: watch it, then look inside, since files may have been
                    // created before the watch landed (`mkdir -p a/b/c && touch a/b/c/f`).
                    self.await_recursive_watches();
                    let emulated = self.emulated_recursion();
                    if emulated {
                        self.listed_in_batch.insert(rel.into());
                    }
                    for (f, seen) in self.walk(rel) {
                        match seen {
                            Some(seen) => self.record(f, seen, out),
                            None if emulated => {
                                self.listed_in_batch.insert(f.into());
                            }
                            None => {}
                        }
                    }
                } else if known && self.emulated_recursion() && !self.listed_in_batch.contains(rel) {
                    // Listed by an earlier walk, perhaps before notify's own watch on it
                    // landed: what was made there in between had no notification.
                    self.await_recursive_watches();
                    self.listed_in_batch.insert(rel.into());
                    self.look_again(rel, out);
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

    /// Whether notify makes the root's recursive watch out of one watch per directory, which
    /// it adds itself for each new directory *after* telling of its creation (inotify,
    /// kqueue). FSEvents and Windows watch a whole tree natively.
    fn emulated_recursion(&self) -> bool {
        use notify::{RecommendedWatcher, Watcher, WatcherKind};
        self.settings.recursive_root && matches!(RecommendedWatcher::kind(), WatcherKind::Inotify | WatcherKind::Kqueue)
    }

    /// Under an emulated recursive watch, waits (once per batch of notifications) until
    /// notify has added its watches for the directories whose creation the batch tells of.
    /// Listed before that, a directory's entries made between the listing and the watch
    /// would never be seen: a lost burst of files under load.
    fn await_recursive_watches(&mut self) {
        if self.watches_settled || !self.emulated_recursion() {
            return;
        }
        if let Some(w) = &self.watcher {
            w.barrier();
        }
        self.watches_settled = true;
    }

    /// Compares every entry of a known directory with what was last seen, and so every
    /// directory below it: notify watched those in the same catch-up, equally after our
    /// listing, and tells of none of them.
    fn look_again(&mut self, dir: &str, out: &mut Vec<(String, Change)>) {
        for rel in self.entries(dir).unwrap_or_default() {
            self.check(&rel, out);
        }
    }

    /// The entries of the directory `dir` (relative to the root), as paths relative to the
    /// root, but the daemon's own files, cookies and trees never watched; None when it
    /// cannot be read.
    fn entries(&self, dir: &str) -> Option<Vec<String>> {
        let abs = if dir.is_empty() { self.root.clone() } else { self.root.join(dir) };
        let rd = std::fs::read_dir(abs).ok()?;
        let mut out = Vec::new();
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let rel = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
            if !(is_own_file(&rel) || is_cookie(&rel) || ALWAYS_IGNORED.contains(&&*name)) {
                out.push(rel);
            }
        }
        Some(out)
    }

    pub(super) fn record(&mut self, rel: String, seen: Seen, out: &mut Vec<(String, Change)>) {
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
    pub(super) fn rescan(&mut self) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        if !self.root_is_ours() {
            self.gone = true;
            return out;
        }
        if self.emulated_recursion() {
            // What notify's emulated recursion may have lost with the notifications is
            // watched again before the walk, so what the walk lists is watched from then on.
            let root = self.root.clone();
            if let Some(Err(e)) = self.watcher.as_mut().map(|w| w.rewatch(&root)) {
                tracing::warn!(project = %root.display(), error = %e, "cannot watch the project again after lost notifications");
            }
        }
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
    pub(super) fn poll(&mut self) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        let dirs: Vec<Box<str>> = self.polled.iter().cloned().collect();
        for d in dirs {
            let prefix = if d.is_empty() { String::new() } else { format!("{d}/") };
            let Some(entries) = self.entries(&d) else {
                self.check(&d, &mut out);
                continue;
            };
            let mut seen_here = HashSet::new();
            for rel in entries {
                self.check(&rel, &mut out);
                seen_here.insert(rel);
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

/// Pending paths in the order of their latest event.
pub(super) fn in_order(pending: HashMap<PathBuf, u64>) -> Vec<PathBuf> {
    let mut paths: Vec<(PathBuf, u64)> = pending.into_iter().collect();
    paths.sort_unstable_by_key(|(_, n)| *n);
    paths.into_iter().map(|(p, _)| p).collect()
}

/// A synchronization cookie of the watcher's own (see [`super::Syncer`]).
/// How many directories deep below the root a project is watched. Every reader of a path
/// (the ignore rules of each directory above it, the watch's own bookkeeping) costs its
/// depth, so a tree thousands deep (which a repository can carry) cost the shared watcher
/// time quadratic in its depth, every other project waiting; no project's own files lie
/// this deep.
pub(super) const MAX_DEPTH: usize = 48;

/// The number of directories `rel` lies below the root (`""` is the root itself).
fn depth(rel: &str) -> usize {
    if rel.is_empty() {
        0
    } else {
        rel.bytes().filter(|b| *b == b'/').count() + 1
    }
}

pub(super) fn is_cookie(rel: &str) -> bool {
    rel.rsplit('/').next().is_some_and(|n| n.starts_with(COOKIE_PREFIX))
}
