use super::*;
use crate::agent::hooks::{Kind, Tool};
use serde_json::json;

/// A payload Codex sent, as `ccmemctl hook --agent codex` passes it on.
fn fixture(name: &str) -> Value {
    fixture_of("codex", name)
}

/// A payload `agent` sent, as `ccmemctl hook --agent <agent>` passes it on.
fn fixture_of(agent: &str, name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(agent).join(name);
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap();
    v[AGENT_KEY] = json!(agent);
    v
}

#[test]
fn a_payload_names_its_agent_and_without_a_name_is_claude_codes() {
    let mut v = json!({"hook_event_name": "SessionStart", "session_id": "abc", "cwd": "/p"});
    assert_eq!(parse(&v).unwrap().agent, Agent::Claude);
    v[AGENT_KEY] = json!("codex");
    assert_eq!(parse(&v).unwrap().agent, Agent::Codex);
    v[AGENT_KEY] = json!("windsurf");
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

#[test]
fn gemini_payloads_become_neutral_events() {
    use ccmem_proto::model::session::TodoStatus;
    // Captured from Gemini CLI 0.61.0 (see tests/fixtures/gemini/SOURCES.md).
    let g = |name: &str| parse(&fixture_of("gemini", name)).unwrap();
    let start = g("session-start.json");
    assert_eq!((start.agent, &start.kind), (Agent::Gemini, &Kind::SessionStart { source: "startup".into() }));
    assert_eq!(start.conversation.as_deref(), Some("a3fe6717-73c5-452c-a3fc-6d508860325e"));
    assert_eq!(g("session-start-resume.json").kind, Kind::SessionStart { source: "resume".into() });
    // The context a SessionStart hook gave is in front of the prompt: it is not the user's.
    assert_eq!(g("before-agent.json").kind, Kind::Prompt { text: "Create hello.txt and run tests".into() });

    let Kind::ToolUse { tool: Tool::Plan(todos), .. } = g("after-tool-write-todos.json").kind else { panic!() };
    let shown: Vec<(&str, TodoStatus)> = todos.iter().map(|t| (t.content.as_str(), t.status)).collect();
    assert_eq!(
        shown,
        [
            ("Create hello.txt", TodoStatus::InProgress),
            ("Run the test suite", TodoStatus::Pending),
            ("Fix hello.txt after failing test", TodoStatus::Pending)
        ]
    );
    let Kind::ToolUse { tool: Tool::Edits(files), .. } = g("after-tool-write-file.json").kind else { panic!() };
    assert_eq!(
        (files[0].path.as_str(), files[0].created, files[0].added),
        ("/tmp/agent-research/gemini/repo/hello.txt", true, 1)
    );
    let Kind::ToolUse { tool: Tool::Edits(files), .. } = g("after-tool-replace.json").kind else { panic!() };
    assert_eq!((files[0].created, files[0].added, files[0].removed), (false, 1, 1));
    let Kind::ToolUse { tool: Tool::Shell { command, output, exit, failed, interrupted }, .. } =
        g("after-tool-shell-failed.json").kind
    else {
        panic!()
    };
    assert_eq!(
        (command.as_str(), output.as_str(), exit, failed, interrupted),
        ("sh -c 'echo FAIL test_x; exit 1'", "FAIL test_x", Some(1), true, false)
    );
    let Kind::Stop { last_message: Some(words), .. } = g("after-agent.json").kind else { panic!() };
    assert!(words.starts_with("All done: created hello.txt"), "{words}");
    assert_eq!(g("session-end.json").kind, Kind::SessionEnd { reason: "exit".into() });
    // Fired before every model call, compressing or not: activity, not a compaction.
    assert_eq!(g("pre-compress-manual.json").kind, Kind::Other("PreCompress".into()));
}

#[test]
fn gemini_shell_reports_are_read_from_their_end() {
    use gemini::{shell_report, ShellReport};
    let ok = shell_report("<untrusted_context>\nOutput: all good\nProcess Group PGID: 12\n</untrusted_context>");
    assert_eq!(ok, ShellReport { exit: Some(0), signal: false, unfinished: false });
    // An output that prints a line like the report's is not the report.
    let tricky = shell_report("Output: Exit Code: 9\nmore\nExit Code: 2\nProcess Group PGID: 3");
    assert_eq!(tricky.exit, Some(2));
    let lying = shell_report("Output: x\nExit Code: 7\nstill output\nProcess Group PGID: 3");
    assert_eq!(lying.exit, Some(0), "the output's own line is not the code");
    assert!(shell_report("Output: (empty)\nSignal: 15\nProcess Group PGID: 4").signal);
    assert!(shell_report("Command was cancelled by user before it could complete.").unfinished);
    assert!(shell_report("Command moved to background (PID: 9). Output hidden.").unfinished);
    assert_eq!(shell_report("something else").exit, None);
    assert_eq!(gemini::without_hook_context("<hook_context>a &lt;b&gt;</hook_context>\n\nfix it"), "fix it");
    assert_eq!(gemini::without_hook_context("plain"), "plain");
    assert_eq!(gemini::without_hook_context("<hook_context>unclosed"), "");
}

/// Every payload of a captured stream, read by `agent`'s adapter.
fn stream_of(agent: &str, file: &str) -> Vec<Hook> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(agent).join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v[AGENT_KEY] = json!(agent);
            parse(&v).unwrap_or_else(|| panic!("not read: {l}"))
        })
        .collect()
}

