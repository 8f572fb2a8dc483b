//! Memories as files: hand edits, health checks and repairs, link suggestions, scopes on disk.

use super::*;

#[test]
fn hand_edits_are_picked_up_and_a_corrupt_index_is_rebuilt() {
    let env = Env::new();
    let mut d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    let dir = mem_dir(&root);
    write(&env, &root, &["--type", "learning", "--title", "Seed", "--tag", "x"]);
    let listed = |env: &Env| -> Vec<String> {
        mem_json(env, &root, &["list"])["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["slug"].as_str().unwrap().to_string())
            .collect()
    };

    let by_hand = "---\ntype: gotcha\ntags: [ci, cache]\ncreated: 2026-01-10\nupdated: 2026-01-10T12:00:00Z\nauthor: ann\n---\n\n# Cache keys must include the lockfile\n\nOtherwise a stale zebra cache is restored.\n";
    std::fs::write(dir.join("gotcha-cache-keys.md"), by_hand).unwrap();
    assert!(wait_until(Duration::from_secs(10), || listed(&env).contains(&"gotcha-cache-keys".to_string())));
    assert!(wait_until(Duration::from_secs(5), || read_json(&dir.join("index.json"))["memories"]
        .get("gotcha-cache-keys")
        .is_some()));
    assert_eq!(mem_json(&env, &root, &["search", "zebra"])["hits"][0]["slug"], "gotcha-cache-keys");

    // An edit by hand: new words are found, unknown keys survive an update.
    std::fs::write(dir.join("gotcha-cache-keys.md"), by_hand.replace("zebra", "giraffe")).unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        mem_json(&env, &root, &["search", "giraffe"])["hits"].as_array().is_some_and(|h| !h.is_empty())
    }));
    assert_ok(&mem(&env, &root, &["update", "gotcha-cache-keys", "--add-tag", "build"]), "update");
    assert!(std::fs::read_to_string(dir.join("gotcha-cache-keys.md")).unwrap().contains("author: ann"));

    // A file that breaks the rules is listed as invalid, with why.
    std::fs::write(dir.join("broken.md"), "---\ntype: idea\n---\n# B\n").unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        let l = mem_json(&env, &root, &["list"]);
        l["invalid"]
            .as_array()
            .is_some_and(|i| i.iter().any(|f| f["errors"].to_string().contains("type: must be one of")))
    }));

    // Removed by hand: gone from the list and the index.
    std::fs::remove_file(dir.join("gotcha-cache-keys.md")).unwrap();
    assert!(wait_until(Duration::from_secs(10), || !listed(&env).contains(&"gotcha-cache-keys".to_string())));

    // A corrupt index is rebuilt from the files when the scope is read again.
    d.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
    std::fs::write(dir.join("index.json"), b"{ not json").unwrap();
    std::fs::write(dir.join("learning-offline.md"), "---\ntype: learning\ntags:\n  - offline\ncreated: \"2026-02-01T00:00:00Z\"\nupdated: \"2026-02-01T00:00:00Z\"\n---\n\n# Written while the daemon was down\n").unwrap();
    let _d2 = env.start_daemon(&[]);
    assert!(listed(&env).contains(&"learning-offline".to_string()));
    let index = read_json(&dir.join("index.json"));
    let mut keys: Vec<&String> = index["memories"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["learning-offline", "learning-seed"]);
    std::fs::remove_file(dir.join("index.json")).unwrap();
    let r = mem_json(&env, &root, &["rebuild", "--scope", "project"]);
    assert_eq!(r["scopes"][0]["memories"], 2);
    assert_eq!(r["scopes"][0]["invalid"][0]["file"], dir.join("broken.md").to_str().unwrap());
    assert_eq!(read_json(&dir.join("index.json"))["memories"].as_object().unwrap().len(), 2);
}

