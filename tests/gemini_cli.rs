//! ccmem under the real Gemini CLI (installed from the npm registry, version
//! `gemini::VERSION`), run offline against the scripted fake model: a session recorded from
//! its hooks, given back at the next start, resumed; and work handed from Gemini CLI to
//! Claude Code.
//!
//! Each test has its own HOME, socket, daemon and model server.
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

/// Gemini's todo list, each step with its status.
fn plan(statuses: [&str; 3]) -> claude::model::Block {
    let items: Vec<Value> = (0..3).map(|i| json!({"description": STEPS[i], "status": statuses[i]})).collect();
    tool("write_todos", json!({"todos": items}))
}

fn sh(cmd: &str) -> claude::model::Block {
    tool("run_shell_command", json!({"command": cmd, "description": "run it"}))
}

fn write(path: &str, content: &str) -> claude::model::Block {
    tool("write_file", json!({"file_path": path, "content": content}))
}

/// Gemini's work: three todos, the calculator and its tests written, the tests run (one
/// fails), two todos done, last words (long enough to come in two chunks).
fn gemini_work() -> Vec<Turn> {
    vec![
        vec![plan(["in_progress", "pending", "pending"])],
        vec![write("calc.mjs", CALC)],
        vec![plan(["completed", "in_progress", "pending"])],
        vec![write("calc.test.mjs", CALC_TEST)],
        vec![sh("node --test calc.test.mjs")],
        vec![plan(["completed", "completed", "pending"])],
        vec![say("Calculator and tests are in; `divide rounds to whole numbers` fails (3.5). Next: make divide() round down. [REMEMBER: tests run with node --test]")],
    ]
}

fn install_gemini_hooks(env: &Env) {
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "gemini"]), "hooks install --agent gemini");
    gemini::configure(env);
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Gemini CLI")]
fn a_gemini_session_is_recorded_from_its_hooks_given_back_at_the_next_start_and_resumed() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_gemini_hooks(&env);
    let doctor = text(&env.ctl(&["doctor"]).stdout);
    assert!(doctor.contains("gemini hooks") && doctor.contains("installed"), "{doctor}");

    model.script(gemini_work());
    let run = gemini::run(&env, &model, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let id = gemini::session_id(&run);

    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().filter(|t| t["status"] == "completed").count() == 2)
            && p["session"]["failures"].to_string().contains("divide")
    });
    let conv = &status["session"]["conversations"][0];
    assert_eq!((conv["agent"].as_str(), conv["id"].as_str()), (Some("gemini"), Some(id.as_str())), "{status:#}");
    assert_eq!(todos(&status), steps(["completed", "completed", "pending"]));
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key("calc.mjs") && files.contains_key("calc.test.mjs"), "{files:?}");
    let prompts = status["session"].to_string();
    assert!(!prompts.contains("hook_context"), "ccmem's own context came back as the user's prompt: {status:#}");

    let ctx = context(&env, &root);
    holds_all(
        "the context",
        &ctx,
        &[
            "2 of 3 done",
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            &format!("gemini --resume {id}"),
        ],
    );
    // The last words whole: Gemini CLI's own payload repeats the last streamed chunk.
    assert_eq!(ctx.matches("Next: make divide() round down").count(), 1, "{ctx}");
    let facts = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert!(facts.to_string().contains("tests run with node --test"), "{facts:#}");

    // The next conversation starts with it: SessionStart's context is in its first request.
    let before = model.requests().len();
    model.script(vec![vec![say("Looking.")]]);
    gemini::run(&env, &model, &root, "Where were we?", &[]).assert_ok();
    holds_all(
        "Gemini's first request",
        &first_request(&model, before),
        &["Where you left off (ccmem)", "Fix rounding in divide", "divide rounds to whole numbers"],
    );

    // Resumed: the same conversation goes on.
    model.script(vec![vec![plan(["completed", "completed", "completed"])], vec![say("All three done.")]]);
    gemini::run(&env, &model, &root, "Finish it", &["--resume", &id]).assert_ok();
    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().all(|t| t["status"] == "completed"))
    });
    let ids = conversation_ids(&status);
    assert_eq!(ids.iter().filter(|c| **c == id).count(), 1, "the resumed conversation is the same one: {ids:?}");

    // Uninstalled: ccmem's hooks go, the rest of the settings stay.
    assert_ok(&env.ctl(&["hooks", "uninstall", "--agent", "gemini"]), "hooks uninstall --agent gemini");
    let settings = std::fs::read_to_string(env.home.join(".gemini/settings.json")).expect("settings.json");
    assert!(!settings.contains("ccmemctl") && settings.contains(gemini::MODEL), "{settings}");
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Gemini CLI and Claude Code")]
fn work_left_in_gemini_is_carried_on_in_claude_code() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_gemini_hooks(&env);
    claude::install_hooks(&env);

    model.script(gemini_work());
    let run = gemini::run(&env, &model, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let gemini_id = gemini::session_id(&run);
    settle(&env, &root, |p| p["session"]["failures"].to_string().contains("divide"));

    // Claude Code starts in the same project: its first request carries Gemini's work.
    let before = model.requests().len();
    let fixed = CALC.replace("return a / b;", "return Math.floor(a / b);");
    let todo_items = |s: [&str; 3]| {
        let items: Vec<Value> =
            (0..3).map(|i| json!({"content": STEPS[i], "status": s[i], "activeForm": STEPS[i]})).collect();
        tool("TodoWrite", json!({"todos": items}))
    };
    model.script(vec![
        vec![tool("ToolSearch", json!({"query": "select:TodoWrite", "max_results": 5}))],
        vec![tool("Write", json!({"file_path": root.join("calc.mjs"), "content": fixed}))],
        vec![tool("Bash", json!({"command": "node --test calc.test.mjs", "description": "Run the tests"}))],
        vec![todo_items(["completed", "completed", "completed"])],
        vec![say("divide() now rounds down and all tests pass.")],
    ]);
    let todo_write = [("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"), ("CLAUDE_CODE_ENABLE_TASKS", "0")];
    claude::run(&env, &model, &root, "Carry on where the last agent stopped", &[], &todo_write).assert_ok();
    holds_all(
        "Claude Code's first request",
        &first_request(&model, before),
        &[
            "Where you left off (ccmem)",
            "2 of 3 done",
            "Fix rounding in divide",
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            &format!("gemini --resume {gemini_id}"),
        ],
    );
    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().all(|t| t["status"] == "completed"))
            && !p["session"]["failures"].to_string().contains("divide")
    });
    assert_eq!(status["session"]["todos"].as_array().map(Vec::len), Some(3), "one list, not two: {status:#}");
}
