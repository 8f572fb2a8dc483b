//! The journal's one writer: a thread that owns the connection and commits whatever has
//! queued since its last commit in one transaction (a burst of hooks costs one commit), then
//! tells each sender that its entries are durable.

use super::row::{Row, State};
use super::{Health, Op, Retention};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Operations taken into one transaction at most.
const BATCH: usize = 512;
/// Row ids already known, so that most appends are one insert.
#[derive(Default)]
struct Ids {
    projects: HashMap<PathBuf, i64>,
    sessions: HashMap<(i64, String), i64>,
}

/// Retention runs at least this often (and after a session ends).
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Serves `rx` until every sender is gone.
pub(super) fn run(
    mut conn: Connection,
    rx: mpsc::Receiver<Op>,
    health: Health,
    db: PathBuf,
    mut retention: Retention,
    changes: super::changes::Changes,
) {
    let mut ids = Ids::default();
    // The log's sync and its checkpoints are the syncing thread's; the writer's own
    // checkpoint is a backstop, far past the thread's.
    let _ = conn.pragma_update(None, "wal_autocheckpoint", super::syncer::WRITER_CHECKPOINT_PAGES);
    let after = After { syncer: super::syncer::Syncer::start(db, health.clone()), changes };
    prune(&mut conn, &mut ids, &retention, &health);
    let mut pruned_at = Instant::now();
    // A forget whose log could not be emptied (a reader held it): the log still holds what
    // went, and is emptied as soon as it can be, whether or not anyone forgets again.
    let mut scrub_pending = false;
    // What could not be written while another program held the database's write lock (a
    // `sqlite3` shell in a transaction): kept, and written when the lock is let go.
    let mut held = Held::default();
    loop {
        if scrub_pending {
            scrub_pending = !empty_log(&conn);
        }
        let wait = [scrub_pending.then_some(SCRUB_RETRY), (!held.is_empty()).then_some(HELD_RETRY)]
            .into_iter()
            .flatten()
            .min();
        let first = match wait {
            None => match rx.recv() {
                Ok(op) => op,
                Err(_) => break,
            },
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(op) => op,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if !held.is_empty() {
                        let batch = held.take();
                        commit(&mut conn, &mut ids, batch, true, &health, &mut held, &after);
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
        };
        if let Op::Forget { .. } = first {
            // Alone, outside any batch: it rewrites the whole file.
            scrub_pending |= forget(&mut conn, &mut ids, first);
            after.changes.tell(Vec::new);
            continue;
        }
        if let Op::Shrink = first {
            let _ = conn.execute_batch("PRAGMA shrink_memory");
            crate::heap::trim();
            continue;
        }
        if let Op::Keep { root, keep } = first {
            if set_keep(&mut retention, root, keep) {
                prune(&mut conn, &mut ids, &retention, &health);
            }
            continue;
        }
        let mut kept_less = false;
        let locked = !held.is_empty();
        let mut batch = held.take();
        batch.push(first);
        let mut forget_after = None;
        while batch.len() < BATCH {
            match rx.try_recv() {
                // Kept for after this batch: what came before it is written first.
                Ok(op @ Op::Forget { .. }) => {
                    forget_after = Some(op);
                    break;
                }
                Ok(Op::Keep { root, keep }) => kept_less |= set_keep(&mut retention, root, keep),
                // Not quiet after all.
                Ok(Op::Shrink) => {}
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let ended = batch.iter().any(|op| matches!(op, Op::Ended { .. }));
        commit(&mut conn, &mut ids, batch, locked, &health, &mut held, &after);
        if held.is_empty() && (ended || kept_less || pruned_at.elapsed() >= PRUNE_EVERY) {
            prune(&mut conn, &mut ids, &retention, &health);
            pruned_at = Instant::now();
        }
        if let Some(op) = forget_after {
            scrub_pending |= forget(&mut conn, &mut ids, op);
            after.changes.tell(Vec::new);
        }
    }
    if !held.is_empty() {
        // The last chance: the lock may have gone since the last try.
        let batch = held.take();
        commit(&mut conn, &mut ids, batch, false, &health, &mut held, &after);
        if !held.is_empty() {
            tracing::error!(
                operations = held.ops.len(),
                "the journal was still locked by another program at shutdown: the events held for it are lost (the checkpoints keep the sessions)"
            );
        }
    }
    after.syncer.stop();
    // Folded into the database: a clean stop leaves no log to replay.
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
}

/// How long a write waits for another program's write lock before it is held for later.
const LOCK_WAIT: Duration = Duration::from_millis(250);

/// How often writing what is held is tried again.
const HELD_RETRY: Duration = Duration::from_secs(1);

/// Operations held at most while the database is locked; the oldest go past it (counted as
/// dropped), which bounds the daemon's memory under a lock held for days.
const HELD_MAX: usize = 20_000;

/// What waits for another program to let go of the database's write lock.
#[derive(Default)]
struct Held {
    ops: Vec<Op>,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn take(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.ops)
    }

    /// Keeps `batch` (already answered) for the next try. Only the newest state of each
    /// session is kept: the older ones would be overwritten by it, and a session's state
    /// can be large.
    fn hold(&mut self, batch: Vec<Op>, health: &Health) {
        self.ops = batch.into_iter().filter(|op| matches!(op, Op::Append { .. } | Op::Ended { .. })).collect();
        let mut seen = std::collections::HashSet::new();
        for op in self.ops.iter_mut().rev() {
            if let Op::Append { state, .. } = op {
                let newer = state.as_ref().is_some_and(|s| !seen.insert((s.root.clone(), s.sid.clone())));
                if newer {
                    *state = None;
                }
            }
        }
        if self.ops.len() > HELD_MAX {
            let over = self.ops.len() - HELD_MAX;
            self.ops.drain(..over);
            health.lock().dropped += over as u64;
        }
        health.held(self.ops.len());
    }
}

/// Writes `batch`'s events in one transaction and answers it, then its states (`locked`:
/// the last try found the database locked). While another program holds the write lock
/// the batch is held for the next try (its callers answered at once: the agent is not kept
/// waiting for the lock); any other failure loses it, and is said.
fn commit(
    conn: &mut Connection,
    ids: &mut Ids,
    mut batch: Vec<Op>,
    locked: bool,
    health: &Health,
    held: &mut Held,
    after: &After,
) {
    // Known to be locked: tried without waiting, so that what queues meanwhile is not held
    // up. Else a short wait: a brief lock (a `sqlite3` shell's single statement) is waited
    // out, a long one is not waited on by the hooks' answers.
    let _ = conn.busy_timeout(if locked { Duration::ZERO } else { LOCK_WAIT });
    let acks: Vec<_> = batch.iter_mut().filter_map(Op::take_ack).collect();
    let started = Instant::now();
    health.writing(true);
    let written = write_events(conn, ids, &batch);
    health.writing(false);
    let events_us = started.elapsed().as_micros() as u64;
    // Answered once the events are committed (or cannot be): not after the states.
    for ack in acks {
        let _ = ack.send(());
    }
    let failed = match written {
        Ok(states) => {
            health.wrote();
            after.syncer.committed();
            if !states.is_empty() {
                if let Err(e) = write_states(conn, states) {
                    // The events are in: a restart applies them to the state before.
                    tracing::warn!(error = %e, "cannot write the sessions' states to the journal");
                }
            }
            after.changes.tell(|| batch.iter().flat_map(Op::roots).collect());
            None
        }
        Err(e) => Some(e),
    };
    // What else the writer does (a forget's emptying of the log, retention) waits as before.
    let _ = conn.busy_timeout(super::open::BUSY_WAIT);
    tracing::debug!(
        ops = batch.len(),
        events_us,
        us = started.elapsed().as_micros() as u64,
        "journal: batch committed"
    );
    if let Some(e) = failed {
        // The rows of a transaction that failed were never there.
        *ids = Ids::default();
        if is_locked(&e) {
            held.hold(batch, health);
        } else if super::open::is_damaged(&e) {
            health.failed(format!(
                "cannot write to the journal: it is damaged ({e}); it is moved aside and a new one \
                 started when ccmemd starts again (`ccmemctl shutdown`; the next hook starts it)"
            ));
        } else {
            health.failed(format!("cannot write to the journal: {e}"));
        }
    }
}

/// Who is told of a commit: the thread that syncs the log, and the view's subscribers.
struct After {
    syncer: super::syncer::Syncer,
    changes: super::changes::Changes,
}

/// Whether `e` says another program holds a lock (for longer than the busy timeout): the
/// write lock, or a lock on the shared-memory file's bytes (SQLite's "locking protocol").
fn is_locked(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::*;
    matches!(e.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked | FileLockingProtocolFailed))
}

/// Drops what `retention` no longer keeps; the row ids known before may be gone after it.
fn prune(conn: &mut Connection, ids: &mut Ids, retention: &Retention, health: &Health) {
    match super::retention::run(conn, retention, chrono::Utc::now().timestamp_millis()) {
        Ok(d) => {
            if d.old + d.for_size > 0 {
                tracing::info!(old = d.old, for_size = d.for_size, "ended sessions dropped from the journal");
                *ids = Ids::default();
            }
            health.pruned(d.for_size);
        }
        Err(e) => health.failed(format!("cannot apply the journal's retention: {e}")),
    }
}

/// Records a project's own keep; whether it keeps less than before (a prune is due).
fn set_keep(retention: &mut Retention, root: PathBuf, keep: Option<std::time::Duration>) -> bool {
    let before = retention.keep_for(&root);
    match keep {
        Some(k) => retention.projects.insert(root.clone(), k),
        None => retention.projects.remove(&root),
    };
    match (before, retention.keep_for(&root)) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(b), Some(a)) => a < b,
    }
}

