//! One daemon per project. Two daemons can run for one user — started on another socket,
//! under `sudo` or in a tmux with another `XDG_RUNTIME_DIR` — and share nothing but the
//! projects they are told of: the second overwrote a live project's checkpoint with an empty
//! session. So the claim lives where both see it, beside the state files in the project's
//! `.claude/`: a file naming the daemon (its pid and socket) that keeps the session. Another
//! daemon that finds it, and finds that daemon answering on that socket, leaves the project
//! alone and says why; a claim whose daemon is gone (a crash) is taken over.
//!
//! A claim file rather than a lock held open: an open descriptor would keep a project on a
//! removable disk from being unmounted (or remounted read-only) for as long as its session
//! lives, which is a day.
//!
//! A claim also names the directory it was made for (its path and identity): a copy of the
//! project (`cp -a`), the project moved elsewhere, or a claim committed to the repository and
//! cloned, is not claimed by the daemon the file names, which keeps no session there.

use ccmem_proto::files::dir::Dir;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The claim file, relative to the project root.
pub const LOCK_FILE: &str = ".claude/.ccmemd.lock";

/// What claiming a project came to.
#[derive(Debug)]
pub enum Taken {
    /// This daemon keeps the project; the claim goes when the guard does.
    Mine(Claim),
    /// Another daemon keeps it: why this one leaves it alone.
    Elsewhere(String),
    /// No claim could be made (a read-only tree, a `.claude` link): the project is kept
    /// without one, as before there were claims.
    None(String),
}

/// This daemon's claim on a project: removed when dropped, if it is still this daemon's
/// (this one, or one [`recheck`] made again). It is dropped before the session leaves the
/// registry, so no newer session of this daemon can have claimed the project meanwhile.
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    socket: PathBuf,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if read(&self.path).is_some_and(|c| c.pid == std::process::id() && c.socket == self.socket) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Who the claim at `root` names, as far as this daemon is concerned.
enum Holder {
    /// This daemon (serving on the same socket).
    This,
    /// Another daemon that answers on its socket: why this one leaves the project alone.
    Other(String),
    /// Nobody: no claim, an unreadable one, or one whose daemon no longer answers.
    Nobody { stale: bool },
}

fn holder_of(root: &Path, socket: &Path) -> Holder {
    match read(&root.join(LOCK_FILE)) {
        Some(c) if !c.is_for(root) => Holder::Nobody { stale: true },
        Some(c) if c.socket == socket => Holder::This,
        Some(c) if answers(&c.socket, c.pid) => Holder::Other(elsewhere(root, c.pid, &c.socket)),
        claim => Holder::Nobody { stale: claim.is_some() },
    }
}

/// What a claim file says.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ClaimFile {
    pid: u32,
    socket: PathBuf,
    /// The directory claimed, as a fingerprint of its path (the path may hold a secret, and
    /// the claim is a file on disk), and its identity ([`ccmem_proto::files::dir_id`]); absent
    /// in the claims of earlier versions (`PID SOCKET`).
    #[serde(default)]
    root: Option<String>,
    #[serde(default)]
    id: Option<(u64, u64)>,
}

impl ClaimFile {
    /// Whether the claim was made for the directory at `root`, not for the one it was copied
    /// or moved from: it must name both (a claim in the old `PID SOCKET` form, or one that
    /// leaves either out, names no directory, so a repository that commits one claims
    /// nothing with it).
    fn is_for(&self, root: &Path) -> bool {
        let same_path = self.root.as_deref() == Some(path_print(root).as_str());
        // Where the system has no identities (Windows), neither side has one.
        let same_dir = self.id == ccmem_proto::files::dir_id(root);
        same_path && same_dir
    }
}

/// The fingerprint of a claimed directory's path.
fn path_print(root: &Path) -> String {
    format!("{:016x}", crate::text::fnv1a(root.as_os_str().as_encoded_bytes()))
}

