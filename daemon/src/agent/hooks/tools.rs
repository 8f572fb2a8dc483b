//! A tool's use: its edit counted in lines, its shell command, and the test or build results
//! its output holds.

use super::payload::*;
use super::*;

pub(super) fn tool_use(
    s: &mut Session,
    conv: &str,
    tool: &str,
    input: &Value,
    response: &Value,
    now: DateTime<Utc>,
    fx: &mut Effects,
) {
    match tool {
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            let Some(path) =
                text(input, "file_path").or_else(|| text(input, "notebook_path")).or_else(|| text(input, "path"))
            else {
                return;
            };
            let Ok(rel) = crate::text::relative(&s.project_root, &path) else { return };
            let lines = |k: &str| input.get(k).and_then(Value::as_str).map(|x| x.lines().count()).unwrap_or(0);
            let summary = match tool {
                "Edit" => format!("Edit: {} → {} lines", lines("old_string"), lines("new_string")),
                "Write" => format!("Write: {} line{}", lines("content"), if lines("content") == 1 { "" } else { "s" }),
                "MultiEdit" => {
                    format!("MultiEdit: {} edits", input.get("edits").and_then(Value::as_array).map_or(0, Vec::len))
                }
                _ => format!("NotebookEdit: {}", text(input, "edit_mode").unwrap_or_else(|| "cell".into())),
            };
            // Write says whether it made the file (`"type": "create"`) or replaced it.
            let created = tool == "Write" && response.get("type").and_then(Value::as_str) == Some("create");
            let (added, deleted) = edit_lines(tool, input, response);
            s.agent_lines.added += added;
            s.agent_lines.deleted += deleted;
            if s.git_start.is_none() {
                // Outside git, the agent's own patches are all there is to count.
                s.activity_summary.lines_added = s.agent_lines.added;
                s.activity_summary.lines_deleted = s.agent_lines.deleted;
            }
            fx.agent_edit = Some(AgentEdit { rel, summary, tool: tool.to_string(), created });
        }
        "TodoWrite" => {
            let todos: Vec<Todo> = input
                .get("todos")
                .and_then(Value::as_array)
                .map(|items| items.iter().take(session::caps::TODOS).filter_map(todo_of).collect())
                .unwrap_or_default();
            if let Some(c) = find(s, conv) {
                c.todos = todos.clone();
            }
            let _ = session::apply_quietly(s, SessionEvent::Todos { todos }, now);
        }
        "TaskCreate" => {
            // The id comes back in the response (`{"task": {"id": "3", …}}`); updates name only it.
            let id = id_of(response.get("task").and_then(|t| t.get("id")));
            let status = input.get("status").and_then(Value::as_str).and_then(status_of);
            let active_form = input.get("activeForm").and_then(Value::as_str).map(crate::text::clean);
            change_task(s, conv, TaskChange { id, subject: task_subject(input), status, active_form, delete: false });
        }
        "TaskUpdate" => {
            let raw = input.get("status").and_then(Value::as_str);
            let change = TaskChange {
                id: id_of(input.get("taskId").or_else(|| input.get("task_id")).or_else(|| input.get("id"))),
                subject: task_subject(input),
                status: raw.and_then(status_of),
                active_form: input.get("activeForm").and_then(Value::as_str).map(crate::text::clean),
                delete: raw == Some("deleted"),
            };
            change_task(s, conv, change);
        }
        "Bash" => {
            if let Some(cmd) = text(input, "command") {
                let command = ccmem_proto::model::session::truncate_chars(&crate::text::clean(&cmd), PROMPT_CHARS);
                if !command.is_empty() {
                    s.shell_commands.push(ShellCommand {
                        timestamp: crate::clock::iso(now),
                        command,
                        conversation: conv.to_string(),
                    });
                    let excess = s.shell_commands.len().saturating_sub(SHELL_COMMANDS);
                    s.shell_commands.drain(..excess);
                }
            }
        }
        _ => {}
    }
}

/// Lines an edit added and deleted: from the patch Claude Code sends back
/// (`structuredPatch`), else from the edit's own strings (older versions, imports).
pub(super) fn edit_lines(tool: &str, input: &Value, response: &Value) -> (u64, u64) {
    if let Some(hunks) = response.get("structuredPatch").and_then(Value::as_array).filter(|h| !h.is_empty()) {
        let lines = hunks.iter().filter_map(|h| h.get("lines").and_then(Value::as_array)).flatten();
        return lines.filter_map(Value::as_str).fold((0, 0), |(a, d), l| match l.as_bytes().first() {
            Some(b'+') => (a + 1, d),
            Some(b'-') => (a, d + 1),
            _ => (a, d),
        });
    }
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match tool {
        // A new file is all added; a replaced one without a patch says nothing reliable.
        "Write" if response.get("type").and_then(Value::as_str) != Some("update") => {
            (crate::observe::git::line_count(str_of(input, "content").as_bytes()), 0)
        }
        "Edit" => changed_lines(&str_of(input, "old_string"), &str_of(input, "new_string")),
        "MultiEdit" => input.get("edits").and_then(Value::as_array).into_iter().flatten().fold((0, 0), |(a, d), e| {
            let (x, y) = changed_lines(&str_of(e, "old_string"), &str_of(e, "new_string"));
            (a + x, d + y)
        }),
        _ => (0, 0),
    }
}

