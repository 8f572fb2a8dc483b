//! Dev servers: the user's listening TCP sockets, the processes behind them, and the
//! projects they were started from.
//!
//! One task scans for every project, on an interval and when a project asks (status,
//! context, checkpoint), and tells each live project which servers are its own: those
//! whose process works inside the project's root (the innermost project wins). Where its
//! parent works does not count: a server started from a shell in the project but working
//! elsewhere (a model server in a parent directory, a tool's daemon in `/`) is not the
//! project's. A project only hears from the scanner when its list changed.
//!
//! A scan is cheap: one netlink dump of TCP sockets, socket inodes mapped to pids through
//! `/proc/<pid>/fd` of the user's own processes only (and remembered between scans), then
//! the few processes found read through sysinfo, which is told not to keep `/proc` files
//! open.

use ccmem_proto::model::environment::ServerInfo;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, UpdateKind};
use tokio::sync::{mpsc, oneshot};

/// A socket with no owner in sight is looked for again after 1, 2, 4, … scans, at most
/// this many apart: such owners (another pid namespace, the kernel) rarely come into view.
#[cfg(target_os = "linux")]
const UNSEEN_RETRY_MAX: u64 = 360;
/// A scan this recent answers an on-demand request.
const FRESH: Duration = Duration::from_millis(500);

/// A listening server as one scan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// TCP port.
    pub port: u16,
    /// The process holding the socket.
    pub pid: u32,
    /// Its name.
    pub process: String,
    /// Its command line.
    pub command: String,
    /// Its working directory, when it can be read.
    pub cwd: Option<PathBuf>,
}

/// Asks the scanner for scans. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Ports {
    tx: mpsc::Sender<Request>,
}

/// A request for a scan.
#[derive(Debug)]
pub struct Request {
    /// The project that must hear the result, changed or not.
    root: Option<PathBuf>,
    done: Option<oneshot::Sender<()>>,
}

/// A handle and the receiving end for [`spawn`]: projects get the handle before the
/// scanner (which needs the registry of projects) starts.
pub fn channel() -> (Ports, mpsc::Receiver<Request>) {
    let (tx, rx) = mpsc::channel(256);
    (Ports { tx }, rx)
}

impl Ports {
    /// Scans now (or uses a scan under half a second old) and returns once `root`'s task
    /// has been told; gives up after two seconds (status is not held up by a slow /proc).
    pub async fn refresh(&self, root: &Path) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Request { root: Some(root.to_path_buf()), done: Some(done) }).await.is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(2), wait).await;
        }
    }

    /// Asks for a scan whose result `root` will hear, without waiting.
    pub fn kick(&self, root: &Path) {
        let _ = self.tx.try_send(Request { root: Some(root.to_path_buf()), done: None });
    }
}

/// Who hears the scans: the live projects (the registry, as far as the scanner needs it).
pub trait Audience: Send + Sync + 'static {
    /// The live projects' roots.
    fn roots(&self) -> Vec<PathBuf>;
    /// Tells the project at `root` its servers, as of this scan.
    fn tell(self: Arc<Self>, root: PathBuf, servers: Vec<ServerInfo>) -> BoxFuture;
}

