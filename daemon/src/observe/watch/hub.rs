//! One file watcher for the whole daemon, shared by every project.
//!
//! Each notify watcher is an inotify instance on Linux, and a user has 128 of them by default,
//! shared with every editor, language server and daemon they run. With one per project, the
//! projects past that limit never saw a change, in silence. Here the daemon holds one
//! watcher; each project's watches are routes in it, and each notification goes to the
//! projects that watch the directory it names (a directory watched by two projects, one
//! inside the other, is watched once and counted twice). A notification that names no path
//! (the kernel's queue overflowed) goes to every project, which rescans.
//!
//! When no watcher can be had at all (the kernel refuses the instance, no descriptors are
//! left), [`Hub::route`] says why, and the project polls its directories instead; the next
//! project asks again.

use notify::{RecursiveMode, Watcher};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// What a project's watcher hears: notify's events, as notify gives them.
pub type Handler = Arc<dyn Fn(notify::Result<notify::Event>) + Send + Sync>;

/// Who watches what: the routes, and the directories each watches.
#[derive(Default)]
struct Routes {
    next: u64,
    handlers: HashMap<u64, Handler>,
    /// Each watched directory and the routes that watch it (recursively or not).
    dirs: HashMap<PathBuf, Vec<(u64, bool)>>,
}

impl Routes {
    /// The routes a notification about `paths` is for.
    fn for_paths(&self, paths: &[PathBuf]) -> HashSet<u64> {
        let mut ids = HashSet::new();
        for p in paths {
            // The directory itself (its own events), its parent (an entry of it), and any
            // ancestor watched recursively.
            for (depth, dir) in p.ancestors().enumerate() {
                if let Some(watchers) = self.dirs.get(dir) {
                    ids.extend(watchers.iter().filter(|(_, rec)| depth <= 1 || *rec).map(|(id, _)| *id));
                }
            }
        }
        ids
    }
}

/// The daemon's one watcher and its routes.
pub struct Hub {
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    routes: Arc<RwLock<Routes>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hub")
    }
}

impl Default for Hub {
    fn default() -> Self {
        Self { watcher: Mutex::new(None), routes: Arc::new(RwLock::new(Routes::default())) }
    }
}

fn read(routes: &RwLock<Routes>) -> std::sync::RwLockReadGuard<'_, Routes> {
    routes.read().unwrap_or_else(|p| p.into_inner())
}

fn write(routes: &RwLock<Routes>) -> std::sync::RwLockWriteGuard<'_, Routes> {
    routes.write().unwrap_or_else(|p| p.into_inner())
}

impl Hub {
    /// A route for one project's watcher, whose notifications go to `handler`; or why no
    /// watcher can be had (then the project polls).
    pub fn route(self: &Arc<Self>, handler: Handler) -> Result<Route, String> {
        self.ensure_watcher()?;
        let mut r = write(&self.routes);
        r.next += 1;
        let id = r.next;
        r.handlers.insert(id, handler);
        Ok(Route { hub: self.clone(), id, dirs: HashMap::new() })
    }

    /// The one watcher, made when first needed (and again after a failure: the limit that
    /// refused it may have been raised, or descriptors freed).
    fn ensure_watcher(&self) -> Result<(), String> {
        let mut w = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        if w.is_some() {
            return Ok(());
        }
        let routes = self.routes.clone();
        let made = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let r = read(&routes);
            match res {
                Ok(ev) if ev.paths.is_empty() || ev.need_rescan() => {
                    r.handlers.values().for_each(|h| h(Ok(ev.clone())));
                }
                Ok(ev) => {
                    for id in r.for_paths(&ev.paths) {
                        if let Some(h) = r.handlers.get(&id) {
                            h(Ok(ev.clone()));
                        }
                    }
                }
                Err(e) => {
                    // An error with paths is theirs; one without is everyone's (each rescans).
                    let ids: Vec<u64> = if e.paths.is_empty() {
                        r.handlers.keys().copied().collect()
                    } else {
                        r.for_paths(&e.paths).into_iter().collect()
                    };
                    for id in ids {
                        if let Some(h) = r.handlers.get(&id) {
                            h(Err(notify::Error::generic(&e.to_string())));
                        }
                    }
                }
            }
        });
        match made {
            Ok(watcher) => {
                *w = Some(watcher);
                Ok(())
            }
            Err(e) => Err(why_unwatched(&e)),
        }
    }

    fn with_watcher<T>(
        &self,
        f: impl FnOnce(&mut notify::RecommendedWatcher) -> notify::Result<T>,
    ) -> notify::Result<T> {
        let mut w = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        match w.as_mut() {
            Some(w) => f(w),
            None => Err(notify::Error::generic("no file watcher")),
        }
    }
}