#[test]
fn health_check_finds_and_fixes_what_is_mechanical() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);
    let a = write(
        &env,
        &root,
        &[
            "--type",
            "decision",
            "--title",
            "Pick Postgres",
            "--tag",
            "db",
            "--content",
            "We picked Postgres because we need transactions across tables and JSON columns for settings.",
        ],
    );
    let b =
        write(&env, &root, &["--type", "learning", "--title", "Migrations run in CI", "--tag", "db", "--tag", "ci"]);
    assert_ok(&mem(&env, &root, &["link", &a, &b, "--label", "builds-on"]), "link");
    // Damage by hand: a one-way edge, a link to nothing, an old orphan, a missing index.
    std::fs::write(
        dir.join("graph.json"),
        json!({ &a: [{"target": &b, "label": "builds-on", "timestamp": "2026-01-01T00:00:00Z"}] }).to_string(),
    )
    .unwrap();
    let text_b = std::fs::read_to_string(dir.join(format!("{b}.md"))).unwrap();
    std::fs::write(
        dir.join(format!("{b}.md")),
        text_b.replace(&format!("  - {a}\n"), &format!("  - {a}\n  - ghost\n")),
    )
    .unwrap();
    // Two memories naming each other by hand, with no edge between them.
    let c = write(&env, &root, &["--type", "learning", "--title", "Pool sizes", "--tag", "db"]);
    let d = write(&env, &root, &["--type", "learning", "--title", "Pool timeouts", "--tag", "db"]);
    for (x, y) in [(&c, &d), (&d, &c)] {
        let t = std::fs::read_to_string(dir.join(format!("{x}.md"))).unwrap();
        std::fs::write(dir.join(format!("{x}.md")), t.replace("---\n\n#", &format!("links:\n  - {y}\n---\n\n#")))
            .unwrap();
    }
    std::fs::write(
        dir.join("learning-old.md"),
        "---\ntype: learning\ntags: [old]\ncreated: 2020-01-01\nupdated: 2020-01-01\n---\n# Old and alone\n",
    )
    .unwrap();
    // The edits above are read (and the index rewritten) by the watcher; then the index goes.
    assert!(wait_until(Duration::from_secs(10), || {
        read_json(&dir.join("index.json"))["memories"].get("learning-old").is_some()
    }));
    std::fs::remove_file(dir.join("index.json")).unwrap();

    let out = mem(&env, &root, &["health", "--json"]);
    assert_eq!(out.status.code(), Some(1), "integrity problems: exit 1\n{}", text(&out.stdout));
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let project =
        &h["scopes"].as_array().unwrap().iter().find(|s| s["scope"] == "project").expect("project scope").clone();
    let kinds: Vec<(String, String)> = project["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_string(), f["slug"].as_str().unwrap().to_string()))
        .collect();
    for want in [
        ("one-way-edge", a.as_str()),
        ("broken-link", b.as_str()),
        ("orphan", "learning-old"),
        ("index-drift", "index.json"),
    ] {
        assert!(kinds.iter().any(|(k, s)| k == want.0 && s == want.1), "{want:?} not in {kinds:?}");
    }
    let quality = project["quality"].as_array().unwrap();
    let q = |s: &str| quality.iter().find(|q| q["slug"] == s).unwrap_or_else(|| panic!("{s} has no score"));
    assert!(q("learning-old")["score"].as_u64().unwrap() < q(&a)["score"].as_u64().unwrap());
    assert!(q("learning-old")["reasons"].to_string().contains("no content"));

    let out = mem(&env, &root, &["health", "--fix", "--json"]);
    let fixed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(fixed.to_string().contains("\"fixed\":true"), "{fixed}");
    assert_graph_consistent(&dir);
    assert!(!parse_file(&dir, &b).links.contains(&"ghost".to_string()));
    assert_eq!(parse_file(&dir, &c).links, std::slice::from_ref(&d));
    assert_eq!(parse_file(&dir, &d).links, std::slice::from_ref(&c));
    let out = mem(&env, &root, &["health"]);
    assert_ok(&out, "health after --fix: only orphans and quality to review");
    assert!(text(&out.stdout).contains("orphan"), "{}", text(&out.stdout));
}

#[test]
fn link_suggestions_come_with_reasons() {
    let (env, _d, root) = started();
    let a = write(
        &env,
        &root,
        &[
            "--type",
            "decision",
            "--title",
            "Redis for rate limiting",
            "--tag",
            "redis",
            "--tag",
            "rate-limit",
            "--content",
            "Sliding window counters in Redis with a Lua script keep the limiter atomic.",
        ],
    );
    let b = write(
        &env,
        &root,
        &[
            "--type",
            "gotcha",
            "--title",
            "Lua scripts block Redis",
            "--tag",
            "redis",
            "--content",
            "A slow Lua script blocks every Redis client; keep the limiter script tiny.",
        ],
    );
    let c = write(
        &env,
        &root,
        &["--type", "learning", "--title", "CSS grid gaps", "--tag", "css", "--content", "Use gap, not margins."],
    );
    let r = mem_json(&env, &root, &["suggest-links", &a]);
    let s = r["suggestions"].as_array().unwrap();
    assert_eq!(s[0]["target"], b.as_str(), "{r}");
    let reasons = s[0]["reasons"].to_string();
    assert!(reasons.contains("shared tags: redis") && reasons.contains("similar text"), "{reasons}");
    assert!(s.iter().all(|x| x["target"] != c.as_str()), "nothing in common with {c}: {r}");
    // Accepting one is `memory link`; linked memories are no longer proposed.
    assert_ok(&mem(&env, &root, &["link", &a, &b]), "link");
    let r = mem_json(&env, &root, &["suggest-links", &a]);
    assert!(r["suggestions"].as_array().unwrap().iter().all(|x| x["target"] != b.as_str()), "{r}");
}

