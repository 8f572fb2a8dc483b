//! Writing, reading, validating and linking memories, and writers at once.

use super::*;

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
    // No tag at all: clap's usage error, with --tag in the usage line.
    let out = mem(&env, &root, &["write", "--type", "decision", "--title", "T"]);
    assert_eq!(out.status.code(), Some(2), "a missing tag is a usage error");
    assert!(text(&out.stderr).contains("--tag <TAG>"), "{}", text(&out.stderr));
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
