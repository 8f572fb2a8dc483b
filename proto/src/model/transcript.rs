//! Claude Code's transcript (`~/.claude/projects/<dir>/<conversation>.jsonl`), one JSON
//! record a line, read into the few entries ccmem cares about.
//!
//! The format changes between Claude Code versions (`TodoWrite` became
//! `TaskCreate`/`TaskUpdate`; `compact_boundary` system lines, `progress` and
//! `queue-operation` lines appeared), so the reader is lenient: it takes what it knows
//! from each record and ignores the rest. Shared by the daemon (which reads a
//! conversation's transcript as it grows) and `ccmemctl import` (which replays one).

use serde_json::Value;

/// What one transcript record says, as far as ccmem is concerned. A record can hold
/// several (an assistant message with text and tool calls).
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A prompt the user typed (not a tool result, a meta line or a compaction summary).
    Prompt {
        /// The prompt as typed (slash commands keep their `<command-name>` markup).
        text: String,
    },
    /// Text the assistant wrote (its thinking is not included).
    AssistantText {
        /// The text blocks of one message, joined.
        text: String,
    },
    /// The assistant called a tool.
    ToolUse {
        /// The tool call's id, which its result names.
        id: String,
        /// Tool name (`Bash`, `Edit`, `TaskCreate`, …).
        name: String,
        /// Its input, as sent.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The tool call it answers.
        id: String,
        /// The tool reported an error (for Bash: a non-zero exit).
        is_error: bool,
        /// The result's text, as the model saw it.
        text: String,
        /// Claude Code's structured result (`toolUseResult`), when the record has one.
        structured: Value,
    },
    /// Claude Code's own summary of the conversation so far, written at a compaction.
    CompactSummary {
        /// The summary.
        text: String,
    },
    /// The conversation was compacted here.
    CompactBoundary,
    /// `/clear`: what came before is no longer in the agent's context.
    Clear,
    /// A pull request Claude Code linked to the conversation (its `pr-link` record, written
    /// when the session opened or found the branch's pull request).
    PullRequest {
        /// Its number.
        number: u64,
        /// Its repository, `owner/name`.
        repository: String,
        /// Its address.
        url: String,
    },
}

/// One record: its entries, and the fields every record carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// What it says.
    pub entries: Vec<Entry>,
    /// ISO 8601, when given.
    pub timestamp: Option<String>,
    /// The conversation id.
    pub session_id: Option<String>,
    /// Where the agent worked.
    pub cwd: Option<String>,
    /// A subagent's record (a sidechain), not the main conversation's.
    pub sidechain: bool,
}

/// Whether this looks like a transcript record at all (for a clear error on other files).
pub fn looks_like_record(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str).is_some()
        && (v.get("sessionId").is_some() || v.get("message").is_some() || v.get("uuid").is_some())
}

/// Reads one line; None when it is not JSON. Unknown record types give no entries.
pub fn parse_line(line: &str) -> Option<Record> {
    let v: Value = serde_json::from_str(line).ok()?;
    Some(parse_record(&v))
}

