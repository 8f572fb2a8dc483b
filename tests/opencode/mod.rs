//! The real OpenCode CLI, installed from the npm registry into the target directory and run
//! offline (`opencode run`) against the fake model server's Chat Completions API, with
//! ccmem's plugin, in a test's private environment.
//!
//! `CCMEM_OPENCODE_BIN` names an `opencode` to use instead; `CCMEM_OPENCODE_VERSION` another
//! version to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, Env};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use agents::Run;

/// The version these tests were written against (README: "Tested with OpenCode …").
pub const VERSION: &str = "1.18.33";

/// The CLI to run: installed once per test binary. (It retries a model server that does not
/// answer for ever: the run's time limit ends it.)
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    agents::cli(&BIN, "CCMEM_OPENCODE_BIN", "CCMEM_OPENCODE_VERSION", VERSION, install)
}

/// `npm install opencode-ai@version` into `target/tmp/opencode/<version>` (kept between runs),
/// then the platform package's native binary in it.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("opencode").join(version);
    agents::install_from_npm(&dir, &format!("opencode-ai@{version}"), "CCMEM_OPENCODE_BIN", |d| {
        let modules = d.join("node_modules");
        let platform = std::fs::read_dir(&modules)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("opencode-") && e.file_name() != "opencode-ai")
            .map(|e| e.path().join("bin/opencode"));
        platform.chain([modules.join("opencode-ai/bin/opencode.exe")]).find(|b| agents::answers_version(b, "."))
    })
}

/// OpenCode's configuration for a run (`OPENCODE_CONFIG_CONTENT`): the fake model as an
/// OpenAI-compatible provider (bundled in OpenCode), every tool allowed.
pub fn config(model: &ModelServer) -> String {
    json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": false,
        "share": "disabled",
        "permission": {"*": "allow"},
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{}/v1", model.url()), "apiKey": "test-offline-key"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": true, "limit": {"context": 100000, "output": 4096}}}
        }}
    })
    .to_string()
}

/// The conversation's id (`ses_…`, on every line it printed).
pub fn session_id(run: &Run) -> String {
    run.first("sessionID", None)
}

/// Runs `opencode run PROMPT` (and `extra` arguments) in `project` with the test's HOME, its
/// daemon and the fake model. OpenCode installs its plugin package into its config folder at
/// start: from the npm registry, failing fast when that cannot be reached.
pub fn run(env: &Env, model: &ModelServer, project: &Path, prompt: &str, extra: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    cmd.env("OPENCODE_CONFIG_CONTENT", config(model))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("npm_config_fetch_retries", "0")
        .args(["run", "--format", "json"])
        .args(extra)
        .arg(prompt);
    agents::run_cli(env, cmd, project, "opencode")
}