/// What `status` says when no file watcher can be had: the cause, and the fix.
pub fn why_unwatched(e: &notify::Error) -> String {
    let text = e.to_string();
    let fix = if text.contains("Too many open files") || text.contains("os error 24") {
        "the kernel refused a file watcher (inotify instances or file descriptors used up: \
         raise fs.inotify.max_user_instances with sysctl, or close programs that watch files)"
    } else if text.contains("No space left") || text.contains("os error 28") {
        "the kernel's watch limit is used up (raise fs.inotify.max_user_watches with sysctl)"
    } else {
        "the system refused a file watcher"
    };
    format!("cannot watch files ({text}): {fix}; the project's directories are polled instead")
}

/// One project's watches in the daemon's watcher; dropped, they are all removed.
pub struct Route {
    hub: Arc<Hub>,
    id: u64,
    /// What this route watches, and how.
    dirs: HashMap<PathBuf, bool>,
}

impl Route {
    /// Watches `path` for this route (shared with any other route watching it).
    pub fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
        let recursive = matches!(mode, RecursiveMode::Recursive);
        if self.dirs.get(path) == Some(&recursive) {
            return Ok(());
        }
        // Routed before it is watched: its first notifications must find their way.
        let first = {
            let mut r = write(&self.hub.routes);
            let watchers = r.dirs.entry(path.to_path_buf()).or_default();
            watchers.retain(|(id, _)| *id != self.id);
            let wider = recursive && !watchers.iter().any(|(_, rec)| *rec);
            watchers.push((self.id, recursive));
            watchers.len() == 1 || wider
        };
        let done = if first { self.hub.with_watcher(|w| w.watch(path, mode)) } else { Ok(()) };
        match done {
            Ok(()) => {
                self.dirs.insert(path.to_path_buf(), recursive);
                Ok(())
            }
            Err(e) => {
                self.leave(path);
                Err(e)
            }
        }
    }

    /// Asks the watcher to watch `path` (which this route watches recursively) again, from
    /// the top. notify emulates a recursive watch on inotify and kqueue with one watch per
    /// directory, added as it hears of each new one: a creation lost with the kernel's
    /// queue, or a directory that vanished while notify walked its siblings, leaves a
    /// directory unwatched for good. Watching again adds what is missing (the watches in
    /// place are kept), and returns once they are all in place.
    pub fn rewatch(&mut self, path: &Path) -> notify::Result<()> {
        if self.dirs.get(path) != Some(&true) {
            return Ok(());
        }
        self.hub.with_watcher(|w| w.watch(path, RecursiveMode::Recursive))
    }

    /// Stops watching `path` for this route (the watch goes with the last route on it).
    pub fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        if self.dirs.remove(path).is_none() {
            return Ok(());
        }
        if self.leave(path) {
            self.hub.with_watcher(|w| w.unwatch(path))
        } else {
            Ok(())
        }
    }

    /// Returns once the watcher's thread has finished what it was doing when this was
    /// called. notify's inotify backend hands a new directory's creation to the handlers
    /// first and adds the watch on it (a recursive watch's own catch-up) only afterwards:
    /// a directory listed after this call, for a creation already heard, has its watch.
    pub fn barrier(&self) {
        // A configuration request is a round trip through notify's event loop, which
        // handles it only after the notifications it was reading.
        let _ = self.hub.with_watcher(|w| w.configure(notify::Config::default()));
    }

    /// Takes this route off `path`; true when no route is left on it.
    fn leave(&self, path: &Path) -> bool {
        let mut r = write(&self.hub.routes);
        let Some(watchers) = r.dirs.get_mut(path) else { return false };
        watchers.retain(|(id, _)| *id != self.id);
        let empty = watchers.is_empty();
        if empty {
            r.dirs.remove(path);
        }
        empty
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        write(&self.hub.routes).handlers.remove(&self.id);
        for path in std::mem::take(&mut self.dirs).into_keys() {
            if self.leave(&path) {
                let _ = self.hub.with_watcher(|w| w.unwatch(&path));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn route(hub: &Arc<Hub>) -> (Route, mpsc::Receiver<PathBuf>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let h: Handler = Arc::new(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                for p in ev.paths {
                    let _ = tx.lock().unwrap().send(p);
                }
            }
        });
        (hub.route(h).unwrap(), rx)
    }

    fn heard(rx: &mpsc::Receiver<PathBuf>, p: &Path) -> bool {
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(q) if q == p => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// Under inotify a recursive watch is notify's own: it tells of a new directory first
    /// and watches it after. Once the barrier has passed, a directory heard of is watched,
    /// and so are the directories made inside it before that: every file made in any of
    /// them from then on is heard. (Without the barrier, a file made at once can fall
    /// between the two and is never heard: a burst's files were lost so.)
    #[cfg(target_os = "linux")]
    #[test]
    fn after_the_barrier_a_new_directory_is_watched() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let hub = Arc::new(Hub::default());
        let (mut a, rx) = route(&hub);
        a.watch(&root, RecursiveMode::Recursive).unwrap();
        for round in 0..20 {
            let top = root.join(format!("d{round}"));
            std::fs::create_dir_all(top.join("inner/deeper")).unwrap();
            assert!(heard(&rx, &top), "round {round}: the new directory is heard");
            a.barrier();
            std::fs::write(top.join("f.txt"), "x").unwrap();
            std::fs::write(top.join("inner/deeper/g.txt"), "x").unwrap();
            assert!(heard(&rx, &top.join("f.txt")), "round {round}: a file in it is heard");
            assert!(heard(&rx, &top.join("inner/deeper/g.txt")), "round {round}: and one below");
        }
    }

    /// A directory notify's emulated recursion lost (here its watch taken away behind the
    /// route's back, as a lost creation leaves it) is heard again once the route watches
    /// its root again, and what was watched stays so.
    #[cfg(target_os = "linux")]
    #[test]
    fn watching_again_restores_a_lost_directory_of_a_recursive_watch() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let lost = root.join("lost/deeper");
        std::fs::create_dir_all(&lost).unwrap();
        let hub = Arc::new(Hub::default());
        let (mut a, rx) = route(&hub);
        a.watch(&root, RecursiveMode::Recursive).unwrap();
        hub.with_watcher(|w| w.unwatch(&root.join("lost"))).unwrap();
        std::fs::write(lost.join("unheard.txt"), "x").unwrap();
        std::fs::write(root.join("top.txt"), "x").unwrap();
        assert!(heard(&rx, &root.join("top.txt")), "the root is still watched");
        std::thread::sleep(Duration::from_millis(200));
        assert!(rx.try_iter().all(|p| !p.starts_with(root.join("lost"))), "the lost directory is deaf");
        a.rewatch(&root).unwrap();
        std::fs::write(lost.join("heard.txt"), "x").unwrap();
        assert!(heard(&rx, &lost.join("heard.txt")), "watched again");
        std::fs::write(root.join("top2.txt"), "x").unwrap();
        assert!(heard(&rx, &root.join("top2.txt")), "and the root still is");
        assert_eq!(read(&hub.routes).dirs.len(), 1, "one route on one root: {:?}", read(&hub.routes).dirs.keys());
    }

    /// Two projects, one inside the other, in one watcher: each hears what it watches, a
    /// directory both watch stays watched until the last lets it go, and nothing is heard
    /// once both are gone.
    #[test]
    fn routes_share_one_watcher_and_hear_only_their_own() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = std::fs::canonicalize(tmp.path()).unwrap();
        let inner = outer.join("inner");
        std::fs::create_dir_all(inner.join("src")).unwrap();
        let hub = Arc::new(Hub::default());
        let (mut a, rx_a) = route(&hub);
        let (mut b, rx_b) = route(&hub);
        a.watch(&outer, RecursiveMode::NonRecursive).unwrap();
        a.watch(&inner, RecursiveMode::NonRecursive).unwrap();
        b.watch(&inner, RecursiveMode::NonRecursive).unwrap();
        b.watch(&inner.join("src"), RecursiveMode::NonRecursive).unwrap();
        std::fs::write(outer.join("top.rs"), "x").unwrap();
        assert!(heard(&rx_a, &outer.join("top.rs")));
        std::fs::write(inner.join("src/lib.rs"), "x").unwrap();
        assert!(heard(&rx_b, &inner.join("src/lib.rs")));
        std::fs::write(inner.join("both.rs"), "x").unwrap();
        assert!(heard(&rx_a, &inner.join("both.rs")) && heard(&rx_b, &inner.join("both.rs")));
        // `a` lets `inner` go: `b` still hears it, `a` no more (what it heard before aside).
        std::thread::sleep(Duration::from_millis(200));
        let _ = rx_a.try_iter().count();
        a.unwatch(&inner).unwrap();
        std::fs::write(inner.join("again.rs"), "x").unwrap();
        assert!(heard(&rx_b, &inner.join("again.rs")));
        std::thread::sleep(Duration::from_millis(200));
        assert!(rx_a.try_iter().all(|p| !p.starts_with(&inner)), "a hears nothing of inner");
        drop(b);
        std::fs::write(inner.join("late.rs"), "x").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(rx_a.try_iter().all(|p| !p.starts_with(&inner)));
        assert!(read(&hub.routes).dirs.keys().all(|d| d == &outer), "only a's root is left");
    }
}
