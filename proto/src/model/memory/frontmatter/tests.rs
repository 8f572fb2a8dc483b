use super::*;

const SEED: &str = r#"---
type: decision
tags:
  - auth
  - oauth2
  - security
created: "2026-01-10T10:00:00Z"
updated: "2026-01-10T10:30:00Z"
links:
  - learning-token-refresh
  - hub-authentication
---

# OAuth2 Implementation Decision

We decided to use OAuth2 with PKCE flow for authentication...

## Rationale

- Industry standard
"#;

#[test]
fn reads_the_seed_example_and_writes_it_back_unchanged() {
    let (m, layout) = parse("decision-oauth2", Scope::Project, SEED).unwrap();
    assert_eq!(m.memory_type, MemoryType::Decision);
    assert_eq!(m.title, "OAuth2 Implementation Decision");
    assert_eq!(m.tags, ["auth", "oauth2", "security"]);
    assert_eq!(m.links, ["learning-token-refresh", "hub-authentication"]);
    assert_eq!(iso(m.updated), "2026-01-10T10:30:00Z");
    assert!(m.content.starts_with("We decided") && m.content.ends_with("- Industry standard"), "{:?}", m.content);
    assert_eq!(render(&m, &layout), SEED);
}

#[test]
fn hand_written_yaml_forms() {
    let text = "---\r\n# a comment\r\ntype: 'gotcha'  # why\r\ntitle: \"Don't \\\"do\\\" that\"\r\ntags: [ci, \"build-cache\"]\r\ncreated: 2026-01-10\r\nupdated: 2026-01-11T08:00:00+01:00\r\nauthor: bob\r\nreviewers:\r\n  - ann\r\n---\r\nBody only.\r\n";
    let (m, layout) = parse("gotcha-x", Scope::Local, text).unwrap();
    assert_eq!(m.memory_type, MemoryType::Gotcha);
    assert_eq!(m.title, "Don't \"do\" that");
    assert_eq!(m.tags, ["ci", "build-cache"]);
    assert_eq!(iso(m.created), "2026-01-10T00:00:00Z");
    assert_eq!(iso(m.updated), "2026-01-11T07:00:00Z");
    assert_eq!(m.content, "Body only.");
    assert_eq!(layout.extra, ["author: bob", "reviewers:", "  - ann"]);
    assert!(layout.title_in_frontmatter);
    let again = render(&m, &layout);
    assert!(again.contains("author: bob\nreviewers:\n  - ann\n---"), "{again}");
    assert_eq!(parse("gotcha-x", Scope::Local, &again).unwrap(), (m, layout));
}

#[test]
fn every_broken_rule_is_named() {
    let text = "---\ntype: idea\ntags: []\ncreated: soon\n---\n";
    let errors = parse("x", Scope::Global, text).unwrap_err();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["type", "title", "tags", "created", "updated"], "{errors:?}");
    assert!(errors[0].rule.contains("decision, learning"), "{}", errors[0]);
    for (text, what) in [
        ("no frontmatter", "must start with a `---` line"),
        ("---\ntype: hub\n", "is not closed"),
        ("---\n  indented: x\n---\n", "line 1"),
        ("---\ntitle: \"open\n---\n", "unterminated"),
        ("---\ntitle: |\n  block\n---\n", "block scalars"),
        ("---\ntype: hub\ntype: hub\n---\n", "appears twice"),
        ("---\ntags:\n  nope\n---\n", "expected a `- item` line"),
    ] {
        let e = parse("x", Scope::Global, text).unwrap_err();
        assert!(e[0].to_string().contains(what), "{text:?}: {e:?}");
    }
}

#[test]
fn empty_content_and_title_only() {
    let text = "---\ntype: hub\ntags:\n  - a\ncreated: \"2026-01-10T10:00:00Z\"\nupdated: \"2026-01-10T10:00:00Z\"\n---\n\n# Hub\n";
    let (m, layout) = parse("hub-a", Scope::Global, text).unwrap();
    assert_eq!(m.content, "");
    assert_eq!(render(&m, &layout), text);
}
