//! Giving memory back after a burst.
//!
//! A burst of file changes allocates a great deal briefly (queued notifications, the set of
//! pending paths, the batch of changes) and frees it all. glibc keeps freed memory for reuse
//! rather than returning it, so a daemon that saw one burst would stay large all day.

/// Batches larger than this are followed by a trim.
pub const LARGE_BATCH: usize = 4096;

/// Returns free heap memory to the operating system. Blocking; call it off the async workers.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Limits glibc to two malloc arenas. By default every thread that allocates may get one of
/// its own (up to eight per core), and the daemon's short-lived blocking threads would
/// scatter long-lived data across them, each keeping its own free space.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before other threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// How long without a request before the daemon lets go of what it keeps only for speed.
const QUIET_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Sets [`QUIET_AFTER`] in milliseconds (the benchmarks measure a daemon after it).
const QUIET_VAR: &str = "CCMEM_QUIET_AFTER_MS";

/// When the daemon was last asked anything; once it has been quiet for a while, the memory
/// that only makes the next request faster is let go: the compiled redaction rules and
/// their caches (several MB after a day's texts), SQLite's page caches, and the heap's free
/// space. The next request compiles the rules it needs again (a few milliseconds).
pub struct Quiet {
    start: std::time::Instant,
    /// Milliseconds from `start` to the last request.
    last: std::sync::atomic::AtomicU64,
    /// Let go since the last request: the next one wakes [`Quiet::run`].
    released: std::sync::atomic::AtomicBool,
    wake: tokio::sync::Notify,
}

impl std::fmt::Debug for Quiet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quiet").field("released", &self.released).finish()
    }
}

impl Default for Quiet {
    fn default() -> Self {
        Self {
            start: std::time::Instant::now(),
            last: Default::default(),
            released: Default::default(),
            wake: tokio::sync::Notify::new(),
        }
    }
}

impl Quiet {
    /// A request came: the quiet is over.
    pub fn heard(&self) {
        use std::sync::atomic::Ordering;
        self.last.store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
        if self.released.swap(false, Ordering::AcqRel) {
            self.wake.notify_one();
        }
    }

    /// Runs `release` (blocking; on the blocking pool) each time the daemon has been quiet
    /// for [`QUIET_AFTER`] since a request; sleeps, without waking, until the next one.
    pub async fn run(self: std::sync::Arc<Self>, release: std::sync::Arc<dyn Fn() + Send + Sync>) {
        use std::sync::atomic::Ordering;
        let after = std::env::var(QUIET_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(QUIET_AFTER, std::time::Duration::from_millis);
        loop {
            let last = std::time::Duration::from_millis(self.last.load(Ordering::Relaxed));
            let since = self.start.elapsed().saturating_sub(last);
            if since < after {
                tokio::time::sleep(after - since).await;
                continue;
            }
            // Marked first: a request while letting go wakes the wait below at once.
            self.released.store(true, Ordering::Release);
            let release = release.clone();
            let _ = tokio::task::spawn_blocking(move || release()).await;
            tracing::debug!("quiet: compiled rules and caches let go");
            self.wake.notified().await;
        }
    }
}
