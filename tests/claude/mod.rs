//! The real Claude Code CLI, installed from the npm registry into the target directory and
//! run offline against [`model::ModelServer`] in a test's private environment.
//!
//! `CCMEM_CLAUDE_BIN` names a `claude` to use instead (a user's own, say);
//! `CCMEM_CLAUDE_VERSION` another version to install. `CCMEM_CAPTURE_HOOKS=DIR` also
//! installs a hook that saves every payload the CLI sends into DIR (how the fixtures in
//! `tests/fixtures/claude-code/` were captured).
#![allow(dead_code)]

pub mod model;

use crate::common::{agents, text, Env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The version these tests were written against (README: "Tested with Claude Code …").
pub const VERSION: &str = "2.1.330";

/// How long one `claude -p` run may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The CLI to run: installed once per test binary.
pub fn cli() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("CCMEM_CLAUDE_BIN") {
        Some(b) => PathBuf::from(b),
        None => install(&std::env::var("CCMEM_CLAUDE_VERSION").unwrap_or_else(|_| VERSION.into())),
    })
}

/// `npm install @anthropic-ai/claude-code@version` into `target/tmp/claude-code/<version>`
/// (kept between runs), then the platform's native binary in it. The package's postinstall
/// (which would copy that binary over its stub) is not needed, so npm's refusal to run
/// install scripts does not matter.
fn install(version: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("claude-code").join(version);
    agents::install_from_npm(&dir, &format!("@anthropic-ai/claude-code@{version}"), "CCMEM_CLAUDE_BIN", native_binary)
}

/// The platform package's `claude` that answers `--version`.
fn native_binary(dir: &Path) -> Option<PathBuf> {
    let scope = dir.join("node_modules/@anthropic-ai");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&scope)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("claude-code-"))
        .map(|e| e.path().join("claude"))
        .collect();
    candidates.push(scope.join("claude-code/bin/claude.exe"));
    candidates.into_iter().find(|b| agents::answers_version(b, "Claude Code"))
}

/// One `claude` invocation's outcome.
pub struct Run {
    pub output: Output,
    /// The stream-json lines it printed.
    pub lines: Vec<Value>,
}

impl Run {
    /// The conversation id (`session_id` of the result line).
    pub fn conversation(&self) -> String {
        self.result()["session_id"].as_str().unwrap_or_default().to_string()
    }

    /// The final `result` line.
    pub fn result(&self) -> Value {
        self.lines.iter().rev().find(|l| l["type"] == "result").cloned().unwrap_or(Value::Null)
    }

    /// Asserts the run ended well.
    pub fn assert_ok(&self) -> &Self {
        let r = self.result();
        assert!(
            self.output.status.success() && r["is_error"] == false,
            "claude failed ({}): {r}\nstderr:\n{}",
            self.output.status,
            text(&self.output.stderr)
        );
        self
    }
}

/// The environment a test's `claude` runs in: the test's HOME and XDG directories (so the
/// hooks reach the test's daemon), the fake model, no telemetry or updates, and nothing
/// from the outside (a test run from inside Claude Code must not pass its session on).
pub fn command(env: &Env, model: &model::ModelServer, project: &Path, extra: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(cli());
    cmd.env_clear();
    env.apply(&mut cmd);
    cmd.env("PATH", agents::path_with_ccmemctl())
        .env("ANTHROPIC_BASE_URL", model.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-offline")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("LANG", "C.UTF-8")
        // The hooks' time limits, raised within Claude Code's own 5 s hook timeout: a loaded
        // test machine can take more than 300 ms to start the daemon.
        .env("CCMEM_HOOK_TIMEOUT_MS", "4000")
        .current_dir(project);
    // Bypass mode refuses to run as root outside a sandbox; this is one.
    if unsafe { libc::geteuid() } == 0 {
        cmd.env("IS_SANDBOX", "1");
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `claude -p PROMPT` with `args` in `project` and waits for it (at most
/// [`RUN_LIMIT`]).
pub fn run(
    env: &Env,
    model: &model::ModelServer,
    project: &Path,
    prompt: &str,
    args: &[&str],
    extra: &[(&str, &str)],
) -> Run {
    let mut cmd = command(env, model, project, extra);
    cmd.args(["-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"])
        .args(["--max-turns", "30"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", cli().display()));
    let output = agents::wait_within(child, RUN_LIMIT, "claude");
    env.note_daemon();
    let lines = text(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Run { output, lines }
}

/// Installs ccmem's hooks into the test HOME's `~/.claude/settings.json` with
/// `ccmemctl hooks install`, plus the capture hook when `CCMEM_CAPTURE_HOOKS` is set.
pub fn install_hooks(env: &Env) {
    let out = env.ctl(&["hooks", "install"]);
    crate::common::assert_ok(&out, "ccmemctl hooks install");
    capture_hooks(env);
}

/// With `CCMEM_CAPTURE_HOOKS=DIR`: one more hook on every event that saves its payload to
/// DIR/<nanoseconds>-<pid>.json (so that a sort by name is the order they came in).
pub fn capture_hooks(env: &Env) {
    let Some(dir) = std::env::var_os("CCMEM_CAPTURE_HOOKS") else { return };
    std::fs::create_dir_all(&dir).expect("capture dir");
    let script = env.path().join("capture.sh");
    crate::common::write_executable(
        &script,
        &format!("#!/bin/sh\ncat > \"{}/$(date +%s%N)-$$.json\"\nexit 0\n", Path::new(&dir).display()),
    );
    let settings = env.home.join(".claude/settings.json");
    let mut v: Value = std::fs::read(&settings)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "SessionEnd",
        "Notification",
        "TaskCreated",
        "TaskCompleted",
        "MessageDisplay",
    ];
    for e in events {
        let entry = serde_json::json!({"hooks": [{"type": "command", "command": script}]});
        match v["hooks"][e].as_array_mut() {
            Some(list) => list.push(entry),
            None => v["hooks"][e] = serde_json::json!([entry]),
        }
    }
    std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir .claude");
    std::fs::write(&settings, serde_json::to_vec_pretty(&v).expect("json")).expect("write settings");
}

/// All text of a request's messages (system-role ones included), for finding the context
/// a SessionStart hook added.
pub fn request_text(req: &Value) -> String {
    let mut out = String::new();
    for m in req["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            Value::String(s) => out.push_str(s),
            Value::Array(blocks) => {
                for b in blocks {
                    if let Some(t) = b["text"].as_str() {
                        out.push_str(t);
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}
