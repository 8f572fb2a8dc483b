//! The agent's hook events: what each one means for the project's session.
//!
//! Payloads are read leniently: unknown events and fields are accepted, and a field of an
//! unexpected type is as good as absent. Text is redacted before it is kept
//! (`crate::text::clean`), and tool outputs are never kept whole.

use crate::{observe::testout, session::rules as session};
use ccmem_proto::env::{SuiteStatus, TestFailure, TestSuite};
use ccmem_proto::session::{
    CheckpointReason, CheckpointType, Conversation, Session, SessionEvent, ShellCommand, Todo, TodoStatus,
};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Conversations kept per session (the oldest ended ones go first).
const CONVERSATIONS: usize = 50;
/// Prompts kept per conversation (besides its first).
const PROMPTS: usize = 12;
/// Shell commands kept per session.
const SHELL_COMMANDS: usize = 50;
/// Characters of a prompt kept as a command.
const PROMPT_CHARS: usize = 500;
/// Longest conversation id taken (Claude Code's are 36-character UUIDs).
const MAX_ID_BYTES: usize = 256;

/// One hook event, read from the agent's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// The agent's conversation id.
    pub conversation: Option<String>,
    /// The conversation's transcript file.
    pub transcript: Option<String>,
    /// Where the agent works.
    pub cwd: Option<PathBuf>,
    /// Where the agent was started (`CLAUDE_PROJECT_DIR`, which `ccmemctl hook` adds): the
    /// project, even when a command has moved `cwd` out of it.
    pub project_dir: Option<PathBuf>,
    /// What identifies this delivery (the event and its `tool_use_id` or `prompt_id`): the
    /// same event delivered twice (the plugin and `hooks install` both in place) counts once.
    pub delivery: Option<String>,
    /// What happened.
    pub kind: Kind,
}

/// Hook events this daemon acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A conversation began (startup, resume, clear, compact, fork).
    SessionStart { source: String },
    /// The user sent a prompt.
    Prompt { text: String },
    /// A tool finished; `failed` when it reported an error (PostToolUseFailure: for Bash, a
    /// non-zero exit), whose text is then the response.
    ToolUse { tool: String, input: Value, response: Value, failed: bool },
    /// The agent (or a subagent, with its own transcript) stopped.
    Stop { last_message: Option<String>, subagent: bool, agent_transcript: Option<String> },
    /// The conversation is about to be compacted: `manual` (`/compact`) or `auto`, with the
    /// user's instructions for it.
    PreCompact { trigger: String, instructions: String },
    /// Claude Code told the user something (it needs a permission, it waits for input).
    Notification { message: String },
    /// The conversation ended, and why (clear, logout, prompt_input_exit, other).
    SessionEnd { reason: String },
    /// A task event (TaskCreated, TaskCompleted, …) with its payload.
    Task { event: String, payload: Value },
    /// Anything else: accepted, registers activity, nothing more.
    Other(String),
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Reads a payload; None when it is not a hook payload at all.
pub fn parse(v: &Value) -> Option<Hook> {
    let name = text(v, "hook_event_name")?;
    let kind = match name.as_str() {
        "SessionStart" => Kind::SessionStart { source: text(v, "source").unwrap_or_else(|| "startup".into()) },
        "UserPromptSubmit" => Kind::Prompt { text: text(v, "prompt").unwrap_or_default() },
        "PostToolUse" | "PostToolUseFailure" => Kind::ToolUse {
            tool: text(v, "tool_name").unwrap_or_default(),
            input: v.get("tool_input").cloned().unwrap_or(Value::Null),
            response: match name.as_str() {
                "PostToolUse" => v.get("tool_response").cloned().unwrap_or(Value::Null),
                _ => {
                    serde_json::json!({"error": text(v, "error").unwrap_or_default(), "interrupted": v.get("is_interrupt")})
                }
            },
            failed: name == "PostToolUseFailure",
        },
        "Stop" | "SubagentStop" => Kind::Stop {
            last_message: text(v, "last_assistant_message"),
            subagent: name == "SubagentStop",
            agent_transcript: text(v, "agent_transcript_path")
                .filter(|p| p.len() <= crate::text::MAX_PATH_BYTES)
                .map(|p| home(&p)),
        },
        "PreCompact" => Kind::PreCompact {
            trigger: word(v, "trigger"),
            instructions: text(v, "custom_instructions").unwrap_or_default(),
        },
        "Notification" => Kind::Notification { message: text(v, "message").unwrap_or_default() },
        "SessionEnd" => Kind::SessionEnd { reason: word(v, "reason") },
        n if n.starts_with("Task") => Kind::Task { event: name.clone(), payload: v.clone() },
        _ => Kind::Other(name.clone()),
    };
    // Identifiers and paths have real sizes; anything longer is junk that would only cost
    // memory (a conversation id is kept with every conversation).
    let path = |key: &str| text(v, key).filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(PathBuf::from);
    let delivery = match name.as_str() {
        "PostToolUse" | "PostToolUseFailure" => text(v, "tool_use_id"),
        // Not the prompt id alone: a background agent's `<task-notification>` comes with
        // the id of the prompt that started it.
        "UserPromptSubmit" => text(v, "prompt_id")
            .map(|id| format!("{id}:{:016x}", fnv(text(v, "prompt").unwrap_or_default().as_bytes()))),
        _ => None,
    }
    .filter(|id| is_id(id))
    .map(|id| format!("{name}:{id}"));
    Some(Hook {
        conversation: text(v, "session_id").filter(|s| is_id(s)),
        transcript: text(v, "transcript_path").filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(|p| home(&p)),
        cwd: path("cwd"),
        project_dir: path("project_dir").filter(|p| p.is_absolute()),
        delivery,
        kind,
    })
}

