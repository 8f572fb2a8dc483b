//! Command line of `ccmemctl`.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// ccmemctl: talk to ccmemd, the session memory daemon for AI coding agents.
///
/// Starts the daemon when it is not running (unless --no-start or CCMEM_NO_AUTOSTART=1).
///
/// Exit codes: 0 ok, 1 error reported by the daemon, 2 usage, 3 daemon unreachable.
#[derive(Debug, Parser)]
#[command(
    name = "ccmemctl",
    version,
    about = "the client of ccmem, session memory for AI coding agents",
    long_about = "The client of ccmem, session memory for AI coding agents.

ccmemctl talks to ccmemd, the per-user daemon that keeps each project's work session: the
prompts, todos, files edited, test and build results, dev servers and the agent's last words.
It saves them into the project's .claude directory.

The agent's hooks run ccmemctl on every event. At the next session start, the agent is told
where it left off.

The daemon is started when needed, unless --no-start or CCMEM_NO_AUTOSTART=1."
)]
pub struct Cli {
    /// The daemon's socket [default: $CCMEM_SOCKET or $XDG_RUNTIME_DIR/ccmem/ccmemd.sock]
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub socket: Option<PathBuf>,

    /// Print machine-readable JSON instead of text
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,

    /// Do not start the daemon if it is not running
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_start: bool,

    /// What to do
    #[command(subcommand)]
    pub command: Command,
}

