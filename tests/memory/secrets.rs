//! Secrets in memories, wherever they come from (the independent tester's second round):
//! a token split by markup that a reader joins again, written by `memory write` or the MCP
//! server's `memory_write`, or committed by hand and served by every way a memory is read;
//! a committed title copied into `index.json`; a project whose directory's name holds one.

use super::*;

/// Tokens' bodies (`ghp_` and 36): each test part has its own, so that a leak names its way.
const WRITTEN: &str = "C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CP";
const BY_MCP: &str = "VNPkNa1Hedcm4pMbXDuCL1mHoOsFaQfDPrAJ";
const COMMITTED: &str = "71fTquWoGsbeKXgzg2sye9b2Rann76dEyTzA";
const IN_PATH: &str = "eKOmXRrvftva9AW7hipTgadDZFlRJmCGmUXi";
const AWS_KEY: &str = "AKIAQ4XBV7MNP2KD6RTY";

/// `ccmemctl mcp` for `root`, and a way to call its tools.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Mcp {
    fn start(env: &Env, root: &Path) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccmemctl"));
        env.apply(&mut cmd);
        cmd.arg("mcp").env("CLAUDE_PROJECT_DIR", root).stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn ccmemctl mcp");
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp { child, stdin, out, id: 0 };
        m.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        writeln!(m.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        m
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}).to_string();
        writeln!(self.stdin, "{line}").expect("write to mcp");
        self.stdin.flush().unwrap();
        loop {
            let mut l = String::new();
            assert!(self.out.read_line(&mut l).expect("read from mcp") > 0, "the MCP server closed its output");
            let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON from mcp: {e}: {l}"));
            if v["id"] == self.id {
                return v;
            }
        }
    }

    /// A tool's reply, whole (its text and anything else it holds).
    fn tool(&mut self, name: &str, args: Value) -> String {
        let r = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert!(r["result"]["isError"] != true, "{name}: {r}");
        r.to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_token_split_by_markup_is_redacted_when_a_memory_is_written() {
    let (env, _d, root) = started();
    let dir = mem_dir(&root);
    // Stars that render as themselves (`_` before the second one makes it no closer): the
    // token reads whole to a person, and to a renderer of another flavour.
    let slug = write(
        &env,
        &root,
        &[
            "--type",
            "gotcha",
            "--title",
            &format!("key gh**p_**{WRITTEN}"),
            "--tag",
            "deploy",
            "--content",
            &format!("deploy with gh*p_*{WRITTEN}"),
        ],
    );
    let file = std::fs::read_to_string(dir.join(format!("{slug}.md"))).unwrap();
    assert!(!file.contains(WRITTEN), "memory write kept the token: {file}");
    assert!(file.contains("[REDACTED:github-token]"), "{file}");

    let mut mcp = Mcp::start(&env, &root);
    let reply = mcp.tool(
        "memory_write",
        json!({"type": "gotcha", "title": "Rotate the deploy key", "tags": ["deploy"],
               "content": format!("the old one was gh*p_*{BY_MCP}")}),
    );
    assert!(reply.contains("gotcha-rotate-the-deploy-key"), "{reply}");
    let file = std::fs::read_to_string(dir.join("gotcha-rotate-the-deploy-key.md")).unwrap();
    assert!(!file.contains(BY_MCP), "memory_write kept the token: {file}");
    assert!(file.contains("[REDACTED:github-token]"), "{file}");
}

/// A project whose directory's name holds a token, with a committed memory whose title
/// holds an AWS key and whose title and content a token split by a comment (it reads whole)
/// and by stars that open nothing.
fn committed(env: &Env) -> PathBuf {
    let root = repo(env, &format!("notes_ghp_{IN_PATH}"));
    let dir = mem_dir(&root);
    std::fs::create_dir_all(&dir).unwrap();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    std::fs::write(
        dir.join("gotcha-deploy-key.md"),
        format!(
            "---\ntype: gotcha\ntags:\n  - deploy\ncreated: \"{now}\"\nupdated: \"{now}\"\n---\n\n\
             # Deploy with {AWS_KEY} and g<!-- x -->hp_{COMMITTED}\n\n\
             Deploy with g<!-- x -->hp_{COMMITTED}, or gh*p_*{COMMITTED} on the old runner.\n"
        ),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "deploy notes"]);
    root
}

#[test]
fn a_committed_memory_is_served_redacted_as_markdown() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = committed(&env);
    let p = root.to_str().unwrap();
    let mut served = Vec::new();
    for args in [
        vec!["memory", "show", "gotcha-deploy-key", "--project", p],
        vec!["memory", "show", "gotcha-deploy-key", "--project", p, "--json"],
        vec!["memory", "list", "--project", p],
        vec!["memory", "list", "--project", p, "--json"],
        vec!["memory", "search", "deploy", "--project", p],
        vec!["memory", "search", "runner", "--project", p, "--json"],
        vec!["context", p],
    ] {
        let out = env.ctl(&args);
        assert_ok(&out, &format!("{args:?}"));
        served.push((format!("{args:?}"), text(&out.stdout)));
    }
    let out = send(&env, ev(&root, "c1", "SessionStart", json!({"source": "startup"})));
    let reply: Value = serde_json::from_slice(&out.stdout).expect("SessionStart answers JSON");
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string();
    assert!(context.contains("gotcha-deploy-key"), "the memory is in the context: {context}");
    served.push(("SessionStart".into(), context));
    let mut mcp = Mcp::start(&env, &root);
    served.push(("memory_show".into(), mcp.tool("memory_show", json!({"slug": "gotcha-deploy-key"}))));
    served.push(("memory_search".into(), mcp.tool("memory_search", json!({"query": "deploy runner"}))));
    served.push(("session_context".into(), mcp.tool("session_context", json!({"budget": 4000}))));
    for (how, shown) in &served {
        assert!(!shown.contains(COMMITTED), "{how} served the committed token: {shown}");
        assert!(!shown.contains(AWS_KEY), "{how} served the committed title's key: {shown}");
    }
    let (_, show) = &served[0];
    assert!(show.contains("[REDACTED:github-token]") && show.contains("old runner"), "{show}");
}

#[test]
fn index_json_holds_redacted_titles_and_no_secret_in_a_path() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let root = committed(&env);
    // Reading the scope finds index.json missing and writes it.
    mem_json(&env, &root, &["list"]);
    let index = mem_dir(&root).join("index.json");
    assert!(
        wait_until(Duration::from_secs(10), || std::fs::read_to_string(&index)
            .is_ok_and(|t| t.contains("gotcha-deploy-key"))),
        "index.json was not written"
    );
    let written = std::fs::read_to_string(&index).unwrap();
    for secret in [COMMITTED, AWS_KEY, IN_PATH] {
        assert!(!written.contains(secret), "index.json holds {secret}: {written}");
    }
    let entry = &read_json(&index)["memories"]["gotcha-deploy-key"];
    let title = entry["title"].as_str().unwrap_or_default();
    assert!(title.contains("[REDACTED:aws-access-key]") && title.contains("[REDACTED:github-token]"), "{entry}");
    assert!(entry["filePath"].as_str().is_some_and(|p| p.contains("notes_[REDACTED:github-token]")), "{entry}");
    // What it is checked against is derived the same way: no drift.
    let health = mem_json(&env, &root, &["health"]);
    assert!(!health.to_string().contains("index.json"), "{health}");
}
