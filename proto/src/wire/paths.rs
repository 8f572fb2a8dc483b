//! Where ccmem keeps its socket, pidfile, log and state, and the checks that keep the
//! socket private to its user.
//!
//! | what | Linux | macOS | Windows |
//! |---|---|---|---|
//! | socket | `$XDG_RUNTIME_DIR/ccmem/ccmemd.sock`, else `$TMPDIR/ccmem-<uid>/ccmemd.sock` | `$TMPDIR/ccmem-<uid>/ccmemd.sock` | `\\.\pipe\ccmem-<user>` |
//! | pidfile | beside the socket, `ccmemd.pid` | same | state dir |
//! | state, log | `$XDG_STATE_HOME/ccmem/` (`~/.local/state/ccmem/`) | `~/Library/Application Support/ccmem/` | `%LOCALAPPDATA%\ccmem\` |
//!
//! `CCMEM_SOCKET` or `--socket` overrides the socket (and with it the pidfile).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

/// Environment variable that overrides the socket path.
pub const SOCKET_ENV: &str = "CCMEM_SOCKET";
/// Environment variable that, set to `1`, stops the client from starting the daemon.
pub const NO_AUTOSTART_ENV: &str = "CCMEM_NO_AUTOSTART";

#[cfg(unix)]
const SOCKET_FILE: &str = "ccmemd.sock";

/// The socket to use: `explicit` (from `--socket`) if given, else `$CCMEM_SOCKET`, else the
/// platform default.
pub fn socket_path(explicit: Option<&Path>) -> io::Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    match std::env::var_os(SOCKET_ENV) {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => default_socket_path(),
    }
}

/// The platform's default socket location (see the module docs).
#[cfg(unix)]
pub fn default_socket_path() -> io::Result<PathBuf> {
    let usual = usual_socket_dir();
    if usual_dir_taken(&usual).is_some() {
        return Ok(fallback_socket_dir()?.join(SOCKET_FILE));
    }
    Ok(usual.dir.join(SOCKET_FILE))
}

/// Where the socket's directory usually is, and the directory it is made in.
#[cfg(unix)]
struct Usual {
    dir: PathBuf,
    /// `$XDG_RUNTIME_DIR`, which must be this user's own; None for the shared temp directory
    /// (open to all, by design).
    runtime: Option<PathBuf>,
}

#[cfg(unix)]
fn usual_socket_dir() -> Usual {
    // Only an absolute XDG_RUNTIME_DIR counts, as the XDG spec says.
    #[cfg(not(target_os = "macos"))]
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        if dir.is_absolute() {
            return Usual { dir: dir.join("ccmem"), runtime: Some(dir) };
        }
    }
    // macOS's TMPDIR is already per user; elsewhere /tmp is shared, hence the uid and the
    // ownership check in `ensure_private_dir`.
    Usual { dir: std::env::temp_dir().join(format!("ccmem-{}", euid())), runtime: None }
}

/// The socket's directory when the usual one is taken: in the state directory, which only
/// this user can make.
#[cfg(unix)]
fn fallback_socket_dir() -> io::Result<PathBuf> {
    Ok(state_dir()?.join("run"))
}

/// Why the usual socket directory cannot be ccmem's: someone made it first (another user
/// who wants ccmem stopped, or a link), or it is open to others; or `$XDG_RUNTIME_DIR` itself
/// is not this user's private directory (anyone who may write in it can swap `ccmem/` for a
/// directory of their own). `None` when it is fine, or does not exist yet.
#[cfg(unix)]
fn usual_dir_taken(usual: &Usual) -> Option<String> {
    if let Some(runtime) = usual.runtime.as_deref().filter(|r| r.exists()) {
        if let Err(e) = check_private_dir(runtime) {
            return Some(format!("XDG_RUNTIME_DIR: {e}"));
        }
    }
    std::fs::symlink_metadata(&usual.dir).ok()?;
    check_private_dir(&usual.dir).err().map(|e| e.to_string())
}

