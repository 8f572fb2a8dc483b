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
const STEPS: &[&str] = &[V1, V2, V3, V4];

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
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
    Ok(())
}
