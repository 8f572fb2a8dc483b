//! ccmem under the real Claude Code CLI (installed from the npm registry, version
//! `claude::VERSION`), run offline against a scripted fake model on 127.0.0.1: real tools in
//! a scratch project, real hooks into a real daemon, and the context ccmem gives back read
//! from the model requests the CLI makes.
//!
//! Each test has its own HOME, socket, daemon and model server. Without npm the tests are
//! listed as ignored (build.rs); with npm but no registry they fail, saying so.
// The harness (tests/common) drives daemons over Unix sockets; on Windows the wine smoke
// test (scripts/wine-smoke) runs the binaries instead.
#![cfg(unix)]

mod claude;
mod common;

use claude::model::{say, tool, ModelServer, Turn};
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The Task tools are deferred in this version (fetched by ToolSearch first) and offered to
/// newer models only with `CLAUDE_CODE_ENABLE_TODO_TOOLS=1`; `CLAUDE_CODE_ENABLE_TASKS=0`
/// gives TodoWrite instead.
const TASK_TOOLS: &[(&str, &str)] = &[("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1")];
const TODO_WRITE: &[(&str, &str)] = &[("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"), ("CLAUDE_CODE_ENABLE_TASKS", "0")];

const CALC: &str =
    "export function add(a, b) {\n  return a + b;\n}\n\nexport function divide(a, b) {\n  return a / b;\n}\n";
const CALC_TEST: &str = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add, divide } from './calc.mjs';\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n\ntest('divide rounds to whole numbers', () => {\n  assert.equal(divide(7, 2), 3);\n});\n";
const LAST_WORDS: &str = "I added the calculator and its tests; `divide rounds to whole numbers` fails because divide() returns 3.5.\n\nNext: make divide() round down, then rerun node --test. [REMEMBER: the tests run with node --test]";

