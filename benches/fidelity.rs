//! Resume-context fidelity: `cargo bench --bench fidelity`.
//!
//! For each real Claude Code transcript of a set (`../shared/transcripts/*.jsonl[.gz]`, or
//! the directory in `CCMEM_FIDELITY_TRANSCRIPTS`), the bench imports it into a fresh
//! project (`ccmemctl import`, as the hooks would have delivered it), asks for the resume
//! context (`ccmemctl context`, default budget), and counts how much of what a fresh agent
//! needs to carry on is in it, per category:
//!
//! - task: the first prompt and the latest prompt;
//! - todos: each item of the last todo/task list, with its status on its line;
//! - files: each file the agent edited (its path relative to the project);
//! - failures: each failing command not since succeeded, with a line of its error;
//! - next steps: the next step the agent stated last (its last message) and at each
//!   compaction (the summary's "Next Step");
//! - decisions: hand-written expectations (`benches/fidelity/expectations.json`): every
//!   keyword of an item on one line of the context.
//!
//! The ground truth here is extracted from the transcript by this file alone, with rules of
//! its own (not the daemon's code). The same is measured again after `reset-session`, on the
//! context a new session gets from the ended one. SessionStart latency with the imported
//! session is measured beside `/bin/true`. Without the transcripts the bench says so and
//! stops.

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let dir = std::env::var_os("CCMEM_FIDELITY_TRANSCRIPTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/transcripts"));
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|rd| rd.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.retain(|p| {
        let n = p.to_string_lossy();
        n.ends_with(".jsonl") || n.ends_with(".jsonl.gz")
    });
    files.sort();
    if files.is_empty() {
        println!("fidelity: no transcripts in {} (set CCMEM_FIDELITY_TRANSCRIPTS); skipped", dir.display());
        return;
    }
    let expectations: Value =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fidelity/expectations.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
    println!("ccmem resume-context fidelity on {} transcripts from {}", files.len(), dir.display());
    println!();
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let mut live = Totals::default();
    let mut after_reset = Totals::default();
    let mut sizes = Vec::new();
    let mut starts = Vec::new();
    let mut baseline = Vec::new();
    for (n, file) in files.iter().enumerate() {
        let name =
            file.file_name().map(|f| f.to_string_lossy().trim_end_matches(".gz").to_string()).unwrap_or_default();
        let plain = env.path().join(&name);
        let bytes = read_maybe_gz(file);
        std::fs::write(&plain, &bytes).expect("write transcript");
        let truth = Truth::extract(&String::from_utf8_lossy(&bytes), &expectations["transcripts"][&name]);
        let root = repo(&env, &format!("p{n}"));
        let out =
            env.ctl(&["import", plain.to_str().unwrap_or_default(), "--project", root.to_str().unwrap_or_default()]);
        assert_ok(&out, "ccmemctl import");
        let ctx = text(&env.ctl(&["context", root.to_str().unwrap_or_default()]).stdout);
        sizes.push(ctx.chars().count());
        let score = truth.score(&ctx);
        println!("{name}: context {} chars", ctx.chars().count());
        score.print("  ");
        if std::env::var_os("CCMEM_FIDELITY_SHOW").is_some() {
            println!("{ctx}\n");
        }
        live.add(&score);
        // SessionStart with this session: the hook process, beside /bin/true given the same stdin.
        let payload = json!({"hook_event_name": "SessionStart", "session_id": "bench-start", "source": "startup",
            "cwd": root, "transcript_path": "/nonexistent.jsonl"})
        .to_string();
        for _ in 0..15 {
            starts.push(time_stdin(&env, &[CCMEMCTL, "hook"], payload.as_bytes()));
            baseline.push(time_stdin(&env, &["/bin/true"], payload.as_bytes()));
        }
        // The session ends; a new one starts and must carry what the old one left.
        assert_ok(&env.ctl(&["reset-session", root.to_str().unwrap_or_default()]), "reset-session");
        let resume = text(&env.ctl(&["resume-id", root.to_str().unwrap_or_default()]).stdout);
        let ctx = text(&env.ctl(&["context", root.to_str().unwrap_or_default()]).stdout);
        let score = truth.score(&ctx);
        println!("  after reset-session: context {} chars, resume-id {}", ctx.chars().count(), resume.trim());
        score.print("    ");
        after_reset.add(&score);
    }
    println!();
    println!("all transcripts (live session):");
    live.print("  ");
    println!("after reset-session (previous session carried):");
    after_reset.print("  ");
    let max = sizes.iter().copied().max().unwrap_or(0);
    let mean = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
    println!("context size: mean {mean:.0}, max {max} chars (budget 6000)");
    starts.sort_by(f64::total_cmp);
    baseline.sort_by(f64::total_cmp);
    let (s50, b50) = (starts[starts.len() / 2], baseline[baseline.len() / 2]);
    println!("SessionStart hook with an imported session: median {s50:.2} ms (/bin/true {b50:.2} ms)");
    println!();
    for (cat, (c, t)) in &live.by {
        figures::record(&format!("fidelity: {cat}"), pct(*c, *t), "%", "items", *t as f64);
    }
    figures::record("fidelity: overall", pct(live.carried(), live.total()), "%", "items", live.total() as f64);
    figures::record(
        "fidelity after reset-session: overall",
        pct(after_reset.carried(), after_reset.total()),
        "%",
        "items",
        after_reset.total() as f64,
    );
    figures::record("resume context size, max", max as f64, "chars", "budget", 6000.0);
    figures::record("SessionStart hook, median", s50, "ms", "/bin/true", b50);
    let at = |cat: &str| live.by.get(cat).map(|(c, t)| pct(*c, *t)).unwrap_or(100.0);
    figures::target("todo items with correct status ≥ 90%", at("todos") >= 90.0);
    figures::target("stated next steps ≥ 80%", at("next steps") >= 80.0);
    figures::target("unresolved failures with their error line ≥ 80%", at("failures") >= 80.0);
    figures::target("edited files ≥ 95%", at("files") >= 95.0);
    figures::target("decisions and facts ≥ 50%", at("decisions") >= 50.0);
    figures::target("overall ≥ 85%", pct(live.carried(), live.total()) >= 85.0);
    figures::target("context ≤ 6,000 chars", max <= 6000);
    figures::target("SessionStart median ≤ 5 ms", s50 <= 5.0);
    figures::finish("fidelity", false);
}

