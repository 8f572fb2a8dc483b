use super::corpus::{NEAR_MISSES, POSITIVES};
use super::*;
use proptest::prelude::*;

/// The built-in filter, compiled once for all tests.
fn filter() -> &'static Redactor {
    static F: OnceLock<Redactor> = OnceLock::new();
    F.get_or_init(|| Redactor::new(&[]).unwrap())
}

fn r(text: &str) -> String {
    filter().redact(text).into_owned()
}

#[test]
fn precision_and_recall_on_the_corpus() {
    let f = filter();
    let (mut tp, mut fn_, mut fp) = (0, 0, 0);
    let mut problems = Vec::new();
    for (text, kind, secret) in POSITIVES {
        let out = f.redact(text);
        if out.contains(&mask(kind)) && !out.contains(secret) {
            tp += 1;
        } else {
            fn_ += 1;
            problems.push(format!("missed {kind}: {text:?} → {out:?}"));
        }
    }
    for text in NEAR_MISSES {
        let out = f.redact(text);
        // Made printable (an invisible character goes), nothing else.
        if out != crate::printable::text(text) {
            fp += 1;
            problems.push(format!("shredded: {text:?} → {out:?}"));
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!(
        "redaction corpus: {} positives, {} near-misses; precision {precision:.3}, recall {recall:.3}",
        POSITIVES.len(),
        NEAR_MISSES.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn secrets_leave_nothing_behind() {
    assert_eq!(r("export DB_PASSWORD=hunter2 && run"), "export DB_PASSWORD=[REDACTED:secret] && run");
    assert_eq!(
        r("git clone https://bob:s3cret@example.com/r.git"),
        "git clone https://bob:[REDACTED:url-password]@example.com/r.git"
    );
    assert_eq!(
        r("curl -H 'Authorization: Bearer abc.def.ghi' x"),
        "curl -H 'Authorization: Bearer [REDACTED:authorization]' x"
    );
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
    assert_eq!(r(&format!("key:\n{key}\nend")), "key:\n[REDACTED:private-key]\nend");
    assert_eq!(r("cut -----BEGIN PRIVATE KEY-----\nMIIE"), "cut [REDACTED:private-key]", "a cut key goes to the end");
    for (text, _, secret) in POSITIVES {
        let out = r(text);
        assert!(!out.contains(secret), "{secret} left in {out:?}");
        for secret in ["hunter2", "s3cret", "abc123", "MIIE", "wJalrXUtn", "Zm9vYmFy", "dXNlcjpw", "Zx9-Qa7"] {
            assert!(!text.contains(secret) || !out.contains(secret), "{secret} left in {out:?}");
        }
    }
}

#[test]
fn private_spans_are_dropped_whole() {
    assert_eq!(r("fix <private>my ssn is 123</private> the bug"), "fix  the bug");
    assert_eq!(r("a <PRIVATE>x\ny</PRIVATE> b <private>unclosed"), "a  b ");
    // Found by the independent tester: a nested span went only to its first close, and one
    // with spaces in its tags was not one.
    assert_eq!(r("a <private>x<private>S1</private>S2</private> b"), "a  b");
    assert_eq!(r("a <private >S3</private > b <private\n>S4</private\t> c"), "a  b  c");
    assert_eq!(r("a </private>kept<private>S5"), "a </private>kept", "a close without an open hides nothing");
}

/// Where the filter changes a text, in that text's terms: the ranges a derived text's
/// secrets are masked at in the text it came from (markdown as it reads).
#[test]
fn spans_say_where_the_text_changes() {
    let f = filter();
    let text = "x <private>p</private> key ghp_0123456789abcdefghijABCDEFGHIJ012345 and DB_PASS=hunter22";
    let spans = f.spans(text);
    let got: Vec<(&str, &str)> = spans.iter().map(|s| (&text[s.range.clone()], s.replacement.as_str())).collect();
    assert_eq!(
        got,
        [
            ("<private>p</private>", ""),
            ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED:github-token]"),
            ("hunter22", "[REDACTED:secret]"),
        ]
    );
    // Applied, they give what redact gives.
    let mut out = String::new();
    let mut last = 0;
    for s in &spans {
        out.push_str(&text[last..s.range.start]);
        out.push_str(&s.replacement);
        last = s.range.end;
    }
    out.push_str(&text[last..]);
    assert_eq!(out, r(text));
    // A mask later taken into a bigger one is one change (`abc_[REDACTED:x]` goes whole).
    assert!(f.spans("nothing to see").is_empty());
    for (text, _, _) in POSITIVES {
        let text = crate::printable::text(text);
        let spans = f.spans(&text);
        let mut out = String::new();
        let mut last = 0;
        for s in &spans {
            assert!(s.range.start >= last, "{text:?}: {spans:?}");
            out.push_str(&text[last..s.range.start]);
            out.push_str(&s.replacement);
            last = s.range.end;
        }
        out.push_str(&text[last..]);
        assert_eq!(out, r(&text), "{text:?}");
    }
}

#[test]
fn ordinary_text_is_not_copied_and_extra_patterns_apply() {
    let f = Redactor::new(&[("employee-id".into(), r"\bEMP-\d{6}\b".into())]).unwrap();
    assert!(matches!(f.redact("fix the login page"), Cow::Borrowed(_)));
    assert_eq!(f.redact("ask EMP-123456 about it"), "ask [REDACTED:employee-id] about it");
    assert!(Redactor::new(&[("bad".into(), "(".into())]).unwrap_err().contains("\"bad\""));
    let p = parse_patterns("# mine\nemployee-id = \\bEMP-\\d{6}\\b\n\nACME-[0-9]+\n", "f").unwrap();
    assert_eq!(p, [("employee-id".to_string(), r"\bEMP-\d{6}\b".to_string()), ("custom".into(), "ACME-[0-9]+".into())]);
    assert!(parse_patterns("ok = a\nbroken = (", "redact.txt").unwrap_err().starts_with("redact.txt:2: broken"));
}

#[test]
fn secrets_are_cut_out_and_what_is_around_them_stays() {
    for (text, want) in [
        ("curl -u admin:S3cretPass https://x.example.com", "curl -u admin:[REDACTED:password] https://x.example.com"),
        ("curl -sSu 'deploy:p@ss w0rd' https://x", "curl -sSu 'deploy:[REDACTED:password]' https://x"),
        ("docker login -u bob -p Hunter2pw ghcr.io", "docker login -u bob -p [REDACTED:password] ghcr.io"),
        ("redis-cli -h cache -a S3cretRedis ping", "redis-cli -h cache -a [REDACTED:password] ping"),
        ("redis://:S3cretRedis@cache:6379/0", "redis://:[REDACTED:url-password]@cache:6379/0"),
        ("https://deploy:p@ssw0rd!@host/r.git", "https://deploy:[REDACTED:url-password]@host/r.git"),
        (
            "openssl rsa -passin pass:S3cret -passout env:OUT",
            "openssl rsa -passin pass:[REDACTED:password] -passout env:OUT",
        ),
        ("mysqldump -uroot -p'S3cret pw' app", "mysqldump -uroot -p'[REDACTED:password]' app"),
        (
            "https://x.example.com/v1?api_key=abc123def456&page=2",
            "https://x.example.com/v1?api_key=[REDACTED:secret]&page=2",
        ),
        ("fly secrets set A=abc123zz B=def456yy", "fly secrets set A=[REDACTED:secret] B=[REDACTED:secret]"),
        ("AKIA0189IE5LA9K5OSN8", "[REDACTED:aws-access-key]"),
        (r#"{"auth": "ZGVwbG95OlMzY3JldFBhc3M="}"#, r#"{"auth": "[REDACTED:secret]"}"#),
        ("Authorization: Bearer abc123def456", "Authorization: Bearer [REDACTED:authorization]"),
    ] {
        assert_eq!(r(text), want, "{text}");
    }
}

/// One pass over every text of the corpus is already a fixed point: a second finds nothing
/// (the filter repeats until nothing changes, but should not need to).
#[test]
fn redaction_is_idempotent_on_the_corpus() {
    let f = filter();
    let texts = POSITIVES.iter().map(|(t, _, _)| *t).chain(NEAR_MISSES.iter().copied());
    let mut problems = Vec::new();
    for text in texts {
        let once = f.redact(text).into_owned();
        let twice = f.redact(&once).into_owned();
        if twice != once {
            problems.push(format!("{text:?}\n  once:  {once:?}\n  twice: {twice:?}"));
        }
        if f.finds(&once) {
            problems.push(format!("finds() in redacted {once:?}"));
        }
        let one_pass = f.pass(text, None).unwrap_or_else(|| text.to_string());
        if f.pass(&one_pass, None).is_some() {
            problems.push(format!("a second pass changes {one_pass:?}"));
        }
    }
    // The example from the issue: a report once written passed its own check.
    let report = "curl -H 'Authorization: Bearer [REDACTED:authorization]' x";
    if r(report) != report {
        problems.push(format!("{report:?} → {:?}", r(report)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Glue that joins fragments in reports, prompts and commands (and that rules key on).
const GLUE: &[&str] = &[
    " ",
    "\n",
    "=",
    ": ",
    "\"",
    "'",
    "&",
    "?",
    "_",
    "-",
    "/",
    "@",
    ":",
    "[",
    "]",
    "(",
    ")",
    ",",
    ";",
    "|",
    " | ",
    "token ",
    "password ",
    "Bearer ",
    "Authorization: ",
    "--token ",
    "--password=",
    "-p ",
    "curl -u ",
    "KEY=",
    "DB_PASS=",
    "export ",
    "https://",
    "user:",
    "echo ",
    "| docker login --password-stdin",
    "- ",
    "**",
    "`",
    "\u{200B}",
    "\u{00AD}",
    "é",
    "✓ ",
    "\" + \"",
    "' \\\n  '",
    "\" \"",
    "\\u0067",
    "%67",
    "ｇ",
    "А",
    "\u{301}",
    " | base64 -d",
    "пароль: ",
    "h.x:5432:d:u:",
    "private key 0x",
    "密码是",
    "パスワードは「",
    "base64 -d <<< ",
];

fn fragment() -> impl Strategy<Value = String> {
    let corpus: Vec<String> =
        POSITIVES.iter().map(|(t, _, _)| t.to_string()).chain(NEAR_MISSES.iter().map(|t| t.to_string())).collect();
    let redacted: Vec<String> = corpus.iter().map(|t| r(t)).collect();
    prop_oneof![
        3 => prop::sample::select(corpus),
        2 => prop::sample::select(redacted),
        3 => prop::sample::select(GLUE).prop_map(str::to_string),
        2 => "[ -~]{0,12}",
        1 => "[a-zA-Z0-9_]{1,40}",
        1 => "[^\\x00-\\x1f]{0,8}",
    ]
}

proptest! {
    // Failures are not written to a file beside the sources: the shrunk case is printed.
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the text, redacting twice is redacting once, and a redacted text holds
    /// nothing to find (a report written from redacted text passes `report --check`).
    #[test]
    fn redacting_twice_is_redacting_once(parts in prop::collection::vec(fragment(), 1..8)) {
        let text = parts.concat();
        let once = r(&text);
        prop_assert_eq!(r(&once), once.clone(), "text: {:?}", text);
        prop_assert!(!filter().finds(&once), "finds() in {:?}", once);
    }

    /// Where the filter says it changes a text is where it does: applied, the spans give
    /// what `redact` gives (the daemon masks a rendered message's secrets by them).
    #[test]
    fn spans_give_what_redact_gives(parts in prop::collection::vec(fragment(), 1..8)) {
        let text = crate::printable::text(&parts.concat()).into_owned();
        let mut out = String::new();
        let mut last = 0;
        for s in filter().spans(&text) {
            prop_assert!(s.range.start >= last && s.range.end <= text.len(), "{:?} in {:?}", s, text);
            out.push_str(&text[last..s.range.start]);
            out.push_str(&s.replacement);
            last = s.range.end;
        }
        out.push_str(&text[last..]);
        prop_assert_eq!(out, r(&text), "text: {:?}", text);
    }
}

/// Redacting `unit` repeated `n` times (and the result again, which stays as it is) takes
/// about four times as long as a quarter of it: sixteen times when quadratic. A ratio, not a
/// time, so that a loaded machine slows both alike; measured again once before failing, so
/// that a pause in one run is not taken for growth.
fn grows_linearly(unit: &str, n: usize) {
    use std::time::{Duration, Instant};
    let run = |text: &str| {
        let start = Instant::now();
        let once = r(text);
        assert_eq!(r(&once), once, "{unit}");
        start.elapsed()
    };
    let (small, big) = (unit.repeat(n / 4), unit.repeat(n));
    run(&small); // the rules it needs compiled first
    let slack = Duration::from_millis(50);
    let mut last = (Duration::ZERO, Duration::ZERO);
    for _ in 0..2 {
        last = (run(&small), run(&big));
        if last.1 < last.0 * 9 + slack {
            return;
        }
    }
    panic!("{unit:?}: {:?} for {} bytes, {:?} for four times as many", last.0, small.len(), last.1);
}

/// Long lines of near-matches take linear time: a match that held no secret is looked into
/// again only within a budget (these took a minute each before the budget).
#[test]
fn long_lines_of_near_matches_take_linear_time() {
    for (unit, n) in [
        ("curl ", 8000),
        ("token=$a=", 4500),
        ("key=", 10000),
        ("vault ", 7000),
        ("curl -u a:$b ", 3000),
        ("docker exec db sh -c \"mysql -p$X\" ", 1200),
        ("--token \"", 4000),
        ("token=abc123secret ", 2000),
        ("API key `", 3000),
        ("the api key is 'abcdefgh ", 2000),
        ("auth=('a', ", 3000),
        ("password <(echo ", 4000),
        ("expect password\nsend ", 2000),
        ("ftp x <<E\nuser a ", 1500),
        ("echo 'a:b' | ", 3000),
        ("tr 'A-Za-z' 'N-ZA-Mn-za-m' <<< 'abcdefgh ", 1000),
        ("passphrase is tiger lamp ", 2000),
        ("the password on the box in the ", 2000),
        ("echo a | xargs -I{} curl -u a:{} ", 1000),
        ("pwgen 8\n", 4000),
        ("pwgen 8 pwgen pwgen ", 3000),
        ("echo $DB_PASSWORD\nq8vZ3kLmN2pX\n", 2000),
        ("| password | token |\n", 3000),
        ("| DB_PASSWORD | hunter2x99 |\n", 3000),
        ("|", 20000),
        ("supabase secrets set A=b ", 2000),
        ("set the key to ", 3000),
        ("use abcdefgh1 as the ", 2000),
        ("abcdefghijkl1 is the ", 2000),
    ] {
        grows_linearly(unit, n);
    }
}

/// The same for what the view reads through (glue, escapes, look-alikes, wrapped lines) and
/// the rules that came with it: long runs of near-matches take linear time.
#[test]
fn long_runs_of_what_reads_differently_take_linear_time() {
    for (unit, n) in [
        ("\"a1\" + ", 5000),
        ("a\"        ", 4000),
        ("\\u0067", 5000),
        ("\\", 20000),
        ("\\\\\\u0067", 3000),
        ("abcd'efgh\"ijkl", 3000),
        ("Аa1", 20000),
        ("ab1Cd2Ef3Gh4\n", 2500),
        ("ghp_\\\n", 2500),
        ("echo QUJDREVGR0hJSktMTU5P | base64 -d; ", 1000),
        ("пароль от a: ", 3000),
        ("密码是", 5000),
        ("x.y:5432:a:b:c\n", 1500),
        ("\"x.y:5432:a:b:", 3000),
        ("secret 0x", 4000),
        ("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318 ", 300),
    ] {
        grows_linearly(unit, n);
    }
}

/// Timing of the filter on the text the daemon takes in: `cargo test --release -p ccmem-proto
/// redact::tests::timing -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check: run it with --ignored --nocapture in release"]
fn timing() {
    use std::time::Instant;
    let f = filter();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut code = String::new();
    for dir in ["daemon/src", "proto/src", "client/src"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs")
                    // The filter's own sources (and corpus) are not ordinary code; the
                    // checkout's own path may hold the word, so only the part below it counts.
                    && !p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().contains("redact")
                {
                    code.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
                }
            }
        }
    }
    let code: String = code.chars().take(1_000_000).collect();
    let log: String = (0..4000)
        .map(|i| format!("   Compiling crate-{i} v0.{i}.3 (/home/u/src/crate-{i})\ntest module::case_{i} ... ok\n"))
        .collect();
    let intl: String = (0..3000).map(|i| format!("✓ тест {i} прошёл — 完成了 {i} 项任务, ok\n")).collect();
    let short: Vec<String> = (0..20_000)
        .map(|i| match i % 4 {
            0 => format!("fix the failing test in src/module_{i}.rs and run cargo test again"),
            1 => format!("git commit -m 'step {i}: refactor the parser' && cargo build --release"),
            2 => format!("npm run build -- --mode production --port {i}"),
            _ => format!("Bash: ls -la /tmp/work-{i} | grep -v target"),
        })
        .collect();
    let time = |name: &str, texts: &[&str]| {
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        let _ = texts.iter().map(|t| f.redact(t).len()).sum::<usize>();
        let start = Instant::now();
        let mut n = 0;
        for _ in 0..3 {
            n += texts.iter().map(|t| f.redact(t).len()).sum::<usize>();
        }
        let el = start.elapsed() / 3;
        println!(
            "{name:>12}: {} texts, {} KB: {:.2} ms ({:.0} MB/s, {:.2} µs/text) [{n}]",
            texts.len(),
            bytes / 1024,
            el.as_secs_f64() * 1e3,
            bytes as f64 / el.as_secs_f64() / 1e6,
            el.as_secs_f64() * 1e6 / texts.len() as f64
        );
    };
    let shorts: Vec<&str> = short.iter().map(String::as_str).collect();
    time("short", &shorts);
    let lines: Vec<&str> = code.lines().collect();
    time("code lines", &lines);
    time("code", &[&code]);
    time("build log", &[&log]);
    time("non-ascii", &[&intl]);
    let positives: Vec<&str> = POSITIVES.iter().map(|(t, _, _)| *t).collect();
    time("positives", &positives);
}

#[test]
fn escape_sequences_and_control_characters_cannot_hide_a_secret() {
    let f = Redactor::new(&[]).unwrap();
    for (text, secret) in [
        ("the \u{1b}[1mpassword\u{1b}[0m is An06xQzLm", "An06xQzLm"),
        ("\u{1b}[0mDB_PASSWORD=\u{1b}[0mAn04xQzLm npm test", "An04xQzLm"),
        ("set \u{1b}[1mAPI_KEY=\u{1b}[0mTd03xQzLm9", "Td03xQzLm9"),
        ("ghp_aB3dE5fG7h\u{07}I9jK1lM3nO5pQ7rS9tU1vW3xZ1", "I9jK1lM3nO5pQ7rS9tU1vW3xZ1"),
        ("ghp_aB3dE5f\u{1b}[0mG7hI9jK1lM3nO5pQ7rS9tU1vW3MW03", "G7hI9jK1lM3nO5pQ7rS9tU1vW3MW03"),
        ("token=\u{1b}[0mTo04xQzLm", "To04xQzLm"),
    ] {
        let out = f.redact(text);
        assert!(!out.contains(secret) && !out.contains('\u{1b}'), "{text:?} → {out:?}");
        assert!(!f.finds(&out), "a redacted text is clean: {out:?}");
    }
    // Text with an escape sequence but no secret is not "sensitive data".
    assert!(!f.finds("\u{1b}[1mbold\u{1b}[0m and plain"));
}

/// A token read through look-alikes, escapes or glue is masked where it stands in the text:
/// the original characters, the escapes and the glue between the pieces go, what is around
/// them stays, and the spans say so.
#[test]
fn tokens_read_as_seen_are_masked_in_the_original() {
    let f = filter();
    for (text, want) in [
        ("key АKIAQ4XBV7MNP2KD6RTY here", "key [REDACTED:aws-access-key] here"),
        ("token ｇｈｐ＿0123456789abcdefghijABCDEFGHIJ012345.", "token [REDACTED:github-token]."),
        (r#"t = "ghp_0123456789abcdefghij" + "ABCDEFGHIJ012345";"#, r#"t = "[REDACTED:github-token]";"#),
        (
            "k = 'sk-ant-api03-abcdefghij' \\\n  'klmnopqrstuvwxyz0123456789'\nnext",
            "k = '[REDACTED:anthropic-key]'\nnext",
        ),
        (r#"{"t": "\u0067hp_0123456789abcdefghijABCDEFGHIJ012345"}"#, r#"{"t": "[REDACTED:github-token]"}"#),
        ("see ghp_0123456789abcdefghij\nABCDEFGHIJ012345 in the log", "see [REDACTED:github-token] in the log"),
    ] {
        assert_eq!(r(text), want, "{text}");
        let spans = f.spans(text);
        let mut out = String::new();
        let mut last = 0;
        for s in &spans {
            out.push_str(&text[last..s.range.start]);
            out.push_str(&s.replacement);
            last = s.range.end;
        }
        out.push_str(&text[last..]);
        assert_eq!(out, want, "spans of {text}: {spans:?}");
    }
    // Only what reads differently is read again: an ASCII text, prose in other scripts.
    assert!(view::build("fix the login page\nand run the tests").is_empty());
    assert!(view::build("тест прошёл — 完成了 3 项任务, ok").is_empty());
}

/// Every name of a password in other languages holds a word of the prefilter (a name
/// without one would never be looked for), in any case.
#[test]
fn every_name_in_other_languages_is_looked_for() {
    use super::rules::{INTL_PASSWORD_JOINED, INTL_PASSWORD_KEYWORDS, INTL_PASSWORD_WORDS};
    for w in INTL_PASSWORD_WORDS.iter().chain(INTL_PASSWORD_JOINED) {
        // The name as written, with the first of its alternatives (`(?:المرور|السر)`).
        let plain = w.replace(r"\s+", " ");
        let plain = match plain.split_once("(?:") {
            Some((head, rest)) => format!("{head}{}", rest.split(['|', ')']).next().unwrap_or("")),
            None => plain,
        }
        .to_lowercase();
        assert!(INTL_PASSWORD_KEYWORDS.iter().any(|k| plain.contains(k)), "{w} has no keyword");
        let upper = format!("{} Hq4Lm8Nz2Rx6Vt9Z", plain.to_uppercase());
        assert!(r(&upper).contains("[REDACTED:password]"), "{upper}");
    }
}

/// A conversation's id is not a secret: every agent's resume command is kept whole, with
/// ids of every shape the agents write (UUIDs, `ses_…`, ULIDs, timestamps).
#[test]
fn resume_commands_are_not_secrets() {
    use crate::model::agent::Agent;
    // Ids of the real sessions in ../shared/agent-transcripts (Pi, Oh My Pi, OpenCode,
    // Copilot CLI, Gemini CLI, Codex).
    let ids = [
        "019e44d4-6ecf-7c1d-96ab-582effc13411",
        "01a025c5-21b8-7000-b3f3-437e2c17a372",
        "ses_017eabd4affe5dT53SiL5dEtX6",
        "e07fc822-e277-4d5d-898a-1b91eedea7b6",
        "f7633853-6663-4dbb-bbf4-6159afa29df8",
        "019f8c04-f40a-75a1-80a3-75c564780b42",
        "abc",
    ];
    for agent in Agent::ALL {
        for id in ids {
            let Some(cmd) = agent.resume_command(id) else { continue };
            for text in [cmd.clone(), format!("to resume it: `{cmd}`."), format!("{{\"resume_command\":\"{cmd}\"}}")] {
                assert_eq!(crate::redact::redact(&text), text, "{agent:?}");
            }
        }
    }
    // A session key that is no conversation id stays a secret.
    let bw = "bw list items --session 5PBYGU4PgdBmtmI/Yy1pFTKzTdpqVXCl9QmyiJAmy5c4QklIk2w0oDrXUSrB+KAGd1DXlrF7NJ3Mt7iXsT0cTw==";
    assert!(crate::redact::redact(bw).contains("[REDACTED"), "{bw}");
}

/// Found by the independent tester (round four): phrasings that kept the password.
#[test]
fn more_ways_to_say_a_password_is_kept_out() {
    for (text, secret) in [
        ("la password è Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("contrasenya: Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("পাসওয়ার্ড: Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("கடவுச்சொல்: Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("nenosiri: Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("הסיסמה שלי היא Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("הסיסמה היא Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("mật khẩu của tôi là Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        ("our root pass is Qx7Zk2Lm9Pw4Rt", "Qx7Zk2Lm9Pw4Rt"),
        (
            "my wallet key is 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
            "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        ),
        (
            "metamask key 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
            "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        ),
    ] {
        let out = crate::redact::redact(text);
        assert!(!out.contains(secret), "{text} → {out}");
    }
    // Prose that only looks alike stays.
    for text in [
        "the tests pass is green now",
        "la password è stata cambiata ieri",
        "commit 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318 is the fix",
    ] {
        assert_eq!(crate::redact::redact(text), text);
    }
}

/// #40: a password written to a command that reads it from its input (no name, no option
/// shows it), and commands that take one as an argument of a subcommand.
#[test]
fn secrets_fed_to_a_reader_or_given_to_a_subcommand_are_masked() {
    let pw = "Zebra-Tide-41";
    for text in [
        "printf 'Zebra-Tide-41\\nZebra-Tide-41' | passwd",
        "passwd <<< Zebra-Tide-41",
        "sudo passwd bob <<EOF\nZebra-Tide-41\nZebra-Tide-41\nEOF\necho done",
        "echo Zebra-Tide-41 | kinit bob@EXAMPLE.COM",
        "echo -n \"Zebra-Tide-41\" | sudo cryptsetup luksOpen /dev/sdb1 vault -d -",
        "ansible-playbook site.yml --vault-password-file /dev/stdin <<< 'Zebra-Tide-41'",
        "base64 <<< 'bob:Zebra-Tide-41'",
        "echo 'bob:Zebra-Tide-41' | sudo chpasswd",
        "echo Zebra-Tide-41 | docker login -u bob --password-stdin ghcr.io",
        "cat <<EOF | kinit bob\nZebra-Tide-41\nEOF",
        "printf '%s\\n' 'Zebra-Tide-41' | sudo -S apt-get update",
        "ftp -n host <<END\nquote USER bob\nquote PASS Zebra-Tide-41\nEND",
        "ftp -n host <<END\nuser bob Zebra-Tide-41\nEND",
        "useradd -m -p $(openssl passwd -1 Zebra-Tide-41) bob",
        "openssl passwd -stdin <<< Zebra-Tide-41",
        "ansible-vault encrypt_string 'Zebra-Tide-41' --name db_pass",
        "rclone obscure Zebra-Tide-41",
        "rclone config create gd drive client_secret=Zebra-Tide-41",
        "log in with admin / Zebra-Tide-41",
        // The tester's second round: sudo's options, wrappers, groups, redirections, quoting.
        "echo Zebra-Tide-41 | sudo -u root -S true",
        "echo Zebra-Tide-41 | sudo -kS true",
        "(echo Zebra-Tide-41; echo Zebra-Tide-41) | passwd bob",
        "{ echo Zebra-Tide-41; echo Zebra-Tide-41; } | passwd bob",
        "echo $'Zebra-Tide-41\\nZebra-Tide-41' | passwd bob",
        "/bin/echo Zebra-Tide-41 | sudo -S true",
        "echo Zebra-Tide-41 | timeout 5 sudo -S true",
        "echo Zebra-Tide-41 | env LANG=C sudo -S true",
        "sudo -S true < <(echo Zebra-Tide-41)",
        "ssh host \"echo Zebra-Tide-41 | sudo -S reboot\"",
        "echo 'root:Zebra-Tide-41' | docker exec -i c chpasswd",
        "echo 'root:Zebra-Tide-41' | kubectl exec -i pod -- chpasswd",
        "kinit admin 2>/dev/null <<EOF\nZebra-Tide-41\nEOF",
        "sudo -S apt-get update 2>&1 <<< Zebra-Tide-41",
        "run `kinit admin <<< Zebra-Tide-41` again",
        "echo Zebra-Tide-41 | htpasswd -i .htpasswd bob",
        "openssl enc -aes-256-cbc -pass stdin <<< Zebra-Tide-41",
        "pass insert -e x <<< Zebra-Tide-41",
        "mkpasswd -m sha-512 Zebra-Tide-41",
        "slappasswd -s Zebra-Tide-41",
        "bw unlock Zebra-Tide-41",
        "redis-cli CONFIG SET requirepass Zebra-Tide-41",
        "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'Zebra-Tide-41'\"",
        "ALTER ROLE app WITH PASSWORD 'Zebra-Tide-41';",
        "sudo password: `Zebra-Tide-41`",
        "DB_PASSWORD=`Zebra-Tide-41`",
        "echo 'Zebra-Tide-41' > ~/.vault_pass.txt",
        "printf Zebra-Tide-41 >> .npm-token",
    ] {
        let out = crate::redact::redact(text);
        assert!(!out.contains(pw), "{text} → {out}");
    }
    let out = crate::redact::redact("oathtool --totp -b JBSWY3DPEHPK3PXP");
    assert!(!out.contains("JBSWY3DPEHPK3PXP"), "{out}");
    // What is fed to anything else, references and a user name stay.
    for text in [
        "echo hello world | wc -w",
        "echo \"hello\" | base64",
        "cat <<EOF > notes.txt\njust some notes\nEOF",
        "echo y | apt-get install foo",
        "echo \"$PW\" | docker login -u bob --password-stdin",
        "printf \"line1\\nline2\" | grep line",
        "git log --oneline | head -5",
        "rclone config create s3 s3 provider AWS region eu-west-1",
        "printf '%s' \"$DB_PASS\" | sudo -S true",
        "echo done | passwd --help",
        "grep passwd /etc/passwd",
        "echo x | sudo tee /etc/hosts",
        "git commit -F - <<EOF\nfix the bug\nEOF",
        "SELECT password FROM users WHERE id = 1",
        "token: `Option<String>`",
        "api_key: `process.env.API_KEY`",
        "echo hello > notes.txt",
        "echo \"$TOKEN\" > ~/.token",
        "echo '# Passwords' > passwords.md",
    ] {
        assert_eq!(crate::redact::redact(text), text);
    }
}

#[test]
fn every_built_in_rule_compiles() {
    let f = Redactor::new(&[]).unwrap();
    for r in &f.rules {
        assert!(Regex::new(&r.pattern).is_ok(), "rule {} does not compile", r.kind);
        r.re();
    }
}

/// A rule is compiled when it first runs: a text none of whose keywords occurs compiles
/// only the rules that always run, and a keyword compiles the rules that wait for it.
#[test]
fn rules_are_compiled_when_first_needed() {
    let f = Redactor::new(&[]).unwrap();
    let compiled = |f: &Redactor| f.rules.iter().filter(|r| r.re.get().is_some()).count();
    assert_eq!(compiled(&f), 0);
    assert_eq!(f.redact("cargo build finished in 3s").as_ref(), "cargo build finished in 3s");
    let always = f.rules.iter().filter(|r| r.keywords.is_empty()).count();
    assert!(compiled(&f) <= always, "{} compiled, {always} rules always run", compiled(&f));
    let before = compiled(&f);
    assert_eq!(f.redact("key AKIAZ7Q2LX4N8RPW3VBT").as_ref(), "key [REDACTED:aws-access-key]");
    assert!(compiled(&f) > before);
    assert!(compiled(&f) < f.rules.len() / 2, "{} of {} compiled", compiled(&f), f.rules.len());
    // Let go of (an idle daemon's memory), they compile again when needed, and find the same.
    let u = f.uncompiled();
    assert_eq!(compiled(&u), 0);
    assert_eq!(u.redact("key AKIAZ7Q2LX4N8RPW3VBT").as_ref(), "key [REDACTED:aws-access-key]");
    assert!(compiled(&u) > 0);
    let user = Redactor::new(&[("ticket".into(), r"TKT-\d{6}".into())]).unwrap();
    assert_eq!(user.uncompiled().redact("see TKT-123456").as_ref(), "see [REDACTED:ticket]", "a user's rule stays");
}

/// Past 100 characters a quoted value in prose is not taken as a quoted password; one in
/// curly quotes with a digit is still read as a bare one, and masked.
#[test]
fn a_long_value_in_curly_quotes_after_password_is_masked() {
    let long = format!("x{}", "a1".repeat(60));
    let out = r(&format!("the password is “{long}” ok"));
    assert!(!out.contains(&long), "{out}");
}

/// A password's mask glued to its option names nothing after it: the archive stays.
#[test]
fn an_options_mask_is_no_name_for_what_follows() {
    assert_eq!(redact("7z a -pKl2jH4gF6dS8 archive.7z secrets/"), "7z a -p[REDACTED:password] archive.7z secrets/");
    // In prose, a mask still stands for its name.
    assert!(!redact("my password hunter2hunter2 and then pass2word9x").contains("hunter2hunter2"));
}
