//! The log's trip to disk, on a thread of its own. SQLite (`synchronous=NORMAL`) syncs
//! the log only at its checkpoints; this thread syncs it within [`SYNC_WITHIN`] of any
//! commit (what a power cut can lose), and folds it into the database (a checkpoint) as it
//! grows. Both took the writer's thread milliseconds at a time, every session's appends
//! waiting behind them.

use super::Health;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a commit may wait for its sync to disk: what a power cut can lose.
const SYNC_WITHIN: Duration = Duration::from_secs(1);

/// How long the thread lets commits gather before one sync covers them all: well within
/// [`SYNC_WITHIN`], with the sync's own time.
const GATHER: Duration = Duration::from_millis(200);
const _: () = assert!(GATHER.as_millis() * 2 < SYNC_WITHIN.as_millis());

/// The log is folded into the database once it is this large (SQLite's own default:
/// 1,000 pages); the writer's own checkpoint, at ten times that, is a backstop.
const CHECKPOINT_BYTES: u64 = 1000 * 4096;

/// Pages of log past which the writer folds it in itself (the thread failing to).
pub(super) const WRITER_CHECKPOINT_PAGES: i64 = 10_000;

/// The syncing thread: told of each commit.
pub(super) struct Syncer {
    tx: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts the thread for the journal at `db`.
    pub(super) fn start(db: PathBuf, health: Health) -> Syncer {
        let wal = ccmem_proto::files::atomic::with_suffix(&db, "-wal");
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new().name("ccmem-journal-sync".into()).spawn(move || {
            let mut conn: Option<Connection> = None;
            while rx.recv().is_ok() {
                std::thread::sleep(GATHER);
                while rx.try_recv().is_ok() {}
                sync(&wal, &health);
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() >= CHECKPOINT_BYTES) {
                    checkpoint(&db, &mut conn);
                }
            }
            sync(&wal, &health);
        });
        match thread {
            Ok(t) => Syncer { tx: Some(tx), thread: Some(t) },
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the journal's syncing thread: the log is synced at SQLite's checkpoints only");
                Syncer { tx: None, thread: None }
            }
        }
    }

    /// A commit was made: on disk within [`SYNC_WITHIN`].
    pub(super) fn committed(&self) {
        if let Some(tx) = &self.tx {
            let _ = tx.try_send(());
        }
    }

    /// Syncs what is left and stops the thread, waiting for it.
    pub(super) fn stop(mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Folds the log into the database without holding up the writer (`PASSIVE`), on a
/// connection of the thread's own (opened when first needed).
fn checkpoint(db: &Path, conn: &mut Option<Connection>) {
    if conn.is_none() {
        let flags =
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        match Connection::open_with_flags(db, flags) {
            Ok(c) => {
                let _ = c.pragma_update(None, "cache_size", -256);
                *conn = Some(c);
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot open the journal to fold its log in");
                return;
            }
        }
    }
    if let Some(c) = conn {
        if let Err(e) = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::debug!(error = %e, "the journal's log could not be folded in now");
            *conn = None;
        }
    }
}

/// Puts the log's committed pages on disk.
fn sync(wal: &Path, health: &Health) {
    // Any descriptor of the file flushes its pages (Windows wants one that may write);
    // opened without following a link.
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    match o.open(wal).and_then(|f| f.sync_data()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => health.failed(format!("cannot sync the journal's log to disk: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Entry, Journal, Retention};
    use std::time::{Duration, Instant};

    /// The writer no longer folds the log in at SQLite's 1,000 pages (it held every append
    /// up for as long): the syncing thread does, soon after the log grows past that, and
    /// the database holds the pages while the daemon runs on.
    #[test]
    fn the_log_is_folded_in_by_the_syncing_thread_as_it_grows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = Journal::open(dir.path(), Retention::default());
        let db = dir.path().join(super::super::FILE);
        let before = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
        let text: String = (0..16_000).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        for i in 0..400 {
            let e = Entry {
                root: dir.path().join("proj"),
                root_name: "proj".into(),
                session: "session_1".into(),
                at_ms: i,
                source: "hook",
                kind: "prompt",
                text: format!("{i} {text}"),
                ..Entry::default()
            };
            if let Some(ack) = journal.append(vec![e], None) {
                let _ = ack.blocking_recv();
            }
        }
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let now = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
            if now >= before + 4 * 1024 * 1024 {
                break;
            }
            assert!(Instant::now() < end, "the database still holds {now} bytes: the log was not folded in");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(journal.health().problems().is_empty(), "{:?}", journal.health().problems());
    }
}
