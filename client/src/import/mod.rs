//! `ccmemctl import FILE`: replays a conversation an agent recorded into a project's
//! session as that agent's hooks would have delivered it, for people who install ccmem
//! mid-project and for measuring what the resume context carries.
//!
//! One module per agent reads its format and speaks its adapter's vocabulary (the daemon's
//! adapters then read the payloads as they read live ones):
//!
//! | agent | file |
//! |---|---|
//! | Claude Code | `~/.claude/projects/<dir>/<id>.jsonl` |
//! | Codex | `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` |
//! | Gemini CLI | `~/.gemini/tmp/<project>/chats/session-*.jsonl` (one JSON document in older versions) |
//! | Pi, Oh My Pi | `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl` |
//! | OpenCode | `opencode export <id> > session.json` (its conversations are in SQLite) |
//! | Copilot CLI | `~/.copilot/session-state/<id>/events.jsonl` |
//!
//! Paths under the recorded working directory are rewritten to the project's, so that the
//! files it edited are the project's files.

mod claude;
mod codex;
mod copilot;
pub mod discover;
mod gemini;
mod js;
mod opencode;
mod pi;

use crate::cut_json::{Scanner, STRING_HEAD, STRING_TAIL};
use ccmem_proto::model::agent::Agent;
use ccmem_proto::model::transcript;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};

/// Lines looked at for a record before the file is refused.
const SNIFF_LINES: usize = 50;
/// The largest file read as one JSON document (an OpenCode export, an older Gemini chat).
const MAX_DOCUMENT: u64 = 256 << 20;

/// What an import sent.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Summary {
    /// The file read.
    pub transcript: PathBuf,
    /// The project it went into.
    pub project: PathBuf,
    /// The agent that recorded it.
    pub agent: Agent,
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

/// The formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Claude Code's transcript (JSONL).
    Claude,
    /// Codex's rollout (JSONL).
    Codex,
    /// Gemini CLI's chat: JSONL, or one JSON document in older versions.
    Gemini { document: bool },
    /// Pi's (and Oh My Pi's) session (JSONL).
    Pi,
    /// OpenCode's export (one JSON document).
    Opencode,
    /// Copilot CLI's session events (JSONL).
    Copilot,
}

impl Format {
    /// The agent that writes it.
    pub fn agent(self) -> Agent {
        match self {
            Format::Claude => Agent::Claude,
            Format::Codex => Agent::Codex,
            Format::Gemini { .. } => Agent::Gemini,
            Format::Pi => Agent::Pi,
            Format::Opencode => Agent::Opencode,
            Format::Copilot => Agent::Copilot,
        }
    }

    fn is_document(self) -> bool {
        matches!(self, Format::Gemini { document: true } | Format::Opencode)
    }

    /// The format one JSON line of a file says, with the conversation id it names.
    fn of_line(v: &Value) -> Option<(Format, Option<String>)> {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => return Some((Format::Codex, v.get("payload").and_then(|p| s(p, "id")))),
            Some("session") if v.get("version").is_some() => return Some((Format::Pi, s(v, "id"))),
            Some("session.start")
                if v.pointer("/data/producer").is_some() || v.pointer("/data/copilotVersion").is_some() =>
            {
                return Some((Format::Copilot, v.get("data").and_then(|d| s(d, "sessionId"))))
            }
            _ => {}
        }
        if v.get("type").is_none() && v.get("sessionId").is_some() && v.get("projectHash").is_some() {
            return Some((Format::Gemini { document: false }, s(v, "sessionId")));
        }
        transcript::looks_like_record(v).then(|| (Format::Claude, s(v, "sessionId")))
    }

    /// The format of a whole JSON document.
    fn of_document(v: &Value) -> Option<(Format, Option<String>)> {
        let messages = v.get("messages").is_some_and(Value::is_array);
        let id = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        if messages && v.pointer("/info/id").is_some() {
            return Some((Format::Opencode, id(v.pointer("/info/id"))));
        }
        if messages && v.get("sessionId").is_some() {
            return Some((Format::Gemini { document: true }, id(v.get("sessionId"))));
        }
        None
    }
}