/// The heading of the options every command takes.
const GLOBAL: &str = "Global options";

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
    /// List the project's sessions, newest first, with their conversations
    ///
    /// The conversation `resume-id` names is marked.
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
        /// Why it is taken, kept in the checkpoint as its reason: manual (saved by hand), or
        /// phase_complete (a phase of the work is finished)
        #[arg(long, value_enum, default_value_t = Reason::Manual)]
        reason: Reason,
        /// Notes to keep with the session (replaces its context notes)
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Handle one agent hook event: the JSON payload on stdin (for the agent's hook settings;
    /// always exits 0). Hidden from the list: the agent runs it, not people
    #[command(hide = true)]
    Hook {
        /// The agent sending it: claude (the default), codex, gemini, opencode, pi, copilot, cursor
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Replay an agent's recorded conversation into the project's session
    ///
    /// Each event is replayed as the agent's hooks would have delivered it, at the time it
    /// happened. The file can be a Claude Code transcript (~/.claude/projects/<dir>/<id>.jsonl),
    /// a Codex rollout (~/.codex/sessions/…/rollout-*.jsonl), a Gemini CLI chat
    /// (~/.gemini/tmp/<project>/chats/session-*.jsonl), a Pi or Oh My Pi session
    /// (~/.pi/agent/sessions/…/*.jsonl), or an OpenCode export (`opencode export ID > f.json`)
    ///
    /// With --all, every conversation every agent has stored on this machine goes into the
    /// history of the project it was recorded in, once: run again, only what is new goes.
    /// A project's newest goes into its live session instead when that has no conversation
    /// yet and ccmem knows nothing newer of the project.
    #[command(
        after_help = "Examples:\n  ccmemctl import ~/.claude/projects/-home-me-app/5f3c2a1e-….jsonl\n  ccmemctl import --all\n  ccmemctl import --all --agent codex --since '2 weeks' --dry-run"
    )]
    Import {
        /// The file (its format is recognised)
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        transcript: Option<PathBuf>,
        /// The project it belongs to [default: the current directory]
        #[arg(long, value_name = "PATH", conflicts_with = "all")]
        project: Option<PathBuf>,
        /// Into the project's history, as an ended session of its own, not into the live
        /// session (a conversation the journal holds already is skipped)
        #[arg(long, conflicts_with = "all")]
        into_history: bool,
        /// Every conversation of every agent's store on this machine, each into its own
        /// project
        #[arg(long)]
        all: bool,
        /// With --all: one agent's conversations only (claude, codex, gemini, opencode, pi, copilot)
        #[arg(long, value_name = "NAME", requires = "all")]
        agent: Option<String>,
        /// With --all: conversations changed since then only (`2026-11-02`, `2 weeks`)
        #[arg(long, value_name = "WHEN", requires = "all")]
        since: Option<String>,
        /// With --all: say what would be imported and where, import nothing
        #[arg(long, requires = "all")]
        dry_run: bool,
    },
    /// Print what a fresh agent needs to carry on in this project
    Context {
        /// A directory or file inside the project
        path: Option<PathBuf>,
        /// At most this many characters, 200 to 10000 (default: the daemon's, 6000)
        #[arg(long, value_name = "CHARS", value_parser = clap::value_parser!(u64).range(200..=10_000))]
        budget: Option<u64>,
    },
    /// Print the id of the project's most recent conversation
    ///
    /// For example: claude --resume "$(ccmemctl resume-id)"
    ResumeId {
        /// A directory or file inside the project
        path: Option<PathBuf>,
    },
    /// Install or remove ccmem's hooks in an agent's settings
    Hooks {
        /// What to do
        #[command(subcommand)]
        action: HooksAction,
    },
    /// Show every setting, its value and where it came from, or reload the configuration
    Config {
        /// What to do
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Print a shell completion script
    ///
    /// For example: `ccmemctl completions bash > ~/.local/share/bash-completion/completions/ccmemctl`
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `ccmemctl man | man -l -`
    Man,
    /// Check the installation and say how to fix what is wrong
    ///
    /// Checks the daemon, its configuration, the socket, the service, the agents' hooks, the
    /// watch limits, git, the MCP server and the directories. Exits 1 when a check fails.
    Doctor,
    /// Run ccmemd as a user service, started at login
    ///
    /// systemd socket activation on Linux, launchd on macOS, a logon task on Windows.
    Service {
        /// What to do
        #[command(subcommand)]
        action: crate::service::Action,
    },
    /// Write the session memory report (.claude/session-memory.md) now
    ///
    /// Prints its path; --stdout prints the report instead; --check FILE validates a report
    /// file (no daemon needed).
    Report {
        /// A directory or file inside the project (default: the current directory)
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print the report instead of writing it
        #[arg(long, conflicts_with = "check")]
        stdout: bool,
        /// Check a report file's format and list what is wrong (exit 1 if anything)
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
    },
    /// Record test results from a runner's output on stdin, or from a JUnit XML file
    ///
    /// For example: `cargo test 2>&1 | ccmemctl test-report`, or
    /// `ccmemctl test-report --junit report.xml`.
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
    /// Knowledge memories: notes of decisions, learnings, gotchas… kept across sessions
    ///
    /// Typed markdown notes in global, project, local or enterprise scope, with links,
    /// search and health checks.
    Memory {
        /// What to do
        #[command(subcommand)]
        action: crate::commands::memory::Action,
    },
    /// Serve the agent over MCP on stdin/stdout
    ///
    /// Its memories, facts, goals and session as tools. To add it to Claude Code:
    /// `claude mcp add ccmem -- ccmemctl mcp` (the plugin does).
    Mcp,
    /// The handoff through git: where the work on a branch was left, to another machine or a teammate
    ///
    /// Off until `handoff enable`. Then, at each checkpoint, ccmem writes the branch's handoff
    /// (the task, todos, unresolved failures, the agent's last words, decisions, files:
    /// redacted, at most 16 KB; never a transcript) as a commit on
    /// `refs/ccmem/handoff/<you>/<branch>`, which no branch, `git status` or `git log` shows.
    /// It goes to the one remote you name (`push`, or after each Stop with `--auto`); other
    /// clones with handoff on fetch it at session start and open their context with it.
    #[command(
        after_help = "Examples:\n  ccmemctl handoff enable --auto\n  ccmemctl handoff push\n  ccmemctl handoff pull && ccmemctl handoff show\n  ccmemctl handoff forget --remote"
    )]
    Handoff {
        /// What to do (default: show)
        #[command(subcommand)]
        action: Option<HandoffCmd>,
        /// A directory inside the project (default: the current directory)
        #[arg(long, global = true, value_name = "PATH")]
        project: Option<PathBuf>,
    },
    /// The facts and goals the agent asked to keep: list, forget, mark done
    ///
    /// The agent keeps them by writing [REMEMBER: …] and [GOAL: …].
    Facts {
        /// What to do (default: list)
        #[command(subcommand)]
        action: Option<FactsAction>,
        /// A directory or file inside the project (default: the current directory)
        #[arg(long, global = true, value_name = "PATH")]
        project: Option<PathBuf>,
    },
    /// Forget for good: a conversation, a session, a project's whole past, or a text
    ///
    /// Removed from the journal (its full-text index, its log and its free pages too), the
    /// live session, its checkpoint (and the copy before it), its report, and the state
    /// dir's trackers, archives and facts. Shows what will go and asks first (`--yes` does
    /// not ask; without a terminal it is needed).
    #[command(
        after_help = "Examples:\n  ccmemctl forget --text 'hunter2-prod-password' --all\n  ccmemctl forget --conversation 5f3c2a1e-… --project .\n  ccmemctl forget --session session_2026-11-02_09-14-03 --project .\n  ccmemctl forget --project ~/src/old-app"
    )]
    Forget {
        /// One conversation, by the agent's id for it (`ccmemctl history` lists them)
        #[arg(long, value_name = "ID", conflicts_with_all = ["session", "text"])]
        conversation: Option<String>,
        /// One ended session, by its id (`ccmemctl history` lists them)
        #[arg(long, value_name = "ID", conflicts_with_all = ["conversation", "text"])]
        session: Option<String>,
        /// Everything that holds this text, in any case (a secret pasted by mistake), in the
        /// current project unless --project or --all says otherwise
        #[arg(long, value_name = "TEXT", conflicts_with_all = ["conversation", "session"])]
        text: Option<String>,
        /// The project (a directory or file inside it); alone, its whole past
        #[arg(long, value_name = "PATH")]
        project: Option<PathBuf>,
        /// Every project (with --text)
        #[arg(long, requires = "text", conflicts_with = "project")]
        all: bool,
        /// Do not ask
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Search the past of the project (or of every project): prompts, the agent's words,
    /// decisions, failures, commands, tests, commits, files, in any language
    ///
    /// Ranked, newest first among equals; each hit with the command that resumes its
    /// conversation while the agent still has it. `--json` prints one object per line.
    #[command(
        after_help = "Examples:\n  ccmemctl search token refresh\n  ccmemctl search '\"pull request\"' --kind decision --since '2 weeks'\n  ccmemctl search test_login --kind failure --all\n  ccmemctl search 마이그레이션 --agent codex\n  ccmemctl search -- retry -flaky     (after --, a word with - before it is left out)"
    )]
    Search {
        /// Words (any language), "a phrase", prefix*, -word to leave out
        #[arg(required = true, num_args = 1.., value_name = "QUERY")]
        query: Vec<String>,
        #[command(flatten)]
        scope: RecallScope,
        /// Hits at most (1 to 200)
        #[arg(long, short = 'n', value_name = "N", default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=200))]
        limit: usize,
    },
    /// A session, or a span of the project's past, as a story in time order
    ///
    /// Prompts, todos changing state, files edited (repeated edits folded), commands and
    /// their failures, tests and builds, commits, compactions, one agent handing over to
    /// another. Default: the project's newest session.
    Timeline {
        /// A directory or file inside the project (default: the current directory)
        path: Option<PathBuf>,
        #[command(flatten)]
        scope: RecallScope,
        /// Every event as it is, none folded or left out
        #[arg(long)]
        full: bool,
        /// Steps at most, the newest (1 to 2000)
        #[arg(long, short = 'n', value_name = "N", default_value_t = 200, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=2000))]
        limit: usize,
    },
    /// The projects, sessions and timelines to look at, live, in the terminal; `r` prints
    /// the selected conversation's resume command and quits (`eval "$(ccmemctl ui)"`)
    Ui,
    /// The conversations that touched a file, newest first: the prompt each served, the
    /// decisions and failures around the edits, and the commit that last changed it
    Why {
        /// The file, with a line to ask git about (`src/auth.rs:42`)
        #[arg(value_name = "FILE[:LINE]")]
        file: String,
        /// The project (default: the file's)
        #[arg(long, value_name = "PATH")]
        project: Option<PathBuf>,
        /// Conversations at most (1 to 50)
        #[arg(long, short = 'n', value_name = "N", default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=50))]
        limit: usize,
    },
    /// One event in full, by the number a search or a timeline shows (`#1234`)
    Show {
        /// The event's number
        #[arg(value_name = "N")]
        seq: String,
        /// Events of its session shown before and after it
        #[arg(long, value_name = "N", default_value_t = 0)]
        around: usize,
    },
    /// Record an event in the project's session, given as JSON (or read from stdin)
    ///
    /// For example: '{"kind":"file_edited","path":"src/main.rs","summary":"parse flags"}'
    #[command(after_help = EVENT_KINDS)]
    Event {
        /// The event as JSON; `-` or absent reads it from stdin
        #[arg(value_name = "JSON")]
        event: Option<String>,
        /// A directory or file inside the project (default: the current directory)
        #[arg(long, value_name = "PATH")]
        project: Option<PathBuf>,
    },
}

