//! `ccmemctl import --all` in a HOME laid out like a real one: the real sessions of the dev
//! set and of the other agents (tests/fixtures/*/SOURCES.md) placed where each agent keeps
//! its conversations, each recorded in a project of its own on this machine. Everything is
//! imported once, each into its own project (a project's newest into its live session, the
//! rest into its history); a second run imports nothing; a conversation added later is the
//! only one a third run takes.
#![cfg(unix)]

mod common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A real session placed in an agent's store.
struct Placed {
    /// The fixture (gzipped).
    fixture: &'static str,
    /// Its conversation id.
    id: &'static str,
    /// The directory it was recorded in, as its records name it.
    recorded: &'static str,
    /// Where in the fake HOME the agent keeps it.
    store: &'static str,
    /// The project (a repository under the test's directory) it is placed in; None: its
    /// directory no longer exists.
    project: Option<&'static str>,
    /// How many days ago it last changed.
    days_ago: u64,
}

const PLACED: &[Placed] = &[
    Placed {
        fixture: "dev-transcripts/entireio_cli_847ff7d2.jsonl.gz",
        id: "847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1",
        recorded: "/Users/soph/Work/entire/devenv/cli",
        store: ".claude/projects/-Users-soph-Work-entire-devenv-cli/847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1.jsonl",
        project: Some("cli"),
        // Copied without its time (`cp`, not `cp -p`): the file is newer than the next one,
        // the conversation older (2026-01-05 against 2026-01-23).
        days_ago: 2,
    },
    Placed {
        fixture: "dev-transcripts/entireio_cli_6113e919.jsonl.gz",
        id: "6113e919-67d3-417b-b525-c63700228d19",
        recorded: "/Users/soph/Work/entire/devenv/cli",
        store: ".claude/projects/-Users-soph-Work-entire-devenv-cli/6113e919-67d3-417b-b525-c63700228d19.jsonl",
        project: Some("cli"),
        days_ago: 20,
    },
    Placed {
        fixture: "dev-transcripts/jnarowski_agentcmd_2d984148.jsonl.gz",
        id: "2d984148-cddb-4605-aac1-13e720fe613c",
        recorded: "/Users/jnarowski/Dev/sourceborn/src/agent-workflows-monorepo-v2",
        store: ".claude/projects/-Users-jnarowski-Dev/2d984148-cddb-4605-aac1-13e720fe613c.jsonl",
        project: Some("agentcmd"),
        days_ago: 30,
    },
    Placed {
        fixture: "dev-transcripts/admarble_sequant_170a6d5b.jsonl.gz",
        id: "170a6d5b-e79c-4a12-9d22-60730e148b83",
        recorded: "/Users/tony/Projects/worktrees/feature/318-refactor-run-split-3-459-line-monolith-into-focuse",
        store: ".claude/projects/-Users-tony-Projects/170a6d5b-e79c-4a12-9d22-60730e148b83.jsonl",
        project: None,
        days_ago: 40,
    },
    Placed {
        fixture: "agent-sessions/jdx_fnox_codex_019f1f6f.jsonl.gz",
        id: "019f1f6f-311c-7543-b0f9-f126da3c5434",
        recorded: "/Users/jdx/src/fnox",
        store: ".codex/sessions/2026/05/14/rollout-2026-05-14T09-12-00-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl",
        project: Some("fnox"),
        days_ago: 10,
    },
    Placed {
        fixture: "agent-sessions/EntityProcess_agentv_copilot_10fb4666.jsonl.gz",
        id: "10fb4666-56f0-4352-90fc-715caf95b418",
        recorded: "/home/entity/projects/EntityProcess/agentv",
        store: ".copilot/session-state/10fb4666-56f0-4352-90fc-715caf95b418/events.jsonl",
        project: Some("agentv"),
        days_ago: 8,
    },
    Placed {
        fixture: "agent-sessions/preloopdev_preloop_ohmypi_01a025c5.jsonl.gz",
        id: "01a025c5-21b8-7000-b3f3-437e2c17a372",
        recorded: "/Users/bnjoroge/preloop",
        store: ".omp/agent/sessions/--Users-bnjoroge-preloop--/2026-05-20T10-00-00_01a025c5-21b8-7000-b3f3-437e2c17a372.jsonl",
        project: Some("preloop"),
        days_ago: 6,
    },
    Placed {
        fixture: "agent-sessions/entireio_cli_gemini_f7633853.jsonl.gz",
        id: "f7633853-6663-4dbb-bbf4-6159afa29df8",
        // Gemini CLI names the project in `.project_root`, beside the chats.
        recorded: "",
        store: ".gemini/tmp/7e8989f71805c3147f6be9b7/chats/session-2026-01-15T20-51-f7633853.json",
        project: Some("gemcli"),
        days_ago: 12,
    },
];