/// What an agent's reader hands its payloads to: each becomes a hook payload of the
/// conversation, in the project, for that agent's adapter, counted.
pub(crate) struct Emit {
    agent: Agent,
    transcript: String,
    project: String,
    /// The recorded working directory, rewritten to the project.
    origin: Option<String>,
    /// When the record being read happened (RFC 3339): its events keep that time.
    pub(crate) time: Option<String>,
    out: Vec<Value>,
    /// Counts, for the summary.
    pub summary: Summary,
}

/// The id a conversation takes from its file's name, when its records name none: the name
/// up to its first dot, if that is an id ("imported" else).
pub(crate) fn id_from_name(transcript: &Path) -> String {
    let name = transcript.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name.split('.').next().filter(|s| ccmem_proto::model::agent::is_conversation_id(s));
    stem.unwrap_or("imported").to_string()
}

impl Emit {
    fn new(format: Format, transcript: &Path, project: &Path) -> Self {
        let stem = id_from_name(transcript);
        Self {
            agent: format.agent(),
            transcript: transcript.to_string_lossy().into_owned(),
            project: project.to_string_lossy().into_owned(),
            origin: None,
            time: None,
            out: Vec::new(),
            summary: Summary {
                transcript: transcript.into(),
                project: project.into(),
                agent: format.agent(),
                conversation_id: stem,
                ..Default::default()
            },
        }
    }

    /// The conversation's id, as the file names it: taken before the first payload only, and
    /// only when it is an id (a transcript's text is printed on the user's terminal: an
    /// "id" of escapes would set its title, its clipboard, or clear it).
    pub(crate) fn conversation(&mut self, id: Option<&str>) {
        let id = id.filter(|i| ccmem_proto::model::agent::is_conversation_id(i));
        if let Some(id) = id.filter(|_| self.summary.events == 0 && self.out.is_empty()) {
            self.summary.conversation_id = id.to_string();
        }
    }

    /// The recorded working directory (the first one named).
    pub(crate) fn origin(&mut self, cwd: Option<&str>) {
        if self.origin.is_none() {
            self.origin = cwd.filter(|c| c.len() > 1).map(|c| c.trim_end_matches(['/', '\\']).to_string());
        }
    }

    /// The time of a record (or message) read: its `timestamp` (RFC 3339, or milliseconds),
    /// or OpenCode's `time.created`. A record without one keeps the time of the one before.
    pub(crate) fn at(&mut self, v: &Value) {
        if let Some(t) = time_of(v) {
            self.time = Some(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        }
    }

    /// One payload: `event` with `fields`, its paths the project's, at the time of the
    /// record being read.
    pub(crate) fn push(&mut self, event: &str, fields: Value) {
        let time = self.time.clone();
        self.push_at(event, fields, time);
    }

    /// [`Emit::push`], at `time`.
    fn push_at(&mut self, event: &str, fields: Value, time: Option<String>) {
        let mut p = self.rewrite(fields);
        if let Value::Object(m) = &mut p {
            if let Some(t) = time {
                m.insert(ccmem_proto::wire::api::EVENT_TIME.into(), json!(t));
            }
            m.insert("hook_event_name".into(), json!(event));
            m.insert("session_id".into(), json!(self.summary.conversation_id));
            m.insert("transcript_path".into(), json!(self.transcript));
            m.insert("cwd".into(), json!(self.project));
            if !self.agent.is_default() {
                m.insert(ccmem_proto::wire::api::AGENT_KEY.into(), json!(self.agent.name()));
            }
        }
        self.summary.events += 1;
        self.out.push(p);
    }

    /// Paths under the recorded working directory, made the project's.
    fn rewrite(&self, v: Value) -> Value {
        let Some(origin) = self.origin.as_deref() else { return v };
        // An origin on Windows (`C:\\Users\\me\\proj`) is also written with `/` in records.
        let slashed = origin.contains('\\').then(|| origin.replace('\\', "/"));
        let origins: Vec<&str> = std::iter::once(origin).chain(slashed.as_deref()).collect();
        self.rewrite_with(v, &origins)
    }

    fn rewrite_with(&self, v: Value, origins: &[&str]) -> Value {
        match v {
            Value::String(s) => match origins.iter().find(|o| s.contains(**o)) {
                Some(o) => Value::String(s.replace(o, &self.project)),
                None => Value::String(s),
            },
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.rewrite_with(x, origins)).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, x)| (k, self.rewrite_with(x, origins))).collect()),
            other => other,
        }
    }

    fn take(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.out)
    }
}

