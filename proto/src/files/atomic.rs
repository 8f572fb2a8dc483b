//! Atomic file replacement: a crash at any instant leaves the old file or the new one
//! whole, never a torn one.
//!
//! Write a temp file in the same directory, fsync it, rename it over the target, fsync the
//! directory. The optional `.bak` is a hard link to the previous file, made before the
//! rename, so there is no moment without a whole copy of either.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Marker in temp-file names, so leftovers of a crash can be recognised and removed.
pub const TMP_MARK: &str = ".tmp-";

/// Replaces `path` with `bytes` atomically. With `backup`, the previous content (if any) is
/// kept as `<path>.bak`, itself replaced atomically.
pub fn write(path: &Path, bytes: &[u8], backup: bool) -> io::Result<()> {
    let dir = parent(path)?;
    let tmp = temp_name(path);
    let result = (|| {
        let mut f = create_new(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        if backup {
            keep_backup(path)?;
        }
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes temp files a crash left beside `path` (only this daemon writes there).
pub fn remove_leftovers(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else { return };
    let prefix = format!("{name}{TMP_MARK}");
    let bak_prefix = format!("{name}.bak{TMP_MARK}");
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(&prefix) || n.starts_with(&bak_prefix) {
            let _ = fs::remove_file(e.path());
        }
    }
}

fn keep_backup(path: &Path) -> io::Result<()> {
    let bak = with_suffix(path, ".bak");
    let bak_tmp = temp_name(&bak);
    match fs::hard_link(path, &bak_tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        // File systems without hard links: copy, and fsync the copy.
        Err(_) => match fs::copy(path, &bak_tmp) {
            Ok(_) => File::open(&bak_tmp)?.sync_all()?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        },
    }
    fs::rename(&bak_tmp, &bak).inspect_err(|_| {
        let _ = fs::remove_file(&bak_tmp);
    })
}

fn create_new(p: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o644);
    o.open(p)
}

fn temp_name(path: &Path) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    with_suffix(path, &format!("{TMP_MARK}{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn parent(path: &Path) -> io::Result<&Path> {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} has no directory", path.display())))
}

/// Makes a rename in `dir` durable.
#[cfg(unix)]
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Directories cannot be opened for syncing on Windows; NTFS journals the rename.
#[cfg(not(unix))]
pub fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_keeps_a_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("state.json");
        write(&p, b"one", true).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        assert!(!with_suffix(&p, ".bak").exists(), "nothing to back up the first time");
        write(&p, b"two", true).unwrap();
        write(&p, b"three", true).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"three");
        assert_eq!(fs::read(with_suffix(&p, ".bak")).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "no temp files left: {names:?}");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("missing-dir/state.json");
        assert!(write(&p, b"x", true).is_err());
        let q = tmp.path().join("s.json");
        write(&q, b"old", false).unwrap();
        fs::write(with_suffix(&q, &format!("{TMP_MARK}1-1")), b"torn").unwrap();
        remove_leftovers(&q);
        let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("s.json")]);
    }
}
