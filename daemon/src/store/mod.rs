//! The daemon's own records, in its state dir (`$XDG_STATE_HOME/ccmem/`):
//!
//! ```text
//! projects/<name>-<hash>/tracker.json              the live session (seed 001's tracker)
//! projects/<name>-<hash>/sessions/<session_id>.json  ended sessions, the newest N kept
//! ```
//!
//! `<name>` is the project directory's name, redacted (a directory named after a token
//! must not name the state dir after it), `<hash>` the hash of its whole path. The live
//! tracker keeps the project's path as it is: it is how the session is found and watched
//! again when the daemon starts. Archived sessions, which are only read back for history,
//! keep it redacted.
//!
//! Every write is atomic. A file that cannot be read back is moved aside as
//! `<file>.corrupt-<timestamp>` and reported, never silently dropped.

use crate::atomic;
use crate::text::fnv1a;
use ccmem_proto::model::session::{ArchivedSession, EndReason, Session};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

mod forget;

const TRACKER: &str = "tracker.json";
/// Seed 002 names the facts file memory.json; kept for existing stores.
const FACTS: &str = "memory.json";
const SESSIONS: &str = "sessions";

/// The state dir and its retention setting.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    keep_sessions: usize,
}

/// A tracker found at start-up.
#[derive(Debug)]
pub enum Found {
    /// Readable.
    Session(Box<Session>),
    /// Unreadable; moved aside to the path given.
    Corrupt { moved_to: PathBuf, error: String },
}

impl Store {
    /// A store under `state_dir`, keeping the newest `keep_sessions` ended sessions per project.
    pub fn new(state_dir: PathBuf, keep_sessions: usize) -> Self {
        Self { root: state_dir, keep_sessions: keep_sessions.max(1) }
    }

    /// How many ended sessions `history` lists.
    pub fn keep_sessions(&self) -> usize {
        self.keep_sessions
    }

    /// The directory for one project: its redacted, readable name plus a stable hash of the
    /// full path (which keeps two projects apart whatever their names redact to).
    pub fn project_dir(&self, project_root: &Path) -> PathBuf {
        let projects = self.root.join("projects");
        let hash = fnv1a(project_root.as_os_str().as_encoded_bytes());
        let name = project_root.file_name().map(|n| n.to_string_lossy());
        let shown = name.as_deref().map(ccmem_proto::redact::redact);
        let dir = projects.join(format!("{}-{hash:016x}", dir_name(shown.as_deref())));
        // Only a name that holds a secret changes: its directory, named before names were
        // redacted, is moved to the new name the first time it is looked for.
        if shown.as_deref() != name.as_deref() {
            let before = projects.join(format!("{}-{hash:016x}", dir_name(name.as_deref())));
            if !dir.exists() && before.exists() {
                if let Err(e) = fs::rename(&before, &dir) {
                    tracing::warn!(error = %e, "cannot rename a project's state dir to its redacted name; using the old one");
                    return before;
                }
            }
        }
        dir
    }

    /// Saves the live session.
    pub fn save_tracker(&self, s: &Session) -> io::Result<()> {
        let dir = self.project_dir(&s.project_root);
        ccmem_proto::wire::paths::create_private_dirs(&dir)?;
        let path = dir.join(TRACKER);
        atomic::write(&path, &to_json(s)?, false)
    }