/// The future [`Audience::tell`] returns.
pub type BoxFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs the scanner: every `ports.scan_interval` of the live configuration (off: only on
/// request) while any project is live.
pub fn spawn(mut rx: mpsc::Receiver<Request>, projects: Arc<dyn Audience>, mut live: crate::config::LiveRx) {
    tokio::spawn(async move {
        // Made at the first scan: nothing of it is needed to start.
        let mut scanner: Option<Scanner> = None;
        let mut told: HashMap<PathBuf, Vec<ServerInfo>> = HashMap::new();
        let mut last: Option<(Instant, Arc<Vec<Listener>>)> = None;
        let timer = |interval: Option<Duration>| {
            let period = interval.unwrap_or(Duration::from_secs(3600 * 24 * 365));
            let mut t = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            t
        };
        let mut interval = live.borrow().port_scan_interval;
        let mut tick = timer(interval);
        loop {
            let mut requests = Vec::new();
            tokio::select! {
                r = rx.recv() => match r {
                    Some(r) => requests.push(r),
                    None => return,
                },
                Ok(()) = live.changed() => {
                    interval = live.borrow().port_scan_interval;
                    tick = timer(interval);
                    continue;
                }
                _ = tick.tick(), if interval.is_some() => {
                    if projects.roots().is_empty() {
                        continue;
                    }
                }
            }
            while let Ok(r) = rx.try_recv() {
                requests.push(r);
            }
            let reuse = !requests.is_empty() && last.as_ref().is_some_and(|(t, _)| t.elapsed() < FRESH);
            let listeners = match (reuse, &last) {
                (true, Some((_, l))) => l.clone(),
                _ => {
                    // Lent to the blocking pool and taken back.
                    let mut s = scanner.take().unwrap_or_default();
                    let Ok((s, found)) = tokio::task::spawn_blocking(move || {
                        let found = s.scan();
                        (s, found)
                    })
                    .await
                    else {
                        tracing::error!("the port scan panicked; dev servers are no longer tracked");
                        return;
                    };
                    scanner = Some(s);
                    let found = Arc::new(found);
                    last = Some((Instant::now(), found.clone()));
                    found
                }
            };
            let roots = projects.roots();
            let mut mine = assign(&listeners, &roots);
            told.retain(|r, _| roots.contains(r));
            for root in &roots {
                let servers = mine.remove(root).unwrap_or_default();
                let asked = requests.iter().any(|r| r.root.as_deref() == Some(root.as_path()));
                if asked || told.get(root) != Some(&servers) {
                    told.insert(root.clone(), servers.clone());
                    projects.clone().tell(root.clone(), servers).await;
                }
            }
            for r in requests {
                if let Some(done) = r.done {
                    let _ = done.send(());
                }
            }
        }
    });
}

/// Each listener goes to the innermost project root holding its working directory.
pub fn assign(listeners: &[Listener], roots: &[PathBuf]) -> HashMap<PathBuf, Vec<ServerInfo>> {
    let mut out: HashMap<PathBuf, Vec<ServerInfo>> = HashMap::new();
    for l in listeners {
        let owner = l
            .cwd
            .as_ref()
            .and_then(|cwd| roots.iter().filter(|r| cwd.starts_with(r)).max_by_key(|r| r.components().count()));
        if let Some(root) = owner {
            let list = out.entry(root.clone()).or_default();
            if !list.iter().any(|s| s.port == l.port && s.pid == Some(l.pid)) {
                list.push(ServerInfo {
                    process: l.process.clone(),
                    port: l.port,
                    url: ServerInfo::url_for(l.port),
                    pid: Some(l.pid),
                    command: l.command.clone(),
                    ..Default::default()
                });
            }
        }
    }
    for list in out.values_mut() {
        list.sort_by_key(|s| (s.port, s.pid));
    }
    out
}

/// What a scan needs between runs: the process table it refreshes in place, and which pid
/// held each socket last time.
pub struct Scanner {
    sys: sysinfo::System,
    /// Socket inode → the pid holding it, or when to look again.
    #[cfg(target_os = "linux")]
    owners: HashMap<u32, Owner>,
    #[cfg(target_os = "linux")]
    scans: u64,
    /// Sockets looked for in vain, and how many times (the wait before the next look
    /// doubles with each).
    #[cfg(target_os = "linux")]
    misses: HashMap<u32, u32>,
    /// Our uid: netlink reports each socket's owner by uid.
    #[cfg(target_os = "linux")]
    uid: u32,
    /// Our user as sysinfo names it (a uid on macOS, a SID on Windows): processes of other
    /// users are skipped.
    #[cfg(not(target_os = "linux"))]
    me: Option<sysinfo::Uid>,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// A scanner for the current user's servers.
    pub fn new() -> Self {
        // sysinfo would otherwise keep a /proc/<pid>/stat open per process it has seen.
        sysinfo::set_open_files_limit(0);
        #[cfg_attr(target_os = "linux", allow(unused_mut))]
        let mut sys = sysinfo::System::new();
        #[cfg(not(target_os = "linux"))]
        let me = {
            let pid = Pid::from_u32(std::process::id());
            let user = ProcessRefreshKind::nothing().with_user(UpdateKind::Always);
            sys.refresh_processes_specifics(ProcessesToUpdate::Some(&[pid]), true, user);
            sys.process(pid).and_then(|p| p.user_id()).cloned()
        };
        Self {
            sys,
            #[cfg(target_os = "linux")]
            owners: HashMap::new(),
            #[cfg(target_os = "linux")]
            scans: 0,
            #[cfg(target_os = "linux")]
            misses: HashMap::new(),
            #[cfg(target_os = "linux")]
            uid: ccmem_proto::wire::paths::euid(),
            #[cfg(not(target_os = "linux"))]
            me,
        }
    }

    /// The user's listening TCP servers now. Errors (no netlink, a process gone mid-scan)
    /// shrink the answer, never fail it.
    pub fn scan(&mut self) -> Vec<Listener> {
        let sockets = self.listening();
        let pids: Vec<u32> = {
            let mut p: Vec<u32> = sockets.iter().map(|(_, pid)| *pid).collect();
            p.sort_unstable();
            p.dedup();
            p
        };
        self.refresh(&pids);
        let mut out = Vec::new();
        for (port, pid) in sockets {
            let Some(p) = self.sys.process(Pid::from_u32(pid)) else { continue };
            let cwd = p.cwd().filter(|d| !d.as_os_str().is_empty()).map(Path::to_path_buf);
            let command: Vec<String> = p.cmd().iter().map(|a| a.to_string_lossy().into_owned()).collect();
            out.push(Listener {
                port,
                pid,
                process: p.name().to_string_lossy().into_owned(),
                command: command.join(" "),
                cwd,
            });
        }
        out.sort_by_key(|l| (l.port, l.pid));
        out.dedup_by_key(|l| (l.port, l.pid));
        out
    }

    /// Reads the processes holding sockets, and forgets the others.
    fn refresh(&mut self, pids: &[u32]) {
        let kind = ProcessRefreshKind::nothing()
            .without_tasks()
            .with_cwd(UpdateKind::Always)
            .with_cmd(UpdateKind::Always)
            .with_user(UpdateKind::OnlyIfNotSet);
        let wanted: Vec<Pid> = pids.iter().map(|p| Pid::from_u32(*p)).collect();
        if !wanted.is_empty() {
            self.sys.refresh_processes_specifics(ProcessesToUpdate::Some(&wanted), true, kind);
        }
        // Forget processes no longer involved, so the table stays small.
        let keep: std::collections::HashSet<Pid> = wanted.into_iter().collect();
        let stale: Vec<Pid> = self.sys.processes().keys().filter(|p| !keep.contains(p)).copied().collect();
        if !stale.is_empty() {
            self.sys.refresh_processes_specifics(ProcessesToUpdate::Some(&stale), true, ProcessRefreshKind::nothing());
        }
    }

    /// (port, pid) of the user's listening TCP sockets.
    #[cfg(target_os = "linux")]
    fn listening(&mut self) -> Vec<(u16, u32)> {
        use netstat2::{AddressFamilyFlags, ProtocolFlags, ProtocolSocketInfo, TcpState};
        let af = AddressFamilyFlags::IPV4 | AddressFamilyFlags::IPV6;
        let Ok(iter) = netstat2::iterate_sockets_info_without_pids(af, ProtocolFlags::TCP) else { return Vec::new() };
        let mut socks: Vec<(u16, u32)> = Vec::new();
        for si in iter.flatten() {
            if si.uid != self.uid {
                continue;
            }
            if let ProtocolSocketInfo::Tcp(t) = &si.protocol_socket_info {
                if t.state == TcpState::Listen && !socks.iter().any(|(_, i)| *i == si.inode) {
                    socks.push((t.local_port, si.inode));
                }
            }
        }
        let inodes: std::collections::HashSet<u32> = socks.iter().map(|(_, i)| *i).collect();
        // Sockets whose owner cannot be seen (another pid namespace, a kernel socket) are
        // remembered as such and looked for again only now and then: otherwise every scan
        // would read every process's descriptors.
        self.scans += 1;
        let scan = self.scans;
        self.owners.retain(|inode, owner| {
            inodes.contains(inode)
                && match owner {
                    Owner::Pid(pid) => Path::new(&format!("/proc/{pid}")).exists(),
                    Owner::Unseen { next } => *next > scan,
                }
        });
        let missing: Vec<u32> = inodes.iter().filter(|i| !self.owners.contains_key(i)).copied().collect();
        if !missing.is_empty() {
            let found = socket_owners(&missing, self.uid);
            for inode in missing {
                let owner = match found.iter().find(|(i, _)| *i == inode) {
                    Some((_, pid)) => Owner::Pid(*pid),
                    None => {
                        let misses = self.misses.remove(&inode).unwrap_or(0) + 1;
                        self.misses.insert(inode, misses);
                        Owner::Unseen { next: scan + (1u64 << misses.min(16)).min(UNSEEN_RETRY_MAX) }
                    }
                };
                self.owners.insert(inode, owner);
            }
        }
        self.misses.retain(|i, _| inodes.contains(i));
        socks
            .into_iter()
            .filter_map(|(port, inode)| match self.owners.get(&inode) {
                Some(Owner::Pid(pid)) => Some((port, *pid)),
                _ => None,
            })
            .collect()
    }

    /// (port, pid) of the user's listening TCP sockets.
    #[cfg(not(target_os = "linux"))]
    fn listening(&mut self) -> Vec<(u16, u32)> {
        use netstat2::{AddressFamilyFlags, ProtocolFlags, ProtocolSocketInfo, TcpState};
        let af = AddressFamilyFlags::IPV4 | AddressFamilyFlags::IPV6;
        let Ok(sockets) = netstat2::get_sockets_info(af, ProtocolFlags::TCP) else { return Vec::new() };
        let mut out = Vec::new();
        for si in sockets {
            if let ProtocolSocketInfo::Tcp(t) = &si.protocol_socket_info {
                if t.state == TcpState::Listen {
                    out.extend(si.associated_pids.iter().map(|p| (t.local_port, *p)));
                }
            }
        }
        // Other users' processes: skipped (their cwd is not ours to read anyway).
        let pids: Vec<Pid> = out.iter().map(|(_, p)| Pid::from_u32(*p)).collect();
        self.sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&pids),
            true,
            ProcessRefreshKind::nothing().with_user(UpdateKind::OnlyIfNotSet),
        );
        // Compared as sysinfo reads them: uids on macOS, SIDs on Windows. Not knowing who we
        // are keeps nothing.
        let Some(me) = &self.me else { return Vec::new() };
        out.retain(|(_, p)| self.sys.process(Pid::from_u32(*p)).and_then(|p| p.user_id()) == Some(me));
        out
    }
}

/// Who holds a socket, as far as the scanner knows.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy)]
enum Owner {
    Pid(u32),
    /// Not among the user's processes: look again at scan `next`.
    Unseen {
        next: u64,
    },
}

/// Which of the user's processes hold the sockets with these inodes: `/proc/<pid>/fd` of
/// processes owned by `uid` only, stopping once all are found.
#[cfg(target_os = "linux")]
fn socket_owners(inodes: &[u32], uid: u32) -> Vec<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else { return found };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if p.metadata().map(|m| m.uid()).ok() != Some(uid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else { continue };
            let Some(inode) = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u32>().ok())
            else {
                continue;
            };
            if inodes.contains(&inode) && !found.iter().any(|(i, _)| *i == inode) {
                found.push((inode, pid));
                if found.len() == inodes.len() {
                    return found;
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests;
