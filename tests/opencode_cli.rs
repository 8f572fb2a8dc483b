//! ccmem under the real OpenCode (installed from the npm registry, version
//! `opencode::VERSION`), run offline against the scripted fake model with ccmem's plugin: a
//! session recorded, given back at the next start, continued; and work handed from OpenCode
//! to Pi.
//!
//! Each test has its own HOME, socket, daemon and model server.
#![cfg(unix)]

mod calc;
mod claude;
mod codex;
mod common;
mod gemini;
mod opencode;
mod pi;

use calc::*;
use claude::model::{say, tool, ModelServer, Turn};
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// OpenCode's todo list, each step with its status.
fn plan(statuses: [&str; 3]) -> claude::model::Block {
    let items: Vec<Value> =
        (0..3).map(|i| json!({"content": STEPS[i], "status": statuses[i], "priority": "medium"})).collect();
    tool("todowrite", json!({"todos": items}))
}

fn sh(cmd: &str) -> claude::model::Block {
    tool("bash", json!({"command": cmd, "description": "Run it"}))
}

/// OpenCode's work: three todos, the calculator and its tests written, the tests run (one
/// fails), two todos done, last words.
fn opencode_work(root: &Path) -> Vec<Turn> {
    vec![
        vec![plan(["in_progress", "pending", "pending"])],
        vec![tool("write", json!({"filePath": root.join("calc.mjs"), "content": CALC}))],
        vec![plan(["completed", "in_progress", "pending"])],
        vec![tool("write", json!({"filePath": root.join("calc.test.mjs"), "content": CALC_TEST}))],
        vec![sh("node --test calc.test.mjs")],
        vec![plan(["completed", "completed", "pending"])],
        vec![say("Calculator and tests are in; `divide rounds to whole numbers` fails (3.5). We decided to keep divide() pure because the tests call it directly. Next: make divide() round down. [REMEMBER: tests run with node --test]")],
    ]
}

fn install_plugin(env: &Env) {
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "opencode"]), "hooks install --agent opencode");
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install OpenCode")]
fn an_opencode_session_is_recorded_by_the_plugin_given_back_at_the_next_start_and_continued() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_plugin(&env);
    let doctor = text(&env.ctl(&["doctor"]).stdout);
    assert!(doctor.contains("opencode plugin") && doctor.contains("installed"), "{doctor}");

    model.script(opencode_work(&root));
    let run = opencode::run(&env, &model, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let id = opencode::session_id(&run);

    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().filter(|t| t["status"] == "completed").count() == 2)
            && p["session"]["failures"].to_string().contains("divide")
    });
    let conv = &status["session"]["conversations"][0];
    assert_eq!((conv["agent"].as_str(), conv["id"].as_str()), (Some("opencode"), Some(id.as_str())), "{status:#}");
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
            "keep divide() pure",
            &format!("opencode --session {id}"),
        ],
    );
    let facts = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert!(facts.to_string().contains("tests run with node --test"), "{facts:#}");

    // The next conversation starts with it: the plugin puts it in the system prompt.
    let before = model.requests().len();
    model.script(vec![vec![say("Looking.")]]);
    opencode::run(&env, &model, &root, "Where were we?", &[]).assert_ok();
    holds_all(
        "OpenCode's first request",
        &first_request(&model, before),
        &["Where you left off (ccmem)", "Fix rounding in divide", "divide rounds to whole numbers"],
    );
    // The request that names the new conversation shares its id, and is not given the context.
    let titles: Vec<String> = model.requests()[before..]
        .iter()
        .map(request_text)
        .filter(|t| t.contains("You are a title generator"))
        .collect();
    assert!(!titles.is_empty(), "OpenCode asked for a title");
    assert!(titles.iter().all(|t| !t.contains("Where you left off (ccmem)")), "{titles:?}");

    // Continued (`--session`): the same conversation goes on, and has the context too.
    let before = model.requests().len();
    model.script(vec![vec![plan(["completed", "completed", "completed"])], vec![say("All three done.")]]);
    opencode::run(&env, &model, &root, "Finish it", &["--session", &id]).assert_ok();
    assert!(
        first_request(&model, before).contains("Where you left off (ccmem)"),
        "a continued conversation is given the context"
    );
    let status = settle(&env, &root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().all(|t| t["status"] == "completed"))
    });
    let ids = conversation_ids(&status);
    assert_eq!(ids.iter().filter(|c| **c == id).count(), 1, "the continued conversation is the same one: {ids:?}");

    // Uninstalled: the plugin goes.
    assert_ok(&env.ctl(&["hooks", "uninstall", "--agent", "opencode"]), "hooks uninstall --agent opencode");
    assert!(!env.path().join("config/opencode/plugin/ccmem.js").exists());
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install OpenCode and Pi")]
fn work_left_in_opencode_is_carried_on_in_pi() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_plugin(&env);
    assert_ok(&env.ctl(&["hooks", "install", "--agent", "pi"]), "hooks install --agent pi");
    pi::configure(&env, &model);

    model.script(opencode_work(&root));
    let run = opencode::run(&env, &model, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let opencode_id = opencode::session_id(&run);
    settle(&env, &root, |p| p["session"]["failures"].to_string().contains("divide"));

    // Pi starts in the same project: its first request carries OpenCode's work.
    let before = model.requests().len();
    let fixed = CALC.replace("return a / b;", "return Math.floor(a / b);");
    model.script(vec![
        vec![tool("write", json!({"path": "calc.mjs", "content": fixed}))],
        vec![tool("bash", json!({"command": "node --test calc.test.mjs"}))],
        vec![say("divide() now rounds down and all tests pass.")],
    ]);
    pi::run(&env, &root, "Carry on where the last agent stopped", &[]).assert_ok();
    holds_all(
        "Pi's first request",
        &first_request(&model, before),
        &[
            "Where you left off (ccmem)",
            "2 of 3 done",
            "Fix rounding in divide",
            "divide rounds to whole numbers",
            "Next: make divide() round down",
            &format!("opencode --session {opencode_id}"),
        ],
    );
    // Pi fixed it: no failure left, and Pi's conversation is in the session.
    let status = settle(&env, &root, |p| {
        !p["session"]["failures"].to_string().contains("divide")
            && p["session"]["conversations"].to_string().contains("\"pi\"")
    });
    assert!(status["session"]["files_modified"]["calc.mjs"].is_object(), "{status:#}");
}

