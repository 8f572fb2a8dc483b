//! A directory inside a project, held open while ccmem writes in it.
//!
//! A project's directories are not ccmem's alone: a co-user can write in a shared
//! repository's group-writable `.git/`, and a repository's own files (committed links, a
//! FIFO where a file should be) are untrusted input. Checking a path and then using it
//! leaves a moment in which a link can be put in its way, and a file made with
//! `File::create` follows a link planted at its name and truncates what it points to. So
//! on Unix the directory is opened once, component by component from a trusted anchor,
//! refusing a link at every step (`O_NOFOLLOW`), and every name in it is then created
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`), renamed, linked and removed relative to that open
//! directory (`openat`, `renameat`, `linkat`, `unlinkat`). Nothing is opened in a way that
//! can block: a FIFO at a name fails at once (`O_NONBLOCK`, and only regular files are
//! read). Elsewhere the same operations go by path, with the checks `std` allows.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A name nobody can guess: 16 hex digits from this process's random hash keys (seeded by
/// the operating system) and a counter. For temp files and sync cookies, whose names a
/// co-user must not be able to plant a link or a FIFO at before ccmem makes them.
pub fn unguessable() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(N.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:016x}", h.finish())
}

fn link_error(p: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} is a symbolic link: ccmem does not write through it (it may lead out of the project)", p.display()),
    )
}

fn not_dir(p: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, format!("{} is not a directory", p.display()))
}

fn not_regular(p: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", p.display()))
}

/// An open directory; every operation names a file in it (a single name, no separator).
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

/// A single file name of `name`, refused when it holds a separator or is `.`/`..`.
fn single(name: &OsStr) -> io::Result<&OsStr> {
    let p = Path::new(name);
    let mut c = p.components();
    match (c.next(), c.next()) {
        (Some(std::path::Component::Normal(n)), None) if n == name => Ok(n),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a file name", p.display()))),
    }
}

impl Dir {
    /// The directory's path, as it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `dir`, which must lie under `anchor`, going through no symbolic link below
    /// `anchor` and through nothing but directories; with `create`, missing directories on
    /// the way are made (mode 0755 less the umask).
    pub fn open_under(anchor: &Path, dir: &Path, create: bool) -> io::Result<Dir> {
        let rel = dir.strip_prefix(anchor).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{} is outside {}", dir.display(), anchor.display()))
        })?;
        let mut cur = Dir::open(anchor)?;
        for c in rel.components() {
            let std::path::Component::Normal(name) = c else {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not plain", dir.display())));
            };
            cur = cur.child(name, create)?;
        }
        Ok(cur)
    }

    /// The regular file `name` read whole ([`Dir::open_regular`]), refused when over `max`
    /// bytes.
    pub fn read_regular(&self, name: &OsStr, max: u64) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let f = self.open_regular(name)?;
        let mut b = Vec::new();
        f.take(max + 1).read_to_end(&mut b)?;
        if b.len() as u64 > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is over {max} bytes", self.path.join(name).display()),
            ));
        }
        Ok(b)
    }

    /// The subdirectory `name` of this one (made when missing, with `create`).
    pub fn child(&self, name: &OsStr, create: bool) -> io::Result<Dir> {
        let name = single(name)?;
        let path = self.path.join(name);
        if create {
            match self.mkdir(name) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        self.open_dir(name, &path)
    }
}

#[cfg(unix)]
mod unix {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    fn cstr(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }

    fn check(r: libc::c_int) -> io::Result<libc::c_int> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }

    const DIR_FLAGS: libc::c_int =
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

    impl Dir {
        /// Opens the directory at `path` (a trusted path: links in it are followed).
        pub fn open(path: &Path) -> io::Result<Dir> {
            let c = cstr(path.as_os_str())?;
            // SAFETY: a valid NUL-terminated path; the descriptor is owned below.
            let fd = unsafe { libc::open(c.as_ptr(), DIR_FLAGS & !libc::O_NOFOLLOW) };
            let fd = check(fd).map_err(|e| if e.raw_os_error() == Some(libc::ENOTDIR) { not_dir(path) } else { e })?;
            // SAFETY: `fd` is a descriptor just opened and owned by no one else.
            Ok(Dir { path: path.to_path_buf(), fd: unsafe { OwnedFd::from_raw_fd(fd) } })
        }

        pub(super) fn mkdir(&self, name: &OsStr) -> io::Result<()> {
            let c = cstr(name)?;
            // SAFETY: a valid descriptor and NUL-terminated name.
            check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) }).map(drop)
        }

        pub(super) fn open_dir(&self, name: &OsStr, path: &Path) -> io::Result<Dir> {
            let c = cstr(name)?;
            // SAFETY: as above.
            let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), DIR_FLAGS) };
            let fd = check(fd).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => link_error(path),
                Some(libc::ENOTDIR) => match self.is_link(name) {
                    true => link_error(path),
                    false => not_dir(path),
                },
                _ => e,
            })?;
            // SAFETY: just opened, owned here.
            Ok(Dir { path: path.to_path_buf(), fd: unsafe { OwnedFd::from_raw_fd(fd) } })
        }

        /// Whether `name` here is a symbolic link (not followed).
        fn is_link(&self, name: &OsStr) -> bool {
            let Ok(c) = cstr(name) else { return false };
            // SAFETY: a zeroed stat is a valid out-parameter.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid descriptor, name and out-pointer.
            let r = unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
            r == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFLNK
        }

        /// Makes the new file `name` (mode `mode` less the umask), never through a link and
        /// never over anything that is there (a file, a link, a FIFO): that fails at once.
        pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
            let name = single(name)?;
            let c = cstr(name)?;
            let flags = libc::O_WRONLY
                | libc::O_CREAT
                | libc::O_EXCL
                | libc::O_NOFOLLOW
                | libc::O_NONBLOCK
                | libc::O_CLOEXEC
                | libc::O_NOCTTY;
            // SAFETY: valid descriptor and name; the mode is passed as the variadic argument.
            let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
            let fd = check(fd)?;
            // SAFETY: just opened, owned by the File.
            Ok(unsafe { File::from_raw_fd(fd) })
        }

        /// Opens the regular file `name` for reading, not following a link and not
        /// blocking on a FIFO; anything but a regular file is refused.
        pub fn open_regular(&self, name: &OsStr) -> io::Result<File> {
            let name = single(name)?;
            let c = cstr(name)?;
            let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
            // SAFETY: as above.
            let fd = check(unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags) }).map_err(|e| {
                if e.raw_os_error() == Some(libc::ELOOP) {
                    link_error(&self.path.join(name))
                } else {
                    e
                }
            })?;
            // SAFETY: just opened, owned by the File.
            let f = unsafe { File::from_raw_fd(fd) };
            if !f.metadata()?.is_file() {
                return Err(not_regular(&self.path.join(name)));
            }
            Ok(f)
        }

        /// Renames `from` to `to`, both in this directory; what is at `to` (a link too) is
        /// replaced, never followed.
        pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            let (a, b) = (cstr(single(from)?)?, cstr(single(to)?)?);
            let fd = self.fd.as_raw_fd();
            // SAFETY: valid descriptor and names.
            check(unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) }).map(drop)
        }

        /// A hard link `to` of `from` (the entry itself: a link is not followed).
        pub fn hard_link(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            let (a, b) = (cstr(single(from)?)?, cstr(single(to)?)?);
            let fd = self.fd.as_raw_fd();
            // SAFETY: valid descriptor and names; flags 0 do not follow `from`.
            check(unsafe { libc::linkat(fd, a.as_ptr(), fd, b.as_ptr(), 0) }).map(drop)
        }

        /// Removes the entry `name` (a link itself, never what it points to).
        pub fn remove(&self, name: &OsStr) -> io::Result<()> {
            let c = cstr(single(name)?)?;
            // SAFETY: valid descriptor and name.
            check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
        }

        /// Makes the directory's entries (a rename in it) durable.
        pub fn sync(&self) -> io::Result<()> {
            // SAFETY: a valid descriptor.
            check(unsafe { libc::fsync(self.fd.as_raw_fd()) }).map(drop)
        }
    }
}

#[cfg(not(unix))]
mod other {
    use super::*;
    use std::fs::OpenOptions;

    /// Opening a reparse point (a symbolic link, a junction) opens it, not its target.
    #[cfg(windows)]
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

    fn no_follow(o: &mut OpenOptions) {
        #[cfg(windows)]
        std::os::windows::fs::OpenOptionsExt::custom_flags(o, FILE_FLAG_OPEN_REPARSE_POINT);
        #[cfg(not(windows))]
        let _ = o;
    }

    impl Dir {
        /// Takes the directory at `path` (a trusted path).
        pub fn open(path: &Path) -> io::Result<Dir> {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => Ok(Dir { path: path.to_path_buf() }),
                Ok(_) => Err(not_dir(path)),
                Err(e) => Err(e),
            }
        }

        pub(super) fn mkdir(&self, name: &OsStr) -> io::Result<()> {
            std::fs::create_dir(self.path.join(name))
        }

        pub(super) fn open_dir(&self, name: &OsStr, path: &Path) -> io::Result<Dir> {
            let m = std::fs::symlink_metadata(self.path.join(name))?;
            if m.file_type().is_symlink() {
                return Err(link_error(path));
            }
            if !m.is_dir() {
                return Err(not_dir(path));
            }
            Ok(Dir { path: path.to_path_buf() })
        }

        /// Makes the new file `name`, never through a link and never over anything there.
        pub fn create_new(&self, name: &OsStr, _mode: u32) -> io::Result<File> {
            let mut o = OpenOptions::new();
            o.write(true).create_new(true);
            no_follow(&mut o);
            o.open(self.path.join(single(name)?))
        }

        /// Opens the regular file `name` for reading; anything else is refused.
        pub fn open_regular(&self, name: &OsStr) -> io::Result<File> {
            let p = self.path.join(single(name)?);
            let m = std::fs::symlink_metadata(&p)?;
            if m.file_type().is_symlink() {
                return Err(link_error(&p));
            }
            if !m.is_file() {
                return Err(not_regular(&p));
            }
            File::open(&p)
        }

        /// Renames `from` to `to`, both in this directory.
        pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            std::fs::rename(self.path.join(single(from)?), self.path.join(single(to)?))
        }

        /// A hard link `to` of `from`.
        pub fn hard_link(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            std::fs::hard_link(self.path.join(single(from)?), self.path.join(single(to)?))
        }

        /// Removes the entry `name`.
        pub fn remove(&self, name: &OsStr) -> io::Result<()> {
            std::fs::remove_file(self.path.join(single(name)?))
        }

        /// Directories cannot be opened for syncing on Windows; NTFS journals the rename.
        pub fn sync(&self) -> io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_not_guessable_twice() {
        let a = unguessable();
        let b = unguessable();
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }

    #[test]
    fn a_name_with_a_separator_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = Dir::open(tmp.path()).unwrap();
        assert!(d.create_new(OsStr::new("../x"), 0o644).is_err());
        assert!(d.create_new(OsStr::new(".."), 0o644).is_err());
        assert!(d.create_new(OsStr::new("a/b"), 0o644).is_err());
        assert!(d.create_new(OsStr::new("ok"), 0o644).is_ok());
        assert!(d.create_new(OsStr::new("ok"), 0o644).is_err(), "never over what is there");
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: symbolic links and FIFOs")]
    fn nothing_is_followed_truncated_or_blocked_on() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("p");
            std::fs::create_dir_all(root.join(".git")).unwrap();
            let victim = tmp.path().join("bashrc");
            std::fs::write(&victim, "keep me\n").unwrap();
            std::os::unix::fs::symlink(&victim, root.join(".git/cookie")).unwrap();
            crate::files::untrusted::mkfifo(&root.join(".git/fifo")).unwrap();
            let t = std::time::Instant::now();
            let d = Dir::open_under(&root, &root.join(".git"), false).unwrap();
            assert!(d.create_new(OsStr::new("cookie"), 0o644).is_err(), "a planted link");
            assert!(d.create_new(OsStr::new("fifo"), 0o644).is_err(), "a planted FIFO");
            assert!(d.open_regular(OsStr::new("fifo")).is_err());
            let e = d.open_regular(OsStr::new("cookie")).unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert!(t.elapsed() < std::time::Duration::from_secs(5), "nothing blocked");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
            // A linked directory on the way is refused, made or not.
            std::os::unix::fs::symlink(tmp.path(), root.join(".claude")).unwrap();
            let e = Dir::open_under(&root, &root.join(".claude/memory"), true).unwrap_err();
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
            assert!(!tmp.path().join("memory").exists());
            std::fs::write(root.join("file"), "").unwrap();
            let e = Dir::open_under(&root, &root.join("file/x"), true).unwrap_err();
            assert!(e.to_string().contains("is not a directory"), "{e}");
            crate::files::untrusted::mkfifo(&root.join("pipe")).unwrap();
            assert!(Dir::open_under(&root, &root.join("pipe"), false).is_err());
            // Made when missing.
            let made = Dir::open_under(&root, &root.join("a/b"), true).unwrap();
            made.create_new(OsStr::new("f"), 0o600).unwrap();
            made.rename(OsStr::new("f"), OsStr::new("g")).unwrap();
            made.sync().unwrap();
            assert!(root.join("a/b/g").is_file());
            // A rename over a planted link replaces the link, not its target.
            std::os::unix::fs::symlink(&victim, root.join("a/b/h")).unwrap();
            made.rename(OsStr::new("g"), OsStr::new("h")).unwrap();
            assert!(!std::fs::symlink_metadata(root.join("a/b/h")).unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        }
    }
}
