//! `ccmemctl import TRANSCRIPT.jsonl`: replays a Claude Code transcript into a project's
//! session as its hooks would have delivered it (SessionStart, UserPromptSubmit,
//! PostToolUse / PostToolUseFailure with the tool's input and structured result, PreCompact
//! and SessionStart `compact` at a compaction, Stop at the end of each turn), for people who
//! install ccmem mid-project and for measuring what the resume context carries.
//!
//! Paths under the transcript's working directory are rewritten to the project's, so that
//! the files it edited are the project's files. The daemon then reads the transcript itself
//! for the assistant's words, as it does for a live conversation.

use ccmem_proto::model::transcript::{self, Entry};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};

/// Lines looked at for a transcript record before the file is refused.
const SNIFF_LINES: usize = 50;

/// What an import sent.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Summary {
    /// The transcript read.
    pub transcript: PathBuf,
    /// The project it went into.
    pub project: PathBuf,
    /// Its conversation id.
    pub conversation_id: String,
    /// Hook events sent.
    pub events: u64,
    /// Prompts among them.
    pub prompts: u64,
    /// Tool calls among them.
    pub tool_calls: u64,
    /// Compactions among them.
    pub compactions: u64,
    /// Lines that were not JSON.
    pub bad_lines: u64,
}

/// Turns transcript records into hook payloads, in order.
pub struct Replay {
    transcript: String,
    project: String,
    conversation: String,
    /// The transcript's first working directory, rewritten to the project.
    origin: Option<String>,
    calls: HashMap<String, (String, Value)>,
    started: bool,
    in_turn: bool,
    /// Counts, for the summary.
    pub summary: Summary,
}

impl Replay {
    /// A replay of `transcript` into `project`.
    pub fn new(transcript: &Path, project: &Path) -> Self {
        let stem = transcript.file_name().and_then(|n| n.to_str()).unwrap_or("imported");
        let stem = stem.split('.').next().unwrap_or(stem).to_string();
        let conversation = stem.clone();
        Self {
            transcript: transcript.to_string_lossy().into_owned(),
            project: project.to_string_lossy().into_owned(),
            conversation,
            origin: None,
            calls: HashMap::new(),
            started: false,
            in_turn: false,
            summary: Summary {
                transcript: transcript.into(),
                project: project.into(),
                conversation_id: stem.clone(),
                ..Default::default()
            },
        }
    }

    fn payload(&self, event: &str, mut fields: Value) -> Value {
        if let Value::Object(m) = &mut fields {
            m.insert("hook_event_name".into(), json!(event));
            m.insert("session_id".into(), json!(self.conversation));
            m.insert("transcript_path".into(), json!(self.transcript));
            m.insert("cwd".into(), json!(self.project));
        }
        fields
    }

    fn start(&mut self, out: &mut Vec<Value>) {
        if !self.started {
            self.started = true;
            out.push(self.payload("SessionStart", json!({"source": "startup"})));
        }
    }

    fn stop(&mut self, out: &mut Vec<Value>) {
        if self.in_turn {
            self.in_turn = false;
            out.push(self.payload("Stop", json!({"stop_hook_active": false})));
        }
    }

    /// The payloads one record gives.
    pub fn record(&mut self, r: transcript::Record) -> Vec<Value> {
        let mut out = Vec::new();
        if r.sidechain {
            return out; // a subagent's work arrives as its Task tool's result
        }
        if !self.started {
            if let Some(id) = r.session_id.clone().filter(|s| !s.is_empty()) {
                self.conversation = id;
                self.summary.conversation_id = self.conversation.clone();
            }
        }
        if self.origin.is_none() {
            self.origin = r.cwd.clone().filter(|c| c.len() > 1);
        }
        for e in r.entries {
            match e {
                Entry::Prompt { text } => {
                    self.start(&mut out);
                    self.stop(&mut out);
                    self.in_turn = true;
                    self.summary.prompts += 1;
                    out.push(self.payload("UserPromptSubmit", json!({"prompt": text})));
                }
                Entry::ToolUse { id, name, input } => {
                    self.calls.insert(id, (name, input));
                }
                Entry::ToolResult { id, is_error, text, structured } => {
                    let Some((name, input)) = self.calls.remove(&id) else { continue };
                    self.start(&mut out);
                    self.summary.tool_calls += 1;
                    let input = self.rewrite(input);
                    let p = if is_error {
                        json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "error": text})
                    } else {
                        let response = match structured {
                            Value::Object(_) => self.rewrite(structured),
                            _ => json!({"stdout": text, "stderr": "", "interrupted": false}),
                        };
                        json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "tool_response": response})
                    };
                    let event = if is_error { "PostToolUseFailure" } else { "PostToolUse" };
                    out.push(self.payload(event, p));
                }
                Entry::CompactSummary { .. } => {
                    self.start(&mut out);
                    self.summary.compactions += 1;
                    out.push(self.payload("PreCompact", json!({"trigger": "auto", "custom_instructions": ""})));
                    out.push(self.payload("SessionStart", json!({"source": "compact"})));
                }
                Entry::AssistantText { .. } | Entry::CompactBoundary | Entry::Clear => {}
            }
        }
        self.summary.events += out.len() as u64;
        out
    }

    /// The payloads that close the replay: the last turn's Stop.
    pub fn finish(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        self.start(&mut out);
        self.in_turn = true;
        self.stop(&mut out);
        self.summary.events += out.len() as u64;
        out
    }

    /// Paths under the transcript's working directory, made the project's.
    fn rewrite(&self, v: Value) -> Value {
        let Some(origin) = self.origin.as_deref() else { return v };
        match v {
            Value::String(s) if s.contains(origin) => Value::String(s.replace(origin, &self.project)),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.rewrite(x)).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, x)| (k, self.rewrite(x))).collect()),
            other => other,
        }
    }
}

