//! Knowledge memories end to end (seed 003): a real daemon, real scope directories, the
//! command line, hand edits picked up by the watcher, concurrent writers, the health check
//! and its repairs, semantic search through a local HTTP stub of ollama, and the MCP server.
#![cfg(unix)]

mod common;

use ccmem_proto::model::memory::frontmatter;
use ccmem_proto::model::memory::{inverse_label, Scope};
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A daemon in its own environment, and a git project.
fn started() -> (Env, Daemon, PathBuf) {
    let env = Env::new();
    let d = env.start_daemon(&[]);
    let root = repo(&env, "app");
    (env, d, root)
}

fn mem_dir(root: &Path) -> PathBuf {
    root.join(".claude/memory")
}

/// `ccmemctl memory ARGS --project ROOT`.
fn mem(env: &Env, root: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["memory"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--project", root.to_str().expect("utf-8 path")]);
    env.ctl(&a)
}

fn mem_json(env: &Env, root: &Path, args: &[&str]) -> Value {
    let mut a = vec!["memory"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--project", root.to_str().expect("utf-8 path")]);
    env.ctl_json(&a)
}

fn write(env: &Env, root: &Path, args: &[&str]) -> String {
    let mut a = vec!["write"];
    a.extend_from_slice(args);
    let out = mem(env, root, &a);
    assert_ok(&out, &format!("memory write {args:?}"));
    text(&out.stdout).trim().to_string()
}

fn failure(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "expected a failure: {}", text(&out.stdout));
    text(&out.stderr)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()))
}

/// Parses a memory file as the daemon would, panicking with the file on any error.
fn parse_file(dir: &Path, slug: &str) -> ccmem_proto::model::memory::Memory {
    let p = dir.join(format!("{slug}.md"));
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    frontmatter::parse(slug, Scope::Project, &t).unwrap_or_else(|e| panic!("{}: {e:?}\n{t}", p.display())).0
}

/// Every edge of a graph.json has its inverse, and each memory's frontmatter `links` are
/// exactly its neighbours.
fn assert_graph_consistent(dir: &Path) {
    let g = read_json(&dir.join("graph.json"));
    let g = g.as_object().expect("graph object");
    for (src, edges) in g {
        for e in edges.as_array().expect("edges") {
            let (t, l) = (e["target"].as_str().unwrap(), e["label"].as_str().unwrap());
            let back = g
                .get(t)
                .and_then(Value::as_array)
                .is_some_and(|b| b.iter().any(|x| x["target"] == src.as_str() && x["label"] == inverse_label(l)));
            assert!(back, "{src} -{l}-> {t} has no inverse in {}", dir.display());
        }
        let mut links = parse_file(dir, src).links;
        links.sort();
        let mut want: Vec<String> =
            edges.as_array().unwrap().iter().map(|e| e["target"].as_str().unwrap().to_string()).collect();
        want.sort();
        want.dedup();
        assert_eq!(links, want, "{src}: frontmatter links and graph differ");
    }
}