/// The work session: three tasks made and worked through by id, a file written and edited,
/// tests written and run (one fails), the agent's last words with a fact to keep.
fn work_script(root: &Path, todo_write: bool) -> Vec<Turn> {
    let calc = root.join("calc.mjs");
    let calc_test = root.join("calc.test.mjs");
    let subjects = ["Add the calculator module", "Write tests for the calculator", "Fix rounding in divide"];
    let forms = ["Adding the calculator module", "Writing tests for the calculator", "Fixing rounding in divide"];
    let todos = |statuses: [&str; 3]| {
        let items: Vec<Value> =
            (0..3).map(|i| json!({"content": subjects[i], "status": statuses[i], "activeForm": forms[i]})).collect();
        tool("TodoWrite", json!({"todos": items}))
    };
    let mut turns: Vec<Turn> = Vec::new();
    if todo_write {
        turns.push(vec![tool("ToolSearch", json!({"query": "select:TodoWrite", "max_results": 5}))]);
        turns.push(vec![todos(["in_progress", "pending", "pending"])]);
    } else {
        turns.push(vec![tool("ToolSearch", json!({"query": "select:TaskCreate,TaskUpdate", "max_results": 5}))]);
        turns.push(
            (0..3)
                .map(|i| {
                    tool(
                        "TaskCreate",
                        json!({"subject": subjects[i], "description": format!("{} (calc.mjs)", subjects[i]), "activeForm": forms[i]}),
                    )
                })
                .collect(),
        );
        turns.push(vec![tool("TaskUpdate", json!({"taskId": "1", "status": "in_progress"}))]);
    }
    turns.push(vec![tool("Write", json!({"file_path": calc, "content": CALC.replace("a / b", "0")}))]);
    turns.push(vec![tool(
        "Edit",
        json!({"file_path": calc, "old_string": "export function divide(a, b) {\n  return 0;\n}", "new_string": "export function divide(a, b) {\n  if (b === 0) throw new Error('divide by zero');\n  return a / b;\n}"}),
    )]);
    if todo_write {
        turns.push(vec![todos(["completed", "in_progress", "pending"])]);
    } else {
        turns.push(vec![
            tool("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
            tool("TaskUpdate", json!({"taskId": "2", "status": "in_progress"})),
        ]);
    }
    turns.push(vec![tool("Write", json!({"file_path": calc_test, "content": CALC_TEST}))]);
    turns.push(vec![tool("Bash", json!({"command": "ls", "description": "List the files"}))]);
    turns.push(vec![tool("Bash", json!({"command": "node --test calc.test.mjs", "description": "Run the tests"}))]);
    turns.push(vec![tool(
        "Agent",
        json!({"description": "Check the failure", "subagent_type": "general-purpose",
               "prompt": format!("{} Read calc.test.mjs and say which tests fail.", claude::model::SUBAGENT_MARK)}),
    )]);
    if todo_write {
        turns.push(vec![todos(["completed", "completed", "pending"])]);
    } else {
        turns.push(vec![tool("TaskUpdate", json!({"taskId": "2", "status": "completed"}))]);
    }
    turns.push(vec![say(LAST_WORDS)]);
    turns
}

/// What a work session leaves must read "2 of 3" everywhere: status, checkpoint, report,
/// context; with the files, the failing test, the last words and the fact.
fn assert_work_recorded(env: &Env, root: &Path, with_ids: bool, in_git: bool) {
    let status = settle(env, root, |p| {
        p["session"]["todos"].as_array().is_some_and(|t| t.iter().filter(|t| t["status"] == "completed").count() == 2)
    });
    let todos = status["session"]["todos"].as_array().expect("todos").clone();
    let shown: Vec<(String, String)> = todos
        .iter()
        .map(|t| (t["content"].as_str().unwrap_or("").to_string(), t["status"].as_str().unwrap_or("").to_string()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Add the calculator module".to_string(), "completed".to_string()),
            ("Write tests for the calculator".to_string(), "completed".to_string()),
            ("Fix rounding in divide".to_string(), "pending".to_string()),
        ],
        "{status:#}"
    );
    if with_ids {
        let ids: Vec<&str> = todos.iter().map(|t| t["id"].as_str().unwrap_or("")).collect();
        assert_eq!(ids, ["1", "2", "3"], "task ids are kept");
    }
    assert_eq!(todos[0]["activeForm"], "Adding the calculator module");

    // The checkpoint, written at Stop (in the background: waited for).
    let file = root.join(".claude/.project-state.json");
    let mut state = Value::Null;
    let written = wait_until(Duration::from_secs(10), || {
        state = std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
        state["todos"].as_array().is_some_and(|t| t.iter().filter(|t| t["status"] == "completed").count() == 2)
    });
    assert!(written, "no checkpoint with the session's tasks: {state:#}");
    assert_seed_004(&state);
    let done = state["todos"].as_array().expect("todos").iter().filter(|t| t["status"] == "completed").count();
    assert_eq!((done, state["todos"].as_array().map_or(0, Vec::len)), (2, 3), "{state:#}");
    let a = &state["activity_summary"];
    assert_eq!(a["files_created"], 2, "calc.mjs and calc.test.mjs were created: {a}");
    // calc.mjs: 7 lines written, then the edit's patch adds 2 and removes 1; the test file 11.
    // In git that is the diff: two new files of 8 and 11 lines; outside git, the patches.
    let lines = if in_git { (8 + 11, 0) } else { (7 + 2 + 11, 1) };
    assert_eq!((a["lines_added"].as_u64(), a["lines_deleted"].as_u64()), (Some(lines.0), Some(lines.1)), "{a}");
    let mut edited: Vec<&str> =
        state["edited_files"].as_array().expect("files").iter().filter_map(Value::as_str).collect();
    edited.sort();
    assert_eq!(edited, ["calc.mjs", "calc.test.mjs"]);

    // The tests ran and one failed, by name.
    let tests = &status["session"]["test_results"];
    assert!(tests.to_string().contains("divide rounds to whole numbers"), "the failing test is named: {tests:#}");

    // The report.
    let report = std::fs::read_to_string(root.join(".claude/session-memory.md")).expect("report");
    assert!(report.contains("2/3 tasks complete"), "{report}");
    assert!(report.contains("Fix rounding in divide"), "{report}");

    // The context a fresh agent gets.
    let ctx = text(&env.ctl(&["context", root.to_str().unwrap()]).stdout);
    assert!(ctx.contains("2 of 3 done"), "{ctx}");
    assert!(ctx.contains("[ ] ") && ctx.contains("Fix rounding in divide"), "{ctx}");
    assert!(ctx.contains("divide rounds to whole numbers"), "the failing test: {ctx}");
    assert!(ctx.contains("Next: make divide() round down"), "the agent's last words: {ctx}");
    assert!(ctx.contains("calc.mjs"), "{ctx}");
    // The background agent's `<task-notification>` came as a prompt: not the user's.
    assert!(!ctx.contains("task-notification") && !status.to_string().contains("<task-notification>"), "{ctx}");

    // The fact the agent asked to keep.
    let facts = env.ctl_json(&["facts", "--project", root.to_str().unwrap()]);
    assert!(facts.to_string().contains("the tests run with node --test"), "{facts:#}");
}

/// The first request of the latest conversation run against `model` holds ccmem's context.
fn context_reached_the_model(model: &ModelServer, before: usize, wanted: &[&str]) {
    let requests = model.requests();
    let req = requests[before..]
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("no model request after {before}"));
    let all = claude::request_text(req);
    assert!(all.contains("Where you left off (ccmem)"), "ccmem's context is not in the model request:\n{all}");
    for w in wanted {
        assert!(all.contains(w), "the model request lacks {w:?}:\n{all}");
    }
}

