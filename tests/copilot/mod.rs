//! The real GitHub Copilot CLI, installed from the npm registry into the target directory and
//! run offline (`copilot -p … --allow-all-tools`) against the fake model server's Chat
//! Completions API as a custom provider (no GitHub login), in a test's private environment.
//!
//! `CCMEM_COPILOT_BIN` names a `copilot` to use instead; `CCMEM_COPILOT_VERSION` another
//! version to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, Env};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use agents::Run;

/// The version these tests were written against (README: "Tested with Copilot CLI …").
pub const VERSION: &str = "1.0.102";

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    agents::cli(&BIN, "CCMEM_COPILOT_BIN", "CCMEM_COPILOT_VERSION", VERSION, install)
}

/// `npm install @github/copilot@version` into `target/tmp/copilot/<version>` (kept between
/// runs); its `copilot` unpacks the platform's program into a cache on first use.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot").join(version);
    agents::install_from_npm(&dir, &format!("@github/copilot@{version}"), "CCMEM_COPILOT_BIN", |d| {
        Some(d.join("node_modules/.bin/copilot")).filter(|b| b.exists())
    })
}

/// Runs `copilot -p PROMPT --allow-all-tools` (and `extra` arguments) in `project` with the
/// test's HOME, its daemon and the fake model as a custom provider, offline.
pub fn run(env: &Env, model: &ModelServer, project: &Path, prompt: &str, extra: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    // The program Copilot CLI unpacks is kept between runs and tests.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
    cmd.env("COPILOT_HOME", env.home.join(".copilot"))
        .env("XDG_CACHE_HOME", cache)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.url()))
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "test-offline-key")
        .env("COPILOT_MODEL", "gpt-4.1")
        .args(["-p", prompt, "--allow-all-tools"])
        .args(extra);
    agents::run_cli(env, cmd, project, "copilot")
}
