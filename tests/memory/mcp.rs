//! The MCP server giving the agent its memories and its session.

use super::*;

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
