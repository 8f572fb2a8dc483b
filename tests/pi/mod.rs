//! The real Pi coding agent, installed from the npm registry into the target directory and
//! run offline (`pi -p --mode json`) against the fake model server's Chat Completions API,
//! with ccmem's extension, in a test's private environment.
//!
//! `CCMEM_PI_BIN` names a `pi` to use instead; `CCMEM_PI_VERSION` another version to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, Env};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use agents::Run;

/// The version these tests were written against (README: "Tested with Pi …").
pub const VERSION: &str = "0.73.1";

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    agents::cli(&BIN, "CCMEM_PI_BIN", "CCMEM_PI_VERSION", VERSION, install)
}

/// `npm install @mariozechner/pi-coding-agent@version` into `target/tmp/pi/<version>` (kept
/// between runs); its `pi` is a node script.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi").join(version);
    agents::install_from_npm(&dir, &format!("@mariozechner/pi-coding-agent@{version}"), "CCMEM_PI_BIN", |d| {
        Some(d.join("node_modules/.bin/pi")).filter(|b| b.exists())
    })
}

/// Pi's folder in the test HOME (`~/.pi/agent`): the fake model as an OpenAI-compatible
/// provider, chosen by default.
pub fn configure(env: &Env, model: &ModelServer) {
    let dir = env.home.join(".pi/agent");
    std::fs::create_dir_all(&dir).expect("mkdir ~/.pi/agent");
    let models = json!({"providers": {"fake": {
        "baseUrl": format!("{}/v1", model.url()), "api": "openai-completions", "apiKey": "test-offline-key",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": false, "input": ["text"],
            "contextWindow": 100000, "maxTokens": 4096, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]
    }}});
    std::fs::write(dir.join("models.json"), models.to_string()).expect("models.json");
    let settings = json!({"defaultProvider": "fake", "defaultModel": "fake-model"});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings.json");
}

/// The conversation's id (the first line: `{"type":"session","id":…}`).
pub fn session_id(run: &Run) -> String {
    run.first("id", Some("session"))
}

/// Runs `pi -p --mode json PROMPT` (and `extra` arguments) in `project` with the test's HOME,
/// its daemon and the fake model.
pub fn run(env: &Env, project: &Path, prompt: &str, extra: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    cmd.env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("PI_TELEMETRY", "0")
        .args(["-p", "--mode", "json"])
        .args(extra)
        .arg(prompt);
    agents::run_cli(env, cmd, project, "pi")
}
