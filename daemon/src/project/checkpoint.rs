//! Writing a checkpoint: refresh git, save the session's whole state (journal or state dir), write
//! `<project>/.claude/.project-state.json` (seed 004, previous copy kept as `.bak`) and the
//! report `<project>/.claude/session-memory.md` (seed 000), and keep them out of git through
//! `.git/info/exclude`.
//!
//! Blocking: the project task runs it on the blocking pool.

use crate::{atomic, journal::Journal, observe::git, session::rules as session, store::Store};
use ccmem_proto::model::session::{CheckpointInfo, CheckpointReason, CheckpointType, Session};
use std::io;
use std::path::{Path, PathBuf};

/// The checkpoint file, relative to the project root.
pub const STATE_FILE: &str = ".claude/.project-state.json";

/// Lines that keep the daemon's files out of commits. The user's .gitignore is never touched.
const EXCLUDES: &[&str] = &[
    ".claude/.project-state.json",
    ".claude/.project-state.json.*",
    ".claude/session-memory.md",
    ".claude/session-memory.md.*",
    super::lock::LOCK_FILE,
    // The memories' derived files, also where `.claude/memory/` came with the repository
    // without ccmem's own `.gitignore` (a cloned or hand-made directory).
    ".claude/memory/index.json",
    ".claude/memory/.embedding-cache/",
    ".claude/memory/local/",
];

/// What a checkpoint achieved.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Set when the project file was written.
    pub written: Option<CheckpointInfo>,
    /// What failed, for the log and for status.
    pub errors: Vec<String>,
}

/// Where a checkpoint saves the session's whole state before it writes the project's file:
/// the journal, or the state dir's tracker file when there is no journal (or it could not
/// take it: locked by another program, its file removed). One copy, not two.
///
/// The journal's copy is queued by the project task as it takes the copy the checkpoint is
/// written from, in order with the events before it (a state says which events it holds:
/// one queued later, from a copy taken earlier, would claim events it lacks); the
/// checkpoint waits for it to be committed.
pub struct Saver {
    /// The state queued in the journal, until it is waited for.
    pub journaled: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The journal's file (a state dir removed under the daemon takes it away).
    pub journal_file: std::path::PathBuf,
    /// The state dir's files.
    pub store: Store,
    /// The journal holds the state: saving again is not needed.
    pub in_journal: bool,
}

impl Saver {
    /// Saves `s`, durably, before the checkpoint that names it.
    fn save(&mut self, s: &Session) -> io::Result<()> {
        if self.in_journal {
            return Ok(());
        }
        if let Some(done) = self.journaled.take() {
            let committed = Journal::wait_committed(done, SAVE_WAIT).and_then(|()| match self.journal_file.exists() {
                true => Ok(()),
                false => Err(io::Error::other("the journal's file is gone")),
            });
            match committed {
                Ok(()) => {
                    self.in_journal = true;
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the journal did not take the session's state: saved in the state dir")
                }
            }
        }
        self.store.save_tracker(s)
    }
}

/// How long a checkpoint waits for the journal to take the session's state.
const SAVE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Refreshes git, saves the session's state ([`Saver`]), then writes the project file. The
/// state goes first (already naming the checkpoint it precedes), so a crash between the two
/// never leaves a checkpoint of a session the daemon has no record of. Each step is tried
/// even if an earlier one failed: an unwritable project still gets its state saved.
pub fn run(
    s: &mut Session,
    reason: CheckpointReason,
    kind: CheckpointType,
    store: &mut Saver,
    exclude_done: &mut bool,
    comments: &mut crate::report::blockers::CommentCache,
) -> Outcome {
    let now = chrono::Utc::now();
    refresh_git(s);
    session::refresh(s, now);
    let tasks = refresh_from_disk(s);
    let mut out = Outcome::default();
    let foreign = ccmem_proto::files::owned_by_another(&s.project_root);
    if let Some(why) = &foreign {
        // Nothing in the project: not the exclude file, the report or the state file.
        *exclude_done = true;
        out.errors.push(format!("cannot write the checkpoint: {why}"));
    }
    // The exclude entries first: an agent's `git add -A` right after the first checkpoint
    // must not find the state files unexcluded.
    if !*exclude_done {
        match exclude_from_git(&s.project_root) {
            Ok(None) => *exclude_done = true,
            Ok(Some(refused)) => {
                *exclude_done = true;
                out.errors.push(refused);
            }
            Err(e) => out.errors.push(format!("cannot add the checkpoint files to .git/info/exclude: {e}")),
        }
    }
    let path = s.project_root.join(STATE_FILE);
    let bytes = session::checkpoint_file(s, reason, kind, now);
    let info = CheckpointInfo {
        timestamp: crate::clock::iso(now),
        reason,
        kind,
        bytes: bytes.len() as u64,
        // Where it went, for a reader (the tracker keeps this copy): redacted.
        path: std::path::PathBuf::from(ccmem_proto::redact::redact(&path.to_string_lossy()).into_owned()),
    };
    let previous = s.last_checkpoint.replace(info.clone());
    s.saved_at_ms = now.timestamp_millis();
    let saved = store.save(s);
    if let Err(e) = &saved {
        out.errors.push(format!("cannot save the session in the state dir: {e}"));
    }
    // The human-readable report beside it (seed 000), from the same session, written first:
    // whoever sees this checkpoint's state file finds its report already there.
    if foreign.is_some() {
        s.last_checkpoint = previous;
        if saved.is_ok() {
            let _ = store.save(s);
        }
        return out;
    }
    let memory = crate::report::session_memory::build(s, tasks.as_ref(), comments, now);
    if let Err(e) = crate::report::session_memory::write(&s.project_root, &memory) {
        out.errors.push(format!(
            "cannot write {}: {e}",
            s.project_root.join(crate::report::session_memory::REPORT_FILE).display()
        ));
    }
    match write_state(&s.project_root, &path, &bytes) {
        Ok(()) => out.written = Some(info),
        Err(e) => {
            out.errors.push(format!("cannot write the checkpoint {}: {e}", path.display()));
            s.last_checkpoint = previous;
            if saved.is_ok() {
                let _ = store.save(s);
            }
        }
    }
    out
}

