//! Atomic file replacement: a crash at any instant leaves the old file or the new one
//! whole, never a torn one.
//!
//! Write a temp file in the same directory, fsync it, rename it over the target, fsync the
//! directory. The optional `.bak` is a hard link to the previous file, made before the
//! rename, so there is no moment without a whole copy of either.

use super::dir::Dir;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Marker in temp-file names, so leftovers of a crash can be recognised and removed.
pub const TMP_MARK: &str = ".tmp-";

/// Whether `name` is a temp file's name as [`temp_name`] makes them beside a file named
/// `of` (any file when None): `<of>.tmp-` and sixteen hexadecimal digits (or, as ccmem
/// before 0.1 named them, a process id and a count: `.tmp-11519-30`). Only such names are
/// swept as a crash's leftovers: a repository's own `README.tmp-notes` is not ccmem's.
pub fn is_temp_name(name: &str, of: Option<&str>) -> bool {
    let Some(i) = name.rfind(TMP_MARK) else { return false };
    let (base, tail) = (&name[..i], &name[i + TMP_MARK.len()..]);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let random = tail.len() == 16 && tail.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    let old = tail.split_once('-').is_some_and(|(pid, n)| digits(pid) && digits(n));
    (random || old) && !base.is_empty() && of.is_none_or(|of| base == of || base.strip_suffix(".bak") == Some(of))
}

/// Replaces `path` with `bytes` atomically. With `backup`, the previous content (if any) is
/// kept as `<path>.bak`, itself replaced atomically. For ccmem's own directories (the state
/// dir); a project's files go through [`write_in`].
pub fn write(path: &Path, bytes: &[u8], backup: bool) -> io::Result<()> {
    let (dir, name) = split(path)?;
    write_at(&Dir::open(dir)?, name, bytes, backup)
}

/// [`write`] of a file inside `anchor` (a project, its git directory): the directories from
/// `anchor` to the file are made where missing and opened one by one without following a
/// link ([`Dir::open_under`]), and every name is then used relative to the open directory,
/// so that nothing a co-user or the repository puts in the way between two steps can make
/// ccmem write, truncate or rename anything outside.
pub fn write_in(anchor: &Path, path: &Path, bytes: &[u8], backup: bool) -> io::Result<()> {
    let (dir, name) = split(path)?;
    write_at(&Dir::open_under(anchor, dir, true)?, name, bytes, backup)
}

/// [`write_in`] of a file for this user alone (mode 0600): what holds the user's prompts
/// and work (the report, the state file) in a project others may read.
pub fn write_in_private(anchor: &Path, path: &Path, bytes: &[u8], backup: bool) -> io::Result<()> {
    let (dir, name) = split(path)?;
    write_mode(&Dir::open_under(anchor, dir, true)?, name, bytes, backup, 0o600)
}

/// [`write`] of the file `name` in the open directory `dir`. The temp file has a name
/// nobody can guess and is made new (`O_EXCL`, no link followed), so a link or a FIFO
/// planted beside the target can neither be written through nor block the write.
pub fn write_at(dir: &Dir, name: &OsStr, bytes: &[u8], backup: bool) -> io::Result<()> {
    write_mode(dir, name, bytes, backup, 0o644)
}

/// [`write_at`] with the new file's mode (less the umask).
fn write_mode(dir: &Dir, name: &OsStr, bytes: &[u8], backup: bool, mode: u32) -> io::Result<()> {
    let tmp = temp_name(name);
    let result = (|| {
        let mut f = dir.create_new(&tmp, mode)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        if backup {
            keep_backup(dir, name, mode)?;
        }
        dir.rename(&tmp, name)?;
        dir.sync()
    })();
    if result.is_err() {
        let _ = dir.remove(&tmp);
    }
    result
}

/// Removes temp files a crash left beside `path` (only this daemon writes there), in a
/// directory under `anchor` reached without following a link: a `.claude` that is a link to
/// somewhere else is left alone, and nothing there is listed or removed.
pub fn remove_leftovers(anchor: &Path, path: &Path) {
    remove_leftovers_but(anchor, path, &|_| false)
}

/// [`remove_leftovers`], keeping those `keep` says to (a repository's tracked files).
pub fn remove_leftovers_but(anchor: &Path, path: &Path, keep: &dyn Fn(&Path) -> bool) {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else { return };
    let Ok(dir) = Dir::open_under(anchor, parent, false) else { return };
    // Listed by path, removed relative to the directory opened above: were the path swapped
    // for a link meanwhile, the removal still happens in the directory that was checked.
    let Ok(entries) = fs::read_dir(dir.path()) else { return };
    for e in entries.flatten() {
        let n = e.file_name();
        if is_temp_name(&n.to_string_lossy(), Some(name)) && !keep(&parent.join(&n)) {
            let _ = dir.remove(&n);
        }
    }
}