/// Reads one record.
pub fn parse_record(v: &Value) -> Record {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let mut r = Record {
        entries: Vec::new(),
        timestamp: s("timestamp"),
        session_id: s("sessionId"),
        cwd: s("cwd"),
        sidechain: v.get("isSidechain").and_then(Value::as_bool).unwrap_or(false),
    };
    let content = v.get("message").and_then(|m| m.get("content"));
    match v.get("type").and_then(Value::as_str) {
        Some("user") => {
            if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                if let Some(text) = content.map(joined_text).filter(|t| !t.trim().is_empty()) {
                    r.entries.push(Entry::CompactSummary { text });
                }
                return r;
            }
            // Text Claude Code adds as the user's (a skill's body, a caveat): `isMeta`, or the
            // tool call that brought it in (`sourceToolUseID`) when `isMeta` is missing.
            let meta = v.get("isMeta").and_then(Value::as_bool) == Some(true)
                || v.get("sourceToolUseID").and_then(Value::as_str).is_some_and(|s| !s.is_empty());
            match content {
                Some(Value::String(text)) if !meta => prompt(text, &mut r.entries),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("tool_result") => r.entries.push(Entry::ToolResult {
                                id: b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_string(),
                                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                                text: b.get("content").map(joined_text).unwrap_or_default(),
                                structured: v.get("toolUseResult").cloned().unwrap_or(Value::Null),
                            }),
                            Some("text") if !meta => {
                                if let Some(t) = b.get("text").and_then(Value::as_str) {
                                    prompt(t, &mut r.entries);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Some("assistant") => {
            let mut texts = Vec::new();
            if let Some(Value::Array(blocks)) = content {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                texts.push(t);
                            }
                        }
                        Some("tool_use") => r.entries.push(Entry::ToolUse {
                            id: b.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                            name: b.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                            input: b.get("input").cloned().unwrap_or(Value::Null),
                        }),
                        _ => {}
                    }
                }
            } else if let Some(Value::String(t)) = content {
                texts.push(t);
            }
            let text = texts.join("\n");
            // Claude Code writes this when the API failed; it is not the agent speaking.
            let synthetic = v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
            if !text.trim().is_empty() && !synthetic {
                r.entries.insert(0, Entry::AssistantText { text });
            }
        }
        Some("system") if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
            r.entries.push(Entry::CompactBoundary);
        }
        // As Claude Code 2.1 reads it back: a whole number and two strings, or nothing.
        Some("pr-link") => {
            let number = v.get("prNumber").and_then(Value::as_u64).filter(|n| *n > 0);
            let repository = s("prRepository").filter(|r| !r.trim().is_empty());
            if let (Some(number), Some(repository), Some(url)) = (number, repository, s("prUrl")) {
                r.entries.push(Entry::PullRequest { number, repository, url });
            }
        }
        _ => {}
    }
    r
}

/// A user's text: a prompt, `/clear`, or the output of a local command (not a prompt).
fn prompt(text: &str, out: &mut Vec<Entry>) {
    let t = text.trim();
    if command_name(t) == Some("/clear") {
        out.push(Entry::Clear);
        return;
    }
    // A command the user ran with `!` (Claude Code's bash mode), and then what it printed:
    // the user's shell work, read as a Bash call of its own (no hook sees it).
    if let Some(command) = between(t, "<bash-input>", "</bash-input>").filter(|_| t.starts_with("<bash-input>")) {
        out.push(Entry::ToolUse {
            id: USER_BASH.into(),
            name: "Bash".into(),
            input: serde_json::json!({ "command": command.trim() }),
        });
        return;
    }
    if t.starts_with("<bash-stdout>") || t.starts_with("<bash-stderr>") {
        let stdout = between(t, "<bash-stdout>", "</bash-stdout>").unwrap_or("");
        let stderr = between(t, "<bash-stderr>", "</bash-stderr>").unwrap_or("");
        let text = [stdout.trim_end(), stderr.trim_end()].into_iter().filter(|x| !x.is_empty()).collect::<Vec<_>>();
        out.push(Entry::ToolResult {
            id: USER_BASH.into(),
            is_error: says_it_failed(stderr),
            text: text.join("\n"),
            structured: Value::Null,
        });
        return;
    }
    if is_not_a_prompt(t) {
        return;
    }
    out.push(Entry::Prompt { text: text.to_string() });
}

/// The call id given to a command the user ran with `!`: its output, the next record, answers
/// the latest one.
pub const USER_BASH: &str = "user-bash";

