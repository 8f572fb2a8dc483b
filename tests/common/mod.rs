//! Test harness: each test gets its own temp HOME and XDG directories (and so its own
//! socket), real `ccmemd` and `ccmemctl` processes, and a guard that stops every daemon it
//! started, by PID, when the test ends, pass or fail.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub mod agents;
mod daemon;
pub mod npm;
mod probe;
mod seed;

// Each test crate uses a different part of the harness.
#[allow(unused_imports)]
pub use daemon::*;
#[allow(unused_imports)]
pub use probe::*;
#[allow(unused_imports)]
pub use seed::*;

pub const CCMEMD: &str = env!("CARGO_BIN_EXE_ccmemd");
pub const CCMEMCTL: &str = env!("CARGO_BIN_EXE_ccmemctl");

/// A private environment: temp HOME, XDG dirs, socket. Dropping it stops any daemon whose
/// pid is in its pidfile (auto-started ones included).
pub struct Env {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub runtime: PathBuf,
    pub state: PathBuf,
    pub socket: PathBuf,
    extra_pids: std::cell::RefCell<Vec<u32>>,
}

impl Env {
    pub fn new() -> Self {
        let root = tempfile::Builder::new().prefix("ccm").tempdir_in("/tmp").expect("temp dir");
        let base = root.path().to_path_buf();
        let home = base.join("home");
        let runtime = base.join("run");
        let state = base.join("state");
        for d in [&home, &runtime, &state, &base.join("config"), &base.join("data"), &base.join("cache")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        set_mode(&runtime, 0o700);
        let socket = runtime.join("ccmem/ccmemd.sock");
        Env { root, home, runtime, state, socket, extra_pids: Default::default() }
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    pub fn pidfile(&self) -> PathBuf {
        self.socket.with_extension("pid")
    }

    pub fn log_file(&self) -> PathBuf {
        self.state.join("ccmem/ccmemd.log")
    }

    /// Applies this environment to `cmd`, clearing anything from the outside that would
    /// point ccmem elsewhere.
    pub fn apply(&self, cmd: &mut Command) {
        let base = self.path();
        cmd.env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CONFIG_HOME", base.join("config"))
            .env("XDG_DATA_HOME", base.join("data"))
            .env("XDG_CACHE_HOME", base.join("cache"))
            .env_remove("CCMEM_SOCKET")
            .env_remove("CCMEM_NO_AUTOSTART")
            .env("RUST_LOG", "info")
            .current_dir(base)
            .stdin(Stdio::null());
        // Run by the suite, not by an agent, whatever runs the suite (see `by_user`).
        for v in ccmem_client::by_user::MARKERS {
            cmd.env_remove(v);
        }
    }

    /// This environment as a shell script's `export` lines (for a script another program
    /// runs: a terminal in tmux).
    pub fn shell_exports(&self) -> String {
        let q = |p: &Path| format!("'{}'", p.display());
        let base = self.path();
        format!(
            "export HOME={} XDG_RUNTIME_DIR={} XDG_STATE_HOME={} XDG_CONFIG_HOME={} XDG_DATA_HOME={} XDG_CACHE_HOME={} TERM=xterm-256color\nunset CCMEM_SOCKET CCMEM_NO_AUTOSTART NO_COLOR\n",
            q(&self.home),
            q(&self.runtime),
            q(&self.state),
            q(&base.join("config")),
            q(&base.join("data")),
            q(&base.join("cache"))
        )
    }

    /// A gzipped fixture (`tests/fixtures/REL`), unpacked into this environment's directory
    /// under its own name without `.gz`.
    pub fn unpack(&self, rel: &str) -> PathBuf {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("fixture"))
            .read_to_end(&mut text)
            .expect("gunzip");
        let out = self.path().join(Path::new(rel).file_stem().expect("name"));
        std::fs::write(&out, text).expect("write");
        out
    }

    pub fn ctl_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(CCMEMCTL);
        self.apply(&mut cmd);
        cmd.args(args);
        cmd
    }

    /// Runs `ccmemctl` with `args` to completion.
    pub fn ctl(&self, args: &[&str]) -> Output {
        let out = self.ctl_cmd(args).output().expect("run ccmemctl");
        self.note_daemon();
        out
    }

