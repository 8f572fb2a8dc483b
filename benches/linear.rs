//! CPU linear in the input, for every reader of outside text: `cargo bench --bench linear`.
//!
//! An agent's message, a tool's output, a repository's task list, a memory file and a hook's
//! payload are written by someone else, and a shape that costs a reader quadratic time
//! (a run of `[` each scanned to the end, a payload parsed again at every read) turns a
//! 4 MB message into minutes of a daemon thread. Each reader here gets each adversarial
//! shape at two sizes, n and 4n, in the same run: the time at 4n against the time at n is
//! about 4 for a linear reader and 16 for a quadratic one.
//!
//! Target: every ratio ≤ 8. `CCMEM_BENCH_QUICK=1` runs a quarter of the size.

#[cfg(unix)]
#[path = "../tests/common/mod.rs"]
mod common;
#[cfg(unix)]
mod figures;

// The benchmark drives ccmemd over Unix sockets (and reads /proc where there is one).
#[cfg(unix)]
mod bench {
    use super::{common, figures};
    use ccmem_daemon::{agent::intents, agent::transcript, observe::tasks, observe::testout, text};
    use ccmem_proto::model::{memory, report, session::Digest};
    use std::io::Write;

    /// The shapes: each a unit repeated to the size wanted.
    const SHAPES: &[(&str, &str)] = &[
        ("brackets", "["),
        ("markers", "[REMEMBER: "),
        ("closed markers", "[x] "),
        ("braces", "{"),
        ("quotes", "\""),
        ("curly quotes", "“"),
        ("backslashes", "\\"),
        ("backticks", "`"),
        ("fences", "```\n"),
        ("stars", "*"),
        ("underscores", "_"),
        ("angles", "<"),
        ("tags", "<a>"),
        ("links", "[a]("),
        ("parens", "("),
        ("list items", "\n- [ ] "),
        ("headings", "\n## "),
        ("quote lines", "\n> "),
        ("words", "the token is "),
        ("cjk", "決定した。"),
        ("newlines", "\n"),
        ("whole markers", "[REMEMBER: a] "),
        ("global markers", "[REMEMBER GLOBAL: a] "),
        ("goal lines", "[GOAL: g]\n"),
        ("lists joined", "\"\".join([\"abcd\", \"efgh\", "),
        ("apostrophes", "'a "),
        ("colons", "a: "),
        ("elements", "<a></a>"),
        ("end tags closing nothing", "a <b> </i> "),
        ("html blocks", "<div>\n\n"),
        ("bold", "**a** "),
        ("tildes", "~"),
        ("pipes", "|"),
        ("link definitions", "[a]: b\n"),
        ("footnotes", "[^a]"),
        ("images", "![a](b) "),
    ];

    /// Readers of one text, by name.
    type Reader = (&'static str, fn(&str));

    const READERS: &[Reader] = &[
        ("intents::detect", |t| drop(intents::detect(t))),
        ("intents::own_lines", |t| drop(intents::own_lines(t))),
        ("intents::quotation_mask", |t| drop(intents::quotation_mask(t))),
        ("transcript::last_words", |t| drop(transcript::last_words(t))),
        ("transcript::findings", |t| drop(transcript::findings(t))),
        ("transcript::points", |t| drop(transcript::points(t))),
        ("transcript::take_message", |t| transcript::take_message(&mut Digest::default(), t, "2026-01-01T00:00:00Z")),
        ("text::redact_markdown", |t| drop(text::redact_markdown(t))),
        ("text::clean", |t| drop(text::clean(t))),
        ("redact::redact", |t| drop(ccmem_proto::redact::redact(t))),
        ("testout::parse", |t| drop(testout::parse(t, None))),
        ("tasks::parse", |t| drop(tasks::parse(t))),
        ("report::parse", |t| drop(report::parse(t))),
        ("memory frontmatter", |t| {
            drop(memory::frontmatter::parse("m", memory::Scope::Project, &format!("---\ntype: learning\n---\n{t}")))
        }),
    ];

    fn repeat(unit: &str, size: usize) -> String {
        unit.repeat(size / unit.len() + 1)
    }

    /// The best of three runs, in milliseconds (the machine is shared: the least disturbed one).
    fn best(f: impl Fn()) -> f64 {
        (0..3).map(|_| figures::time_ms(&f)).fold(f64::INFINITY, f64::min)
    }

    pub(crate) fn main() -> std::process::ExitCode {
        let n = if figures::quick() { 16 << 10 } else { 64 << 10 };
        println!("ccmem linear-time benchmark: each reader at {} and {} KiB", n >> 10, (4 * n) >> 10);
        let mut worst: Vec<(f64, String)> = Vec::new();
        for (reader, f) in READERS {
            for (shape, unit) in SHAPES {
                let (small, large) = (repeat(unit, n), repeat(unit, 4 * n));
                let a = best(|| f(&small)).max(0.05);
                let b = best(|| f(&large));
                let ratio = b / a;
                figures::record(&format!("{reader} on {shape} at 4n"), b, "ms", "the same at n", a);
                worst.push((ratio, format!("{reader} on {shape}: {a:.2} ms → {b:.2} ms (×{ratio:.1})")));
            }
        }
        // The hook's payload, read by the real ccmemctl (no daemon: it reads, then gives up).
        let env = common::Env::new();
        for (shape, unit) in [("closing braces", "}"), ("nested objects", "{\"a\":"), ("strings", "\"}\\\"")] {
            let payload = |size: usize| {
                let mut p = format!("{{\"hook_event_name\":\"Stop\",\"x\":\"{}\",\"y\":", "}".repeat(size / 4));
                p.push_str(&repeat(unit, size));
                p
            };
            let run = |p: &str| {
                best(|| {
                    let mut c = env.ctl_cmd(&["hook"]);
                    c.env("CCMEM_NO_AUTOSTART", "1").stdin(std::process::Stdio::piped());
                    let mut child = c.stdout(std::process::Stdio::null()).spawn().unwrap();
                    let mut stdin = child.stdin.take().unwrap();
                    // Cut into small writes, so that many reads end in `}`.
                    for part in p.as_bytes().chunks(4096) {
                        let _ = stdin.write_all(part);
                    }
                    drop(stdin);
                    let _ = child.wait();
                })
            };
            let (a, b) = (run(&payload(4 * n)), run(&payload(16 * n)));
            let ratio = b / a.max(0.05);
            figures::record(&format!("ccmemctl hook payload of {shape} at 4n"), b, "ms", "the same at n", a);
            worst.push((ratio, format!("ccmemctl hook, payload of {shape}: {a:.1} ms → {b:.1} ms (×{ratio:.1})")));
        }
        worst.sort_by(|x, y| y.0.total_cmp(&x.0));
        println!("the ten largest ratios (4 is linear, 16 quadratic):");
        for (_, line) in worst.iter().take(10) {
            println!("  {line}");
        }
        let over: Vec<&String> = worst.iter().filter(|(r, _)| *r > 8.0).map(|(_, l)| l).collect();
        for l in &over {
            println!("  OVER: {l}");
        }
        figures::target("every reader's time at 4n is at most 8 times its time at n", over.is_empty());
        figures::finish("linear", figures::quick())
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
