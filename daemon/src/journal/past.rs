//! A project's past as the journal holds it: its ended sessions (each with its last state:
//! its archive) and the newest session id it has used. Read on a connection of its own,
//! beside the writer (the log lets readers and the writer work at once).

use ccmem_proto::model::session::{ArchivedSession, EndReason, Session};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::Path;

/// A read-only connection to the journal at `path` (made by the writer already).
pub(super) fn reader(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    // A reader's cache: small, the file is read in order and rarely.
    conn.pragma_update(None, "cache_size", -512)?;
    Ok(conn)
}

/// The ended sessions of the project at `root`, newest first, `limit` at most. One whose
/// state does not read back is skipped (logged).
pub(super) fn history(conn: &Connection, root: &Path, limit: usize) -> rusqlite::Result<Vec<ArchivedSession>> {
    let mut q = conn.prepare_cached(
        "SELECT s.sid, s.ended_ms, s.end_reason, s.state FROM sessions s JOIN projects p ON p.id = s.project
         WHERE p.root = ?1 AND s.ended_ms IS NOT NULL AND s.state IS NOT NULL
         ORDER BY s.sid DESC LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = q.query_map(params![root.to_string_lossy(), limit], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, String>(3)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (sid, ended_ms, reason, state) = row?;
        match serde_json::from_str::<Session>(&state) {
            Ok(session) => out.push(ArchivedSession {
                ended: reason.as_deref().map(end_reason).unwrap_or(EndReason::Expired),
                ended_at: chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ended_ms)
                    .map(crate::clock::iso)
                    .unwrap_or_default(),
                session,
            }),
            Err(e) => tracing::warn!(session = %sid, error = %e, "an ended session's state does not read back"),
        }
    }
    Ok(out)
}

/// The newest session id the project at `root` has used, live or ended.
pub(super) fn last_session_id(conn: &Connection, root: &Path) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT max(s.sid) FROM sessions s JOIN projects p ON p.id = s.project WHERE p.root = ?1",
        [root.to_string_lossy()],
        |r| r.get(0),
    )
    .optional()
    .map(Option::flatten)
}

/// Whether the journal holds events of the agent's conversation `id`.
pub(super) fn conversation_known(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM events WHERE conversation = ?1)", [id], |r| r.get(0))
}

/// Which of `ids` the journal holds events of.
pub(super) fn known_conversations(conn: &Connection, ids: &[String]) -> rusqlite::Result<Vec<String>> {
    let mut q = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM events WHERE conversation = ?1)")?;
    let mut out = Vec::new();
    for id in ids {
        if q.query_row([id], |r| r.get::<_, bool>(0))? {
            out.push(id.clone());
        }
    }
    Ok(out)
}

/// When the project at `root` was last active, as its journaled sessions tell
/// (milliseconds; None: it has none).
pub(super) fn last_active_ms(conn: &Connection, root: &Path) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT max(coalesce(s.ended_ms, s.state_ms, s.started_ms)) FROM sessions s
         JOIN projects p ON p.id = s.project WHERE p.root = ?1",
    )?
    .query_row([root.to_string_lossy()], |r| r.get(0))
}

/// The session ids the project at `root` has used.
pub(super) fn session_ids(conn: &Connection, root: &Path) -> rusqlite::Result<Vec<String>> {
    let mut q =
        conn.prepare_cached("SELECT s.sid FROM sessions s JOIN projects p ON p.id = s.project WHERE p.root = ?1")?;
    let rows = q.query_map([root.to_string_lossy()], |r| r.get(0))?;
    rows.collect()
}

/// An end reason as [`crate::store::end_reason_text`] wrote it.
pub(super) fn end_reason(text: &str) -> EndReason {
    [
        EndReason::Expired,
        EndReason::Reset,
        EndReason::Unwatched,
        EndReason::Restored,
        EndReason::Vanished,
        EndReason::Imported,
    ]
    .into_iter()
    .find(|r| crate::store::end_reason_text(*r) == text)
    .unwrap_or(EndReason::Expired)
}