    /// Forgets the live session (it was archived, or the project unwatched).
    pub fn remove_tracker(&self, project_root: &Path) -> io::Result<()> {
        match fs::remove_file(self.project_dir(project_root).join(TRACKER)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Archives an ended session and prunes the oldest beyond the limit. The archive is
    /// only read back for history: the project's path is kept redacted in it.
    pub fn archive(&self, ended: &ArchivedSession) -> io::Result<()> {
        let dir = self.project_dir(&ended.session.project_root).join(SESSIONS);
        ccmem_proto::wire::paths::create_private_dirs(&dir)?;
        let root = ended.session.project_root.to_string_lossy();
        let bytes = match ccmem_proto::redact::redact(&root) {
            std::borrow::Cow::Borrowed(_) => to_json(ended)?,
            std::borrow::Cow::Owned(shown) => {
                let mut copy = ended.clone();
                copy.session.project_root = PathBuf::from(shown);
                to_json(&copy)?
            }
        };
        atomic::write(&dir.join(format!("{}.json", ended.session.session_id)), &bytes, false)?;
        let mut ids = self.archived_ids(&ended.session.project_root);
        while ids.len() > self.keep_sessions {
            let oldest = ids.remove(0);
            let _ = fs::remove_file(dir.join(format!("{oldest}.json")));
        }
        Ok(())
    }

    /// Whether the project has ended sessions kept (the user has worked in it before).
    pub fn has_history(&self, project_root: &Path) -> bool {
        !self.archived_ids(project_root).is_empty()
    }

    /// Ended sessions of a project, newest first; unreadable ones are skipped with a warning.
    pub fn history(&self, project_root: &Path) -> Vec<ArchivedSession> {
        let dir = self.project_dir(project_root).join(SESSIONS);
        let mut out: Vec<ArchivedSession> = self
            .archived_ids(project_root)
            .iter()
            .rev()
            .filter_map(|id| {
                let p = dir.join(format!("{id}.json"));
                match fs::read(&p)
                    .map_err(|e| e.to_string())
                    .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
                {
                    Ok(a) => Some(a),
                    Err(e) => {
                        tracing::warn!(file = %p.display(), error = %e, "skipping unreadable archived session");
                        None
                    }
                }
            })
            .collect();
        out.truncate(self.keep_sessions);
        out
    }

    /// The newest ended session of a project, if one can be read.
    pub fn last_archived(&self, project_root: &Path) -> Option<ArchivedSession> {
        let id = self.archived_ids(project_root).pop()?;
        let p = self.project_dir(project_root).join(SESSIONS).join(format!("{id}.json"));
        let bytes = fs::read(&p).ok()?;
        serde_json::from_slice(&bytes)
            .map_err(|e| tracing::warn!(file = %p.display(), error = %e, "unreadable archived session"))
            .ok()
    }

    /// The newest session id this project has used, live or archived.
    pub fn last_session_id(&self, project_root: &Path) -> Option<String> {
        let live = fs::read(self.project_dir(project_root).join(TRACKER))
            .ok()
            .and_then(|b| serde_json::from_slice::<Session>(&b).ok())
            .map(|s| s.session_id);
        live.into_iter().chain(self.archived_ids(project_root).pop()).max()
    }

    /// Archived session ids, oldest first (ids sort by time).
    fn archived_ids(&self, project_root: &Path) -> Vec<String> {
        let mut ids: Vec<String> = fs::read_dir(self.project_dir(project_root).join(SESSIONS))
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_string))
                    .filter(|n| n.starts_with("session_"))
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// Every live tracker in the state dir, for restore at start-up.
    pub fn scan(&self) -> Vec<Found> {
        let Ok(dirs) = fs::read_dir(self.root.join("projects")) else { return Vec::new() };
        let mut found = Vec::new();
        for d in dirs.flatten() {
            let path = d.path().join(TRACKER);
            let bytes = match fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "cannot read tracker");
                    continue;
                }
            };
            match serde_json::from_slice::<Session>(&bytes) {
                Ok(s) if s.project_root.is_absolute() && !s.session_id.is_empty() => {
                    found.push(Found::Session(Box::new(s)))
                }
                Ok(_) => found.push(self.move_aside(&path, "missing project_root or session_id".into())),
                Err(e) => found.push(self.move_aside(&path, e.to_string())),
            }
        }
        found
    }

    fn move_aside(&self, path: &Path, error: String) -> Found {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let moved_to = atomic::with_suffix(path, &format!(".corrupt-{stamp}"));
        if let Err(e) = fs::rename(path, &moved_to) {
            tracing::error!(file = %path.display(), error = %e, "cannot move a corrupt tracker aside");
        }
        Found::Corrupt { moved_to, error }
    }
}

impl Store {
    /// A project's facts and goals (seed 002); empty when there are none yet. A corrupt file
    /// is moved aside and reported.
    pub fn load_facts(&self, project_root: &Path) -> ccmem_proto::model::facts::Facts {
        self.load_facts_at(&self.project_dir(project_root).join(FACTS))
    }

    /// Saves a project's facts and goals.
    pub fn save_facts(&self, project_root: &Path, m: &ccmem_proto::model::facts::Facts) -> io::Result<()> {
        let dir = self.project_dir(project_root);
        ccmem_proto::wire::paths::create_private_dirs(&dir)?;
        atomic::write(&dir.join(FACTS), &to_json(m)?, false)
    }

    /// The user-wide facts.
    pub fn load_global_facts(&self) -> ccmem_proto::model::facts::Facts {
        self.load_facts_at(&self.root.join(FACTS))
    }

    /// Saves the user-wide facts.
    pub fn save_global_facts(&self, m: &ccmem_proto::model::facts::Facts) -> io::Result<()> {
        ccmem_proto::wire::paths::create_private_dirs(&self.root)?;
        atomic::write(&self.root.join(FACTS), &to_json(m)?, false)
    }

    fn load_facts_at(&self, path: &Path) -> ccmem_proto::model::facts::Facts {
        match fs::read(path) {
            Ok(b) => match serde_json::from_slice(&b) {
                Ok(m) => m,
                Err(e) => {
                    if let Found::Corrupt { moved_to, .. } = self.move_aside(path, e.to_string()) {
                        tracing::error!(file = %path.display(), moved_to = %moved_to.display(), error = %e, "corrupt facts file moved aside");
                    }
                    Default::default()
                }
            },
            Err(_) => Default::default(),
        }
    }
}

