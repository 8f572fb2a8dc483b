use super::*;
use crate::agent::hooks::{Kind, Tool};
use serde_json::json;

/// A payload Codex sent, as `ccmemctl hook --agent codex` passes it on.
fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/codex").join(name);
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap();
    v[AGENT_KEY] = json!("codex");
    v
}

#[test]
fn a_payload_names_its_agent_and_without_a_name_is_claude_codes() {
    let mut v = json!({"hook_event_name": "SessionStart", "session_id": "abc", "cwd": "/p"});
    assert_eq!(parse(&v).unwrap().agent, Agent::Claude);
    v[AGENT_KEY] = json!("codex");
    assert_eq!(parse(&v).unwrap().agent, Agent::Codex);
    v[AGENT_KEY] = json!("cursor");
    assert_eq!(parse(&v).unwrap().agent, Agent::Other);
}

#[test]
fn codex_payloads_become_neutral_events() {
    // Captured from Codex 0.169.0 (see tests/fixtures/codex/SOURCES.md).
    let plan = parse(&fixture("post-tool-use-update-plan.json")).unwrap();
    assert_eq!(plan.agent, Agent::Codex);
    let Kind::ToolUse { tool: Tool::Plan(todos), .. } = &plan.kind else { panic!("{plan:?}") };
    assert_eq!(todos.len(), 2);
    assert_eq!(todos[0].content, "Write the calculator");
    assert_eq!(todos[0].status, ccmem_proto::model::session::TodoStatus::InProgress);

    let patch = parse(&fixture("post-tool-use-apply-patch.json")).unwrap();
    let Kind::ToolUse { tool: Tool::Edits(files), .. } = &patch.kind else { panic!("{patch:?}") };
    assert_eq!(files.len(), 1);
    assert!(files[0].path.ends_with("/proj/calc.mjs") && files[0].created && files[0].added == 3, "{files:?}");

    let mut bash = fixture("post-tool-use-bash-failed.json");
    let Kind::ToolUse { tool: Tool::Shell { exit, failed, .. }, .. } = parse(&bash).unwrap().kind else { panic!() };
    assert_eq!((exit, failed), (None, false), "no exit status in Codex's own payload");
    bash[ccmem_proto::wire::api::EXIT_CODE_KEY] = json!(3);
    let Kind::ToolUse { tool: Tool::Shell { command, exit, failed, .. }, .. } = parse(&bash).unwrap().kind else {
        panic!()
    };
    assert_eq!((command.as_str(), exit, failed), ("node -e 'process.exit(3)'", Some(3), true));

    let stop = parse(&fixture("stop.json")).unwrap();
    assert_eq!(
        stop.kind,
        Kind::Stop {
            last_message: Some("Done: calc.mjs written. Next: run the tests.".into()),
            subagent: false,
            agent_transcript: None
        }
    );
    assert_eq!(stop.transcript, None, "a rollout is not read as Claude Code's transcript");
}

#[test]
fn apply_patch_texts_name_every_file_they_touch() {
    let files = codex::parse_patch(
        "*** Begin Patch\n*** Update File: src/a.rs\n@@ fn a\n-old\n+new\n+more\n context\n*** Update File: b.rs\n*** Move to: c.rs\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** Add File: new.md\n+# hi\n*** End Patch\n",
    );
    let shown: Vec<(&str, bool, bool, u64, u64)> =
        files.iter().map(|f| (f.path.as_str(), f.created, f.deleted, f.added, f.removed)).collect();
    assert_eq!(
        shown,
        [
            ("src/a.rs", false, false, 2, 1),
            ("b.rs", false, true, 0, 0),
            ("c.rs", false, false, 1, 1),
            ("gone.txt", false, true, 0, 0),
            ("new.md", true, false, 1, 0),
        ]
    );
    assert_eq!(codex::exit_in_text("Chunk ID: 1\nWall time: 0 s\nProcess exited with code 2\nOutput:\n"), Some(2));
    assert_eq!(codex::exit_in_text("Exit code: 1\nWall time: 0 seconds\n"), Some(1));
    assert_eq!(codex::exit_in_text("all fine"), None);
}
