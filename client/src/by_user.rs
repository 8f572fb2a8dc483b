//! Whether a command is run by the user rather than by an agent through its shell tool.
//!
//! A few commands change what every project's agent is told, or what ccmem records: confirming
//! or forgetting a user-wide fact (`facts confirm`, `facts forget --global`), writing, changing
//! or removing a global or enterprise memory, ending a session (`reset-session`) and
//! unwatching a project (`unwatch`). An agent can run any command, and a
//! repository can ask it to; these are the user's to run. They are refused when the
//! process runs under an agent: an agent's marker in the environment, or (on Linux) an
//! agent's program among the process's ancestors, which an agent cannot take off by
//! unsetting a variable. It is a bar against a request in a repository's text, not against
//! an agent that sets out to get round it; the hooks and MCP never offer these at all.

/// Variables the agents set for the commands their shell tool runs.
pub const MARKERS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "GEMINI_CLI",
    "OPENCODE",
    "OPENCODE_SESSION_ID",
    "PI_CODING_AGENT",
    "COPILOT_CLI",
    "CURSOR_AGENT",
];

/// The agents' programs, as a process's first or second argument names them (`claude`, or
/// `node …/claude-code/cli.js`).
#[cfg(any(target_os = "linux", test))]
const PROGRAMS: &[&str] = &[
    "claude",
    "codex",
    "codex-x86_64-unknown-linux-musl",
    "gemini",
    "opencode",
    "pi",
    "omp",
    "copilot",
    "cursor-agent",
];

/// Why this process looks run by an agent, if it does.
pub fn agent_here() -> Option<String> {
    if let Some(v) = MARKERS.iter().find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty())) {
        return Some(format!("${v} is set"));
    }
    agent_ancestor().map(|p| format!("it runs under {p}"))
}

/// Refuses `what` when an agent runs this process, with how the user does it instead.
pub fn require(what: &str) -> Result<(), String> {
    match agent_here() {
        Some(why) => Err(format!(
            "{what} is for you to run yourself, not an agent ({why}): it changes what ccmem keeps and tells every agent. Run it in a terminal of your own"
        )),
        None => Ok(()),
    }
}

/// Refuses, when an agent runs this process, reading the past of a project other than the
/// one it works in (`what`): another project's prompts and decisions are the user's, and a
/// repository's text could ask the agent for them. (The agent's MCP tools read its own
/// project's past only.)
pub fn require_own_project(what: &str) -> Result<(), String> {
    match agent_here() {
        Some(why) => Err(format!(
            "{what} reads the past of other projects than the one the agent works in, which is for you to read, not an agent ({why}). Run it in a terminal of your own; in its project, an agent searches with `ccmemctl search WORDS` or the MCP history tools"
        )),
        None => Ok(()),
    }
}

/// An agent's program among this process's ancestors (Linux: read from `/proc`).
#[cfg(target_os = "linux")]
fn agent_ancestor() -> Option<String> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..64 {
        if pid <= 1 {
            return None;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        if let Some(name) = agent_program(&cmdline) {
            return Some(name);
        }
        pid = parent_of(pid)?;
    }
    None
}

#[cfg(not(target_os = "linux"))]
fn agent_ancestor() -> Option<String> {
    None
}

/// The parent of `pid`, from `/proc/<pid>/stat` (after the command name's closing `)`).
#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The agent a command line runs, if any: its program, or the script node, bun or deno runs
/// (`node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js`).
#[cfg(any(target_os = "linux", test))]
fn agent_program(cmdline: &[u8]) -> Option<String> {
    let args: Vec<String> =
        cmdline.split(|&b| b == 0).take(3).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    let base = |a: &str| a.rsplit(['/', '\\']).next().unwrap_or(a).trim_end_matches(".exe").to_string();
    let first = base(args.first()?);
    if PROGRAMS.contains(&first.as_str()) {
        return Some(first);
    }
    if matches!(
        first.as_str(),
        "node" | "nodejs" | "bun" | "deno" | "sh" | "bash" | "dash" | "zsh" | "python3" | "python"
    ) {
        // The script it runs (`sh -c 'words'` runs words, not a script).
        let script = args
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .filter(|_| args.get(1).map(String::as_str) != Some("-c"))?;
        let known = ["claude-code", "@openai/codex", "gemini-cli", "opencode", "pi-coding-agent", "@github/copilot"];
        if PROGRAMS.contains(&base(script).as_str()) {
            return Some(base(script));
        }
        return known.iter().find(|k| script.contains(*k)).map(|k| k.trim_start_matches('@').to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_known_by_their_program_or_script() {
        assert_eq!(agent_program(b"/usr/bin/claude\0--resume\0x").as_deref(), Some("claude"));
        assert_eq!(
            agent_program(b"node\0/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js\0").as_deref(),
            Some("claude-code")
        );
        assert_eq!(agent_program(b"node\0--no-warnings\0/opt/bin/gemini\0").as_deref(), Some("gemini"));
        assert_eq!(agent_program(b"C:\\tools\\codex.exe\0exec").as_deref(), Some("codex"));
        assert_eq!(agent_program(b"/bin/bash\0-c\0claude"), None);
        assert_eq!(agent_program(b"/bin/sh\0/home/me/bin/codex\0exec").as_deref(), Some("codex"));
        assert_eq!(agent_program(b"node\0server.js\0"), None);
        assert_eq!(agent_program(b"vim\0pi.txt"), None);
    }
}
