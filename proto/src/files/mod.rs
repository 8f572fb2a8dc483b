//! Files written whole or not at all, and files read from a repository without trusting it.

pub mod atomic;
pub mod dir;
pub mod untrusted;
pub mod within;

/// A directory's identity: its device and inode (none where the system has no such thing).
/// A directory made again at a path after the first was moved away has another.
pub fn dir_id(path: &std::path::Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Whether `path` is still the directory whose identity was `known` ([`dir_id`]); with none
/// known (a system without identities), whether it is a directory at all.
pub fn is_same_dir(path: &std::path::Path, known: Option<(u64, u64)>) -> bool {
    match known {
        Some(_) => dir_id(path) == known,
        None => std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()),
    }
}

/// The owner of `path` itself (a link is not followed), when it is not this user: `(owner,
/// me)`. None for this user's own, a path that is not there, and where the system has no
/// owners.
pub fn foreign_owner(path: &std::path::Path) -> Option<(u32, u32)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = crate::wire::paths::euid();
        let owner = std::fs::symlink_metadata(path).ok()?.uid();
        (owner != me).then_some((owner, me))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Why ccmem writes nothing in the directory `root`: it belongs to another user. A daemon
/// working in someone else's repository (a shared checkout, a colleague's home read through
/// group permissions) would otherwise make its `.claude/` and `.git/info/exclude` files its
/// own; like git's `safe.directory`, ccmem leaves such a repository's files alone. `None`
/// for this user's own directory (and where the system has no owners).
pub fn owned_by_another(root: &std::path::Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = crate::wire::paths::euid();
        // The root, and the directories ccmem writes in under it when they are there: a
        // co-user who made `.claude/` in this user's repository could replace what ccmem
        // writes in it.
        let root_owner = std::fs::metadata(root).ok()?.uid();
        // `.git` too: git itself refuses a repository whose `.git` another user owns
        // (safe.directory), and ccmem could not keep its files out of that user's commits.
        let inner = [root.join(".git"), root.join(".git/info"), root.join(".claude"), root.join(".claude/memory")];
        let (dir, owner) = std::iter::once((root.to_path_buf(), root_owner))
            .chain(inner.into_iter().filter_map(|d| std::fs::symlink_metadata(&d).ok().map(|m| (d, m.uid()))))
            .find(|(_, uid)| *uid != me)?;
        let what = if dir == root {
            "a repository another user owns".to_string()
        } else {
            let name = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
            format!("a repository whose `{name}` another user owns")
        };
        Some(format!(
            "{} is owned by uid {owner}, not by you (uid {me}): ccmem leaves {what} alone, as git's safe.directory does",
            dir.display()
        ))
    }
    #[cfg(not(unix))]
    {
        let _ = root;
        None
    }
}
