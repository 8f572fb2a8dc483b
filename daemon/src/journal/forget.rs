//! Forgetting for good: rows deleted (their pages overwritten: `secure_delete`), the
//! full-text index merged so that no segment keeps a deleted word, the file rebuilt
//! (`VACUUM`) and its log emptied, so that no byte of what went is left in any of the
//! journal's files.

use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::PathBuf;

/// What to forget.
#[derive(Debug, Clone)]
pub enum Forget {
    /// Every event and state that holds the text, within a project (None: every project).
    Text { text: String, project: Option<PathBuf> },
    /// One conversation's events, and its record in every state.
    Conversation { id: String, project: Option<PathBuf> },
    /// One session, whole.
    Session { sid: String, project: Option<PathBuf> },
    /// A project's whole past.
    Project(PathBuf),
}

/// What went (or would go).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Forgotten {
    /// Events.
    pub events: u64,
    /// Sessions, whole.
    pub sessions: u64,
    /// Session states rewritten without it.
    pub rewritten: u64,
    /// Projects, whole.
    pub projects: u64,
    /// The projects it concerned (their roots).
    pub roots: Vec<PathBuf>,
}

/// Counts what `what` concerns and, when `apply`, removes it.
pub(super) fn run(conn: &mut Connection, what: &Forget, apply: bool) -> rusqlite::Result<Forgotten> {
    let mut out = Forgotten::default();
    // `holds(hay, needle)`: a text is forgotten in any case it was written in (SQLite's own
    // `lower` knows ASCII only).
    conn.create_scalar_function("holds", 2, FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        let hay = ctx.get::<Option<String>>(0)?.unwrap_or_default();
        let needle = ctx.get::<String>(1)?;
        Ok(crate::text::holds_any_case(&hay, &needle))
    })?;
    if apply {
        conn.pragma_update(None, "secure_delete", true)?;
    }
    let result = forget(conn, what, apply, &mut out);
    if apply {
        let _ = conn.pragma_update(None, "secure_delete", false);
    }
    result.map(|()| out)
}

fn forget(conn: &mut Connection, what: &Forget, apply: bool, out: &mut Forgotten) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let project = match what {
        Forget::Text { project, .. } | Forget::Conversation { project, .. } | Forget::Session { project, .. } => {
            project.clone()
        }
        Forget::Project(root) => Some(root.clone()),
    };
    let pid: Option<i64> = match &project {
        None => None,
        Some(root) => {
            match tx
                .query_row("SELECT id FROM projects WHERE root = ?1", [root.to_string_lossy()], |r| r.get(0))
                .optional()?
            {
                Some(id) => Some(id),
                // A project the journal never saw: nothing of it here.
                None => return Ok(()),
            }
        }
    };
    // The sessions in scope: `(?1 IS NULL OR project = ?1)`.
    const SCOPE: &str = "session IN (SELECT id FROM sessions WHERE ?1 IS NULL OR project = ?1)";
    match what {
        Forget::Project(_) => {
            out.projects = 1;
            out.sessions = count(&tx, "SELECT count(*) FROM sessions WHERE project = ?1", [pid])?;
            out.events = count(&tx, &format!("SELECT count(*) FROM events WHERE {SCOPE}"), [pid])?;
            if apply {
                tx.execute("DELETE FROM projects WHERE id = ?1", [pid])?;
            }
        }
        Forget::Session { sid, .. } => {
            let ids = ids(&tx, "SELECT id FROM sessions WHERE sid = ?2 AND (?1 IS NULL OR project = ?1)", pid, sid)?;
            out.sessions = ids.len() as u64;
            for id in &ids {
                out.events += count(&tx, "SELECT count(*) FROM events WHERE session = ?1", [id])?;
                if apply {
                    tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
                }
            }
        }
        Forget::Conversation { id, .. } => {
            let cond = format!("{SCOPE} AND conversation = ?2");
            out.events = count(&tx, &format!("SELECT count(*) FROM events WHERE {cond}"), params![pid, id])?;
            if apply {
                tx.execute(&format!("DELETE FROM events WHERE {cond}"), params![pid, id])?;
            }
            out.rewritten = rewrite_states(&tx, pid, id, apply, |v| crate::text::drop_conversation(v, id))?;
        }
        Forget::Text { text, .. } => {
            let cond = format!(
                "{SCOPE} AND (holds(text, ?2) OR holds(data, ?2) OR holds(path, ?2)
                 OR holds(conversation, ?2) OR holds(replay, ?2))"
            );
            let escaped = crate::text::json_escaped(text);
            // The text as it is, and as JSON writes it in `data` (escaped).
            let cond = format!("{cond} OR ({SCOPE} AND (holds(data, ?3) OR holds(replay, ?3)))");
            out.events = count(&tx, &format!("SELECT count(*) FROM events WHERE {cond}"), params![pid, text, escaped])?;
            if apply {
                tx.execute(&format!("DELETE FROM events WHERE {cond}"), params![pid, text, escaped])?;
            }
            out.rewritten = rewrite_states(&tx, pid, &escaped, apply, |v| crate::text::scrub_json(v, text) > 0)?;
        }
    }
    out.roots = roots(&tx, pid)?;
    tx.commit()?;
    if apply {
        // Deleted words stay in older index segments until they are merged away.
        conn.execute("INSERT INTO events_fts(events_fts) VALUES ('optimize')", [])?;
        conn.execute("INSERT INTO events_cjk(events_cjk) VALUES ('optimize')", [])?;
        conn.execute_batch("VACUUM")?;
        let (busy, _, _): (i64, i64, i64) =
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        if busy != 0 {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some("the journal's log could not be emptied: another program (sqlite3?) is reading the journal; it is emptied as soon as that program lets go".into()),
            ));
        }
    }
    Ok(())
}