fn pct(c: usize, t: usize) -> f64 {
    if t == 0 {
        100.0
    } else {
        100.0 * c as f64 / t as f64
    }
}

fn time_stdin(env: &Env, argv: &[&str], input: &[u8]) -> f64 {
    let mut cmd = Command::new(argv[0]);
    env.apply(&mut cmd);
    cmd.args(&argv[1..]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
    let t = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let _ = child.wait();
    t.elapsed().as_secs_f64() * 1000.0
}

fn read_maybe_gz(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).expect("read transcript");
    if p.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out).expect("gunzip transcript");
        out
    } else {
        raw
    }
}

/// Per category: (carried, total).
#[derive(Default)]
struct Totals {
    by: BTreeMap<String, (usize, usize)>,
}

impl Totals {
    fn add(&mut self, s: &Score) {
        for (cat, items) in &s.items {
            let e = self.by.entry(cat.clone()).or_default();
            e.0 += items.iter().filter(|(_, ok)| *ok).count();
            e.1 += items.len();
        }
    }
    fn carried(&self) -> usize {
        self.by.values().map(|v| v.0).sum()
    }
    fn total(&self) -> usize {
        self.by.values().map(|v| v.1).sum()
    }
    fn print(&self, indent: &str) {
        for (cat, (c, t)) in &self.by {
            println!("{indent}{cat:<11} {c:>3} of {t:<3} {:>5.1}%", pct(*c, *t));
        }
        println!(
            "{indent}{:<11} {:>3} of {:<3} {:>5.1}%",
            "overall",
            self.carried(),
            self.total(),
            pct(self.carried(), self.total())
        );
    }
}

/// Each category's items and whether the context carried them.
struct Score {
    items: BTreeMap<String, Vec<(String, bool)>>,
}