/// Whether a tool call id is a command the user ran with `!` ([`USER_BASH`], numbered
/// `user-bash-N` when `ccmemctl import` replays them): the user's work, not the agent's
/// tool call, so not counted as one.
pub fn is_user_command(id: &str) -> bool {
    id.strip_prefix(USER_BASH)
        .is_some_and(|n| n.is_empty() || n.strip_prefix('-').is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
}

/// What stands between `open` and the next `close` in `text`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// Whether what a `!` command wrote to its standard error says it failed (the transcript
/// keeps no exit status, and `git push` reports success there too).
fn says_it_failed(stderr: &str) -> bool {
    let e = stderr.to_ascii_lowercase();
    ["error", "fatal", "not found", "denied", "rejected", "failed", "no such file", "cannot", "invalid"]
        .iter()
        .any(|w| e.contains(w))
}

/// Text that reaches the agent as the user's but that the user did not write: a local
/// command or its output, an interruption note, or Claude Code's own notice that a
/// background agent or command finished (`<task-notification>`, sent as a
/// UserPromptSubmit with the prompt id of the turn that started it).
pub fn is_not_a_prompt(text: &str) -> bool {
    let t = text.trim();
    t.is_empty()
        || [
            "<local-command-stdout>",
            "<local-command-stderr>",
            "<local-command-caveat>",
            "<task-notification>",
            "<bash-notification>",
            "<bash-input>",
            "<bash-stdout>",
            "<bash-stderr>",
            // Another conversation's words (a teammate in an agent team, a message sent
            // across sessions): not the user's request.
            "<teammate-message",
            "<cross-session-message",
            // What a hook printed at a prompt (a project's own settings choose the hook).
            "<user-prompt-submit-hook>",
            "[Request interrupted",
        ]
        .iter()
        .any(|tag| t.starts_with(tag))
        || is_local_command(t)
        // ccmem's own slash commands (the plugin's /ccmem:status, /ccmem:context) look things
        // up; they are not the work.
        || command_name(t).unwrap_or(t).trim_start_matches('/').starts_with("ccmem:")
}

/// Claude Code's built-in commands that run locally: typing one is not asking the agent
/// for anything (and fires no UserPromptSubmit).
pub const LOCAL_COMMANDS: &[&str] = &[
    "/add-dir",
    "/agents",
    "/bashes",
    "/clear",
    "/compact",
    "/config",
    "/context",
    "/cost",
    "/doctor",
    "/exit",
    "/export",
    "/help",
    "/hooks",
    "/ide",
    "/login",
    "/logout",
    "/mcp",
    "/memory",
    "/model",
    "/output-style",
    "/permissions",
    "/plugin",
    "/privacy-settings",
    "/release-notes",
    "/resume",
    "/rewind",
    "/sandbox",
    "/status",
    "/statusline",
    "/tasks",
    "/terminal-setup",
    "/todos",
    "/upgrade",
    "/usage",
    "/vim",
];

/// Whether a prompt is one of [`LOCAL_COMMANDS`].
pub fn is_local_command(text: &str) -> bool {
    let t = text.trim_start();
    let name = command_name(t)
        .map(str::to_string)
        .or_else(|| t.starts_with('/').then(|| t.split_whitespace().next().unwrap_or("").to_string()));
    name.is_some_and(|n| {
        let n = if n.starts_with('/') { n } else { format!("/{n}") };
        LOCAL_COMMANDS.contains(&n.as_str())
    })
}

/// The slash command of a `<command-name>/x</command-name>` prompt.
pub fn command_name(text: &str) -> Option<&str> {
    let start = text.find("<command-name>")? + "<command-name>".len();
    let end = text[start..].find("</command-name>")? + start;
    Some(text[start..end].trim())
}

/// A prompt as a person would read it: a slash command as `/name args`, and the
/// instructions a wrapper app puts around it (`<system_instruction>`, gone unless they are
/// all there is) and the reminders a tool adds (`<system-reminder>`, always gone).
pub fn readable_prompt(text: &str) -> String {
    // A reminder is the tool's or the repository's (a CLAUDE.md's contents), never the
    // prompt, even when it is all there is; a wrapper app's instruction block may be.
    let (rest, _) = without_wrappers(text, &["system-reminder", "user-prompt-submit-hook"]);
    let (rest, last_block) = without_wrappers(&rest, &["system_instruction"]);
    if rest.trim().is_empty() {
        if let Some(block) = last_block {
            return block;
        }
    }
    let text = rest.as_str();
    if let Some(name) = command_name(text) {
        let args = text
            .find("<command-args>")
            .map(|s| s + "<command-args>".len())
            .and_then(|s| text[s..].find("</command-args>").map(|e| text[s..s + e].trim()))
            .unwrap_or("");
        let name = if name.starts_with('/') { name.to_string() } else { format!("/{name}") };
        return if args.is_empty() { name } else { format!("{name} {args}") };
    }
    text.trim().to_string()
}

/// `text` without the blocks of the wrapper tags `names` (spelt in any case, with spaces
/// or attributes inside the brackets: `</ system-reminder >`), and the last such block's
/// text. One pass: a tag that is never closed is left as it is from there on.
fn without_wrappers(text: &str, names: &[&str]) -> (String, Option<String>) {
    let mut out = String::with_capacity(text.len());
    let mut last_block = None;
    let mut unclosed = vec![false; names.len()];
    let mut at = 0;
    while let Some(lt) = text[at..].find('<').map(|i| at + i) {
        let Some((closing, name, after)) = tag_at(text, lt) else {
            out.push_str(&text[at..=lt]);
            at = lt + 1;
            continue;
        };
        let known = names.iter().position(|n| n.eq_ignore_ascii_case(name));
        let Some(k) = known.filter(|&k| !closing && !unclosed[k]) else {
            out.push_str(&text[at..after]);
            at = after;
            continue;
        };
        // The matching close: the next close tag of the same name.
        let mut look = after;
        let close = loop {
            let Some(lt2) = text[look..].find('<').map(|i| look + i) else { break None };
            match tag_at(text, lt2) {
                Some((true, n, end)) if n.eq_ignore_ascii_case(names[k]) => break Some((lt2, end)),
                _ => look = lt2 + 1,
            }
        };
        match close {
            Some((inner_end, end)) => {
                out.push_str(&text[at..lt]);
                last_block = Some(text[after..inner_end].trim().to_string());
                at = end;
            }
            None => {
                unclosed[k] = true;
                out.push_str(&text[at..after]);
                at = after;
            }
        }
    }
    out.push_str(&text[at..]);
    (out, last_block)
}

/// The tag that starts at `lt` (a `<`): whether it closes, its name, and where it ends.
fn tag_at(text: &str, lt: usize) -> Option<(bool, &str, usize)> {
    let b = text.as_bytes();
    let mut i = lt + 1;
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    skip(&mut i);
    let closing = b.get(i) == Some(&b'/');
    if closing {
        i += 1;
        skip(&mut i);
    }
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b'_') && i - start < 64 {
        i += 1;
    }
    if i == start {
        return None;
    }
    let name = &text[start..i];
    // Spaces or attributes up to the `>`, within a short reach (no `<` on the way).
    let end = text[i..].bytes().take(256).position(|c| c == b'>' || c == b'<')?;
    (b[i + end] == b'>').then_some((closing, name, i + end + 1))
}