/// Runs a forget and answers it; the row ids known before may be gone after it. Whether
/// the log is left to empty (a reader kept it from being emptied).
fn forget(conn: &mut Connection, ids: &mut Ids, op: Op) -> bool {
    let Op::Forget { what, apply, reply } = op else { return false };
    let result = super::forget::run(conn, &what, apply);
    let pending =
        apply && matches!(&result, Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy));
    let _ = reply.send(result.map_err(|e| e.to_string()));
    *ids = Ids::default();
    pending
}

/// How often a log a forget could not empty is tried again.
const SCRUB_RETRY: Duration = Duration::from_secs(2);

/// Empties the log into the database (what a forget removed then goes from the `-wal`
/// file too); whether it could be (no reader holds it).
fn empty_log(conn: &Connection) -> bool {
    let busy = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0));
    let done = busy.is_ok_and(|b| b == 0);
    if done {
        tracing::info!("the journal's log, which an earlier forget could not empty, is emptied now");
    }
    done
}

/// The states a batch carries, written after its events: the newest of each session (row
/// id), with when and the last event it includes.
type States<'b> = HashMap<i64, (&'b State, i64, i64)>;

/// Commits the batch's events (and the sessions it ends, with their last states) in one
/// transaction; returns the sessions' states, for [`write_states`].
fn write_events<'b>(conn: &mut Connection, ids: &mut Ids, batch: &'b [Op]) -> rusqlite::Result<States<'b>> {
    let tx = conn.transaction()?;
    let mut states: States<'b> = HashMap::new();
    // Each session's last event so far.
    let mut last: HashMap<i64, i64> = HashMap::new();
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO events (seq, session, at_ms, source, kind, agent, conversation, path, text, data, replay)
             VALUES (?11, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        // An event's number is never given again, even after the newest events were
        // forgotten or pruned (SQLite would give the next row the number after the largest
        // left): `show 4812` names one event for good.
        let mut next = super::schema::next_seq(&tx)?;
        let mut grams_insert = tx.prepare_cached("INSERT INTO events_cjk(rowid, grams) VALUES (?1, ?2)")?;
        let mut words_insert = tx.prepare_cached("INSERT INTO events_fts(rowid, text, tags) VALUES (?1, ?2, ?3)")?;
        let mut newest = tx.prepare_cached("SELECT coalesce(max(seq), 0) FROM events WHERE session = ?1")?;
        let mut last_of = |session: i64, last: &mut HashMap<i64, i64>| -> rusqlite::Result<i64> {
            match last.get(&session) {
                Some(seq) => Ok(*seq),
                None => newest.query_row([session], |r| r.get(0)),
            }
        };
        for op in batch {
            match op {
                Op::Append { rows, state, at_ms, .. } => {
                    for r in rows {
                        let session = session_id(&tx, ids, &r.e.root, &r.e.root_name, &r.e.session, r.e.at_ms)?;
                        let seq = next;
                        insert_event(&mut insert, seq, session, r)?;
                        next += 1;
                        let project = ids.projects.get(&r.e.root).copied().unwrap_or(0);
                        let tags = super::schema::tags(project, r.e.kind, r.e.agent.as_deref());
                        words_insert.execute(params![seq, r.e.text, tags])?;
                        if let Some(grams) = &r.grams {
                            grams_insert.execute(params![seq, grams])?;
                        }
                        last.insert(session, seq);
                    }
                    if let Some(state) = state {
                        let session = session_id(&tx, ids, &state.root, &state.name, &state.sid, *at_ms)?;
                        let seq = last_of(session, &mut last)?;
                        states.insert(session, (state, *at_ms, seq));
                    }
                }
                Op::Ended { state, at_ms, reason, .. } => {
                    // Its archive: written with the events, never left for later.
                    let session = session_id(&tx, ids, &state.root, &state.name, &state.sid, *at_ms)?;
                    let seq = last_of(session, &mut last)?;
                    states.remove(&session);
                    set_state(&tx, session, state, *at_ms, seq)?;
                    tx.execute(
                        "UPDATE sessions SET ended_ms = ?2, end_reason = ?3 WHERE id = ?1",
                        params![session, at_ms, reason],
                    )?;
                }
                Op::Flush(_) | Op::Forget { .. } | Op::Keep { .. } | Op::Shrink => {}
            }
        }
        super::schema::keep_seq(&tx, next)?;
    }
    tx.commit()?;
    Ok(states)
}