/// With no interface to show it in (`opencode run`), a broken configuration is told on standard
/// error, the terminal's: never on standard output or to the model.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install OpenCode")]
fn a_broken_configuration_is_told_on_standard_error_under_opencode_without_its_interface() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    install_plugin(&env);
    let dir = env.path().join("config/ccmem");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "session_ttl = \"2 days\"\n").unwrap();
    model.script(vec![vec![say("ok")]]);
    let run = opencode::run(&env, &model, &root, "hi", &[]);
    run.assert_ok();
    let err = text(&run.output.stderr);
    assert!(err.contains("ccmem: ccmem is not recording") && err.contains("session_ttl"), "{err}");
    assert!(!text(&run.output.stdout).contains("session_ttl"), "{}", text(&run.output.stdout));
    assert!(model.requests().iter().all(|r| !r.to_string().contains("session_ttl")), "never the model's");
}

/// `import --all` reads OpenCode's conversations from its database (the daemon lists them,
/// read only) and has OpenCode's own program export each: one recorded by the real
/// OpenCode without ccmem's plugin is taken in, into its project's live session; a second
/// run takes nothing.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install OpenCode")]
fn import_all_takes_opencodes_conversations_from_its_database() {
    let env = Env::new();
    let root = scratch_project(&env);
    let model = ModelServer::start();
    model.script(opencode_work(&root));
    let run = opencode::run(&env, &model, &root, "Write a calculator module with tests", &[]);
    run.assert_ok();
    let id = opencode::session_id(&run);
    let _d = env.start_daemon(&[]);
    // OpenCode's program on PATH, as its installer leaves it.
    let bin = opencode::cli().parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())))
            .unwrap();
    let import_all = || {
        let mut cmd = env.ctl_cmd(&["--json", "import", "--all", "--agent", "opencode"]);
        cmd.env("PATH", &path);
        let out = cmd.output().unwrap();
        assert_ok(&out, "import --all");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let first = import_all();
    assert_eq!(first["into_live"], 1, "{first:#}");
    let status = env.ctl_json(&["status", root.to_str().unwrap()]);
    let conv = &status["project"]["session"]["conversations"][0];
    assert_eq!((conv["agent"].as_str(), conv["id"].as_str()), (Some("opencode"), Some(id.as_str())), "{status:#}");
    assert!(status["project"]["session"]["files_modified"].to_string().contains("calc.mjs"), "{status:#}");
    let second = import_all();
    assert_eq!((second["into_live"].as_u64(), second["into_history"].as_u64()), (Some(0), Some(0)), "{second:#}");
    // Nothing of the export is left behind.
    let left: Vec<_> =
        walk(&env.state).into_iter().filter(|p| p.to_string_lossy().contains("opencode-export")).collect();
    assert!(left.is_empty(), "{left:?}");
}