#[test]
fn write_show_list_search_update_and_delete() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);

    let slug = write(
        &env,
        &root,
        &[
            "--type",
            "decision",
            "--title",
            "Use OAuth2 with PKCE",
            "--tag",
            "auth",
            "--tag",
            "oauth2",
            "--content",
            "We chose PKCE because the SPA cannot keep a client secret.",
        ],
    );
    assert_eq!(slug, "decision-use-oauth2-with-pkce");
    let m = parse_file(&dir, &slug);
    assert_eq!((m.title.as_str(), m.tags.len()), ("Use OAuth2 with PKCE", 2));
    assert_eq!(m.created, m.updated);
    let index = read_json(&dir.join("index.json"));
    assert_eq!(index["version"], "1.0.0");
    assert_eq!(index["memories"][&slug]["type"], "decision");
    assert_eq!(index["memories"][&slug]["filePath"], dir.join(format!("{slug}.md")).to_str().unwrap());
    assert_eq!(index["memories"][&slug]["hasEmbedding"], false);

    // The same title again gets a suffix; a given slug must be free.
    let again = write(&env, &root, &["--type", "decision", "--title", "Use OAuth2 with PKCE", "--tag", "auth"]);
    assert_eq!(again, "decision-use-oauth2-with-pkce-2");
    let e = failure(&mem(&env, &root, &["write", "--type", "hub", "--title", "T", "--tag", "a", "--slug", &again]));
    assert!(e.contains("slug: must be unique within a scope"), "{e}");
    // Content from stdin.
    let mut cmd = env.ctl_cmd(&[
        "memory",
        "write",
        "--type",
        "gotcha",
        "--title",
        "Clock skew breaks tokens",
        "--tag",
        "auth",
        "--project",
        root.to_str().unwrap(),
        "-",
    ]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    child.stdin.take().unwrap().write_all(b"Token validation fails when clocks drift by minutes.\n").unwrap();
    let out = child.wait_with_output().expect("wait");
    assert_ok(&out, "write from stdin");
    let gotcha = text(&out.stdout).trim().to_string();
    assert_eq!(parse_file(&dir, &gotcha).content, "Token validation fails when clocks drift by minutes.");

    let shown = mem_json(&env, &root, &["show", &slug]);
    assert_eq!(shown["memory"]["scope"], "project");
    assert_eq!(shown["memory"]["content"], "We chose PKCE because the SPA cannot keep a client secret.");

    let list = mem_json(&env, &root, &["list"]);
    assert_eq!(list["memories"].as_array().unwrap().len(), 3);
    let list = mem_json(&env, &root, &["list", "--type", "gotcha"]);
    assert_eq!(list["memories"][0]["slug"], gotcha.as_str());
    assert_eq!(mem_json(&env, &root, &["list", "--tag", "oauth2"])["memories"].as_array().unwrap().len(), 1);

    let hits = mem_json(&env, &root, &["search", "client", "secret"]);
    assert_eq!(hits["hits"][0]["slug"], slug.as_str(), "{hits}");
    assert_eq!(hits["mode"], "text");
    assert!(hits["hits"][0]["snippet"].as_str().unwrap().contains("client secret"), "{hits}");
    let hits = mem_json(&env, &root, &["search", "tokens", "--type", "gotcha"]);
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "{hits}");

    std::thread::sleep(Duration::from_millis(1100));
    let out =
        mem(&env, &root, &["update", &slug, "--add-tag", "security", "--append", "Trade-off: more moving parts."]);
    assert_ok(&out, "update");
    let m2 = parse_file(&dir, &slug);
    assert_eq!(m2.tags, ["auth", "oauth2", "security"]);
    assert!(m2.content.ends_with("\n\nTrade-off: more moving parts."), "{}", m2.content);
    assert!(m2.updated > m2.created, "updated moves on");
    assert_eq!(m2.created, m.created);
    assert!(mem_json(&env, &root, &["search", "moving", "parts"])["hits"][0]["slug"] == slug.as_str());

    let out = mem(&env, &root, &["delete", &again]);
    assert_ok(&out, "delete");
    assert!(!dir.join(format!("{again}.md")).exists());
    let index = read_json(&dir.join("index.json"));
    assert!(index["memories"].get(&again).is_none());
    assert_eq!(index["memories"].as_object().unwrap().len(), 2);
    let e = failure(&mem(&env, &root, &["show", &again]));
    assert!(e.contains("no memory decision-use-oauth2-with-pkce-2"), "{e}");
}

