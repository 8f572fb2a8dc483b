//! How long the journal keeps the past: ended sessions older than `history_keep` go, and
//! when the database outgrows `history_max_size` the oldest ended sessions go until it fits.
//! Live sessions are never dropped. Run by the writer at start, after a session ends, when
//! a project's own setting arrives, and hourly.

use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// What the user set, and what projects asked for.
#[derive(Debug, Clone)]
pub struct Retention {
    /// Ended sessions older than this go (None: kept for ever).
    pub keep: Option<Duration>,
    /// The database's largest size in use, in bytes.
    pub max_size: u64,
    /// Projects whose `.claude/ccmem.toml` keeps their past less long (known from their
    /// first session since the daemon started). A project can only shorten the user's
    /// `keep`: a repository may not keep what the user lets go.
    pub projects: HashMap<PathBuf, Duration>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { keep: None, max_size: 1 << 30, projects: HashMap::new() }
    }
}

impl Retention {
    /// How long the project at `root` keeps its ended sessions.
    pub fn keep_for(&self, root: &std::path::Path) -> Option<Duration> {
        match (self.keep, self.projects.get(root)) {
            (Some(user), Some(p)) => Some(user.min(*p)),
            (user, p) => user.or(p.copied()),
        }
    }
}

/// Sessions dropped by one run.
#[derive(Debug, Default, PartialEq)]
pub struct Dropped {
    /// For their age.
    pub old: u64,
    /// For the size.
    pub for_size: u64,
}

/// Sessions deleted per transaction while the database is too large.
const STEP: i64 = 8;

/// Drops what `r` no longer keeps, as of `now_ms`.
pub(super) fn run(conn: &mut Connection, r: &Retention, now_ms: i64) -> rusqlite::Result<Dropped> {
    let mut out = Dropped::default();
    let before = |keep: Duration| now_ms.saturating_sub(i64::try_from(keep.as_millis()).unwrap_or(i64::MAX));
    if let Some(keep) = r.keep {
        out.old =
            conn.execute("DELETE FROM sessions WHERE ended_ms IS NOT NULL AND ended_ms < ?1", [before(keep)])? as u64;
    }
    for root in r.projects.keys() {
        if let Some(keep) = r.keep_for(root) {
            out.old += conn.execute(
                "DELETE FROM sessions WHERE ended_ms IS NOT NULL AND ended_ms < ?1
                 AND project = (SELECT id FROM projects WHERE root = ?2)",
                params![before(keep), root.to_string_lossy()],
            )? as u64;
        }
    }
    while used(conn)? > r.max_size {
        let tx = conn.transaction()?;
        let n = tx.execute(
            "DELETE FROM sessions WHERE id IN
             (SELECT id FROM sessions WHERE ended_ms IS NOT NULL ORDER BY ended_ms, id LIMIT ?1)",
            params![STEP],
        )?;
        tx.commit()?;
        if n == 0 {
            break; // only live sessions left: they stay
        }
        out.for_size += n as u64;
    }
    Ok(out)
}

/// Bytes of the database in use (its free pages, which new rows fill first, not counted).
pub(super) fn used(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(u64::try_from((pages - free).max(0) * size).unwrap_or(0))
}
