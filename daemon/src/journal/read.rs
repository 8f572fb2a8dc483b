//! What the daemon reads back from the journal at start-up.

use ccmem_proto::model::session::Session;
use rusqlite::Connection;

/// A session the journal holds as live: its last state, and what happened after it.
#[derive(Debug)]
pub struct Live {
    /// The session as of its last state.
    pub session: Session,
    /// The events after that state, in order: when each happened, and its replay (as the
    /// project task wrote it, redacted).
    pub replays: Vec<(i64, serde_json::Value)>,
    /// When the newest of all that was journaled, in milliseconds since the epoch.
    pub at_ms: i64,
}

/// Every session not ended, with a state that reads back. A state that does not is left
/// for the checkpoint to stand in for (logged).
pub(super) fn live(conn: &Connection) -> rusqlite::Result<Vec<Live>> {
    let mut q = conn.prepare(
        "SELECT id, sid, state, state_ms, state_seq FROM sessions WHERE ended_ms IS NULL AND state IS NOT NULL",
    )?;
    let rows = q.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
        ))
    })?;
    let mut after = conn.prepare(
        "SELECT at_ms, replay FROM events WHERE session = ?1 AND seq > ?2 AND replay IS NOT NULL ORDER BY seq",
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (id, sid, state, state_ms, state_seq) = row?;
        let session = match serde_json::from_str::<Session>(&state) {
            Ok(session) if session.project_root.is_absolute() => session,
            Ok(_) => {
                tracing::warn!(session = %sid, "a journaled session without an absolute root is ignored");
                continue;
            }
            Err(e) => {
                tracing::warn!(session = %sid, error = %e, "a journaled session state does not read back");
                continue;
            }
        };
        let mut replays = Vec::new();
        let mut at_ms = state_ms;
        let found =
            after.query_map(rusqlite::params![id, state_seq], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for event in found {
            let (at, replay) = event?;
            match serde_json::from_str(&replay) {
                Ok(v) => {
                    // An import's events carry their own (past) times.
                    at_ms = at_ms.max(at);
                    replays.push((at, v));
                }
                Err(e) => tracing::warn!(session = %sid, error = %e, "a journaled event does not read back"),
            }
        }
        out.push(Live { session, replays, at_ms });
    }
    Ok(out)
}