/// Re-reads what the project's files say: dependencies, build outputs, the task list
/// (returned, so that a report made now need not read it again).
pub fn refresh_from_disk(s: &mut Session) -> Option<crate::observe::tasks::TaskList> {
    crate::session::environment::refresh_files(s);
    crate::observe::tasks::refresh(s)
}

/// Refreshes the git block and the line and commit counts since the session began.
pub fn refresh_git(s: &mut Session) {
    if s.git_start.is_none() {
        // Not a repository when the session began: maybe it is one now.
        s.git_start = git::head(&s.project_root);
    }
    match &s.git_start {
        Some(start) => {
            s.git = git::state(&s.project_root);
            let created: Vec<&str> =
                s.files_modified.iter().filter(|(_, r)| r.created).map(|(path, _)| &**path).collect();
            git::since(&s.project_root, start, &created, &mut s.activity_summary);
        }
        None => s.git = Default::default(),
    }
}

fn write_state(root: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic::remove_leftovers_but(root, path, &|p| git::tracked(root, p) == Some(true));
    atomic::write_in_private(root, path, bytes, true)
}

/// Adds the checkpoint files to the repository's `info/exclude` (the shared one for
/// worktrees), once. Outside git there is nothing to do. A git directory elsewhere that is
/// not this checkout's own (a `.git` file pointing into another repository) is left alone,
/// with the warning returned.
pub(super) fn exclude_from_git(root: &Path) -> io::Result<Option<String>> {
    let Some(exclude) = exclude_path(root) else { return Ok(None) };
    let Some(git_dir) = exclude.parent().and_then(Path::parent) else { return Ok(None) };
    if !git::own_git_dir(root, git_dir) {
        return Ok(Some(format!(
            "{} belongs to a git directory outside the project that is not its worktree's or submodule's: \
             ccmem does not change it (add .claude/.project-state.json* to your ignore rules yourself)",
            exclude.display()
        )));
    }
    // A git directory (or its `info`) another user owns is that user's: git itself refuses
    // it (safe.directory), and ccmem writes nothing there.
    for d in [git_dir, exclude.parent().unwrap_or(git_dir)] {
        if let Some((owner, me)) = ccmem_proto::files::foreign_owner(d) {
            return Ok(Some(format!(
                "{} is owned by uid {owner}, not by you (uid {me}): ccmem does not change {} (add \
                 .claude/.project-state.json* to your ignore rules yourself)",
                d.display(),
                exclude.display()
            )));
        }
    }
    // `info` must be the repository's own directory, not a link to another one's; the file
    // is read and replaced through the open directory, so that nothing swapped in between
    // (a link to `~/.ssh/id_rsa`, whose text would be copied in; a FIFO) is followed.
    let (Some(info), Some(name)) = (exclude.parent(), exclude.file_name()) else { return Ok(None) };
    let dir = ccmem_proto::files::dir::Dir::open_under(git_dir, info, true)?;
    let current = match dir.read_regular(name, 4 << 20) {
        Ok(b) => ccmem_proto::files::untrusted::text(b),
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) if e.to_string().contains("symbolic link") => {
            return Ok(Some(format!(
                "{} is a symbolic link: ccmem does not read or replace it (add .claude/.project-state.json* to your ignore rules yourself)",
                exclude.display()
            )))
        }
        Err(e) => return Err(e),
    };
    let missing: Vec<&str> = EXCLUDES.iter().copied().filter(|l| !current.lines().any(|c| c.trim() == *l)).collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# ccmem session checkpoints (local state, not for commits)\n");
    for l in missing {
        text.push_str(l);
        text.push('\n');
    }
    atomic::write_at(&dir, name, text.as_bytes(), false).map(|()| None)
}

fn exclude_path(root: &Path) -> Option<PathBuf> {
    match git::git_path(root, "info/exclude") {
        Some(p) => {
            let p = PathBuf::from(p);
            Some(if p.is_absolute() { p } else { root.join(p) })
        }
        // No git binary: a plain `.git` directory still has an exclude file.
        None => root.join(".git").is_dir().then(|| root.join(".git/info/exclude")),
    }
}
