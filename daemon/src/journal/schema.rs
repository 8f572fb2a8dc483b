//! The journal's tables, and the migrations that bring an older database forward.
//!
//! Designed for the three rooms that read it: recall searches `events` through `events_fts`
//! and walks a session's events in order (`timeline`) or a file's (`why`); travel hands a
//! session's last state (`sessions.state`) to another machine; the view lists projects,
//! sessions and events. The version is SQLite's own `user_version`: a database of a newer
//! version than this program knows is never written to.

use rusqlite::Connection;

/// The schema this program writes: one step per version, in order.
pub const VERSION: i64 = STEPS.len() as i64;

/// What takes a database from version `i` to `i + 1`.
const STEPS: &[&str] = &[V1, V2, V3, V4, V5];

/// Version 1: projects, their sessions (each with its latest state), and every event.
const V1: &str = "
CREATE TABLE projects (
    id    INTEGER PRIMARY KEY,
    root  TEXT NOT NULL UNIQUE,           -- the project's directory, absolute
    name  TEXT NOT NULL DEFAULT ''
);
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    project     INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    sid         TEXT NOT NULL,            -- ccmem's session id (session_YYYYMMDD_…)
    started_ms  INTEGER NOT NULL,
    ended_ms    INTEGER,                  -- NULL while the session lives
    end_reason  TEXT,
    state       TEXT,                     -- the session as JSON (seed 001), as of state_ms
    state_ms    INTEGER,
    UNIQUE (project, sid)
);
CREATE INDEX sessions_live ON sessions(ended_ms) WHERE ended_ms IS NULL;
CREATE TABLE events (
    seq           INTEGER PRIMARY KEY,    -- the order the daemon accepted them in
    session       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    at_ms         INTEGER NOT NULL,       -- when it happened (an import's own time)
    source        TEXT NOT NULL,          -- hook, import, watch, user
    kind          TEXT NOT NULL,          -- prompt, tool, edit, stop, compacted, …
    agent         TEXT,
    conversation  TEXT,                   -- the agent's conversation id
    path          TEXT,                   -- the file it is about, relative to the project
    text          TEXT NOT NULL DEFAULT '', -- redacted; what search finds
    data          TEXT                    -- redacted JSON details
);
CREATE INDEX events_by_session ON events(session, seq);
CREATE INDEX events_by_path ON events(path) WHERE path IS NOT NULL;
CREATE VIRTUAL TABLE events_fts USING fts5(
    text, content = 'events', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
-- A deleted row's words leave the index at once (not at the next merge).
INSERT INTO events_fts(events_fts, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN
    INSERT INTO events_fts(rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    INSERT INTO events_fts(events_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
";

/// Version 2: an event's replay, and the last event a session's state includes; a state is
/// no longer written with every event, and a restart applies the replays after it.
const V2: &str = "
ALTER TABLE events ADD COLUMN replay TEXT;      -- redacted JSON: what it did to the session
ALTER TABLE sessions ADD COLUMN state_seq INTEGER NOT NULL DEFAULT 0; -- the last event in state
";

/// Version 3: what the journal has done once (the archives of the state dir taken in).
const V3: &str = "
CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
";

/// Version 4: text written without spaces between words (Chinese, Japanese, Korean) indexed
/// as pairs of characters, and events found by conversation ([`super::grams`]), beside the words of `events_fts`. Contentless:
/// the text is the event's; the writer adds a row's pairs, and a deleted event's go with it.
const V4: &str = "
CREATE VIRTUAL TABLE events_cjk USING fts5(
    grams, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
);
INSERT INTO events_cjk(events_cjk, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER events_cjk_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_cjk WHERE rowid = old.seq;
END;
-- A conversation's events (a hit's resume command, `forget --conversation`).
CREATE INDEX events_by_conversation ON events(conversation, seq) WHERE conversation IS NOT NULL;
";

/// Version 5: the words index holds, beside each event's text, its tags (`p<project>`,
/// `k<kind>`, `a<agent>`): a search in one project, of one kind or agent, intersects inside
/// the index instead of walking every match of a common word to filter it (measured: 60 ms
/// at p95 in one project of 50, a million events, against 16 ms across all). Contentless
/// like `events_cjk`: the writer adds each event's row, a deleted event's goes with it.
const V5: &str = "
DROP TRIGGER events_fts_insert;
DROP TRIGGER events_fts_delete;
DROP TABLE events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5(
    text, tags, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO events_fts(events_fts, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.seq;
END;
";

/// The tags an event is indexed with (see [`V5`]): its project's row, its kind, its agent.
pub fn tags(project: i64, kind: &str, agent: Option<&str>) -> String {
    let word = tag_word;
    match agent {
        Some(a) => format!("p{project} k{} a{}", word(kind), word(a)),
        None => format!("p{project} k{}", word(kind)),
    }
}

/// A kind's or an agent's name as a tag's word: its ASCII letters and digits, lowercase.
pub fn tag_word(name: &str) -> String {
    name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase()
}

/// The number the next event is given: past every event there is and every one there was
/// (`meta.next_seq`, kept by [`keep_seq`]).
pub(super) fn next_seq(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT max(coalesce((SELECT max(seq) FROM events), 0) + 1,
                    coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_seq'), 0))",
    )?
    .query_row([], |r| r.get(0))
}

/// Remembers `next` as the number the next event is given, in the transaction that wrote
/// the events before it.
pub(super) fn keep_seq(conn: &Connection, next: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_seq', ?1)")?
        .execute([next.to_string()])?;
    Ok(())
}

/// Why a database cannot be used as it is.
#[derive(Debug)]
pub enum Unusable {
    /// Written by a newer ccmem: left as it is.
    Newer(i64),
    /// SQLite refused it (corrupt, not a database, read-only, full disk, …).
    Sqlite(rusqlite::Error),
    /// The file itself (a link or a directory at its name, no permission).
    File(std::io::Error),
    /// SQLite opened it in a way that cannot keep the log ([`super::open`] says how).
    Setup(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Newer(v) => {
                write!(f, "its schema version {v} is newer than this ccmem knows ({VERSION}): written by a newer ccmem")
            }
            Unusable::Sqlite(e) => write!(f, "{e}"),
            Unusable::File(e) => write!(f, "{e}"),
            Unusable::Setup(e) => f.write_str(e),
        }
    }
}

impl From<rusqlite::Error> for Unusable {
    fn from(e: rusqlite::Error) -> Self {
        Unusable::Sqlite(e)
    }
}

/// Indexes the pairs of the events written before version 4 ([`V4`]).
fn index_grams(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let mut read = tx.prepare("SELECT seq, text FROM events")?;
    let mut add = tx.prepare("INSERT INTO events_cjk(rowid, grams) VALUES (?1, ?2)")?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let text: String = r.get(1)?;
        if let Some(grams) = super::grams::of(&text) {
            add.execute(rusqlite::params![r.get::<_, i64>(0)?, grams])?;
        }
    }
    Ok(())
}

/// Indexes the words and tags of the events written before version 5 ([`V5`]).
fn index_words(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let mut read = tx.prepare(
        "SELECT e.seq, e.text, s.project, e.kind, e.agent FROM events e JOIN sessions s ON s.id = e.session",
    )?;
    let mut add = tx.prepare("INSERT INTO events_fts(rowid, text, tags) VALUES (?1, ?2, ?3)")?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let (kind, agent): (String, Option<String>) = (r.get(3)?, r.get(4)?);
        let tags = tags(r.get(2)?, &kind, agent.as_deref());
        add.execute(rusqlite::params![r.get::<_, i64>(0)?, r.get::<_, String>(1)?, tags])?;
    }
    Ok(())
}

/// Brings the database to [`VERSION`], each step in its own transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), Unusable> {
    let mut version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > VERSION {
        return Err(Unusable::Newer(version));
    }
    for step in STEPS.iter().skip(usize::try_from(version).unwrap_or(0)) {
        let tx = conn.transaction()?;
        tx.execute_batch(step)?;
        version += 1;
        if version == 4 {
            index_grams(&tx)?;
        }
        if version == 5 {
            index_words(&tx)?;
        }
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal written before versions 4 and 5 is searchable after them: its events'
    /// words (with their tags) and pairs indexed as the writer indexes new ones.
    #[test]
    fn older_events_are_indexed_when_the_schema_moves_on() {
        let mut conn = Connection::open_in_memory().unwrap();
        for (i, step) in STEPS[..3].iter().enumerate() {
            conn.execute_batch(step).unwrap();
            conn.pragma_update(None, "user_version", i as i64 + 1).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO projects (id, root) VALUES (7, '/p');
             INSERT INTO sessions (id, project, sid, started_ms) VALUES (1, 7, 's', 0);
             INSERT INTO events (session, at_ms, source, kind, agent, text)
                 VALUES (1, 0, 'hook', 'prompt', 'claude', 'fix the token refresh 마이그레이션을');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(count("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'text : refresh AND tags : p7 AND tags : kprompt AND tags : aclaude'"), 1);
        assert_eq!(count("SELECT count(*) FROM events_cjk WHERE events_cjk MATCH '\"마이 이그\"'"), 1);
        // A deleted event leaves both.
        conn.execute("DELETE FROM events", []).unwrap();
        assert_eq!(count("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'refresh'"), 0);
        assert_eq!(count("SELECT count(*) FROM events_cjk WHERE events_cjk MATCH '\"마이 이그\"'"), 0);
    }
}
