//! Semantic search through a local provider, and memories in the resume context.

use super::*;

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
    // A project memory is a file in the repository, which a clone brings: it is quoted in
    // the repository's block, not given as ccmem's own words.
    assert!(
        c.contains("## From the repository's files")
            && c.contains(
                "- memory decision-sessions-live-in-redis (decision, project): \"Sessions live in Redis: Because the API runs on several nodes.\""
            ),
        "{c}"
    );
}
