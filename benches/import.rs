//! `import --all` benchmark: `cargo bench --bench import`.
//!
//! A HOME laid out like a real one: the real sessions of the dev set (`../shared/transcripts/`,
//! or `CCMEM_IMPORT_TRANSCRIPTS`) and of the other agents (`../shared/agent-transcripts/`, or
//! `CCMEM_IMPORT_AGENT_TRANSCRIPTS`) copied, each copy a conversation of its own (its id
//! changed) recorded in one of 20 projects, into each agent's store (Claude Code's
//! `~/.claude/projects`, Codex's `~/.codex/sessions`, Gemini CLI's chats, Pi's sessions,
//! Copilot CLI's session state) until the stores hold 1 GB (`CCMEM_BENCH_QUICK=1`: 40 MB, 5
//! projects). `ccmemctl import --all` takes them in through a real daemon: its throughput in
//! MB/s, beside reading and parsing the same files into hook payloads without a daemon (the
//! baseline: what no import can beat). Meanwhile an
//! agent starts sessions in another project, as its hook does (`ccmemctl hook`, its own time
//! limit): their cost during the import, beside the same hook with the daemon idle and
//! `/bin/true`; and whether each got its context. A second run imports nothing: its time.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;
#[cfg(unix)]
mod inputs;

#[cfg(unix)]
mod bench {
    use super::{common, figures, inputs};
    use ccmem_client::import::{self, Format};
    use common::*;
    use serde_json::{json, Value};
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    /// A real session, ready to be copied: its text, its agent's format, its conversation id
    /// and the directory it was recorded in (as its text writes them).
    struct Source {
        text: String,
        format: Format,
        id: String,
        origin: Option<String>,
    }

    fn sources() -> Vec<Source> {
        let (_, dev) = inputs::transcripts("CCMEM_IMPORT_TRANSCRIPTS", "transcripts");
        let (_, agents) = inputs::transcripts("CCMEM_IMPORT_AGENT_TRANSCRIPTS", "agent-transcripts");
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut out = Vec::new();
        for (i, f) in dev.iter().chain(&agents).enumerate() {
            let plain = tmp.path().join(format!("s{i}.jsonl"));
            let bytes = inputs::read_maybe_gz(f);
            std::fs::write(&plain, &bytes).expect("write");
            let Ok((format, Some(id))) = import::check(&plain) else { continue };
            // OpenCode's are in its own database, which `import --all` does not read.
            if format == Format::Opencode || id.len() < 12 || !id.is_ascii() {
                continue;
            }
            let origin = import::origin_of(&plain, format).ok().flatten();
            out.push(Source { text: String::from_utf8_lossy(&bytes).into_owned(), format, id, origin });
        }
        out
    }

