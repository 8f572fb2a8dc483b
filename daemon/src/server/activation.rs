//! Running under a service manager: a listening socket handed over by systemd (socket
//! activation, `LISTEN_FDS`/`LISTEN_PID`), and the readiness, watchdog and stopping
//! notifications of `Type=notify` (`NOTIFY_SOCKET`). Both are a few system calls; no
//! library is needed for them.

#[cfg(unix)]
use std::path::PathBuf;
use std::time::Duration;

/// The first descriptor systemd passes.
#[cfg(unix)]
const SD_LISTEN_FDS_START: i32 = 3;

/// A listening socket inherited from the service manager, and the path it is bound to.
#[cfg(unix)]
pub struct Inherited {
    /// The socket.
    pub fd: std::os::fd::OwnedFd,
    /// Where it listens (None for an abstract or unnamed socket).
    pub path: Option<PathBuf>,
}

/// The socket passed by socket activation, when this process was given one: `LISTEN_PID`
/// names us and `LISTEN_FDS` ≥ 1. Fails when the descriptor is not a listening Unix stream
/// socket (a misconfigured unit), rather than serving on something else.
#[cfg(unix)]
pub fn inherited_socket() -> anyhow::Result<Option<Inherited>> {
    use std::os::fd::FromRawFd;
    let for_us =
        std::env::var("LISTEN_PID").ok().and_then(|p| p.trim().parse::<u32>().ok()) == Some(std::process::id());
    let count = std::env::var("LISTEN_FDS").ok().and_then(|n| n.trim().parse::<i32>().ok()).unwrap_or(0);
    if !for_us || count < 1 {
        return Ok(None);
    }
    if count > 1 {
        tracing::warn!(count, "the service manager passed several sockets; serving the first");
    }
    let fd = SD_LISTEN_FDS_START;
    // SAFETY: plain queries on a descriptor number; nothing is read through pointers but the
    // out-parameters, which are valid and sized for the calls.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || (st.st_mode & libc::S_IFMT) != libc::S_IFSOCK {
            anyhow::bail!("LISTEN_FDS says descriptor {fd} is our socket, but it is not a socket");
        }
        let mut accepting: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let ok = libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ACCEPTCONN,
            (&mut accepting as *mut libc::c_int).cast(),
            &mut len,
        );
        if ok != 0 || accepting == 0 {
            anyhow::bail!("the socket passed by the service manager is not listening (ListenStream= expected)");
        }
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    let path = bound_path(fd)?;
    // SAFETY: descriptor 3 was handed to this process (LISTEN_PID is ours) and nothing else
    // owns it; from here the OwnedFd does.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    Ok(Some(Inherited { fd, path }))
}

/// The filesystem path a Unix socket is bound to; an error for other families.
#[cfg(unix)]
fn bound_path(fd: i32) -> anyhow::Result<Option<PathBuf>> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: sockaddr_un is plain data; getsockname writes at most `len` bytes into it.
    let (addr, len) = unsafe {
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        if libc::getsockname(fd, (&mut addr as *mut libc::sockaddr_un).cast(), &mut len) != 0 {
            anyhow::bail!("cannot read the address of the inherited socket: {}", std::io::Error::last_os_error());
        }
        (addr, len as usize)
    };
    if i32::from(addr.sun_family) != libc::AF_UNIX {
        anyhow::bail!("the socket passed by the service manager is not a Unix socket (ListenStream= takes a path)");
    }
    let offset = std::mem::size_of::<libc::sa_family_t>();
    let raw: Vec<u8> = addr.sun_path.iter().take(len.saturating_sub(offset)).map(|c| *c as u8).collect();
    if raw.first().is_none_or(|b| *b == 0) {
        return Ok(None);
    }
    let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
    Ok(Some(PathBuf::from(std::ffi::OsStr::from_bytes(&raw[..end]))))
}

/// Sends a `sd_notify` message (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, …) when a service
/// manager asked for them; nothing otherwise.
pub fn notify(state: &str) {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixDatagram};
        let Some(target) = std::env::var_os("NOTIFY_SOCKET") else { return };
        let bytes = std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str()).to_vec();
        let addr = match bytes.strip_prefix(b"@") {
            Some(abstract_name) => SocketAddr::from_abstract_name(abstract_name),
            None => SocketAddr::from_pathname(std::path::Path::new(&target)),
        };
        let sent = addr.and_then(|a| UnixDatagram::unbound().and_then(|s| s.send_to_addr(state.as_bytes(), &a)));
        if let Err(e) = sent {
            tracing::warn!(error = %e, state, "cannot notify the service manager");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = state;
}

/// The watchdog period the service manager asked for (`WatchdogSec=`), if any.
pub fn watchdog() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    let pid_ok = std::env::var("WATCHDOG_PID")
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .is_none_or(|p| p == std::process::id());
    (usec > 0 && pid_ok).then(|| Duration::from_micros(usec))
}

/// Pings the watchdog at half its period from the runtime: a stuck runtime stops the
/// pings, and the service manager restarts the daemon.
pub fn spawn_watchdog() {
    if let Some(period) = watchdog() {
        tracing::info!(period_ms = period.as_millis() as u64, "watchdog enabled");
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period / 2);
            loop {
                tick.tick().await;
                notify("WATCHDOG=1");
            }
        });
    }
}
