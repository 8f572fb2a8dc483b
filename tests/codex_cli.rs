//! ccmem under the real Codex CLI (installed from the npm registry, version `codex::VERSION`),
//! run offline against the scripted fake model, and the handoff between Claude Code and Codex
//! in one project: what one agent left is in the other's first model request.
//!
//! Each test has its own HOME, socket, daemon and model server. Codex runs ccmem's hooks only
//! because `ccmemctl hooks install --agent codex` trusted them (no bypass flag).
#![cfg(unix)]

mod calc;
mod claude;
mod codex;
mod common;
mod gemini;

use calc::*;
use claude::model::{say, tool, ModelServer, Turn};
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// Codex's plan, each step with its status.
fn plan(statuses: [&str; 3]) -> claude::model::Block {
    let steps: Vec<Value> = (0..3).map(|i| json!({"step": STEPS[i], "status": statuses[i]})).collect();
    tool("update_plan", json!({"plan": steps}))
}

/// An apply_patch adding `path` with `content`.
fn add_file(path: &str, content: &str) -> claude::model::Block {
    let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
    tool("apply_patch", Value::String(format!("*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n")))
}

fn sh(cmd: &str) -> claude::model::Block {
    tool("exec_command", json!({"cmd": cmd}))
}

fn install_codex_hooks(env: &Env, model: &ModelServer) {
    codex::configure(env, model);
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "codex"]), "hooks install --agent codex");
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Codex")]
fn a_codex_session_is_recorded_from_its_trusted_hooks_and_given_back_at_the_next_start() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_codex_hooks(&env, &model);
    let doctor = text(&env.ctl(&["doctor"]).stdout);
    assert!(doctor.contains("codex hooks") && doctor.contains("installed and trusted"), "{doctor}");

    let turns: Vec<Turn> = vec![
        vec![plan(["in_progress", "pending", "pending"])],
        vec![add_file("calc.mjs", CALC)],
        vec![plan(["completed", "in_progress", "pending"])],
        vec![add_file("calc.test.mjs", CALC_TEST)],
        vec![sh("node --test calc.test.mjs")],
        vec![plan(["completed", "completed", "pending"])],
        vec![say("Calculator and tests are in; `divide rounds to whole numbers` fails (3.5). Next: make divide() round down. [REMEMBER: tests run with node --test]")],
    ];
    model.script(turns);
    let run = codex::run(&env, &root, "Write a calculator module with tests");
    run.assert_ok();
    assert!(run.ran_hook("SessionStart") && run.ran_hook("PostToolUse") && run.ran_hook("Stop"), "untrusted?");

    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().filter(|t| t["status"] == "completed").count() == 2)
            && p["session"]["failures"].to_string().contains("divide")
    });
    let conv = &status["session"]["conversations"][0];
    assert_eq!(conv["agent"], "codex", "{status:#}");
    let id = conv["id"].as_str().expect("conversation id").to_string();
    assert_eq!(todos(&status), steps(["completed", "completed", "pending"]));
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key("calc.mjs") && files.contains_key("calc.test.mjs"), "{files:?}");

    holds_all(
        "the context",
        &context(&env, &root),
        &[
            "2 of 3 done",
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            &format!("codex resume {id}"),
        ],
    );
    let facts = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert!(facts.to_string().contains("tests run with node --test"), "{facts:#}");

    // The next conversation starts with it: SessionStart's context is in its first request.
    let before = model.requests().len();
    model.script(vec![vec![say("Looking.")]]);
    codex::run(&env, &root, "Where were we?").assert_ok();
    holds_all(
        "Codex's first request",
        &first_request(&model, before),
        &["Where you left off (ccmem)", "Fix rounding in divide", "divide rounds to whole numbers"],
    );

    // Uninstalled: the hooks and their trust go, the user's config stays.
    assert_ok(&env.ctl(&["hooks", "uninstall", "--agent", "codex"]), "hooks uninstall --agent codex");
    let config = std::fs::read_to_string(env.home.join(".codex/config.toml")).expect("config.toml");
    assert!(!config.contains("hooks.state") && config.contains("[model_providers.fake]"), "{config}");
    assert!(!env.home.join(".codex/hooks.json").exists());
}

