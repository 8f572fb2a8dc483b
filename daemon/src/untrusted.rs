//! Reading a project's files, which are untrusted input: a cloned repository can hold a
//! FIFO where a task list should be, or a symbolic link to `/dev/zero` as its
//! `package.json` (git tracks links). A size taken from `metadata()` says nothing for such
//! files (a device reports 0), so the checks are made on the open file: only a regular file
//! is read, it is opened without blocking (a FIFO with no writer would block `open` and
//! `read` for ever), and at most `max` bytes are read whatever it claims.

use std::io::{self, Read};
use std::path::Path;

/// Reads the regular file at `path` (links followed), refusing anything else at once and
/// any file over `max` bytes.
pub fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
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

/// [`read`] as UTF-8 text (invalid bytes replaced).
pub fn read_string(path: &Path, max: u64) -> io::Result<String> {
    read(path, max).map(|b| String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
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
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo, 1 << 20).is_err(), "a FIFO with no writer");
        assert!(read(tmp.path(), 1 << 20).is_err(), "a directory");
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "nothing blocked");
    }
}