    /// Puts copy `n` of `s` in its agent's store under `home`, recorded in `project`; its size.
    fn place(home: &Path, s: &Source, n: usize, project: &Path, slot: usize) -> u64 {
        // A conversation of its own: the id's last twelve characters made the copy's number.
        let id = format!("{}{:012x}", &s.id[..s.id.len() - 12], n);
        let mut text = s.text.replace(&s.id, &id);
        if let Some(o) = &s.origin {
            // As the records write it: as it is, escaped in JSON (`C:\\Users\\…`), with `/`.
            let escaped = serde_json::to_string(o).unwrap_or_default();
            let escaped = escaped.trim_matches('"').to_string();
            for form in [o.clone(), escaped, o.replace('\\', "/")] {
                text = text.replace(&form, &project.to_string_lossy());
            }
        }
        let file = match s.format {
            Format::Claude => home.join(format!(".claude/projects/-p{slot}/{id}.jsonl")),
            Format::Codex => home.join(format!(
                ".codex/sessions/2026/01/{:02}/rollout-2026-01-{:02}T00-00-00-{id}.jsonl",
                n % 28 + 1,
                n % 28 + 1
            )),
            Format::Gemini { document } => {
                let dir = home.join(format!(".gemini/tmp/h{slot}"));
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(dir.join(".project_root"), project.to_string_lossy().as_bytes());
                dir.join(format!("chats/session-{id}.{}", if document { "json" } else { "jsonl" }))
            }
            Format::Pi => home.join(format!(".pi/agent/sessions/--p{slot}--/{id}.jsonl")),
            Format::Copilot => home.join(format!(".copilot/session-state/{id}/events.jsonl")),
            Format::Opencode => return 0,
        };
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text.as_bytes()).expect("write");
        text.len() as u64
    }

    fn p(v: &[f64], q: f64) -> f64 {
        figures::quantile(v, q)
    }

    /// One SessionStart through `ccmemctl hook`, as the agent runs it: its time, and
    /// whether it got its context.
    fn session_start(env: &Env, root: &Path, n: usize) -> (f64, bool) {
        let payload = ev(root, &format!("probe-{n}"), "SessionStart", json!({"source": "startup"}));
        let t = Instant::now();
        let out = hook_with(env, payload.to_string().as_bytes(), |_| {});
        let ms = t.elapsed().as_secs_f64() * 1e3;
        (ms, text(&out.stdout).contains("additionalContext"))
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let quick = figures::quick();
        let (target_bytes, projects) = if quick { (40u64 << 20, 5) } else { (1u64 << 30, 20) };
        let sources = sources();
        if sources.is_empty() {
            eprintln!("import bench: no transcripts (set CCMEM_IMPORT_TRANSCRIPTS)");
            return std::process::ExitCode::FAILURE;
        }
        let env = Env::new();
        let roots: Vec<PathBuf> = (0..projects).map(|j| repo(&env, &format!("p{j}"))).collect();
        let (mut bytes, mut files, mut n) = (0u64, 0usize, 0usize);
        while bytes < target_bytes {
            let s = &sources[n % sources.len()];
            let slot = n % projects;
            bytes += place(&env.home, s, n, &roots[slot], slot);
            files += 1;
            n += 1;
        }
        println!("stores: {files} conversations, {:.0} MB, {projects} projects", bytes as f64 / 1e6);
        // Reading and parsing the same files into hook payloads, without a daemon: the floor
        // no import can beat.
        let read_ms = figures::time_ms(|| {
            for f in walk(&env.home) {
                let _ = import::replay(&f, &env.home, |_| Ok(()));
            }
        });

        let _d = env.start_daemon(&[]);
        let probe = repo(&env, "probe");
        let mut truth = Vec::new();
        let mut idle = Vec::new();
        for i in 0..30 {
            truth.push(figures::time_ms(|| {
                let _ = std::process::Command::new("/bin/true").output();
            }));
            idle.push(session_start(&env, &probe, i).0);
        }

        let started = Instant::now();
        let child = env
            .ctl_cmd(&["--json", "import", "--all"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("import --all");
        let (mut during, mut blind, mut k) = (Vec::new(), 0usize, 1000);
        let mut child = child;
        while child.try_wait().ok().flatten().is_none() {
            let (ms, context) = session_start(&env, &probe, k);
            during.push(ms);
            blind += usize::from(!context);
            k += 1;
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = child.wait_with_output().expect("import --all");
        let took = started.elapsed().as_secs_f64();
        assert_ok(&out, "import --all");
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let imported = summary["into_history"].as_u64().unwrap_or(0) + summary["into_live"].as_u64().unwrap_or(0);
        let events = summary["events"].as_u64().unwrap_or(0);
        for s in summary["skipped"].as_array().into_iter().flatten() {
            println!("  skipped {}: {}", s["file"].as_str().unwrap_or(""), s["why"].as_str().unwrap_or(""));
        }
        let mb_s = bytes as f64 / 1e6 / took;
        let read_mb_s = bytes as f64 / 1e6 / (read_ms / 1e3);
        println!(
            "import --all: {imported} of {files} conversations, {events} events, {:.0} MB in {took:.1} s: {mb_s:.1} MB/s \
             (reading and parsing them alone: {read_mb_s:.0} MB/s)",
            bytes as f64 / 1e6
        );
        println!(
            "SessionStart hooks during it: {} taken, p50 {:.1} ms, p95 {:.1} ms, {blind} without context \
             (idle daemon p50 {:.1} ms, /bin/true p50 {:.1} ms)",
            during.len(),
            p(&during, 0.5),
            p(&during, 0.95),
            p(&idle, 0.5),
            p(&truth, 0.5)
        );
        let again = figures::time_ms(|| {
            let out = env.ctl(&["--json", "import", "--all"]);
            assert_ok(&out, "import --all again");
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            assert_eq!(v["into_history"].as_u64().unwrap_or(0) + v["into_live"].as_u64().unwrap_or(0), 0, "{v}");
        });
        println!("import --all again (nothing new): {again:.0} ms");

        figures::record(
            "import --all throughput",
            mb_s,
            "MB/s",
            "reading and parsing the same files, same run",
            read_mb_s,
        );
        figures::record(
            "SessionStart hook during import --all, p95",
            p(&during, 0.95),
            "ms",
            "/bin/true, same run",
            p(&truth, 0.5),
        );
        figures::record(
            "SessionStart hook during import --all, p50",
            p(&during, 0.5),
            "ms",
            "the same hook, daemon idle, same run",
            p(&idle, 0.5),
        );
        figures::record("import --all again, nothing new", again, "ms", "the first run", took * 1e3);
        figures::target("import --all takes every conversation of the stores", imported as usize == files);
        figures::target("every SessionStart during import --all gets its context", blind == 0 && !during.is_empty());
        figures::target("SessionStart during import --all ≤ 250 ms at p95", p(&during, 0.95) <= 250.0);
        figures::finish("import", quick)
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
