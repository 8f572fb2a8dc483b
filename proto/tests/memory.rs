//! Memory files: every valid memory reads back exactly after being written (property test),
//! and no text at all, however broken, makes the reader panic.

use ccmem_proto::model::memory::frontmatter::{normalize_content, parse, render, Layout};
use ccmem_proto::model::memory::*;
use proptest::prelude::*;

fn kebab_word() -> impl Strategy<Value = String> {
    "[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}"
}

fn title() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^\\x00-\\x1f\\x7f]{1,80}",
        Just("# not a heading".to_string()),
        Just("\"quoted\" 'and' #hash: colon".to_string()),
    ]
    .prop_map(|s| s.trim().to_string())
    .prop_filter("a title has a character", |s| !s.is_empty())
}

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        "(\\PC|\\n){0,400}",
        Just("---\nnot: frontmatter\n---".to_string()),
        Just("# Heading inside\n\n```\ncode\n```".to_string()),
    ]
    .prop_map(|s| normalize_content(&s))
}

fn time() -> impl Strategy<Value = chrono::DateTime<chrono::Utc>> {
    (0i64..2_000_000_000).prop_map(|s| chrono::DateTime::from_timestamp(s, 0).unwrap())
}

fn memory() -> impl Strategy<Value = (Memory, Layout)> {
    (
        kebab_word(),
        prop::sample::select(MemoryType::ALL.to_vec()),
        title(),
        prop::collection::vec(kebab_word(), 1..6),
        time(),
        0i64..10_000_000,
        prop::collection::vec(kebab_word(), 0..4),
        content(),
        any::<bool>(),
        prop::collection::vec("[a-z]{1,6}: [a-z0-9 ]{0,10}", 0..3),
    )
        .prop_map(|(slug, t, title, tags, created, later, links, content, in_front, extra)| {
            let m = Memory {
                slug,
                memory_type: t,
                title,
                tags,
                created,
                updated: created + chrono::Duration::seconds(later),
                links,
                content,
                scope: Scope::Project,
            };
            let extra = extra.into_iter().map(|l| l.trim_end().to_string()).collect();
            (m, Layout { extra, title_in_frontmatter: in_front })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn written_memories_read_back_exactly((m, layout) in memory()) {
        let text = render(&m, &layout);
        let (back, layout_back) = parse(&m.slug, m.scope, &text)
            .map_err(|e| TestCaseError::fail(format!("{}\n---- file:\n{text}", describe(&e))))?;
        prop_assert_eq!(&back, &m, "file:\n{}", text);
        prop_assert_eq!(layout_back, layout);
    }

    #[test]
    fn any_text_is_read_without_panicking(text in "(\\PC|\\n|\\r|---\\n|- |: |\"|'|\\[|\\]){0,300}") {
        let _ = parse("x", Scope::Global, &text);
        let _ = parse("x", Scope::Global, &format!("---\n{text}"));
        let _ = parse("x", Scope::Global, &format!("---\ntype: hub\n{text}\n---\n# T\n"));
    }
}