/// Writes the sessions' states in one transaction. Apart from the events, after their
/// answers: a state is a shortcut for a restart (the last state plus the events after it),
/// never the only copy of an event, and a session's state is often a hundred times its
/// event; the answers do not wait for it.
fn write_states(conn: &mut Connection, states: States<'_>) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for (session, (s, at_ms, seq)) in states {
        set_state(&tx, session, s, at_ms, seq)?;
    }
    tx.commit()
}

fn set_state(tx: &rusqlite::Transaction<'_>, session: i64, s: &State, at_ms: i64, seq: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE sessions SET state = ?2, state_ms = ?3, state_seq = ?4 WHERE id = ?1")?
        .execute(params![session, s.json, at_ms, seq])?;
    Ok(())
}

fn insert_event(insert: &mut rusqlite::CachedStatement<'_>, seq: i64, session: i64, r: &Row) -> rusqlite::Result<()> {
    let e = &r.e;
    insert.execute(params![
        session,
        e.at_ms,
        e.source,
        e.kind,
        e.agent,
        e.conversation,
        e.path,
        e.text,
        r.data,
        r.replay,
        seq
    ])?;
    Ok(())
}

/// The row of `sid` in the project at `root`, made when missing.
fn session_id(
    tx: &rusqlite::Transaction<'_>,
    ids: &mut Ids,
    root: &std::path::Path,
    name: &str,
    sid: &str,
    at_ms: i64,
) -> rusqlite::Result<i64> {
    let project = match ids.projects.get(root) {
        Some(id) => *id,
        None => {
            let text = root.to_string_lossy();
            let id: i64 = tx.query_row(
                "INSERT INTO projects (root, name) VALUES (?1, ?2)
                 ON CONFLICT (root) DO UPDATE SET name = CASE WHEN excluded.name = '' THEN name ELSE excluded.name END
                 RETURNING id",
                params![text, name],
                |r| r.get(0),
            )?;
            ids.projects.insert(root.to_path_buf(), id);
            id
        }
    };
    let key = (project, sid.to_string());
    if let Some(id) = ids.sessions.get(&key) {
        return Ok(*id);
    }
    let found: Option<i64> = tx
        .query_row("SELECT id FROM sessions WHERE project = ?1 AND sid = ?2", params![project, sid], |r| r.get(0))
        .optional()?;
    let id = match found {
        Some(id) => id,
        None => tx.query_row(
            "INSERT INTO sessions (project, sid, started_ms) VALUES (?1, ?2, ?3) RETURNING id",
            params![project, sid, at_ms],
            |r| r.get(0),
        )?,
    };
    ids.sessions.insert(key, id);
    Ok(id)
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    /// #40: a lock held on the shared-memory file's bytes fails a write with "locking
    /// protocol"; that write was lost, when a busy database's was held and written later.
    #[test]
    fn every_lock_another_program_holds_is_waited_out_not_lost() {
        for code in [ffi::SQLITE_BUSY, ffi::SQLITE_LOCKED, ffi::SQLITE_PROTOCOL] {
            let e = rusqlite::Error::SqliteFailure(ffi::Error::new(code), None);
            assert!(super::is_locked(&e), "{e}");
        }
        let full = rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_FULL), None);
        assert!(!super::is_locked(&full));
    }
}
