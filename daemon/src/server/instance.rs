//! One daemon per socket: an exclusive lock on the pidfile, taken before binding.
//!
//! The lock is released by the kernel when the process dies, however it dies, so a lock that
//! cannot be taken always means a live daemon (perhaps still starting up). A socket file left
//! behind by a crash is removed only by whoever holds the lock.

use anyhow::{bail, Context};
use ccmem_proto::wire::api::{method, Hello, HelloReply};
use ccmem_proto::{wire::frame, wire::paths, wire::rpc};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The held pidfile lock. Dropping it (or [`PidLock::release`]) removes the file, when it is
/// still ours, and releases the lock.
#[derive(Debug)]
pub struct PidLock {
    file: File,
    path: PathBuf,
}

/// Outcome of [`PidLock::try_acquire`].
#[derive(Debug)]
pub enum TryLock {
    /// We hold the lock.
    Acquired(PidLock),
    /// Another process holds it; the pid it wrote, if readable.
    Held(Option<u32>),
}

impl PidLock {
    /// Takes the lock without waiting and writes our pid into the file.
    pub fn try_acquire(path: &Path) -> io::Result<TryLock> {
        loop {
            let mut file = open_pidfile(path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Ok(TryLock::Held(read_pid(&mut file))),
                Err(TryLockError::Error(e)) => return Err(e),
            }
            // An exiting daemon unlinks its pidfile; if that happened between our open and our
            // lock, we hold a lock on a file nobody else can see. Start over on the new one.
            if !same_file(&file, path)? {
                continue;
            }
            file.set_len(0)?;
            file.rewind()?;
            writeln!(file, "{}", std::process::id())?;
            return Ok(TryLock::Acquired(PidLock { file, path: path.to_path_buf() }));
        }
    }

    /// Removes the pidfile (if it is still ours) and releases the lock.
    pub fn release(self) {
        drop(self);
    }

    /// The pidfile's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whatever ends the daemon after the lock was taken (a bad configuration, a socket that
/// cannot be bound) leaves no pidfile behind.
impl Drop for PidLock {
    fn drop(&mut self) {
        if same_file(&self.file, &self.path).unwrap_or(false) {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "could not remove pidfile");
            }
        }
    }
}

fn open_pidfile(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let a = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(b) => Ok(a.dev() == b.dev() && a.ino() == b.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

// Windows does not let an open file be deleted, so the race above cannot happen there.
#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> io::Result<bool> {
    Ok(path.exists())
}

/// What start-up found.
#[derive(Debug)]
pub enum Instance {
    /// This process is the daemon for the socket.
    Primary(PidLock),
    /// A live daemon already answers on the socket.
    AlreadyRunning(HelloReply),
}

/// Takes the lock for `socket`, or finds the live daemon that holds it. A daemon that holds
/// the lock but is still starting is given until `wait` to answer.
pub async fn acquire(socket: &Path, wait: Duration) -> anyhow::Result<Instance> {
    let pidfile = paths::pidfile_for(socket)?;
    // Beside a named pipe the pidfile is in the state dir, which a fresh account lacks.
    if let Some(dir) = pidfile.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        paths::create_private_dirs(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let deadline = Instant::now() + wait;
    loop {
        match PidLock::try_acquire(&pidfile).with_context(|| format!("cannot lock pidfile {}", pidfile.display()))? {
            TryLock::Acquired(lock) => return Ok(Instance::Primary(lock)),
            TryLock::Held(pid) => {
                if let Ok(hello) = probe(socket, Duration::from_millis(500)).await {
                    return Ok(Instance::AlreadyRunning(hello));
                }
                if Instant::now() >= deadline {
                    let who = pid.map_or_else(|| "another process".to_string(), |p| format!("ccmemd (pid {p})"));
                    bail!(
                        "{who} holds the lock {} but does not answer on {}; if it is hung, stop it and start again",
                        pidfile.display(),
                        socket.display()
                    );
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Says hello to whatever listens on `socket`.
pub async fn probe(socket: &Path, timeout: Duration) -> anyhow::Result<HelloReply> {
    tokio::time::timeout(timeout, async {
        use interprocess::local_socket::ConnectOptions;
        let name = paths::socket_name(socket)?;
        let stream = ConnectOptions::new().name(name).connect_tokio().await?;
        (&stream).write_all(&rpc::encode_request(Some(1), method::HELLO, &Hello::this_build("ccmemd"))).await?;
        let mut line = Vec::new();
        BufReader::new((&stream).take(frame::MAX_FRAME as u64)).read_until(b'\n', &mut line).await?;
        let reply = rpc::Response::parse(&line)?.into_result()?;
        Ok(serde_json::from_value(reply)?)
    })
    .await
    .context("timed out")?
}

/// What a second daemon says and how it exits: nothing to do when its peer is this release,
/// an error naming the way out when it is another.
pub fn already_running(socket: &Path, peer: &HelloReply) -> std::process::ExitCode {
    if peer.daemon_version == ccmem_proto::VERSION && peer.protocol_version == ccmem_proto::PROTOCOL_VERSION {
        tracing::info!(pid = peer.pid, socket = %socket.display(), "ccmemd is already running; nothing to do");
        std::process::ExitCode::SUCCESS
    } else {
        tracing::error!(
            pid = peer.pid,
            running = %peer.daemon_version,
            this = ccmem_proto::VERSION,
            socket = %socket.display(),
            "another version of ccmemd is running; stop it with `ccmemctl shutdown` and start this one again"
        );
        std::process::ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_sees_the_first_and_its_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("ccmemd.pid");
        let TryLock::Acquired(first) = PidLock::try_acquire(&p).unwrap() else { panic!("first lock not acquired") };
        match PidLock::try_acquire(&p).unwrap() {
            TryLock::Held(pid) => assert_eq!(pid, Some(std::process::id())),
            TryLock::Acquired(_) => panic!("lock taken twice"),
        }
        first.release();
        assert!(!p.exists(), "release removes the pidfile");
        assert!(matches!(PidLock::try_acquire(&p).unwrap(), TryLock::Acquired(_)));
    }

    #[test]
    fn lock_survives_a_stale_pidfile() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("ccmemd.pid");
        std::fs::write(&p, "999999999\n").unwrap();
        let TryLock::Acquired(lock) = PidLock::try_acquire(&p).unwrap() else {
            panic!("stale pidfile blocked the lock")
        };
        assert_eq!(std::fs::read_to_string(lock.path()).unwrap().trim(), std::process::id().to_string());
    }
}
