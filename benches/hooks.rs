//! Hook latency benchmark: `cargo bench --bench hooks`.
//!
//! Whole-process `ccmemctl hook` per event, fed a payload on stdin, beside `/bin/true` given
//! the same stdin in the same run (interleaved, so both see the same machine): Claude Code's
//! events, and each other agent's (`hook --agent NAME`, the payloads the real CLIs sent, in
//! tests/fixtures/<agent>/; Codex's shell call reads its rollout's end, Gemini CLI's
//! AfterAgent its chat's). SessionStart is measured with a full context: a session with
//! hundreds of files, todos, facts, goals and prompts.
//!
//! Targets (issue 5, issue 31): median ≤ 3× `/bin/true` for every agent's tool event and
//! Stop; SessionStart with a full context ≤ 5 ms. `CCMEM_BENCH_QUICK=1` for a short run.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures};
    use common::*;
    use figures::quantile as q;
    use serde_json::{json, Value};
    use std::io::Write;
    use std::process::{Command, Stdio};

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let runs = if quick { 40 } else { 300 };
        println!(
            "ccmem hook latency benchmark ({} cores, {runs} runs per event){}",
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            if quick { " [quick]" } else { "" }
        );
        println!();
        let env = Env::new();
        let d = env.start_daemon(&[]);
        let root = repo(&env, "app");
        fill(&env, &root);

        let ev = |name: &str, extra: Value| ev(&root, "bench-conv", name, extra).to_string().into_bytes();
        let agent =
            |agent: &str, fixture: &str, transcript: Option<&str>| agent_payload(&root, agent, fixture, transcript);
        let events: Vec<(&str, Vec<u8>)> = vec![
            (
                "PostToolUse (Edit)",
                ev(
                    "PostToolUse",
                    json!({"tool_name": "Edit", "tool_input": {"file_path": root.join("src/lib.rs"), "old_string": "a", "new_string": "b"}, "tool_response": {"filePath": "src/lib.rs", "oldString": "a", "newString": "b"}}),
                ),
            ),
            (
                "PostToolUse (TodoWrite)",
                ev(
                    "PostToolUse",
                    json!({"tool_name": "TodoWrite", "tool_input": {"todos": [{"content": "a", "status": "in_progress", "activeForm": "a-ing"}, {"content": "b", "status": "pending", "activeForm": "b-ing"}]}}),
                ),
            ),
            (
                "PostToolUse (Bash, 200 KB output)",
                ev(
                    "PostToolUse",
                    json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "test ok\n".repeat(25_000), "stderr": ""}}),
                ),
            ),
            (
                "PostToolUseFailure (failing cargo test)",
                ev(
                    "PostToolUseFailure",
                    json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": format!("Exit code 101\n{}", include_str!("../daemon/fixtures/testout/cargo-fail.txt").repeat(20))}),
                ),
            ),
            ("UserPromptSubmit", ev("UserPromptSubmit", json!({"prompt": "add rate limiting to the login endpoint"}))),
            ("Stop", ev("Stop", json!({"stop_hook_active": false, "last_assistant_message": "Done."}))),
            ("SessionStart (full context)", ev("SessionStart", json!({"source": "resume"}))),
            (
                "codex PostToolUse (Bash, exit from rollout)",
                agent("codex", "post-tool-use-bash-failed.json", Some("rollout-tail.jsonl")),
            ),
            ("codex Stop", agent("codex", "stop.json", None)),
            ("gemini AfterTool (run_shell_command)", agent("gemini", "after-tool-shell-failed.json", None)),
            ("gemini AfterTool (write_todos)", agent("gemini", "after-tool-write-todos.json", None)),
            ("gemini AfterAgent (words from chat)", agent("gemini", "after-agent.json", Some("chat-tail.jsonl"))),
            ("opencode tool.execute.after (bash)", agent("opencode", "plugin-events.jsonl:4", None)),
            ("opencode session.idle", agent("opencode", "plugin-events.jsonl:6", None)),
            ("pi tool_result (bash)", agent("pi", "extension-events.jsonl:3", None)),
            ("pi agent_end", agent("pi", "extension-events.jsonl:5", None)),
            ("gemini SessionStart (full context)", agent("gemini", "session-start-resume.json", None)),
        ];
        let ctx_len = {
            let full = events.iter().find(|e| e.0 == "SessionStart (full context)").expect("SessionStart");
            let out = run(&env, &full.1, true);
            let v: Value = serde_json::from_slice(&out).expect("SessionStart output");
            v["hookSpecificOutput"]["additionalContext"].as_str().map(|s| s.chars().count()).unwrap_or(0)
        };
        println!(
            "{:<40} {:>9} {:>9}   {:>9} {:>9}   {:>7}",
            "event", "median ms", "p99 ms", "true med", "true p99", "ratio"
        );
        let mut results = Vec::new();
        for (name, payload) in &events {
            let (mut h, mut t) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                h.push(figures::time_ms(|| {
                    run(&env, payload, false);
                }));
                t.push(figures::time_ms(|| {
                    let mut c = Command::new("/bin/true").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
                    let _ = c.stdin.take().unwrap().write_all(payload);
                    c.wait().unwrap();
                }));
            }
            let (hm, hp, tm, tp) = (q(&h, 0.5), q(&h, 0.99), q(&t, 0.5), q(&t, 0.99));
            println!("{name:<40} {hm:>9.3} {hp:>9.3}   {tm:>9.3} {tp:>9.3}   {:>6.2}×", hm / tm);
            figures::record(&format!("hook {name}, median"), hm, "ms", "/bin/true, median", tm);
            figures::record(&format!("hook {name}, p99"), hp, "ms", "/bin/true, p99", tp);
            results.push((*name, hm, tm));
        }
        println!();
        println!("SessionStart printed {ctx_len} characters of context");
        checkpoint_cost(&env, &root, runs / 4);
        assert!(!d.log().contains("panicked"));
        println!("targets:");
        let ratio = |n: &str| results.iter().find(|r| r.0.starts_with(n)).map(|r| r.1 / r.2).unwrap_or(f64::NAN);
        let post = results
            .iter()
            .filter(|r| r.0.starts_with("PostToolUse (Edit)") || r.0.starts_with("PostToolUse (TodoWrite)"))
            .all(|r| r.1 <= 3.0 * r.2);
        figures::target(
            &format!(
                "PostToolUse median ≤ 3× /bin/true (Edit {:.2}×, TodoWrite {:.2}×)",
                ratio("PostToolUse (Edit)"),
                ratio("PostToolUse (TodoWrite)")
            ),
            post,
        );
        figures::target(&format!("Stop median ≤ 3× /bin/true ({:.2}×)", ratio("Stop")), ratio("Stop") <= 3.0);
        for agent in ["codex", "gemini", "opencode", "pi"] {
            let of: Vec<&(&str, f64, f64)> =
                results.iter().filter(|r| r.0.starts_with(agent) && !r.0.contains("SessionStart")).collect();
            let worst = of.iter().map(|r| r.1 / r.2).fold(0.0, f64::max);
            figures::target(
                &format!("{agent}'s tool and stop events, median ≤ 3× /bin/true (at most {worst:.2}×)"),
                worst <= 3.0,
            );
        }
        let ss = results.iter().filter(|r| r.0.contains("SessionStart")).map(|r| r.1).fold(0.0, f64::max);
        figures::target(&format!("SessionStart with a full context ≤ 5 ms, any agent ({ss:.2} ms)"), ss <= 5.0);
        figures::finish("hooks", quick)
    }

    /// A manual checkpoint of the busy session (the state file and the report, each written
    /// atomically), against writing and syncing the same bytes once.
    fn checkpoint_cost(env: &Env, root: &std::path::Path, n: usize) {
        let mut times = Vec::new();
        for _ in 0..n.max(5) {
            times.push(figures::time_ms(|| {
                env.request("session.checkpoint", json!({"path": root, "reason": "manual"}));
            }));
        }
        let state = std::fs::read(root.join(".claude/.project-state.json")).expect("state file");
        let report = std::fs::read(root.join(".claude/session-memory.md")).expect("report");
        let mut base = Vec::new();
        for _ in 0..n.max(5) {
            base.push(figures::time_ms(|| {
                for (name, bytes) in [("a", &state), ("b", &report)] {
                    let p = root.join(format!(".claude/bench-{name}"));
                    let mut f = std::fs::File::create(&p).unwrap();
                    f.write_all(bytes).unwrap();
                    f.sync_all().unwrap();
                }
            }));
        }
        let (cm, bm) = (q(&times, 0.5), q(&base, 0.5));
        println!(
        "checkpoint (manual, with report): median {cm:.3} ms, p99 {:.3} ms; state file {} KB, report {} KB; plain write+fsync of both {bm:.3} ms",
        q(&times, 0.99),
        state.len() / 1024,
        report.len() / 1024
    );
        figures::record("checkpoint write, median", cm, "ms", "write+fsync of the same bytes", bm);
        figures::record(
            "checkpoint write, p99",
            q(&times, 0.99),
            "ms",
            "write+fsync of the same bytes, p99",
            q(&base, 0.99),
        );
        // What the checkpoint holds of the session: seed 004's extract against the whole
        // session the daemon keeps (compact JSON, as status sends it).
        let session = env.request("status", json!({"path": root}))["project"]["session"].to_string();
        figures::record(
            "checkpoint state file size",
            state.len() as f64 / 1024.0,
            "KiB",
            "the whole session as JSON (KiB)",
            session.len() as f64 / 1024.0,
        );
    }

    /// A busy session: 300 files, 40 todos, 60 facts, 10 goals, prompts.
    fn fill(env: &Env, root: &std::path::Path) {
        for i in 0..300 {
            env.event(root, json!({"kind": "file_edited", "path": format!("src/module_{i}/file_{i}.rs"), "summary": "Edit: 3 → 5 lines", "workflow": "Edit"}));
        }
        let todos: Vec<Value> = (0..40)
        .map(|i| {
            let status = ["completed", "in_progress", "pending"][i % 3];
            json!({"content": format!("Task number {i}: do the thing properly"), "status": status, "activeForm": format!("Doing task {i}")})
        })
        .collect();
        env.event(root, json!({"kind": "todos", "todos": todos}));
        for i in 0..5 {
            let p = json!({"session_id": "bench-conv", "cwd": root, "hook_event_name": "UserPromptSubmit", "prompt": format!("prompt {i}: refactor the module and keep the tests green")});
            run(env, p.to_string().as_bytes(), false);
        }
        let mut said = String::new();
        for i in 0..60 {
            said.push_str(&format!("[REMEMBER: fact number {i} about the project's conventions] "));
        }
        for i in 0..10 {
            said.push_str(&format!("[GOAL: goal number {i} | DEADLINE: next week] "));
        }
        let stop =
            json!({"session_id": "bench-conv", "cwd": root, "hook_event_name": "Stop", "last_assistant_message": said});
        run(env, stop.to_string().as_bytes(), false);
        std::thread::sleep(std::time::Duration::from_millis(500));
    }

    /// A payload an agent's real CLI sent (`file`, or `file:N`, the Nth line of a captured
    /// stream), in this project and this conversation, with its transcript a fixture of the
    /// agent's, tagged for `hook --agent`.
    fn agent_payload(root: &std::path::Path, agent: &str, fixture: &str, transcript: Option<&str>) -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(agent);
        let (file, line) = match fixture.split_once(':') {
            Some((f, n)) => (f, n.parse::<usize>().ok()),
            None => (fixture, None),
        };
        let text = std::fs::read_to_string(dir.join(file)).expect("fixture");
        let text = match line {
            Some(n) => text.lines().nth(n).expect("line").to_string(),
            None => text,
        };
        let mut v: Value = serde_json::from_str(&text).expect("fixture JSON");
        v["cwd"] = json!(root);
        v["session_id"] = json!(format!("bench-{agent}"));
        match transcript {
            Some(t) => v["transcript_path"] = json!(dir.join(t)),
            None => {
                if let Some(m) = v.as_object_mut() {
                    m.remove("transcript_path");
                }
            }
        }
        let mut bytes = format!("{agent}\n").into_bytes();
        bytes.extend(v.to_string().into_bytes());
        bytes
    }

    /// Runs `ccmemctl hook` on `payload`: a payload whose first line names an agent is that
    /// agent's (`hook --agent NAME`).
    fn run(env: &Env, payload: &[u8], capture: bool) -> Vec<u8> {
        let (args, payload): (Vec<&str>, &[u8]) = match payload.iter().position(|b| *b == b'\n') {
            Some(at) if payload[0] != b'{' => {
                let agent = std::str::from_utf8(&payload[..at]).expect("agent");
                (vec!["hook", "--agent", agent], &payload[at + 1..])
            }
            _ => (vec!["hook"], payload),
        };
        let mut c = env
            .ctl_cmd(&args)
            .stdin(Stdio::piped())
            .stdout(if capture { Stdio::piped() } else { Stdio::null() })
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(payload).unwrap();
        c.wait_with_output().unwrap().stdout
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
