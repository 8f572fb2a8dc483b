//! What a test reads of a running daemon from outside: its watches, memory, CPU time; and the
//! descriptor limit a load test needs.

use super::*;

/// Inodes (hex, as the kernel prints them) of every inotify watch process `pid` holds.
pub fn watched_inodes(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else { return out };
    for e in rd.flatten() {
        let info = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
            if let Some(ino) = line.split_whitespace().find_map(|f| f.strip_prefix("ino:")) {
                out.push(ino.to_string());
            }
        }
    }
    out
}

/// A file's inode in the kernel's hex form.
pub fn inode_hex(p: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{:x}", std::fs::metadata(p).expect("stat").ino())
}

/// Resident and peak memory of `pid`, in KiB (VmRSS, VmHWM).
pub fn rss_kib(pid: u32) -> (u64, u64) {
    let f = status_kib(pid, &["VmRSS:", "VmHWM:"]);
    (f[0], f[1])
}

/// Fields of `pid`'s `/proc/<pid>/status` given in KiB (`"RssAnon:"`), 0 where missing.
pub fn status_kib(pid: u32, names: &[&str]) -> Vec<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    names.iter().map(|n| field(n)).collect()
}

/// CPU seconds (user + system) used by `pid` so far.
pub fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let f: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / hz
}

/// Raises the open-file limit to the hard limit (at most 65,536): 1,000 clients, and in the
/// benchmark their echo-server peers too, need more than the usual 1,024 descriptors.
pub fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max.min(65_536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}
