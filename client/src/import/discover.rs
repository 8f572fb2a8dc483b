//! Where each agent keeps its conversations on this machine, for `ccmemctl import --all`:
//!
//! | agent | store |
//! |---|---|
//! | Claude Code | `$CLAUDE_CONFIG_DIR/projects/<dir>/<id>.jsonl` (`~/.claude`); not the sub-agents' `agent-*.jsonl` |
//! | Codex | `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` and `archived_sessions/` (`~/.codex`) |
//! | Gemini CLI | `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.json[l]` (`~`) |
//! | Pi | `$PI_CODING_AGENT_DIR/sessions/<dir>/*.jsonl` (`~/.pi/agent`) |
//! | Oh My Pi | `~/.omp/agent/sessions/<dir>/*.jsonl` |
//! | Copilot CLI | `$COPILOT_HOME/session-state/<id>/events.jsonl` (`~/.copilot`) |
//!
//! OpenCode keeps its conversations in a database of its own (`$XDG_DATA_HOME/opencode/
//! opencode.db`): the daemon lists them from it, read only, and OpenCode's own program
//! exports each (`opencode export ID`) when it is imported.
//!
//! Only regular files are taken (a link in a store is not followed), each directory is
//! read to a bounded depth, and the walk stops at a bounded number of files.

use ccmem_proto::model::agent::Agent;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Files looked at in all, at most.
const MAX_FILES: usize = 200_000;

/// A conversation file found in a store.
#[derive(Debug, Clone)]
pub struct Found {
    /// The file.
    pub path: PathBuf,
    /// The agent whose store holds it.
    pub agent: Agent,
    /// Its size in bytes.
    pub size: u64,
    /// When it last changed.
    pub modified: SystemTime,
}

/// An agent's store: where it is, and whether it exists.
#[derive(Debug, Clone)]
pub struct Store {
    pub agent: Agent,
    pub dir: PathBuf,
}

/// The stores of every agent (of `only`, when given), existing or not.
pub fn stores(only: Option<Agent>) -> Vec<Store> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME").or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()));
    let Some(home) = home else { return Vec::new() };
    let claude = var("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude"));
    let codex = var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
    let gemini = var("GEMINI_CLI_HOME").unwrap_or_else(|| home.clone()).join(".gemini");
    let pi = var("PI_CODING_AGENT_DIR").unwrap_or_else(|| home.join(".pi/agent"));
    let copilot = var("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot"));
    let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    let all = [
        (Agent::Claude, claude.join("projects")),
        (Agent::Codex, codex.join("sessions")),
        (Agent::Codex, codex.join("archived_sessions")),
        (Agent::Gemini, gemini.join("tmp")),
        (Agent::Pi, pi.join("sessions")),
        (Agent::Pi, home.join(".omp/agent/sessions")),
        (Agent::Copilot, copilot.join("session-state")),
        (Agent::Opencode, data.join("opencode")),
    ];
    all.into_iter().filter(|(a, _)| only.is_none_or(|o| o == *a)).map(|(agent, dir)| Store { agent, dir }).collect()
}

/// The conversation files in `store`, changed at or after `since` when given.
pub fn files(store: &Store, since: Option<SystemTime>, out: &mut Vec<Found>) {
    let wanted = |rel: &[&str]| -> bool {
        let Some(name) = rel.last() else { return false };
        match (store.agent, rel.len()) {
            // `<dir>/<id>.jsonl`; a sub-agent's `agent-*.jsonl` is part of its parent's.
            (Agent::Claude, 2) => name.ends_with(".jsonl") && !name.starts_with("agent-"),
            // `YYYY/MM/DD/rollout-*.jsonl`, or flat in `archived_sessions/`.
            (Agent::Codex, _) => name.starts_with("rollout-") && name.ends_with(".jsonl"),
            // `<project>/chats/session-*.json[l]`.
            (Agent::Gemini, 3) => {
                rel[1] == "chats"
                    && name.starts_with("session-")
                    && (name.ends_with(".jsonl") || name.ends_with(".json"))
            }
            (Agent::Pi, 2) => name.ends_with(".jsonl"),
            (Agent::Copilot, 2) => *name == "events.jsonl",
            _ => false,
        }
    };
    let depth = match store.agent {
        Agent::Codex => 4,
        Agent::Gemini => 3,
        Agent::Opencode => 0,
        _ => 2,
    };
    walk(&store.dir, &mut Vec::new(), depth, &mut |path, rel, meta| {
        if !wanted(rel) {
            return;
        }
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if since.is_some_and(|s| modified < s) {
            return;
        }
        out.push(Found { path: path.to_path_buf(), agent: store.agent, size: meta.len(), modified });
    });
}

