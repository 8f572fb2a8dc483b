//! What the daemon reads back from the journal at start-up.

use ccmem_proto::model::session::Session;
use rusqlite::Connection;

/// A session the journal holds as live, with its latest state.
#[derive(Debug)]
pub struct Live {
    /// The session as of `at_ms`.
    pub session: Session,
    /// When that state was taken, in milliseconds since the epoch.
    pub at_ms: i64,
}

/// Every session not ended, with a state that reads back. A state that does not is left
/// for the checkpoint to stand in for (logged).
pub(super) fn live(conn: &Connection) -> rusqlite::Result<Vec<Live>> {
    let mut q =
        conn.prepare("SELECT sid, state, state_ms FROM sessions WHERE ended_ms IS NULL AND state IS NOT NULL")?;
    let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (sid, state, at_ms) = row?;
        match serde_json::from_str::<Session>(&state) {
            Ok(session) if session.project_root.is_absolute() => out.push(Live { session, at_ms }),
            Ok(_) => tracing::warn!(session = %sid, "a journaled session without an absolute root is ignored"),
            Err(e) => tracing::warn!(session = %sid, error = %e, "a journaled session state does not read back"),
        }
    }
    Ok(out)
}
