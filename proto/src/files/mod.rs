//! Files written whole or not at all, and files read from a repository without trusting it.

pub mod atomic;
pub mod untrusted;

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
