//! Todo lists and task tools, as the real Claude Code CLI sends them: TodoWrite's whole list,
//! TaskCreate and TaskUpdate by id.

use super::*;

#[test]
fn real_payloads_of_the_task_tools_are_read_whole() {
    let (s, fx) = replay(include_str!("../../../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl"));
    // TaskCreate's ids come back in its response; TaskUpdate names only the id.
    let want = [
        (Some("1"), "Add the calculator module", TodoStatus::Completed, "Adding the calculator module"),
        (Some("2"), "Write tests for the calculator", TodoStatus::Completed, "Writing tests for the calculator"),
        (Some("3"), "Fix rounding in divide", TodoStatus::Pending, "Fixing rounding in divide"),
    ];
    assert_eq!(todos(&s.todos), want);
    let work = &s.conversations[0];
    assert_eq!(todos(&work.todos), want);
    // Write's create and Edit's patch.
    assert!(s.files_modified["calc.mjs"].created && s.files_modified["calc.test.mjs"].created);
    assert_eq!((s.agent_lines.added, s.agent_lines.deleted), (7 + 2 + 11, 1));
    // The failing run, by test name, from a PostToolUseFailure's `error`.
    assert_eq!(s.test_results.unit.status, SuiteStatus::Failed);
    assert_eq!((s.test_results.unit.passed, s.test_results.unit.failed), (1, 1));
    assert_eq!(s.test_results.unit.failures[0].test_name, "divide rounds to whole numbers");
    let commands: Vec<&str> = s.shell_commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, ["ls", "node --test calc.test.mjs"]);
    // A background agent's notice is not a prompt of the user's.
    assert!(s.commands_executed.iter().all(|c| !c.command.contains("task-notification")), "{:?}", s.commands_executed);
    assert_eq!(work.prompts, ["Add a calculator module with add and divide, with tests", "go on", "go on"]);
    // The last words (the Stop's own copy: the work conversation's last run, `--continue`,
    // said "Continued."), and the fact to keep, for the intent reader.
    assert_eq!(work.digest.last_words, "Continued.");
    assert!(fx
        .iter()
        .any(|f| f.intents_in.as_deref().is_some_and(|t| t.contains("[REMEMBER: the tests run with node --test]"))));
    // The manual compaction, and how each run ended.
    assert!(work.compacted);
    assert_eq!(work.compact_trigger, "manual");
    assert!(s.conversations.iter().all(|c| c.ended && c.end_reason == "other"), "{:?}", s.conversations);
    assert_eq!(s.conversations.len(), 2);
    assert_eq!(s.conversations[1].tool_calls, 0, "the new conversation only talked");
}

#[test]
fn real_payloads_of_todo_write_are_read_whole() {
    let (s, _) = replay(include_str!("../../../../../tests/fixtures/claude-code/2.1.330/todo-write.jsonl"));
    assert_eq!(
        todos(&s.todos),
        [
            (None, "Add the calculator module", TodoStatus::Completed, "Adding the calculator module"),
            (None, "Write tests for the calculator", TodoStatus::Completed, "Writing tests for the calculator"),
            (None, "Fix rounding in divide", TodoStatus::Pending, "Fixing rounding in divide"),
        ]
    );
    // Outside git the line counts are the agent's patches.
    assert_eq!((s.activity_summary.lines_added, s.activity_summary.lines_deleted), (20, 1));
    assert_eq!(s.files_modified.len(), 2);
    // No in-progress todo left: the active task is the latest prompt, not a done todo.
    assert_eq!(s.context_snapshot.active_task, "carry on");
}