/// What a claim of this daemon on `root` says.
fn claim_text(root: &Path, socket: &Path) -> String {
    let claim = ClaimFile {
        pid: std::process::id(),
        socket: socket.to_path_buf(),
        root: Some(path_print(root)),
        id: ccmem_proto::files::dir_id(root),
    };
    format!("{}\n", serde_json::to_string(&claim).unwrap_or_default())
}

/// Why a project whose repository commits a claim file is kept without a claim.
fn committed(root: &Path) -> String {
    format!(
        "{} is committed in the repository: ccmem leaves it alone and keeps the project without a claim (`git rm --cached {LOCK_FILE}` and commit to let it claim the project again)",
        root.join(LOCK_FILE).display()
    )
}

/// Claims the project at `root` for this daemon, serving on `socket`.
pub fn take(root: &Path, socket: &Path) -> Taken {
    let path = root.join(LOCK_FILE);
    if let Some(why) = ccmem_proto::files::owned_by_another(root) {
        return Taken::None(why);
    }
    // Out of commits before it exists: an agent's `git add -A` must never stage it.
    if let Err(e) = super::checkpoint::exclude_from_git(root) {
        tracing::debug!(project = %root.display(), error = %e, "cannot exclude the claim file from git");
    }
    let dir = match claim_dir(root, true) {
        Ok(d) => d,
        Err(e) => return Taken::None(format!("cannot claim {}: {e}", root.display())),
    };
    // Twice at most: the second after a stale claim was removed.
    for _ in 0..2 {
        match create_new(&dir, &claim_text(root, socket)) {
            Ok(()) => return Taken::Mine(Claim { path, socket: socket.to_path_buf() }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match holder_of(root, socket) {
                Holder::Other(why) => return Taken::Elsewhere(why),
                // A claim committed in the repository is the repository's file: not
                // rewritten (a `git commit -a` would take ccmem's), and no claim is made.
                Holder::Nobody { .. } if crate::observe::git::tracks(root, LOCK_FILE) => {
                    return Taken::None(committed(root));
                }
                // Nobody answers there (a daemon that died), or it is this daemon's own, left
                // by a session that is just ending: taken over.
                Holder::This | Holder::Nobody { .. } => {
                    let _ = dir.remove(claim_name());
                }
            },
            Err(e) => return Taken::None(format!("cannot claim {}: {e}", root.display())),
        }
    }
    Taken::None(format!("cannot claim {}: the claim file keeps coming back", root.display()))
}

/// Before a checkpoint is written: the claim still names this daemon. One removed meanwhile
/// (`git clean -fdx`) is made again; one another daemon has taken since, while it answers,
/// means this one writes nothing more.
pub fn recheck(root: &Path, socket: &Path) -> Result<(), String> {
    let path = root.join(LOCK_FILE);
    match holder_of(root, socket) {
        Holder::This => Ok(()),
        Holder::Other(why) => Err(why),
        Holder::Nobody { stale } => {
            if path.exists() && crate::observe::git::tracks(root, LOCK_FILE) {
                return Ok(()); // the repository's own file (see `take`): left as it is
            }
            if stale {
                let _ = std::fs::remove_file(&path);
            }
            // Never through a `.claude` that is a link (nor made where there is none), nor
            // in a repository another user owns.
            if ccmem_proto::files::owned_by_another(root).is_some() {
                return Ok(());
            }
            let Ok(dir) = claim_dir(root, false) else { return Ok(()) };
            match create_new(&dir, &claim_text(root, socket)) {
                Ok(()) => Ok(()),
                // Made by another at this very moment: whoever it names keeps the project.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match read(&path) {
                    Some(c) if c.socket != socket && c.is_for(root) => Err(elsewhere(root, c.pid, &c.socket)),
                    _ => Ok(()),
                },
                Err(_) => Ok(()), // no claim can be made here: kept as before claims
            }
        }
    }
}

