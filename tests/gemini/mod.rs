//! The real Gemini CLI, installed from the npm registry into the target directory and run
//! offline (`gemini -p … --yolo`) against the fake model server's Gemini API in a test's
//! private environment.
//!
//! `CCMEM_GEMINI_BIN` names a `gemini` to use instead; `CCMEM_GEMINI_VERSION` another version
//! to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, Env};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use agents::Run;

/// The version these tests were written against (README: "Tested with Gemini CLI …").
pub const VERSION: &str = "0.61.0";

/// The model asked for: `write_todos` is offered to Gemini 2 models only.
pub const MODEL: &str = "gemini-2.5-pro";

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    agents::cli(&BIN, "CCMEM_GEMINI_BIN", "CCMEM_GEMINI_VERSION", VERSION, install)
}

/// `npm install @google/gemini-cli@version` into `target/tmp/gemini/<version>` (kept between
/// runs); its `gemini` is a node script.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gemini").join(version);
    agents::install_from_npm(&dir, &format!("@google/gemini-cli@{version}"), "CCMEM_GEMINI_BIN", |d| {
        Some(d.join("node_modules/.bin/gemini")).filter(|b| b.exists())
    })
}

/// The test HOME's `~/.gemini/settings.json`: an API key against the fake server, the model,
/// no usage statistics (no network), and no clean-up of old chats (Gemini CLI 0.61 deletes a
/// resumed session's chat file with it).
pub fn configure(env: &Env) {
    let dir = env.home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir ~/.gemini");
    let path = dir.join("settings.json");
    let mut settings: Value =
        std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_else(|| json!({}));
    settings["security"] = json!({"auth": {"selectedType": "gemini-api-key"}});
    settings["model"] = json!({"name": MODEL});
    settings["privacy"] = json!({"usageStatisticsEnabled": false});
    settings["general"] = json!({"sessionRetention": {"enabled": false}});
    std::fs::write(&path, serde_json::to_string_pretty(&settings).expect("json")).expect("write settings.json");
}

/// The conversation's id (the stream's `init` line).
pub fn session_id(run: &Run) -> String {
    run.first("session_id", Some("init"))
}

/// Runs `gemini -p PROMPT` (and `extra` arguments) in `project` with the test's HOME, its
/// daemon and the fake model. The folder is trusted as a user trusts it
/// (`GEMINI_CLI_TRUST_WORKSPACE`): Gemini CLI runs no hook in an untrusted folder.
pub fn run(env: &Env, model: &ModelServer, project: &Path, prompt: &str, extra: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    cmd.env("GEMINI_CLI_HOME", &env.home)
        .env("GOOGLE_GEMINI_BASE_URL", model.url())
        .env("GEMINI_API_KEY", "test-offline-key")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("TERM", "dumb")
        .args(["-p", prompt, "--output-format", "stream-json", "--yolo", "-m", MODEL])
        .args(extra);
    agents::run_cli(env, cmd, project, "gemini")
}

/// The text of a Gemini API request: its system instruction and every text part.
pub fn request_text(req: &Value) -> String {
    let mut out = String::new();
    let system = req["systemInstruction"]["parts"].as_array().into_iter().flatten();
    let contents = req["contents"].as_array().into_iter().flatten().filter_map(|c| c["parts"].as_array()).flatten();
    for part in system.chain(contents) {
        if let Some(t) = part["text"].as_str() {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}
