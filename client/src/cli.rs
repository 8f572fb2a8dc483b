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
}
