//! Opening the journal's database: made private before SQLite sees it, set up for a
//! crash-safe log, and moved aside (never deleted) when it cannot be used.

use super::schema::{self, Unusable};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// The database's file name in the state dir.
/// How long a statement waits for another connection's lock.
pub(super) const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

pub const FILE: &str = "journal.db";

/// SQLite's page cache per connection, in KiB: the daemon's memory stays small; the
/// writer touches the tail of a few tables and the operating system caches the rest.
const CACHE_KIB: i64 = 2048;

/// A database ready to write, and what happened to the one before it, if anything.
pub struct Opened {
    pub conn: Connection,
    /// The database that could not be used, where it went, and why.
    pub replaced: Option<String>,
}

/// Opens (or makes) the journal in `dir`; a database that cannot be used is moved aside and
/// a new one made in its place.
pub fn open(dir: &Path) -> Result<Opened, String> {
    let path = dir.join(FILE);
    match open_at(&path) {
        Ok(conn) => Ok(Opened { conn, replaced: None }),
        Err(why) => replace(&path, &why.to_string()),
    }
}

/// Whether SQLite found the database damaged: its pages (the header whole, so that it
/// opens) say what cannot be. Such a journal fails every later write.
pub fn is_damaged(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase))
}

/// Moves the unusable database at `path` aside (see [`move_aside`]) and makes a new one.
pub fn replace(path: &Path, why: &str) -> Result<Opened, String> {
    let moved = move_aside(path);
    let said = match &moved {
        Ok(to) => format!("the journal {} could not be used ({why}); moved to {}", path.display(), to.display()),
        Err(e) => format!("the journal {} could not be used ({why}), nor moved aside: {e}", path.display()),
    };
    tracing::error!("{said}; a new journal is started");
    moved.map_err(|_| said.clone())?;
    let conn = open_at(path).map_err(|e| format!("{said}; and a new one cannot be made either: {e}"))?;
    Ok(Opened { conn, replaced: Some(said) })
}

fn open_at(path: &Path) -> Result<Connection, Unusable> {
    make_private(path).map_err(Unusable::File)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_WAIT)?;
    // The log that survives a crash of the process at any moment; `NORMAL` syncs at each
    // WAL checkpoint, not each commit: a power cut can lose the last commits, never the
    // database.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Unusable::Setup(format!("SQLite would not use its write-ahead log (journal_mode is {mode})")));
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
    // Freed pages are not zeroed as they go (each new state of a session frees the last:
    // zeroing them doubled the writes); `forget` turns it on for its deletes and rebuilds
    // the file, so nothing it removes stays in a free page.
    conn.pragma_update(None, "secure_delete", false)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // A corrupt file opens fine and fails at the first read: read it now.
    let _: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    schema::migrate(&mut conn)?;
    Ok(conn)
}

/// Creates the database file, if missing, readable by this user alone: SQLite gives its
/// `-wal` and `-shm` files the database file's mode. A link at its name is refused.
fn make_private(path: &Path) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    match o.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(path)?;
            if !meta.file_type().is_file() {
                return Err(std::io::Error::other(format!("{} is not a regular file", path.display())));
            }
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                if meta.permissions().mode() & 0o077 != 0 {
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
                }
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Moves the database and its `-wal` and `-shm` files to `journal.db.broken-<time>`.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let to = ccmem_proto::files::atomic::with_suffix(path, &format!(".broken-{stamp}"));
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::rename(path, &to)?;
    }
    for side in ["-wal", "-shm"] {
        let from = ccmem_proto::files::atomic::with_suffix(path, side);
        if std::fs::symlink_metadata(&from).is_ok() {
            let _ = std::fs::rename(&from, ccmem_proto::files::atomic::with_suffix(&to, side));
        }
    }
    Ok(to)
}
