//! A project's ended sessions, as views of the journal: `history`, the handoff a new session
//! starts from, the next session id. Without a journal (it could not be opened) they come
//! from the state dir's archives, which are then written as before.
//!
//! Each reads files or the database: for the blocking pool.

use super::task::Services;
use ccmem_proto::model::session::ArchivedSession;
use std::path::Path;

/// Ended sessions `history` lists, newest first.
pub fn history(ctx: &Services, root: &Path) -> Vec<ArchivedSession> {
    let limit = ctx.store.keep_sessions();
    ctx.journal.history(root, limit).unwrap_or_else(|| ctx.store.history(root))
}

/// The newest ended session.
pub fn last_archived(ctx: &Services, root: &Path) -> Option<ArchivedSession> {
    match ctx.journal.history(root, 1) {
        Some(mut h) => h.pop(),
        None => ctx.store.last_archived(root),
    }
}

/// The newest session id the project has used (a new one sorts after it).
pub fn last_session_id(ctx: &Services, root: &Path) -> Option<String> {
    ctx.journal.last_session_id(root).into_iter().chain(ctx.store.last_session_id(root)).max()
}

/// Keeps an ended session: the journal has it already (its last state, ended); the state
/// dir's archive is written only when there is no journal.
pub fn archive(ctx: &Services, ended: &ArchivedSession) -> std::io::Result<()> {
    if ctx.journal.is_open() {
        return Ok(());
    }
    ctx.store.archive(ended)
}
