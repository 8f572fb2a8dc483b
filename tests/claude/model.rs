//! A scripted stand-in for the model APIs on 127.0.0.1, so that the real agent CLIs run
//! offline: it answers Claude Code's streaming `POST /v1/messages` (Anthropic Messages),
//! Codex's `POST /v1/responses` (OpenAI Responses), Gemini CLI's
//! `POST /v1beta/models/M:streamGenerateContent` (Gemini API) and OpenCode's and Pi's
//! `POST /v1/chat/completions` (OpenAI Chat Completions) with the next turn of a script
//! (text, tool calls) and keeps every request body for the test to read.
//!
//! Which turn comes next is worked out from the request itself: the number of tool results
//! (`tool_result` blocks, `function_call_output` items, `functionResponse` parts, `tool`
//! messages) the CLI sends back since the script was set says how many of the script's tool
//! calls have run. A resumed conversation carries its old results too, hence the count at
//! the script's first request is its zero.
//!
//! Bounded: loopback only, at most [`MAX_CONNECTIONS`] at a time, requests of at most
//! [`MAX_BODY`], a read timeout per connection; the listener thread ends when the server is
//! dropped.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const MAX_CONNECTIONS: usize = 32;
const MAX_BODY: usize = 64 << 20;
const MAX_HEADERS: usize = 64 << 10;

/// One block of an assistant turn.
#[derive(Debug, Clone)]
pub enum Block {
    /// Text shown to the user.
    Text(String),
    /// A tool call: the tool's name and its input.
    Tool(String, Value),
}

/// Text.
pub fn say(text: &str) -> Block {
    Block::Text(text.to_string())
}

/// A tool call.
pub fn tool(name: &str, input: Value) -> Block {
    Block::Tool(name.to_string(), input)
}

/// Put in an Agent tool call's prompt: the subagent's conversation gets one line of text
/// and does not take turns of the script.
pub const SUBAGENT_MARK: &str = "[subagent]";

/// One assistant message: its blocks, in order.
pub type Turn = Vec<Block>;

#[derive(Default)]
struct State {
    script: Vec<Turn>,
    /// Tool results in the conversation when the script began.
    base: Option<usize>,
    /// Every request body, in arrival order.
    requests: Vec<Value>,
    /// Requests served since the script was set.
    served: usize,
}

