//! The connection that reads the past, on a thread of its own. SQLite waits for a read
//! lock on the log up to ten seconds whatever the busy timeout, when another program holds
//! the shared-memory file's lock bytes; a caller (a new session, `history`, the context
//! of a project with no live session) waits [`READ_WAIT`] at most and goes on without the
//! journal (the checkpoints answer instead), while the read finishes on its own thread.

use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a caller waits for a read (one takes milliseconds).
const READ_WAIT: Duration = Duration::from_millis(500);

/// Reads queued at most; past them a caller does without (reads that wait already stand
/// behind one that is held up).
const QUEUE: usize = 8;

/// A read, given the connection (opened when missing; closed again after an error).
type Job = Box<dyn FnOnce(&mut Option<Connection>) + Send>;

/// The reading connection's thread, started on first use.
pub(super) struct Reader {
    path: PathBuf,
    /// How long a caller waits for a read.
    wait: Duration,
    jobs: Mutex<Option<SyncSender<Job>>>,
    /// A read did not answer in time: while reads are still queued or running, later
    /// callers do without at once (a new session reads twice, and a hook has two seconds
    /// in all).
    timed_out: AtomicBool,
    /// Reads queued or running.
    pending: Arc<AtomicUsize>,
}

impl Reader {
    pub(super) fn new(path: PathBuf) -> Self {
        Self::waiting(path, READ_WAIT)
    }

    /// A reader whose callers wait `wait` for each read.
    pub(super) fn waiting(path: PathBuf, wait: Duration) -> Self {
        Self { path, wait, jobs: Mutex::new(None), timed_out: AtomicBool::new(false), pending: Arc::default() }
    }

    /// `f` run on the reading connection: None when the journal cannot be read, or does
    /// not answer in time.
    pub(super) fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Option<T> {
        self.ask(f).ok()
    }

    /// `f` run on the reading connection, or why it could not be.
    pub(super) fn ask<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        if self.timed_out.load(Ordering::Relaxed) {
            if self.pending.load(Ordering::Relaxed) > 0 {
                return Err("the journal is busy with a read that has not answered yet".into());
            }
            self.timed_out.store(false, Ordering::Relaxed);
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let path = self.path.clone();
        self.pending.fetch_add(1, Ordering::Relaxed);
        let done = Done(self.pending.clone());
        let job: Job = Box::new(move |conn| {
            let _done = done;
            if conn.is_none() {
                match super::past::reader(&path) {
                    Ok(c) => *conn = Some(c),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read the journal");
                        let _ = tx.send(Err(format!("cannot read the journal: {e}")));
                        return;
                    }
                }
            }
            let Some(c) = conn.as_ref() else { return };
            match f(c) {
                Ok(v) => {
                    let _ = tx.send(Ok(v));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the journal");
                    let _ = tx.send(Err(format!("cannot read the journal: {e}")));
                    *conn = None;
                }
            }
        });
        self.send(job).ok_or("the journal's reader is busy or could not start")?;
        match rx.recv_timeout(self.wait) {
            Ok(v) => v,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.timed_out.store(true, Ordering::Relaxed);
                tracing::warn!("the journal did not answer a read in time (another program holds a lock on it?)");
                Err("the journal did not answer in time (another program holds a lock on it?)".into())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the journal's reader stopped".into()),
        }
    }

    /// Closes the connection (its page cache goes with it); opened again when next needed.
    pub(super) fn let_go(&self) {
        let _ = self.send(Box::new(|conn| *conn = None));
    }

    /// Queues `job` for the reading thread, started if need be.
    fn send(&self, job: Job) -> Option<()> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        if jobs.is_none() {
            let (tx, rx) = mpsc::sync_channel::<Job>(QUEUE);
            let spawned = std::thread::Builder::new().name("ccmem-journal-read".into()).spawn(move || {
                let mut conn = None;
                for job in rx {
                    job(&mut conn);
                }
            });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "cannot start the journal's reader");
                return None;
            }
            *jobs = Some(tx);
        }
        jobs.as_ref()?.try_send(job).ok()
    }
}

/// Counts a read done when it ends, however it ends (run, or dropped unrun).
struct Done(Arc<AtomicUsize>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