/// A JavaScript project, in git or not.
fn scratch_project(env: &Env, in_git: bool) -> std::path::PathBuf {
    let root = if in_git {
        repo(env, "calc")
    } else {
        let dir = env.path().join("calc");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::canonicalize(&dir).expect("canonical")
    };
    std::fs::write(root.join("package.json"), "{\"name\": \"calc\", \"type\": \"module\"}\n").expect("package.json");
    if in_git {
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "package.json"]);
    }
    root
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code")]
fn task_tools_session_is_carried_into_new_resumed_and_continued_conversations() {
    let env = Env::new();
    let root = scratch_project(&env, true);
    claude::install_hooks(&env);
    let model = ModelServer::start();

    model.script(work_script(&root, false));
    let work =
        claude::run(&env, &model, &root, "Add a calculator module with add and divide, with tests", &[], TASK_TOOLS);
    work.assert_ok();
    let work_id = work.conversation();
    assert!(!work_id.is_empty());
    assert_work_recorded(&env, &root, true, true);

    // A new conversation gets the context at its start.
    let before = model.requests().len();
    model.script(vec![vec![say("Looking at the failing test.")]]);
    let fresh = claude::run(&env, &model, &root, "carry on", &[], TASK_TOOLS);
    fresh.assert_ok();
    context_reached_the_model(
        &model,
        before,
        &["2 of 3 done", "Fix rounding in divide", "divide rounds to whole numbers", "Next: make divide() round down"],
    );

    // It did nothing: the conversation to resume is still the one that worked.
    let resume = text(&env.ctl(&["resume-id", root.to_str().unwrap()]).stdout);
    assert_eq!(resume.trim(), work_id, "resume-id names the conversation that did the work");

    // --resume and --continue get it too.
    let before = model.requests().len();
    model.script(vec![vec![say("Resumed.")]]);
    claude::run(&env, &model, &root, "go on", &["--resume", &work_id], TASK_TOOLS).assert_ok();
    context_reached_the_model(&model, before, &["2 of 3 done"]);
    let before = model.requests().len();
    model.script(vec![vec![say("Continued.")]]);
    claude::run(&env, &model, &root, "go on", &["--continue"], TASK_TOOLS).assert_ok();
    context_reached_the_model(&model, before, &["2 of 3 done"]);

    // A manual compaction of the work conversation.
    let before = model.requests().len();
    model.script(vec![vec![say("<summary>Pending Tasks: fix rounding in divide. Next Step: round down.</summary>")]]);
    claude::run(&env, &model, &root, "/compact", &["--resume", &work_id], TASK_TOOLS).assert_ok();
    assert!(model.requests().len() > before, "the compaction asked the model for a summary");
    let status = env.project_status(&root);
    let work = status["session"]["conversations"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == work_id.as_str()).cloned())
        .expect("the work conversation");
    assert_eq!((&work["compacted"], &work["compact_trigger"]), (&json!(true), &json!("manual")), "{work:#}");
    // Its todos are still the plan after the compaction.
    let ctx = text(&env.ctl(&["context", root.to_str().unwrap()]).stdout);
    assert!(ctx.contains("2 of 3 done"), "{ctx}");

    // The history lists every conversation; the work one is still the one to resume.
    let status = env.project_status(&root);
    let convs: Vec<&str> = status["session"]["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(convs.contains(&work_id.as_str()) && convs.contains(&fresh.conversation().as_str()), "{convs:?}");
    let resume = text(&env.ctl(&["resume-id", root.to_str().unwrap()]).stdout);
    assert_eq!(resume.trim(), work_id);
    let history = text(&env.ctl(&["history", root.to_str().unwrap()]).stdout);
    let line = |id: &str| {
        history.lines().find(|l| l.contains(&format!("conversation {id}"))).unwrap_or_else(|| panic!("{id}: {history}"))
    };
    let (worked, talked) = (line(&work_id), line(&fresh.conversation()));
    assert!(
        worked.contains("← resume-id") && worked.contains("compacted") && worked.contains("tool calls"),
        "{history}"
    );
    assert!(talked.contains("no tool calls") && !talked.contains("resume-id"), "{history}");
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code")]
fn todo_write_session_reads_two_of_three_everywhere() {
    // Outside git this time: the line counts come from the agent's own patches.
    let env = Env::new();
    let root = scratch_project(&env, false);
    claude::install_hooks(&env);
    let model = ModelServer::start();
    model.script(work_script(&root, true));
    claude::run(&env, &model, &root, "Add a calculator module with add and divide, with tests", &[], TODO_WRITE)
        .assert_ok();
    assert_work_recorded(&env, &root, false, false);

    let before = model.requests().len();
    model.script(vec![vec![say("On it.")]]);
    claude::run(&env, &model, &root, "carry on", &[], TODO_WRITE).assert_ok();
    context_reached_the_model(&model, before, &["2 of 3 done", "Fix rounding in divide"]);
}

#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code")]
fn hook_payloads_of_this_version_are_read() {
    // Every event the CLI sends reaches the daemon and costs the agent nothing: each hook
    // ran, exited 0 and printed nothing but SessionStart's context.
    let env = Env::new();
    let root = scratch_project(&env, true);
    claude::install_hooks(&env);
    let model = ModelServer::start();
    model.script(work_script(&root, false));
    let run = claude::run(&env, &model, &root, "Add a calculator", &[], TASK_TOOLS);
    run.assert_ok();
    let responses: Vec<&Value> = run.lines.iter().filter(|l| l["subtype"] == "hook_response").collect();
    assert!(!responses.is_empty(), "the CLI reported no hook run");
    for r in responses {
        assert!(r["exit_code"] == 0 && r["outcome"] == "success" && r["stderr"] == "", "a hook failed: {r}");
    }
    let log = std::fs::read_to_string(env.state.join("ccmem/ccmemctl.log")).unwrap_or_default();
    assert!(log.is_empty(), "the hook client logged trouble: {log}");
    let state = root.join(".claude/.project-state.json");
    assert!(
        wait_until(Duration::from_secs(10), || std::fs::read(&state)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v["todos"].as_array().is_some_and(|t| t.len() == 3))),
        "the checkpoint never had the three tasks"
    );
}

