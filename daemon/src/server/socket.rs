//! The listening socket: a private directory, stale-socket removal, a 0600 socket file (a
//! named pipe with a DACL of the user alone on Windows). Peers are checked as accepted.

use anyhow::{bail, Context};
use ccmem_proto::wire::paths;
#[cfg(windows)]
use ccmem_proto::wire::peer;
use interprocess::local_socket::{tokio::Listener, ConnectOptions, ListenerOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The socket file we created. Remembers its identity so that we never remove one that a
/// later daemon put in its place.
#[derive(Debug, Clone)]
pub struct SocketFile {
    path: PathBuf,
    #[cfg(unix)]
    ident: Option<(u64, u64)>,
}

/// Binds `socket`. Must be called with the pidfile lock held: that is what makes it safe to
/// remove a socket file left behind by a daemon that died.
pub fn bind(socket: &Path) -> anyhow::Result<(Listener, SocketFile)> {
    if let Some(dir) = paths::socket_dir(socket) {
        #[cfg(unix)]
        paths::ensure_private_dir(dir)?;
        #[cfg(not(unix))]
        std::fs::create_dir_all(dir)?;
    }
    #[cfg(unix)]
    check_path_length(socket)?;
    remove_stale(socket)?;
    let listener = listen(socket).with_context(|| format!("cannot listen on {}", socket.display()))?;
    let file = SocketFile {
        path: socket.to_path_buf(),
        #[cfg(unix)]
        ident: file_ident(socket),
    };
    Ok((listener, file))
}

/// Serves on a socket inherited from the service manager (socket activation). It was
/// bound by the manager, which also removes it: we only tighten its mode to 0600 when the
/// file is ours (the unit's SocketMode= should have done so already).
#[cfg(unix)]
pub fn adopt(i: crate::server::activation::Inherited, socket: &Path) -> anyhow::Result<Listener> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if let Ok(m) = std::fs::metadata(socket) {
        if m.uid() == paths::euid() && m.mode() & 0o077 != 0 {
            std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("cannot make {} private", socket.display()))?;
        }
    }
    let uds = interprocess::os::unix::uds_local_socket::tokio::Listener::try_from(i.fd)
        .context("cannot serve on the socket passed by the service manager")?;
    tracing::info!(socket = %socket.display(), "serving on the socket passed by the service manager");
    Ok(Listener::from(uds))
}

impl SocketFile {
    /// Whether the file is still the one we bound (not removed, not replaced).
    pub fn is_ours(&self) -> bool {
        #[cfg(unix)]
        {
            self.ident.is_some() && file_ident(&self.path) == self.ident
        }
        #[cfg(not(unix))]
        {
            self.path.exists()
        }
    }

    /// Calls `lost` (once) when the socket file is removed or replaced while we serve: no
    /// client could reach us any more, and a new daemon could not take over while we hold
    /// the lock. The watch costs nothing until its directory changes. Keep the returned
    /// watcher alive.
    pub fn on_loss(&self, lost: impl Fn() + Send + 'static) -> Option<notify::RecommendedWatcher> {
        use notify::Watcher;
        // A named pipe lives as long as we hold it: nobody can remove it, and `\\.\pipe\` is
        // no directory to watch (trying only logged a warning at every start on Windows).
        if paths::is_named_pipe(&self.path) {
            return None;
        }
        let dir = self.path.parent()?.to_path_buf();
        let file = self.clone();
        let fired = std::sync::atomic::AtomicBool::new(false);
        let mut w = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
            let Ok(ev) = r else { return };
            if !ev.paths.iter().any(|p| p == &file.path || p == &dir) {
                return;
            }
            if !file.is_ours() && !fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
                lost();
            }
        })
        .inspect_err(|e| tracing::warn!(error = %e, "cannot watch the socket file"))
        .ok()?;
        w.watch(self.path.parent()?, notify::RecursiveMode::NonRecursive)
            .inspect_err(|e| tracing::warn!(error = %e, "cannot watch the socket's directory"))
            .ok()?;
        Some(w)
    }

    /// Removes the socket file, unless something else has replaced it since we bound it.
    pub fn remove_file(&self) {
        #[cfg(unix)]
        {
            if !self.is_ours() {
                tracing::info!(socket = %self.path.display(), "socket file was replaced or removed; leaving it");
                return;
            }
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(socket = %self.path.display(), error = %e, "could not remove socket");
            }
        }
    }
}

/// Binds with mode 0600 set before `bind` where the platform allows it (Linux, recent BSDs);
/// elsewhere (macOS) the mode is set right after, which the 0700 directory makes safe.
#[cfg(unix)]
fn listen(socket: &Path) -> io::Result<Listener> {
    use interprocess::os::unix::local_socket::ListenerOptionsExt;
    use std::os::unix::fs::PermissionsExt;
    let opts = || Ok::<_, io::Error>(ListenerOptions::new().name(paths::socket_name(socket)?).reclaim_name(false));
    let listener = match opts()?.mode(0o600).create_tokio() {
        Err(e) if e.kind() == io::ErrorKind::Unsupported => opts()?.create_tokio()?,
        other => other?,
    };
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Creates the pipe with a DACL granting the current user alone (see `peer::pipe_sddl`);
/// interprocess rejects remote clients and creates the first instance with
/// `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a pipe of that name made first by anyone else makes
/// this fail rather than share the name.
#[cfg(windows)]
fn listen(socket: &Path) -> io::Result<Listener> {
    use interprocess::os::windows::{local_socket::ListenerOptionsExt, security_descriptor::SecurityDescriptor};
    let sddl: Vec<u16> = peer::pipe_sddl()?.encode_utf16().chain(Some(0)).collect();
    let sddl = widestring::U16CStr::from_slice(&sddl)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad security descriptor: {e}")))?;
    let sd = SecurityDescriptor::deserialize(sddl)?;
    ListenerOptions::new().name(paths::socket_name(socket)?).security_descriptor(sd).create_tokio()
}

#[cfg(unix)]
fn file_ident(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// sun_path holds 108 bytes on Linux (104 on macOS), terminator included.
#[cfg(unix)]
fn check_path_length(socket: &Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    const MAX: usize = if cfg!(target_os = "linux") { 107 } else { 103 };
    let len = socket.as_os_str().as_bytes().len();
    if len > MAX {
        bail!(
            "socket path {} is {len} bytes, longer than the {MAX} a Unix socket allows; choose a shorter path with --socket or CCMEM_SOCKET",
            socket.display()
        );
    }
    Ok(())
}

/// Removes a socket file that nobody listens on. A file that answers belongs to a live server
/// that does not hold our lock (an older ccmem, another program): we leave it alone.
fn remove_stale(socket: &Path) -> anyhow::Result<()> {
    if paths::is_named_pipe(socket) {
        return Ok(());
    }
    let meta = match std::fs::symlink_metadata(socket) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", socket.display())),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            bail!("{} exists and is not a socket; move it away or choose another --socket", socket.display());
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    match ConnectOptions::new().name(paths::socket_name(socket)?).connect_sync() {
        Ok(_) => bail!(
            "another server is listening on {} without holding {}; stop it or choose another --socket",
            socket.display(),
            paths::pidfile_for(socket)?.display()
        ),
        Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound) => {
            tracing::info!(socket = %socket.display(), "removing stale socket left by a previous daemon");
            match std::fs::remove_file(socket) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("cannot remove stale socket {}", socket.display()))
                }
                _ => Ok(()),
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot check whether {} is stale", socket.display())),
    }
}
