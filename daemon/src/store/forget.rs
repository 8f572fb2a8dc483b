//! What `ccmemctl forget` removes from the state dir: archives and trackers rewritten
//! without a text or a conversation, a session's archive, a project's whole directory.

use super::{Store, FACTS, SESSIONS, TRACKER};
use ccmem_proto::files::atomic;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

impl Store {
    /// The project directories in scope: `root`'s, or every one.
    fn dirs(&self, root: Option<&Path>) -> Vec<PathBuf> {
        match root {
            Some(r) => vec![self.project_dir(r)],
            None => fs::read_dir(self.root.join("projects"))
                .map(|rd| rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect())
                .unwrap_or_default(),
        }
    }

    /// Every JSON file in scope (trackers, archives, facts) that `change` changes: rewritten
    /// (when `apply`) and listed.
    pub fn rewrite_json(
        &self,
        root: Option<&Path>,
        apply: bool,
        change: &dyn Fn(&mut serde_json::Value) -> bool,
    ) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for dir in self.dirs(root) {
            let mut files = vec![dir.join(TRACKER), dir.join(FACTS)];
            if let Ok(rd) = fs::read_dir(dir.join(SESSIONS)) {
                files.extend(rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")));
            }
            for f in files {
                let Ok(bytes) = fs::read(&f) else { continue };
                let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&bytes) else { continue };
                if !change(&mut v) {
                    continue;
                }
                if apply {
                    let text = serde_json::to_vec_pretty(&v).map_err(io::Error::other)?;
                    atomic::write(&f, &text, false)?;
                }
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Removes the archive of session `sid` (in `root`'s directory, or any); lists what went.
    pub fn remove_archive(&self, root: Option<&Path>, sid: &str, apply: bool) -> io::Result<Vec<PathBuf>> {
        // An id is a name, never a path.
        if sid.is_empty() || sid.contains(['/', '\\']) || sid.starts_with('.') {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for dir in self.dirs(root) {
            let f = dir.join(SESSIONS).join(format!("{sid}.json"));
            if f.is_file() {
                if apply {
                    fs::remove_file(&f)?;
                }
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Removes a project's directory in the state dir (its tracker, archives and facts).
    pub fn remove_project(&self, root: &Path, apply: bool) -> io::Result<Option<PathBuf>> {
        let dir = self.project_dir(root);
        if !dir.is_dir() {
            return Ok(None);
        }
        if apply {
            fs::remove_dir_all(&dir)?;
        }
        Ok(Some(dir))
    }
}