/// One line of the file as text: invalid UTF-8 replaced (one bad byte must not stop a
/// replay), a byte-order mark dropped.
fn next_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<(usize, String)>> {
    buf.clear();
    let n = r.read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(buf);
    Ok(Some((n, text.trim_start_matches('\u{feff}').to_string())))
}

/// Checks that `path` is a Claude Code transcript: a regular file whose first lines hold a
/// transcript record. Returns its conversation id when a record names it.
pub fn check(path: &Path) -> Result<Option<String>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = BufReader::new(f);
    let mut buf = Vec::new();
    let mut seen = 0;
    while let Ok(Some((_, line))) = next_line(&mut r, &mut buf) {
        if line.trim().is_empty() {
            continue;
        }
        seen += 1;
        if let Some(v) = serde_json::from_str::<Value>(&line).ok().filter(transcript::looks_like_record) {
            return Ok(v.get("sessionId").and_then(Value::as_str).map(str::to_string));
        }
        if seen >= SNIFF_LINES {
            break;
        }
    }
    Err(format!(
        "{} is not a Claude Code transcript: none of its first lines is a transcript record \
         (JSON with a \"type\" and a \"sessionId\" or \"message\"); transcripts live in ~/.claude/projects/<dir>/<id>.jsonl",
        path.display()
    ))
}

/// Reads the transcript line by line and hands each payload to `send`, printing progress on
/// stderr for big files.
pub fn replay(
    path: &Path,
    project: &Path,
    mut send: impl FnMut(&Value) -> Result<(), String>,
) -> Result<Summary, String> {
    check(path)?;
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let big = total > 4 << 20;
    let tty = std::io::stderr().is_terminal();
    let mut reader = BufReader::new(f);
    let mut r = Replay::new(path, project);
    let (mut read, mut shown) = (0u64, 0u64);
    let mut buf = Vec::new();
    while let Some((n, line)) = next_line(&mut reader, &mut buf).map_err(|e| format!("{}: {e}", path.display()))? {
        read += n as u64;
        if line.trim().is_empty() {
            continue;
        }
        match transcript::parse_line(&line) {
            Some(rec) => {
                for p in r.record(rec) {
                    send(&p)?;
                }
            }
            None => r.summary.bad_lines += 1,
        }
        if big && read * 10 / total.max(1) > shown {
            shown = read * 10 / total.max(1);
            let end = if tty { "\r" } else { "\n" };
            eprint!(
                "import: {}% ({:.1} of {:.1} MB, {} events){end}",
                shown * 10,
                mb(read),
                mb(total),
                r.summary.events
            );
        }
    }
    if big && tty {
        eprintln!();
    }
    for p in r.finish() {
        send(&p)?;
    }
    Ok(r.summary)
}

fn mb(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(lines: &[Value]) -> Vec<Value> {
        let mut r = Replay::new(Path::new("/t/c1.jsonl"), Path::new("/w/app"));
        let mut out = Vec::new();
        for l in lines {
            out.extend(r.record(transcript::parse_record(l)));
        }
        out.extend(r.finish());
        out
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
        assert!(e.contains("is not a Claude Code transcript"), "{e}");
        assert!(check(tmp.path()).unwrap_err().contains("not a regular file"));
        // A byte-order mark and a line of invalid UTF-8 do not stop it.
        let t = tmp.path().join("t.jsonl");
        let mut bytes = "\u{feff}".as_bytes().to_vec();
        bytes.extend_from_slice(br#"{"type": "user", "sessionId": "s1", "message": {"content": "hi"}}"#);
        bytes.extend_from_slice(b"\nbad \xff\xfe\n");
        bytes.extend_from_slice(br#"{"type": "user", "sessionId": "s1", "message": {"content": "again"}}"#);
        std::fs::write(&t, bytes).unwrap();
        assert_eq!(check(&t).unwrap().as_deref(), Some("s1"));
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
