//! Why a file is as it is: the conversations that edited it, newest first, each with the
//! prompt its first edit served and the decisions, failures and commits around its edits.

use super::{add_resume, iso, snippet, Event, COLUMNS, FROM};
use ccmem_proto::wire::api::{Commit, Hit, Touch};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// Edits of one file read at most (the newest).
const EDITS_READ: usize = 5000;

/// What is told around one conversation's edits at most.
const AROUND: usize = 8;

/// Conversations answered at most, and when the caller does not say.
pub const MAX_TOUCHES: usize = 50;
pub const DEFAULT_TOUCHES: usize = 5;

/// The journal kinds told around the edits.
const AROUND_KINDS: &str = "'decision', 'failure', 'fixed', 'commit', 'test', 'build'";

/// The conversations (or, without one, sessions) that edited `rel` in the project at `root`,
/// newest first, `limit` at most.
pub fn why(conn: &Connection, root: &Path, rel: &str, limit: usize) -> rusqlite::Result<Vec<Touch>> {
    let mut q = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, e.session FROM {FROM}
         WHERE p.root = ?1 AND e.path = ?2 AND e.kind IN ('edit', 'delete')
         ORDER BY e.seq DESC LIMIT {EDITS_READ}"
    ))?;
    let rows = q.query_map(params![root.to_string_lossy(), rel], |r| Ok((Event::read(r)?, r.get::<_, i64>(9)?)))?;
    // Grouped by conversation, newest first: (first edit, last edit, edits, session row).
    let mut groups: Vec<(Event, Event, u32, i64)> = Vec::new();
    for row in rows {
        let (e, session) = row?;
        let same = |g: &(Event, Event, u32, i64)| g.0.sid == e.sid && g.0.conversation == e.conversation;
        match groups.iter().position(same) {
            Some(i) => {
                groups[i].0 = e;
                groups[i].2 += 1;
            }
            None if groups.len() < limit.clamp(1, MAX_TOUCHES) => groups.push((e.clone(), e, 1, session)),
            None => {}
        }
    }
    let mut prompt_q = conn.prepare_cached(
        "SELECT text FROM events WHERE session = ?1 AND kind = 'prompt' AND seq < ?2
         AND (conversation IS ?3) ORDER BY seq DESC LIMIT 1",
    )?;
    let mut around_q = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE e.session = ?1 AND e.seq >= ?2 AND e.seq <= ?3
         AND e.kind IN ({AROUND_KINDS}) ORDER BY e.seq LIMIT {AROUND}"
    ))?;
    let mut next_prompt_q = conn.prepare_cached(
        "SELECT coalesce(min(seq), ?3) FROM events WHERE session = ?1 AND kind = 'prompt' AND seq > ?2",
    )?;
    let mut out = Vec::new();
    for (first, last, edits, session) in groups {
        let prompt: Option<String> =
            prompt_q.query_row(params![session, first.seq, first.conversation], |r| r.get(0)).optional()?;
        // From the prompt's turn to the end of the turn of the last edit.
        let prompt_seq: i64 = conn
            .query_row(
                "SELECT coalesce(max(seq), ?2) FROM events WHERE session = ?1 AND kind = 'prompt' AND seq < ?2",
                params![session, first.seq],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(first.seq);
        let until: i64 = next_prompt_q.query_row(params![session, last.seq, i64::MAX], |r| r.get(0))?;
        let around: Vec<Hit> = around_q
            .query_map(params![session, prompt_seq, until], Event::read)?
            .map(|e| e.map(|e| e.hit(snippet::first_line(&e.text, 200))))
            .collect::<rusqlite::Result<_>>()?;
        out.push(Touch {
            session: first.sid.clone(),
            conversation: first.conversation.clone(),
            agent: first.agent.clone(),
            first: iso(first.at_ms),
            last: iso(last.at_ms),
            edits,
            prompt: prompt.map(|p| snippet::first_line(&p, 300)).unwrap_or_default(),
            around,
            resume: None,
        });
    }
    // Each conversation's resume command, as a hit of it would have.
    let mut probes: Vec<Hit> = out
        .iter()
        .map(|t| Hit { conversation: t.conversation.clone(), agent: t.agent.clone(), ..Hit::default() })
        .collect();
    add_resume(conn, &mut probes)?;
    for (t, p) in out.iter_mut().zip(probes) {
        t.resume = p.resume;
    }
    Ok(out)
}

/// The session that was live in the project at `root` when `commit` was made.
pub fn session_at(conn: &Connection, root: &Path, commit: &mut Commit, at_ms: i64) -> rusqlite::Result<()> {
    commit.session = conn
        .query_row(
            "SELECT s.sid FROM sessions s JOIN projects p ON p.id = s.project
             WHERE p.root = ?1 AND s.started_ms <= ?2 AND coalesce(s.ended_ms, ?2) >= ?2
             ORDER BY s.started_ms DESC LIMIT 1",
            params![root.to_string_lossy(), at_ms],
            |r| r.get(0),
        )
        .optional()?;
    Ok(())
}