/// Why a project claimed by another daemon is left alone, when it is: for `status` of a
/// project this daemon has no session for.
pub fn held_elsewhere(root: &Path, socket: &Path) -> Option<String> {
    match holder_of(root, socket) {
        Holder::Other(why) => Some(why),
        Holder::This | Holder::Nobody { .. } => None,
    }
}

fn elsewhere(root: &Path, pid: u32, socket: &Path) -> String {
    format!(
        "another ccmemd (pid {pid}, socket {}) keeps the session of {}: this daemon leaves the project alone \
         (one daemon per project; stop the other, or use its socket)",
        socket.display(),
        root.display()
    )
}

/// The project's `.claude`, opened without going through a link (made when missing, with
/// `create`).
fn claim_dir(root: &Path, create: bool) -> io::Result<Dir> {
    Dir::open_under(root, &root.join(".claude"), create)
}

/// The claim file's name in `.claude`.
fn claim_name() -> &'static std::ffi::OsStr {
    Path::new(LOCK_FILE).file_name().unwrap_or_default()
}

/// Writes a new claim in `dir` (never through a link, never over anything that exists, never
/// blocking on a FIFO).
fn create_new(dir: &Dir, text: &str) -> io::Result<()> {
    let mut f = dir.create_new(claim_name(), 0o644)?;
    f.write_all(text.as_bytes())
}

/// The claim at `path`: JSON, or `PID SOCKET` as earlier versions wrote it (a small regular
/// file only: a repository's link or FIFO there is not read).
fn read(path: &Path) -> Option<ClaimFile> {
    let text = ccmem_proto::files::untrusted::read_string(path, 4096).ok()?;
    if let Ok(claim) = serde_json::from_str(&text) {
        return Some(claim);
    }
    let (pid, socket) = text.trim_end_matches('\n').split_once(' ')?;
    Some(ClaimFile { pid: pid.parse().ok()?, socket: PathBuf::from(socket), root: None, id: None })
}

/// How long a daemon named by a claim has to answer ccmem's hello.
const HELLO_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Whether a ccmemd of this user answers ccmem's own hello on `socket`, as the process
/// `pid` the claim names. A bare `connect()` proves nothing: a repository's claim can name
/// any socket on the machine (another program's, a co-user's), and a claim that counted
/// then would switch ccmem off for the project in silence.
fn answers(socket: &Path, pid: u32) -> bool {
    use interprocess::local_socket::{prelude::*, Stream};
    use std::io::{BufRead, BufReader};
    // Only a socket of this user's, in a directory only this user can write: a co-user's
    // socket (a listener that never accepts blocks `connect` for good) is asked nothing.
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let Some(dir) = ccmem_proto::wire::paths::socket_dir(socket) else { return false };
        if ccmem_proto::wire::paths::check_private_dir(dir).is_err() {
            return false;
        }
        let Ok(meta) = std::fs::symlink_metadata(socket) else { return false };
        if !meta.file_type().is_socket() || meta.uid() != ccmem_proto::wire::paths::euid() {
            return false;
        }
    }
    let socket = socket.to_path_buf();
    // Even this user's daemon may be stopped with its backlog full: the connection is made
    // on a thread of its own, and given up after HELLO_WAIT.
    let (tx, rx) = std::sync::mpsc::channel();
    let connecting = std::thread::Builder::new().name("ccmemd-claim-check".into()).spawn(move || {
        if let Ok(name) = ccmem_proto::wire::paths::socket_name(&socket) {
            let _ = tx.send(Stream::connect(name));
        }
    });
    if connecting.is_err() {
        return false;
    }
    let Ok(Ok(stream)) = rx.recv_timeout(HELLO_WAIT) else { return false };
    if ccmem_proto::wire::peer::same_user(&stream).is_err() {
        return false;
    }
    if stream.set_recv_timeout(Some(HELLO_WAIT)).is_err() || stream.set_send_timeout(Some(HELLO_WAIT)).is_err() {
        return false;
    }
    let hello = ccmem_proto::wire::api::Hello::this_build("ccmemd");
    let request = ccmem_proto::wire::rpc::encode_request(Some(1), ccmem_proto::wire::api::method::HELLO, &hello);
    let mut stream = BufReader::new(stream);
    if stream.get_mut().write_all(&request).is_err() {
        return false;
    }
    // One line, of a bounded size: a peer that floods or never ends its line is no daemon.
    let mut line = Vec::new();
    if (&mut stream).take(64 * 1024).read_until(b'\n', &mut line).is_err() {
        return false;
    }
    let reply = ccmem_proto::wire::rpc::Response::parse(&line).ok().and_then(|r| r.into_result().ok());
    reply
        .and_then(|v| serde_json::from_value::<ccmem_proto::wire::api::HelloReply>(v).ok())
        .is_some_and(|r| r.pid == pid)
}

