use super::*;

#[test]
fn slugs_and_tags_follow_the_seed_pattern() {
    for ok in ["a", "decision-oauth2", "x1-2-y"] {
        assert!(check_slug("slug", ok).is_ok(), "{ok}");
    }
    for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", "é"] {
        let e = check_slug("slug", bad).unwrap_err();
        assert_eq!(e.field, "slug");
        assert!(e.rule.contains("^[a-z0-9]+(-[a-z0-9]+)*$"), "{e}");
    }
    assert!(check_slug("slug", "Auth Flow").unwrap_err().rule.contains("did you mean \"auth-flow\""));
    assert!(check_tag(&"a".repeat(50)).is_ok());
    assert!(check_tag(&"a".repeat(51)).is_err());
    assert_eq!(check_tags(&[]).unwrap_err()[0].field, "tags");
    let e = check_tags(&["ok".into(), "Not OK".into()]).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].field, "tags[1]");
    assert!(e[0].rule.contains("did you mean \"not-ok\""), "{}", e[0]);
}

#[test]
fn titles_content_and_times() {
    assert!(check_title("").is_err());
    assert!(check_title("   ").is_err());
    assert!(check_title(&"é".repeat(200)).is_ok());
    assert!(check_title(&"é".repeat(201)).unwrap_err().rule.contains("got 201"));
    assert!(check_title("two\nlines").is_err());
    assert!(check_content(&"x".repeat(CONTENT_MAX)).is_ok());
    assert!(check_content(&"x".repeat(CONTENT_MAX + 1)).is_err());
    let now = Utc::now();
    let mut m = Memory {
        slug: "decision-x".into(),
        memory_type: MemoryType::Decision,
        title: "X".into(),
        tags: vec!["a".into()],
        created: now,
        updated: now,
        links: vec![],
        content: String::new(),
        scope: Scope::Project,
    };
    assert!(m.validate(now).is_ok());
    m.updated = now - chrono::Duration::seconds(1);
    let e = m.validate(now).unwrap_err();
    assert_eq!(e[0].field, "updated");
    m.created = now + chrono::Duration::days(1);
    m.updated = m.created;
    assert_eq!(m.validate(now).unwrap_err()[0].field, "created");
}

#[test]
fn timestamps_in_several_iso_forms() {
    let z = parse_time("2026-01-10T10:00:00Z").unwrap();
    assert_eq!(parse_time("2026-01-10T12:00:00+02:00"), Some(z));
    assert_eq!(parse_time("2026-01-10T10:00:00"), Some(z));
    assert_eq!(parse_time("2026-01-10T10:00:00.000Z"), Some(z));
    assert_eq!(iso(parse_time("2026-01-10").unwrap()), "2026-01-10T00:00:00Z");
    assert_eq!(parse_time("yesterday"), None);
    assert_eq!(parse_time("2026-13-01"), None);
    assert_eq!(parse_time("-026-01-10"), None);
    assert_eq!(parse_time("+12026-01-10T00:00:00Z"), None);
}

#[test]
fn derived_slugs_are_prefixed_and_bounded() {
    assert_eq!(derive_slug(MemoryType::Decision, "Use OAuth2 with PKCE!"), "decision-use-oauth2-with-pkce");
    assert_eq!(derive_slug(MemoryType::Hub, "日本語"), "hub");
    let long = derive_slug(MemoryType::Learning, &"word ".repeat(100));
    assert!(long.len() <= 60 && is_kebab(&long), "{long}");
}

#[test]
fn inverse_labels() {
    assert_eq!(inverse_label("implements"), "implemented-by");
    assert_eq!(inverse_label("implemented-by"), "implements");
    assert_eq!(inverse_label("part-of"), "contains");
    assert_eq!(inverse_label("contains"), "part-of");
    assert_eq!(inverse_label("builds-on"), "foundation-for");
    assert_eq!(inverse_label("relates-to"), "relates-to");
    assert_eq!(inverse_label("similar-to"), "similar-to");
    assert_eq!(inverse_label("whatever"), "whatever");
}

#[test]
fn an_invalid_value_holding_a_secret_is_not_echoed_in_the_error() {
    let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xZ1";
    for e in [check_tag(token).unwrap_err(), check_slug("slug", token).unwrap_err()] {
        let said = e.to_string();
        assert!(!said.contains("aB3dE5fG7h") && !said.to_lowercase().contains("ab3de5fg7h"), "{said}");
        assert!(said.contains("[REDACTED:github-token]"), "{said}");
    }
}