/// The text of a message's content: a string, or its text blocks joined.
fn joined_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                p if p.get("type").and_then(Value::as_str) == Some("text") => p.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The parts of a Claude Code compaction summary a fresh agent needs: its "Pending Tasks",
/// "Current Work" and "Optional Next Step" sections (numbered headings, as the summary
/// prompt asks for them), each as its own text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryParts {
    /// "Pending Tasks".
    pub pending: String,
    /// "Current Work".
    pub current: String,
    /// "Optional Next Step" (or "Next Step").
    pub next: String,
}

/// Cuts a compaction summary into its sections.
pub fn summary_parts(summary: &str) -> SummaryParts {
    let mut parts = SummaryParts::default();
    let mut current: Option<usize> = None;
    let mut buf: [Vec<&str>; 3] = Default::default();
    for line in summary.lines() {
        if let Some(title) = heading(line) {
            let t = title.to_ascii_lowercase();
            current = if t.starts_with("pending task") {
                Some(0)
            } else if t.starts_with("current work") {
                Some(1)
            } else if t.contains("next step") {
                Some(2)
            } else {
                None
            };
            continue;
        }
        // The closing boilerplate is not part of the last section.
        if line.starts_with("If you need specific details from before compaction")
            || line.starts_with("Please continue the conversation")
        {
            current = None;
        }
        if let Some(i) = current {
            buf[i].push(line);
        }
    }
    let text = |lines: &Vec<&str>| lines.join("\n").trim().to_string();
    parts.pending = text(&buf[0]);
    parts.current = text(&buf[1]);
    parts.next = text(&buf[2]);
    parts
}

