//! The ignore rules: gitignore files, `.ignore`, git's excludes, and the trees never watched.

use super::*;

/// Ignore rules for single paths named by notifications: each directory's `.gitignore` and
/// `.ignore` from the root down (the deeper rule wins), the repository's exclude file and
/// git's global excludes. Matchers are built once per directory and dropped when their file
/// changes.
#[derive(Default)]
pub(super) struct Ignores {
    pub(super) per_dir: HashMap<String, Option<Arc<Gitignore>>>,
    pub(super) base: Vec<Gitignore>,
    /// The configuration's patterns (`watch.ignore`): they cover whole trees.
    pub(super) extra: Option<Arc<Gitignore>>,
}

/// Adds an ignore file's rules, read as any project file is: a regular file only (a link
/// to `/dev/zero` or a FIFO named `.gitignore` is skipped), within a size cap.
pub(super) fn add_ignore_file(b: &mut GitignoreBuilder, path: &Path) -> bool {
    let Ok(text) = ccmem_proto::files::untrusted::read_string(path, MAX_IGNORE_FILE) else { return false };
    for line in text.lines() {
        let _ = b.add_line(Some(path.to_path_buf()), line);
    }
    true
}

/// Largest ignore file read.
pub(super) const MAX_IGNORE_FILE: u64 = 4 << 20;

/// Whether the ignore files the walker would read in `dir` are all plain files (or absent):
/// the `ignore` crate reads them itself, following links and blocking on FIFOs, so a
/// directory holding another kind is not entered.
pub(super) fn ignore_files_are_plain(dir: &Path) -> bool {
    [".gitignore", ".ignore"].iter().all(|f| match std::fs::symlink_metadata(dir.join(f)) {
        Ok(m) => m.is_file() && m.len() <= MAX_IGNORE_FILE,
        Err(_) => true,
    })
}

impl Ignores {
    pub(super) fn new(root: &Path) -> Self {
        let mut base = Vec::new();
        let (global, _) = Gitignore::global();
        base.push(global);
        let mut b = GitignoreBuilder::new(root);
        add_ignore_file(&mut b, &root.join(".git/info/exclude"));
        if let Ok(g) = b.build() {
            base.push(g);
        }
        Self { per_dir: HashMap::new(), base, extra: None }
    }

    /// Adds the configuration's patterns (already checked when the configuration was read).
    pub(super) fn with_patterns(mut self, root: &Path, patterns: &[String]) -> Self {
        if !patterns.is_empty() {
            let mut b = GitignoreBuilder::new(root);
            for p in patterns {
                let _ = b.add_line(None, p);
            }
            self.extra = b.build().ok().map(Arc::new);
        }
        self
    }

    pub(super) fn forget(&mut self, rel_file: &str) {
        let dir = rel_file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        self.per_dir.remove(dir);
    }

    pub(super) fn matcher(&mut self, root: &Path, rel_dir: &str) -> Option<Arc<Gitignore>> {
        self.per_dir
            .entry(rel_dir.to_string())
            .or_insert_with(|| {
                let dir = if rel_dir.is_empty() { root.to_path_buf() } else { root.join(rel_dir) };
                let mut b = GitignoreBuilder::new(&dir);
                let mut any = false;
                for f in [".gitignore", ".ignore"] {
                    any |= add_ignore_file(&mut b, &dir.join(f));
                }
                any.then(|| b.build().ok().map(Arc::new)).flatten()
            })
            .clone()
    }

    pub(super) fn is_ignored(&mut self, root: &Path, rel: &str, is_dir: bool) -> bool {
        let path = root.join(rel);
        if self.extra.as_ref().is_some_and(|g| g.matched_path_or_any_parents(&path, is_dir).is_ignore()) {
            return true;
        }
        let mut verdict = None;
        for g in &self.base {
            match g.matched(&path, is_dir) {
                ignore::Match::Ignore(_) => verdict = Some(true),
                ignore::Match::Whitelist(_) => verdict = Some(false),
                ignore::Match::None => {}
            }
        }
        let comps: Vec<&str> = rel.split('/').collect();
        for depth in 0..comps.len() {
            let dir = comps[..depth].join("/");
            if let Some(g) = self.matcher(root, &dir) {
                // Rules apply to the path and to every directory on the way to it.
                for k in depth + 1..=comps.len() {
                    let sub = root.join(comps[..k].join("/"));
                    match g.matched(&sub, k < comps.len() || is_dir) {
                        ignore::Match::Ignore(_) => verdict = Some(true),
                        ignore::Match::Whitelist(_) => verdict = Some(false),
                        ignore::Match::None => {}
                    }
                }
            }
        }
        verdict.unwrap_or(false)
    }
}