/// The time a record (or message) names: its `timestamp` (RFC 3339, or milliseconds), or
/// OpenCode's `time.created`.
fn time_of(v: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    let found = ["/timestamp", "/time/created", "/info/time/created"].iter().find_map(|k| v.pointer(k));
    match found {
        Some(Value::String(t)) => chrono::DateTime::parse_from_rfc3339(t).ok().map(|t| t.to_utc()),
        Some(Value::Number(n)) => n.as_i64().and_then(chrono::DateTime::from_timestamp_millis),
        _ => None,
    }
}

/// Bytes of a file's end read for its last record's time.
const TAIL: u64 = 1 << 20;

/// When the conversation in `path` last happened (milliseconds), as the last of its records
/// that names a time says, read from the file's end; None when none there does (a document,
/// a last record longer than [`TAIL`]): the file's own time stands for it then. A file's
/// time is not the conversation's: a copy made without `-p` is new.
pub fn last_time(path: &Path) -> Option<i64> {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut buf = Vec::new();
    f.take(TAIL).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find_map(|v| time_of(&v))
        .map(|t| t.timestamp_millis())
}

/// One agent's reader: its records in, its hook payloads out.
pub(crate) trait Reader {
    /// The payloads one record (a line, or the whole document) gives.
    fn record(&mut self, v: &Value, e: &mut Emit);
    /// The payloads that close the replay (the last turn's end).
    fn finish(&mut self, e: &mut Emit);
}

fn reader_for(format: Format, transcript: &Path) -> Box<dyn Reader> {
    match format {
        Format::Claude => Box::new(claude::Claude::default()),
        Format::Codex => Box::new(codex::Codex::default()),
        Format::Gemini { .. } => Box::new(gemini::Gemini::new(transcript)),
        Format::Pi => Box::new(pi::Pi::default()),
        Format::Opencode => Box::new(opencode::Opencode),
        Format::Copilot => Box::new(copilot::Copilot::default()),
    }
}

/// The longest line read whole: past this, a record's strings are cut to their start and
/// their end as the bytes come ([`Scanner`]), so that no more than this is held of it.
const MAX_LINE: u64 = 64 << 20;

