//! Recall benchmark: `cargo bench --bench recall`.
//!
//! **Quality**, through a real daemon: the real Claude Code transcripts of the dev set
//! (`../shared/transcripts/`, or `CCMEM_RECALL_TRANSCRIPTS`) and the other agents' sessions
//! (`../shared/agent-transcripts/`, or `CCMEM_RECALL_AGENT_TRANSCRIPTS`) are imported into one
//! project (`ccmemctl import`); then each hand-written question of
//! `benches/fidelity/recall-questions.json` (what a user would type to find where a decision,
//! a failure or a file's reason was settled) is asked with `ccmemctl search`, and counted
//! when the conversation that holds the answer is among the first three hits. Each search's
//! whole cost (the process, the socket, the query) is timed beside `/bin/true`.
//!
//! **Scale**, on the journal itself: a history of 1,000 sessions of about 1,000 events each
//! (the same transcripts' events replayed under 50 projects, a year of times; 1 % of the
//! events carry Chinese, Japanese or Korean text, written for this bench, as the dev set has
//! none) is written through the journal's own append, and recall's functions are timed on it:
//! searches of one to four words taken from the events' own text, and of CJK runs, in one
//! project and across all; a session's timeline; a file's `why`. Baselines in the same run:
//! a search as a `LIKE` scan of the same table (every match, as ranking needs them), a
//! timeline as reading its session's events without their index, a `why` as a scan of every
//! event's path. `CCMEM_BENCH_QUICK=1`: 60
//! sessions.

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
    use ccmem_daemon::journal::{Entry, Journal};
    use ccmem_daemon::recall::{self, Filter};
    use common::*;
    use serde_json::Value;
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    /// Sessions and events per session in the history (full run).
    const SESSIONS: usize = 1000;
    const EVENTS_PER_SESSION: usize = 1000;
    const PROJECTS: usize = 50;
    /// Queries of each kind.
    const QUERIES: usize = 100;

    /// Text written for this bench: the dev set holds no Chinese, Japanese or Korean.
    const CJK: &[&str] = &[
        "데이터베이스 마이그레이션 스크립트를 고쳐줘",
        "마이그레이션을 끝냈습니다. 인덱스를 추가했어요",
        "ログイン画面のバグを直してください",
        "認証トークンの更新処理を修正しました",
        "请修复支付模块的错误并补充单元测试",
        "已经修复了支付模块，测试全部通过",
        "キャッシュの有効期限を五分に変更した",
        "배포 파이프라인에서 린트 단계가 실패합니다",
        "接口超时的原因是数据库连接池太小",
        "テストが不安定なのはサーバーの起動待ちが足りないから",
    ];

    /// Writes the history: `sessions` sessions cycling through `pool`'s events.
    fn write_history(dir: &Path, pool: &[Vec<Entry>], sessions: usize) -> (usize, Vec<(PathBuf, String)>) {
        let journal = Journal::open(dir, ccmem_daemon::journal::Retention::default());
        let year_ago = chrono::Utc::now().timestamp_millis() - 365 * 86_400_000;
        let mut rng = inputs::Rng(0x5eed_1234);
        let mut written = 0usize;
        let mut names = Vec::new();
        let chunks: Vec<usize> = (0..sessions).collect();
        std::thread::scope(|scope| {
            let per = sessions.div_ceil(2);
            let handles: Vec<_> = chunks
                .chunks(per)
                .map(|part| {
                    let journal = journal.clone();
                    let seed = rng.next();
                    scope.spawn(move || {
                        let mut rng = inputs::Rng(seed | 1);
                        let mut n = 0usize;
                        let mut names = Vec::new();
                        for &i in part {
                            let root = PathBuf::from(format!("/bench/p{:02}", i % PROJECTS));
                            let sid = format!("session_bench_{i:05}");
                            let start = year_ago + (i as i64) * (365 * 86_400_000 / sessions as i64);
                            let mut batch = Vec::with_capacity(EVENTS_PER_SESSION);
                            let mut k = i;
                            while batch.len() < EVENTS_PER_SESSION {
                                for e in &pool[k % pool.len()] {
                                    if batch.len() == EVENTS_PER_SESSION {
                                        break;
                                    }
                                    let mut e = e.clone();
                                    e.root = root.clone();
                                    e.root_name = "bench".into();
                                    e.session = sid.clone();
                                    e.at_ms = start + batch.len() as i64 * 5_000;
                                    e.conversation = e.conversation.map(|c| format!("{c}-{i}"));
                                    if rng.next().is_multiple_of(100) {
                                        e.text =
                                            format!("{} {}", CJK[(rng.next() % CJK.len() as u64) as usize], e.text);
                                    }
                                    batch.push(e);
                                }
                                k += 1;
                            }
                            n += batch.len();
                            names.push((root, sid));
                            for part in batch.chunks(500) {
                                if let Some(done) = journal.append(part.to_vec(), None) {
                                    let _ = done.blocking_recv();
                                }
                            }
                        }
                        (n, names)
                    })
                })
                .collect();
            for h in handles {
                let (n, mut s) = h.join().expect("writer thread");
                written += n;
                names.append(&mut s);
            }
        });
        assert!(journal.health().problems().is_empty(), "{:?}", journal.health().problems());
        drop(journal);
        std::thread::sleep(std::time::Duration::from_millis(500));
        (written, names)
    }

    /// Queries drawn from the history's own text: `words` consecutive words of an event.
    fn queries(conn: &rusqlite::Connection, rng: &mut inputs::Rng, words: usize, n: usize) -> Vec<String> {
        let max: i64 = conn.query_row("SELECT max(seq) FROM events", [], |r| r.get(0)).unwrap_or(1);
        let mut out = Vec::new();
        while out.len() < n {
            let seq = 1 + (rng.next() % max as u64) as i64;
            let Ok(text) = conn.query_row("SELECT text FROM events WHERE seq = ?1", [seq], |r| r.get::<_, String>(0))
            else {
                continue;
            };
            let toks: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_alphanumeric()))
                .collect();
            if toks.len() < words {
                continue;
            }
            let at = (rng.next() % (toks.len() - words + 1) as u64) as usize;
            out.push(toks[at..at + words].join(" "));
        }
        out
    }

    fn p(v: &[f64], q: f64) -> f64 {
        figures::quantile(v, q)
    }

    fn scale(tmp: &Path, pool: &[Vec<Entry>], quick: bool) {
        let sessions = if quick { 60 } else { SESSIONS };
        let dir = tmp.join("state");
        let t = Instant::now();
        let (n, names) = write_history(&dir, pool, sessions);
        let secs = t.elapsed().as_secs_f64();
        let db = dir.join("journal.db");
        let size = ["journal.db", "journal.db-wal"]
            .iter()
            .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
            .map(|m| m.len())
            .sum::<u64>();
        println!(
            "scale: {sessions} sessions, {n} events written in {secs:.0} s ({:.0} events/s), journal {} MB",
            n as f64 / secs,
            size / 1_048_576
        );
        let conn =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        let mut rng = inputs::Rng(0xbeef);
        let project = |i: usize| Filter { root: Some(names[i % names.len()].0.clone()), ..Filter::default() };
        let every = Filter::default();
        let count = if quick { 30 } else { QUERIES };
        let mut all_search = Vec::new();
        for words in 1..=4 {
            let qs = queries(&conn, &mut rng, words, count);
            let (mut one, mut across) = (Vec::new(), Vec::new());
            for (i, q) in qs.iter().enumerate() {
                one.push(figures::time_ms(|| {
                    let _ = recall::search(&conn, q, &project(i), 20);
                }));
                across.push(figures::time_ms(|| {
                    let _ = recall::search(&conn, q, &every, 20);
                }));
            }
            println!(
                "  search, {words} word{}: one project p50 {:.1} ms p95 {:.1} ms; every project p50 {:.1} ms p95 {:.1} ms",
                if words == 1 { "" } else { "s" },
                p(&one, 0.5),
                p(&one, 0.95),
                p(&across, 0.5),
                p(&across, 0.95)
            );
            all_search.extend(one);
            all_search.extend(across);
        }
        let cjk_queries: Vec<String> = CJK
            .iter()
            .flat_map(|line| line.split_whitespace().map(|w| w.chars().take(4).collect::<String>()))
            .filter(|w| w.chars().count() >= 2)
            .collect();
        let mut cjk = Vec::new();
        for (i, q) in cjk_queries.iter().cycle().take(count).enumerate() {
            cjk.push(figures::time_ms(|| {
                let _ = recall::search(&conn, q, &project(i), 20);
            }));
            cjk.push(figures::time_ms(|| {
                let _ = recall::search(&conn, q, &every, 20);
            }));
        }
        println!("  search, CJK runs: p50 {:.1} ms p95 {:.1} ms", p(&cjk, 0.5), p(&cjk, 0.95));
        // Baseline: the same searches as a scan of the text (a few: each reads every event).
        let mut like = Vec::new();
        for q in queries(&conn, &mut rng, 1, 5) {
            like.push(figures::time_ms(|| {
                // Every match is needed to rank them: the whole table is read.
                let _: i64 = conn
                    .query_row("SELECT count(*) FROM events WHERE text LIKE ?1", [format!("%{q}%")], |r| r.get(0))
                    .unwrap_or(0);
            }));
        }
        let search_p95 = p(&all_search, 0.95);
        figures::record(
            "recall search p95, 1-4 words",
            search_p95,
            "ms",
            "a LIKE scan of the events, same run",
            p(&like, 0.5),
        );
        figures::record(
            "recall search p95, CJK",
            p(&cjk, 0.95),
            "ms",
            "a LIKE scan of the events, same run",
            p(&like, 0.5),
        );
        figures::target("recall search ≤ 50 ms at p95 (1-4 words)", search_p95 <= 50.0);
        figures::target("recall search ≤ 50 ms at p95 (CJK)", p(&cjk, 0.95) <= 50.0);

        // Timelines of sessions, against reading and parsing a session's state.
        let (mut tl, mut state) = (Vec::new(), Vec::new());
        for _ in 0..count {
            let (root, sid) = &names[(rng.next() % names.len() as u64) as usize];
            let f = Filter { root: Some(root.clone()), session: Some(sid.clone()), ..Filter::default() };
            tl.push(figures::time_ms(|| {
                let _ = recall::timeline(&conn, &f, false, 200);
            }));
            if state.len() < 5 {
                state.push(figures::time_ms(|| {
                    let _: i64 = conn
                        .query_row(
                            "SELECT count(*) FROM events NOT INDEXED WHERE session = (SELECT id FROM sessions WHERE sid = ?1)",
                            [sid],
                            |r| r.get(0),
                        )
                        .unwrap_or(0);
                }));
            }
        }
        println!("  timeline of a session: p50 {:.1} ms p95 {:.1} ms", p(&tl, 0.5), p(&tl, 0.95));
        figures::record(
            "recall timeline p95",
            p(&tl, 0.95),
            "ms",
            "reading a session's state, same run",
            p(&state, 0.95),
        );
        figures::target("recall timeline ≤ 20 ms at p95", p(&tl, 0.95) <= 20.0);

        // `why` of files the history edited, against a scan of every event's path.
        let files: Vec<(String, String)> = {
            let mut q = conn
                .prepare("SELECT DISTINCT p.root, e.path FROM events e JOIN sessions s ON s.id = e.session JOIN projects p ON p.id = s.project WHERE e.path IS NOT NULL LIMIT 5000")
                .expect("prepare");
            q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).expect("files").flatten().collect()
        };
        let (mut why, mut scan) = (Vec::new(), Vec::new());
        for i in 0..count.min(files.len()) {
            let (root, path) = &files[(rng.next() % files.len() as u64) as usize];
            why.push(figures::time_ms(|| {
                let _ = recall::why(&conn, Path::new(root), path, 5);
            }));
            if i < 5 {
                scan.push(figures::time_ms(|| {
                    let _: i64 = conn
                        .query_row("SELECT count(*) FROM events WHERE instr(coalesce(path, ''), ?1) > 0", [path], |r| {
                            r.get(0)
                        })
                        .unwrap_or(0);
                }));
            }
        }
        println!("  why of a file: p50 {:.1} ms p95 {:.1} ms", p(&why, 0.5), p(&why, 0.95));
        figures::record("recall why p95", p(&why, 0.95), "ms", "a scan of every event's path, same run", p(&scan, 0.5));
        figures::target("recall why ≤ 100 ms at p95", p(&why, 0.95) <= 100.0);
    }

    /// The questions, through a real daemon: the share answered in the first three hits.
    fn quality(files: &[PathBuf], agents: &[PathBuf]) {
        let questions: Value =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fidelity/recall-questions.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
        let env = Env::new();
        let _d = env.start_daemon(&[]);
        let root = repo(&env, "all");
        let mut ids: HashMap<String, String> = HashMap::new();
        for f in files.iter().chain(agents) {
            let name =
                f.file_name().map(|n| n.to_string_lossy().trim_end_matches(".gz").to_string()).unwrap_or_default();
            let plain = env.path().join(&name);
            std::fs::write(&plain, inputs::read_maybe_gz(f)).expect("write transcript");
            let out =
                env.ctl(&["--json", "import", plain.to_str().unwrap_or(""), "--project", root.to_str().unwrap_or("")]);
            assert_ok(&out, "ccmemctl import");
            let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            ids.insert(name, summary["conversation_id"].as_str().unwrap_or("").to_string());
        }
        let (mut asked, mut found) = (0, 0);
        let (mut cost, mut truth) = (Vec::new(), Vec::new());
        for q in questions["questions"].as_array().into_iter().flatten() {
            let (query, transcript) = (q["query"].as_str().unwrap_or(""), q["transcript"].as_str().unwrap_or(""));
            let Some(want) = ids.get(transcript) else { continue };
            asked += 1;
            let t = Instant::now();
            let out = env.ctl(&["--json", "search", query, "-n", "3", "--project", root.to_str().unwrap_or("")]);
            cost.push(t.elapsed().as_secs_f64() * 1e3);
            truth.push(figures::time_ms(|| {
                let _ = std::process::Command::new("/bin/true").output();
            }));
            let hits: Vec<Value> = text(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            if hits.iter().any(|h| h["conversation"].as_str() == Some(want.as_str())) {
                found += 1;
            } else {
                println!("  not in the first three: {query:?} (wanted {transcript})");
            }
        }
        let share = if asked == 0 { f64::NAN } else { 100.0 * found as f64 / asked as f64 };
        println!(
            "quality: {found} of {asked} questions ({share:.1} %) find their conversation in the first three hits; \
             `ccmemctl search` p50 {:.1} ms (/bin/true {:.1} ms)",
            p(&cost, 0.5),
            p(&truth, 0.5)
        );
        figures::record("recall questions answered in the first 3 hits", share, "%", "questions asked", asked as f64);
        figures::record(
            "ccmemctl search, whole command, p50",
            p(&cost, 0.5),
            "ms",
            "/bin/true, same run",
            p(&truth, 0.5),
        );
        figures::target(
            "recall: the right conversation in the first 3 hits for ≥ 90 % of the questions",
            share >= 90.0,
        );
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let (dir, files) = inputs::transcripts("CCMEM_RECALL_TRANSCRIPTS", "transcripts");
        if files.is_empty() {
            eprintln!("recall bench: no transcripts in {} (set CCMEM_RECALL_TRANSCRIPTS)", dir.display());
            return std::process::ExitCode::FAILURE;
        }
        let (_, agents) = inputs::transcripts("CCMEM_RECALL_AGENT_TRANSCRIPTS", "agent-transcripts");
        let quick = figures::quick();
        quality(&files, &agents);
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut pool = Vec::new();
        for (i, f) in files.iter().chain(&agents).enumerate() {
            let plain = tmp.path().join(format!("t{i}.jsonl"));
            std::fs::write(&plain, inputs::read_maybe_gz(f)).expect("write transcript");
            let e = inputs::journal_entries(&plain);
            if !e.is_empty() {
                pool.push(e);
            }
        }
        scale(tmp.path(), &pool, quick);
        figures::finish("recall", quick)
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
