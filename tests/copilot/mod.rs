//! The real GitHub Copilot CLI, installed from the npm registry into the target directory and
//! run offline (`copilot -p … --allow-all-tools`) against the fake model server's Chat
//! Completions API as a custom provider (no GitHub login), in a test's private environment.
//!
//! `CCMEM_COPILOT_BIN` names a `copilot` to use instead; `CCMEM_COPILOT_VERSION` another
//! version to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, text, Env};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The version these tests were written against (README: "Tested with Copilot CLI …").
pub const VERSION: &str = "1.0.102";

/// How long one `copilot -p` run may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("CCMEM_COPILOT_BIN") {
        Some(b) => PathBuf::from(b),
        None => install(&std::env::var("CCMEM_COPILOT_VERSION").unwrap_or_else(|_| VERSION.into())),
    })
}

/// `npm install @github/copilot@version` into `target/tmp/copilot/<version>` (kept between
/// runs); its `copilot` unpacks the platform's program into a cache on first use.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot").join(version);
    agents::install_from_npm(&dir, &format!("@github/copilot@{version}"), "CCMEM_COPILOT_BIN", |d| {
        Some(d.join("node_modules/.bin/copilot")).filter(|b| b.exists())
    })
}

/// One `copilot -p` outcome.
pub struct Run {
    pub output: Output,
}

impl Run {
    /// Asserts the run ended well.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "copilot failed ({}):\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            text(&self.output.stdout),
            text(&self.output.stderr)
        );
        self
    }
}

/// Runs `copilot -p PROMPT --allow-all-tools` (and `extra` arguments) in `project` with the
/// test's HOME, its daemon and the fake model as a custom provider, offline.
pub fn run(env: &Env, model: &ModelServer, project: &Path, prompt: &str, extra: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    cmd.env_clear();
    env.apply(&mut cmd);
    // The program Copilot CLI unpacks is kept between runs and tests.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
    cmd.env("PATH", agents::path_with_ccmemctl())
        .env("COPILOT_HOME", env.home.join(".copilot"))
        .env("XDG_CACHE_HOME", cache)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.url()))
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "test-offline-key")
        .env("COPILOT_MODEL", "gpt-4.1")
        .env("LANG", "C.UTF-8")
        .env("CCMEM_HOOK_TIMEOUT_MS", "4000")
        .current_dir(project)
        .args(["-p", prompt, "--allow-all-tools"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", cli().display()));
    let output = agents::wait_within(child, RUN_LIMIT, "copilot");
    env.note_daemon();
    Run { output }
}
