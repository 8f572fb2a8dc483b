//! The agent's hook events: what each one means for the project's session.
//!
//! Payloads are read leniently: unknown events and fields are accepted, and a field of an
//! unexpected type is as good as absent. Text is redacted before it is kept
//! (`crate::text::clean`), and tool outputs are never kept whole.

use crate::{observe::testout, session::rules as session};
use ccmem_proto::model::environment::{SuiteStatus, TestFailure, TestSuite};
use ccmem_proto::model::session::{
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
        Kind::Prompt { text } if ccmem_proto::model::transcript::is_not_a_prompt(text) => {}
        Kind::Prompt { text } => {
            let readable = ccmem_proto::model::transcript::readable_prompt(text);
            let prompt = crate::text::clean(&readable);
            if !prompt.is_empty() {
                let workflow = prompt
                    .strip_prefix('/')
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(|cmd| format!("/{cmd}"))
                    .unwrap_or_else(|| "prompt".into());
                let command = ccmem_proto::model::session::truncate_chars(&prompt, PROMPT_CHARS);
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
                let subject = ccmem_proto::model::session::truncate_chars(&crate::text::clean(first), 120);
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
                c.compact_instructions =
                    ccmem_proto::model::session::truncate_chars(&crate::text::clean(instructions), 500);
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
                c.notice = ccmem_proto::model::session::truncate_chars(&crate::text::clean(message), 200);
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
mod tests;
