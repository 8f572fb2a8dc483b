//! Ranked full-text search over the journal.
//!
//! The newest [`CANDIDATES`] events that match are ranked (SQLite's bm25, weighed by the
//! kind of event and by how recent it is), and the best shown, one per text: ranking every
//! event that holds a very common word would cost hundreds of milliseconds on a large
//! journal, and what is older than that many matches is rarely what is asked for.

use super::query::{self, Query};
use super::{events, kinds, snippet, Filter};
use ccmem_proto::wire::api::{Hit, Hits};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashSet;

/// Matching events ranked at most.
const CANDIDATES: usize = 2000;

/// Hits answered at most.
pub const MAX_HITS: usize = 200;

/// Hits answered when the caller does not say.
pub const DEFAULT_HITS: usize = 20;

/// The events that match `typed` within `filter`, best first; `limit` at most.
pub fn search(conn: &Connection, typed: &str, filter: &Filter, limit: usize) -> Result<Hits, String> {
    let mut q = query::parse(typed)?;
    let limit = limit.clamp(1, MAX_HITS);
    let mut found = candidates(conn, &q, filter).map_err(|e| format!("the search failed: {e}"))?;
    // No event holds every word (`what did we decide about the token refresh`): those that
    // hold the most of them, as bm25 ranks them.
    if found.is_empty() {
        if let Some(any) = q.any_words.take() {
            q.words = Some(any);
            found = candidates(conn, &q, filter).map_err(|e| format!("the search failed: {e}"))?;
        }
    }
    let more_found = found.len() > limit;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let mut ranked: Vec<(f64, i64)> = found
        .into_iter()
        .map(|(seq, at_ms, kind, rank)| {
            let age_days = ((now_ms - at_ms).max(0) as f64) / 86_400_000.0;
            let recency = 1.0 + 0.5 * (-age_days / 30.0).exp();
            let score = -rank * kinds::weight(kinds::shown(&kind)) * recency;
            (score, seq)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut hits: Vec<Hit> = Vec::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    // Read in pages, best first, until `limit` distinct hits are found.
    for page in ranked.chunks(limit * 2) {
        let seqs: Vec<i64> = page.iter().map(|(_, s)| *s).collect();
        for e in events(conn, &seqs).map_err(|e| format!("the search failed: {e}"))? {
            let snippet = snippet::of(&e.text, &q.marks);
            // The same text again (a todo list sent at every change, a command run again)
            // is one hit: its newest, as ranked.
            if seen.insert((e.sid.clone(), kinds::shown(&e.kind).to_string(), snippet.clone())) {
                hits.push(e.hit(snippet));
            }
            if hits.len() == limit {
                break;
            }
        }
        if hits.len() == limit {
            break;
        }
    }
    super::add_resume(conn, &mut hits).map_err(|e| format!("the search failed: {e}"))?;
    Ok(Hits { more: more_found && hits.len() == limit, hits })
}

/// The filter as tags of the words index (`AND tags : p3 AND tags : (kprompt OR kstop)`);
/// None when its project has no past at all.
fn tags(conn: &Connection, filter: &Filter) -> rusqlite::Result<Option<String>> {
    let mut out = String::new();
    if let Some(root) = &filter.root {
        let id: Option<i64> = conn
            .query_row("SELECT id FROM projects WHERE root = ?1", [root.to_string_lossy()], |r| r.get(0))
            .optional()?;
        let Some(id) = id else { return Ok(None) };
        out.push_str(&format!(" AND tags : p{id}"));
    }
    let any = |prefix: &str, names: Vec<String>| {
        let tags: Vec<String> = names.into_iter().map(|n| format!("{prefix}{n}")).collect();
        format!(" AND tags : ({})", tags.join(" OR "))
    };
    let word = crate::journal::schema::tag_word;
    if !filter.kinds.is_empty() {
        out.push_str(&any("k", filter.kinds.iter().map(|k| word(k)).collect()));
    }
    if !filter.agent.is_empty() {
        out.push_str(&any("a", filter.agent.iter().map(|a| word(a)).filter(|a| !a.is_empty()).collect()));
    }
    Ok(Some(out))
}

/// The newest [`CANDIDATES`] matching events: (seq, time, kind, bm25 rank).
fn candidates(conn: &Connection, q: &Query, filter: &Filter) -> rusqlite::Result<Vec<(i64, i64, String, f64)>> {
    // The index that drives: words when there are any (with the filter's project, kinds and
    // agent as its tags, and the words left out), else the runs.
    let (driver, by, weights) = match (&q.words, &q.runs) {
        (Some(w), _) => {
            let Some(tags) = tags(conn, filter)? else { return Ok(Vec::new()) };
            let mut by = format!("(text : ({w}){tags})");
            if let Some(not) = &q.not_words {
                by = format!("{by} NOT text : ({not})");
            }
            ("events_fts", by, ", 1.0, 0.0")
        }
        (None, Some(r)) => ("events_cjk", r.clone(), ""),
        (None, None) => return Ok(Vec::new()),
    };
    let mut values: Vec<Value> = vec![Value::Text(by)];
    let mut extra = String::new();
    let mut also = |cond: &str, v: &Option<String>, values: &mut Vec<Value>| {
        if let Some(v) = v {
            values.push(Value::Text(v.clone()));
            extra.push_str(&cond.replace('#', &format!("?{}", values.len())));
        }
    };
    if driver == "events_fts" {
        also(" AND e.seq IN (SELECT rowid FROM events_cjk WHERE events_cjk MATCH #)", &q.runs, &mut values);
    } else {
        let not = q.not_words.as_ref().map(|n| format!("text : ({n})"));
        also(" AND e.seq NOT IN (SELECT rowid FROM events_fts WHERE events_fts MATCH #)", &not, &mut values);
    }
    also(" AND e.seq NOT IN (SELECT rowid FROM events_cjk WHERE events_cjk MATCH #)", &q.not_runs, &mut values);
    let (conds, filter_values) = filter.sql(values.len() + 1);
    values.extend(filter_values);
    let sql = format!(
        "SELECT e.seq, e.at_ms, e.kind, bm25({driver}{weights}) FROM {driver}
         JOIN events e ON e.seq = {driver}.rowid
         JOIN sessions s ON s.id = e.session JOIN projects p ON p.id = s.project
         WHERE {driver} MATCH ?1 AND e.text != '' {extra} AND {conds}
         ORDER BY {driver}.rowid DESC LIMIT {CANDIDATES}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, f64>(3)?))
    })?;
    rows.collect()
}
