//! The scenario the agent suites share: a calculator module and its tests, in a scratch
//! project, worked on in three steps; `divide` rounds wrongly, so one test fails until it is
//! fixed. And the text of the first model request of a run, whichever API carried it.
#![allow(dead_code)]

use crate::claude::model::ModelServer;
use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

pub const CALC: &str =
    "export function add(a, b) {\n  return a + b;\n}\n\nexport function divide(a, b) {\n  return a / b;\n}\n";
pub const CALC_TEST: &str = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add, divide } from './calc.mjs';\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n\ntest('divide rounds to whole numbers', () => {\n  assert.equal(divide(7, 2), 3);\n});\n";
pub const STEPS: [&str; 3] = ["Add the calculator module", "Write tests for the calculator", "Fix rounding in divide"];

/// A git repository with a `package.json`, committed.
pub fn scratch_project(env: &Env) -> PathBuf {
    let root = repo(env, "calc");
    std::fs::write(root.join("package.json"), "{\"name\": \"calc\", \"type\": \"module\"}\n").expect("package.json");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "package.json"]);
    root
}

/// The text of the first request after `before` that offers tools (the agent's own, not a
/// title or a summary), whichever API it came by.
pub fn first_request(model: &ModelServer, before: usize) -> String {
    let requests = model.requests();
    let req = requests[before..]
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("no model request after {before}"));
    request_text(req)
}

/// Every piece of text in a request: instructions, system prompts, messages.
pub fn request_text(req: &Value) -> String {
    if req.get("contents").is_some() {
        return crate::gemini::request_text(req);
    }
    if req.get("input").is_some() {
        return crate::codex::request_text(req);
    }
    // Messages (system at the top) and Chat Completions (system messages): every text.
    let mut out = match &req["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    };
    out.push('\n');
    out.push_str(&crate::claude::request_text(req));
    out
}

/// The session's todos as (text, status).
pub fn todos(status: &Value) -> Vec<(String, String)> {
    status["session"]["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (t["content"].as_str().unwrap_or("").to_string(), t["status"].as_str().unwrap_or("").to_string()))
        .collect()
}

/// The scenario's todos with these statuses, as [`todos`] gives them.
pub fn steps(statuses: [&str; 3]) -> Vec<(String, String)> {
    (0..3).map(|i| (STEPS[i].to_string(), statuses[i].to_string())).collect()
}

/// The session's conversation ids.
pub fn conversation_ids(status: &Value) -> Vec<String> {
    status["session"]["conversations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect()
}

/// Asserts that `text` (what `who` holds) has every one of `wants`.
pub fn holds_all(who: &str, text: &str, wants: &[&str]) {
    for want in wants {
        assert!(text.contains(want), "{who} lacks {want:?}:\n{text}");
    }
}

/// The project's resume context, as `ccmemctl context` prints it.
pub fn context(env: &Env, root: &std::path::Path) -> String {
    text(&env.ctl(&["context", root.to_str().unwrap_or_default()]).stdout)
}