#[test]
fn local_scope_stays_out_of_git_and_scopes_are_separate() {
    let (env, _d, root) = started();
    let local =
        write(&env, &root, &["--type", "breadcrumb", "--title", "My scratch notes", "--tag", "me", "--scope", "local"]);
    let project = write(&env, &root, &["--type", "breadcrumb", "--title", "My scratch notes", "--tag", "me"]);
    assert_eq!(local, project, "the same slug in two scopes");
    assert!(mem_dir(&root).join("local").join(format!("{local}.md")).exists());
    let status = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(status.contains(&format!(".claude/memory/{project}.md")), "{status}");
    assert!(status.contains(".claude/memory/graph.json") || !mem_dir(&root).join("graph.json").exists());
    assert!(!status.contains("local/") && !status.contains("index.json"), "{status}");
    // Reads take the most specific scope; a mutation asks which.
    assert_eq!(mem_json(&env, &root, &["show", &local])["memory"]["scope"], "local");
    let e = failure(&mem(&env, &root, &["delete", &local]));
    assert!(e.contains("exists in the local and project scopes; pass --scope"), "{e}");
    assert_ok(&mem(&env, &root, &["delete", &local, "--scope", "local"]), "delete local");
    assert_eq!(mem_json(&env, &root, &["show", &local])["memory"]["scope"], "project");
}

#[test]
fn in_the_home_directory_memories_are_global_not_a_project() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let home = std::fs::canonicalize(&env.home).unwrap();
    let slug =
        write(&env, &home, &["--type", "breadcrumb", "--title", "Dotfiles live in a bare repo", "--tag", "setup"]);
    assert!(home.join(".claude/memory").join(format!("{slug}.md")).exists());
    let list = mem_json(&env, &home, &["list"]);
    let scopes: Vec<&str> = list["memories"].as_array().unwrap().iter().map(|m| m["scope"].as_str().unwrap()).collect();
    assert_eq!(scopes, ["global"], "listed once, as global: {list}");
    let e = failure(&mem(&env, &home, &["write", "--type", "hub", "--title", "T", "--tag", "a", "--scope", "project"]));
    assert!(e.contains("scope: project needs a project"), "{e}");
}

/// The user's config.json turns the enterprise scope on (a shared directory, searched and
/// listed with the rest) and sets where a memory goes when no scope is named.
#[test]
fn the_enterprise_scope_and_the_default_scope() {
    let env = Env::new();
    let shared = env.path().join("company-memory");
    std::fs::create_dir_all(&shared).unwrap();
    let user = env.home.join(".claude/memory");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.json"),
        serde_json::json!({"scopes": {"default": "global", "enterprise": {"enabled": true, "path": shared}}})
            .to_string(),
    )
    .unwrap();
    let _d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    // No scope named: the configured default, global, even inside a project.
    let w = mem_json(
        &env,
        &root,
        &["write", "--type", "learning", "--title", "Default goes global", "--tag", "cfg", "--content", "x"],
    );
    assert_eq!(w["memory"]["scope"], "global", "{w}");
    assert!(user.join("learning-default-goes-global.md").is_file());
    // The enterprise scope, written, found and listed.
    let e = mem_json(
        &env,
        &root,
        &[
            "write",
            "--type",
            "decision",
            "--title",
            "Company wide rule",
            "--tag",
            "policy",
            "--content",
            "Use SSO.",
            "--scope",
            "enterprise",
        ],
    );
    assert_eq!(e["memory"]["scope"], "enterprise", "{e}");
    assert!(shared.join("decision-company-wide-rule.md").is_file());
    let hits = mem_json(&env, &root, &["search", "company", "rule"]);
    assert_eq!(hits["hits"][0]["slug"], "decision-company-wide-rule", "{hits}");
    assert_eq!(hits["hits"][0]["scope"], "enterprise", "{hits}");
    let listed = mem_json(&env, &root, &["list", "--scope", "enterprise"]);
    assert_eq!(listed["memories"].as_array().map(Vec::len), Some(1), "{listed}");
}