fn keep_backup(dir: &Dir, name: &OsStr, mode: u32) -> io::Result<()> {
    let bak = suffixed(name, ".bak");
    let bak_tmp = temp_name(&bak);
    match dir.hard_link(name, &bak_tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        // File systems without hard links: copy (a regular file only, no link followed)
        // into a new file, and fsync the copy.
        Err(_) => {
            let mut from = match dir.open_regular(name) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            let copied = (|| {
                let mut to = dir.create_new(&bak_tmp, mode)?;
                io::copy(&mut from, &mut to)?;
                to.sync_all()
            })();
            if let Err(e) = copied {
                let _ = dir.remove(&bak_tmp);
                return Err(e);
            }
        }
    }
    dir.rename(&bak_tmp, &bak).inspect_err(|_| {
        let _ = dir.remove(&bak_tmp);
    })
}

/// `name` with a temp mark and a suffix nobody can guess.
fn temp_name(name: &OsStr) -> OsString {
    suffixed(name, &format!("{TMP_MARK}{}", super::dir::unguessable()))
}

fn suffixed(name: &OsStr, suffix: &str) -> OsString {
    let mut s = name.to_owned();
    s.push(suffix);
    s
}

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `path`'s directory and file name.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent().filter(|p| !p.as_os_str().is_empty()), path.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} has no directory", path.display()))),
    }
}

/// Makes a rename in `dir` durable (the directory opened without blocking).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    Dir::open(dir)?.sync()
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
        fs::write(with_suffix(&q, &format!("{TMP_MARK}0123456789abcdef")), b"torn").unwrap();
        // A repository's own files that merely look like temp files stay (round three's
        // tester: committed `README.tmp-1a2b…` files were deleted).
        for theirs in ["s.json.tmp-notes", "s.json.tmp-1a2b", "other.json.tmp-0123456789abcdef"] {
            fs::write(tmp.path().join(theirs), b"theirs").unwrap();
        }
        remove_leftovers(tmp.path(), &q);
        let mut names: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        let kept = ["other.json.tmp-0123456789abcdef", "s.json", "s.json.tmp-1a2b", "s.json.tmp-notes"];
        assert_eq!(names, kept.map(std::ffi::OsString::from));
        assert!(is_temp_name("graph.json.tmp-0123456789abcdef", None));
        assert!(is_temp_name("a.md.bak.tmp-0123456789abcdef", Some("a.md")));
        assert!(!is_temp_name("README.tmp-1a2b", None));
        assert!(is_temp_name("index.json.tmp-11519-30", None), "an older ccmem's");
        assert!(!is_temp_name(".tmp-0123456789abcdef", None));
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: symbolic links and FIFOs")]
    fn a_write_in_a_project_follows_nothing_planted_in_its_way() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("p");
            fs::create_dir_all(root.join(".claude")).unwrap();
            let victim = tmp.path().join("victim");
            fs::write(&victim, "keep me\n").unwrap();
            let target = root.join(".claude/state.json");
            // A link at the target is replaced, not written through; links and FIFOs at
            // every name a writer of old would have used beside it change nothing.
            std::os::unix::fs::symlink(&victim, &target).unwrap();
            for n in 0..4 {
                let old = with_suffix(&target, &format!("{TMP_MARK}{}-{n}", std::process::id()));
                std::os::unix::fs::symlink(&victim, &old).unwrap();
                crate::files::untrusted::mkfifo(&with_suffix(
                    &target,
                    &format!(".bak{TMP_MARK}{}-{n}", std::process::id()),
                ))
                .unwrap();
            }
            write_in(&root, &target, b"one", true).unwrap();
            write_in(&root, &target, b"two", true).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"two");
            assert_eq!(fs::read(with_suffix(&target, ".bak")).unwrap(), b"one");
            assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me\n");
            // A linked directory on the way is refused.
            let other = tmp.path().join("other");
            fs::create_dir(&other).unwrap();
            std::os::unix::fs::symlink(&other, root.join("linked")).unwrap();
            let e = write_in(&root, &root.join("linked/x"), b"x", false).unwrap_err();
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
            assert_eq!(fs::read_dir(&other).unwrap().count(), 0);
        }
    }
}