/// The plugin as a user installs it: the checkout is a marketplace, the plugin validates
/// without a warning, installs, and brings hooks, the MCP server and the slash commands; a
/// session with it alone is recorded, and the agent writes a memory and reads its session
/// over MCP. With `hooks install` as well, each event still counts once.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code")]
fn the_plugin_installs_from_the_checkout_and_serves_hooks_and_mcp() {
    let env = Env::new();
    let root = scratch_project(&env, true);
    let model = ModelServer::start();
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plugin_cmd = |args: &[&str]| {
        let mut cmd = claude::command(&env, &model, &root, &[]);
        let out = cmd.arg("plugin").args(args).stdin(std::process::Stdio::null()).output().expect("claude plugin");
        assert_ok(&out, &format!("claude plugin {args:?}"));
        text(&out.stdout) + &text(&out.stderr)
    };
    let validated = plugin_cmd(&["validate", checkout.join("client/plugin").to_str().unwrap()]);
    assert!(validated.contains("Validation passed") && !validated.contains('⚠'), "{validated}");
    let validated = plugin_cmd(&["validate", checkout.to_str().unwrap()]);
    assert!(validated.contains("Validation passed") && !validated.contains('⚠'), "{validated}");
    plugin_cmd(&["marketplace", "add", checkout.to_str().unwrap()]);
    plugin_cmd(&["install", "ccmem@ccmem"]);
    let details = plugin_cmd(&["details", "ccmem@ccmem"]);
    for part in [
        "Hooks (11)",
        "SessionStart",
        "TaskCompleted",
        "Notification",
        "MCP servers (1)  ccmem",
        "context, remember, status",
    ] {
        assert!(details.contains(part), "plugin details lack {part:?}:\n{details}");
    }

    let doctor_hooks = || {
        // With this build's programs on PATH, as Claude Code has them (claude::command).
        let bin_dir = Path::new(CCMEMCTL).parent().expect("bin dir");
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let out = env.ctl_cmd(&["doctor", "--json"]).env("PATH", path).current_dir(&root).output().expect("doctor");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("doctor: {}", text(&out.stdout)));
        v.as_array().and_then(|c| c.iter().find(|c| c["name"] == "agent hooks").cloned()).expect("hooks check")
    };
    let check = doctor_hooks();
    assert!(check["status"] == "ok" && check["detail"].to_string().contains("plugin ccmem@ccmem"), "{check}");

    let mcp = |t: &str| format!("mcp__plugin_ccmem_ccmem__{t}");
    model.script(vec![
        vec![tool(
            "ToolSearch",
            json!({"query": format!("select:{},{}", mcp("memory_write"), mcp("session_status")), "max_results": 5}),
        )],
        vec![tool(
            &mcp("memory_write"),
            json!({"type": "gotcha", "title": "divide() must round down", "tags": ["calc", "rounding"],
                   "content": "The tests expect whole numbers from divide(); use Math.floor.", "scope": "project"}),
        )],
        vec![tool(&mcp("session_status"), json!({}))],
        vec![tool("Write", json!({"file_path": root.join("notes.md"), "content": "# Notes\n"}))],
        vec![say("Saved the rounding rule. Next: fix divide().")],
    ]);
    let run = claude::run(&env, &model, &root, "Remember that divide rounds down", &[], &[]);
    run.assert_ok();
    // The hooks came from the plugin alone.
    let status = settle(&env, &root, |p| p["session"]["files_modified"]["notes.md"].is_object());
    assert_eq!(status["session"]["commands_executed"][0]["command"], "Remember that divide rounds down");
    // The MCP server wrote the memory and answered with the session.
    let found = env.ctl_json(&["memory", "search", "divide round", "--project", root.to_str().unwrap()]);
    assert!(found.to_string().contains("divide() must round down"), "{found:#}");
    let results: Vec<String> = model
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    assert!(
        results.iter().any(|r| r.contains("Remember that divide rounds down")),
        "session_status over MCP: {results:?}"
    );

    // `hooks install` too: every event now arrives twice, and counts once; doctor says so.
    claude::install_hooks(&env);
    let check = doctor_hooks();
    assert!(check["status"] == "warn" && check["detail"].to_string().contains("twice"), "{check}");
    model.script(vec![
        vec![tool("Edit", json!({"file_path": root.join("notes.md"), "old_string": "# Notes", "new_string": "# Notes\n\nRound down."}))],
        vec![say("Done.")],
    ]);
    let before = model.requests().len();
    let twice = claude::run(&env, &model, &root, "Add the rounding note", &[], &[]);
    twice.assert_ok();
    let first = model.requests()[before..]
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .map(claude::request_text)
        .unwrap_or_default();
    assert_eq!(first.matches("Where you left off (ccmem)").count(), 1, "the context is given once:\n{first}");
    // Every hook was queued in the project's mailbox before claude exited, so this status,
    // queued after them, sees them all.
    let status = env.project_status(&root);
    assert_eq!(status["session"]["files_modified"]["notes.md"]["modification_count"], 2, "{status:#}");
    let conv = status["session"]["conversations"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == twice.conversation()).cloned())
        .expect("the second conversation");
    assert_eq!((conv["tool_calls"].as_u64(), conv["message_count"].as_u64()), (Some(1), Some(1)), "{conv:#}");
}

