//! ccmem under the real Pi coding agent (installed from the npm registry, version
//! `pi::VERSION`), run offline against the scripted fake model with ccmem's extension: a
//! session recorded, given back at the next start, continued.
//!
//! Each test has its own HOME, socket, daemon and model server.
#![cfg(unix)]

mod calc;
mod claude;
mod codex;
mod common;
mod gemini;
mod pi;

use calc::*;
use claude::model::{say, tool, ModelServer, Turn};
use common::*;
use serde_json::json;

/// Pi's work (it has no todo tool): the calculator and its tests written, the tests run
/// (one fails), last words.
fn pi_work() -> Vec<Turn> {
    vec![
        vec![tool("write", json!({"path": "calc.mjs", "content": CALC}))],
        vec![tool("write", json!({"path": "calc.test.mjs", "content": CALC_TEST}))],
        vec![tool("bash", json!({"command": "node --test calc.test.mjs"}))],
        vec![tool("edit", json!({"path": "calc.mjs", "edits": [{"oldText": "return a + b;", "newText": "return a + b; // sum"}]}))],
        vec![say("Calculator and tests are in; `divide rounds to whole numbers` fails (3.5). We decided to keep divide() pure because the tests call it directly. Next: make divide() round down. [REMEMBER: tests run with node --test]")],
    ]
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Pi")]
fn a_pi_session_is_recorded_by_the_extension_given_back_at_the_next_start_and_continued() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "pi"]), "hooks install --agent pi");
    pi::configure(&env, &model);
    let doctor = text(&env.ctl(&["doctor"]).stdout);
    assert!(doctor.contains("pi extension") && doctor.contains("installed"), "{doctor}");

    model.script(pi_work());
    let run = pi::run(&env, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let id = pi::session_id(&run);

    let status = settle(&env, &root, |p| {
        p["session"]["failures"].to_string().contains("divide")
            && p["session"]["conversations"][0]["digest"]["last_words"].to_string().contains("round down")
    });
    let conv = &status["session"]["conversations"][0];
    assert_eq!((conv["agent"].as_str(), conv["id"].as_str()), (Some("pi"), Some(id.as_str())), "{status:#}");
    let files = status["session"]["files_modified"].as_object().expect("files");
    assert!(files.contains_key("calc.mjs") && files.contains_key("calc.test.mjs"), "{files:?}");
    // Pi's result does not say a write made its file: the extension looked before it ran.
    assert!(files["calc.test.mjs"]["created"] == true && files["calc.mjs"]["created"] == true, "{files:?}");

    holds_all(
        "the context",
        &context(&env, &root),
        &[
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            "keep divide() pure",
            &format!("pi --session {id}"),
        ],
    );
    let facts = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert!(facts.to_string().contains("tests run with node --test"), "{facts:#}");

    // The next conversation starts with it: the extension puts it in the system prompt.
    let before = model.requests().len();
    model.script(vec![vec![say("Looking.")]]);
    pi::run(&env, &root, "Where were we?", &[]).assert_ok();
    holds_all(
        "Pi's first request",
        &first_request(&model, before),
        &["Where you left off (ccmem)", "divide rounds to whole numbers"],
    );

    // Continued (`--session`): the same conversation goes on.
    model.script(vec![vec![say("Still here.")]]);
    pi::run(&env, &root, "Go on", &["--session", &id]).assert_ok();
    let status = settle(&env, &root, |p| p["session"]["conversations"].to_string().contains("Still here"));
    let ids = conversation_ids(&status);
    assert_eq!(ids.iter().filter(|c| **c == id).count(), 1, "the continued conversation is the same one: {ids:?}");

    assert_ok(&env.ctl(&["hooks", "uninstall", "--agent", "pi"]), "hooks uninstall --agent pi");
    assert!(!env.home.join(".pi/agent/extensions/ccmem.ts").exists());
}

/// With no interface to show it in (`pi -p`), a broken configuration is told on standard
/// error, the terminal's: never on standard output or to the model.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Pi")]
fn a_broken_configuration_is_told_on_standard_error_under_pi_without_its_interface() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "pi"]), "hooks install --agent pi");
    pi::configure(&env, &model);
    let dir = env.path().join("config/ccmem");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "session_ttl = \"2 days\"\n").unwrap();
    model.script(vec![vec![say("ok")]]);
    let run = pi::run(&env, &root, "hi", &[]);
    run.assert_ok();
    let err = text(&run.output.stderr);
    assert!(err.contains("ccmem: ccmem is not recording") && err.contains("session_ttl"), "{err}");
    assert!(!text(&run.output.stdout).contains("session_ttl"), "{}", text(&run.output.stdout));
    assert!(model.requests().iter().all(|r| !r.to_string().contains("session_ttl")), "never the model's");
}