/// Where `search` and `timeline` look.
#[derive(Debug, Clone, clap::Args)]
pub struct RecallScope {
    /// The project (a directory or file inside it) [default: the current directory]
    #[arg(long, value_name = "PATH", conflicts_with = "all")]
    pub project: Option<PathBuf>,
    /// Every project
    #[arg(long)]
    pub all: bool,
    /// One agent: claude, codex, gemini, opencode, pi, copilot, cursor
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// One session (ccmem's id) or conversation (the agent's id)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only these kinds (repeat or separate with commas): prompt, message, decision,
    /// failure, fixed, command, test, build, commit, file, todo, compaction, session
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    pub kind: Vec<String>,
    /// From then on: a date (2026-11-02, 2026-11-02T14:00), or a while ago (2 weeks, 3d,
    /// 12h, yesterday)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Up to then (as --since)
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
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

/// `handoff` subcommands.
#[derive(Debug, Subcommand)]
pub enum HandoffCmd {
    /// Turn it on for this project (the setting is yours, in ccmem's config dir)
    Enable {
        /// The remote to push to and fetch from [default: the branch's upstream remote, else origin]
        #[arg(long, value_name = "NAME")]
        remote: Option<String>,
        /// Push after each Stop of the agent and at session end, in the background
        #[arg(long)]
        auto: bool,
    },
    /// Turn it off (nothing more is written, pushed or fetched; the refs stay)
    Disable,
    /// Write the branch's handoff now and push it to the remote
    Push,
    /// Fetch everyone's handoffs from the remote now
    Pull,
    /// Show the handoffs of a branch (default: the one checked out), newest first
    Show {
        /// The branch
        branch: Option<String>,
    },
    /// Delete this clone's handoff refs, and what was fetched
    Forget {
        /// Delete this clone's handoffs on the remote too
        #[arg(long)]
        remote: bool,
    },
    /// Drop the handoffs of branches merged or deleted upstream
    Prune {
        /// Delete this clone's pruned handoffs on the remote too
        #[arg(long)]
        remote: bool,
    },
}

/// `ccmemctl facts …`
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum FactsAction {
    /// List the project's facts, the user-wide facts and the goals, numbered
    List,
    /// Forget fact N (as `facts` numbers them)
    Forget {
        /// Its number
        n: usize,
        /// N is a user-wide fact (`[REMEMBER GLOBAL: …]`)
        #[arg(long)]
        global: bool,
    },
    /// Mark active goal N as reached
    Done {
        /// Its number
        n: usize,
    },
    /// Let user-wide fact N (an agent's `[REMEMBER GLOBAL: …]`, unconfirmed) reach every
    /// project (until then it is shown in that project only)
    Confirm {
        /// Its number, as `facts` lists the facts for every project
        n: usize,
    },
}

/// `ccmemctl hooks …`
#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add ccmem's hooks to the agent's settings (other hooks and keys are kept; a backup is made)
    Install(Target),
    /// Remove ccmem's hooks (and only those)
    Uninstall(Target),
}