    /// Runs `ccmemctl ... --json` and parses its stdout, asserting exit 0.
    pub fn ctl_json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.ctl(&a);
        assert_ok(&out, &format!("ccmemctl {args:?}"));
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("ccmemctl {args:?} printed no JSON: {e}\n{}", text(&out.stdout)))
    }

    pub fn daemon_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(CCMEMD);
        self.apply(&mut cmd);
        cmd.args(args);
        cmd
    }

    /// Starts `ccmemd` with `args` in the foreground (as a child), its stderr in a file, and
    /// waits until it answers.
    pub fn start_daemon(&self, args: &[&str]) -> Daemon {
        self.start_daemon_with(args, |_| {})
    }

    /// [`Self::start_daemon`], with its command set up further by `configure` first (an
    /// environment variable).
    pub fn start_daemon_with(&self, args: &[&str], configure: impl FnOnce(&mut Command)) -> Daemon {
        let mut cmd = self.daemon_cmd(args);
        configure(&mut cmd);
        let d = Daemon::spawn(&mut cmd, self.path().join(format!("ccmemd-{}.stderr", unique())));
        d.wait_ready(&self.socket);
        d
    }

    /// Remembers the pid in the pidfile so Drop can stop it even after the file is gone.
    pub fn note_daemon(&self) {
        if let Some(pid) = self.pidfile_pid() {
            let mut v = self.extra_pids.borrow_mut();
            if !v.contains(&pid) {
                v.push(pid);
            }
        }
    }

    pub fn pidfile_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.pidfile()).ok()?.trim().parse().ok()
    }

    /// Connects a raw client to the socket.
    pub fn raw(&self) -> Raw {
        Raw::connect(&self.socket)
    }

    /// Live `ccmemd` processes serving this environment's socket.
    pub fn daemons_running(&self) -> Vec<u32> {
        daemons_for(&self.socket)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        self.note_daemon();
        let mut pids = self.extra_pids.borrow().clone();
        pids.extend(daemons_for(&self.socket));
        for pid in pids {
            stop_pid(pid);
        }
    }
}

/// A helper process of a test (one that holds a lock or a resource), killed and reaped when
/// the guard goes, however the test ends.
pub struct KillOnDrop(pub std::process::Child);

impl KillOnDrop {
    /// Starts `cmd` with its output piped and waits for the first line it prints (that it
    /// holds what it was started to hold); the guard, and that line.
    pub fn start_ready(cmd: &mut Command) -> (KillOnDrop, String) {
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("a helper process");
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufRead::read_line(&mut BufReader::new(out), &mut line);
        }
        (KillOnDrop(child), line.trim().to_string())
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A raw protocol client on a real socket.
pub struct Raw {
    pub stream: UnixStream,
    reader: BufReader<UnixStream>,
}

impl Raw {
    pub fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap_or_else(|e| panic!("connect {}: {e}", socket.display()));
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        Raw { stream, reader }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// Reads one reply line; `None` at end of stream.
    pub fn recv(&mut self) -> Option<serde_json::Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line:?}"))),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("recv: {e}"),
        }
    }

    /// Sends one line and returns the reply.
    pub fn call(&mut self, line: &str) -> serde_json::Value {
        self.send(format!("{line}\n").as_bytes());
        self.recv().unwrap_or_else(|| panic!("no reply to {line}"))
    }

    /// True once the daemon has closed the connection (reads hit end of stream).
    pub fn is_closed(&mut self) -> bool {
        let mut buf = [0u8; 64];
        loop {
            match self.reader.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }
}

pub fn error_code(reply: &serde_json::Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error reply: {reply}"))
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Writes an executable (mode 0755) from a child process. A file this process held open for
/// writing is inherited by whatever child another test forks at that moment, and until that
/// child execs, running the file fails with ETXTBSY ("Text file busy").
pub fn write_executable(path: &Path, contents: &str) {
    let mut sh = Command::new("sh")
        .args(["-c", "cat > \"$0\" && chmod 755 \"$0\""])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh");
    sh.stdin.take().expect("stdin").write_all(contents.as_bytes()).expect("write the executable");
    assert!(sh.wait().expect("sh").success(), "cannot write {}", path.display());
}

/// Copies an executable from a child process, for the reason [`write_executable`] gives.
pub fn copy_executable(from: &Path, to: &Path) {
    let st = Command::new("cp").arg(from).arg(to).status().expect("cp");
    assert!(st.success(), "cannot copy {} to {}", from.display(), to.display());
}

pub fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

pub fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).expect("stat").permissions().mode() & 0o777
}

pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Runs git in `dir`, asserting success; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.email=test@example.com",
            "-c",
            "user.name=Test",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?} failed: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `tmux` on a server of its own (its socket `sock`, no configuration read, not nested in a
/// tmux the suite may run in), with `args`.
pub fn tmux(tmux: &Path, sock: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(tmux).arg("-S").arg(sock).arg("-f").arg("/dev/null").args(args).env_remove("TMUX").output()
}

/// A git repository with one commit, inside the environment.
pub fn repo(env: &Env, name: &str) -> PathBuf {
    let dir = env.path().join(name);
    std::fs::create_dir_all(&dir).expect("mkdir repo");
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("README.md"), "# test\n").expect("write");
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "initial commit"]);
    std::fs::canonicalize(&dir).expect("canonicalize")
}

impl Env {
    /// A JSON-RPC request on a fresh raw connection; panics on an error reply.
    pub fn request(&self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let r = self.try_request(method, params.clone());
        match r {
            Ok(v) => v,
            Err(e) => panic!("{method} {params} failed: {e}"),
        }
    }

