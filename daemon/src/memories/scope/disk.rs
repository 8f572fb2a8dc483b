//! Where a scope keeps its files, and the checks that keep its writes inside its own directory.

use super::*;

impl ScopeStore {
    /// Removes the temp files a crash left in the directory (`index.json.tmp-…`,
    /// `x.md.tmp-…`): only this thread writes there, and while it loads the scope it writes
    /// nothing, so every one is a leftover. The project's directory is committed: they would
    /// show in `git status`.
    pub(super) fn sweep_temp_files(&self) {
        let dirs = [self.own_dir().map(Path::to_path_buf), self.cache_path()];
        for dir in dirs.into_iter().flatten() {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let name = e.file_name();
                // A repository's tracked file that looks like one is the repository's.
                let tracked =
                    || self.project_root().is_some_and(|r| crate::observe::git::tracked(r, &e.path()) == Some(true));
                if atomic::is_temp_name(&name.to_string_lossy(), None)
                    && e.file_type().is_ok_and(|t| t.is_file())
                    && !tracked()
                {
                    match fs::remove_file(e.path()) {
                        Ok(()) => tracing::info!(file = %e.path().display(), "removed a temp file left by a crash"),
                        Err(err) => {
                            tracing::warn!(file = %e.path().display(), error = %err, "cannot remove a leftover temp file")
                        }
                    }
                }
            }
        }
    }

    /// Makes the scope's directory. A project's (`<root>/.claude/memory`, `…/local`) is never
    /// made through a symbolic link inside the project: the repository could point it at
    /// another project's memories.
    /// The project a project or local scope belongs to (what its files must stay inside).
    pub(super) fn project_root(&self) -> Option<&Path> {
        match self.scope {
            Scope::Project | Scope::Local => {
                self.dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == ".claude")).and_then(Path::parent)
            }
            Scope::Global | Scope::Enterprise => None,
        }
    }

    /// The scope's directory, unless a link takes it elsewhere: for a project's scopes, the
    /// directory must be where it says (no link on the way from the project root, which is
    /// canonical). What is read, written and deleted by name there stays in the project.
    pub fn own_dir(&self) -> Option<&Path> {
        match self.project_root() {
            Some(_) => ccmem_proto::files::within::canonical(&self.dir)
                .map_or(true, |real| real == self.dir)
                .then_some(&self.dir),
            None => Some(&self.dir),
        }
    }

    /// The embedding cache directory, unless it (or the scope's directory) is a link: a
    /// repository can make `.embedding-cache` point at `~/.claude`, and cache files are
    /// written, listed and deleted by name.
    pub fn cache_path(&self) -> Option<PathBuf> {
        let d = self.own_dir()?.join(&self.cache_dir);
        match fs::symlink_metadata(&d) {
            Ok(m) if !m.is_dir() => None,
            _ => Some(d),
        }
    }

    /// Reads one of the scope's files; a project's may not lead out of the project.
    pub(super) fn read_own(&self, path: &Path, max: u64) -> io::Result<Vec<u8>> {
        match self.project_root() {
            Some(root) => ccmem_proto::files::untrusted::read_in(root, path, max),
            None => ccmem_proto::files::untrusted::read(path, max),
        }
    }

    /// Replaces one of the scope's files atomically; a project's never through a link on
    /// the way from the project root, whatever is put there between two steps.
    pub(super) fn write_own(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        match self.project_root() {
            // A repository, or its `.claude/`, another user owns is left alone.
            Some(root) => match ccmem_proto::files::owned_by_another(root) {
                Some(why) => Err(io::Error::new(io::ErrorKind::PermissionDenied, why)),
                None => atomic::write_in(root, path, bytes, false),
            },
            None => atomic::write(path, bytes, false),
        }
    }

    pub(super) fn make_dir(&self) -> io::Result<()> {
        match self.project_root() {
            // Not even a directory in a repository another user owns.
            Some(root) => match ccmem_proto::files::owned_by_another(root) {
                Some(why) => Err(io::Error::new(io::ErrorKind::PermissionDenied, why)),
                None => ccmem_proto::files::untrusted::create_dir_under(root, &self.dir),
            },
            None => fs::create_dir_all(&self.dir),
        }
    }

    /// Creates the directory, with the ignore file that keeps derived files (and the whole
    /// local scope) out of git, unless one is there.
    pub(super) fn prepare_dir(&self) -> io::Result<()> {
        // Also for the first memory of a directory made by someone else (the local scope's
        // directory makes the project's).
        self.make_dir()?;
        if !self.memories.is_empty() {
            return Ok(());
        }
        let ignore = match self.scope {
            Scope::Local => Some("# ccmem: the local scope is never committed\n*\n"),
            Scope::Project => {
                Some("# ccmem: derived files, rebuilt from the memories\nindex.json\n.embedding-cache/\n")
            }
            Scope::Global | Scope::Enterprise => None,
        };
        if let Some(text) = ignore {
            let path = self.dir.join(".gitignore");
            if !path.exists() {
                self.write_own(&path, text.as_bytes())?;
            }
        }
        Ok(())
    }
}
