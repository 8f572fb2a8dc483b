//! The `git` program as travel runs it: plumbing in the project's repository, and every call
//! to a remote in a repository of ccmem's own (see `remote`); with nothing of a repository's
//! configuration able to run a program, prompt, or reach further than the one URL asked for,
//! and bounded in time (the whole process group is stopped at the end).
//!
//! The project's repository is untrusted input: a downloaded archive with a `.git` can set
//! `core.sshCommand`, `core.gitProxy`, `core.askPass`, credential helpers, hooks,
//! `protocol.ext.allow`, and a remote whose `uploadpack` is a program. What plumbing could
//! run is overridden here by the command line or the environment, which git reads after the
//! repository; network calls run elsewhere, given the remote as a URL, and keep the same
//! guards against a repository's configuration all the same.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a local plumbing command may take (they read and write a few small objects).
pub const LOCAL: Duration = Duration::from_secs(5);

/// Longest a push or fetch may take: past it, it and every program it started are stopped.
pub const NETWORK: Duration = Duration::from_secs(20);

/// Output read at most from any one command.
const OUTPUT_CAP: usize = 4 << 20;

/// Transports a fetch or push may use. `ext::` (which runs a command) and every remote
/// helper of the repository's choosing are refused.
const TRANSPORTS: &[&str] = &["file", "git", "ssh", "http", "https"];

/// What one git command gave back.
#[derive(Debug, Default)]
pub struct Output {
    /// It exited with 0.
    pub ok: bool,
    /// Its standard output (at most [`OUTPUT_CAP`]).
    pub stdout: Vec<u8>,
    /// Its standard error, for the message of a failure.
    pub stderr: String,
    /// It was stopped at its deadline.
    pub timed_out: bool,
    /// It was stopped for bringing more than [`FETCH_CAP`].
    pub too_big: bool,
}

impl Output {
    /// The output as text, trimmed.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim().to_string()
    }

    /// Why it failed, in a line: git's last words, or the time it took.
    pub fn why(&self, what: &str) -> String {
        if self.timed_out {
            return format!("{what} did not finish within {} s and was stopped", NETWORK.as_secs());
        }
        if self.too_big {
            return format!("{what} brought more than {} MB and was stopped (a handoff is 16 KB)", FETCH_CAP >> 20);
        }
        // git's own errors (`fatal:`, `error:`, ssh's), else its last line: "Could not read
        // from remote repository … and the repository exists." says more than its last line.
        let lines: Vec<&str> =
            self.stderr.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("hint:")).collect();
        let errors: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| {
                ["fatal:", "error:", "ssh:", "remote:", "! ["].iter().any(|p| l.starts_with(p))
                    || l.contains("Permission denied")
                    || l.contains("Host key verification failed")
            })
            .collect();
        let last = if errors.is_empty() {
            lines.last().copied().unwrap_or("git failed without a word").to_string()
        } else {
            errors.join("; ")
        };
        let last = ccmem_proto::redact::redact(&last);
        format!("{what} failed: {}", ccmem_proto::model::session::truncate_chars(&last, 300))
    }
}