fn gunzip(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel);
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("fixture"))
        .read_to_string(&mut text)
        .expect("gunzip");
    text
}

/// Puts `p` in its store, recorded in `dir`, changed `p.days_ago` days ago.
fn place(env: &Env, p: &Placed, dir: &Path) -> PathBuf {
    let mut text = gunzip(p.fixture);
    if !p.recorded.is_empty() {
        text = text.replace(p.recorded, &dir.to_string_lossy());
    }
    let file = env.home.join(p.store);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    if p.recorded.is_empty() {
        std::fs::write(
            file.parent().unwrap().parent().unwrap().join(".project_root"),
            dir.to_string_lossy().as_bytes(),
        )
        .unwrap();
    }
    let f = std::fs::File::options().write(true).open(&file).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(p.days_ago * 86_400)).unwrap();
    file
}

fn import_all(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["import", "--all"];
    all.extend_from_slice(args);
    env.ctl_json(&all)
}

fn live_conversations(env: &Env, root: &Path) -> Vec<String> {
    let st = env.ctl_json(&["status", root.to_str().unwrap()]);
    st["project"]["session"]["conversations"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["id"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[test]
fn every_agents_store_is_imported_once_each_conversation_into_its_own_project() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    let mut roots = std::collections::HashMap::new();
    for p in PLACED {
        let dir = match p.project {
            Some(name) => roots.entry(name).or_insert_with(|| repo(&env, name)).clone(),
            None => env.path().join("deleted-project"),
        };
        place(&env, p, &dir);
    }
    // What is not a conversation: a sub-agent's file (its parent's part), a file of another
    // kind in a store, a link to a transcript elsewhere.
    let claude = env.home.join(".claude/projects/-Users-soph-Work-entire-devenv-cli");
    std::fs::write(claude.join("agent-5e1f.jsonl"), gunzip(PLACED[2].fixture)).unwrap();
    std::fs::write(env.home.join(".claude/projects/-Users-jnarowski-Dev/notes.jsonl"), "not json at all\n").unwrap();
    std::os::unix::fs::symlink(env.home.join(PLACED[2].store), claude.join("linked.jsonl")).unwrap();

    // Looked at first: where each would go, nothing imported.
    let dry = import_all(&env, &["--dry-run"]);
    let plan = dry["plan"].as_array().expect("plan");
    assert_eq!(plan.len(), 7, "{dry:#}");
    let into = |id: &str| plan.iter().find(|e| e["conversation"] == id).map(|e| e["into"].clone());
    // A project's newest (by its own records' times, not its file's) into its live session,
    // the older into its history.
    assert_eq!(into(PLACED[1].id), Some("live".into()), "{dry:#}");
    assert_eq!(into(PLACED[0].id), Some("history".into()), "{dry:#}");
    assert_eq!(dry["into_history"], 0);
    let cli = roots["cli"].clone();
    assert!(live_conversations(&env, &cli).is_empty(), "--dry-run imported something");

    let first = import_all(&env, &[]);
    assert_eq!(first["into_history"], 1, "{first:#}");
    assert_eq!(first["into_live"], 6, "{first:#}");
    assert_eq!(first["projects"].as_array().map(Vec::len), Some(6), "{first:#}");
    assert!(first["events"].as_u64().unwrap_or(0) > 500, "{first:#}");
    let skipped: Vec<&str> = first["skipped"].as_array().unwrap().iter().filter_map(|s| s["why"].as_str()).collect();
    assert_eq!(skipped.len(), 2, "{first:#}");
    assert!(skipped.iter().any(|w| w.contains("deleted-project") && w.contains("is gone")), "{skipped:?}");
    assert!(skipped.iter().any(|w| w.contains("not a conversation")), "{skipped:?}");

    // Each where it belongs: the newest in the live session, the older in the history.
    assert_eq!(live_conversations(&env, &cli), [PLACED[1].id]);
    let history = env.ctl_json(&["history", cli.to_str().unwrap()]);
    assert!(history.to_string().contains(PLACED[0].id), "{history:#}");
    // One conversation is the one to resume, the live one.
    let marked: Vec<&Value> = history["conversations"]
        .as_array()
        .into_iter()
        .chain(history["sessions"].as_array().into_iter().flatten().filter_map(|s| s["conversations"].as_array()))
        .flatten()
        .filter(|c| c["resume"] == true)
        .collect();
    assert_eq!(marked.len(), 1, "{history:#}");
    assert_eq!(marked[0]["id"], PLACED[1].id, "{history:#}");
    for p in PLACED.iter().skip(2).filter(|p| p.project.is_some()) {
        assert_eq!(live_conversations(&env, &roots[p.project.unwrap()]), [p.id], "{}", p.fixture);
    }
    // Its resume context is where that conversation left off.
    let ctx = text(&env.ctl(&["context", roots["preloop"].to_str().unwrap()]).stdout);
    assert!(ctx.to_lowercase().contains("pullfrog"), "{ctx}");
    // And all of it can be searched.
    let hits = env.ctl(&["--json", "search", "NavUser", "--all", "-n", "3"]);
    assert!(text(&hits.stdout).contains(PLACED[2].id), "{}", text(&hits.stdout));

    // Again: nothing new.
    let again = import_all(&env, &[]);
    assert_eq!((again["into_history"].as_u64(), again["into_live"].as_u64()), (Some(0), Some(0)), "{again:#}");
    let held = again["skipped"].as_array().unwrap().iter().filter(|s| s["why"] == "ccmem holds it already").count();
    assert_eq!(held, 7, "{again:#}");
    let out = env.ctl(&["import", "--all"]);
    assert!(text(&out.stdout).contains("nothing new to import"), "{}", text(&out.stdout));

    // A conversation a live session took from the import goes on: it said more since.
    let file = env.home.join(PLACED[6].store);
    let mut more = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    // A line as Oh My Pi writes one (the fixture's own shape), after its last (a session is
    // a tree: the new entry's parent is the last one).
    let last: Value =
        std::fs::read_to_string(&file).unwrap().lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap();
    let line = serde_json::json!({"type": "message", "id": "zz01", "parentId": last["id"], "timestamp": "2026-09-01T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "now add the platypus banner"}]}});
    std::io::Write::write_all(&mut more, format!("{line}\n").as_bytes()).unwrap();
    let grown = import_all(&env, &[]);
    assert_eq!(grown["grown"], 1, "{grown:#}");
    let hits = env.ctl(&["--json", "search", "platypus", "--all"]);
    assert!(text(&hits.stdout).contains(PLACED[6].id), "{}", text(&hits.stdout));
    let again = import_all(&env, &[]);
    assert_eq!(again["grown"], 0, "{again:#}");

    // A conversation recorded since: the only one taken, by its agent and its time; the
    // project's live session has one, so it goes into the history.
    let later = Placed {
        fixture: "dev-transcripts/obsessiondb_chkit_92354ed8.jsonl.gz",
        id: "92354ed8-573d-4942-a80a-abc6e37b7543",
        recorded: "/Users/marc/conductor/workspaces/chkit/amman",
        store: ".claude/projects/-Users-marc/92354ed8-573d-4942-a80a-abc6e37b7543.jsonl",
        project: Some("cli"),
        days_ago: 0,
    };
    place(&env, &later, &cli);
    let codex_only = import_all(&env, &["--agent", "codex"]);
    assert_eq!(codex_only["into_history"], 0, "{codex_only:#}");
    let third = import_all(&env, &["--agent", "claude", "--since", "1 day"]);
    assert_eq!((third["into_history"].as_u64(), third["into_live"].as_u64()), (Some(1), Some(0)), "{third:#}");
    assert_eq!(live_conversations(&env, &cli), [PLACED[1].id]);
}

#[test]
fn import_all_says_what_it_cannot_read_and_refuses_bad_options() {
    let env = Env::new();
    let _d = env.start_daemon(&[]);
    // OpenCode's database is said to be there, not read.
    let data = env.path().join("data/opencode");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("opencode.db"), b"").unwrap();
    let out = env.ctl(&["import", "--all"]);
    assert_ok(&out, "import --all");
    let said = text(&out.stdout);
    assert!(said.contains("nothing new to import") && said.contains("opencode export"), "{said}");
    let bad = env.ctl(&["import", "--all", "--agent", "emacs"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("not an agent"), "{}", text(&bad.stderr));
    let bad = env.ctl(&["import", "--all", "--since", "the other day"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stderr));
    let both = env.ctl(&["import", "x.jsonl", "--all"]);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));

    // `hooks install` offers it once, when there is something to import.
    let install = || env.ctl(&["hooks", "install"]);
    let out = install();
    assert_ok(&out, "hooks install");
    assert!(!text(&out.stderr).contains("import --all"), "nothing to offer yet: {}", text(&out.stderr));
    let root = repo(&env, "app");
    place(&env, &PLACED[2], &root);
    let out = install();
    assert!(text(&out.stderr).contains("1 past conversation that Claude Code stored"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("ccmemctl import --all"), "{}", text(&out.stderr));
    let out = install();
    assert!(!text(&out.stderr).contains("import --all"), "offered once: {}", text(&out.stderr));
}
