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
//!
//! Then the other agents' real sessions (`../shared/agent-transcripts/`, or
//! `CCMEM_FIDELITY_AGENT_TRANSCRIPTS`: Codex rollouts, Pi and Oh My Pi sessions, Copilot CLI
//! events, OpenCode exports, Gemini CLI chats), imported
//! the same way, their ground truth read by this bench's own rules for each format: task,
//! todos (the plan) with their status, files, failures, next steps; reported apart.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;
#[cfg(unix)]
mod inputs;
#[cfg(unix)]
#[path = "fidelity/truth.rs"]
mod truth;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures, inputs, truth};
    use common::*;
    use inputs::read_maybe_gz;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::Instant;
    use truth::*;

    pub(crate) fn main() -> std::process::ExitCode {
        let (dir, files) = inputs::transcripts("CCMEM_FIDELITY_TRANSCRIPTS", "transcripts");
        if files.is_empty() {
            println!("fidelity: no transcripts in {} (set CCMEM_FIDELITY_TRANSCRIPTS); skipped", dir.display());
            return std::process::ExitCode::SUCCESS;
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
            let out = env.ctl(&[
                "import",
                plain.to_str().unwrap_or_default(),
                "--project",
                root.to_str().unwrap_or_default(),
            ]);
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
        let others = other_agents(&env);
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
        let (c, t) = live.other_than("files");
        println!("items other than files: {c} of {t} ({:.1}%)", pct(c, t));
        figures::record("fidelity: items other than files", pct(c, t), "%", "items", t as f64);
        figures::record("resume context size, max", max as f64, "chars", "budget", 6000.0);
        if others.total() > 0 {
            println!("other agents' sessions (live session):");
            others.print("  ");
            for (cat, (c, t)) in &others.by {
                figures::record(&format!("fidelity, other agents: {cat}"), pct(*c, *t), "%", "items", *t as f64);
            }
            figures::record(
                "fidelity, other agents: overall",
                pct(others.carried(), others.total()),
                "%",
                "items",
                others.total() as f64,
            );
        }
        figures::record("SessionStart hook, median", s50, "ms", "/bin/true", b50);
        let at = |cat: &str| live.by.get(cat).map(|(c, t)| pct(*c, *t)).unwrap_or(100.0);
        figures::target("todo items with correct status ≥ 90%", at("todos") >= 90.0);
        figures::target("stated next steps ≥ 80%", at("next steps") >= 80.0);
        figures::target("unresolved failures with their error line ≥ 80%", at("failures") >= 80.0);
        figures::target("edited files ≥ 95%", at("files") >= 95.0);
        figures::target("decisions and facts ≥ 50%", at("decisions") >= 50.0);
        figures::target("overall ≥ 90%", pct(live.carried(), live.total()) >= 90.0);
        let (c, t) = live.other_than("files");
        figures::target("items other than files ≥ 85%", pct(c, t) >= 85.0);
        figures::target("context ≤ 6,000 chars", max <= 6000);
        // On a loaded machine every process starts slowly: then the ratio to /bin/true's start,
        // measured in the same run, is what says whether the hook costs more than it should.
        figures::target("SessionStart median ≤ 5 ms, or ≤ 3× /bin/true's", s50 <= 5.0 || s50 <= 3.0 * b50);
        figures::finish("fidelity", false)
    }

    /// The other agents' real sessions, each imported into a fresh project and scored on its
    /// context; their totals.
    fn other_agents(env: &Env) -> Totals {
        let (dir, files) = inputs::transcripts("CCMEM_FIDELITY_AGENT_TRANSCRIPTS", "agent-transcripts");
        let mut totals = Totals::default();
        let mut per_agent: BTreeMap<&str, Totals> = BTreeMap::new();
        if files.is_empty() {
            println!("fidelity: no other agents' sessions in {} (set CCMEM_FIDELITY_AGENT_TRANSCRIPTS)", dir.display());
            return totals;
        }
        println!();
        println!("other agents' sessions from {}", dir.display());
        for (n, file) in files.iter().enumerate() {
            let name =
                file.file_name().map(|f| f.to_string_lossy().trim_end_matches(".gz").to_string()).unwrap_or_default();
            let bytes = read_maybe_gz(file);
            let recorded = String::from_utf8_lossy(&bytes);
            let head: Vec<&str> = recorded.lines().take(5).collect();
            let document: Option<Value> = serde_json::from_str(&recorded).ok();
            let (agent, truth) = if head.iter().any(|l| l.contains("\"type\":\"session_meta\"")) {
                ("Codex", Truth::extract_codex(&recorded))
            } else if head.iter().any(|l| l.contains("\"type\":\"session\"")) {
                ("Pi, Oh My Pi", Truth::extract_pi(&recorded))
            } else if head.iter().any(|l| l.contains("\"type\":\"session.start\"")) {
                ("Copilot CLI", Truth::extract_copilot(&recorded))
            } else if let Some(doc) = document.as_ref().filter(|d| d["info"]["id"].is_string()) {
                ("OpenCode", Truth::extract_opencode(doc))
            } else if let Some(doc) = document.as_ref().filter(|d| d["sessionId"].is_string()) {
                ("Gemini CLI", Truth::extract_gemini(doc))
            } else {
                println!("{name}: not a format this bench reads; skipped");
                continue;
            };
            let plain = env.path().join(&name);
            std::fs::write(&plain, &bytes).expect("write session");
            let root = repo(env, &format!("agent{n}"));
            let out = env.ctl(&[
                "import",
                plain.to_str().unwrap_or_default(),
                "--project",
                root.to_str().unwrap_or_default(),
            ]);
            assert_ok(&out, "ccmemctl import");
            let ctx = text(&env.ctl(&["context", root.to_str().unwrap_or_default()]).stdout);
            let score = truth.score(&ctx);
            println!("{name}: context {} chars", ctx.chars().count());
            score.print("  ");
            if std::env::var_os("CCMEM_FIDELITY_SHOW").is_some() {
                println!("{ctx}\n");
            }
            totals.add(&score);
            per_agent.entry(agent).or_default().add(&score);
        }
        println!();
        println!("other agents, each apart:");
        for (agent, t) in &per_agent {
            let (c, n) = (t.carried(), t.total());
            println!("  {agent:<13} {c:>3} of {n:<3} {:>5.1}%", pct(c, n));
            figures::record(&format!("fidelity, other agents: {agent}"), pct(c, n), "%", "items", n as f64);
        }
        figures::target(
            "other agents: ≥ 90% of items, each agent apart",
            per_agent.values().all(|t| pct(t.carried(), t.total()) >= 90.0),
        );
        totals
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
        /// Carried and total of every category but `cat`.
        fn other_than(&self, cat: &str) -> (usize, usize) {
            self.by.iter().filter(|(k, _)| k.as_str() != cat).fold((0, 0), |(c, t), (_, v)| (c + v.0, t + v.1))
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
    pub(crate) struct Score {
        pub(crate) items: BTreeMap<String, Vec<(String, bool)>>,
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
}

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    bench::main()
}

/// Elsewhere it says so and fails: it measures nothing there.
#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!("this benchmark runs on Linux and macOS: it drives ccmemd over Unix sockets");
    std::process::ExitCode::FAILURE
}
