//! Journal benchmark: `cargo bench --bench journal`.
//!
//! The real Claude Code transcripts of the dev set (`../shared/transcripts/`, or the directory
//! in `CCMEM_JOURNAL_TRANSCRIPTS`) are read as `ccmemctl import` reads them, each payload
//! made the neutral hook the daemon makes of it, with its replay. Then 20 sessions (threads,
//! a transcript each, round robin) append their events to one journal at once, each waiting
//! for its event to be durable before the next, as an agent's hook waits for its answer:
//!
//! - **append**: from the append to its acknowledgement (committed), per event, as the daemon
//!   does it: the event with its replay, the session's whole state at most once a second.
//! - **baseline**, in the same run, on a new journal: the same events, each with the
//!   session's whole state (the first design: a state with every event).
//!
//! Size: bytes of database (and its log) per event once all are in, against the JSON
//! archives of today (each session written as `sessions/*.json` holds it), same sessions.

mod figures;
mod inputs;

use ccmem_daemon::agent::hooks;
use ccmem_daemon::journal::{Entry, Journal};
use ccmem_proto::model::session::Session;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Sessions appending at once.
const SESSIONS: usize = 20;
/// The session's state goes with an event at most this often (as the daemon does it).
const STATE_EVERY: Duration = Duration::from_secs(1);

/// One event as the daemon journals it: the entry and its replay, and the session after it.
struct Event {
    entry: Entry,
    state: Arc<Session>,
}

/// A transcript's events, applied in order to a session of project `root`.
fn events(transcript: &Path, root: &Path, sid: &str) -> Vec<Event> {
    let now = chrono::Utc::now();
    let mut s = ccmem_daemon::session::rules::start(root.to_path_buf(), "bench".into(), sid.into(), now, None);
    let mut out = Vec::new();
    let _ = ccmem_client::import::replay(transcript, root, |p| {
        let Some(h) = hooks::parse(p) else { return Ok(()) };
        let at = h.at.unwrap_or(now);
        hooks::apply(&mut s, &h, at);
        let replay = ccmem_daemon::project::replay::hook_json(&h);
        let text = match &h.kind {
            hooks::Kind::Prompt { text } => text.clone(),
            hooks::Kind::ToolUse { tool: hooks::Tool::Shell { command, .. }, .. } => command.clone(),
            hooks::Kind::ToolUse { name, .. } => name.clone(),
            hooks::Kind::Stop { last_message, .. } => last_message.clone().unwrap_or_default(),
            _ => String::new(),
        };
        let kind = match &h.kind {
            hooks::Kind::Prompt { .. } => "prompt",
            hooks::Kind::ToolUse { tool: hooks::Tool::Shell { .. }, .. } => "command",
            hooks::Kind::ToolUse { .. } => "tool",
            hooks::Kind::Stop { .. } => "stop",
            hooks::Kind::Compacted { .. } => "compacted",
            hooks::Kind::PreCompact { .. } => "precompact",
            hooks::Kind::Notification { .. } => "notification",
            _ => "other",
        };
        let entry = Entry {
            root: root.to_path_buf(),
            root_name: "bench".into(),
            session: sid.into(),
            at_ms: at.timestamp_millis(),
            source: "import",
            kind,
            agent: Some("Claude Code".into()),
            conversation: h.conversation.clone(),
            text,
            replay,
            ..Entry::default()
        };
        out.push(Event { entry, state: Arc::new(s.clone()) });
        Ok(())
    });
    out
}