#[test]
fn opencode_plugin_events_become_neutral_events() {
    use ccmem_proto::model::session::TodoStatus;
    // Captured from OpenCode 1.18.33 with ccmem's plugin (tests/fixtures/opencode/SOURCES.md).
    let hooks = stream_of("opencode", "plugin-events.jsonl");
    assert!(hooks
        .iter()
        .all(|h| h.agent == Agent::Opencode && h.conversation.as_deref() == Some("ses_de4e59097ffeX40ZdV3aXS4SHK")));
    assert_eq!(hooks[0].kind, Kind::SessionStart { source: "startup".into() });
    assert_eq!(hooks[1].kind, Kind::Prompt { text: "MAIN: please do the scripted task".into() }, "without the quotes");
    let Kind::ToolUse { tool: Tool::Plan(todos), .. } = &hooks[2].kind else { panic!("{:?}", hooks[2]) };
    assert_eq!(
        todos.iter().map(|t| t.status).collect::<Vec<_>>(),
        [TodoStatus::Completed, TodoStatus::InProgress, TodoStatus::Pending]
    );
    let Kind::ToolUse { tool: Tool::Edits(f), .. } = &hooks[3].kind else { panic!() };
    assert_eq!((f[0].path.as_str(), f[0].created, f[0].added), ("/tmp/cap/repo/hello.txt", true, 2));
    let Kind::ToolUse { tool: Tool::Shell { exit, failed, output, .. }, .. } = &hooks[4].kind else { panic!() };
    assert_eq!((*exit, *failed, output.as_str()), (Some(1), true, "FAIL test_x\n"));
    let Kind::ToolUse { tool: Tool::Edits(f), .. } = &hooks[5].kind else { panic!() };
    assert_eq!((f[0].created, f[0].added, f[0].removed), (false, 1, 1));
    assert!(matches!(&hooks[6].kind, Kind::Stop { last_message: Some(m), .. } if m.starts_with("All done")));
    assert_eq!(hooks[7].kind, Kind::SessionEnd { reason: "exit".into() });
    assert_eq!(hooks[8].kind, Kind::SessionStart { source: "resume".into() });
    // A tool that threw changed nothing.
    assert!(matches!(&hooks[10].kind, Kind::ToolUse { tool: Tool::Other, name } if name == "edit"));
    let Kind::ToolUse { tool: Tool::Shell { exit, failed, .. }, .. } = &hooks[11].kind else { panic!() };
    assert_eq!((*exit, *failed), (Some(0), false));
    assert_ne!(hooks[4].delivery, hooks[11].delivery);
}

#[test]
fn pi_extension_events_become_neutral_events() {
    // Captured from Pi 0.73.1 with ccmem's extension (tests/fixtures/pi/SOURCES.md).
    let hooks = stream_of("pi", "extension-events.jsonl");
    assert!(hooks.iter().all(|h| h.agent == Agent::Pi));
    assert_eq!(hooks[0].kind, Kind::SessionStart { source: "startup".into() });
    assert_eq!(hooks[1].kind, Kind::Prompt { text: "MAIN: please do the scripted task".into() });
    let Kind::ToolUse { tool: Tool::Edits(f), .. } = &hooks[2].kind else { panic!() };
    assert_eq!((f[0].path.as_str(), f[0].added), ("/tmp/capi/repo/hello.txt", 2));
    let Kind::ToolUse { tool: Tool::Shell { exit, failed, command, .. }, .. } = &hooks[3].kind else { panic!() };
    assert_eq!((command.as_str(), *exit, *failed), ("sh -c 'echo FAIL test_x; exit 1'", Some(1), true));
    let Kind::ToolUse { tool: Tool::Edits(f), .. } = &hooks[4].kind else { panic!() };
    assert_eq!((f[0].added, f[0].removed), (1, 1));
    assert!(matches!(&hooks[5].kind, Kind::Stop { last_message: Some(m), .. } if m.starts_with("All done")));
    assert_eq!(hooks[6].kind, Kind::SessionEnd { reason: "quit".into() });
    assert_eq!(hooks[7].kind, Kind::SessionStart { source: "resume".into() });
    let Kind::ToolUse { tool: Tool::Shell { exit, failed, .. }, .. } = &hooks[9].kind else { panic!() };
    assert_eq!((*exit, *failed), (Some(0), false));
    assert!(matches!(&hooks[15].kind, Kind::PreCompact { .. }));
    assert!(matches!(&hooks[17].kind, Kind::Compacted { summary } if summary.starts_with("SUMMARY #8")));
    assert_eq!(hooks[18].kind, Kind::SessionStart { source: "compact".into() });
    // Pi's own ends of a command.
    assert_eq!(pi::shell_end("x\nCommand timed out after 5 seconds", true), (None, true));
    assert_eq!(pi::shell_end("out\n\n\nCommand exited with code 2\n", true), (Some(2), false));
    assert_eq!(pi::shell_end("fine\n", false), (Some(0), false));
}

