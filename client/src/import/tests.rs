use super::*;
use serde_json::json;

/// The payloads `lines` of a file in `format` give.
pub(super) fn replayed(format: Format, file: &str, lines: &[Value]) -> Vec<Value> {
    let mut e = Emit::new(format, Path::new(file), Path::new("/w/app"));
    let mut r = reader_for(format, Path::new(file));
    let mut out = Vec::new();
    for l in lines {
        r.record(l, &mut e);
        out.extend(e.take());
    }
    r.finish(&mut e);
    out.extend(e.take());
    out
}

mod claude_code {
    use super::*;

    fn records(lines: &[Value]) -> Vec<Value> {
        replayed(Format::Claude, "/t/c1.jsonl", lines)
    }

    /// An old transcript keeps its times: each event carries its record's, a turn's end the
    /// time of the turn's last event (not the next prompt's); the user's `!` commands are
    /// numbered calls of their own, not counted as the agent's.
    #[test]
    fn replayed_events_keep_the_transcripts_times() {
        let lines = [
            json!({"type": "user", "sessionId": "abc", "timestamp": "2025-10-26T10:00:00.000Z", "message": {"content": "Add login"}}),
            json!({"type": "assistant", "timestamp": "2025-10-26T10:01:00.000Z", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "npm test"}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "sleep 100"}}]}}),
            json!({"type": "user", "timestamp": "2025-10-26T10:02:00.000Z", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}),
            json!({"type": "user", "timestamp": "2025-10-26T11:00:00.000Z", "message": {"content": "<bash-input>ls</bash-input>"}}),
            json!({"type": "user", "message": {"content": "<bash-stdout>a</bash-stdout><bash-stderr></bash-stderr>"}}),
            json!({"type": "user", "timestamp": "2025-10-26T11:05:00.000Z", "message": {"content": "<bash-input>pwd</bash-input>"}}),
            json!({"type": "user", "message": {"content": "<bash-stdout>/w</bash-stdout><bash-stderr></bash-stderr>"}}),
            json!({"type": "user", "timestamp": "2025-10-27T09:00:00.000Z", "message": {"content": "next"}}),
        ];
        let mut e = Emit::new(Format::Claude, Path::new("/t/c1.jsonl"), Path::new("/w/app"));
        let mut r = reader_for(Format::Claude, Path::new("/t/c1.jsonl"));
        let mut out = Vec::new();
        for l in &lines {
            e.at(l);
            r.record(l, &mut e);
            out.extend(e.take());
        }
        r.finish(&mut e);
        out.extend(e.take());
        let at = |name: &str, n: usize| {
            out.iter()
                .filter(|p| p["hook_event_name"] == name)
                .nth(n)
                .map(|p| p[ccmem_proto::wire::api::EVENT_TIME].clone())
        };
        assert_eq!(at("UserPromptSubmit", 0), Some(json!("2025-10-26T10:00:00.000Z")));
        assert_eq!(at("PostToolUse", 0), Some(json!("2025-10-26T10:02:00.000Z")));
        assert_eq!(
            at("Stop", 0),
            Some(json!("2025-10-26T11:05:00.000Z")),
            "the turn's last event, not the next prompt"
        );
        assert_eq!(at("UserPromptSubmit", 1), Some(json!("2025-10-27T09:00:00.000Z")));
        let ids: Vec<&str> = out.iter().filter_map(|p| p["tool_use_id"].as_str()).collect();
        assert_eq!(ids, ["t1", "user-bash-1", "user-bash-2"], "each of the user's commands is a call of its own");
        assert_eq!(e.summary.tool_calls, 2, "the agent's calls, the unanswered one too");
    }

    #[test]
    fn a_transcript_replays_as_the_hooks_would_have_sent_it() {
        let out = records(&[
            json!({"type": "user", "sessionId": "abc", "cwd": "/Users/me/app", "message": {"content": "Add login"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/Users/me/app/src/login.ts", "content": "x"}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "npm test"}}]}}),
            json!({"type": "user", "toolUseResult": {"type": "create", "filePath": "/Users/me/app/src/login.ts"}, "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "Exit code 1\nFAIL"}]}}),
            json!({"type": "user", "isSidechain": true, "message": {"content": "subagent prompt"}}),
            json!({"type": "user", "isCompactSummary": true, "message": {"content": "Summary…"}}),
            json!({"type": "user", "message": {"content": "continue"}}),
        ]);
        let events: Vec<&str> = out.iter().map(|p| p["hook_event_name"].as_str().unwrap()).collect();
        assert_eq!(
            events,
            [
                "SessionStart",
                "UserPromptSubmit",
                "PostToolUse",
                "PostToolUseFailure",
                "PreCompact",
                "SessionStart",
                "Stop",
                "UserPromptSubmit",
                "Stop"
            ]
        );
        assert!(out
            .iter()
            .all(|p| p["session_id"] == "abc" && p["cwd"] == "/w/app" && p["transcript_path"] == "/t/c1.jsonl"));
        assert_eq!(out[2]["tool_input"]["file_path"], "/w/app/src/login.ts", "paths are the project's");
        assert_eq!(out[2]["tool_response"]["type"], "create");
        assert_eq!(out[3]["error"], "Exit code 1\nFAIL");
        assert_eq!(out[5]["source"], "compact");
    }

    #[test]
    fn other_files_are_refused_clearly() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.json");
        std::fs::write(&p, "{\"name\": \"package\"}\nnot json\n").unwrap();
        let e = check(&p).unwrap_err();
        assert!(e.contains("is not a conversation ccmem can import"), "{e}");
        assert!(check(tmp.path()).unwrap_err().contains("not a regular file"));
        // A byte-order mark and a line of invalid UTF-8 do not stop it.
        let t = tmp.path().join("t.jsonl");
        let mut bytes = "\u{feff}".as_bytes().to_vec();
        bytes.extend_from_slice(br#"{"type": "user", "sessionId": "s1", "message": {"content": "hi"}}"#);
        bytes.extend_from_slice(b"\nbad \xff\xfe\n");
        bytes.extend_from_slice(br#"{"type": "user", "sessionId": "s1", "message": {"content": "again"}}"#);
        std::fs::write(&t, bytes).unwrap();
        assert_eq!(check(&t).unwrap(), (Format::Claude, Some("s1".into())));
        let mut sent = Vec::new();
        let summary = replay(&t, Path::new("/w"), |p| {
            sent.push(p.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!((summary.prompts, summary.bad_lines), (2, 1));
        assert!(check(&tmp.path().join("missing")).is_err());
    }
}

mod gemini_cli {
    use super::*;

    #[test]
    fn a_chat_is_read_as_a_log_in_linear_time() {
        // Messages written again when updated, rewinds by id (a hostile one: rewinds to ids
        // that are not there), and a rewind that drops the last two.
        let mut lines = vec![json!({"sessionId": "g1", "projectHash": "h", "startTime": "t"})];
        for i in 0..20_000 {
            lines.push(json!({"id": format!("m{i}"), "type": if i % 2 == 0 { "user" } else { "gemini" }, "content": if i % 2 == 0 { json!([{"text": format!("prompt {i}")}]) } else { json!(format!("answer {i}")) }}));
        }
        for i in 0..20_000 {
            lines.push(json!({"$rewindTo": format!("nothing{i}")}));
        }
        lines.push(json!({"id": "m5", "type": "gemini", "content": "answer 5, updated"}));
        lines.push(json!({"$rewindTo": "m19998"}));
        // Read in linear time: a quadratic read of these 40,000 records took minutes.
        let out = replayed(Format::Gemini { document: false }, "/t/session-x.jsonl", &lines);
        let prompts = out.iter().filter(|p| p["hook_event_name"] == "BeforeAgent").count();
        assert_eq!(prompts, 9_999, "the rewind dropped the last prompt and its answer");
        assert!(out.iter().any(|p| p["prompt_response"] == "answer 5, updated"), "the last copy of a message wins");
    }
}

mod copilot_cli {
    use super::*;

    /// Records cut from a Copilot CLI 1.0.74 session on Windows (polecatspeaks/StarCar, MIT;
    /// ../shared/agent-transcripts/SOURCES.md): text Copilot injected (`source`) is no
    /// prompt; a sub-agent's prompt and words are not the conversation's, its tool calls are
    /// sent as a sub-agent's; Windows paths under the recorded directory are the project's.
    #[test]
    fn injected_text_and_sub_agents_are_kept_apart() {
        let lines = [
            json!({"type": "session.start", "data": {"sessionId": "e07fc822-e277-4d5d-898a-1b91eedea7b6", "producer": "copilot-agent", "copilotVersion": "1.0.74", "context": {"cwd": "C:\\Users\\Chris\\git\\starcar"}}, "id": "e5c7", "timestamp": "2026-07-24T10:44:43.946Z", "parentId": null}),
            json!({"type": "user.message", "data": {"content": "<system_reminder>\nIMPORTANT: The tools listed below are deferred", "source": "system"}, "id": "a1", "timestamp": "2026-07-24T10:45:00.000Z"}),
            json!({"type": "user.message", "data": {"content": "good morning claude. Please pick up where we left off.", "transformedContent": "<current_datetime>…</current_datetime>\n\ngood morning claude."}, "id": "a2", "timestamp": "2026-07-24T10:45:25.236Z"}),
            json!({"type": "assistant.message", "data": {"content": "Good morning. Let me reconstruct where we left off.", "toolRequests": []}, "id": "a3"}),
            json!({"type": "tool.execution_start", "data": {"toolCallId": "t1", "toolName": "edit", "arguments": {"path": "C:\\Users\\Chris\\git\\starcar\\docs\\friction-log.md", "old_str": "a", "new_str": "b"}}, "id": "a4"}),
            json!({"type": "tool.execution_complete", "data": {"toolCallId": "t1", "success": true, "result": {"content": "File C:\\Users\\Chris\\git\\starcar\\docs\\friction-log.md updated with changes."}}, "id": "a5"}),
            json!({"type": "user.message", "agentId": "toolu_018vaxvGgpqve6HLK8W1RGyp", "data": {"content": "# Car 46 FIX CYCLE — address round-1 REJECT findings (issue #46)"}, "id": "s1"}),
            json!({"type": "tool.execution_start", "agentId": "toolu_018vaxvGgpqve6HLK8W1RGyp", "data": {"toolCallId": "t2", "toolName": "powershell", "arguments": {"command": "git status --porcelain"}}, "id": "s2"}),
            json!({"type": "tool.execution_complete", "agentId": "toolu_018vaxvGgpqve6HLK8W1RGyp", "data": {"toolCallId": "t2", "success": true, "result": {"content": "\n<shellId: 0 completed with exit code 0>"}}, "id": "s3"}),
            json!({"type": "assistant.message", "agentId": "toolu_018vaxvGgpqve6HLK8W1RGyp", "data": {"content": "Sub-agent: done."}, "id": "s4"}),
            json!({"type": "tool.execution_start", "data": {"toolCallId": "t3", "toolName": "task", "arguments": {}}, "id": "a6"}),
            json!({"type": "tool.execution_complete", "data": {"toolCallId": "t3", "success": false, "error": {"message": "Denied by preToolUse hook", "code": "denied"}}, "id": "a7"}),
        ];
        let out = replayed(Format::Copilot, "/t/events.jsonl", &lines);
        let events: Vec<&str> = out.iter().filter_map(|p| p["hook_event_name"].as_str()).collect();
        assert_eq!(
            events,
            ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUse", "PostToolUseFailure", "Stop"]
        );
        assert_eq!(out[1]["prompt"], "good morning claude. Please pick up where we left off.");
        assert_eq!(out[2]["tool_input"]["path"], "/w/app\\docs\\friction-log.md");
        assert!(out[2].get("parent_agent_id").is_none());
        assert_eq!(out[3]["parent_agent_id"], "toolu_018vaxvGgpqve6HLK8W1RGyp");
        assert_eq!(out[5]["last_assistant_message"], "Good morning. Let me reconstruct where we left off.");
        assert!(out.iter().all(|p| p["session_id"] == "e07fc822-e277-4d5d-898a-1b91eedea7b6"));
    }
}

/// A record of a tool's output of 80 MiB (over the line most held whole) is read with its
/// output cut to its start and its end, not skipped; the next line is whole.
#[test]
fn a_line_over_the_most_held_whole_is_read_with_its_long_strings_cut() {
    let output = format!("first line\n{}\nlast line", "x".repeat(80 << 20));
    let record = json!({"type": "user", "toolUseResult": {"stdout": output}});
    let mut file = serde_json::to_vec(&record).expect("json");
    file.extend_from_slice(b"\n{\"type\": \"next\"}\n");
    let mut r = std::io::BufReader::new(&file[..]);
    let mut buf = Vec::new();
    let (n, line) = next_line(&mut r, &mut buf).expect("read").expect("a line");
    assert_eq!(n, file.len() - "{\"type\": \"next\"}\n".len());
    let v: Value = serde_json::from_str(&line.expect("kept")).expect("still JSON");
    let out = v["toolUseResult"]["stdout"].as_str().expect("a string");
    assert!(out.starts_with("first line\n") && out.ends_with("\nlast line"), "{}", out.len());
    assert!(out.contains("bytes cut by ccmemctl"));
    assert!(out.len() < 9 << 20, "{}", out.len());
    let (_, next) = next_line(&mut r, &mut buf).expect("read").expect("a line");
    assert_eq!(next.as_deref(), Some("{\"type\": \"next\"}\n"));
}

/// Round three's tester: a transcript whose session id held a terminal's escapes (set the
/// title, write the clipboard, clear the screen) had them printed by `import`. Only an id
/// that is one is taken; else the file's name, when that is one.
#[test]
fn a_conversation_id_of_escapes_is_not_taken() {
    let mut e = Emit::new(Format::Claude, Path::new("/t/c1.jsonl"), Path::new("/w/app"));
    e.conversation(Some("abc\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{202e}"));
    assert_eq!(e.summary.conversation_id, "c1");
    e.conversation(Some("2d984148-cddb-4605-aac1-13e720fe613c"));
    assert_eq!(e.summary.conversation_id, "2d984148-cddb-4605-aac1-13e720fe613c");
    let e = Emit::new(Format::Claude, Path::new("/t/\u{1b}[2Jx.jsonl"), Path::new("/w/app"));
    assert_eq!(e.summary.conversation_id, "imported");
}