/// Appends every session's events at once, `every_state` or as the daemon does; returns the
/// latencies in microseconds (to the acknowledgement, and of the call alone: redaction,
/// serialization, queueing) and the wall time.
fn run(dir: &Path, sessions: &[Vec<Event>], every_state: bool) -> (Vec<f64>, Vec<f64>, Duration) {
    let journal = Journal::open(dir, ccmem_daemon::journal::Retention::default());
    let barrier = Arc::new(Barrier::new(sessions.len()));
    let started = Instant::now();
    let lat: Vec<(f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .iter()
            .map(|events| {
                let (journal, barrier) = (journal.clone(), barrier.clone());
                scope.spawn(move || {
                    barrier.wait();
                    let mut last_state: Option<Instant> = None;
                    let mut lat = Vec::with_capacity(events.len());
                    for e in events {
                        let due = every_state || last_state.is_none_or(|t| t.elapsed() >= STATE_EVERY);
                        let t = Instant::now();
                        let state = due.then_some(&*e.state);
                        if due {
                            last_state = Some(Instant::now());
                        }
                        let entry = e.entry.clone();
                        let ack = journal.append(vec![entry], state);
                        let call = t.elapsed().as_secs_f64() * 1e6;
                        if let Some(ack) = ack {
                            let _ = ack.blocking_recv();
                        }
                        lat.push((t.elapsed().as_secs_f64() * 1e6, call));
                    }
                    lat
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a session thread")).collect()
    });
    let wall = started.elapsed();
    assert!(journal.health().problems().is_empty(), "journal problems: {:?}", journal.health().problems());
    drop(journal);
    // The writer folds its log in once every handle is gone.
    std::thread::sleep(Duration::from_millis(300));
    let (total, call) = lat.into_iter().unzip();
    (total, call, wall)
}

/// Bytes of the journal's files in `dir`.
fn journal_bytes(dir: &Path) -> u64 {
    ["journal.db", "journal.db-wal"].iter().filter_map(|f| std::fs::metadata(dir.join(f)).ok()).map(|m| m.len()).sum()
}

fn main() -> std::process::ExitCode {
    let (src, files) = inputs::transcripts("CCMEM_JOURNAL_TRANSCRIPTS", "transcripts");
    if files.is_empty() {
        eprintln!("journal bench: no transcripts in {}", src.display());
        return std::process::ExitCode::FAILURE;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let root: PathBuf = tmp.path().join("proj");
    std::fs::create_dir_all(&root).expect("mkdir");
    let quick = figures::quick();
    let mut per_transcript = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let plain = tmp.path().join(format!("t{i}.jsonl"));
        std::fs::write(&plain, inputs::read_maybe_gz(f)).expect("write transcript");
        per_transcript.push(plain);
    }
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        let sid = format!("session_20261128_0000{i:02}");
        let mut ev = events(&per_transcript[i % per_transcript.len()], &root.join(format!("p{i}")), &sid);
        if quick {
            ev.truncate(150);
        }
        sessions.push(ev);
    }
    let n: usize = sessions.iter().map(Vec::len).sum();
    let mean_state: usize = sessions
        .iter()
        .filter_map(|s| s.last())
        .map(|e| serde_json::to_string(&*e.state).map(|j| j.len()).unwrap_or(0))
        .sum::<usize>()
        / SESSIONS;
    println!("journal: {SESSIONS} sessions at once, {n} events, last state {} KB on average", mean_state / 1024);

    let base_dir = tmp.path().join("baseline");
    let (base, _, base_wall) = run(&base_dir, &sessions, true);
    let new_dir = tmp.path().join("journal");
    let (lat, call, wall) = run(&new_dir, &sessions, false);
    for (name, v, w) in [("baseline: a state with every event", &base, base_wall), ("append", &lat, wall)] {
        println!(
            "  {name:<36} p50 {:>7.0} µs  p99 {:>7.0} µs  max {:>7.0} µs  {:>6.0} events/s",
            figures::quantile(v, 0.5),
            figures::quantile(v, 0.99),
            figures::quantile(v, 1.0),
            v.len() as f64 / w.as_secs_f64()
        );
    }
    println!(
        "  {:<36} p50 {:>7.0} µs  p99 {:>7.0} µs  max {:>7.0} µs",
        "of which the call (redact, queue)",
        figures::quantile(&call, 0.5),
        figures::quantile(&call, 0.99),
        figures::quantile(&call, 1.0)
    );
    // One session alone: the append's own cost, with nothing queued before it.
    let (alone, _, _) = run(&tmp.path().join("alone"), &sessions[..1], false);
    println!(
        "  {:<36} p50 {:>7.0} µs  p99 {:>7.0} µs  max {:>7.0} µs",
        "one session alone",
        figures::quantile(&alone, 0.5),
        figures::quantile(&alone, 0.99),
        figures::quantile(&alone, 1.0)
    );
    figures::record(
        "journal append p50, one session alone",
        figures::quantile(&alone, 0.5),
        "µs",
        "20 sessions at once, same run",
        figures::quantile(&lat, 0.5),
    );
    let p99 = figures::quantile(&lat, 0.99);
    let baseline = "a state with every event (the first design), same run";
    figures::record("journal append p50", figures::quantile(&lat, 0.5), "µs", baseline, figures::quantile(&base, 0.5));
    figures::record("journal append p99", p99, "µs", baseline, figures::quantile(&base, 0.99));
    figures::record(
        "journal append call p99 (redact, serialize, queue)",
        figures::quantile(&call, 0.99),
        "µs",
        "to the commit, same run",
        p99,
    );
    figures::target("journal append ≤ 100 µs at p99 under 20 concurrent sessions", p99 <= 100.0);

    // Size: the database against the archives of the same sessions.
    let db = journal_bytes(&new_dir);
    let archives: usize = sessions
        .iter()
        .filter_map(|s| s.last())
        .map(|e| {
            let a = ccmem_proto::model::session::ArchivedSession {
                ended: ccmem_proto::model::session::EndReason::Expired,
                ended_at: String::new(),
                session: (*e.state).clone(),
            };
            serde_json::to_vec_pretty(&a).map(|v| v.len()).unwrap_or(0)
        })
        .sum();
    println!(
        "  size: {} bytes of journal per event ({} KB for {n} events); the archives of the same sessions: {} KB",
        db / n as u64,
        db / 1024,
        archives / 1024
    );
    figures::record(
        "journal bytes per event",
        (db / n as u64) as f64,
        "B",
        "JSON archives' bytes per event",
        (archives / n) as f64,
    );
    figures::finish("journal", quick)
}