#[cfg(test)]
mod tests {
    // Every test here needs Unix (see each one's ignore reason).
    #[cfg_attr(not(unix), allow(unused_imports))]
    use super::*;

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: the other daemon is a Unix socket listener")]
    fn a_claim_whose_daemon_answers_is_respected_a_dead_ones_taken_over() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("proj");
            std::fs::create_dir(&root).unwrap();
            std::fs::create_dir_all(root.join(".claude")).unwrap();
            let claim_of = |pid: u32, socket: &Path| ClaimFile {
                pid,
                socket: socket.to_path_buf(),
                root: Some(path_print(&root)),
                id: ccmem_proto::files::dir_id(&root),
            };
            let write =
                |c: &ClaimFile| std::fs::write(root.join(LOCK_FILE), serde_json::to_string(c).unwrap()).unwrap();
            let other = tmp.path().join("other.sock");
            let _daemon = hello_server(&other, 4242);
            write(&claim_of(4242, &other));
            let mine = tmp.path().join("mine.sock");
            match take(&root, &mine) {
                Taken::Elsewhere(why) => assert!(why.contains("pid 4242") && why.contains("other.sock"), "{why}"),
                t => panic!("{t:?}"),
            }
            assert!(held_elsewhere(&root, &mine).is_some());
            // The same claim in the old `PID SOCKET` form names no directory: nothing claimed.
            std::fs::write(root.join(LOCK_FILE), format!("4242 {}\n", other.display())).unwrap();
            assert_eq!(held_elsewhere(&root, &mine), None, "the old form claims nothing");
            // A daemon answering as another process than the claim names.
            write(&claim_of(4243, &other));
            assert_eq!(held_elsewhere(&root, &mine), None, "another pid");
            // Something that listens but is no ccmemd: one that never answers, one that
            // answers something else. Neither holds the project, nor holds the check up.
            let mute = tmp.path().join("mute.sock");
            let _mute = std::os::unix::net::UnixListener::bind(&mute).unwrap();
            write(&claim_of(4242, &mute));
            let t = std::time::Instant::now();
            assert_eq!(held_elsewhere(&root, &mine), None, "a socket that never answers");
            assert!(t.elapsed() < HELLO_WAIT * 3, "bounded: {:?}", t.elapsed());
            let chatty = tmp.path().join("chatty.sock");
            let _chatty = line_server(&chatty, b"HTTP/1.1 200 OK\r\n\r\n".to_vec());
            write(&claim_of(4242, &chatty));
            assert_eq!(held_elsewhere(&root, &mine), None, "not ccmem's answer");
            // A socket where others can write (a co-user's, or planted beside ours): asked
            // nothing, however well it answers; a listener that never accepts there would
            // have held `connect` for good.
            let shared = tmp.path().join("shared");
            std::fs::create_dir(&shared).unwrap();
            std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
            let planted = shared.join("ccmemd.sock");
            let _planted = hello_server(&planted, 4242);
            write(&claim_of(4242, &planted));
            assert_eq!(held_elsewhere(&root, &mine), None, "a socket in a directory others write to");
            // A claim naming a socket nobody listens on: a daemon that died.
            std::fs::write(root.join(LOCK_FILE), format!("4242 {}\n", tmp.path().join("gone.sock").display())).unwrap();
            let Taken::Mine(claim) = take(&root, &mine) else { panic!("a dead daemon's claim is taken over") };
            assert_eq!(held_elsewhere(&root, &mine), None);
            drop(claim);
            assert!(!root.join(LOCK_FILE).exists(), "the claim goes with the session");
            // A link planted by a repository is neither followed nor written through.
            let victim = tmp.path().join("victim");
            std::fs::write(&victim, "keep me").unwrap();
            std::os::unix::fs::symlink(&victim, root.join(LOCK_FILE)).unwrap();
            let _ = take(&root, &mine);
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        }
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "Unix: the other daemon is a Unix socket listener")]
    fn a_claim_copied_moved_or_committed_with_the_project_claims_nothing() {
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let other = tmp.path().join("other.sock");
            let project = |name: &str| {
                let root = std::fs::canonicalize(tmp.path()).unwrap().join(name);
                std::fs::create_dir_all(root.join(".claude")).unwrap();
                root
            };
            // The other daemon keeps `kept`: its claim stands there.
            let _daemon = hello_server(&other, std::process::id());
            let kept = project("kept");
            let Taken::Mine(theirs) = take(&kept, &other) else { panic!("claim") };
            let mine = tmp.path().join("mine.sock");
            assert!(matches!(take(&kept, &mine), Taken::Elsewhere(_)));
            // A copy (`cp -a`): the same claim text in another directory.
            let copy = project("copy");
            std::fs::copy(kept.join(LOCK_FILE), copy.join(LOCK_FILE)).unwrap();
            assert_eq!(held_elsewhere(&copy, &mine), None, "a copy is not the kept project");
            let Taken::Mine(_copy) = take(&copy, &mine) else { panic!("a copy's claim is taken over") };
            // Moved elsewhere (the same directory under another path).
            let moved = kept.with_file_name("moved");
            std::mem::forget(theirs); // its file moves with the directory
            std::fs::rename(&kept, &moved).unwrap();
            assert_eq!(held_elsewhere(&moved, &mine), None, "a claim made for another path");
            // Committed and cloned: a claim naming a directory that is not this one.
            let clone = project("clone");
            let foreign = ClaimFile { pid: 7, socket: other.clone(), root: Some(path_print(&clone)), id: Some((1, 2)) };
            std::fs::write(clone.join(LOCK_FILE), serde_json::to_string(&foreign).unwrap()).unwrap();
            assert_eq!(held_elsewhere(&clone, &mine), None, "another directory's identity");
            // The claim itself says what it was made for.
            let text = std::fs::read_to_string(copy.join(LOCK_FILE)).unwrap();
            let c: ClaimFile = serde_json::from_str(&text).unwrap();
            assert!(c.is_for(&copy) && c.socket == mine && c.pid == std::process::id(), "{text}");
        }
    }

    /// A socket at `path` that answers every line with `reply` (for as long as the test runs).
    #[cfg(unix)]
    fn line_server(path: &Path, reply: Vec<u8>) -> std::thread::JoinHandle<()> {
        use std::io::{BufRead, BufReader};
        let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let mut r = BufReader::new(conn);
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    if r.get_mut().write_all(&reply).is_err() {
                        break;
                    }
                    line.clear();
                }
            }
        })
    }

    /// A socket at `path` that answers ccmem's hello as a daemon of process `pid` would.
    #[cfg(unix)]
    fn hello_server(path: &Path, pid: u32) -> std::thread::JoinHandle<()> {
        let reply = ccmem_proto::wire::api::HelloReply {
            daemon_version: ccmem_proto::VERSION.into(),
            protocol_version: ccmem_proto::PROTOCOL_VERSION,
            pid,
            compatible: true,
        };
        let v = serde_json::to_value(reply).unwrap();
        line_server(path, ccmem_proto::wire::rpc::encode_response(&serde_json::json!(1), &Ok(v)))
    }
}