/// The plugin with ccmem installed by npm, as a user without Rust has it: nothing of this
/// build on PATH but what `npm i -g` put there. The plugin's hooks find npm's `ccmemctl` (the
/// native program), which starts npm's `ccmemd`, and the session is recorded.
#[test]
#[cfg_attr(not(ccmem_npm), ignore = "needs npm to install Claude Code and ccmem's packages")]
fn the_plugin_runs_the_npm_installed_programs() {
    let env = Env::new();
    let root = scratch_project(&env, true);
    let model = ModelServer::start();
    let packages = npm::pack(Path::new(CCMEMCTL).parent().expect("bin dir"), &env.path().join("packages"), None, true);
    let prefix = env.path().join("npm-global");
    assert_ok(&npm::install(&prefix, &[&packages.platform, &packages.main], &[]), "npm install -g");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", prefix.join("bin").display());
    assert!(!path.contains("target/"), "PATH names this build: {path}");

    model.script(vec![
        vec![tool("Write", json!({"file_path": root.join("npm.md"), "content": "# From npm\n"}))],
        vec![say("Wrote npm.md.")],
    ]);
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("client/plugin");
    let run = claude::run(
        &env,
        &model,
        &root,
        "Write the npm note",
        &["--plugin-dir", plugin.to_str().unwrap()],
        &[("PATH", path.as_str())],
    );
    run.assert_ok();
    env.note_daemon();
    let status = settle(&env, &root, |p| p["session"]["files_modified"]["npm.md"].is_object());
    assert_eq!(status["session"]["commands_executed"][0]["command"], "Write the npm note");
    let pid = env.pidfile_pid().expect("the hooks started a daemon");
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the daemon's program");
    assert!(exe.starts_with(&prefix), "the daemon is {}, not npm's", exe.display());
}