    /// A JSON-RPC request on a fresh raw connection: the result or the error object.
    pub fn try_request(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, serde_json::Value> {
        let line = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let mut reply = self.raw().call(&line);
        match reply.get_mut("error") {
            Some(e) => Err(e.take()),
            None => Ok(reply["result"].take()),
        }
    }

    /// Records an event in the project at `root`.
    pub fn event(&self, root: &Path, event: serde_json::Value) {
        self.request("session.event", serde_json::json!({"path": root, "event": event}));
    }

    /// What the daemon's journal answers `sql` with (read-only, beside the daemon): one value.
    #[allow(dead_code)]
    pub fn query_journal<T: rusqlite::types::FromSql>(&self, sql: &str) -> T {
        let db = self.state.join("ccmem").join("journal.db");
        let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("open {}: {e}", db.display()));
        conn.query_row(sql, [], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The project's status as JSON (`project` part).
    pub fn project_status(&self, root: &Path) -> serde_json::Value {
        self.request("status", serde_json::json!({"path": root}))["project"].take()
    }
}

/// The second user that root-only tests run a daemon as.
pub const NOBODY: u32 = 65534;

impl Env {
    /// Hands the environment's directories to `nobody` and starts `ccmemd` as that user;
    /// returns once its socket exists (root's own probe would be refused by the peer check).
    /// Only for tests running as root.
    pub fn start_daemon_as_nobody(&self, args: &[&str]) -> Daemon {
        use std::os::unix::process::CommandExt;
        for dir in [self.path(), &self.home, &self.runtime, &self.state] {
            std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).expect("chown to nobody");
        }
        let mut cmd = self.daemon_cmd(args);
        cmd.uid(NOBODY).gid(NOBODY);
        let d = Daemon::spawn(&mut cmd, self.path().join(format!("nobody-{}.stderr", unique())));
        // Root cannot ping it (that is the point), so readiness is its log line: the socket
        // file exists a moment before the daemon listens on it.
        assert!(
            wait_until(Duration::from_secs(10), || d.log().contains("ccmemd ready")),
            "ccmemd as nobody did not start: {}",
            d.log()
        );
        d
    }
}

// The agent's side: `ccmemctl hook` fed payloads, and waiting for the daemon to take them.

/// Runs `ccmemctl hook` with `payload` on stdin. Its time limits (start a daemon within
/// 300 ms, SessionStart's context within 2 s) are raised: a loaded test machine can take
/// longer to start a process, and what is tested here is what the hook does, not how fast
/// (tests/hooks.rs tests the limits themselves; benches/hooks.rs the speed).
/// The marks hooks leave in `env`'s state dir when the daemon took a connection and never
/// answered (`stalled-<hash>`).
pub fn stall_marks(env: &Env) -> usize {
    std::fs::read_dir(env.state.join("ccmem"))
        .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("stalled-")).count())
        .unwrap_or(0)
}

pub fn hook(env: &Env, payload: &[u8]) -> std::process::Output {
    hook_with(env, payload, |c| {
        c.env("CCMEM_HOOK_TIMEOUT_MS", "20000");
    })
}

/// Runs `ccmemctl hook` with `payload` on stdin, its environment as `configure` sets it (the
/// tests of the hook's own limits and of auto-start).
pub fn hook_with(env: &Env, payload: &[u8], configure: impl FnOnce(&mut Command)) -> std::process::Output {
    let mut cmd = env.ctl_cmd(&["hook"]);
    configure(&mut cmd);
    feed(env, cmd, payload)
}

/// Runs `cmd` (a hook, of whichever ccmemctl) with `payload` on stdin, its output captured.
pub fn feed(env: &Env, mut cmd: Command, payload: &[u8]) -> std::process::Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(payload);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    env.note_daemon();
    out
}

pub fn send(env: &Env, v: serde_json::Value) -> std::process::Output {
    let out = hook(env, v.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "the hook always exits 0");
    assert!(out.stderr.is_empty(), "the hook never writes to stderr: {}", text(&out.stderr));
    out
}

/// Waits until the daemon has processed what was sent (notifications are not answered).
pub fn settle(env: &Env, root: &Path, cond: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    assert!(
        wait_until(Duration::from_secs(10), || {
            last = env.project_status(root);
            cond(&last)
        }),
        "condition never met; status: {last:#}"
    );
    last
}

/// `dir` and everything below it (directories included), depth first.
pub fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A Claude Code hook payload: event `name` of conversation `conv` in `root`, with `extra`'s
/// fields added.
pub fn ev(root: &Path, conv: &str, name: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::json!({"session_id": conv, "transcript_path": format!("/tmp/{conv}.jsonl"), "cwd": root, "hook_event_name": name, "permission_mode": "default"});
    for (k, x) in extra.as_object().expect("extra fields as an object") {
        v[k] = x.clone();
    }
    v
}
