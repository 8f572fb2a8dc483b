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