/// OpenCode's database in `store`, if it is there (a regular file).
pub fn opencode_database(store: &Store) -> Option<PathBuf> {
    let db = store.dir.join("opencode.db");
    std::fs::symlink_metadata(&db).is_ok_and(|m| m.is_file()).then_some(db)
}

/// OpenCode's own program, which exports a conversation from its database: on PATH (its
/// absolute entries outside the current project, as for ccmem's own programs), else where
/// its installer puts it (`~/.opencode/bin/opencode`).
pub fn opencode_program() -> Option<PathBuf> {
    crate::autostart::find_program("opencode").or_else(|| {
        let home = directories::BaseDirs::new()?.home_dir().to_path_buf();
        let p = home.join(".opencode/bin").join(format!("opencode{}", std::env::consts::EXE_SUFFIX));
        crate::autostart::is_executable(&p).then_some(p)
    })
}

/// Calls `found` for each regular file under `dir`, `depth` levels down at most, with its
/// path relative to the store as names; links are not followed.
fn walk(dir: &Path, rel: &mut Vec<String>, depth: usize, found: &mut dyn FnMut(&Path, &[&str], &std::fs::Metadata)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut seen = 0usize;
    for entry in entries.flatten() {
        seen += 1;
        if seen > MAX_FILES {
            break;
        }
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        rel.push(name);
        if meta.is_dir() && rel.len() < depth {
            walk(&entry.path(), rel, depth, found);
        } else if meta.is_file() {
            let names: Vec<&str> = rel.iter().map(String::as_str).collect();
            found(&entry.path(), &names, &meta);
        }
        rel.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_store_yields_its_conversations_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let put = |rel: &str| {
            let p = t.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}\n").unwrap();
        };
        put("claude/-home-me-app/1b2c.jsonl");
        put("claude/-home-me-app/agent-77.jsonl");
        put("claude/-home-me-app/1b2c/subagents/agent-1.jsonl");
        put("codex/2026/11/02/rollout-2026-11-02T10-00-00-abc.jsonl");
        put("codex/2026/11/02/notes.txt");
        put("gemini/9f3a/chats/session-2026-11-02T10-00-abc.jsonl");
        put("gemini/9f3a/logs.json");
        put("copilot/5e1f/events.jsonl");
        put("copilot/5e1f/plan.md");
        let count = |agent, dir: &str| {
            let mut out = Vec::new();
            files(&Store { agent, dir: t.join(dir) }, None, &mut out);
            out.into_iter().map(|f| f.path.strip_prefix(t).unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>()
        };
        assert_eq!(count(Agent::Claude, "claude"), ["claude/-home-me-app/1b2c.jsonl"]);
        assert_eq!(count(Agent::Codex, "codex"), ["codex/2026/11/02/rollout-2026-11-02T10-00-00-abc.jsonl"]);
        assert_eq!(count(Agent::Gemini, "gemini"), ["gemini/9f3a/chats/session-2026-11-02T10-00-abc.jsonl"]);
        assert_eq!(count(Agent::Copilot, "copilot"), ["copilot/5e1f/events.jsonl"]);
        // Nothing changed since a time after now.
        let mut out = Vec::new();
        let later = SystemTime::now() + std::time::Duration::from_secs(3600);
        files(&Store { agent: Agent::Claude, dir: t.join("claude") }, Some(later), &mut out);
        assert!(out.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn links_in_a_store_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        std::fs::create_dir_all(t.join("elsewhere")).unwrap();
        std::fs::write(t.join("elsewhere/x.jsonl"), "{}\n").unwrap();
        std::fs::create_dir_all(t.join("claude/p")).unwrap();
        std::os::unix::fs::symlink(t.join("elsewhere/x.jsonl"), t.join("claude/p/y.jsonl")).unwrap();
        std::os::unix::fs::symlink(t.join("elsewhere"), t.join("claude/q")).unwrap();
        let mut out = Vec::new();
        files(&Store { agent: Agent::Claude, dir: t.join("claude") }, None, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
