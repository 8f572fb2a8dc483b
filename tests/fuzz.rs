//! Fuzzing, proptest-driven (cargo-fuzz needs a nightly toolchain): every reader of outside
//! input gets the checked-in seed corpus of `tests/fuzz/<target>/` mutated at random —
//! bit flips, cuts, splices of two seeds, repeated chunks, the tokens the formats use — for
//! a bounded time, and must neither panic nor hang.
//!
//! Targets: protocol framing (and message parsing), hook payloads (parsed and applied to a
//! session), the session-memory.md reader, the task-list reader, memory frontmatter, and the
//! test-output parsers (with JUnit XML).
//!
//! Time per target: `CCMEM_FUZZ_SECS` (default 2). Long run:
//! `CCMEM_FUZZ_SECS=300 cargo test --release --test fuzz -- --test-threads 2`.
//! A failing input is shrunk and written to `target/fuzz-failures/`; an input that runs
//! over 5 s counts as a hang: it is written there and the run aborts.

use ccmem_daemon::{agent::hooks, observe::tasks, observe::testout, session::rules as session};
use ccmem_proto::{model::memory, model::report, wire::frame, wire::rpc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One input taking this long is a hang: generous, for a debug build on a loaded machine
/// (an input takes milliseconds; a real hang never ends).
const HANG: Duration = Duration::from_secs(60);

/// Tokens the formats are made of, spliced in at random.
const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"\0",
    b"---\n",
    b"|",
    b"`",
    b"```\n",
    b"# ",
    b"## ",
    b"- [ ] ",
    b"- [x] ",
    b": ",
    b"\"",
    b"'",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b"\\",
    b"\\u0000",
    b"<testcase name=\"",
    b"</testsuite>",
    b"<![CDATA[",
    b"\xff\xfe",
    b"\xe2\x80\x94",
    b"test result: ",
    b"FAILED",
    b"=====",
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"",
    b"null",
    b"1e999",
    b"-0",
    b"\t",
    b"    ",
];

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, usize),
    Delete(usize, usize),
    Truncate(usize),
    Repeat(usize, usize, usize),
    Splice(usize, usize, usize),
    Random(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Mutation::Insert(p, t)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Mutation::Delete(p, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1usize..256, 1usize..50).prop_map(|(p, n, k)| Mutation::Repeat(p, n, k)),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(p, s, q)| Mutation::Splice(p, s, q)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..32)).prop_map(|(p, b)| Mutation::Random(p, b)),
    ]
}

fn apply(mut data: Vec<u8>, muts: &[Mutation], seeds: &[Vec<u8>]) -> Vec<u8> {
    for m in muts {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match m {
            Mutation::Flip(p, b) if !data.is_empty() => {
                let i = p % data.len();
                data[i] ^= b | 1;
            }
            Mutation::Flip(..) => {}
            Mutation::Insert(p, t) => {
                let i = at(*p, data.len());
                data.splice(i..i, TOKENS[*t].iter().copied());
            }
            Mutation::Delete(p, n) => {
                let i = at(*p, data.len());
                let end = (i + n).min(data.len());
                data.drain(i..end);
            }
            Mutation::Truncate(p) => data.truncate(at(*p, data.len())),
            Mutation::Repeat(p, n, k) => {
                let i = at(*p, data.len());
                let end = (i + n).min(data.len());
                let chunk = data[i..end].to_vec();
                for _ in 0..*k {
                    data.splice(end..end, chunk.iter().copied());
                }
            }
            Mutation::Splice(p, s, q) => {
                let other = &seeds[s % seeds.len()];
                let i = at(*p, data.len());
                let j = at(*q, other.len());
                data.truncate(i);
                data.extend_from_slice(&other[j..]);
            }
            Mutation::Random(p, b) => {
                let i = at(*p, data.len());
                data.splice(i..i, b.iter().copied());
            }
        }
        data.truncate(1 << 20);
    }
    data
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

fn failures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures")
}

fn keep(target: &str, what: &str, input: &[u8]) -> PathBuf {
    let dir = failures_dir();
    let _ = std::fs::create_dir_all(&dir);
    let name = format!(
        "{target}-{what}-{:016x}.bin",
        input.iter().fold(0xcbf29ce484222325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100000001b3))
    );
    let p = dir.join(name);
    let _ = std::fs::write(&p, input);
    p
}