/// FNV-1a: a cheap fingerprint, to tell two texts apart.
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3))
}

/// A short keyword of the payload (a reason, a trigger), or "" when it is not one.
fn word(v: &Value, key: &str) -> String {
    text(v, key).filter(|w| w.len() <= 64 && is_id(w)).unwrap_or_default()
}

/// `~/x` is the user's `x`: Claude Code has sent transcript paths that way.
fn home(path: &str) -> String {
    match (path.strip_prefix("~/"), directories::BaseDirs::new()) {
        (Some(rest), Some(dirs)) => dirs.home_dir().join(rest).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A conversation id as agents make them (UUIDs, or words of letters, digits, `-`, `_`, `.`
/// and `:`, starting with a letter or digit): it is printed in the context, the report and
/// `claude --resume` commands, so an id with line breaks, backticks or shell characters
/// would be an injection, not an id.
fn is_id(s: &str) -> bool {
    // It starts with a letter or digit: `--dangerously-skip-permissions` is an option to
    // `claude --resume "$(ccmemctl resume-id)"`, not an id.
    s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.len() <= MAX_ID_BYTES
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// What the project task must do after a hook changed the session.
#[derive(Debug, Default, PartialEq)]
pub struct Effects {
    /// Write a checkpoint, for this reason.
    pub checkpoint: Option<(CheckpointReason, CheckpointType)>,
    /// Look for `[REMEMBER: …]` and the like in this text.
    pub intents_in: Option<String>,
    /// The assistant's last message was not given: read it from this transcript.
    pub read_transcript: Option<String>,
    /// A subagent stopped: read its own transcript for the intents in it.
    pub read_agent_transcript: Option<String>,
    /// A file the agent edited: for matching with the watcher's sighting.
    pub agent_edit: Option<AgentEdit>,
}

/// A file the agent says it edited.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEdit {
    /// Relative to the project root.
    pub rel: String,
    /// What changed, in a few words.
    pub summary: String,
    /// The tool that changed it.
    pub tool: String,
    /// The tool made the file.
    pub created: bool,
}

/// Applies a hook to the session.
pub fn apply(s: &mut Session, h: &Hook, now: DateTime<Utc>) -> Effects {
    let mut fx = Effects::default();
    let t = crate::clock::iso(now);
    let conv_id = h.conversation.clone().unwrap_or_default();
    if !conv_id.is_empty() {
        let c = conversation(s, &conv_id, &t);
        c.last_activity = t.clone();
        if let Some(p) = &h.transcript {
            c.transcript_path = Some(p.clone());
        }
    }
    match &h.kind {
        Kind::SessionStart { source } => {
            if let Some(c) = find(s, &conv_id) {
                c.source = source.clone();
                c.ended = false;
                if source == "compact" {
                    c.compacted = true;
                }
            }
        }
        Kind::Prompt { text } if ccmem_proto::transcript::is_not_a_prompt(text) => {}
        Kind::Prompt { text } => {
            let readable = ccmem_proto::transcript::readable_prompt(text);
            let prompt = crate::text::clean(&readable);
            if !prompt.is_empty() {
                let workflow = prompt
                    .strip_prefix('/')
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(|cmd| format!("/{cmd}"))
                    .unwrap_or_else(|| "prompt".into());
                let command = ccmem_proto::session::truncate_chars(&prompt, PROMPT_CHARS);
                let _ = session::apply_quietly(
                    s,
                    SessionEvent::Command {
                        command: command.clone(),
                        workflow: Some(workflow),
                        status: None,
                        duration_seconds: None,
                    },
                    now,
                );
                // Its first line names it (the filter makes the whole prompt one line).
                let first = readable.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                let subject = ccmem_proto::session::truncate_chars(&crate::text::clean(first), 120);
                if let Some(c) = find(s, &conv_id) {
                    c.message_count += 1;
                    if c.first_prompt.is_empty() {
                        c.first_prompt = command.clone();
                    }
                    c.prompts.push(command);
                    let excess = c.prompts.len().saturating_sub(PROMPTS);
                    c.prompts.drain(..excess);
                }
                // The in-progress todo names the task best; without one, the prompt does.
                if !s.todos.iter().any(|t| t.status == TodoStatus::InProgress) {
                    s.context_snapshot.active_task = subject;
                }
            }
        }
        Kind::ToolUse { tool, input, response, failed } => {
            if let Some(c) = find(s, &conv_id) {
                c.tool_calls += 1;
            }
            // A call that failed changed nothing (an Edit refused, a Write of an unread
            // file); only a shell command's failure is news.
            if !*failed || tool == "Bash" {
                tool_use(s, &conv_id, tool, input, response, now, &mut fx);
            }
            if tool == "Bash" {
                results(s, input, response, *failed, h.cwd.as_deref(), now);
            }
        }
        Kind::Stop { last_message, subagent, agent_transcript } => {
            if !subagent {
                close_last_command(s, now);
            }
            // The payload's own copy of the agent's last message: the transcript may not be
            // readable yet (or at all); its read later says the same or newer.
            if !*subagent {
                if let (Some(words), Some(c)) =
                    (last_message.as_deref().and_then(crate::agent::transcript::last_words), find(s, &conv_id))
                {
                    c.digest.last_words = words;
                    c.digest.last_words_at = crate::clock::iso(now);
                }
            }
            fx.intents_in = last_message.clone();
            if *subagent {
                fx.read_agent_transcript = agent_transcript.clone();
            } else {
                fx.read_transcript = h.transcript.clone();
            }
            fx.checkpoint = Some((CheckpointReason::StopHook, CheckpointType::EventDriven));
        }
        Kind::PreCompact { trigger, instructions } => {
            // Read what the conversation said before it is summarised; it is `compacted`
            // once the compaction happened (the SessionStart with source "compact").
            fx.read_transcript = h.transcript.clone();
            if let Some(c) = find(s, &conv_id) {
                c.compact_trigger = trigger.clone();
                c.compact_instructions = ccmem_proto::session::truncate_chars(&crate::text::clean(instructions), 500);
            }
            fx.checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        Kind::SessionEnd { reason } => {
            fx.read_transcript = h.transcript.clone();
            if let Some(c) = find(s, &conv_id) {
                c.ended = true;
                c.end_reason = reason.clone();
            }
            fx.checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        Kind::Notification { message } => {
            if let Some(c) = find(s, &conv_id) {
                c.notice = ccmem_proto::session::truncate_chars(&crate::text::clean(message), 200);
                c.notice_at = t.clone();
            }
        }
        Kind::Task { event, payload } => {
            // TaskCreated / TaskCompleted: `task_id`, `task_subject`, `task_description`
            // (older payloads nest a `task` object).
            let v = payload.get("task").filter(|t| t.is_object()).unwrap_or(payload);
            let id = id_of(v.get("task_id").or_else(|| v.get("id")).or_else(|| v.get("taskId")));
            let subject =
                v.get("task_subject").and_then(Value::as_str).map(crate::text::clean).or_else(|| task_subject(v));
            let status = if event.contains("Complet") { Some(TodoStatus::Completed) } else { None };
            change_task(s, &conv_id, TaskChange { id, subject, status, active_form: None, delete: false });
        }
        Kind::Other(_) => {}
    }
    session::touch(s, now);
    fx
}

fn tool_use(
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
                let command = ccmem_proto::session::truncate_chars(&crate::text::clean(&cmd), PROMPT_CHARS);
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
fn edit_lines(tool: &str, input: &Value, response: &Value) -> (u64, u64) {
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
fn changed_lines(old: &str, new: &str) -> (u64, u64) {
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let tail = o[head..].iter().rev().zip(n[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    ((n.len() - head - tail) as u64, (o.len() - head - tail) as u64)
}

/// Test and build results from a shell command's output, and what the command means for
/// the session's unresolved failures and finished work.
fn results(s: &mut Session, input: &Value, response: &Value, failed: bool, cwd: Option<&Path>, now: DateTime<Utc>) {
    let Some(cmd) = text(input, "command") else { return };
    // A command that works in another project (`cd ../other && npm test`) says nothing of
    // this one's tests or failures; one in a part of it is named with its place, relative to
    // the root (`cd packages/api && npm test`), the root itself needing none.
    let base = cwd.filter(|c| c.starts_with(&s.project_root)).unwrap_or(&s.project_root);
    let cmd = match crate::observe::cmdline::work_dir(&cmd, base) {
        Some(dir) => match dir.strip_prefix(&s.project_root) {
            Err(_) => return,
            Ok(rel) if rel.as_os_str().is_empty() => crate::observe::cmdline::without_cd(&cmd).to_string(),
            Ok(rel) => format!("cd {} && {}", rel.display(), crate::observe::cmdline::without_cd(&cmd)),
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
fn parsed_results(s: &mut Session, cmd: &str, output: &str, failed: bool, now: DateTime<Utc>) -> Option<String> {
    let kind = testout::command::classify(cmd);
    if kind.test.is_none() && !kind.build {
        return None;
    }
    let mut failure = None;
    let command = ccmem_proto::session::truncate_chars(cmd, PROMPT_CHARS);
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
        if failure.is_none() && b.status == ccmem_proto::env::BuildState::Failed {
            failure = b.errors.first().cloned().or_else(|| Some(String::new()));
        }
        let _ = session::apply_quietly(s, SessionEvent::Build(b), now);
    }
    // A failure whose parser found no words gets the output's key error line.
    failure.map(|f| if f.is_empty() { crate::session::shell::key_error(output).unwrap_or_default() } else { f })
}

/// `2 failed, 40 passed; parses_dates (src/a.rs:10): expected 3, got 4`.
fn suite_failure(suite: &TestSuite) -> String {
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

fn status_of(s: &str) -> Option<TodoStatus> {
    match s {
        "pending" => Some(TodoStatus::Pending),
        "in_progress" => Some(TodoStatus::InProgress),
        "completed" => Some(TodoStatus::Completed),
        _ => None,
    }
}

fn todo_of(v: &Value) -> Option<Todo> {
    let content = crate::text::clean(v.get("content").and_then(Value::as_str)?);
    if content.is_empty() {
        return None;
    }
    Some(Todo {
        id: None,
        status: v.get("status").and_then(Value::as_str).and_then(status_of).unwrap_or_default(),
        active_form: v
            .get("activeForm")
            .and_then(Value::as_str)
            .map(crate::text::clean)
            .unwrap_or_else(|| content.clone()),
        content,
    })
}

fn task_subject(v: &Value) -> Option<String> {
    ["subject", "title", "content", "description"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(crate::text::clean)
        .filter(|x| !x.is_empty())
}

/// One change to the agent's task list, from whichever source said it.
struct TaskChange {
    id: Option<String>,
    subject: Option<String>,
    status: Option<TodoStatus>,
    active_form: Option<String>,
    delete: bool,
}

/// Task ids arrive as strings (`"3"`) or numbers.
fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.trim().trim_start_matches('#').to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Applies a task change to the conversation's list (and the session's): by id when it has
/// one, else by subject. An update for an id never seen creates it, named by its subject or
/// its id, so that its status is not lost.
fn change_task(s: &mut Session, conv: &str, ch: TaskChange) {
    let mut todos = find(s, conv).map(|c| c.todos.clone()).unwrap_or_else(|| s.todos.clone());
    let pos = match (&ch.id, &ch.subject) {
        (Some(id), _) => todos.iter().position(|t| t.id.as_deref() == Some(id.as_str())),
        (None, Some(subject)) => todos.iter().position(|t| &t.content == subject),
        (None, None) => return,
    };
    match (pos, ch.delete) {
        (Some(i), true) => {
            todos.remove(i);
        }
        (None, true) => return,
        (Some(i), false) => {
            let t = &mut todos[i];
            if let Some(st) = ch.status {
                t.status = st;
            }
            if let Some(subject) = ch.subject.filter(|x| *x != t.content) {
                // Renamed: the old "…ing" form no longer fits, unless a new one came.
                t.active_form = subject.clone();
                t.content = subject;
            }
            if let Some(a) = ch.active_form.filter(|a| !a.is_empty()) {
                t.active_form = a;
            }
        }
        // A list this long is junk, not a plan: new tasks are not taken (each would cost a
        // copy of the whole list).
        (None, false) if todos.len() >= session::caps::TODOS => return,
        (None, false) => {
            let content = ch.subject.clone().unwrap_or_else(|| format!("Task #{}", ch.id.as_deref().unwrap_or("?")));
            todos.push(Todo {
                id: ch.id,
                active_form: ch.active_form.filter(|a| !a.is_empty()).unwrap_or_else(|| content.clone()),
                content,
                status: ch.status.unwrap_or_default(),
            });
        }
    }
    if let Some(c) = find(s, conv) {
        c.todos = todos.clone();
    }
    let _ = session::apply_quietly(s, SessionEvent::Todos { todos }, chrono::Utc::now());
}

/// The last prompt's entry gets its duration and status when the agent stops.
fn close_last_command(s: &mut Session, now: DateTime<Utc>) {
    if let Some(c) = s.commands_executed.last_mut().filter(|c| c.duration_seconds.is_none()) {
        if let Some(start) = crate::clock::parse_iso(&c.timestamp) {
            c.duration_seconds = Some((now - start).num_milliseconds().max(0) as f64 / 1000.0);
        }
        c.status = Some("completed".into());
    }
}

fn find<'a>(s: &'a mut Session, id: &str) -> Option<&'a mut Conversation> {
    if id.is_empty() {
        return None;
    }
    s.conversations.iter_mut().find(|c| c.id == id)
}

fn conversation<'a>(s: &'a mut Session, id: &str, now: &str) -> &'a mut Conversation {
    if let Some(i) = s.conversations.iter().position(|c| c.id == id) {
        return &mut s.conversations[i];
    }
    if s.conversations.len() >= CONVERSATIONS {
        let drop = s.conversations.iter().position(|c| c.ended).unwrap_or(0);
        s.conversations.remove(drop);
    }
    s.conversations.push(Conversation {
        id: id.to_string(),
        source: "startup".into(),
        started_at: now.to_string(),
        last_activity: now.to_string(),
        ..Default::default()
    });
    let last = s.conversations.len() - 1;
    &mut s.conversations[last]
}

/// The most recent conversation still within `ttl` (seed 002: an expired one counts as
/// none), other than `except` (the one asking).
pub fn resumable<'a>(
    s: &'a Session,
    ttl: std::time::Duration,
    now: DateTime<Utc>,
    except: Option<&str>,
) -> Option<&'a Conversation> {
    // The last conversation that did work: a `claude -p "continue"` that did nothing after
    // it is not what anyone wants to resume.
    s.conversations
        .iter()
        .filter(|c| Some(c.id.as_str()) != except)
        .filter(|c| {
            crate::clock::parse_iso(&c.last_activity)
                .is_some_and(|t| (now - t).to_std().map(|d| d < ttl).unwrap_or(true))
        })
        .max_by(|a, b| (a.did_work(), &a.last_activity).cmp(&(b.did_work(), &b.last_activity)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session() -> Session {
        let now = Utc::now();
        session::start(PathBuf::from("/w/app"), "app".into(), session::new_id(now, None), now, None)
    }

    fn hook(v: Value) -> Hook {
        parse(&v).expect("a hook payload")
    }

    /// Replays payloads the real CLI sent (tests/fixtures/claude-code) as the project task
    /// would: each applied in order, edits recorded, a delivery seen twice skipped.
    fn replay(jsonl: &str) -> (Session, Vec<Effects>) {
        let payloads: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
        let root = PathBuf::from(payloads[0]["cwd"].as_str().expect("cwd"));
        let now = Utc::now();
        let mut s = session::start(root, "calc".into(), session::new_id(now, None), now, None);
        let mut seen = std::collections::HashSet::new();
        let mut effects = Vec::new();
        for p in &payloads {
            let h = parse(p).unwrap_or_else(|| panic!("not read: {p}"));
            if h.delivery.as_ref().is_some_and(|d| !seen.insert(d.clone())) {
                continue;
            }
            let fx = apply(&mut s, &h, now);
            if let Some(e) = &fx.agent_edit {
                let edit = SessionEvent::FileEdited {
                    path: e.rel.clone(),
                    summary: Some(e.summary.clone()),
                    workflow: Some(e.tool.clone()),
                    created: e.created,
                };
                session::apply_quietly(&mut s, edit, now).expect("edit");
            }
            effects.push(fx);
        }
        (s, effects)
    }

    fn todos(t: &[Todo]) -> Vec<(Option<&str>, &str, TodoStatus, &str)> {
        t.iter().map(|t| (t.id.as_deref(), t.content.as_str(), t.status, t.active_form.as_str())).collect()
    }

    #[test]
    fn a_failed_edit_changed_nothing_and_a_long_prompt_is_named_by_its_first_line() {
        let mut s = session();
        let fx = apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app", "tool_name": "Edit",
                "tool_input": {"file_path": "/w/app/src/a.rs", "old_string": "x", "new_string": "y"},
                "error": "String to replace not found in file."}),
            ),
            Utc::now(),
        );
        assert_eq!(fx.agent_edit, None);
        assert_eq!(s.agent_lines, Default::default());
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "cwd": "/w/app",
                "prompt": "Fix the login redirect\n\nSteps:\n1. open /login\n2. it loops"})),
            Utc::now(),
        );
        assert_eq!(s.context_snapshot.active_task, "Fix the login redirect");
    }

    #[test]
    fn a_test_run_in_another_project_is_not_this_ones() {
        let mut s = session();
        let run = |s: &mut Session, cmd: &str| {
            let h = hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app",
                "tool_name": "Bash", "tool_input": {"command": cmd}, "error": "Exit code 1\n1 failing"}));
            apply(s, &h, Utc::now());
        };
        run(&mut s, "cd /w/other && npm test");
        run(&mut s, "cd ../other && cargo build");
        assert!(s.failures.is_empty() && s.test_results.unit.command.is_empty(), "{:?}", s.failures);
        run(&mut s, "cd packages/api && npm test");
        assert_eq!(s.failures.len(), 1);
        assert_eq!(s.failures[0].command, "cd packages/api && npm test");
        // From a subdirectory, or into the root: named from the root.
        let h = hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "cwd": "/w/app/packages",
            "tool_name": "Bash", "tool_input": {"command": "cd web && npm run build"}, "error": "Exit code 1"}));
        apply(&mut s, &h, Utc::now());
        assert!(s.failures.iter().any(|f| f.command == "cd packages/web && npm run build"), "{:?}", s.failures);
        run(&mut s, "cd /w/app && cargo build");
        assert!(s.failures.iter().any(|f| f.command == "cargo build"), "{:?}", s.failures);
    }

    #[test]
    fn notices_compactions_and_endings_are_recorded() {
        let mut s = session();
        let now = Utc::now();
        let ev = |name: &str, extra: Value| {
            let mut v = json!({"hook_event_name": name, "session_id": "c1", "cwd": "/w/app", "transcript_path": "~/.claude/projects/x/c1.jsonl"});
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            hook(v)
        };
        apply(&mut s, &ev("SessionStart", json!({"source": "startup"})), now);
        apply(
            &mut s,
            &ev(
                "Notification",
                json!({"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}),
            ),
            now,
        );
        let c = &s.conversations[0];
        assert_eq!((c.notice.as_str(), c.notice_at.is_empty()), ("Claude needs your permission to use Bash", false));
        assert!(!c.transcript_path.as_deref().unwrap_or("").starts_with('~'), "~/ is the user's home");
        let fx = apply(
            &mut s,
            &ev("PreCompact", json!({"trigger": "manual", "custom_instructions": "keep the API notes"})),
            now,
        );
        let c = &s.conversations[0];
        assert!(!c.compacted, "not compacted before it happens");
        assert_eq!((c.compact_trigger.as_str(), c.compact_instructions.as_str()), ("manual", "keep the API notes"));
        assert!(fx.checkpoint.is_some() && fx.read_transcript.is_some());
        apply(&mut s, &ev("SessionStart", json!({"source": "compact"})), now);
        assert!(s.conversations[0].compacted);
        apply(&mut s, &ev("SessionEnd", json!({"reason": "clear"})), now);
        assert_eq!((s.conversations[0].ended, s.conversations[0].end_reason.as_str()), (true, "clear"));
        // A subagent's stop reads its own transcript, not the conversation's.
        let fx = apply(
            &mut s,
            &ev("SubagentStop", json!({"agent_transcript_path": "/t/agent-1.jsonl", "last_assistant_message": "ok"})),
            now,
        );
        assert_eq!((fx.read_transcript, fx.read_agent_transcript.as_deref()), (None, Some("/t/agent-1.jsonl")));
    }

    #[test]
    fn tests_that_do_not_build_fail_even_when_a_pipe_hides_the_exit_status() {
        let fixture = |n: &str| crate::observe::testout::tests::fixture(n);
        let run = |cmd: &str, out: &str, failed: bool| {
            let mut s = session();
            let h = hook(json!({"hook_event_name": if failed { "PostToolUseFailure" } else { "PostToolUse" },
                "session_id": "c1", "cwd": "/w/app", "tool_name": "Bash", "tool_input": {"command": cmd},
                "tool_response": {"stdout": out, "stderr": "", "interrupted": false}, "error": out}));
            apply(&mut s, &h, Utc::now());
            s
        };
        // Real: `cargo test 2>&1 | tail -15` on a test that does not compile (exit 0).
        let s = run("cargo test 2>&1 | tail -15", &fixture("cargo-compile-error-tail.txt"), false);
        let unit = &s.test_results.unit;
        assert_eq!(unit.status, SuiteStatus::Failed, "{unit:?}");
        assert_eq!(unit.failures[0].test_name, "(build)");
        assert!(unit.failures[0].message.as_deref().is_some_and(|m| m.contains("error[E0308]: mismatched types")));
        assert!(s.failures.iter().any(|f| f.kind == "tests" && f.error.contains("did not build")), "{:?}", s.failures);
        // A run whose output names no runner and no error: not recognised, never a pass.
        let s = run("npm test 2>&1 | tail -3", "> calc@1.0.0 test\n> ./run-tests.sh\n\nall good\n", false);
        assert_eq!(s.test_results.unit.status, SuiteStatus::default(), "{:?}", s.test_results.unit);
        assert!(s.test_results.unit.command.is_empty());
    }

    #[test]
    fn real_payloads_of_the_task_tools_are_read_whole() {
        let (s, fx) = replay(include_str!("../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl"));
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
        assert!(
            s.commands_executed.iter().all(|c| !c.command.contains("task-notification")),
            "{:?}",
            s.commands_executed
        );
        assert_eq!(work.prompts, ["Add a calculator module with add and divide, with tests", "go on", "go on"]);
        // The last words (the Stop's own copy: the work conversation's last run, `--continue`,
        // said "Continued."), and the fact to keep, for the intent reader.
        assert_eq!(work.digest.last_words, "Continued.");
        assert!(fx.iter().any(|f| f
            .intents_in
            .as_deref()
            .is_some_and(|t| t.contains("[REMEMBER: the tests run with node --test]"))));
        // The manual compaction, and how each run ended.
        assert!(work.compacted);
        assert_eq!(work.compact_trigger, "manual");
        assert!(s.conversations.iter().all(|c| c.ended && c.end_reason == "other"), "{:?}", s.conversations);
        assert_eq!(s.conversations.len(), 2);
        assert_eq!(s.conversations[1].tool_calls, 0, "the new conversation only talked");
    }

    #[test]
    fn a_subagents_stop_does_not_replace_the_last_words() {
        let jsonl = include_str!("../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl");
        // The work run alone: up to its SessionEnd.
        let end = jsonl.lines().position(|l| l.contains("\"SessionEnd\"")).unwrap();
        let first: Vec<&str> = jsonl.lines().take(end + 1).collect();
        assert!(first.iter().any(|l| l.contains("\"SubagentStop\"")));
        let (s, _) = replay(&first.join("\n"));
        assert!(s.conversations[0].digest.last_words.contains("Next: make divide() round down"));
    }

    #[test]
    fn real_payloads_of_todo_write_are_read_whole() {
        let (s, _) = replay(include_str!("../../../tests/fixtures/claude-code/2.1.330/todo-write.jsonl"));
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
    fn every_real_payload_parses_and_each_tool_delivery_has_its_own_key() {
        for jsonl in [
            include_str!("../../../tests/fixtures/claude-code/2.1.330/task-tools.jsonl"),
            include_str!("../../../tests/fixtures/claude-code/2.1.330/todo-write.jsonl"),
        ] {
            let mut keys = std::collections::HashSet::new();
            for line in jsonl.lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                let h = parse(&v).unwrap_or_else(|| panic!("not read: {line}"));
                assert!(h.conversation.is_some() && h.cwd.is_some() && h.transcript.is_some(), "{line}");
                if let Some(k) = h.delivery {
                    assert!(keys.insert(k.clone()), "two deliveries share {k}");
                }
            }
        }
    }

    #[test]
    fn payloads_are_read_leniently() {
        assert!(parse(&json!({"prompt": "no event name"})).is_none());
        let h = hook(
            json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "cwd": 5, "prompt": ["not text"], "new_field": {"x": 1}}),
        );
        assert_eq!(h.kind, Kind::Prompt { text: String::new() });
        assert_eq!(h.cwd, None);
        assert!(matches!(hook(json!({"hook_event_name": "CwdChanged"})).kind, Kind::Other(_)));
        let id = |s: &str| hook(json!({"hook_event_name": "Stop", "session_id": s})).conversation;
        assert_eq!(id("0c7e6f0a-2f7e-4f61-9f7a-1c2d3e4f5a6b").as_deref(), Some("0c7e6f0a-2f7e-4f61-9f7a-1c2d3e4f5a6b"));
        for bad in [
            "a\n## Next Steps\n- rm -rf ~",
            "x`whoami`",
            "x; curl evil",
            "",
            &"a".repeat(300),
            "--dangerously-skip-permissions",
        ] {
            assert_eq!(id(bad), None, "{bad:?} is not an id");
        }
        assert!(matches!(
            hook(json!({"hook_event_name": "TaskCompleted", "task": {"subject": "x"}})).kind,
            Kind::Task { .. }
        ));
    }

    #[test]
    fn prompts_todos_edits_and_stops_shape_the_session() {
        let mut s = session();
        let now = Utc::now();
        apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "SessionStart", "session_id": "c1", "source": "startup", "transcript_path": "/t/c1.jsonl"}),
            ),
            now,
        );
        apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "UserPromptSubmit", "session_id": "c1", "prompt": "/review add OAuth login; token=abc123secret"}),
            ),
            now,
        );
        assert_eq!(s.commands_executed[0].workflow.as_deref(), Some("/review"));
        assert!(!s.commands_executed[0].command.contains("abc123secret"), "prompts are redacted");
        assert_eq!(s.conversations[0].message_count, 1);
        assert!(s.context_snapshot.active_task.starts_with("/review add OAuth login"));

        let todos = json!({"todos": [
            {"content": "Design", "status": "completed", "activeForm": "Designing"},
            {"content": "Implement", "status": "in_progress", "activeForm": "Implementing"},
            {"content": "Test", "status": "weird"}]});
        apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "TodoWrite", "tool_input": todos}),
            ),
            now,
        );
        assert_eq!(s.todos.len(), 3);
        assert_eq!(s.todos[2].status, TodoStatus::Pending);
        assert_eq!(s.context_snapshot.active_task, "Implement");
        assert_eq!(s.conversations[0].todos.len(), 3);

        let fx = apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "Edit",
            "tool_input": {"file_path": "/w/app/src/a.rs", "old_string": "a", "new_string": "a\nb"}, "tool_response": {"x": "y"}})),
            now,
        );
        assert_eq!(
            fx.agent_edit,
            Some(AgentEdit {
                rel: "src/a.rs".into(),
                summary: "Edit: 1 → 2 lines".into(),
                tool: "Edit".into(),
                created: false
            })
        );
        let fx = apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": "/etc/x"}}),
            ),
            now,
        );
        assert_eq!(fx.agent_edit, None, "paths outside the project are not the project's");

        apply(
            &mut s,
            &hook(
                json!({"hook_event_name": "PostToolUse", "session_id": "c1", "tool_name": "Bash", "tool_input": {"command": "PGPASSWORD=hunter2 psql"}}),
            ),
            now,
        );
        assert_eq!(s.shell_commands[0].command, "PGPASSWORD=[REDACTED:secret] psql");

        let fx = apply(
            &mut s,
            &hook(json!({"hook_event_name": "Stop", "session_id": "c1", "last_assistant_message": "[REMEMBER: x]"})),
            now,
        );
        assert_eq!(fx.checkpoint, Some((CheckpointReason::StopHook, CheckpointType::EventDriven)));
        assert_eq!(fx.intents_in.as_deref(), Some("[REMEMBER: x]"));
        assert_eq!(s.conversations[0].digest.last_words, "", "nothing but an intent: no last words");
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "Stop", "session_id": "c1",
                "last_assistant_message": "Fixed the callback. Next: run the e2e tests. [REMEMBER: y]"})),
            now,
        );
        assert_eq!(s.conversations[0].digest.last_words, "Fixed the callback. Next: run the e2e tests.");
        assert_eq!(s.commands_executed[0].status.as_deref(), Some("completed"));
        assert!(s.commands_executed[0].duration_seconds.is_some());
        let fx = apply(
            &mut s,
            &hook(json!({"hook_event_name": "Stop", "session_id": "c1", "transcript_path": "/t/c1.jsonl"})),
            now,
        );
        assert_eq!(fx.read_transcript.as_deref(), Some("/t/c1.jsonl"));

        apply(&mut s, &hook(json!({"hook_event_name": "SessionEnd", "session_id": "c1", "reason": "exit"})), now);
        assert!(s.conversations[0].ended);
    }

    #[test]
    fn test_runs_and_builds_in_bash_output_are_recorded() {
        let mut s = session();
        let now = Utc::now();
        let out = crate::observe::testout::tests::fixture("cargo-fail.txt");
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUseFailure", "session_id": "c1", "tool_name": "Bash",
                "tool_input": {"command": "cargo test 2>&1"}, "error": format!("Exit code 101\n{out}")})),
            now,
        );
        let u = &s.test_results.unit;
        assert_eq!((u.status, u.framework.as_str(), u.passed, u.failed), (SuiteStatus::Failed, "cargo", 3, 1));
        assert_eq!(u.command, "cargo test 2>&1");
        assert_eq!(u.failures[0].test_name, "tests::parses");

        let out = crate::observe::testout::tests::fixture("playwright-pass.txt");
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "npm run test:e2e"}, "tool_response": {"stdout": out, "stderr": "", "interrupted": false}})),
            now,
        );
        assert_eq!((s.test_results.e2e.status, s.test_results.e2e.passed), (SuiteStatus::Passed, 2));
        assert_eq!(s.test_results.unit.status, SuiteStatus::Failed, "the unit suite is left as it was");

        let out = crate::observe::testout::tests::fixture("cargo-build-fail.txt");
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                "tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{out}")})),
            now,
        );
        let u = &s.test_results.unit;
        assert_eq!(
            u.failures[0].message.as_deref(),
            Some("src/lib.rs:10:3: error: this file contains an unclosed delimiter")
        );
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                "tool_input": {"command": "cargo build"}, "error": format!("Exit code 101\n{out}")})),
            now,
        );
        assert_eq!(s.environment.build.status, ccmem_proto::env::BuildState::Failed);
        let before = s.test_results.clone();
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                "tool_input": {"command": "cargo test"}, "error": "interrupted", "is_interrupt": true})),
            now,
        );
        assert_eq!(s.test_results, before, "an interrupted run changes nothing");
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
        apply(
            &mut s,
            &tool("TaskUpdate", json!({"taskId": "1", "status": "completed"}), json!({"success": true})),
            now,
        );
        apply(
            &mut s,
            &tool("TaskUpdate", json!({"taskId": "2", "status": "in_progress"}), json!({"success": true})),
            now,
        );
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
            &hook(
                json!({"hook_event_name": "TaskCreated", "session_id": "c1", "task_id": "4", "task_subject": "Ship it"}),
            ),
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
        assert!(fx.agent_edit.is_some_and(|e| e.created && e.rel == "new.rs"));
        assert_eq!(s.conversations[0].tool_calls, 9);
    }

    #[test]
    fn conversations_stay_apart() {
        let mut s = session();
        let now = Utc::now();
        for (c, p) in [("a", "first in a"), ("b", "first in b"), ("a", "second in a")] {
            apply(&mut s, &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": c, "prompt": p})), now);
        }
        let a = s.conversations.iter().find(|c| c.id == "a").unwrap();
        let b = s.conversations.iter().find(|c| c.id == "b").unwrap();
        assert_eq!((a.message_count, b.message_count), (2, 1));
        assert_eq!(a.prompts, ["first in a", "second in a"]);
        assert_eq!(b.prompts, ["first in b"]);
        let later = now + chrono::Duration::seconds(5);
        apply(
            &mut s,
            &hook(json!({"hook_event_name": "UserPromptSubmit", "session_id": "b", "prompt": "again"})),
            later,
        );
        assert_eq!(resumable(&s, std::time::Duration::from_secs(3600), later, None).unwrap().id, "b");
        assert_eq!(resumable(&s, std::time::Duration::from_secs(3600), later, Some("b")).unwrap().id, "a");
        assert!(resumable(&s, std::time::Duration::from_secs(1), later + chrono::Duration::seconds(10), None).is_none());
    }
}
