//! A daemon a test started, and the guard that stops it by PID whatever the test's end.

use super::*;

/// A daemon started by the test as its child.
pub struct Daemon {
    pub child: Option<Child>,
    pub pid: u32,
    pub stderr: PathBuf,
}

impl Daemon {
    pub fn spawn(cmd: &mut Command, stderr: PathBuf) -> Self {
        let err = std::fs::File::create(&stderr).expect("stderr file");
        let child = cmd.stdout(Stdio::null()).stderr(err).spawn().expect("spawn ccmemd");
        Daemon { pid: child.id(), child: Some(child), stderr }
    }

    pub fn wait_ready(&self, socket: &Path) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut s) = UnixStream::connect(socket) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                if s.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n").is_ok() {
                    let mut line = String::new();
                    if BufReader::new(&s).read_line(&mut line).is_ok() && line.contains("pong") {
                        return;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("ccmemd did not become ready; its stderr:\n{}", self.log());
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends `sig` and waits for the exit status.
    pub fn signal_and_wait(&mut self, sig: i32, timeout: Duration) -> std::process::ExitStatus {
        unsafe { libc::kill(self.pid as i32, sig) };
        self.wait(timeout)
    }

    pub fn wait(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let child = self.child.as_mut().expect("child");
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(st) = child.try_wait().expect("try_wait") {
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "ccmemd (pid {}) did not exit in {timeout:?}; log:\n{}",
                self.pid,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if child.try_wait().ok().flatten().is_none() {
                stop_pid(self.pid);
                let _ = child.wait();
            }
        }
    }
}

/// SIGTERM, a grace period, then SIGKILL.
pub fn stop_pid(pid: u32) {
    let pid = pid as i32;
    if unsafe { libc::kill(pid, 0) } != 0 || !is_ccmemd(pid as u32) {
        return;
    }
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid as u32) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Alive and not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

fn is_ccmemd(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| c.split(|&b| b == 0).next().is_some_and(|a| a.ends_with(b"ccmemd")))
        .unwrap_or(false)
}

/// Live ccmemd processes whose command line or environment names `socket`'s runtime dir.
pub fn daemons_for(socket: &Path) -> Vec<u32> {
    let key = socket.parent().and_then(Path::parent).unwrap_or(socket).to_string_lossy().into_owned();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if !is_ccmemd(pid) || !alive(pid) {
            continue;
        }
        let mut hay = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        hay.extend(std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default());
        if String::from_utf8_lossy(&hay).contains(&key) {
            found.push(pid);
        }
    }
    found
}