#[test]
fn tasks_are_kept_by_id_whichever_source_speaks() {
    let mut s = session();
    let now = Utc::now();
    let tool = |name: &str, input: Value, response: Value| {
        hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": name,
            "tool_input": input, "tool_response": response, "tool_use_id": "toolu_1"}))
    };
    // As Claude Code 2.1 sends them: TaskCreate's id comes back in its response, and a
    // TaskUpdate names only the id.
    for (id, subject) in [("1", "Design the schema"), ("2", "Implement the API"), ("3", "Write tests")] {
        let input = json!({"subject": subject, "description": "d", "activeForm": format!("Doing {subject}")});
        apply(&mut s, &tool("TaskCreate", input, json!({"task": {"id": id, "subject": subject}})), now);
    }
    apply(&mut s, &tool("TaskUpdate", json!({"taskId": "1", "status": "completed"}), json!({"success": true})), now);
    apply(&mut s, &tool("TaskUpdate", json!({"taskId": "2", "status": "in_progress"}), json!({"success": true})), now);
    let st: Vec<(Option<&str>, TodoStatus)> = s.todos.iter().map(|t| (t.id.as_deref(), t.status)).collect();
    assert_eq!(
        st,
        [(Some("1"), TodoStatus::Completed), (Some("2"), TodoStatus::InProgress), (Some("3"), TodoStatus::Pending)]
    );
    {
        // A flood of tasks stops at the cap, in the session and in the conversation.
        let mut flood = session();
        for i in 0..session::caps::TODOS + 100 {
            let input = json!({"subject": format!("t{i}")});
            apply(&mut flood, &tool("TaskCreate", input, json!({"task": {"id": i.to_string()}})), now);
        }
        assert_eq!(flood.todos.len(), session::caps::TODOS);
        assert_eq!(flood.conversations[0].todos.len(), session::caps::TODOS);
    }
    assert_eq!(s.context_snapshot.active_task, "Implement the API");
    assert_eq!(s.todos[1].active_form, "Doing Implement the API");
    assert_eq!(s.conversations[0].todos, s.todos, "the conversation's list follows");
    // The TaskCompleted hook event (task_id, task_subject, task_description).
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "TaskCompleted", "session_id": "c1", "task_id": "2",
            "task_subject": "Implement the API", "task_description": "d"})),
        now,
    );
    assert_eq!(s.todos[1].status, TodoStatus::Completed);
    apply(&mut s, &tool("TaskUpdate", json!({"taskId": "3", "status": "deleted"}), json!({})), now);
    assert_eq!(s.todos.len(), 2, "a deleted task goes");
    apply(
        &mut s,
        &hook(json!({"hook_event_name": "TaskCreated", "session_id": "c1", "task_id": "4", "task_subject": "Ship it"})),
        now,
    );
    // An update for a task this session never saw created keeps its status.
    apply(&mut s, &tool("TaskUpdate", json!({"taskId": 9, "status": "in_progress"}), json!({})), now);
    let all: Vec<(&str, TodoStatus)> = s.todos.iter().map(|t| (t.content.as_str(), t.status)).collect();
    assert_eq!(
        all,
        [
            ("Design the schema", TodoStatus::Completed),
            ("Implement the API", TodoStatus::Completed),
            ("Ship it", TodoStatus::Pending),
            ("Task #9", TodoStatus::InProgress)
        ]
    );
    // TodoWrite (CLAUDE_CODE_ENABLE_TASKS=0) still replaces the list whole.
    let todos = json!({"todos": [{"content": "One", "status": "completed", "activeForm": "Oneing"}]});
    apply(&mut s, &tool("TodoWrite", todos, json!({})), now);
    assert_eq!(s.todos.len(), 1);
    // Write says when it made the file.
    let fx = apply(
        &mut s,
        &tool(
            "Write",
            json!({"file_path": "/w/app/new.rs", "content": "x"}),
            json!({"type": "create", "filePath": "/w/app/new.rs"}),
        ),
        now,
    );
    assert!(fx.agent_edits.iter().any(|e| e.created && e.rel == "new.rs"));
    assert_eq!(s.conversations[0].tool_calls, 9);
}

fn todos(t: &[Todo]) -> Vec<(Option<&str>, &str, TodoStatus, &str)> {
    t.iter().map(|t| (t.id.as_deref(), t.content.as_str(), t.status, t.active_form.as_str())).collect()
}