#[test]
fn copilot_payloads_become_neutral_events() {
    // Captured from GitHub Copilot CLI 1.0.102 (tests/fixtures/copilot/SOURCES.md).
    let c = |name: &str| parse(&fixture_of("copilot", name)).unwrap();
    let start = c("session-start.json");
    assert_eq!((start.agent, &start.kind), (Agent::Copilot, &Kind::SessionStart { source: "startup".into() }));
    assert_eq!(c("user-prompt-submit.json").agent, Agent::Copilot);
    let Kind::ToolUse { tool: Tool::Shell { command, output, exit, failed, .. }, .. } = c("post-tool-use.json").kind
    else {
        panic!()
    };
    assert_eq!(
        (command.as_str(), output.as_str(), exit, failed),
        ("echo hello-from-fake > fake.txt && cat fake.txt", "hello-from-fake", Some(0), false)
    );
    assert!(matches!(c("post-tool-use-failure.json").kind, Kind::ToolUse { tool: Tool::Other, .. }));
    assert!(matches!(c("stop.json").kind, Kind::Stop { subagent: false, .. }));
    assert!(matches!(c("stop-inside-subagent.json").kind, Kind::Stop { subagent: true, .. }));
    assert!(matches!(c("pre-compact.json").kind, Kind::PreCompact { ref trigger, .. } if trigger == "manual"));
    assert_eq!(c("session-end.json").kind, Kind::SessionEnd { reason: "complete".into() });
    // A command's code at the end of its result, and one that did not end.
    assert_eq!(copilot::shell_result("FAIL x\n<shellId: 3 completed with exit code 3>"), ("FAIL x".into(), Some(3)));
    assert_eq!(copilot::shell_result("still running…").1, None);
}

#[test]
fn cursor_payloads_as_documented_become_neutral_events() {
    // From Cursor's documentation and one third-party capture (tests/fixtures/cursor/SOURCES.md):
    // untested against a real Cursor.
    let c = |name: &str| parse(&fixture_of("cursor", name)).unwrap();
    let start = c("session-start.json");
    assert_eq!((start.agent, &start.kind), (Agent::Cursor, &Kind::SessionStart { source: "startup".into() }));
    assert_eq!(start.cwd.as_deref(), Some(std::path::Path::new("/tmp/aeye-spike-work")), "the workspace: no cwd");
    let Kind::ToolUse { tool: Tool::Shell { command, exit, failed, output, .. }, .. } =
        c("post-tool-use-shell.json").kind
    else {
        panic!()
    };
    assert_eq!((command.as_str(), exit, failed), ("npm test", Some(1), true));
    assert!(output.contains("Tests: 1 failed"), "{output}");
    let Kind::ToolUse { tool: Tool::Edits(f), .. } = c("after-file-edit.json").kind else { panic!() };
    assert_eq!((f[0].path.as_str(), f[0].added, f[0].removed), ("/tmp/aeye-spike-work/src/a.js", 1, 1));
    assert!(
        matches!(c("after-agent-response.json").kind, Kind::Stop { last_message: Some(ref m), .. } if m.starts_with("Fixed add()"))
    );
    // A Claude Code hook Cursor runs: read as Claude Code's, named Cursor's.
    let mut claude_shaped =
        serde_json::json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": "/w", "prompt": "hi"});
    claude_shaped[AGENT_KEY] = json!("cursor");
    let h = parse(&claude_shaped).unwrap();
    assert_eq!((h.agent, h.kind), (Agent::Cursor, Kind::Prompt { text: "hi".into() }));
}

#[test]
fn oh_my_pi_patches_name_their_files() {
    // An Oh My Pi `edit` call's arguments, cut short (preloopdev/preloop, MIT; see
    // ../shared/agent-transcripts/SOURCES.md).
    let v = json!({
        "hook_event_name": "tool_result", "session_id": "01a025c5", "cwd": "/Users/bnjoroge/preloop",
        AGENT_KEY: "pi", "tool_name": "edit", "tool_use_id": "call_01a025e79feb",
        "tool_input": {"i": "patch githubRequest for GHES", "input": "*** Begin Patch\n*** Update File: utils/github.ts\n@@\n const githubRequest = async <T>(\n-  path: string,\n+  path: string, base?: string,\n*** End Patch\n"},
        "tool_response": {"content": [{"type": "text", "text": "Updated utils/github.ts"}], "is_error": false},
    });
    let Kind::ToolUse { tool: Tool::Edits(files), .. } = parse(&v).unwrap().kind else { panic!() };
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "/Users/bnjoroge/preloop/utils/github.ts");
    assert_eq!((files[0].added, files[0].removed, files[0].tool.as_str()), (1, 1, "edit"));
    assert_eq!(files[0].summary, "edit: +1 −1");
}
