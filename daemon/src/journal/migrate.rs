//! The state dir of a ccmem from before the journal: its archived sessions
//! (`projects/*/sessions/*.json`) are taken into the journal once, at the first start with
//! it, as ended sessions with their last state. The files are left where they are, for the
//! user to remove.

use ccmem_proto::model::session::ArchivedSession;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// The `meta` key that says it was done.
const DONE: &str = "archives_taken";

/// An archive larger than this is not a session ccmem wrote: skipped.
const MAX_ARCHIVE: u64 = 64 << 20;

/// Takes every archive under `state_dir` into the journal, in one transaction, unless that
/// was done before. Returns how many were taken.
pub(super) fn archives(conn: &mut Connection, state_dir: &Path) -> rusqlite::Result<usize> {
    let done: Option<String> =
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [DONE], |r| r.get(0)).optional()?;
    if done.is_some() {
        return Ok(0);
    }
    let tx = conn.transaction()?;
    let mut taken = 0;
    for file in archive_files(state_dir) {
        let a = match read(&file) {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(file = %file.display(), error = %e, "an archived session is not taken into the journal");
                continue;
            }
        };
        let s = &a.session;
        if !s.project_root.is_absolute() || s.session_id.is_empty() {
            continue;
        }
        let ms = |t: &str| crate::clock::parse_iso(t).map(|t| t.timestamp_millis());
        let ended_ms = ms(&a.ended_at).or_else(|| ms(&s.last_activity)).unwrap_or(0);
        let started_ms = ms(&s.created_at).unwrap_or(ended_ms);
        let project: i64 = tx.query_row(
            "INSERT INTO projects (root, name) VALUES (?1, ?2)
             ON CONFLICT (root) DO UPDATE SET name = CASE WHEN name = '' THEN excluded.name ELSE name END
             RETURNING id",
            params![s.project_root.to_string_lossy(), s.project_name],
            |r| r.get(0),
        )?;
        let state = serde_json::to_string(s).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        // A session the journal has already (ended since) keeps what the journal says.
        taken += tx.execute(
            "INSERT INTO sessions (project, sid, started_ms, ended_ms, end_reason, state, state_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?4) ON CONFLICT (project, sid) DO NOTHING",
            params![project, s.session_id, started_ms, ended_ms, crate::store::end_reason_text(a.ended), state],
        )?;
    }
    tx.execute("INSERT INTO meta (key, value) VALUES (?1, ?2)", params![DONE, crate::clock::iso(chrono::Utc::now())])?;
    tx.commit()?;
    if taken > 0 {
        tracing::info!(sessions = taken, "archived sessions taken into the journal (their files are left in place)");
    }
    Ok(taken)
}

/// `projects/*/sessions/session_*.json` under `state_dir`.
fn archive_files(state_dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(projects) = std::fs::read_dir(state_dir.join("projects")) else { return Vec::new() };
    let mut out = Vec::new();
    for p in projects.flatten() {
        let Ok(files) = std::fs::read_dir(p.path().join("sessions")) else { continue };
        out.extend(files.flatten().map(|f| f.path()).filter(|f| {
            f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("session_") && n.ends_with(".json"))
        }));
    }
    out.sort();
    out
}

fn read(file: &Path) -> Result<ArchivedSession, String> {
    use std::io::Read;
    let f = std::fs::File::open(file).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_ARCHIVE + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_ARCHIVE {
        return Err(format!("larger than {} MiB", MAX_ARCHIVE >> 20));
    }
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}