#[test]
fn validation_names_the_field_and_the_rule() {
    let (env, _d, root) = started();
    let long_title = "t".repeat(201);
    let long_content = "c".repeat(50_001);
    for (args, want) in [
        (vec!["--type", "decision", "--title", "T", "--tag", "OAuth"], "tags[0]: must be lowercase and hyphenated"),
        (vec!["--type", "decision", "--title", "T"], "tags: must not be empty"),
        (vec!["--type", "decision", "--title", "", "--tag", "a"], "title: must be 1-200 characters (got 0)"),
        (vec!["--type", "decision", "--title", &long_title, "--tag", "a"], "title: must be 1-200 characters (got 201)"),
        (vec!["--type", "decision", "--title", "T", "--tag", "a", "--slug", "Bad_Slug"], "slug: must match"),
        (
            vec!["--type", "decision", "--title", "T", "--tag", "a", "--content", &long_content],
            "content: must be at most 50000",
        ),
        (
            vec!["--type", "decision", "--title", "T", "--tag", "a", "--scope", "enterprise"],
            "scope: enterprise is not enabled",
        ),
    ] {
        let mut a = vec!["write"];
        a.extend(args.iter().copied());
        let e = failure(&mem(&env, &root, &a));
        assert!(e.contains(want), "{args:?}: {e}");
    }
    let out = mem(&env, &root, &["write", "--type", "idea", "--title", "T", "--tag", "a"]);
    assert_eq!(out.status.code(), Some(2), "a bad enum is a usage error");
    assert!(text(&out.stderr).contains("decision, learning, artifact, gotcha, breadcrumb, hub"));
    assert!(
        !mem_dir(&root).join("index.json").exists()
            || read_json(&mem_dir(&root).join("index.json"))["memories"].as_object().unwrap().is_empty()
    );
    // A broken configuration names its file and field.
    std::fs::create_dir_all(mem_dir(&root)).unwrap();
    std::fs::write(mem_dir(&root).join("config.json"), r#"{"quality": {"minQualityScore": 150}}"#).unwrap();
    let e = failure(&mem(&env, &root, &["list"]));
    assert!(e.contains("config.json") && e.contains("quality.minQualityScore must be 0-100"), "{e}");
}

#[test]
fn links_are_bidirectional_scoped_and_cascade_on_delete() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);
    let a = write(&env, &root, &["--type", "decision", "--title", "OAuth2", "--tag", "auth"]);
    let b = write(&env, &root, &["--type", "learning", "--title", "Token refresh", "--tag", "auth"]);
    let hub = write(&env, &root, &["--type", "hub", "--title", "Authentication", "--tag", "auth"]);
    let global = write(&env, &root, &["--type", "learning", "--title", "Elsewhere", "--tag", "x", "--scope", "global"]);
    assert!(env.home.join(".claude/memory").join(format!("{global}.md")).exists());

    assert_ok(&mem(&env, &root, &["link", &a, &b, "--label", "implements"]), "link");
    assert_ok(&mem(&env, &root, &["link", &a, &hub, "--label", "part-of"]), "link");
    assert_ok(&mem(&env, &root, &["link", &b, &hub, "--label", "part-of"]), "link");
    let g = read_json(&dir.join("graph.json"));
    let has = |s: &str, l: &str, t: &str| {
        g[s].as_array().is_some_and(|e| e.iter().any(|e| e["target"] == t && e["label"] == l))
    };
    assert!(has(&a, "implements", &b) && has(&b, "implemented-by", &a), "{g}");
    assert!(has(&a, "part-of", &hub) && has(&hub, "contains", &a), "{g}");
    assert_graph_consistent(&dir);
    assert_eq!(parse_file(&dir, &hub).links, [a.clone(), b.clone()]);

    for (args, want) in [
        (vec!["link", &a, &b, "--label", "implements"], "already linked"),
        (vec!["link", &a, &a], "itself"),
        (vec!["link", &a, &global], "no cross-scope links"),
        (vec!["link", &a, &b, "--label", "Bad Label"], "label: must be lowercase"),
        (vec!["link", &a, "nope"], "no memory nope"),
        (vec!["unlink", &a, &hub, "--label", "implements"], "not linked as implements"),
    ] {
        let e = failure(&mem(&env, &root, &args));
        assert!(e.contains(want), "{args:?}: {e}");
    }

    assert_ok(&mem(&env, &root, &["unlink", &a, &b]), "unlink");
    assert_graph_consistent(&dir);
    assert!(!parse_file(&dir, &a).links.contains(&b));
    assert!(!parse_file(&dir, &b).links.contains(&a));

    // Deleting the hub removes every edge to it, both directions, and the links.
    let r = mem_json(&env, &root, &["delete", &hub]);
    assert_eq!(r["unlinked"], json!([a.clone(), b.clone()]));
    let g = read_json(&dir.join("graph.json"));
    assert_eq!(g, json!({}), "no edges left");
    assert!(parse_file(&dir, &a).links.is_empty() && parse_file(&dir, &b).links.is_empty());
}

