//! Recall: the journal's past asked about — searched in any language ([`search`]), told in
//! order ([`timeline`]), asked about one file ([`why`]), one event in full ([`show`]).
//!
//! Reads only: every function takes the journal's reading connection (recall's own, see
//! [`crate::journal::Journal::recall`]) and writes nothing. What it shows is what the
//! journal kept, redacted when it was written; a `forget` removes it from here at once.

mod filter;
pub mod kinds;
pub mod overview;
mod query;
mod search;
mod snippet;
mod timeline;
mod why;

pub use filter::Filter;
pub use search::{search, DEFAULT_HITS};
pub use timeline::{timeline, DEFAULT_STEPS};
pub use why::{session_at, why, DEFAULT_TOUCHES};

use ccmem_proto::model::agent::Agent;
use ccmem_proto::wire::api::{Hit, ShowReply};
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;

/// The columns of an event that a hit shows, as [`Event::read`] takes them (after `e.seq`).
const COLUMNS: &str = "e.seq, e.at_ms, p.root, s.sid, e.conversation, e.agent, e.kind, e.path, e.text";

/// The tables [`COLUMNS`] come from.
const FROM: &str = "events e JOIN sessions s ON s.id = e.session JOIN projects p ON p.id = s.project";

/// An event as recall reads it.
#[derive(Debug, Clone)]
struct Event {
    seq: i64,
    at_ms: i64,
    root: String,
    sid: String,
    conversation: Option<String>,
    agent: Option<String>,
    kind: String,
    path: Option<String>,
    text: String,
}

impl Event {
    /// Reads [`COLUMNS`] from the row's first columns.
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Event> {
        Ok(Event {
            seq: r.get(0)?,
            at_ms: r.get(1)?,
            root: r.get(2)?,
            sid: r.get(3)?,
            conversation: r.get(4)?,
            agent: r.get(5)?,
            kind: r.get(6)?,
            path: r.get(7)?,
            text: r.get(8)?,
        })
    }

    /// The event as a hit, `snippet` its text as shown.
    fn hit(&self, snippet: String) -> Hit {
        Hit {
            seq: self.seq,
            at: iso(self.at_ms),
            project: self.root.clone().into(),
            session: self.sid.clone(),
            conversation: self.conversation.clone(),
            agent: self.agent.clone(),
            kind: kinds::shown(&self.kind).to_string(),
            path: self.path.clone(),
            snippet,
            resume: None,
            folded: 0,
            outcome: kinds::outcome(&self.kind, &self.text).to_string(),
        }
    }
}

/// `ms` since the epoch, ISO 8601.
pub fn iso(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms).map(crate::clock::iso).unwrap_or_default()
}

/// The events `seqs`, in that order (those that are gone left out).
fn events(conn: &Connection, seqs: &[i64]) -> rusqlite::Result<Vec<Event>> {
    let mut q = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM {FROM} WHERE e.seq = ?1"))?;
    let mut out = Vec::with_capacity(seqs.len());
    for seq in seqs {
        if let Some(e) = q.query_row([seq], Event::read).optional()? {
            out.push(e);
        }
    }
    Ok(out)
}

/// Fills in each hit's resume command: its conversation's agent resumes it when the
/// conversation's transcript is still where the agent keeps it on this machine.
fn add_resume(conn: &Connection, hits: &mut [Hit]) -> rusqlite::Result<()> {
    let mut known: HashMap<String, Option<String>> = HashMap::new();
    let mut q = conn.prepare_cached(
        "SELECT json_extract(data, '$.transcript') FROM events
         WHERE conversation = ?1 AND kind IN ('start', 'prompt') AND data IS NOT NULL
         ORDER BY seq DESC LIMIT 1",
    )?;
    for h in hits.iter_mut() {
        let (Some(id), Some(agent)) = (h.conversation.clone(), h.agent.as_deref()) else { continue };
        if !known.contains_key(&id) {
            let transcript: Option<String> = q.query_row([&id], |r| r.get(0)).optional()?.flatten();
            let on_disk = transcript.is_some_and(|t| std::path::Path::new(&t).is_file());
            let agent = Agent::ALL.into_iter().find(|a| a.display() == agent || a.name() == agent);
            let command = agent
                .filter(|_| on_disk && ccmem_proto::model::agent::is_conversation_id(&id))
                .and_then(|a| a.resume_command(&id));
            known.insert(id.clone(), command);
        }
        h.resume = known.get(&id).cloned().flatten();
    }
    Ok(())
}

/// The session (ccmem's id) or conversation (the agent's id) that `id` names: itself when the
/// journal knows it; the one conversation whose id starts with it (8 characters at least);
/// else why not.
pub fn session_named(conn: &Connection, id: &str) -> rusqlite::Result<Result<String, String>> {
    let known: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sessions WHERE sid = ?1) OR EXISTS (SELECT 1 FROM events WHERE conversation = ?1)",
        [id],
        |r| r.get(0),
    )?;
    if known {
        return Ok(Ok(id.to_string()));
    }
    if id.chars().count() >= 8 {
        // The index on conversations, read as a range: ids from `id` up to past its prefix.
        let mut q = conn.prepare_cached(
            "SELECT DISTINCT conversation FROM events WHERE conversation >= ?1 AND conversation < ?1 || char(1114111) LIMIT 2",
        )?;
        let found: Vec<String> = q.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        match found.as_slice() {
            [one] => return Ok(Ok(one.clone())),
            [_, _] => return Ok(Err(format!("{id:?} starts more than one conversation: give more of its id"))),
            _ => {}
        }
    }
    Ok(Err(format!("no session or conversation {id:?} in the journal (`ccmemctl history` lists them)")))
}

/// One event in full (its whole text as the snippet), its details, and `around` events of
/// its session on each side. None: there is no such event.
pub fn show(conn: &Connection, seq: i64, around: usize) -> rusqlite::Result<Option<ShowReply>> {
    let found = conn
        .query_row(&format!("SELECT {COLUMNS}, e.data, e.session FROM {FROM} WHERE e.seq = ?1"), [seq], |r| {
            Ok((Event::read(r)?, r.get::<_, Option<String>>(9)?, r.get::<_, i64>(10)?))
        })
        .optional()?;
    let Some((event, data, session)) = found else { return Ok(None) };
    let mut hit = [event.hit(event.text.clone())];
    add_resume(conn, &mut hit)?;
    let [hit] = hit;
    let mut near = Vec::new();
    if around > 0 {
        let n = i64::try_from(around.min(50)).unwrap_or(50);
        let mut q = conn.prepare_cached(&format!(
            "SELECT * FROM (SELECT {COLUMNS} FROM {FROM} WHERE e.session = ?1 AND e.seq < ?2 ORDER BY e.seq DESC LIMIT ?3)
             UNION ALL
             SELECT * FROM (SELECT {COLUMNS} FROM {FROM} WHERE e.session = ?1 AND e.seq > ?2 ORDER BY e.seq LIMIT ?3)"
        ))?;
        let rows = q.query_map(rusqlite::params![session, seq, n], Event::read)?;
        for e in rows {
            let e = e?;
            if !kinds::QUIET.contains(&e.kind.as_str()) {
                near.push(e.hit(snippet::first_line(&e.text, 160)));
            }
        }
        near.sort_by_key(|h| h.seq);
    }
    let data = data.and_then(|d| serde_json::from_str(&d).ok());
    Ok(Some(ShowReply { hit, data, around: near }))
}