/// The fake model server; dropping it stops it.
pub struct ModelServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake model server");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || serve(listener, st, sp));
        ModelServer { addr, state, stop, thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The turns the next conversation gets; the last one is repeated if the CLI asks for more.
    pub fn script(&self, turns: Vec<Turn>) {
        let mut s = self.state.lock().expect("state");
        s.script = turns;
        s.base = None;
        s.served = 0;
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().expect("state").requests.clone()
    }

    /// Requests answered from the current script.
    pub fn served(&self) -> usize {
        self.state.lock().expect("state").served
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: TcpListener, state: Arc<Mutex<State>>, stop: Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(conn) = conn else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            continue; // dropped: the CLI retries
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (state, open) = (state.clone(), open.clone());
        std::thread::spawn(move || {
            let _ = handle(conn, &state);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// One request per connection (`connection: close`), which keeps the parsing simple.
fn handle(conn: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || head.len() > MAX_HEADERS {
            return Ok(());
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut out = conn;
    // OpenCode lists the provider's models once.
    if method == "GET" && path.trim_end_matches('/').ends_with("/v1/models") {
        return respond_json(&mut out, &json!({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}));
    }
    if method != "POST" || length > MAX_BODY {
        return out.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if path.starts_with("/v1/messages/count_tokens") {
        return respond_json(&mut out, &json!({"input_tokens": 100}));
    }
    if path.contains(":countTokens") {
        return respond_json(&mut out, &json!({"totalTokens": 100}));
    }
    enum Api {
        Messages,
        Responses,
        Gemini { stream: bool },
        Chat { stream: bool },
    }
    let api = if path.starts_with("/v1/responses") {
        Api::Responses
    } else if path.starts_with("/v1/messages") {
        Api::Messages
    } else if path.starts_with("/v1beta/models/") && path.contains(":streamGenerateContent") {
        Api::Gemini { stream: true }
    } else if path.starts_with("/v1beta/models/") && path.contains(":generateContent") {
        Api::Gemini { stream: false }
    } else if path.trim_end_matches('/').ends_with("/chat/completions") {
        Api::Chat { stream: body["stream"] == true }
    } else {
        return out.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    };
    let turn = {
        let mut s = state.lock().expect("state");
        s.requests.push(body.clone());
        next_turn(&mut s, &body)
    };
    match api {
        Api::Responses => stream_responses(&mut out, &turn),
        Api::Messages => stream(&mut out, &body, &turn),
        Api::Gemini { stream } => gemini(&mut out, &turn, stream),
        Api::Chat { stream } => chat(&mut out, &turn, stream),
    }
}

/// The turn that answers `body`: side requests (no tools: titles, summaries) get a word of
/// text; the agent's own requests get the script's next turn.
fn next_turn(s: &mut State, body: &Value) -> Turn {
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if !has_tools || s.script.is_empty() {
        return vec![say("OK.")];
    }
    // A subagent's conversation (the Agent tool's prompt holds SUBAGENT_MARK): one answer.
    let first = body["messages"].get(0).map(|m| m["content"].to_string()).unwrap_or_default();
    if first.contains(SUBAGENT_MARK) {
        return vec![say("Checked: the rounding test is the only failure.")];
    }
    let results = tool_results(body);
    let base = *s.base.get_or_insert(results);
    s.served += 1;
    let mut done = results.saturating_sub(base);
    for turn in &s.script {
        let calls = turn.iter().filter(|b| matches!(b, Block::Tool(..))).count();
        if done == 0 {
            return turn.clone();
        }
        done = done.saturating_sub(calls);
    }
    s.script.last().cloned().unwrap_or_default()
}

fn tool_results(body: &Value) -> usize {
    // Gemini: the calls' results are functionResponse parts of the contents.
    if let Some(contents) = body["contents"].as_array() {
        return contents
            .iter()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter(|p| p.get("functionResponse").is_some())
            .count();
    }
    // Responses: the calls' outputs are items of the input.
    if let Some(items) = body["input"].as_array() {
        return items
            .iter()
            .filter(|i| matches!(i["type"].as_str(), Some("function_call_output" | "custom_tool_call_output")))
            .count();
    }
    let Some(messages) = body["messages"].as_array() else { return 0 };
    // Messages: tool_result blocks of the user's turns; Chat Completions: `tool` messages.
    let blocks = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count();
    blocks + messages.iter().filter(|m| m["role"] == "tool").count()
}

fn respond_json(out: &mut TcpStream, v: &Value) -> std::io::Result<()> {
    let body = v.to_string();
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The turn as the Responses API streams it: an output item per block (`apply_patch` and
/// code mode's `exec` are Codex's freeform tools: a custom tool call with the patch or the
/// JavaScript as its input; others are
/// function calls with JSON arguments).
fn stream_responses(out: &mut TcpStream, turn: &Turn) -> std::io::Result<()> {
    static IDS: AtomicUsize = AtomicUsize::new(0);
    let n = IDS.fetch_add(1, Ordering::SeqCst);
    let mut events = vec![json!({"type": "response.created", "response": {"id": format!("resp_{n}")}})];
    for (i, block) in turn.iter().enumerate() {
        let item = match block {
            Block::Text(t) => json!({"type": "message", "role": "assistant", "id": format!("msg_{n}_{i}"),
                "content": [{"type": "output_text", "text": t, "annotations": []}]}),
            Block::Tool(name, input) if name == "apply_patch" || name == "exec" => json!({"type": "custom_tool_call",
                "id": format!("ctc_{n}_{i}"), "call_id": format!("call_{n}_{i}"), "name": name,
                "input": input.as_str().unwrap_or_default()}),
            Block::Tool(name, input) => json!({"type": "function_call", "id": format!("fc_{n}_{i}"),
                "call_id": format!("call_{n}_{i}"), "name": name, "arguments": input.to_string()}),
        };
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(json!({"type": "response.completed", "response": {"id": format!("resp_{n}"), "usage": {
        "input_tokens": 50, "output_tokens": 10, "total_tokens": 60,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}}));
    server_sent(out, &events)
}

/// The turn as the Messages API streams it (server-sent events).
fn stream(out: &mut TcpStream, body: &Value, turn: &Turn) -> std::io::Result<()> {
    static IDS: AtomicUsize = AtomicUsize::new(0);
    let n = IDS.fetch_add(1, Ordering::SeqCst);
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": body["model"],
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 50, "output_tokens": 1}}})];
    let mut stop = "end_turn";
    for (i, block) in turn.iter().enumerate() {
        match block {
            Block::Text(t) => {
                events.push(
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                events.push(
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": t}}),
                );
            }
            Block::Tool(name, input) => {
                stop = "tool_use";
                events.push(json!({"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": format!("toolu_fake_{n}_{i}"), "name": name, "input": {}}}));
                events.push(json!({"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": input.to_string()}}));
            }
        }
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 10}}));
    events.push(json!({"type": "message_stop"}));
    server_sent(out, &events)
}

/// The turn as the Gemini API gives it: a candidate whose parts are text and function
/// calls; streamed (server-sent events, one chunk per part, a long text in two chunks as a
/// real model streams it) or whole.
fn gemini(out: &mut TcpStream, turn: &Turn, stream: bool) -> std::io::Result<()> {
    let usage = json!({"promptTokenCount": 1200, "candidatesTokenCount": 20, "totalTokenCount": 1220});
    let mut parts: Vec<Value> = Vec::new();
    for block in turn {
        match block {
            Block::Text(t) if stream && t.len() > 24 => {
                let mid = (0..=t.len() / 2).rev().find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                parts.push(json!({"text": &t[..mid]}));
                parts.push(json!({"text": &t[mid..]}));
            }
            Block::Text(t) => parts.push(json!({"text": t})),
            Block::Tool(name, input) => parts.push(json!({"functionCall": {"name": name, "args": input}})),
        }
    }
    let candidate = |parts: Vec<Value>, last: bool| {
        let mut c = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if last {
            c["finishReason"] = json!("STOP");
        }
        json!({"candidates": [c], "usageMetadata": usage})
    };
    if !stream {
        return respond_json(out, &candidate(parts, true));
    }
    let n = parts.len();
    let mut text = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    );
    for (i, p) in parts.into_iter().enumerate() {
        text.push_str(&format!("data: {}\r\n\r\n", candidate(vec![p], i + 1 == n)));
    }
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The turn as OpenAI's Chat Completions gives it: content and tool calls; streamed (chunks
/// of deltas, then `[DONE]`) or whole.
fn chat(out: &mut TcpStream, turn: &Turn, stream: bool) -> std::io::Result<()> {
    static IDS: AtomicUsize = AtomicUsize::new(0);
    let n = IDS.fetch_add(1, Ordering::SeqCst);
    let content: String = turn
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::Tool(..) => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let calls: Vec<Value> = turn
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match b {
            Block::Tool(name, input) => Some(json!({"id": format!("call_{n}_{i}"), "type": "function",
                "function": {"name": name, "arguments": input.to_string()}})),
            Block::Text(_) => None,
        })
        .collect();
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    let usage = json!({"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020});
    if !stream {
        let mut message =
            json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { json!(content) }});
        if !calls.is_empty() {
            message["tool_calls"] = json!(calls);
        }
        return respond_json(
            out,
            &json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0,
            "model": "fake", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}),
        );
    }
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 0, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    if !content.is_empty() {
        chunks.push(chunk(json!({"content": content}), None));
    }
    for (i, c) in calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
            "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}]}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some(finish)));
    chunks.push(json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 0,
        "model": "fake", "choices": [], "usage": usage}));
    let mut text = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    );
    for c in chunks {
        text.push_str(&format!("data: {c}\n\n"));
    }
    text.push_str("data: [DONE]\n\n");
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes `events` as a server-sent event stream, each named by its `type`.
fn server_sent(out: &mut TcpStream, events: &[Value]) -> std::io::Result<()> {
    let mut text = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    );
    for e in events {
        text.push_str(&format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")));
    }
    out.write_all(text.as_bytes())?;
    out.flush()
}