/// One line of the file as text: invalid UTF-8 replaced (one bad byte must not stop a
/// replay), a byte-order mark dropped. A line over [`MAX_LINE`] is read on with its long
/// strings cut (a tool's output of hundreds of megabytes); `None` when it is still over that
/// once they are, read past.
fn next_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<(usize, Option<String>)>> {
    buf.clear();
    let mut n = r.by_ref().take(MAX_LINE + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() as u64 > MAX_LINE && buf.last() != Some(&b'\n') {
        let mut scanner = Scanner::new(STRING_HEAD, STRING_TAIL);
        let mut kept = Vec::new();
        scanner.feed(buf, &mut kept);
        loop {
            let chunk = r.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            let (used, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if kept.len() as u64 <= MAX_LINE {
                scanner.feed(&chunk[..used], &mut kept);
            }
            r.consume(used);
            n += used;
            if done {
                break;
            }
        }
        if kept.len() as u64 > MAX_LINE {
            return Ok(Some((n, None)));
        }
        *buf = kept;
    }
    let text = String::from_utf8_lossy(buf);
    Ok(Some((n, Some(text.trim_start_matches('\u{feff}').to_string()))))
}

/// The whole file as one JSON document (at most [`MAX_DOCUMENT`]).
fn document(path: &Path) -> Result<Value, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    f.take(MAX_DOCUMENT + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_DOCUMENT {
        return Err(format!("{} is larger than {} MiB", path.display(), MAX_DOCUMENT >> 20));
    }
    let text = String::from_utf8_lossy(&bytes);
    serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| format!("{}: {e}", path.display()))
}

/// Which agent's conversation `path` holds: a regular file whose first lines hold a record
/// of a format ccmem reads (or that is one JSON document of such a format). Returns the
/// format, and the conversation id when the file names it.
pub fn check(path: &Path) -> Result<(Format, Option<String>), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = BufReader::new(f);
    let mut buf = Vec::new();
    let mut seen = 0;
    let mut json_lines = 0;
    while let Ok(Some((_, line))) = next_line(&mut r, &mut buf) {
        let line = line.unwrap_or_default();
        if line.trim().is_empty() {
            continue;
        }
        seen += 1;
        if let Ok(v) = crate::cut_json::parse(line.as_bytes()) {
            json_lines += 1;
            if let Some(found) = Format::of_line(&v) {
                return Ok(found);
            }
        }
        if seen >= SNIFF_LINES {
            break;
        }
    }
    // A document spread over lines (`opencode export` prints it indented).
    if json_lines < seen.min(2) || seen == 1 {
        if let Some(found) = document(path).ok().as_ref().and_then(Format::of_document) {
            return Ok(found);
        }
    }
    Err(format!(
        "{} is not a conversation ccmem can import: none of its first lines is a record of Claude Code \
         (~/.claude/projects/<dir>/<id>.jsonl), Codex (~/.codex/sessions/…/rollout-*.jsonl), Gemini CLI \
         (~/.gemini/tmp/<project>/chats/session-*.jsonl), Pi (~/.pi/agent/sessions/…/*.jsonl) or Copilot CLI \
         (~/.copilot/session-state/<id>/events.jsonl), nor is it an OpenCode export (`opencode export <id> > session.json`)",
        path.display()
    ))
}

/// The working directory the conversation in `path` (of `format`, as [`check`] found it) was
/// recorded in, as its records name it: read up to the first record that does (the first,
/// for most agents), or to the end.
pub fn origin_of(path: &Path, format: Format) -> Result<Option<String>, String> {
    let mut emit = Emit::new(format, path, Path::new(""));
    let mut reader = reader_for(format, path);
    if format.is_document() {
        reader.record(&document(path)?, &mut emit);
    } else {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut lines = BufReader::new(f);
        let mut buf = Vec::new();
        while let Some((_, line)) = next_line(&mut lines, &mut buf).map_err(|e| format!("{}: {e}", path.display()))? {
            if let Some(v) = line.and_then(|l| crate::cut_json::parse(l.as_bytes()).ok()) {
                emit.at(&v);
                reader.record(&v, &mut emit);
            }
            emit.out.clear();
            if emit.origin.is_some() {
                return Ok(emit.origin);
            }
        }
    }
    reader.finish(&mut emit);
    Ok(emit.origin)
}