impl Score {
    fn print(&self, indent: &str) {
        for (cat, items) in &self.items {
            let c = items.iter().filter(|(_, ok)| *ok).count();
            let missed: Vec<&str> = items.iter().filter(|(_, ok)| !ok).map(|(w, _)| w.as_str()).take(4).collect();
            let missed = if missed.is_empty() {
                String::new()
            } else {
                format!("  missed: {}", missed.iter().map(|m| short(m)).collect::<Vec<_>>().join(" | "))
            };
            println!("{indent}{cat:<11} {c:>3} of {:<3}{missed}", items.len());
        }
    }
}

fn short(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 70 {
        format!("{}…", s.chars().take(69).collect::<String>())
    } else {
        s
    }
}

/// What a fresh agent needs, read from the transcript.
#[derive(Default)]
struct Truth {
    prompts: Vec<String>,
    todos: Vec<(String, String)>,
    files: Vec<String>,
    failures: Vec<(String, Vec<String>)>,
    next_steps: Vec<String>,
    decisions: Vec<(String, Vec<String>)>,
}

impl Truth {
    fn extract(transcript: &str, expected: &Value) -> Self {
        let mut t = Truth::default();
        let mut cwd: Option<String> = None;
        let mut calls: HashMap<String, (String, Value)> = HashMap::new();
        // Todos by position (TodoWrite) or by id (TaskCreate/TaskUpdate).
        let mut todos: Vec<(Option<String>, String, String)> = Vec::new();
        let mut failing: Vec<(String, String, Vec<String>)> = Vec::new();
        let mut last_text = String::new();
        let mut summary_next = Vec::new();
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
                        summary_next.push(rest[..end].trim().to_string());
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
                                if let Some(rel) =
                                    cwd.as_deref().and_then(|c| p.strip_prefix(c)).map(|r| r.trim_start_matches('/'))
                                {
                                    if !rel.is_empty()
                                        && !t.files.iter().any(|f| f == rel)
                                        && !rel.starts_with(".claude/")
                                    {
                                        t.files.push(rel.to_string());
                                    }
                                }
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
                            "Bash" => {
                                let cmd = input["command"].as_str().unwrap_or("");
                                let kind = kind_of(cmd);
                                if kind.is_empty() {
                                    continue;
                                }
                                let checked =
                                    matches!(kind.as_str(), "tests" | "build" | "lint" | "typecheck" | "checks");
                                if err || checked && shows_failure(&out) {
                                    let errors: Vec<String> = out
                                        .lines()
                                        .map(str::trim)
                                        .filter(|l| l.len() >= 12 && is_error_line(l))
                                        .map(str::to_string)
                                        .collect();
                                    failing.retain(|f| f.0 != kind);
                                    failing.push((kind, cmd.to_string(), errors));
                                } else {
                                    // Each part of a line that succeeded succeeded.
                                    let kinds: Vec<String> = cmd.split("&&").map(kind_of).chain([kind]).collect();
                                    failing.retain(|f| {
                                        !kinds.iter().any(|k| {
                                            *k == f.0
                                                || k == "checks"
                                                    && matches!(f.0.as_str(), "lint" | "build" | "typecheck")
                                        })
                                    });
                                }
                            }
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
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        t.prompts = first.into_iter().chain(latest).collect();
        t.prompts.dedup();
        t.todos = todos.into_iter().filter(|x| !x.1.is_empty()).map(|x| (x.1, x.2)).collect();
        t.failures = failing.into_iter().map(|f| (f.1, f.2)).collect();
        t.next_steps = summary_next;
        t.next_steps.push(stated_next(&last_text));
        t.next_steps.retain(|s| words(s).len() >= 3);
        for item in expected.as_array().into_iter().flatten() {
            let kws: Vec<String> = item["keywords"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .map(str::to_lowercase)
                .collect();
            t.decisions.push((item["what"].as_str().unwrap_or("").to_string(), kws));
        }
        t
    }

    fn score(&self, ctx: &str) -> Score {
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
            let has_error = errors.iter().any(|e| {
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
    let cues = ["next", "remaining", "still need", "should", "would you like", "you can", "todo", "pending", "then "];
    let stated: Vec<&str> =
        sentences.iter().copied().filter(|s| cues.iter().any(|c| s.to_lowercase().contains(c))).collect();
    if stated.is_empty() {
        sentences.iter().rev().take(2).rev().copied().collect::<Vec<_>>().join(". ")
    } else {
        stated.iter().rev().take(2).rev().copied().collect::<Vec<_>>().join(". ")
    }
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