/// Which settings file, and whether to write it.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The agent: claude (the default: ~/.claude/settings.json), codex ($CODEX_HOME/hooks.json,
    /// trusted in its config.toml), gemini (~/.gemini/settings.json, or under $GEMINI_CLI_HOME),
    /// opencode (a plugin in ~/.config/opencode/plugin/), pi (an extension in
    /// ~/.pi/agent/extensions/), copilot (~/.copilot/hooks/ccmem.json), cursor
    /// (~/.cursor/hooks.json; untested), or all of them (Claude Code and each other agent found)
    #[arg(long, value_name = "NAME", default_value = "claude")]
    pub agent: String,
    /// The user's settings (the default)
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// The project's .claude/settings.json (Claude Code only)
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

/// The event kinds, for `event --help` (the README's event table says the same); each line
/// within the 100 columns help is wrapped to.
const EVENT_KINDS: &str = r#"Kinds, with an example of each:
  file_edited   {"kind":"file_edited","path":"src/a.rs","summary":"parse flags","created":false}
  file_deleted  {"kind":"file_deleted","path":"src/old.rs"}
  command       {"kind":"command","command":"/review","workflow":"/review","status":"completed"}
  todos         {"kind":"todos","todos":[{"content":"Add login","status":"in_progress"}]}
  context       {"kind":"context","active_task":"OAuth login","next_steps":["write tests"]}
  phase         {"kind":"phase","name":"Core","completion":40}
  note          {"kind":"note","text":"staging DB is read-only"}
  warning       {"kind":"warning","text":"disk almost full"}
  server        {"kind":"server","process":"node","port":3000,"status":"running"}
  tests         {"kind":"tests","suite":{"framework":"jest","status":"failed","failed":1,"total":9}}
  build         {"kind":"build","status":"failed","errors":["src/a.ts(3,1): error TS2304"]}"#;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_event_example_in_the_help_is_an_event() {
        let lines: Vec<&str> = EVENT_KINDS.lines().skip(1).collect();
        assert_eq!(lines.len(), 11);
        for l in lines {
            assert!(l.chars().count() <= 100, "wrapped in the help: {l}");
            let (kind, json) = l.trim().split_once(' ').expect("kind and example");
            let e: ccmem_proto::model::session::SessionEvent =
                serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{kind}: {e}"));
            let back = serde_json::to_value(&e).unwrap();
            assert_eq!(back["kind"], kind, "{json}");
        }
    }
}
