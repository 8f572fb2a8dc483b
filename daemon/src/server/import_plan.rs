//! `session.import_plan`: where each conversation `ccmemctl import --all` found goes. The
//! daemon knows what the client cannot: the project each directory belongs to, which
//! conversations the journal or a live session holds already, and when each project was
//! last active. A conversation goes into its project's history, except a project's newest
//! when it is newer than anything ccmem knows of the project and the project's live session
//! has no conversation yet: that one goes into the live session, so that the next agent
//! started there begins where it left off.

use super::rpc::ask;
use super::state::Shared;
use crate::project::registry as projects;
use crate::project::task::Msg;
use ccmem_proto::model::agent::is_conversation_id;
use ccmem_proto::wire::api::{
    Destination, ImportPlanParams, ImportPlanReply, OpencodeSession, OpencodeSessionsParams, OpencodeSessionsReply,
    PlanCandidate, PlanEntry, HELD,
};
use ccmem_proto::wire::rpc::RpcError;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Conversations one plan takes at most (a machine's whole store is a few thousand).
const MAX_CONVERSATIONS: usize = 100_000;

/// What the blocking pool found out: each candidate's project (or why none), the ids the
/// journal holds, and when each project was last active as the journal tells.
struct Found {
    roots: Vec<Result<PathBuf, String>>,
    known: HashSet<String>,
    last_active: HashMap<PathBuf, Option<i64>>,
}

/// Serves `session.import_plan`.
pub(super) async fn plan(name: &str, p: ImportPlanParams, shared: &Arc<Shared>) -> Result<ImportPlanReply, RpcError> {
    let candidates = p.conversations;
    if candidates.len() > MAX_CONVERSATIONS {
        return Err(RpcError::invalid_params(name, format!("at most {MAX_CONVERSATIONS} conversations in one plan")));
    }
    let journal = shared.projects.ctx().journal.clone();
    if !journal.is_open() {
        return Err(RpcError::app(
            "a project's history is the journal's, and there is no journal (see `ccmemctl status`)",
        ));
    }
    // The file system and the journal, on the blocking pool: a hung mount stalls no worker.
    let live_roots = shared.projects.roots();
    let asked: Vec<(String, Option<PathBuf>)> = candidates.iter().map(|c| (c.id.clone(), c.cwd.clone())).collect();
    let found = tokio::task::spawn_blocking(move || {
        let roots: Vec<Result<PathBuf, String>> =
            asked.iter().map(|(_, cwd)| root_of(cwd.as_ref(), &live_roots)).collect();
        let ids = asked.into_iter().map(|(id, _)| id).collect();
        let known = journal.known_conversations(ids).unwrap_or_default().into_iter().collect();
        let distinct: HashSet<&PathBuf> = roots.iter().flatten().collect();
        let last_active = distinct.into_iter().map(|r| (r.clone(), journal.last_active_ms(r).flatten())).collect();
        Found { roots, known, last_active }
    })
    .await
    .map_err(|e| RpcError::app(format!("the plan could not be made: {e}")))?;
    // The live sessions' conversations, by project, with the events an import delivered.
    let mut live: HashMap<PathBuf, Vec<(String, u64)>> = HashMap::new();
    let wanted: HashSet<&PathBuf> = found.roots.iter().flatten().collect();
    for root in shared.projects.roots() {
        let conversations = if wanted.contains(&root) {
            let summary = ask(shared, &root, |reply| Msg::Summary { conversations: true, reply }).await.ok();
            summary
                .map(|s| s.conversations.into_iter().map(|c| (c.id, c.imported_events)).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        live.insert(root, conversations);
    }
    Ok(ImportPlanReply { plan: decide(&candidates, &found, &live) })
}

/// Serves `session.opencode_sessions`: OpenCode's top-level conversations, read from its
/// database without writing to it (SQLite's read-only mode; OpenCode may be running).
pub(super) async fn opencode_sessions(
    name: &str,
    p: OpencodeSessionsParams,
) -> Result<OpencodeSessionsReply, RpcError> {
    if !p.db.is_absolute() || p.db.file_name().is_none_or(|n| n != "opencode.db") {
        return Err(RpcError::invalid_params(name, "db must be the absolute path of OpenCode's opencode.db"));
    }
    let db = p.db;
    tokio::task::spawn_blocking(move || read_opencode(&db))
        .await
        .map_err(|e| RpcError::app(format!("OpenCode's database could not be read: {e}")))?
        .map(|sessions| OpencodeSessionsReply { sessions })
        .map_err(|e| RpcError::app(format!("OpenCode's database could not be read: {e}")))
}

fn read_opencode(db: &std::path::Path) -> rusqlite::Result<Vec<OpencodeSession>> {
    use rusqlite::OpenFlags;
    let meta = std::fs::symlink_metadata(db)
        .map_err(|e| rusqlite::Error::InvalidPath(format!("{}: {e}", db.display()).into()))?;
    if !meta.is_file() {
        return Err(rusqlite::Error::InvalidPath(format!("{} is not a regular file", db.display()).into()));
    }
    let conn =
        rusqlite::Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    let mut q = conn.prepare(
        "SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_updated LIMIT ?1",
    )?;
    let rows = q.query_map([MAX_CONVERSATIONS as i64], |r| {
        Ok(OpencodeSession {
            id: r.get(0)?,
            directory: r.get(1)?,
            updated_ms: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
        })
    })?;
    rows.collect()
}

/// The project a conversation's directory belongs to, or why it has none.
fn root_of(cwd: Option<&PathBuf>, live_roots: &[PathBuf]) -> Result<PathBuf, String> {
    let cwd = cwd.ok_or("its file names no working directory")?;
    if !cwd.is_absolute() {
        return Err(format!("its working directory {} is not an absolute path", cwd.display()));
    }
    if !cwd.is_dir() {
        return Err(format!("its directory {} is gone", cwd.display()));
    }
    let root = projects::resolve_root(cwd, live_roots).map_err(|e| format!("{}: {e}", cwd.display()))?;
    match projects::refused(&root) {
        Some(why) => Err(why),
        None => Ok(root),
    }
}

/// Where each candidate goes, given what was found and the live sessions' conversations (a
/// live project with none is in `live` with an empty list).
fn decide(candidates: &[PlanCandidate], found: &Found, live: &HashMap<PathBuf, Vec<(String, u64)>>) -> Vec<PlanEntry> {
    let in_live: HashMap<&str, u64> = live.values().flatten().map(|(id, n)| (id.as_str(), *n)).collect();
    // The newest file of each id (a conversation copied, or resumed into a file of its own).
    let mut newest_of_id: HashMap<&str, usize> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let e = newest_of_id.entry(c.id.as_str()).or_insert(i);
        if candidates[*e].last_ms < c.last_ms {
            *e = i;
        }
    }
    let mut plan: Vec<PlanEntry> = candidates
        .iter()
        .zip(&found.roots)
        .enumerate()
        .map(|(i, (c, root))| {
            let entry = |into, root: Option<&PathBuf>, why: Option<String>, after| PlanEntry {
                id: c.id.clone(),
                into,
                root: root.cloned(),
                why,
                after,
            };
            let skip = |why: String| entry(Destination::Skip, None, Some(why), None);
            if !is_conversation_id(&c.id) {
                return skip("its file names no conversation id".into());
            }
            if newest_of_id.get(c.id.as_str()) != Some(&i) {
                return skip("a newer file holds the same conversation".into());
            }
            // A live session that took it from an import goes on where that import stopped:
            // the conversation may have said more since.
            if let (Some(&n), Ok(r)) = (in_live.get(c.id.as_str()), root) {
                if n > 0 {
                    return entry(Destination::Live, Some(r), None, Some(n));
                }
            }
            if found.known.contains(&c.id) || in_live.contains_key(c.id.as_str()) {
                return skip(HELD.into());
            }
            match root {
                Ok(r) => entry(Destination::History, Some(r), None, None),
                Err(why) => skip(why.clone()),
            }
        })
        .collect();
    // Each project's newest, into its live session when that has no conversation yet and
    // nothing ccmem knows of the project is newer.
    let mut newest: HashMap<PathBuf, usize> = HashMap::new();
    for (i, e) in plan.iter().enumerate() {
        if let (Destination::History, Some(r)) = (e.into, &e.root) {
            let n = newest.entry(r.clone()).or_insert(i);
            if candidates[*n].last_ms < candidates[i].last_ms {
                *n = i;
            }
        }
    }
    for (root, i) in newest {
        let live_is_empty = live.get(&root).is_none_or(Vec::is_empty);
        let newer = found.last_active.get(&root).copied().flatten().is_none_or(|at| at < candidates[i].last_ms);
        if live_is_empty && newer {
            plan[i].into = Destination::Live;
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, last_ms: i64) -> PlanCandidate {
        PlanCandidate { id: id.into(), cwd: None, last_ms }
    }

    #[test]
    fn the_newest_of_a_project_goes_live_only_when_nothing_newer_is_known() {
        let (a, b) = (PathBuf::from("/a"), PathBuf::from("/b"));
        let candidates = [
            candidate("a-old", 1),
            candidate("a-new", 5),
            candidate("b-only", 3),
            candidate("held", 9),
            candidate("a-new", 2),
            candidate("bad id", 4),
        ];
        let found = Found {
            roots: vec![Ok(a.clone()), Ok(a.clone()), Ok(b.clone()), Ok(a.clone()), Ok(a.clone()), Ok(a.clone())],
            known: HashSet::from(["held".to_string()]),
            // Project b was active after its conversation: it goes into history.
            last_active: HashMap::from([(a.clone(), Some(0)), (b.clone(), Some(10))]),
        };
        let plan = decide(&candidates, &found, &HashMap::new());
        let into: Vec<Destination> = plan.iter().map(|e| e.into).collect();
        use Destination::*;
        assert_eq!(into, [History, Live, History, Skip, Skip, Skip]);
        assert_eq!(plan[3].why.as_deref(), Some("ccmem holds it already"));
        assert_eq!(plan[4].why.as_deref(), Some("a newer file holds the same conversation"));
        // A live session with a conversation of its own keeps it: all into history.
        let live = HashMap::from([(a.clone(), vec![("other".to_string(), 0)])]);
        let plan = decide(&candidates, &found, &live);
        assert_eq!(plan[1].into, History);
    }
}
