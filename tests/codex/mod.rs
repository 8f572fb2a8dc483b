//! The real Codex CLI, installed from the npm registry into the target directory and run
//! offline (`codex exec`) against the fake model server's Responses API in a test's private
//! environment.
//!
//! `CCMEM_CODEX_BIN` names a `codex` to use instead; `CCMEM_CODEX_VERSION` another version
//! to install.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::{agents, text, Env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The version these tests were written against (README: "Tested with Codex …").
pub const VERSION: &str = "0.169.0";

/// How long one `codex exec` may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("CCMEM_CODEX_BIN") {
        Some(b) => PathBuf::from(b),
        None => install(&std::env::var("CCMEM_CODEX_VERSION").unwrap_or_else(|_| VERSION.into())),
    })
}

/// `npm install @openai/codex@version` into `target/tmp/codex/<version>` (kept between runs),
/// then the platform package's native binary in it (no node on the way).
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("codex").join(version);
    agents::install_from_npm(&dir, &format!("@openai/codex@{version}"), "CCMEM_CODEX_BIN", native_binary)
}

/// `node_modules/@openai/codex-<platform>/vendor/<target>/bin/codex` that answers `--version`.
fn native_binary(dir: &Path) -> Option<PathBuf> {
    let scope = dir.join("node_modules/@openai");
    let candidates = std::fs::read_dir(&scope).ok()?.flatten().filter(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.starts_with("codex-")
    });
    let bins = candidates.flat_map(|pkg| {
        std::fs::read_dir(pkg.path().join("vendor")).into_iter().flatten().flatten().map(|t| {
            let bin = t.path().join("bin");
            if cfg!(windows) {
                bin.join("codex.exe")
            } else {
                bin.join("codex")
            }
        })
    });
    bins.into_iter().find(|b| agents::answers_version(b, "codex"))
}

/// Writes the test HOME's `~/.codex/config.toml`: the fake model as the provider (Responses
/// API), a model Codex knows (so that apply_patch is offered), and the plan tool on.
pub fn configure(env: &Env, model: &ModelServer) {
    let home = env.home.join(".codex");
    std::fs::create_dir_all(&home).expect("mkdir ~/.codex");
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"CCMEM_FAKE_OPENAI_KEY\"\n\n\
         [tools]\nupdate_plan = {{ enabled = true }}\n",
        model.url()
    );
    std::fs::write(home.join("config.toml"), config).expect("write config.toml");
}

/// One `codex exec` run's outcome.
pub struct Run {
    pub output: Output,
}

impl Run {
    /// Asserts the run ended well.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.output.status.success(),
            "codex failed ({}):\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            text(&self.output.stdout),
            text(&self.output.stderr)
        );
        self
    }

    /// Whether Codex ran ccmem's hook for `event` (it reports each hook on stderr).
    pub fn ran_hook(&self, event: &str) -> bool {
        text(&self.output.stderr).contains(&format!("hook: {event} Completed"))
    }
}

/// Runs `codex exec PROMPT` in `project` with the test's HOME, its daemon and the fake model;
/// hooks run only if trusted (no `--dangerously-bypass-hook-trust`).
pub fn run(env: &Env, project: &Path, prompt: &str) -> Run {
    run_with(env, project, &[prompt])
}

/// [`run`] with `codex exec`'s options before the prompt (`--json`).
pub fn run_with(env: &Env, project: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(cli());
    cmd.env_clear();
    env.apply(&mut cmd);
    cmd.env("PATH", agents::path_with_ccmemctl())
        .env("CODEX_HOME", env.home.join(".codex"))
        .env("CCMEM_FAKE_OPENAI_KEY", "sk-test-offline")
        .env("LANG", "C.UTF-8")
        .env("CCMEM_HOOK_TIMEOUT_MS", "4000")
        .current_dir(project)
        // The sandbox needs kernel features a test machine may lack; the project is a scratch one.
        .args(["exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", cli().display()));
    let output = agents::wait_within(child, RUN_LIMIT, "codex");
    env.note_daemon();
    Run { output }
}

/// All text a Responses request carries (its instructions and every input item's text),
/// for finding the context a SessionStart hook added.
pub fn request_text(req: &Value) -> String {
    let mut out = req["instructions"].as_str().unwrap_or_default().to_string();
    for item in req["input"].as_array().into_iter().flatten() {
        for c in item["content"].as_array().into_iter().flatten() {
            if let Some(t) = c["text"].as_str() {
                out.push('\n');
                out.push_str(t);
            }
        }
    }
    out
}