/// `git -C root` with the settings every travel command has: no prompt, no pager, no hooks,
/// no lazy fetch of a partial clone's objects, no maintenance started behind.
fn base(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root);
    for (k, v) in [
        ("core.hooksPath", "/dev/null"),
        ("core.fsmonitor", "false"),
        ("core.pager", "cat"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("commit.gpgSign", "false"),
        ("push.gpgSign", "false"),
        ("fetch.recurseSubmodules", "false"),
        ("submodule.recurse", "false"),
        ("credential.interactive", "false"),
    ] {
        cmd.arg("-c").arg(format!("{k}={v}"));
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        // Empty: set, so that git consults no `core.askPass` of the repository's, and runs
        // no program to ask.
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        .env("SSH_ASKPASS_REQUIRE", "never")
        // Set (empty): git then reads no `core.gitProxy`, and uses no proxy command.
        .env("GIT_PROXY_COMMAND", "")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_CONFIG_PARAMETERS");
    cmd
}

/// A local command (plumbing: reads and writes objects and refs of the repository).
pub fn local(root: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    local_with(root, args, input, &[])
}

/// [`local`] with `env` set (a commit's author and dates).
pub fn local_with(root: &Path, args: &[&str], input: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = base(root);
    cmd.args(args).envs(env.iter().copied());
    run(cmd, input, LOCAL)
}

/// `git config --show-scope -z …` of `pattern` in `root`: (scope, name, value) in the order
/// git reads them. With `-z` each field ends with a NUL: the scope, then the name (and, when
/// values are asked for, a line break and the value).
fn scoped(root: &Path, pattern: &str, values: bool) -> Vec<(String, String, String)> {
    let mut args = vec!["config", "--show-scope", "--includes", "-z"];
    if !values {
        args.push("--name-only");
    }
    args.extend(["--get-regexp", pattern]);
    let out = local(root, &args, None);
    let fields: Vec<String> = out.stdout.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned()).collect();
    fields
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| {
            let (name, value) = c[1].split_once('\n').unwrap_or((&c[1], ""));
            (c[0].clone(), name.to_string(), value.to_string())
        })
        .collect()
}

/// The user's own settings (global and system scopes) whose names match `pattern`, in the
/// order git reads them: `(name, value)`.
fn users(root: &Path, pattern: &str) -> Vec<(String, String)> {
    scoped(root, pattern, true)
        .into_iter()
        .filter(|(scope, _, _)| matches!(scope.as_str(), "global" | "system"))
        .map(|(_, name, value)| (name, value))
        .collect()
}

/// Names of the settings the repository itself (its `.git/config`, the files it includes,
/// `config.worktree`) gives that match `pattern`.
fn repository_sets(root: &Path, pattern: &str) -> Vec<String> {
    scoped(root, pattern, false)
        .into_iter()
        .filter(|(scope, _, _)| matches!(scope.as_str(), "local" | "worktree"))
        .map(|(_, name, _)| name)
        .collect()
}

/// Settings that would make a fetch or push run a program, and which the command line cannot
/// simply switch off: a repository that sets one is not pushed or fetched from.
const REFUSED: &[&str] = &["core.alternaterefscommand", "uploadpack.packobjectshook"];

/// A fetch or push to `url`: `args` after `git <verb>`. The repository's own credential
/// helpers are dropped (the user's global and system ones kept), its transports limited, its
/// ssh command replaced by the user's own in batch mode.
pub fn network(root: &Path, args: &[&str], ssh_auth_sock: Option<&Path>, watch: Option<&Path>) -> Output {
    let mut cmd = base(root);
    let own = repository_sets(root, r"^(core\.alternaterefscommand|uploadpack\..*|protocol\..*\.allow)$");
    if let Some(bad) = own.iter().find(|k| REFUSED.contains(&k.to_ascii_lowercase().as_str())) {
        return Output {
            stderr: format!("the repository's own git configuration sets {bad}: ccmem does not push or fetch here"),
            ..Output::default()
        };
    }
    cmd.args(["-c", "protocol.allow=never"]);
    for k in &own {
        // `protocol.<name>.allow` of the repository's own: never, whatever it said (the
        // ones allowed are set again below).
        if k.contains('=') {
            return Output { stderr: format!("the repository's git configuration sets {k:?}"), ..Output::default() };
        }
        cmd.arg("-c").arg(format!("{k}=never"));
    }
    for t in TRANSPORTS {
        cmd.arg("-c").arg(format!("protocol.{t}.allow=always"));
    }
    // An empty helper clears the list read so far (the repository's among it); the user's
    // own are named again after it.
    cmd.args(["-c", "credential.helper="]);
    for (name, value) in users(root, r"^credential\..*helper$") {
        if !name.contains('=') {
            cmd.arg("-c").arg(format!("{name}={value}"));
        }
    }
    let ssh = users(root, r"^core\.sshcommand$").pop().map(|(_, v)| v).filter(|v| !v.trim().is_empty());
    let ssh = ssh.unwrap_or_else(|| "ssh".into());
    // The environment's command wins over `core.sshCommand` (the repository's).
    cmd.env("GIT_SSH_COMMAND", format!("{ssh} -o BatchMode=yes -o ConnectTimeout=10"))
        .env_remove("GIT_SSH")
        .env_remove("GIT_SSH_VARIANT");
    if let Some(sock) = ssh_auth_sock {
        cmd.env("SSH_AUTH_SOCK", sock);
    }
    cmd.args(args);
    run_watched(cmd, None, NETWORK, watch)
}

