//! Everything the daemon reads from outside — runner outputs, JUnit files, task lists,
//! source files, hook payloads, shell commands — may be anything: the readers never panic
//! and never hang on it (property tests over arbitrary and mangled inputs).

use ccmem_daemon::{agent::hooks, observe::tasks, observe::testout, report::blockers, session::rules as session};
use proptest::prelude::*;
use std::path::PathBuf;

const FIXTURES: &[&str] = &[
    include_str!("../fixtures/testout/cargo-fail.txt"),
    include_str!("../fixtures/testout/nextest-fail.txt"),
    include_str!("../fixtures/testout/pytest-fail.txt"),
    include_str!("../fixtures/testout/go-fail-verbose.txt"),
    include_str!("../fixtures/testout/jest-suite-errors.txt"),
    include_str!("../fixtures/testout/vitest-fail.txt"),
    include_str!("../fixtures/testout/mocha-fail.txt"),
    include_str!("../fixtures/testout/node-test-fail.txt"),
    include_str!("../fixtures/testout/playwright-fail.txt"),
    include_str!("../fixtures/testout/rspec-fail.txt"),
    include_str!("../fixtures/testout/phpunit-fail.txt"),
    include_str!("../fixtures/testout/dotnet-fail.doc.txt"),
    include_str!("../fixtures/testout/mvn-fail.doc.txt"),
    include_str!("../fixtures/testout/gradle-fail.doc.txt"),
    include_str!("../fixtures/testout/cypress-fail.doc.txt"),
    include_str!("../fixtures/testout/bun-fail.doc.txt"),
    include_str!("../fixtures/testout/tsc-fail.doc.txt"),
];

/// A real output cut, spliced and sprinkled with junk: what a truncated or interleaved
/// terminal gives.
fn mangled() -> impl Strategy<Value = String> {
    (prop::sample::select(FIXTURES), prop::sample::select(FIXTURES), 0usize..4000, 0usize..4000, "(?s).{0,200}")
        .prop_map(|(a, b, cut_a, cut_b, junk)| {
            let floor = |s: &str, mut i: usize| {
                i = i.min(s.len());
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            format!("{}{junk}{}", &a[..floor(a, cut_a)], &b[floor(b, cut_b)..])
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn test_output_readers_take_anything(text in prop_oneof!["(?s).{0,3000}".boxed(), mangled().boxed()], hint in prop::option::of(prop::sample::select(vec!["cargo", "jest", "pytest", "go", "gradle", "nonsense"]))) {
        for run in testout::parse(&text, hint) {
            prop_assert!(run.suite.failures.len() <= 20);
            prop_assert!(run.suite.percentage >= 0.0 && run.suite.percentage <= 100.0);
        }
        let b = testout::build::parse(&text, true);
        prop_assert!(b.errors.len() <= 10);
        let _ = testout::junit::parse(&text, None);
        let _ = testout::command::classify(&text);
    }

    #[test]
    fn junit_reader_takes_mangled_xml(cut in 0usize..2000, junk in "[<>/a-z\"= &;]{0,80}") {
        let xml = include_str!("../fixtures/testout/vitest-fail.junit.xml");
        let mut end = cut.min(xml.len());
        while !xml.is_char_boundary(end) {
            end -= 1;
        }
        let _ = testout::junit::parse(&format!("{}{junk}{}", &xml[..end], &xml[end..]), Some("x"));
    }

    #[test]
    fn task_lists_and_source_files_take_anything(text in "(?s)(- \\[[ xX]?\\]? ?|## Phase |```|T[0-9]{0,4} |\\[P\\] |✅|`|.){0,400}") {
        let list = tasks::parse(&text);
        let st = list.status();
        prop_assert!(st.next_tasks.len() <= 5);
        for p in &st.phases {
            prop_assert!(p.completed <= p.total);
        }
        let _ = blockers::comments_in("src/x.rs", text.as_bytes());
        let _ = blockers::comments_in("README.md", text.as_bytes());
        let _ = tasks::paths_in(&text);
    }

    #[test]
    fn hook_payloads_take_anything(v in arbitrary_json(3)) {
        let now = chrono::Utc::now();
        let mut s = session::start(PathBuf::from("/w/app"), "app".into(), session::new_id(now, None), now, None);
        if let Some(h) = hooks::parse(&v) {
            let _ = hooks::apply(&mut s, &h, now);
        }
        if v.is_object() {
            for name in ["PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SessionStart", "TaskCompleted"] {
                let mut with_name = v.clone();
                with_name["hook_event_name"] = serde_json::json!(name);
                if let Some(h) = hooks::parse(&with_name) {
                    let _ = hooks::apply(&mut s, &h, now);
                }
            }
        }
    }
}

fn arbitrary_json(depth: u32) -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "(?s).{0,40}".prop_map(Value::String),
        prop::sample::select(vec!["Bash", "Edit", "TodoWrite", "cargo test", "npm run build", "/w/app/src/a.rs"])
            .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(depth, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "tool_name",
                    "tool_input",
                    "tool_response",
                    "command",
                    "stdout",
                    "error",
                    "todos",
                    "content",
                    "status",
                    "file_path",
                    "session_id",
                    "cwd",
                    "prompt",
                    "task",
                    "subject",
                    "is_interrupt"
                ]),
                inner,
                0..6
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}
