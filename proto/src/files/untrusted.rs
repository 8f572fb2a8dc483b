//! Reading a project's files, which are untrusted input: a cloned repository can hold a
//! FIFO where a task list should be, or a symbolic link to `/dev/zero` as its
//! `package.json` (git tracks links). A size taken from `metadata()` says nothing for such
//! files (a device reports 0), so the checks are made on the open file: only a regular file
//! is read, it is opened without blocking (a FIFO with no writer would block `open` and
//! `read` for ever), and at most `max` bytes are read whatever it claims.

use std::io::{self, Read};
use std::path::Path;

/// Opens the regular file at `path` (links followed) without blocking, refusing anything
/// else at once; returns it with its metadata, taken on the open file.
pub fn open(path: &Path) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let f = o.open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok((f, meta))
}

/// Reads the regular file at `path` (links followed), refusing anything else at once and
/// any file over `max` bytes.
pub fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let (f, meta) = open(path)?;
    if meta.len() > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{} is over {max} bytes", path.display())));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the check and the read: the cap holds either way.
    f.take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{} is over {max} bytes", path.display())));
    }
    Ok(buf)
}

/// Refuses a `path` whose real location (links resolved) is not inside `root`: a
/// repository can make its `tasks.md`, `package.json` or a memory file a link to
/// `~/.ssh/id_rsa` or to another project, and what ccmem reads from a project goes into
/// its checkpoint, report and the agent's context. Links that stay inside are followed.
pub fn within(root: &Path, path: &Path) -> io::Result<()> {
    let real = std::fs::canonicalize(path)?;
    let root = std::fs::canonicalize(root)?;
    if real.starts_with(&root) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} leads out of the project (to {}): not read", path.display(), real.display()),
        ))
    }
}

/// [`read_string`] of a project's file, refused when it leads out of `root` ([`within`]).
pub fn read_string_in(root: &Path, path: &Path, max: u64) -> io::Result<String> {
    read_in(root, path, max).map(text)
}

/// [`read`] of a project's file, refused when it leads out of `root` ([`within`]).
pub fn read_in(root: &Path, path: &Path, max: u64) -> io::Result<Vec<u8>> {
    within(root, path)?;
    read(path, max)
}

/// Makes `dir` and the directories between `anchor` and it, refusing to go through a
/// symbolic link below `anchor`: a repository can make `.claude` (or `.claude/memory`, or
/// `.git/info`) a link to another project's directory, and what ccmem writes must stay where
/// it belongs.
pub fn create_dir_under(anchor: &Path, dir: &Path) -> io::Result<()> {
    super::dir::Dir::open_under(anchor, dir, true).map(drop)
}

/// [`read`] as UTF-8 text (invalid bytes replaced).
pub fn read_string(path: &Path, max: u64) -> io::Result<String> {
    read(path, max).map(text)
}

/// Bytes read as UTF-8 text, invalid sequences replaced.
pub fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Makes a FIFO at `p` (mode 0600): what a hostile repository can hold where a file is
/// expected, for the tests of every reader of untrusted files.
#[cfg(unix)]
pub fn mkfifo(p: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    // Every test here needs Unix (see each one's ignore reason).
    #[cfg_attr(not(unix), allow(unused_imports))]
    use super::*;

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: symbolic links, a FIFO and /dev/zero")]
    fn only_regular_files_within_the_limit_are_read() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let f = tmp.path().join("tasks.md");
            std::fs::write(&f, "- [ ] one\n").unwrap();
            assert_eq!(read_string(&f, 100).unwrap(), "- [ ] one\n");
            assert!(read(&f, 4).is_err(), "over the limit");
            let zero = tmp.path().join("package.json");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            let t = std::time::Instant::now();
            assert!(read(&zero, 1 << 20).is_err(), "a link to a device");
            let fifo = tmp.path().join("fifo.md");
            mkfifo(&fifo).unwrap();
            assert!(read(&fifo, 1 << 20).is_err(), "a FIFO with no writer");
            assert!(read(tmp.path(), 1 << 20).is_err(), "a directory");
            assert!(t.elapsed() < std::time::Duration::from_secs(5), "nothing blocked");
        }
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: made with Unix symbolic links")]
    fn links_are_followed_only_inside_the_root() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("p");
            std::fs::create_dir_all(root.join("docs")).unwrap();
            std::fs::write(root.join("docs/tasks.md"), "- [ ] in\n").unwrap();
            std::fs::write(tmp.path().join("secret"), "key\n").unwrap();
            std::os::unix::fs::symlink("docs/tasks.md", root.join("TODO.md")).unwrap();
            std::os::unix::fs::symlink("../secret", root.join("tasks.md")).unwrap();
            std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
            assert_eq!(read_string_in(&root, &root.join("TODO.md"), 100).unwrap(), "- [ ] in\n");
            let e = read_string_in(&root, &root.join("tasks.md"), 100).unwrap_err();
            assert!(e.to_string().contains("leads out of the project"), "{e}");
            assert!(read_in(&root, &root.join("up/secret"), 100).is_err(), "through a linked directory");
            // A root reached through a link is the same root.
            let alias = tmp.path().join("alias");
            std::os::unix::fs::symlink(&root, &alias).unwrap();
            assert!(read_in(&alias, &alias.join("docs/tasks.md"), 100).is_ok());
        }
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: made with Unix symbolic links")]
    fn directories_are_made_but_never_through_a_link() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("p");
            std::fs::create_dir(&root).unwrap();
            create_dir_under(&root, &root.join(".claude/memory/local")).unwrap();
            assert!(root.join(".claude/memory/local").is_dir());
            let other = tmp.path().join("other");
            std::fs::create_dir(&other).unwrap();
            let evil = tmp.path().join("evil");
            std::fs::create_dir(&evil).unwrap();
            std::os::unix::fs::symlink(&other, evil.join(".claude")).unwrap();
            let e = create_dir_under(&evil, &evil.join(".claude/memory")).unwrap_err();
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
            assert!(!other.join("memory").exists(), "nothing made in the link's target");
        }
    }
}
