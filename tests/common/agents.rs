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

/// The agent CLI a suite runs: the program `bin_var` names, else `install(version)` (the
/// version `version_var` names, else `version`), once per test binary.
pub fn cli(
    cell: &'static std::sync::OnceLock<PathBuf>,
    bin_var: &str,
    version_var: &str,
    version: &str,
    install: fn(&str) -> PathBuf,
) -> &'static Path {
    cell.get_or_init(|| match std::env::var_os(bin_var) {
        Some(b) => PathBuf::from(b),
        None => install(&std::env::var(version_var).unwrap_or_else(|_| version.into())),
    })
}

/// One run of an agent's CLI: what it printed, and the JSON lines among it.
pub struct Run {
    pub output: Output,
    pub lines: Vec<serde_json::Value>,
    agent: &'static str,
}

impl Run {
    /// Asserts the run ended well.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "{} failed ({}):\nstdout:\n{}\nstderr:\n{}",
            self.agent,
            self.output.status,
            text(&self.output.stdout),
            text(&self.output.stderr)
        );
        self
    }

    /// The first string `key` holds in a printed JSON line (of `kind`, when given: its
    /// `type`).
    pub fn first(&self, key: &str, kind: Option<&str>) -> String {
        self.lines
            .iter()
            .filter(|l| kind.is_none_or(|k| l["type"] == k))
            .find_map(|l| l[key].as_str())
            .unwrap_or_else(|| panic!("{}: no {key} printed:\n{}", self.agent, text(&self.output.stdout)))
            .to_string()
    }
}

/// How long one run of an agent's CLI may take before the test fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(180);

/// Runs `cmd` (the agent's program, with its arguments and its own environment set) in
/// `project` with the test's HOME and daemon: the test's `ccmemctl` first on PATH, the hook's
/// waits raised for a loaded machine, no stdin; killed (and the test failed) after
/// [`RUN_LIMIT`].
pub fn run_cli(env: &super::Env, mut cmd: Command, project: &Path, agent: &'static str) -> Run {
    // The agent's own settings stay: the test's environment goes under them.
    let own: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)> =
        cmd.get_envs().map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned()))).collect();
    cmd.env_clear();
    env.apply(&mut cmd);
    cmd.env("PATH", path_with_ccmemctl()).env("LANG", "C.UTF-8").env("CCMEM_HOOK_TIMEOUT_MS", "4000");
    for (k, v) in own {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.current_dir(project).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {agent}: {e}"));
    let output = wait_within(child, RUN_LIMIT, agent);
    env.note_daemon();
    let lines = text(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Run { output, lines, agent }
}