/// When the default socket is not where it usually is, why and where it is instead: the
/// usual directory (`$XDG_RUNTIME_DIR/ccmem`, or the shared `$TMPDIR/ccmem-<uid>`) was made
/// first by someone else or is open to others, and ccmem uses a directory only this user
/// can create. For the daemon's log and `doctor`.
#[cfg(unix)]
pub fn default_socket_moved() -> Option<String> {
    let why = usual_dir_taken(&usual_socket_dir())?;
    let instead = fallback_socket_dir().map(|d| d.display().to_string()).unwrap_or_default();
    Some(format!("{why}; the socket is in {instead} instead"))
}

/// The platform's default socket location (see the module docs).
#[cfg(windows)]
pub fn default_socket_path() -> io::Result<PathBuf> {
    let user = std::env::var("USERNAME").unwrap_or_else(|_| "default".into());
    let user: String = user.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
    Ok(PathBuf::from(format!(r"\\.\pipe\ccmem-{user}")))
}

/// Whether `path` names a Windows named pipe rather than a file.
pub fn is_named_pipe(path: &Path) -> bool {
    path.to_string_lossy().starts_with(r"\\.\pipe\")
}

/// The pidfile that guards the daemon serving `socket`: `ccmemd.sock` → `ccmemd.pid` in the
/// same directory (`<name>.pid` for other names). For a named pipe, in the state dir.
pub fn pidfile_for(socket: &Path) -> io::Result<PathBuf> {
    if is_named_pipe(socket) {
        let name = socket.file_name().unwrap_or(OsStr::new("ccmemd"));
        return Ok(state_dir()?.join(Path::new(name).with_extension("pid")));
    }
    Ok(if socket.extension() == Some(OsStr::new("sock")) {
        socket.with_extension("pid")
    } else {
        let mut name = socket.as_os_str().to_owned();
        name.push(".pid");
        PathBuf::from(name)
    })
}

/// The daemon's state directory: `$XDG_STATE_HOME/ccmem` on Linux, the platform's local data
/// directory elsewhere.
pub fn state_dir() -> io::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "ccmem")
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "cannot find the home directory (is HOME set?)"))?;
    Ok(dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir()).to_path_buf())
}

/// The user's ccmem configuration directory (`$XDG_CONFIG_HOME/ccmem` on Linux).
pub fn config_dir() -> io::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "ccmem")
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "cannot find the home directory (is HOME set?)"))?;
    Ok(dirs.config_dir().to_path_buf())
}

/// Extra redaction patterns, one per line (`kind = regex`), when the file exists.
pub const REDACT_PATTERNS_FILE: &str = "redact-patterns";

/// Where an auto-started daemon's output goes.
pub fn daemon_log_file() -> io::Result<PathBuf> {
    Ok(state_dir()?.join("ccmemd.log"))
}

/// The effective user id of this process.
#[cfg(unix)]
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The account's home directory from the password database (not `$HOME`, which a caller
/// can set to anything).
#[cfg(unix)]
pub fn account_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; 16 << 10];
    // SAFETY: a zeroed passwd is a valid out-parameter; getpwuid_r fills it with pointers
    // into `buf`, which outlives their use below.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(libc::geteuid(), &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut out);
        if rc != 0 || out.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        let dir = CStr::from_ptr(pw.pw_dir).to_bytes();
        (!dir.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(dir)))
    }
}

/// Creates `dir` and its missing parents with mode 0700 (less the umask); nothing when it
/// exists. An error names the directory, and the file in the way when there is one (a
/// `HOME` that is a file gives "not a directory" for a path the user never chose).
pub fn create_private_dirs(dir: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir).map_err(|e| {
        let why = match file_in_the_way(dir) {
            Some(f) => format!("{} is a file, not a directory", f.display()),
            None => e.to_string(),
        };
        io::Error::new(e.kind(), format!("cannot create {}: {why}", dir.display()))
    })?;
    // Windows has no mode: the directory gets a DACL for this user alone. A file system
    // without ACLs (FAT, some network shares) refuses it; the directory is then what its
    // parent makes it (under the user's own profile).
    #[cfg(windows)]
    let _ = super::peer::restrict_dir_to_me(dir);
    Ok(())
}

