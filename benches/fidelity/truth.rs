//! The ground truth of the fidelity bench: what a fresh agent needs, read from a
//! transcript by this bench's own rules (not the daemon's code).

use crate::bench::Score;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// What a fresh agent needs, read from the transcript.
#[derive(Default)]
pub(crate) struct Truth {
    prompts: Vec<String>,
    todos: Vec<(String, String)>,
    files: Vec<String>,
    failures: Vec<(String, Vec<String>)>,
    next_steps: Vec<String>,
    decisions: Vec<(String, Vec<String>)>,
}

impl Truth {
    pub(crate) fn extract(transcript: &str, expected: &Value) -> Self {
        let mut t = Truth::default();
        let mut cwd: Option<String> = None;
        let mut calls: HashMap<String, (String, Value)> = HashMap::new();
        // Todos by position (TodoWrite) or by id (TaskCreate/TaskUpdate).
        let mut todos: Vec<(Option<String>, String, String)> = Vec::new();
        let mut failing: Vec<Failing> = Vec::new();
        let mut last_text = String::new();
        // The latest compaction summary's next step, and whether the agent said anything after it.
        let mut summary_next: Option<String> = None;
        // Agent messages after it, and whether one of them said what comes next.
        let (mut spoke_after_summary, mut said_next_after_summary) = (0usize, false);
        let mut first: Option<String> = None;
        let mut latest: Option<String> = None;
        for line in transcript.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            if v["isSidechain"] == true {
                continue;
            }
            if cwd.is_none() {
                cwd = v["cwd"].as_str().map(str::to_string);
            }
            let content = &v["message"]["content"];
            match v["type"].as_str() {
                Some("user") if v["isCompactSummary"] == true => {
                    let s = as_text(content);
                    if let Some(i) = s.find("Next Step:") {
                        let rest = &s[i + "Next Step:".len()..];
                        let end = rest.find("If you need specific details").unwrap_or(rest.len());
                        summary_next = Some(rest[..end].trim().to_string());
                        (spoke_after_summary, said_next_after_summary) = (0, false);
                    }
                }
                Some("user") => {
                    if let Value::String(p) = content {
                        let p = p.trim();
                        let local = p.starts_with("<local-command")
                            || p.starts_with("<command-name>/clear")
                            || p.starts_with("<command-name>/context")
                            || p.starts_with("<command-name>/exit")
                            || p.starts_with("<command-name>/cost")
                            || p.starts_with("Caveat:");
                        if v["isMeta"] != true && !local && !p.is_empty() {
                            let p = without_wrapper(p);
                            first.get_or_insert_with(|| p.clone());
                            latest = Some(p);
                        }
                    }
                    for b in content.as_array().into_iter().flatten() {
                        if b["type"] != "tool_result" {
                            continue;
                        }
                        let Some((name, input)) = b["tool_use_id"].as_str().and_then(|id| calls.get(id)).cloned()
                        else {
                            continue;
                        };
                        let out = as_text(&b["content"]);
                        let err = b["is_error"] == true;
                        match name.as_str() {
                            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" if !err => {
                                let p = input["file_path"].as_str().or(input["notebook_path"].as_str()).unwrap_or("");
                                t.file(p, cwd.as_deref());
                            }
                            "TaskCreate" if !err => {
                                let id = v["toolUseResult"]["task"]["id"].as_str().map(str::to_string);
                                let subject = input["subject"].as_str().unwrap_or("").to_string();
                                todos.push((id, subject, "pending".into()));
                            }
                            "TaskUpdate" if !err => {
                                let id = input["taskId"]
                                    .as_str()
                                    .map(str::to_string)
                                    .or(input["taskId"].as_u64().map(|n| n.to_string()));
                                if let Some(i) = todos.iter().position(|x| x.0 == id) {
                                    match input["status"].as_str() {
                                        Some("deleted") => {
                                            todos.remove(i);
                                        }
                                        Some(st) => todos[i].2 = st.to_string(),
                                        None => {}
                                    }
                                    if let Some(s) = input["subject"].as_str().filter(|_| i < todos.len()) {
                                        todos[i].1 = s.to_string();
                                    }
                                }
                            }
                            "Bash" => shell(&mut failing, input["command"].as_str().unwrap_or(""), err, &out),
                            _ => {}
                        }
                    }
                }
                Some("assistant") => {
                    for b in content.as_array().into_iter().flatten() {
                        match b["type"].as_str() {
                            Some("tool_use") => {
                                let id = b["id"].as_str().unwrap_or("").to_string();
                                let name = b["name"].as_str().unwrap_or("").to_string();
                                let input = b["input"].clone();
                                if name == "TodoWrite" {
                                    todos = input["todos"]
                                        .as_array()
                                        .into_iter()
                                        .flatten()
                                        .map(|x| {
                                            (
                                                None,
                                                x["content"].as_str().unwrap_or("").to_string(),
                                                x["status"].as_str().unwrap_or("pending").to_string(),
                                            )
                                        })
                                        .collect();
                                }
                                calls.insert(id, (name, input));
                            }
                            Some("text") => {
                                let s = b["text"].as_str().unwrap_or("");
                                if !s.trim().is_empty() && v["isApiErrorMessage"] != true {
                                    last_text = s.to_string();
                                    spoke_after_summary += 1;
                                    said_next_after_summary |= states_next(s);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let todos: Vec<(String, String)> = todos.into_iter().map(|x| (x.1, x.2)).collect();
        // A summary's plan is what comes next only while nothing newer says it: an older
        // summary's, or one the agent's later last words overtook, is history.
        // (Ten agent messages on, a plan is history whatever they said.)
        let overtaken = said_next_after_summary || spoke_after_summary >= 10;
        let summary_next = summary_next.filter(|_| !overtaken).into_iter().collect();
        t.finish(first, latest, todos, failing, summary_next, &last_text);
        t.expect(expected);
        t
    }

    /// The same, from a Codex rollout: prompts (`user_message`), the plan (`update_plan`),
    /// the files its patches add or change, shell commands with the exit status their output
    /// states, the last message (`task_complete`, `agent_message`).
    pub(crate) fn extract_codex(rollout: &str) -> Self {
        let mut t = Truth::default();
        let (mut cwd, mut first, mut latest) = (None::<String>, None, None);
        let mut calls: HashMap<String, (String, Value)> = HashMap::new();
        let (mut todos, mut failing, mut last_text) = (Vec::new(), Vec::new(), String::new());
        for line in rollout.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let p = &v["payload"];
            match (v["type"].as_str(), p["type"].as_str()) {
                (Some("session_meta"), _) => {
                    cwd = cwd.or(p["cwd"].as_str().map(str::to_string));
                }
                (Some("event_msg"), Some("user_message")) => {
                    let m = p["message"].as_str().unwrap_or("").trim().to_string();
                    if !m.is_empty() {
                        first.get_or_insert_with(|| m.clone());
                        latest = Some(m);
                    }
                }
                (Some("event_msg"), Some("agent_message")) => last_text = p["message"].as_str().unwrap_or("").into(),
                (Some("event_msg"), Some("task_complete")) => {
                    if let Some(m) = p["last_agent_message"].as_str().filter(|m| !m.trim().is_empty()) {
                        last_text = m.to_string();
                    }
                }
                // What a patch changed, as Codex reports it (code mode's cells call apply_patch
                // themselves: these events are the only record of their edits).
                (Some("event_msg"), Some("patch_apply_end")) if p["success"] != false => {
                    for (path, change) in p["changes"].as_object().into_iter().flatten() {
                        if change["type"] != "delete" {
                            t.file(change["move_path"].as_str().unwrap_or(path), cwd.as_deref());
                        }
                    }
                }
                (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                    let input = match &p["arguments"] {
                        Value::String(a) => serde_json::from_str(a).unwrap_or(Value::Null),
                        _ => p["input"].clone(),
                    };
                    let name = p["name"].as_str().unwrap_or("").to_string();
                    if name == "update_plan" {
                        todos = input["plan"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|x| {
                                (
                                    x["step"].as_str().unwrap_or("").into(),
                                    x["status"].as_str().unwrap_or("pending").into(),
                                )
                            })
                            .collect();
                    }
                    calls.insert(p["call_id"].as_str().unwrap_or("").into(), (name, input));
                }
                (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                    let Some((name, input)) = calls.remove(p["call_id"].as_str().unwrap_or("")) else { continue };
                    let out = as_text(&p["output"]);
                    let code = out.lines().take(12).find_map(|l| {
                        let l = l.trim();
                        l.strip_prefix("Process exited with code ")
                            .or(l.strip_prefix("Exit code: "))?
                            .trim()
                            .parse::<i64>()
                            .ok()
                    });
                    match name.as_str() {
                        "exec_command" | "shell" => {
                            let cmd = input["cmd"].as_str().or(input["command"].as_str()).unwrap_or("");
                            shell(&mut failing, cmd, code.is_some_and(|c| c != 0), &out);
                        }
                        "apply_patch" if code.unwrap_or(0) == 0 => {
                            let text = input.as_str().or(input["input"].as_str()).unwrap_or("");
                            for path in patched(text) {
                                t.file(path, cwd.as_deref());
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        t.finish(first, latest, todos, failing, Vec::new(), &last_text);
        t
    }

    /// The same, from a Pi or Oh My Pi session: prompts, the todo list of Oh My Pi's `todo`
    /// tool (`init`, `done`), the files `write` and `edit` change, bash commands with their
    /// exit status (`Command exited with code N`), the last assistant text.
    pub(crate) fn extract_pi(session: &str) -> Self {
        let mut t = Truth::default();
        let (mut cwd, mut first, mut latest) = (None::<String>, None, None);
        let mut calls: HashMap<String, (String, Value)> = HashMap::new();
        let (mut todos, mut failing, mut last_text): (Vec<(String, String)>, _, _) =
            (Vec::new(), Vec::new(), String::new());
        for line in session.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            if v["type"] == "session" {
                cwd = cwd.or(v["cwd"].as_str().map(str::to_string));
                continue;
            }
            let m = &v["message"];
            match (v["type"].as_str(), m["role"].as_str()) {
                (Some("message"), Some("user")) => {
                    let p = as_text(&m["content"]).trim().to_string();
                    if !p.is_empty() {
                        first.get_or_insert_with(|| p.clone());
                        latest = Some(p);
                    }
                }
                (Some("message"), Some("assistant")) => {
                    for b in m["content"].as_array().into_iter().flatten() {
                        match b["type"].as_str() {
                            Some("toolCall") => {
                                let input = b["arguments"].clone();
                                if b["name"] == "todo" {
                                    match input["op"].as_str() {
                                        Some("init") => {
                                            todos = input["list"]
                                                .as_array()
                                                .into_iter()
                                                .flatten()
                                                .flat_map(|ph| ph["items"].as_array().cloned().unwrap_or_default())
                                                .filter_map(|i| {
                                                    i.as_str().map(|s| (s.to_string(), "pending".to_string()))
                                                })
                                                .collect();
                                        }
                                        Some("done") => {
                                            let task = input["task"].as_str().unwrap_or("");
                                            if let Some(x) = todos.iter_mut().find(|x| x.0 == task) {
                                                x.1 = "completed".into();
                                            }
                                        }
                                        _ => {}
                                    }
                                }
                                calls.insert(
                                    b["id"].as_str().unwrap_or("").into(),
                                    (b["name"].as_str().unwrap_or("").into(), input),
                                );
                            }
                            Some("text") if !b["text"].as_str().unwrap_or("").trim().is_empty() => {
                                last_text = b["text"].as_str().unwrap_or("").to_string();
                            }
                            _ => {}
                        }
                    }
                }
                (Some("message"), Some("toolResult")) => {
                    let Some((name, input)) = calls.remove(m["toolCallId"].as_str().unwrap_or("")) else { continue };
                    let out = as_text(&m["content"]);
                    let err = m["isError"] == true;
                    match name.as_str() {
                        "bash" => shell(&mut failing, input["command"].as_str().unwrap_or(""), err, &out),
                        "write" | "edit" if !err => t.file(input["path"].as_str().unwrap_or(""), cwd.as_deref()),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        t.finish(first, latest, todos, failing, Vec::new(), &last_text);
        t
    }

    /// The same, from a Copilot CLI `events.jsonl`: the main agent's prompts (no injected
    /// `source` text), the files `edit` and `create` change (a sub-agent's too), shell
    /// commands (`bash`, `powershell`) with the exit code of their `<shellId: …>` trailer,
    /// the main agent's last message. Windows paths are read with `/`.
    pub(crate) fn extract_copilot(events: &str) -> Self {
        let mut t = Truth::default();
        let (mut cwd, mut first, mut latest) = (None::<String>, None, None);
        let mut calls: HashMap<String, (String, Value)> = HashMap::new();
        let (mut failing, mut last_text) = (Vec::new(), String::new());
        let slashed = |p: &str| p.replace('\\', "/");
        for line in events.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let d = &v["data"];
            let main = v.get("agentId").is_none();
            match v["type"].as_str() {
                Some("session.start") => cwd = cwd.or(d["context"]["cwd"].as_str().map(slashed)),
                Some("user.message") if main && d["source"].is_null() => {
                    let p = d["content"].as_str().unwrap_or("").trim().to_string();
                    if !p.is_empty() {
                        first.get_or_insert_with(|| p.clone());
                        latest = Some(p);
                    }
                }
                Some("assistant.message") if main => {
                    if let Some(m) = d["content"].as_str().filter(|m| !m.trim().is_empty()) {
                        last_text = m.to_string();
                    }
                }
                Some("tool.execution_start") => {
                    calls.insert(
                        d["toolCallId"].as_str().unwrap_or("").into(),
                        (d["toolName"].as_str().unwrap_or("").into(), d["arguments"].clone()),
                    );
                }
                Some("tool.execution_complete") => {
                    let Some((name, input)) = calls.remove(d["toolCallId"].as_str().unwrap_or("")) else { continue };
                    let ok = d["success"] != false;
                    let out = d["result"]["content"].as_str().unwrap_or("");
                    match name.as_str() {
                        "bash" | "powershell" => {
                            let code = out
                                .trim_end()
                                .rsplit_once("completed with exit code ")
                                .and_then(|(_, n)| n.trim_end_matches('>').trim().parse::<i64>().ok());
                            let cmd = input["command"].as_str().unwrap_or("");
                            shell(&mut failing, cmd, !ok || code.is_some_and(|c| c != 0), out);
                        }
                        "edit" | "create" if ok => {
                            t.file(&slashed(input["path"].as_str().unwrap_or("")), cwd.as_deref())
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        t.finish(first, latest, Vec::new(), failing, Vec::new(), &last_text);
        t
    }

    /// The same, from an OpenCode export: the user's text parts (not `synthetic`), the
    /// todo list (`todowrite`), the files `edit`, `write` and `apply_patch` change, bash
    /// commands with their exit (`metadata.exit`), the last assistant text.
    pub(crate) fn extract_opencode(export: &Value) -> Self {
        let mut t = Truth::default();
        let cwd = export["info"]["directory"].as_str().map(str::to_string);
        let (mut first, mut latest) = (None, None);
        let (mut todos, mut failing, mut last_text) = (Vec::new(), Vec::new(), String::new());
        for m in export["messages"].as_array().into_iter().flatten() {
            let role = m["info"]["role"].as_str().unwrap_or("");
            for part in m["parts"].as_array().into_iter().flatten() {
                match (role, part["type"].as_str()) {
                    ("user", Some("text")) if part["synthetic"] != true => {
                        let p = part["text"].as_str().unwrap_or("").trim().to_string();
                        if !p.is_empty() {
                            first.get_or_insert_with(|| p.clone());
                            latest = Some(p);
                        }
                    }
                    ("assistant", Some("text")) => {
                        if let Some(x) = part["text"].as_str().filter(|x| !x.trim().is_empty()) {
                            last_text = x.to_string();
                        }
                    }
                    ("assistant", Some("tool")) => {
                        let state = &part["state"];
                        let ok = state["status"] == "completed";
                        let input = &state["input"];
                        match part["tool"].as_str().unwrap_or("") {
                            "bash" if ok || state["status"] == "error" => {
                                let exit = state["metadata"]["exit"].as_i64();
                                let out = state["output"].as_str().unwrap_or("");
                                let cmd = input["command"].as_str().unwrap_or("");
                                shell(&mut failing, cmd, !ok || exit.is_some_and(|c| c != 0), out);
                            }
                            "edit" | "write" if ok => t.file(input["filePath"].as_str().unwrap_or(""), cwd.as_deref()),
                            "apply_patch" if ok => {
                                for path in patched(input["patchText"].as_str().unwrap_or("")) {
                                    t.file(path, cwd.as_deref());
                                }
                            }
                            "todowrite" if ok => {
                                todos = input["todos"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .map(|x| {
                                        (
                                            x["content"].as_str().unwrap_or("").into(),
                                            x["status"].as_str().unwrap_or("pending").into(),
                                        )
                                    })
                                    .collect();
                            }
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
        }
        t.finish(first, latest, todos, failing, Vec::new(), &last_text);
        t
    }

    /// The same, from a Gemini CLI chat (one JSON document): the user's messages, the files
    /// `write_file` and `replace` change (paths as written, relative to the project), shell
    /// commands with the exit code their output states (`Exit Code: N`), the last text.
    pub(crate) fn extract_gemini(chat: &Value) -> Self {
        let mut t = Truth::default();
        let (mut first, mut latest) = (None, None);
        let (mut failing, mut last_text) = (Vec::new(), String::new());
        for m in chat["messages"].as_array().into_iter().flatten() {
            match m["type"].as_str() {
                Some("user") => {
                    let p = as_text(&m["content"]).trim().to_string();
                    if !p.is_empty() && !p.starts_with('/') {
                        first.get_or_insert_with(|| p.clone());
                        latest = Some(p);
                    }
                }
                Some("gemini") => {
                    let text = as_text(&m["content"]);
                    if !text.trim().is_empty() {
                        last_text = text;
                    }
                    for call in m["toolCalls"].as_array().into_iter().flatten() {
                        let ok = call["status"] == "success";
                        let out: String = call["result"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|r| r["functionResponse"]["response"]["output"].as_str())
                            .collect();
                        match call["name"].as_str().unwrap_or("") {
                            "run_shell_command" => {
                                let code = out.lines().find_map(|l| l.trim().strip_prefix("Exit Code: "));
                                let failed =
                                    !ok || code.and_then(|c| c.trim().parse::<i64>().ok()).is_some_and(|c| c != 0);
                                shell(&mut failing, call["args"]["command"].as_str().unwrap_or(""), failed, &out);
                            }
                            "write_file" | "replace" if ok => {
                                t.file(call["args"]["file_path"].as_str().unwrap_or(""), None)
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        t.finish(first, latest, Vec::new(), failing, Vec::new(), &last_text);
        t
    }

    /// What every extraction ends with: the first and latest prompts, the last todo list, the
    /// failures left, the next steps stated (at compactions, and in the last message).
    fn finish(
        &mut self,
        first: Option<String>,
        latest: Option<String>,
        todos: Vec<(String, String)>,
        failing: Vec<Failing>,
        mut next: Vec<String>,
        last_text: &str,
    ) {
        self.prompts = first.into_iter().chain(latest).collect();
        self.prompts.dedup();
        self.todos = todos.into_iter().filter(|x| !x.0.is_empty()).collect();
        self.failures = failing.into_iter().map(|f| (f.1, f.2)).collect();
        next.push(stated_next(last_text));
        next.retain(|s| words(s).len() >= 3);
        self.next_steps = next;
    }

    /// A file the agent wrote, relative to the working directory (absolute paths outside it
    /// are not the project's).
    fn file(&mut self, path: &str, cwd: Option<&str>) {
        let drive = path.as_bytes().get(1) == Some(&b':') && path.as_bytes().get(2) == Some(&b'/');
        let rel = if path.starts_with('/') || drive {
            match cwd.and_then(|c| path.strip_prefix(c)) {
                Some(r) => r.trim_start_matches('/'),
                None => return,
            }
        } else {
            path.trim_start_matches("./")
        };
        if !rel.is_empty() && !self.files.iter().any(|f| f == rel) && !rel.starts_with(".claude/") {
            self.files.push(rel.to_string());
        }
    }

    /// The hand-written expectations of a transcript (its decisions).
    fn expect(&mut self, expected: &Value) {
        for item in expected.as_array().into_iter().flatten() {
            let kws: Vec<String> = item["keywords"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .map(str::to_lowercase)
                .collect();
            self.decisions.push((item["what"].as_str().unwrap_or("").to_string(), kws));
        }
    }

    pub(crate) fn score(&self, ctx: &str) -> Score {
        let lower = ctx.to_lowercase();
        let lines: Vec<&str> = lower.lines().collect();
        let mut items: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
        let mut put =
            |cat: &str, what: &str, ok: bool| items.entry(cat.into()).or_default().push((what.to_string(), ok));
        for p in &self.prompts {
            if words(p).len() >= 2 {
                put("task", p, covered(&lower, p, 0.6));
            }
        }
        for (subject, status) in &self.todos {
            let mark = match status.as_str() {
                "completed" => "[x]",
                "in_progress" => "[~]",
                _ => "[ ]",
            };
            let head: String = subject.to_lowercase().chars().take(40).collect();
            put("todos", subject, lines.iter().any(|l| l.contains(mark) && l.contains(head.trim())));
        }
        for f in &self.files {
            put("files", f, lower.contains(&f.to_lowercase()));
        }
        for (cmd, errors) in &self.failures {
            let program: String = cmd.split_whitespace().filter(|w| !w.contains('=') && *w != "cd").take(1).collect();
            let has_cmd = lower.contains(&program.to_lowercase());
            // A failure that printed no error line (an exit status alone) is carried by its
            // command.
            let has_error = errors.is_empty()
                || errors.iter().any(|e| {
                    let head: String = e.to_lowercase().chars().take(40).collect();
                    lower.contains(head.trim())
                });
            put("failures", cmd, has_cmd && has_error);
        }
        for n in &self.next_steps {
            put("next steps", n, covered(&lower, n, 0.5));
        }
        for (what, kws) in &self.decisions {
            put("decisions", what, lines.iter().any(|l| kws.iter().all(|k| l.contains(k.as_str()))));
        }
        Score { items }
    }
}

/// The files an apply_patch text adds or changes (a moved file under its new name).
fn patched(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| {
        l.strip_prefix("*** Add File: ")
            .or(l.strip_prefix("*** Update File: "))
            .or(l.strip_prefix("*** Move to: "))
            .map(str::trim)
    })
}

/// A failing kind of work: (kind, command, its error lines).
type Failing = (String, String, Vec<String>);

/// A shell command's outcome: a failing test, build, lint or check run is kept until a run
/// of its kind succeeds.
fn shell(failing: &mut Vec<Failing>, cmd: &str, err: bool, out: &str) {
    let kind = kind_of(cmd);
    if kind.is_empty() {
        return;
    }
    let checked = matches!(kind.as_str(), "tests" | "build" | "lint" | "typecheck" | "checks");
    if err || checked && shows_failure(out) {
        let errors: Vec<String> =
            out.lines().map(str::trim).filter(|l| l.len() >= 12 && is_error_line(l)).map(str::to_string).collect();
        failing.retain(|f| f.0 != kind);
        failing.push((kind, cmd.to_string(), errors));
    } else {
        // Each part of a line that succeeded succeeded.
        let kinds: Vec<String> = cmd.split("&&").map(kind_of).chain([kind]).collect();
        failing.retain(|f| {
            !kinds.iter().any(|k| *k == f.0 || k == "checks" && matches!(f.0.as_str(), "lint" | "build" | "typecheck"))
        });
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str().or(b.as_str())).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// A prompt without the instructions a wrapper app puts around it (its last block when
/// that is all there is).
fn without_wrapper(p: &str) -> String {
    let mut rest = p.to_string();
    let mut last = String::new();
    while let (Some(a), Some(b)) = (rest.find("<system_instruction>"), rest.find("</system_instruction>")) {
        if b < a {
            break;
        }
        last = rest[a + "<system_instruction>".len()..b].trim().to_string();
        rest.replace_range(a..b + "</system_instruction>".len(), "");
    }
    if rest.trim().is_empty() {
        last
    } else {
        rest.trim().to_string()
    }
}

/// The kind of work a command does, by this bench's own rough rules; "" for looking around.
fn kind_of(cmd: &str) -> String {
    let c = cmd.to_lowercase();
    let has = |w: &str| c.split(|ch: char| !ch.is_alphanumeric() && ch != '-' && ch != ':').any(|x| x == w);
    if has("verify") || c.contains("run check") {
        return "checks".into();
    }
    if has("test") || has("pytest") || has("jest") || has("vitest") {
        return "tests".into();
    }
    if has("lint") || has("eslint") || has("clippy") {
        return "lint".into();
    }
    if has("typecheck") || c.contains("tsc") || has("mypy") {
        return "typecheck".into();
    }
    if has("build") {
        return "build".into();
    }
    if c.contains("git commit") {
        return "commit".into();
    }
    let first = c.split("&&").last().unwrap_or("").split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    let prog = first.split_whitespace().next().unwrap_or("");
    let looking =
        ["grep", "rg", "ls", "cat", "find", "head", "tail", "wc", "echo", "sed", "awk", "which", "diff", "cd", "pwd"];
    if prog.is_empty()
        || looking.contains(&prog)
        || c.starts_with("git diff")
        || c.starts_with("git status")
        || c.starts_with("git log")
        || c.starts_with("git show")
    {
        return String::new();
    }
    first
}

/// Output that shows failures though the command exited 0 (piped into `tail`).
fn shows_failure(out: &str) -> bool {
    out.lines().any(|l| {
        let l = l.trim().to_lowercase();
        let n_fail = l.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| {
            w[0].parse::<u64>().is_ok_and(|n| n > 0)
                && (w[1].starts_with("fail") || w[1] == "errors" || w[1] == "error")
        });
        n_fail || l.contains(" error ts") || l.starts_with("error ts") || l.contains("): error ts")
    })
}

fn is_error_line(l: &str) -> bool {
    let lower = l.to_lowercase();
    (lower.contains("error") || lower.contains("fail") || lower.contains("expected") || lower.contains("cannot"))
        && !lower.starts_with('>')
}

/// The next step the agent stated in its last message: the sentences that speak of what
/// comes next, else its last two sentences.
fn stated_next(text: &str) -> String {
    let sentences: Vec<&str> = text.split(['\n', '.']).map(str::trim).filter(|s| words(s).len() >= 3).collect();
    let stated: Vec<&str> = sentences.iter().copied().filter(|s| says_next(s)).collect();
    if stated.is_empty() {
        sentences.iter().rev().take(2).rev().copied().collect::<Vec<_>>().join(". ")
    } else {
        stated.iter().rev().take(2).rev().copied().collect::<Vec<_>>().join(". ")
    }
}

/// Words that speak of what comes next.
const NEXT_CUES: &[&str] =
    &["next", "remaining", "still need", "should", "would you like", "you can", "todo", "pending", "then "];

fn says_next(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    NEXT_CUES.iter().any(|c| lower.contains(c))
}

/// Whether a message states what comes next (a sentence of three words or more with a cue).
fn states_next(text: &str) -> bool {
    text.split(['\n', '.']).map(str::trim).any(|s| words(s).len() >= 3 && !s.ends_with('?') && says_next(s))
}

const STOP: &[&str] = &[
    "this", "that", "with", "from", "have", "will", "would", "should", "into", "then", "them", "they", "your", "about",
    "what", "when", "which", "there", "their", "these", "also", "were", "been", "being", "only", "just", "like",
    "make", "sure", "need", "does", "done", "each", "some", "more", "most", "other", "than", "very", "here",
];

fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 4 && !STOP.contains(w))
        .map(str::to_string)
        .collect()
}

/// At least `share` of the first 15 distinct words of `text` are in `ctx`.
fn covered(ctx: &str, text: &str, share: f64) -> bool {
    let mut ws = words(text);
    let mut seen = std::collections::HashSet::new();
    ws.retain(|w| seen.insert(w.clone()));
    ws.truncate(15);
    if ws.is_empty() {
        return true;
    }
    let hit = ws.iter().filter(|w| ctx.contains(w.as_str())).count();
    hit as f64 / ws.len() as f64 >= share
}