/// Lines replaced between two texts, the lines they share at either end not counted.
pub(super) fn changed_lines(old: &str, new: &str) -> (u64, u64) {
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let tail = o[head..].iter().rev().zip(n[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    ((n.len() - head - tail) as u64, (o.len() - head - tail) as u64)
}

/// Test and build results from a shell command's output, and what the command means for
/// the session's unresolved failures and finished work.
pub(super) fn results(
    s: &mut Session,
    input: &Value,
    response: &Value,
    failed: bool,
    cwd: Option<&Path>,
    now: DateTime<Utc>,
) {
    let Some(cmd) = text(input, "command") else { return };
    // A command that works in another project (`cd ../other && npm test`) says nothing of
    // this one's tests or failures; one in a part of it is named with its place, relative to
    // the root (`cd packages/api && npm test`), the root itself needing none.
    let within = |p: &Path| ccmem_proto::files::within::strip_root(p, &s.project_root);
    let base = cwd.filter(|c| within(c).is_some()).unwrap_or(&s.project_root);
    let cmd = match crate::observe::cmdline::work_dir(&cmd, base) {
        Some(dir) => match within(&dir) {
            None => return,
            Some(rel) if rel.as_os_str().is_empty() => crate::observe::cmdline::without_cd(&cmd).to_string(),
            Some(rel) => format!("cd {} && {}", rel.display(), crate::observe::cmdline::without_cd(&cmd)),
        },
        None => cmd,
    };
    if response.get("interrupted").and_then(Value::as_bool) == Some(true) {
        return; // a run cut short says nothing about the code
    }
    let code = ["exit_code", "exitCode", "returncode"].iter().find_map(|k| response.get(*k).and_then(Value::as_i64));
    let failed = failed || code.is_some_and(|c| c != 0);
    let output = match response {
        Value::String(t) => t.clone(),
        r => ["stdout", "stderr", "error", "output"]
            .iter()
            .filter_map(|k| r.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let parsed_failure = parsed_results(s, &cmd, &output, failed, now);
    crate::session::shell::record(s, &cmd, &output, failed, parsed_failure, now);
}

/// Records the test runs and build a command's output shows; returns what failed in them
/// (a run piped into `tail` exits 0 whatever the tests did).
pub(super) fn parsed_results(
    s: &mut Session,
    cmd: &str,
    output: &str,
    failed: bool,
    now: DateTime<Utc>,
) -> Option<String> {
    let kind = testout::command::classify(cmd);
    if kind.test.is_none() && !kind.build {
        return None;
    }
    let mut failure = None;
    let command = ccmem_proto::model::session::truncate_chars(cmd, PROMPT_CHARS);
    if let Some(hint) = kind.test {
        let mut runs = testout::parse(output, hint);
        if runs.is_empty() {
            // Nothing a runner printed. A compiler's error means the tests did not build,
            // whatever the exit status (`cargo test 2>&1 | tail` exits 0); a failed command,
            // why it failed (a missing script) as its one failure. Anything else is not
            // recognised: no result, never a pass.
            let compile_error = testout::build::parse(output, false).errors.into_iter().next();
            let (name, why) = match compile_error {
                Some(e) => ("(build)", Some(e)),
                None if failed => ("(run)", testout::build::parse(output, true).errors.into_iter().next()),
                None => return None,
            };
            let mut suite = TestSuite {
                framework: hint.unwrap_or("unknown").into(),
                status: SuiteStatus::Failed,
                ..Default::default()
            };
            suite.failures.push(TestFailure { test_name: name.into(), message: why, ..Default::default() });
            runs.push(testout::Run { e2e: kind.e2e, suite });
        }
        for mut run in runs {
            run.suite.command = command.clone();
            if failure.is_none() && run.suite.status == SuiteStatus::Failed {
                failure = Some(suite_failure(&run.suite));
            }
            let e2e = run.e2e || kind.e2e;
            let _ = session::apply_quietly(s, SessionEvent::Tests { suite: run.suite, e2e }, now);
        }
    }
    if kind.build {
        let mut b = testout::build::parse(output, failed);
        b.command = command;
        if failure.is_none() && b.status == ccmem_proto::model::environment::BuildState::Failed {
            failure = b.errors.first().cloned().or_else(|| Some(String::new()));
        }
        let _ = session::apply_quietly(s, SessionEvent::Build(b), now);
    }
    // A failure whose parser found no words gets the output's key error line.
    failure.map(|f| if f.is_empty() { crate::session::shell::key_error(output).unwrap_or_default() } else { f })
}

/// `2 failed, 40 passed; parses_dates (src/a.rs:10): expected 3, got 4`.
pub(super) fn suite_failure(suite: &TestSuite) -> String {
    // A run that failed before any test (it did not build, the runner did not start): why.
    if let Some(f) = suite.failures.first().filter(|f| suite.passed + suite.failed == 0 && f.test_name.starts_with('('))
    {
        let why = f.message.clone().unwrap_or_default();
        return if f.test_name == "(build)" { format!("the tests did not build: {why}") } else { why };
    }
    let mut text = format!("{} failed, {} passed", suite.failed, suite.passed);
    if let Some(f) = suite.failures.first() {
        let at = if f.file.is_empty() {
            String::new()
        } else {
            format!(" ({}{})", f.file, f.line.map(|l| format!(":{l}")).unwrap_or_default())
        };
        let msg = f.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
        text.push_str(&format!("; {}{at}{msg}", f.test_name));
    }
    text
}
