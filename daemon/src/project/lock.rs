//! One daemon per project. Two daemons can run for one user — started on another socket,
//! under `sudo` or in a tmux with another `XDG_RUNTIME_DIR` — and share nothing but the
//! projects they are told of: the second overwrote a live project's checkpoint with an empty
//! session. So the lock lives where both see it, beside the state files in the project's
//! `.claude/`: a file locked (`flock`, `LockFileEx`) for as long as a daemon keeps the
//! project's session, naming that daemon. Another daemon leaves the project alone and says
//! why; a daemon that dies releases the lock with its last descriptor.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file, relative to the project root.
pub const LOCK_FILE: &str = ".claude/.ccmemd.lock";

/// What taking a project's lock came to.
#[derive(Debug)]
pub enum Taken {
    /// This daemon keeps the project: the file holds the lock while it is open.
    Mine(File),
    /// Another daemon keeps it: why this one leaves it alone.
    Elsewhere(String),
    /// This process already holds it (a session starting at this very moment).
    Ours,
    /// No lock could be had (a read-only tree, a `.claude` link, a file system without
    /// locks): the project is kept without one, as before there was a lock.
    None(String),
}

/// Takes the lock of the project at `root` for this daemon, serving on `socket`.
pub fn take(root: &Path, socket: &Path) -> Taken {
    let path = root.join(LOCK_FILE);
    let mut file = match open(root, &path) {
        Ok(f) => f,
        Err(e) => return Taken::None(format!("cannot lock {}: {e}", path.display())),
    };
    match file.try_lock() {
        Ok(()) => {
            let me = format!("{} {}\n", std::process::id(), socket.display());
            let written = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(me.as_bytes()));
            if let Err(e) = written {
                tracing::debug!(lock = %path.display(), error = %e, "cannot write the lock's owner");
            }
            Taken::Mine(file)
        }
        Err(std::fs::TryLockError::WouldBlock) => match holder_of(&mut file) {
            Some((pid, _)) if pid == std::process::id() => Taken::Ours,
            Some((pid, socket)) => Taken::Elsewhere(elsewhere(root, pid, &socket)),
            None => Taken::Elsewhere(elsewhere(root, 0, Path::new("?"))),
        },
        Err(std::fs::TryLockError::Error(e)) => Taken::None(format!("cannot lock {}: {e}", path.display())),
    }
}

/// Why a project locked by another daemon is left alone, when it is: for `status` of a
/// project this daemon has no session for. Takes the lock for a moment to know.
pub fn held_elsewhere(root: &Path) -> Option<String> {
    let path = root.join(LOCK_FILE);
    // Only an existing file: asking must not create `.claude` in every directory looked at.
    std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file())?;
    let mut file = open(root, &path).ok()?;
    match file.try_lock() {
        Ok(()) => None, // released when `file` closes
        Err(std::fs::TryLockError::WouldBlock) => match holder_of(&mut file) {
            Some((pid, _)) if pid == std::process::id() => None,
            Some((pid, socket)) => Some(elsewhere(root, pid, &socket)),
            None => Some(elsewhere(root, 0, Path::new("?"))),
        },
        Err(_) => None,
    }
}

fn elsewhere(root: &Path, pid: u32, socket: &Path) -> String {
    let who = if pid == 0 {
        "another ccmemd".to_string()
    } else {
        format!("another ccmemd (pid {pid}, socket {})", socket.display())
    };
    format!(
        "{who} keeps the session of {}: this daemon leaves the project alone (one daemon per project; \
         stop the other, or use its socket)",
        root.display()
    )
}

/// Opens (creating) the lock file inside the project, never through a link: a repository's
/// `.claude/.ccmemd.lock` pointing at `~/.bashrc` must not be truncated.
fn open(root: &Path, path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        ccmem_proto::files::untrusted::create_dir_under(root, dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a symbolic link: ccmem does not write through it",
        ));
    }
    let file = opts.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

/// The pid and socket the lock file names.
fn holder_of(file: &mut File) -> Option<(u32, PathBuf)> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(4096).read_to_string(&mut text).ok()?;
    let (pid, socket) = text.trim().split_once(' ')?;
    Some((pid.parse().ok()?, PathBuf::from(socket)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_named_and_a_link_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let Taken::Mine(held) = take(root, Path::new("/run/a.sock")) else { panic!("the first takes it") };
        // The same process again: a session starting at this moment, not another daemon.
        assert!(matches!(take(root, Path::new("/run/a.sock")), Taken::Ours));
        assert_eq!(held_elsewhere(root), None, "held by this process");
        drop(held);
        assert!(matches!(take(root, Path::new("/run/b.sock")), Taken::Mine(_)), "free again once closed");
        // A link planted by a repository.
        let other = tempfile::tempdir().unwrap();
        let victim = other.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let linked = other.path().join("proj");
        std::fs::create_dir_all(linked.join(".claude")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&victim, linked.join(LOCK_FILE)).unwrap();
        #[cfg(unix)]
        assert!(matches!(take(&linked, Path::new("/s")), Taken::None(_)));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    }
}