#[test]
fn concurrent_writers_leave_index_and_graph_consistent() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);
    let hub = write(&env, &root, &["--type", "hub", "--title", "Everything", "--tag", "all"]);
    // The environment of a ccmemctl run, to make commands on other threads.
    let base = env.ctl_cmd(&[]);
    let vars: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)> =
        base.get_envs().map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned()))).collect();
    let vars = Arc::new(vars);
    let run = |vars: &[(std::ffi::OsString, Option<std::ffi::OsString>)], args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ccmemctl"));
        for (k, v) in vars {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        let out = c.args(args).stdin(Stdio::null()).output().expect("run ccmemctl");
        assert_ok(&out, &format!("{args:?}"));
        text(&out.stdout).trim().to_string()
    };
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (vars, root, hub) = (vars.clone(), root.to_str().unwrap().to_string(), hub.clone());
            std::thread::spawn(move || {
                for n in 0..12 {
                    let title = format!("Writer {t} note {n}");
                    let slug = run(
                        &vars,
                        &[
                            "memory",
                            "write",
                            "--type",
                            "learning",
                            "--title",
                            &title,
                            "--tag",
                            "load",
                            "--project",
                            &root,
                        ],
                    );
                    run(&vars, &["memory", "link", &slug, &hub, "--label", "part-of", "--project", &root]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    let index = read_json(&dir.join("index.json"));
    assert_eq!(index["memories"].as_object().unwrap().len(), 73);
    let files =
        std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "md")).count();
    assert_eq!(files, 73);
    assert_eq!(parse_file(&dir, &hub).links.len(), 72);
    assert_graph_consistent(&dir);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

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

/// A stand-in for ollama's `/api/embed`: vectors from keyword classes, so that "feline"
/// and "cat" meet without sharing a word. Model `missing` answers 404, like a model not
/// pulled. Counts the texts it embedded.
struct Stub {
    port: u16,
    embedded: Arc<AtomicUsize>,
}

fn stub_provider() -> Stub {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let embedded = Arc::new(AtomicUsize::new(0));
    let count = embedded.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut r = BufReader::new(stream.try_clone().expect("clone"));
            let mut len = 0;
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; len];
            if r.read_exact(&mut body).is_err() {
                continue;
            }
            let req: Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut out = stream;
            if req["model"] == "missing" {
                let b = r#"{"error":"model \"missing\" not found, try pulling it first"}"#;
                let _ = write!(
                    out,
                    "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                    b.len()
                );
                continue;
            }
            let classes = [["cat", "feline", "kitten"], ["car", "engine", "vehicle"], ["rust", "cargo", "crate"]];
            let inputs = req["input"].as_array().cloned().unwrap_or_default();
            count.fetch_add(inputs.len(), Ordering::SeqCst);
            let vectors: Vec<Vec<f32>> = inputs
                .iter()
                .map(|t| {
                    let t = t.as_str().unwrap_or("").to_lowercase();
                    let mut v: Vec<f32> =
                        classes.iter().map(|c| c.iter().filter(|w| t.contains(*w)).count() as f32).collect();
                    v.push(0.1);
                    v
                })
                .collect();
            // Chunked, as Go's server sends large bodies.
            let b = json!({"model": req["model"], "embeddings": vectors}).to_string();
            let (x, y) = b.split_at(b.len() / 2);
            let _ = write!(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{x}\r\n{:x}\r\n{y}\r\n0\r\n\r\n", x.len(), y.len());
        }
    });
    Stub { port, embedded }
}

