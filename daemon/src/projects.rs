//! Projects and their sessions.
//!
//! A project is identified by its root: the git top-level of a path, else the path itself,
//! canonicalised. Each live project will be owned by a task of its own that receives
//! messages; this registry only maps roots to those tasks. The sessions issue fills it; the
//! shutdown path already asks every live project for its final checkpoint.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokio::sync::{mpsc, oneshot};

/// Messages a project task accepts.
#[derive(Debug)]
pub enum Command {
    /// Write a checkpoint now, then answer.
    Checkpoint {
        /// Why.
        reason: CheckpointReason,
        /// Answered once written (or failed, which the task logs).
        done: oneshot::Sender<()>,
    },
}

/// Why a checkpoint is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointReason {
    /// The daemon is stopping.
    Shutdown,
}

/// Roots of live projects mapped to their tasks' mailboxes. The lock guards only the map,
/// never a session.
#[derive(Debug, Default)]
pub struct Projects {
    live: Mutex<HashMap<PathBuf, mpsc::Sender<Command>>>,
}

impl Projects {
    /// Whether `root` has a live session.
    pub fn is_live(&self, root: &Path) -> bool {
        self.lock().contains_key(root)
    }

    /// Number of live projects.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no project is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Asks every live project for its final checkpoint and waits for all of them.
    pub async fn final_checkpoint_all(&self) {
        let mailboxes: Vec<_> = self.lock().iter().map(|(root, tx)| (root.clone(), tx.clone())).collect();
        tracing::info!(projects = mailboxes.len(), "final checkpoint of every live project");
        let mut waits = Vec::with_capacity(mailboxes.len());
        for (root, tx) in mailboxes {
            let (done, wait) = oneshot::channel();
            if tx.send(Command::Checkpoint { reason: CheckpointReason::Shutdown, done }).await.is_ok() {
                waits.push((root, wait));
            }
        }
        for (root, wait) in waits {
            if wait.await.is_err() {
                tracing::warn!(project = %root.display(), "project task ended before its final checkpoint");
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, mpsc::Sender<Command>>> {
        // The map holds no invariant a panicking holder could break.
        self.live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The project root for `path`: the nearest ancestor (or itself) holding `.git` (a directory,
/// or a file for worktrees and submodules), else the canonical path itself.
pub fn resolve_root(path: &Path) -> io::Result<PathBuf> {
    let canon = std::fs::canonicalize(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {}: {e}", path.display())))?;
    let dir = if canon.is_dir() { canon } else { canon.parent().map(Path::to_path_buf).unwrap_or(canon) };
    Ok(dir.ancestors().find(|a| a.join(".git").exists()).unwrap_or(&dir).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_the_git_toplevel_else_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let plain = base.join("plain/sub");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(resolve_root(&plain).unwrap(), plain);

        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join("src/deep/f.rs"), "").unwrap();
        assert_eq!(resolve_root(&repo.join("src/deep")).unwrap(), repo);
        assert_eq!(resolve_root(&repo.join("src/deep/f.rs")).unwrap(), repo);
        assert_eq!(resolve_root(&repo.join("src/deep/../deep")).unwrap(), repo);

        let wt = base.join("worktree");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(resolve_root(&wt).unwrap(), wt);

        assert!(resolve_root(&base.join("missing")).is_err());
    }

    #[tokio::test]
    async fn final_checkpoint_with_no_projects_returns() {
        let p = Projects::default();
        assert!(p.is_empty());
        p.final_checkpoint_all().await;
    }
}