/// The count `sql` selects.
fn count(tx: &rusqlite::Transaction<'_>, sql: &str, p: impl rusqlite::Params) -> rusqlite::Result<u64> {
    tx.query_row(sql, p, |r| r.get::<_, i64>(0)).map(|n| u64::try_from(n).unwrap_or(0))
}

/// Session row ids that `sql` (over `?1` the project, `?2` a value) selects.
fn ids(tx: &rusqlite::Transaction<'_>, sql: &str, pid: Option<i64>, value: &str) -> rusqlite::Result<Vec<i64>> {
    let mut q = tx.prepare(sql)?;
    let rows = q.query_map(params![pid, value], |r| r.get(0))?;
    rows.collect()
}

/// Rewrites (when `apply`) each session state in scope that holds `needle` with `change`;
/// returns how many it changes.
fn rewrite_states(
    tx: &rusqlite::Transaction<'_>,
    pid: Option<i64>,
    needle: &str,
    apply: bool,
    change: impl Fn(&mut serde_json::Value) -> bool,
) -> rusqlite::Result<u64> {
    let rows: Vec<(i64, String)> = {
        let mut q = tx.prepare(
            "SELECT id, state FROM sessions WHERE state IS NOT NULL AND holds(state, ?2) AND (?1 IS NULL OR project = ?1)",
        )?;
        let rows = q.query_map(params![pid, needle], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut n = 0;
    for (id, state) in rows {
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&state) else { continue };
        if !change(&mut v) {
            continue;
        }
        n += 1;
        if apply {
            tx.execute("UPDATE sessions SET state = ?2 WHERE id = ?1", params![id, v.to_string()])?;
        }
    }
    Ok(n)
}

/// The roots of the projects in scope.
fn roots(tx: &rusqlite::Transaction<'_>, pid: Option<i64>) -> rusqlite::Result<Vec<PathBuf>> {
    let mut q = tx.prepare("SELECT root FROM projects WHERE ?1 IS NULL OR id = ?1")?;
    let rows = q.query_map([pid], |r| r.get::<_, String>(0))?;
    rows.map(|r| r.map(PathBuf::from)).collect()
}