#[test]
fn semantic_search_through_a_local_provider_with_cache_and_fallback() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);
    let stub = stub_provider();
    std::fs::create_dir_all(&dir).unwrap();
    let config = |model: &str, port: u16| {
        json!({"embedding": {"provider": "ollama", "endpoint": format!("http://127.0.0.1:{port}"), "model": model,
            "fallbackModels": ["stub-a"]}})
        .to_string()
    };
    // The provider is the user's choice (a project's config.json may not name one): the
    // global file.
    let user_config = env.home.join(".claude/memory/config.json");
    std::fs::create_dir_all(user_config.parent().unwrap()).unwrap();
    std::fs::write(&user_config, config("missing", stub.port)).unwrap();
    let cat = write(
        &env,
        &root,
        &["--type", "learning", "--title", "Kitten care", "--tag", "pets", "--content", "Cats sleep most of the day."],
    );
    let car = write(
        &env,
        &root,
        &["--type", "learning", "--title", "Engine oil", "--tag", "garage", "--content", "Change it yearly."],
    );

    let r = mem_json(&env, &root, &["search", "feline", "--mode", "semantic"]);
    assert_eq!(r["mode"], "semantic", "{r}");
    assert_eq!(r["hits"][0]["slug"], cat.as_str(), "no shared word, same meaning: {r}");
    assert_eq!(r["hits"][0]["snippet"], "Cats sleep most of the day.", "{r}");
    let r = mem_json(&env, &root, &["search", "feline"]);
    assert_eq!(r["mode"], "hybrid", "auto is hybrid with a provider: {r}");
    assert_eq!(r["hits"][0]["slug"], cat.as_str());
    assert!(r["hits"][0]["semantic_score"].as_f64().unwrap() > 0.8, "{r}");

    // Seed 003's cache: one file per memory, hash of the content, the model that answered.
    let entry = read_json(&dir.join(".embedding-cache").join(format!("{cat}.json")));
    assert_eq!(entry["model"], "stub-a", "the fallback model answered");
    assert_eq!(entry["contentHash"].as_str().unwrap().len(), 64);
    assert_eq!(read_json(&dir.join("index.json"))["memories"][&cat]["hasEmbedding"], true);
    let before = stub.embedded.load(Ordering::SeqCst);
    mem_json(&env, &root, &["search", "vehicle", "--mode", "semantic"]);
    assert_eq!(stub.embedded.load(Ordering::SeqCst) - before, 1, "cached memories are not embedded again");

    // An update deletes the cache entry; the next search makes a fresh one.
    assert_ok(&mem(&env, &root, &["update", &car, "--content", "Vehicle engines need oil."]), "update");
    assert!(!dir.join(".embedding-cache").join(format!("{car}.json")).exists());
    let before = stub.embedded.load(Ordering::SeqCst);
    let r = mem_json(&env, &root, &["search", "vehicle", "--mode", "semantic"]);
    assert_eq!(r["hits"][0]["slug"], car.as_str());
    assert_eq!(stub.embedded.load(Ordering::SeqCst) - before, 2, "the query and the changed memory");

    // A model change invalidates every entry of the old model.
    std::fs::write(&user_config, config("stub-b", stub.port).replace("stub-a", "stub-c")).unwrap();
    let r = mem_json(&env, &root, &["search", "kitten", "--mode", "semantic"]);
    assert_eq!(r["hits"][0]["slug"], cat.as_str());
    assert_eq!(read_json(&dir.join(".embedding-cache").join(format!("{cat}.json")))["model"], "stub-b");

    // Nothing listening: full-text results and a note.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(&user_config, config("stub-b", closed)).unwrap();
    let r = mem_json(&env, &root, &["search", "kitten"]);
    assert_eq!(r["mode"], "text", "{r}");
    assert_eq!(r["hits"][0]["slug"], cat.as_str());
    assert!(r["notes"].to_string().contains("unavailable"), "{r}");
}

