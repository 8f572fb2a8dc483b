//! Command line of `ccmemctl`.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// ccmemctl: talk to ccmemd, the session memory daemon for AI coding agents.
///
/// Starts the daemon when it is not running (unless --no-start or CCMEM_NO_AUTOSTART=1).
///
/// Exit codes: 0 ok, 1 error reported by the daemon, 2 usage, 3 daemon unreachable.
#[derive(Debug, Parser)]
#[command(name = "ccmemctl", version, about, long_about)]
pub struct Cli {
    /// Socket of the daemon [default: $CCMEM_SOCKET, else $XDG_RUNTIME_DIR/ccmem/ccmemd.sock]
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Print machine-readable JSON instead of text
    #[arg(long, global = true)]
    pub json: bool,

    /// Do not start the daemon if it is not running
    #[arg(long, global = true)]
    pub no_start: bool,

    /// What to do
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check that the daemon answers, and how fast
    Ping,
    /// Show the daemon's state and the project of PATH (default: the current directory)
    Status {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// Stop the daemon gracefully (final checkpoints are written) and wait for it to exit
    Shutdown,
    /// Show the versions of ccmemctl and of the running daemon
    Version,
    /// Start (or keep) a session for the project of PATH (default: the current directory)
    Watch {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// End the project's session (final checkpoint, archived) and stop tracking it
    Unwatch {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// List the projects with a live session
    Projects,
    /// List the project's ended sessions, newest first
    History {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// End the project's session now (archived) and start a new one
    ResetSession {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// Write the project's checkpoint (.claude/.project-state.json) now
    Checkpoint {
        /// A directory or file inside the project
        path: Option<PathBuf>,
        /// Why
        #[arg(long, value_enum, default_value_t = Reason::Manual)]
        reason: Reason,
        /// Notes to keep with the session (replaces its context notes)
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Handle one agent hook event: the JSON payload on stdin (for the agent's hook settings;
    /// always exits 0)
    Hook,
    /// Replay a Claude Code transcript (~/.claude/projects/<dir>/<id>.jsonl) into the
    /// project's session, as its hooks would have delivered it
    Import {
        /// The transcript
        transcript: PathBuf,
        /// The project it belongs to [default: the current directory]
        #[arg(long, value_name = "PATH")]
        project: Option<PathBuf>,
    },
    /// Print what a fresh agent needs to carry on in this project
    Context {
        /// A directory or file inside the project
        path: Option<PathBuf>,
        /// At most this many characters (default: the daemon's, 6000; at most 10000)
        #[arg(long, value_name = "CHARS")]
        budget: Option<usize>,
    },
    /// Print the id of the project's most recent conversation: claude --resume "$(ccmemctl resume-id)"
    ResumeId {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// Install or remove ccmem's hooks in Claude Code's settings
    Hooks {
        /// What to do
        #[command(subcommand)]
        action: HooksAction,
    },
    /// Show the daemon's configuration and where each value came from, or reload it
    Config {
        /// What to do
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Print a shell completion script: `ccmemctl completions bash > ~/.local/share/bash-completion/completions/ccmemctl`
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `ccmemctl man | man -l -`
    Man,
    /// Check the installation: daemon, socket, service, hooks, watch limits, git, MCP server, directories
    Doctor,
    /// Run ccmemd as a user service (systemd socket activation on Linux, launchd on macOS)
    Service {
        /// What to do
        #[command(subcommand)]
        action: crate::service::Action,
    },
    /// Write the session memory report (.claude/session-memory.md) now and print its path;
    /// --stdout prints it instead; --check FILE validates a report file (no daemon needed)
    Report {
        /// A directory or file inside the project (default: the current directory)
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print the report instead of writing it
        #[arg(long, conflicts_with = "check")]
        stdout: bool,
        /// Check a report file against seed 000's rules and list what is wrong (exit 1 if anything)
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
    },
    /// Record test results from a runner's output on stdin, or from a JUnit XML file:
    /// `cargo test 2>&1 | ccmemctl test-report`, `ccmemctl test-report --junit report.xml`
    TestReport {
        /// A directory or file inside the project (default: the current directory)
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// The runner: cargo, nextest, pytest, go, jest, vitest, mocha, node, playwright,
        /// cypress, bun, rspec, phpunit, dotnet, maven, gradle [default: recognised]
        #[arg(long, value_name = "NAME")]
        framework: Option<String>,
        /// Read a JUnit XML report instead of stdin
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// The command that ran the tests, kept with the results
        #[arg(long, value_name = "COMMAND")]
        command: Option<String>,
        /// The tests are end-to-end [default: by the runner]
        #[arg(long)]
        e2e: bool,
    },
    /// Knowledge memories: typed markdown notes (decisions, learnings, gotchas…) in global,
    /// project, local or enterprise scope, with links, search and health checks
    Memory {
        /// What to do
        #[command(subcommand)]
        action: crate::memory::Action,
    },
    /// Serve the agent over MCP on stdin/stdout: memory_search, memory_write, memory_show,
    /// session_status and session_context (add to Claude Code: `claude mcp add ccmem -- ccmemctl mcp`)
    Mcp,
    /// Record an event in the project's session, given as JSON (or read from stdin), e.g.
    /// '{"kind":"file_edited","path":"src/main.rs","summary":"parse flags"}'
    Event {
        /// The event as JSON; `-` or absent reads it from stdin
        #[arg(value_name = "JSON")]
        event: Option<String>,
        /// A directory or file inside the project (default: the current directory)
        #[arg(long, value_name = "PATH")]
        project: Option<PathBuf>,
    },
}

/// `ccmemctl config …`
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// The effective configuration: every key, its value and its source (with PATH's
    /// project overrides from .claude/ccmem.toml)
    Show {
        /// A directory or file inside a project
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// Read the configuration file again (as SIGHUP does); a bad file leaves the previous
    /// configuration in force and says why
    Reload,
}

/// `ccmemctl hooks …`
#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add ccmem's hooks to settings.json (other hooks and keys are kept; a backup is made)
    Install(Target),
    /// Remove ccmem's hooks (and only those)
    Uninstall(Target),
}

/// Which settings file, and whether to write it.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// ~/.claude/settings.json (the default)
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// The project's .claude/settings.json
    #[arg(long)]
    pub project: bool,
    /// Show the result without writing it
    #[arg(long)]
    pub dry_run: bool,
}

/// Checkpoint reasons a user can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reason {
    /// Save now
    Manual,
    /// A phase is finished
    #[value(name = "phase_complete", alias = "phase-complete")]
    PhaseComplete,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
