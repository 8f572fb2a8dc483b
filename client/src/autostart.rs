//! Starting the daemon on demand: find `ccmemd`, start it detached, wait until it answers.
//!
//! Two clients racing here each start a daemon; the pidfile lock lets one of them win and
//! the other exits at once, so both clients end up talking to the same single daemon.

use crate::conn::Conn;
use ccmem_proto::wire::paths;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether a connect error means "nobody is listening" (so starting a daemon may help).
pub fn is_absent(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)
}

/// Log files larger than this are rotated (one old copy kept) when a daemon is started.
const LOG_ROTATE_BYTES: u64 = 8 << 20;

/// Starts `ccmemd` for `socket` and waits, with a growing back-off, until it answers or
/// `timeout` passes. A daemon that cannot start gives its own reason.
pub fn start_and_connect(socket: &Path, timeout: Duration) -> Result<Conn, String> {
    let deadline = Instant::now() + timeout;
    let exe = find_daemon().ok_or_else(|| {
        "cannot find ccmemd next to ccmemctl or on PATH; install ccmem again (`npm i -g ccmem`, or `cargo install --locked --path .`)"
            .to_string()
    })?;
    let (mut child, output) = spawn(&exe, socket).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let mut pause = Duration::from_millis(1);
    loop {
        match Conn::connect_within(socket, timeout.max(Duration::from_millis(100))) {
            Ok(mut c) => {
                // (A piped stderr closes with `child` here: the daemon's later log lines then
                // fail to be written rather than fill a pipe nobody reads.)
                // The start-up budget bounded the connect; requests get the usual time.
                c.set_timeout(crate::conn::IO_TIMEOUT).map_err(|e| e.to_string())?;
                return Ok(c);
            }
            Err(e) if !is_absent(&e) => return Err(format!("ccmemd started but {}: {e}", socket.display())),
            Err(_) => {}
        }
        // A daemon that lost the race to another one exits 0: keep waiting for the winner.
        if let Ok(Some(status)) = child.try_wait() {
            if !status.success() {
                return Err(output.failure(&mut child, status));
            }
        }
        if Instant::now() >= deadline {
            return Err(format!("ccmemd did not answer on {} within {timeout:?}", socket.display()));
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Where a started daemon's output goes: its log from an offset, or (no log can be opened)
/// a pipe read once it has exited.
enum Output {
    Log { path: PathBuf, from: u64 },
    Pipe { log_error: String },
}

/// Bytes of a failed daemon's output read for its reason.
const REASON_BYTES: u64 = 64 << 10;

impl Output {
    /// Why the daemon exited with `status`: the reason it gave ([`paths::START_FAILURE`]),
    /// else its exit status, and where its log is.
    fn failure(&self, child: &mut Child, status: std::process::ExitStatus) -> String {
        use std::io::{Read, Seek, SeekFrom};
        let mut text = Vec::new();
        match self {
            Output::Log { path, from } => {
                if let Ok(mut f) = std::fs::File::open(path) {
                    if f.seek(SeekFrom::Start(*from)).is_ok() {
                        let _ = f.take(REASON_BYTES).read_to_end(&mut text);
                    }
                }
            }
            Output::Pipe { .. } => {
                if let Some(err) = child.stderr.take() {
                    let _ = err.take(REASON_BYTES).read_to_end(&mut text);
                }
            }
        }
        let text = String::from_utf8_lossy(&text);
        let reason = text.lines().rev().find_map(|l| l.strip_prefix(paths::START_FAILURE)).map(str::trim);
        let said = match reason {
            Some(r) => format!("ccmemd cannot start: {r}"),
            None => format!("ccmemd exited at start-up ({status})"),
        };
        match self {
            Output::Log { path, .. } => format!("{said}; its log: {}", path.display()),
            Output::Pipe { log_error } if reason.is_none() => format!("{said}; no log either: {log_error}"),
            Output::Pipe { .. } => said,
        }
    }
}

fn spawn(exe: &Path, socket: &Path) -> io::Result<(Child, Output)> {
    let mut cmd = Command::new(exe);
    cmd.arg("--socket").arg(socket).stdin(Stdio::null()).stdout(Stdio::null());
    let log = paths::daemon_log_file().and_then(|l| paths::open_log(&l, LOG_ROTATE_BYTES).map(|f| (l, f)));
    let output = match log {
        Ok((path, file)) => {
            let from = file.metadata().map(|m| m.len()).unwrap_or(0);
            let dup = file.try_clone()?;
            cmd.stdout(dup).stderr(file);
            Output::Log { path, from }
        }
        Err(e) => {
            // Its reason is read once it has exited; a daemon that runs writes its log to
            // a pipe nobody reads after this client is gone, which it survives.
            cmd.stderr(Stdio::piped());
            Output::Pipe { log_error: e.to_string() }
        }
    };
    detach(&mut cmd);
    Ok((cmd.spawn()?, output))
}

/// Its own session: no controlling terminal, so closing the terminal does not stop it, and
/// the shell's job control does not reach it.
#[cfg(unix)]
fn detach(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(windows)]
fn detach(cmd: &mut Command) {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    keep_std_handles();
}

/// CreateProcess hands the child every inheritable handle of ours, whatever its STARTUPINFO
/// says, and the standard handles we were given are inheritable (a hook's stdout is the
/// agent's pipe). The daemon would then hold the agent's pipe open for its whole life, and
/// the agent, waiting for the pipe's end, would wait for the hook until its time limit. Ours
/// are made non-inheritable; std still passes the child the handles chosen for it (it
/// duplicates them inheritable for the spawn alone).
#[cfg(windows)]
fn keep_std_handles() {
    use std::os::windows::io::AsRawHandle;
    const HANDLE_FLAG_INHERIT: u32 = 0x0000_0001;
    #[link(name = "kernel32")]
    extern "system" {
        fn SetHandleInformation(handle: *mut core::ffi::c_void, mask: u32, flags: u32) -> i32;
    }
    let handles =
        [std::io::stdin().as_raw_handle(), std::io::stdout().as_raw_handle(), std::io::stderr().as_raw_handle()];
    for h in handles.into_iter().filter(|h| !h.is_null()) {
        // SAFETY: a standard handle of this process (or a stale value, which only fails).
        unsafe { SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0) };
    }
}

/// `ccmemd` beside this executable (an install or a cargo build puts them together), else the
/// first one on PATH.
pub fn find_daemon() -> Option<PathBuf> {
    find_program("ccmemd")
}

/// One of ccmem's programs: beside this executable, else the first one in an absolute
/// directory on PATH. Relative entries (`.`, `node_modules/.bin`, an empty one) name
/// directories of wherever the command runs, and a hook runs in the project: a repository
/// that commits `./ccmemd` or `node_modules/.bin/ccmemd` must not be what starts. Nor may an
/// absolute entry that leads there: one inside the current directory or the repository
/// around it, or one that names them another way (`/proc/self/cwd`, a link).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join(&name)));
    beside.filter(|p| p.is_file()).or_else(|| {
        // The directory the command runs in, and the repository around it (a hook may run in
        // a subdirectory; direnv's `PATH_add bin` names the repository's own `bin`).
        let here = std::env::current_dir().ok().and_then(|d| d.canonicalize().ok());
        let here = here.map(|d| repository_around(&d).unwrap_or(d));
        std::env::split_paths(&std::env::var_os("PATH")?)
            .filter(|d| outside(d, here.as_deref()))
            .map(|d| d.join(&name))
            .find(|p| is_executable(p))
    })
}

/// The nearest directory at or above `dir` that holds a `.git` (a repository or a worktree);
/// not the home directory or above it (a home kept in git holds the user's own `bin`s).
fn repository_around(dir: &Path) -> Option<PathBuf> {
    let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
    let found = dir.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok())?;
    let home = home.and_then(|h| h.canonicalize().ok().or(Some(h)));
    (!home.is_some_and(|h| h.starts_with(found))).then(|| found.to_path_buf())
}

/// Whether a PATH entry is a place the user chose rather than the directory a command runs
/// in: absolute, not under `/proc` (whose `self/cwd` and `<pid>/root` name other places),
/// and, as it resolves, neither `here` nor inside it.
fn outside(dir: &Path, here: Option<&Path>) -> bool {
    if !dir.is_absolute() || dir.starts_with("/proc") || dir.starts_with("/dev/fd") {
        return false;
    }
    match (dir.canonicalize(), here) {
        (Ok(real), Some(here)) => !real.starts_with(here) && !real.starts_with("/proc"),
        // An entry that does not resolve holds nothing to run.
        (Err(_), _) => false,
        (Ok(real), None) => !real.starts_with("/proc"),
    }
}

/// Whether `p` is a file this user could run (on Unix: an execute bit).
#[cfg(unix)]
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// Whether `p` is a file this user could run.
#[cfg(not(unix))]
pub(crate) fn is_executable(p: &Path) -> bool {
    p.is_file()
}
