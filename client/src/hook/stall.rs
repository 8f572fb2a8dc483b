//! A daemon that takes connections but does not answer (stopped with SIGSTOP, hung, its
//! machine swapping) cost every hook its whole wait: two seconds on each of an agent's
//! events. The first hook that waits in vain leaves a mark in the user's state directory
//! (one per socket) if the daemon does not answer a ping either (one project slow to answer
//! is not a stalled daemon); the hooks after it ask for [`WAIT`] only, and the first answer takes
//! the mark away. A mark older than [`HOLD`] is ignored: the next hook waits fully once
//! more (and marks again if in vain), so a daemon that stays stopped costs one full wait a
//! minute, not one per event.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a hook waits for a daemon that did not answer the last one.
pub(super) const WAIT: Duration = Duration::from_millis(300);
/// How long a mark holds.
const HOLD: Duration = Duration::from_secs(60);

/// The mark for `socket`: named by a hash of its path (a pipe's name on Windows).
fn path(socket: &Path) -> Option<PathBuf> {
    let dir = ccmem_proto::wire::paths::state_dir().ok()?;
    Some(named(&dir, socket))
}

fn named(dir: &Path, socket: &Path) -> PathBuf {
    // FNV-1a: stable across runs and releases, unlike the standard hasher.
    let hash = socket
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    dir.join(format!("stalled-{hash:016x}"))
}

/// Whether a hook waited in vain on `socket` lately.
pub(super) fn marked(socket: &Path) -> bool {
    let Some(p) = path(socket) else { return false };
    let Ok(meta) = std::fs::symlink_metadata(p) else { return false };
    let age = meta.modified().ok().and_then(|m| SystemTime::now().duration_since(m).ok());
    meta.is_file() && age.is_some_and(|a| a < HOLD)
}

/// Marks `socket` as not answering (or marks it again, now): an empty file made anew, so
/// that nothing planted at its name is followed or written.
pub(super) fn mark(socket: &Path) {
    let Some(p) = path(socket) else { return };
    if let Some(dir) = p.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(&p);
}

/// The daemon answered: hooks wait fully again.
pub(super) fn clear(socket: &Path) {
    if let Some(p) = path(socket) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each socket has its own mark (tests run many daemons side by side).
    #[test]
    fn each_socket_has_its_own_mark() {
        let dir = Path::new("/state");
        let a = named(dir, Path::new("/run/user/1000/ccmem/ccmemd.sock"));
        let b = named(dir, Path::new("/tmp/t1/ccmemd.sock"));
        assert_ne!(a, b);
        assert_eq!(a, named(dir, Path::new("/run/user/1000/ccmem/ccmemd.sock")));
        assert!(a.starts_with(dir));
    }
}