/// Codex's code mode: the model calls one freeform tool, `exec`, whose JavaScript calls the
/// real tools (`tools.apply_patch`, `tools.exec_command`, `tools.update_plan`). Codex runs
/// those nested calls through its usual dispatch, hooks included (its source: "Tool calls
/// made from code mode still flow through normal dispatch"), so the edits, the failing test
/// run and the plan are recorded as in direct mode.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Codex")]
fn codex_in_code_mode_is_recorded_from_the_nested_tool_calls() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_codex_hooks(&env, &model);
    let config = env.home.join(".codex/config.toml");
    let mut toml = std::fs::read_to_string(&config).expect("config.toml");
    toml.push_str("\n[features]\ncode_mode = true\ncode_mode_only = true\n");
    std::fs::write(&config, toml).expect("write config.toml");

    let patch = |path: &str, content: &str| {
        let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
        format!("*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n")
    };
    let plan_of = |s: [&str; 3]| -> Value { (0..3).map(|i| json!({"step": STEPS[i], "status": s[i]})).collect() };
    let cell = format!(
        "await tools.update_plan({{plan: {}}});\n\
         await tools.apply_patch({});\n\
         await tools.apply_patch({});\n\
         const r = await tools.exec_command({{cmd: \"node --test calc.test.mjs\"}});\n\
         await tools.update_plan({{plan: {}}});\n\
         text(typeof r === \"string\" ? r : JSON.stringify(r));\n",
        plan_of(["in_progress", "pending", "pending"]),
        Value::String(patch("calc.mjs", CALC)),
        Value::String(patch("calc.test.mjs", CALC_TEST)),
        plan_of(["completed", "completed", "pending"]),
    );
    model.script(vec![
        vec![tool("exec", Value::String(cell))],
        vec![say(
            "Calculator and tests are in; `divide rounds to whole numbers` fails. Next: make divide() round down.",
        )],
    ]);
    let run = codex::run(&env, &root, "Write a calculator module with tests");
    run.assert_ok();
    let offered = model.requests().first().map(|r| r["tools"].to_string()).unwrap_or_default();
    assert!(offered.contains("\"exec\""), "code mode is on: the model is offered exec: {offered}");
    assert!(root.join("calc.mjs").exists(), "the cell ran: {}", text(&run.output.stderr));
    assert!(run.ran_hook("PostToolUse"), "the nested calls ran the hooks: {}", text(&run.output.stderr));

    let status = settle(&env, &root, |p| {
        let files = p["session"]["files_modified"].as_object();
        files.is_some_and(|f| f.contains_key("calc.mjs") && f.contains_key("calc.test.mjs"))
            && p["session"]["failures"].to_string().contains("divide")
    });
    assert_eq!(todos(&status), steps(["completed", "completed", "pending"]), "{status:#}");
    holds_all(
        "the context",
        &context(&env, &root),
        &["2 of 3 done", "divide rounds to whole numbers", "Next: make divide() round down", "calc.mjs"],
    );
}

/// Claude Code's turns: three todos, the calculator and its tests written, the tests run
/// (one fails), two todos done, last words.
fn claude_work(root: &Path) -> Vec<Turn> {
    let todos = |statuses: [&str; 3]| {
        let items: Vec<Value> =
            (0..3).map(|i| json!({"content": STEPS[i], "status": statuses[i], "activeForm": STEPS[i]})).collect();
        tool("TodoWrite", json!({"todos": items}))
    };
    vec![
        vec![tool("ToolSearch", json!({"query": "select:TodoWrite", "max_results": 5}))],
        vec![todos(["in_progress", "pending", "pending"])],
        vec![tool("Write", json!({"file_path": root.join("calc.mjs"), "content": CALC}))],
        vec![tool("Write", json!({"file_path": root.join("calc.test.mjs"), "content": CALC_TEST}))],
        vec![tool("Bash", json!({"command": "node --test calc.test.mjs", "description": "Run the tests"}))],
        vec![todos(["completed", "completed", "pending"])],
        vec![say("The calculator and its tests are written; `divide rounds to whole numbers` fails: divide() returns 3.5.\n\nNext: make divide() round down.")],
    ]
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code and Codex")]
fn work_left_in_claude_code_is_carried_on_in_codex_and_back() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    claude::install_hooks(&env);
    install_codex_hooks(&env, &model);
    let todo_write = [("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"), ("CLAUDE_CODE_ENABLE_TASKS", "0")];

    // Claude Code: two todos done, a failing test, its last words.
    model.script(claude_work(&root));
    let run = claude::run(&env, &model, &root, "Write a calculator module with tests", &[], &todo_write);
    run.assert_ok();
    let claude_id = run.conversation();
    settle(&env, &root, |p| p["session"]["failures"].to_string().contains("divide"));

    // Codex starts in the same project: its first request carries that work.
    let before = model.requests().len();
    let fix = "*** Begin Patch\n*** Update File: calc.mjs\n@@ export function divide(a, b) {\n-  return a / b;\n+  return Math.floor(a / b);\n*** End Patch\n";
    model.script(vec![
        vec![tool("apply_patch", Value::String(fix.into()))],
        vec![sh("node --test calc.test.mjs")],
        vec![plan(["completed", "completed", "completed"])],
        vec![say("divide() now rounds down and all tests pass.")],
    ]);
    codex::run(&env, &root, "Carry on where the last agent stopped").assert_ok();
    holds_all(
        "Codex's first request",
        &first_request(&model, before),
        &[
            "Where you left off (ccmem)",
            "2 of 3 done",
            "Fix rounding in divide",
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            &format!("claude --resume {claude_id}"),
        ],
    );

    // Codex fixed it: one plan, all done, no failure left.
    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().all(|t| t["status"] == "completed"))
            && !p["session"]["failures"].to_string().contains("divide")
    });
    assert_eq!(status["session"]["todos"].as_array().map(Vec::len), Some(3), "one list, not two: {status:#}");
    let agents: Vec<&str> = status["session"]["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .filter_map(|c| c["agent"].as_str())
        .collect();
    assert!(agents.contains(&"codex"), "{agents:?}");

    // The next Claude Code conversation sees it fixed, and by whom.
    let before = model.requests().len();
    model.script(vec![vec![say("All done here.")]]);
    claude::run(&env, &model, &root, "Status?", &[], &todo_write).assert_ok();
    let first = first_request(&model, before);
    assert!(first.contains("Where you left off (ccmem)") && first.contains("3 of 3 done"), "{first}");
    assert!(first.contains("codex resume "), "the context names Codex's conversation: {first}");
    assert!(!first.contains("## Unresolved failures"), "the failure was fixed in Codex: {first}");
    assert!(!first.contains("[ ] Fix rounding"), "Claude Code's copy of the plan is the same plan: {first}");
}
