//! State shared by the server's tasks: configuration, counters and the shutdown signal.
//! Session state is not here: each project's session has a task of its own (`projects`).

use crate::project::registry::Projects;
use crate::project::task::Services;
use ccmem_proto::wire::api::ConnectionStats;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Limits applied to every connection.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// A connection that sends no complete frame for this long is closed.
    pub idle_timeout: Duration,
    /// A reply the peer does not read within this long closes the connection.
    pub write_timeout: Duration,
    /// Largest frame accepted.
    pub max_frame: usize,
    /// How long shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
}

/// Everything the connection tasks share. Cheap to reach through an `Arc`.
#[derive(Debug)]
pub struct Shared {
    /// The socket we listen on.
    pub socket: PathBuf,
    /// Wall-clock start, for status.
    pub started_at: chrono::DateTime<chrono::Local>,
    /// Monotonic start, for uptime.
    pub started: Instant,
    /// Process start to accepting connections, set once ready.
    pub ready_ms: OnceLock<f64>,
    /// Connection limits.
    pub limits: Limits,
    /// One permit per open connection.
    pub permits: Arc<Semaphore>,
    /// Cancelled when the daemon is to stop.
    pub shutdown: CancellationToken,
    /// Counters.
    pub stats: Stats,
    /// Live project sessions.
    pub projects: Arc<Projects>,
    /// Connections waiting for their next request, oldest first: at the cap, the oldest
    /// makes room for a new client, so idle connections cannot lock the hooks out.
    pub idle: Idle,
    /// When the daemon was last asked anything (it lets go of caches once quiet).
    pub quiet: Arc<crate::heap::Quiet>,
}

/// Connections between requests, in the order of their last request: the one that has waited
/// longest since it was last heard from goes first.
#[derive(Debug, Default)]
pub struct Idle {
    next: AtomicU64,
    waiting: std::sync::Mutex<std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>>,
}

impl Idle {
    /// A place in line for a connection heard from now (accepted, or a request read). Taken
    /// when the request arrives rather than when its reply is sent, so that the order is the
    /// clients' and not the scheduler's: a reply's task that is slow to get back to waiting
    /// does not make its connection look fresher than one that came after it.
    pub fn ticket(&self) -> u64 {
        self.next.fetch_add(1, Relaxed)
    }

    /// A connection starts waiting at its place (a [`ticket`](Self::ticket)), and gets what
    /// tells it to make room.
    pub fn enter(&self, place: u64) -> tokio::sync::oneshot::Receiver<()> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.lock().insert(place, tx);
        rx
    }

    /// The connection got a request (or left).
    pub fn leave(&self, place: u64) {
        self.lock().remove(&place);
    }

    /// Tells the connection idle the longest to close; false when none is idle.
    pub fn evict_oldest(&self) -> bool {
        let oldest = self.lock().pop_first();
        oldest.is_some_and(|(_, tx)| tx.send(()).is_ok())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>> {
        // The map holds no invariant a panicking holder could break.
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Shared {
    /// New shared state; `started` is when the process began.
    pub fn new(socket: PathBuf, started: Instant, limits: Limits, projects: Services) -> Self {
        Self {
            socket,
            started_at: chrono::Local::now(),
            started,
            ready_ms: OnceLock::new(),
            limits,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            shutdown: CancellationToken::new(),
            stats: Stats::default(),
            projects: Projects::new(projects),
            idle: Idle::default(),
            quiet: Default::default(),
        }
    }

    /// A snapshot of the connection counters.
    pub fn connection_stats(&self) -> ConnectionStats {
        let max = self.limits.max_connections;
        ConnectionStats {
            active: (max - self.permits.available_permits()) as u64,
            max: max as u64,
            accepted: self.stats.accepted.load(Relaxed),
            refused_peer: self.stats.refused_peer.load(Relaxed),
            refused_busy: self.stats.refused_busy.load(Relaxed),
            requests: self.stats.requests.load(Relaxed),
        }
    }
}

/// Monotonic counters since start.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub accepted: AtomicU64,
    /// Connections refused for their peer's uid.
    pub refused_peer: AtomicU64,
    /// Connections refused at the cap.
    pub refused_busy: AtomicU64,
    /// Messages handled.
    pub requests: AtomicU64,
}

impl Stats {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }
}

/// Raises the soft open-files limit to the hard one and returns how many connections fit in
/// it, keeping room for watches, files and the runtime's own descriptors.
#[cfg(unix)]
pub fn fd_budget() -> usize {
    const RESERVED: u64 = 256;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid rlimit for getrlimit/setrlimit to read and write.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return usize::MAX;
        }
        let want = lim.rlim_max.min(1 << 20);
        if lim.rlim_cur < want {
            let raised = libc::rlimit { rlim_cur: want, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = want;
            }
        }
    }
    // rlim_t is not u64 on every platform.
    #[allow(clippy::useless_conversion)]
    let cur = u64::from(lim.rlim_cur);
    usize::try_from(cur.saturating_sub(RESERVED).max(16)).unwrap_or(usize::MAX)
}

#[cfg(not(unix))]
pub fn fd_budget() -> usize {
    usize::MAX
}