/// Whether [`replay`] prints its progress through a big file (`import --all` shows its own).
static PROGRESS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Turns [`replay`]'s own progress lines off (or on again).
pub fn show_progress(on: bool) {
    PROGRESS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Reads the file and hands each payload to `send`, printing progress on stderr for big
/// files.
pub fn replay(
    path: &Path,
    project: &Path,
    mut send: impl FnMut(&Value) -> Result<(), String>,
) -> Result<Summary, String> {
    let (format, _) = check(path)?;
    let mut emit = Emit::new(format, path, project);
    let mut reader = reader_for(format, path);
    if format.is_document() {
        reader.record(&document(path)?, &mut emit);
        for p in emit.take() {
            send(&p)?;
        }
    } else {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let total = f.metadata().map(|m| m.len()).unwrap_or(0);
        let big = total > 4 << 20 && PROGRESS.load(std::sync::atomic::Ordering::Relaxed);
        let tty = std::io::stderr().is_terminal();
        let mut lines = BufReader::new(f);
        let (mut read, mut shown) = (0u64, 0u64);
        let mut buf = Vec::new();
        while let Some((n, line)) = next_line(&mut lines, &mut buf).map_err(|e| format!("{}: {e}", path.display()))? {
            read += n as u64;
            let Some(line) = line else {
                emit.summary.bad_lines += 1;
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            match crate::cut_json::parse(line.as_bytes()) {
                Ok(v) => {
                    emit.at(&v);
                    reader.record(&v, &mut emit)
                }
                Err(_) => emit.summary.bad_lines += 1,
            }
            for p in emit.take() {
                send(&p)?;
            }
            if big && read * 10 / total.max(1) > shown {
                shown = read * 10 / total.max(1);
                let end = if tty { "\r" } else { "\n" };
                eprint!(
                    "import: {}% ({:.1} of {:.1} MB, {} events){end}",
                    shown * 10,
                    mb(read),
                    mb(total),
                    emit.summary.events
                );
            }
        }
        if big && tty {
            eprintln!();
        }
    }
    reader.finish(&mut emit);
    for p in emit.take() {
        send(&p)?;
    }
    Ok(emit.summary)
}

fn mb(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

/// The text of a message's content: a string, or the `text` of its blocks.
pub(crate) fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.as_str().or_else(|| b.get("text").and_then(Value::as_str)))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The turns being replayed, in one agent's event names: the conversation started once, a
/// turn opened by each prompt and ended (by the agent's stop event, with the last text it
/// wrote) before the next prompt and at the end.
pub(crate) struct Turns {
    /// The agent's start event (its payload says `source: startup`).
    start: &'static str,
    /// Its prompt event, and the key of the prompt's text.
    prompt: (&'static str, &'static str),
    /// Its stop event, and the key of the last words.
    stop: (&'static str, &'static str),
    started: bool,
    open: bool,
    /// The agent's latest text in the open turn.
    pub last_words: Option<String>,
    /// When the open turn's last event happened: its end's time.
    last_at: Option<String>,
}

impl Turns {
    pub(crate) fn new(
        start: &'static str,
        prompt: (&'static str, &'static str),
        stop: (&'static str, &'static str),
    ) -> Self {
        Self { start, prompt, stop, started: false, open: false, last_words: None, last_at: None }
    }

    /// The conversation's start (once).
    pub(crate) fn start(&mut self, e: &mut Emit) {
        if !self.started {
            self.started = true;
            e.push(self.start, json!({"source": "startup"}));
        }
    }

    /// A prompt: the open turn ends, a new one opens.
    pub(crate) fn prompt(&mut self, e: &mut Emit, text: &str) {
        self.start(e);
        self.end(e);
        self.open = true;
        self.last_at = e.time.clone();
        e.summary.prompts += 1;
        e.push(self.prompt.0, json!({ self.prompt.1: text }));
    }

    /// The agent's text in the open turn (the last one is its last words), read at the time
    /// `e` is at.
    pub(crate) fn said(&mut self, e: &Emit, text: &str) {
        if !text.trim().is_empty() {
            self.last_words = Some(text.to_string());
            self.last_at = e.time.clone();
        }
    }

    /// Ends the open turn with the agent's stop event and its last words, at the time of
    /// its last event.
    pub(crate) fn end(&mut self, e: &mut Emit) {
        if self.open {
            self.open = false;
            let words = self.last_words.take();
            let at = self.last_at.take().or_else(|| e.time.clone());
            e.push_at(self.stop.0, json!({ self.stop.1: words }), at);
        }
    }

    /// A tool call, compaction or other event in a turn: the conversation has started, and a
    /// turn is open (a file may begin in the middle of one).
    pub(crate) fn within(&mut self, e: &mut Emit) {
        self.start(e);
        self.open = true;
        self.last_at = e.time.clone();
    }
}

#[cfg(test)]
mod tests;
