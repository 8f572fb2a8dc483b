//! `ccmemctl`, the ccmem client.
//!
//! Small and quick on purpose: blocking socket I/O, no async runtime, nothing loaded before
//! the request is sent. Every command says hello first, so a daemon of another version is
//! noticed and named.

pub mod autostart;
pub mod by_user;
mod call;
pub mod cli;
mod commands;
pub mod conn;
mod cut_json;
pub mod doctor;
pub mod hook;
pub mod import;
pub mod input;
pub mod install;
mod man;
pub mod mcp;
mod output;
pub mod service;
pub mod ui;
mod when;

use ccmem_proto::wire::paths;
use clap::Parser;
use conn::CallError;
use serde_json::json;
use std::process::ExitCode;

/// Documented exit codes.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The daemon reported an error (or a local one stopped the command).
    pub const ERROR: u8 = 1;
    /// Bad command line (clap's own code).
    pub const USAGE: u8 = 2;
    /// The daemon could not be reached or started.
    pub const UNREACHABLE: u8 = 3;
}

/// A failed command, with the exit code it maps to.
#[derive(Debug)]
pub enum Error {
    /// No daemon to talk to (exit 3).
    Unreachable(String),
    /// The daemon said no, or something local went wrong (exit 1).
    Failed(String),
    /// A failure already reported on stdout (exit 1).
    Quiet,
}

impl Error {
    fn code(&self) -> u8 {
        match self {
            Error::Unreachable(_) => exit::UNREACHABLE,
            Error::Failed(_) | Error::Quiet => exit::ERROR,
        }
    }

    /// What to tell the user (nothing for a failure already shown).
    fn message(&self) -> Option<&str> {
        match self {
            Error::Unreachable(m) | Error::Failed(m) => Some(m),
            Error::Quiet => None,
        }
    }
}

/// The exit of a program of ours: the error, if any, on stderr after `program: `, and its code.
fn exit_with(program: &str, outcome: Result<(), Error>) -> ExitCode {
    exit_as(program, outcome, false)
}

/// [`exit_with`]; with `json`, the error is `{"error": {"code": <exit code>, "message"}}` on
/// stdout instead, for scripts that read `--json` output.
fn exit_as(program: &str, outcome: Result<(), Error>, json: bool) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            // A message can name a path the user is in, and a directory's name can hold an
            // escape sequence: printed clean.
            match (e.message().map(|m| ccmem_proto::printable::text(m).into_owned()), json) {
                (Some(m), true) => output::print_json(&json!({"error": {"code": e.code(), "message": m}})),
                (Some(m), false) => eprintln!("{program}: {m}"),
                (None, _) => {}
            }
            ExitCode::from(e.code())
        }
    }
}

impl From<CallError> for Error {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Io(e) => Error::Unreachable(format!("lost the connection to ccmemd: {e}")),
            CallError::Rpc(e) => Error::Failed(e.for_people().to_string()),
            CallError::BadReply(m) => Error::Failed(m),
        }
    }
}

/// Entry point of the `ccmemctl` binary.
pub fn main() -> ExitCode {
    // The agent's hook path: straight there, before any argument parsing.
    if let Some(agent) = hook_fast_path(std::env::args_os().skip(1).collect()) {
        return hook::run(None, !autostart_disabled(), agent.as_deref());
    }
    // `ccmemctl completions bash | head -1`: a reader that stops early is a normal end, as
    // for any Unix tool (killed quietly by SIGPIPE, status 141), not a panic in `println!`.
    closed_stdout_ends_quietly(true);
    let cli = cli::Cli::parse();
    let json = cli.json;
    exit_as("ccmemctl", run(cli), json)
}

/// `ccmemctl hook`, `ccmemctl hook --agent NAME` or `--agent=NAME`: the agent's hook,
/// handled before clap is even set up (Some(agent), None for the default); anything else
/// goes through the parser.
fn hook_fast_path(args: Vec<std::ffi::OsString>) -> Option<Option<String>> {
    let args: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    match args.as_slice() {
        ["hook"] => Some(None),
        ["hook", "--agent", name] => Some(Some(name.to_string())),
        ["hook", flag] => flag.strip_prefix("--agent=").map(|n| Some(n.to_string())),
        _ => None,
    }
}

/// SIGPIPE's default action (end the process quietly) when `quietly`, else ignored (writes to
/// a closed pipe then fail with an error the caller handles: the hook path, which must exit 0).
pub(crate) fn closed_stdout_ends_quietly(quietly: bool) {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to one of libc's constants, before any thread of
    // ours runs (the hook path resets it first thing).
    unsafe {
        libc::signal(libc::SIGPIPE, if quietly { libc::SIG_DFL } else { libc::SIG_IGN });
    }
    #[cfg(not(unix))]
    let _ = quietly;
}

/// Runs the parsed command line.
fn run(cli: cli::Cli) -> Result<(), Error> {
    commands::run(cli)
}

/// Whether `CCMEM_NO_AUTOSTART` is set (to anything but `0`).
pub fn autostart_disabled() -> bool {
    std::env::var_os(paths::NO_AUTOSTART_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}