#[test]
fn the_resume_context_names_relevant_memories() {
    let (env, _d, root) = started();
    write(
        &env,
        &root,
        &[
            "--type",
            "decision",
            "--title",
            "Sessions live in Redis",
            "--tag",
            "auth",
            "--content",
            "Because the API runs on several nodes.",
        ],
    );
    env.request("project.watch", json!({"path": root}));
    let out = env.ctl(&["context", root.to_str().unwrap()]);
    assert_ok(&out, "context");
    let c = text(&out.stdout);
    assert!(c.contains("## Memories") && c.contains("decision-sessions-live-in-redis"), "{c}");
}

fn mcp_call(stdin: &mut impl Write, out: &mut impl BufRead, id: u64, method: &str, params: Value) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    writeln!(stdin, "{line}").expect("write to mcp");
    stdin.flush().unwrap();
    loop {
        let mut l = String::new();
        assert!(out.read_line(&mut l).expect("read from mcp") > 0, "the MCP server closed its output");
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON from mcp: {e}: {l}"));
        if v["id"] == id {
            return v;
        }
    }
}

#[test]
fn the_mcp_server_gives_the_agent_memories_and_its_session() {
    let (env, _d, root) = started();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccmemctl"));
    env.apply(&mut cmd);
    cmd.arg("mcp").env("CLAUDE_PROJECT_DIR", &root).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn ccmemctl mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());

    let init = mcp_call(
        &mut stdin,
        &mut out,
        1,
        "initialize",
        json!({
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "ccmem", "{init}");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let tools = mcp_call(&mut stdin, &mut out, 2, "tools/list", json!({}));
    let mut names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    for name in ["memory_search", "memory_show", "memory_write", "session_context", "session_status"] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }

    let call = |stdin: &mut std::process::ChildStdin,
                out: &mut BufReader<std::process::ChildStdout>,
                id,
                name: &str,
                args: Value| {
        let r = mcp_call(stdin, out, id, "tools/call", json!({"name": name, "arguments": args}));
        let t = r["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
        (r["result"]["isError"] == true, t)
    };
    let (err, t) = call(
        &mut stdin,
        &mut out,
        3,
        "memory_write",
        json!({"type": "gotcha", "title": "Never log tokens",
        "tags": ["security"], "content": "Logs are shipped to a third party."}),
    );
    assert!(!err && t.contains("gotcha-never-log-tokens"), "{t}");
    assert!(mem_dir(&root).join("gotcha-never-log-tokens.md").exists());
    let (err, t) = call(&mut stdin, &mut out, 4, "memory_search", json!({"query": "logs third party"}));
    assert!(!err && t.contains("gotcha-never-log-tokens"), "{t}");
    let (err, t) = call(&mut stdin, &mut out, 5, "memory_show", json!({"slug": "gotcha-never-log-tokens"}));
    assert!(!err && t.contains("Logs are shipped"), "{t}");
    let (err, t) = call(
        &mut stdin,
        &mut out,
        6,
        "memory_write",
        json!({"type": "idea", "title": "x", "tags": ["a"], "content": ""}),
    );
    assert!(err && t.contains("type: must be one of"), "{t}");
    let (err, t) = call(&mut stdin, &mut out, 7, "session_status", json!({}));
    assert!(!err && t.contains(root.to_str().unwrap()), "{t}");
    env.request("project.watch", json!({"path": root}));
    let (err, t) = call(&mut stdin, &mut out, 8, "session_context", json!({"budget": 3000}));
    assert!(!err && t.contains("gotcha-never-log-tokens"), "{t}");

    drop(stdin);
    let status = wait_child(&mut child, Duration::from_secs(10));
    assert!(status.success(), "mcp exits cleanly when stdin closes: {status:?}");
}

fn wait_child(child: &mut std::process::Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the MCP server did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
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