/// `7. Pending Tasks:` / `## 7. Pending Tasks` / `**Pending Tasks**:` → "Pending Tasks".
fn heading(line: &str) -> Option<&str> {
    if line.starts_with(' ') || line.starts_with('\t') {
        return None; // nested lists inside a section are not section headings
    }
    let t = line.trim().trim_start_matches('#').trim();
    let t = t.trim_start_matches(|c: char| c.is_ascii_digit());
    let t = t.strip_prefix('.').unwrap_or(t).trim();
    let t = t.trim_matches('*').trim();
    let t = t.strip_suffix(':').unwrap_or(t).trim_matches('*').trim();
    let known = ["pending task", "current work", "optional next step", "next step"];
    let lower = t.to_ascii_lowercase();
    known.iter().any(|k| lower.starts_with(k) && lower.len() <= k.len() + 2).then_some(t).or_else(|| {
        // Any other numbered top-level heading ends the section before it.
        let numbered = line.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit())
            && line.contains(". ")
            && line.trim_end().ends_with(':');
        numbered.then_some(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_of_each_kind_are_read() {
        let r = parse_record(
            &json!({"type": "user", "sessionId": "c1", "cwd": "/w", "message": {"role": "user", "content": "fix the login"}}),
        );
        assert_eq!(r.entries, vec![Entry::Prompt { text: "fix the login".into() }]);
        assert_eq!((r.session_id.as_deref(), r.cwd.as_deref()), (Some("c1"), Some("/w")));
        let r = parse_record(&json!({"type": "assistant", "message": {"content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}]}}));
        assert_eq!(r.entries[0], Entry::AssistantText { text: "Running the tests.".into() });
        assert!(matches!(&r.entries[1], Entry::ToolUse { id, name, .. } if id == "t1" && name == "Bash"));
        let r = parse_record(&json!({"type": "user", "toolUseResult": {"task": {"id": "1"}}, "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": [{"type": "text", "text": "Exit code 1"}]}]}}));
        assert!(
            matches!(&r.entries[0], Entry::ToolResult { id, is_error: true, text, structured } if id == "t1" && text == "Exit code 1" && structured["task"]["id"] == "1")
        );
        let r = parse_record(
            &json!({"type": "user", "isCompactSummary": true, "message": {"content": "This session is being continued…"}}),
        );
        assert!(matches!(&r.entries[0], Entry::CompactSummary { .. }));
        let r = parse_record(&json!({"type": "system", "subtype": "compact_boundary"}));
        assert_eq!(r.entries, vec![Entry::CompactBoundary]);
        let r = parse_record(
            &json!({"type": "user", "message": {"content": "<command-name>/clear</command-name>\n<command-message>clear</command-message>"}}),
        );
        assert_eq!(r.entries, vec![Entry::Clear]);
        for skipped in [
            json!({"type": "user", "message": {"content": "<local-command-stdout>Bye!</local-command-stdout>"}}),
            json!({"type": "user", "isMeta": true, "message": {"content": "Caveat: …"}}),
            json!({"type": "user", "sourceToolUseID": "toolu_1", "message": {"content": [{"type": "text", "text": "Base directory for this skill: /x"}]}}),
            json!({"type": "progress", "data": {}}),
            json!({"type": "queue-operation", "operation": "dequeue"}),
            json!({"type": "assistant", "isApiErrorMessage": true, "message": {"content": [{"type": "text", "text": "API Error"}]}}),
        ] {
            assert!(parse_record(&skipped).entries.is_empty(), "{skipped}");
        }
        assert!(parse_line("{broken").is_none());
    }

    /// Shapes from Claude Code's transcripts (as public tools that read them list them): a
    /// `!` command and its output are the user's shell work, not prompts; a teammate's or
    /// another session's message is not the user's request.
    #[test]
    fn a_bang_command_is_a_shell_call_and_a_teammates_message_no_prompt() {
        let user = |t: &str| parse_record(&json!({"type": "user", "message": {"content": t}})).entries;
        assert_eq!(
            user("<bash-input>+git read-tree HEAD</bash-input>"),
            [Entry::ToolUse {
                id: USER_BASH.into(),
                name: "Bash".into(),
                input: json!({"command": "+git read-tree HEAD"})
            }]
        );
        assert_eq!(
            user("<bash-stdout></bash-stdout><bash-stderr>(eval):1: command not found: +git\n</bash-stderr>"),
            [Entry::ToolResult {
                id: USER_BASH.into(),
                is_error: true,
                text: "(eval):1: command not found: +git".into(),
                structured: Value::Null
            }]
        );
        let pushed = user(
            "<bash-stdout></bash-stdout><bash-stderr>To github.com:o/r.git\n   1a2b..3c4d  fix -> fix\n</bash-stderr>",
        );
        assert!(matches!(&pushed[..], [Entry::ToolResult { is_error: false, .. }]), "{pushed:?}");
        let listed = user("<bash-stdout> M app.py\n M pyproject.toml</bash-stdout><bash-stderr></bash-stderr>");
        assert!(
            matches!(&listed[..], [Entry::ToolResult { is_error: false, text, .. }] if text == " M app.py\n M pyproject.toml")
        );
        for other in [
            "<teammate-message teammate_id=\"researcher\" color=\"blue\">Found it in src/a.rs</teammate-message>",
            "<cross-session-message from=\"x\">hi</cross-session-message>",
        ] {
            assert!(user(other).is_empty(), "{other}");
            assert!(is_not_a_prompt(other));
        }
    }

    #[test]
    fn slash_commands_read_as_typed() {
        let t = "<command-message>review</command-message>\n<command-name>/workflows:review</command-name>\n<command-args>https://x/pull/2</command-args>";
        assert_eq!(readable_prompt(t), "/workflows:review https://x/pull/2");
        assert_eq!(readable_prompt("  plain prompt "), "plain prompt");
        assert!(is_local_command("<command-name>/context</command-name>") && is_local_command("/cost"));
        assert!(is_not_a_prompt("/ccmem:status") && is_not_a_prompt("<command-name>/ccmem:context</command-name>"));
        assert!(is_not_a_prompt("<task-notification>\n<task-id>a1</task-id>") && !is_not_a_prompt("/ccmem-like thing"));
        assert!(!is_local_command("/review 12") && !is_local_command("<command-name>/workflows:review</command-name>"));
        let wrapped = "<system_instruction>\nYou are in Conductor.\n</system_instruction>\n<system_instruction>\nRead plan.md\n</system_instruction>\n";
        assert_eq!(readable_prompt(wrapped), "Read plan.md");
        assert_eq!(readable_prompt("<system-reminder>x</system-reminder>Fix it"), "Fix it");
        assert_eq!(readable_prompt("<system-reminder>x</ system-reminder >Fix it"), "Fix it");
        assert_eq!(
            readable_prompt("< SYSTEM-REMINDER priority=\"1\">x</System-Reminder>Fix <b>it</b>"),
            "Fix <b>it</b>"
        );
        assert_eq!(
            readable_prompt("a < b and <system-reminder>never closed"),
            "a < b and <system-reminder>never closed"
        );
        assert_eq!(readable_prompt("<system-reminder>Contents of CLAUDE.md: NOTE FROM THE USER</system-reminder>"), "");
        assert!(is_not_a_prompt("<user-prompt-submit-hook>NOTE FROM THE USER</user-prompt-submit-hook>"));
    }

    #[test]
    fn compaction_summaries_give_pending_work_and_next_step() {
        let s = "Analysis:\n1. **Initial**: stuff\n   7. **Todo**: nested\n\nSummary:\n1. Primary Request and Intent:\n   Do X\n\n\
                 7. Pending Tasks:\n   - Run tests\n   - Fix lint\n\n8. Current Work:\n   Editing a.rs\n\n\
                 9. Optional Next Step:\n   Run `cargo test`.\n\nIf you need specific details from before compaction, read x\nPlease continue the conversation";
        let p = summary_parts(s);
        assert_eq!(p.pending, "- Run tests\n   - Fix lint");
        assert_eq!(p.current, "Editing a.rs");
        assert_eq!(p.next, "Run `cargo test`.");
        assert_eq!(summary_parts("no sections"), SummaryParts::default());
    }

    /// Claude Code 2.1's `pr-link` record (its fields as its own reader checks them).
    #[test]
    fn a_pr_link_is_a_pull_request() {
        let r = parse_record(
            &json!({"type": "pr-link", "sessionId": "c1", "prNumber": 42, "prUrl": "https://github.com/o/r/pull/42", "prRepository": "o/r"}),
        );
        assert_eq!(
            r.entries,
            vec![Entry::PullRequest {
                number: 42,
                repository: "o/r".into(),
                url: "https://github.com/o/r/pull/42".into()
            }]
        );
        for bad in [
            json!({"type": "pr-link", "prNumber": "42", "prUrl": "u", "prRepository": "o/r"}),
            json!({"type": "pr-link", "prNumber": 42.5, "prUrl": "u", "prRepository": "o/r"}),
            json!({"type": "pr-link", "prNumber": 42, "prRepository": "o/r"}),
        ] {
            assert!(parse_record(&bad).entries.is_empty(), "{bad}");
        }
    }
}
