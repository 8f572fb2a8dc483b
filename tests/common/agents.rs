//! The agents' real CLIs: installed once from the npm registry into the target directory,
//! and run with a time limit.

use super::text;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `npm install <package>` into `dir` (kept between runs), then `find(dir)` (the platform's
/// native binary in it). Installed beside and renamed, so that two test runs at once never
/// see half an install.
pub fn install_from_npm(dir: &Path, package: &str, env_var: &str, find: impl Fn(&Path) -> Option<PathBuf>) -> PathBuf {
    if let Some(bin) = find(dir) {
        return bin;
    }
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).unwrap_or_else(|e| panic!("mkdir for {package}: {e}"));
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
        .arg(&partial)
        .arg(package)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run npm to install {package}: {e}"));
    assert!(
        out.status.success(),
        "npm could not install {package} (the npm registry must be reachable, or set {env_var} to the program):\n{}",
        text(&out.stderr)
    );
    if std::fs::rename(&partial, dir).is_err() {
        let _ = std::fs::remove_dir_all(&partial); // another run got there first
    }
    find(dir).unwrap_or_else(|| panic!("no program for this platform in {} ({package})", dir.display()))
}

/// Whether `bin --version` succeeds and prints `marker`.
pub fn answers_version(bin: &Path, marker: &str) -> bool {
    Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && text(&o.stdout).contains(marker))
}

/// Waits for `child` at most `limit`, killing it (and failing the test) after that.
pub fn wait_within(child: Child, limit: Duration, what: &str) -> Output {
    let pid = child.id();
    let started = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.unwrap_or_else(|e| panic!("wait for {what}: {e}")),
        Err(_) => {
            // SAFETY: a signal to the child this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("{what} ran for more than {limit:?} ({:?})", started.elapsed());
        }
    }
}

/// The test's `ccmemctl` first on PATH, then the caller's PATH.
pub fn path_with_ccmemctl() -> std::ffi::OsString {
    let bin_dir = Path::new(super::CCMEMCTL).parent().expect("target dir");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin_dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    std::env::join_paths(dirs).expect("PATH")
}