/// What `history` reports of an archived session.
pub fn end_reason_text(r: EndReason) -> &'static str {
    match r {
        EndReason::Expired => "expired",
        EndReason::Reset => "reset",
        EndReason::Unwatched => "unwatched",
        EndReason::Restored => "restored",
        EndReason::Vanished => "directory gone",
        EndReason::Imported => "imported",
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> io::Result<Vec<u8>> {
    let mut b = serde_json::to_vec_pretty(v).map_err(io::Error::other)?;
    b.push(b'\n');
    Ok(b)
}

/// A project directory's name as a state dir's name part: letters, digits, `-` and `_`
/// (others become `_`), 40 characters at most.
fn dir_name(name: Option<&str>) -> String {
    match name {
        Some(n) => n
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(40)
            .collect(),
        None => "root".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(root: &Path, id: &str) -> Session {
        Session { session_id: id.into(), project_root: root.into(), ..Default::default() }
    }

    #[test]
    fn keeps_the_newest_sessions_and_lists_them_newest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().into(), 3);
        let root = Path::new("/work/my project");
        for i in 0..5 {
            let s = session(root, &format!("session_2026-01-0{}_00-00-00", i + 1));
            store.archive(&ArchivedSession { ended: EndReason::Reset, ended_at: String::new(), session: s }).unwrap();
        }
        let h: Vec<_> = store.history(root).into_iter().map(|a| a.session.session_id).collect();
        assert_eq!(h, ["session_2026-01-05_00-00-00", "session_2026-01-04_00-00-00", "session_2026-01-03_00-00-00"]);
        assert_eq!(store.last_session_id(root).as_deref(), Some("session_2026-01-05_00-00-00"));
        assert!(store.project_dir(root).file_name().unwrap().to_str().unwrap().starts_with("my_project-"));
        assert_ne!(store.project_dir(root), store.project_dir(Path::new("/other/my project")));
    }

    /// Found by the independent tester: a project directory named after a token named its
    /// state dir after it too.
    #[test]
    fn a_secret_in_the_projects_name_is_not_in_its_state_dirs_name() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().into(), 3);
        let root = Path::new("/tmp/proj_ghp_Pj7mE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zD7");
        let name = store.project_dir(root).file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("proj__REDACTED_github-token_-") && !name.contains("Pj7mE5"), "{name}");
        assert_ne!(
            store.project_dir(root),
            store.project_dir(Path::new("/tmp/proj_ghp_Qj7mE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zD8"))
        );
        // A plain name is as before.
        assert!(store.project_dir(Path::new("/w/app")).ends_with(format!("app-{:016x}", fnv1a(b"/w/app"))));
        // The directory it had before names were redacted is moved, with what it holds.
        let before = tmp.path().join("projects").join(format!(
            "proj_ghp_Pj7mE5fG7hJ9kL1mN3pQ5rS7tU9vW1x-{:016x}",
            fnv1a(root.as_os_str().as_encoded_bytes())
        ));
        fs::create_dir_all(&before).unwrap();
        fs::write(before.join(FACTS), r#"{"facts": ["kept"]}"#).unwrap();
        assert_eq!(store.load_facts(root).facts, ["kept"], "found at its new name");
        assert!(!before.exists() && store.project_dir(root).join(FACTS).exists());
        // An archived session names its project redacted; the live tracker as it is.
        let s = session(root, "session_2026-01-01_00-00-00");
        store.save_tracker(&s).unwrap();
        store.archive(&ArchivedSession { ended: EndReason::Reset, ended_at: String::new(), session: s }).unwrap();
        let archived = store.last_archived(root).unwrap();
        assert!(!archived.session.project_root.to_string_lossy().contains("Pj7mE5"));
        assert!(matches!(&store.scan()[..], [Found::Session(s)] if s.project_root == root));
    }

    #[test]
    fn corrupt_trackers_are_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().into(), 20);
        let good = Path::new("/p/good");
        store.save_tracker(&session(good, "session_2026-01-01_00-00-00")).unwrap();
        let bad_dir = store.project_dir(Path::new("/p/bad"));
        fs::create_dir_all(&bad_dir).unwrap();
        fs::write(bad_dir.join(TRACKER), b"{\"session_id\": \"x\", trunc").unwrap();
        let found = store.scan();
        assert_eq!(found.len(), 2);
        let corrupt = found.iter().find_map(|f| match f {
            Found::Corrupt { moved_to, .. } => Some(moved_to.clone()),
            _ => None,
        });
        let moved = corrupt.expect("the bad tracker is reported");
        assert!(moved.exists() && moved.to_string_lossy().contains(".corrupt-"));
        assert!(!bad_dir.join(TRACKER).exists());
        assert!(found.iter().any(|f| matches!(f, Found::Session(s) if s.project_root == good)));
    }
}