/// `p` without `.` components and with each `..` taking away the component before it, as a
/// shell's `cd` reads a path: how ccmem prints and sends the paths it is given.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The file that stands where `dir` or one of its parents should be a directory (a `HOME`
/// that is a file), if any: the real cause of a "not a directory" error.
pub fn file_in_the_way(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
}

/// The line a daemon that cannot start writes to its standard error (its log) last: the
/// client that started it finds the reason there and shows it.
pub const START_FAILURE: &str = "ccmemd: cannot start: ";

/// Opens a log file for appending (mode 0600, its directory 0700), first moving it to
/// `<name>.1` when it has grown past `rotate_over` bytes.
pub fn open_log(path: &Path, rotate_over: u64) -> io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        create_private_dirs(dir)?;
    }
    if std::fs::metadata(path).map(|m| m.len() > rotate_over).unwrap_or(false) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(path, old);
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

/// Creates `dir` (and its parents) if missing, mode 0700, then checks it with
/// [`check_private_dir`].
#[cfg(unix)]
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            create_private_dirs(dir)?;
            // The mode given to mkdir is masked by the umask; set it outright.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    check_private_dir(dir)
}

/// Refuses a socket directory that another user owns, that others may write to, or that is
/// not a real directory: any of those would let someone else replace the socket.
#[cfg(unix)]
pub fn check_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing socket directory {}: {why}; use a private directory (mode 0700) of your own",
                dir.display()
            ),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return refuse("it is not a directory".into());
    }
    let me = euid();
    if meta.uid() != me {
        return refuse(format!("it is owned by uid {}, not by you (uid {me})", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return refuse(format!("it is writable by others (mode {:o})", meta.mode() & 0o777));
    }
    Ok(())
}

/// The directory holding the socket file, if the socket is a file.
pub fn socket_dir(socket: &Path) -> Option<&Path> {
    if is_named_pipe(socket) {
        return None;
    }
    socket.parent().filter(|p| !p.as_os_str().is_empty())
}

/// The interprocess name for `socket`: a file path on Unix, a pipe on Windows. Never the
/// Linux abstract namespace, which has no permissions.
pub fn socket_name(socket: &Path) -> io::Result<interprocess::local_socket::Name<'_>> {
    use interprocess::local_socket::{GenericFilePath, ToFsName};
    socket.to_fs_name::<GenericFilePath>()
}

#[cfg(all(test, unix))]
mod tests {
    /// On Windows a private directory's DACL is protected and holds one entry, this user's.
    #[cfg(windows)]
    #[test]
    fn a_private_directory_is_this_users_alone_on_windows() {
        let tmp = std::env::temp_dir().join(format!("ccmem-acl-{}", std::process::id()));
        let dir = tmp.join("state").join("ccmem");
        super::create_private_dirs(&dir).unwrap();
        std::fs::write(dir.join("journal.db"), b"x").unwrap();
        for p in [dir.clone(), dir.join("journal.db")] {
            let sddl = crate::wire::peer::dacl_sddl(&p).unwrap();
            assert!(sddl.starts_with("D:P") || p != dir, "{}: {sddl}", p.display());
            assert_eq!(sddl.matches("(A;").count(), 1, "{}: one entry: {sddl}", p.display());
            assert!(sddl.contains(";FA;;;S-1-"), "{}: full access for one SID: {sddl}", p.display());
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn pidfile_sits_beside_the_socket() {
        assert_eq!(pidfile_for(Path::new("/r/ccmem/ccmemd.sock")).unwrap(), Path::new("/r/ccmem/ccmemd.pid"));
        assert_eq!(pidfile_for(Path::new("/r/x/custom")).unwrap(), Path::new("/r/x/custom.pid"));
    }

    #[test]
    fn private_dir_is_created_0700_and_loose_ones_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("a/b/ccmem");
        ensure_private_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);

        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ensure_private_dir(&d).unwrap_err();
        assert!(err.to_string().contains("writable by others"), "{err}");

        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let err = check_private_dir(&link).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }
}