/// Runs `check` on mutated seeds of `target` for the time budget; every seed as is first.
fn fuzz(target: &'static str, check: fn(&[u8])) {
    let secs: f64 = std::env::var("CCMEM_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let seeds = Arc::new(corpus(target));
    for s in seeds.iter() {
        check(s);
    }
    // The watchdog: an input running over HANG is written out and the run aborted.
    let current: Arc<Mutex<(Instant, Vec<u8>)>> = Arc::new(Mutex::new((Instant::now(), Vec::new())));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (current, done) = (current.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let c = current.lock().unwrap_or_else(|e| e.into_inner());
                if c.0.elapsed() > HANG && !c.1.is_empty() {
                    let p = keep(target, "hang", &c.1);
                    eprintln!("fuzz {target}: an input ran over {HANG:?}; kept in {}", p.display());
                    std::process::abort();
                }
            }
        })
    };
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 0..12));
    let config = Config { cases: 256, failure_persistence: None, ..Config::default() };
    // A runner runs its number of cases once; each round gets a fresh one, its randomness
    // drawn from this one's.
    let mut source = TestRunner::new(config.clone());
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let cases = Arc::new(std::sync::atomic::AtomicU64::new(0));
    while Instant::now() < deadline {
        let mut runner = TestRunner::new_with_rng(config.clone(), source.new_rng());
        let (s, c, n) = (seeds.clone(), current.clone(), cases.clone());
        let outcome = runner.run(&strategy, move |(i, muts)| {
            n.fetch_add(1, Ordering::Relaxed);
            let input = apply(s[i].clone(), &muts, &s);
            *c.lock().unwrap_or_else(|e| e.into_inner()) = (Instant::now(), input.clone());
            let r = std::panic::catch_unwind(|| check(&input));
            c.lock().unwrap_or_else(|e| e.into_inner()).1.clear();
            r.map_err(|_| TestCaseError::fail(format!("panicked on {} bytes", input.len())))
        });
        if let Err(e) = outcome {
            done.store(true, Ordering::Relaxed);
            let detail = match &e {
                proptest::test_runner::TestError::Fail(why, (i, muts)) => {
                    let input = apply(seeds[*i].clone(), muts, &seeds);
                    format!("{why}; minimal input kept in {}", keep(target, "panic", &input).display())
                }
                other => other.to_string(),
            };
            panic!("fuzz {target}: {detail}");
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    let cases = cases.load(Ordering::Relaxed);
    eprintln!("fuzz {target}: {cases} inputs in {secs} s, no panic, no hang");
    assert!(cases > 0 || secs <= 0.0, "fuzz {target}: no input ran");
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn framing() {
    fuzz("framing", |b| {
        // Whole, and fed in two pieces as a slow client would.
        let mut r = std::io::BufReader::with_capacity(7, b);
        let mut f = Vec::new();
        while let Ok(true) = frame::read_frame(&mut r, &mut f, 4096) {
            let _ = rpc::parse_incoming(&f);
            let _ = rpc::Response::parse(&f).map(|r| r.into_result());
        }
        let mut f = Vec::new();
        let half = b.len() / 2;
        let _ = frame::scan(&mut f, &b[..half], 4096);
        let _ = frame::scan(&mut f, &b[half..], 4096);
    });
}

#[test]
fn hook_payload() {
    fuzz("hook", |b| {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(b) else { return };
        let now = chrono::Utc::now();
        let mut s = session::start(PathBuf::from("/w/app"), "app".into(), session::new_id(now, None), now, None);
        if let Some(h) = hooks::parse(&v) {
            let _ = hooks::apply(&mut s, &h, now);
        }
    });
}

#[test]
fn session_memory_report() {
    fuzz("report", |b| {
        let t = text(b);
        let parsed = report::parse(&t);
        let _ = report::check(&t);
        let _ = report::serialize(&parsed.memory);
    });
}

#[test]
fn task_list() {
    fuzz("tasks", |b| {
        let list = tasks::parse(&text(b));
        let _ = list.status();
    });
}

#[test]
fn memory_frontmatter() {
    fuzz("memory", |b| {
        if let Ok((m, layout)) = memory::frontmatter::parse("x", memory::Scope::Project, &text(b)) {
            // Whatever reads as a memory writes back and reads again the same.
            let again = memory::frontmatter::render(&m, &layout);
            let (back, _) = memory::frontmatter::parse("x", memory::Scope::Project, &again)
                .unwrap_or_else(|e| panic!("a memory that read does not read back: {e:?}\n{again}"));
            assert_eq!(back, m, "{again}");
        }
    });
}

#[test]
fn test_output() {
    fuzz("testout", |b| {
        let t = text(b);
        let _ = testout::parse(&t, None);
        let _ = testout::parse(&t, Some("cargo"));
        let _ = testout::junit::parse(&t, None);
    });
}