/// Runs `cmd` to its end or its deadline, whichever comes first; at the deadline its whole
/// process group (ssh, a credential helper, a remote helper) is stopped.
fn run(cmd: Command, input: Option<&[u8]>, timeout: Duration) -> Output {
    run_watched(cmd, input, timeout, None)
}

/// Most a fetch may add to the repository it fetches into (its `objects/`): handoffs are
/// 16 KB each, tips only.
pub const FETCH_CAP: u64 = 64 << 20;

/// [`run`], stopped too when the objects under `watch` grow past [`FETCH_CAP`].
fn run_watched(mut cmd: Command, input: Option<&[u8]>, timeout: Duration, watch: Option<&Path>) -> Output {
    let base = watch.map(size_of).unwrap_or(0);
    let mut looked = Instant::now();
    let mut too_big = false;
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Output { stderr: format!("cannot run git: {e}"), ..Output::default() },
    };
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, &data);
        });
    }
    // Each pipe read on a thread of its own, its bytes handed back by a channel: a program
    // git started that outlives it (where no process group is stopped whole) may hold a pipe
    // open, and its reader is then left behind, not waited for.
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(OUTPUT_CAP as u64).read_to_end(&mut buf);
            }
            let _ = tx.send(buf);
        });
        rx
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout;
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(st)) => break (Some(st), false),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
                if let Some(dir) = watch.filter(|_| looked.elapsed() >= Duration::from_millis(200)) {
                    looked = Instant::now();
                    if size_of(dir).saturating_sub(base) > FETCH_CAP {
                        too_big = true;
                        stop_group(&mut child);
                        break (None, false);
                    }
                }
            }
            _ => {
                stop_group(&mut child);
                break (None, true);
            }
        }
    };
    // A grandchild still holding the pipes (ssh left behind) is stopped with its group.
    if !timed_out && !too_big {
        stop_group(&mut child);
    }
    // What came in faster than it was looked at counts all the same.
    let too_big = too_big || watch.is_some_and(|dir| size_of(dir).saturating_sub(base) > FETCH_CAP);
    let drained = |rx: std::sync::mpsc::Receiver<Vec<u8>>| rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    Output {
        ok: status.is_some_and(|s| s.success()) && !too_big,
        stdout: drained(out),
        stderr: String::from_utf8_lossy(&drained(err)).into_owned(),
        timed_out,
        too_big,
    }
}

/// Stops `child`'s process group (unix) or `child` (elsewhere), and reaps it.
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        // SAFETY: kill(2) with a negative pid signals the group the child leads (made with
        // process_group(0)); it touches no memory.
        unsafe {
            libc::kill(-(child.id() as i32), libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Bytes under `dir/objects` (packs, their temporary files, loose objects), two levels deep.
pub fn size_of(dir: &Path) -> u64 {
    fn walk(p: &Path, depth: u32) -> u64 {
        let Ok(rd) = std::fs::read_dir(p) else { return 0 };
        rd.flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() && depth > 0 => walk(&e.path(), depth - 1),
                Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
                _ => 0,
            })
            .sum()
    }
    walk(&dir.join("objects"), 2)
}
