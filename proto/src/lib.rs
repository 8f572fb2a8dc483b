//! The ccmem wire protocol, shared by `ccmemd` and `ccmemctl`.
//!
//! Synchronous and free of any async runtime so that the client stays small and
//! starts fast. The daemon adds its own async framing on top of [`frame`]'s rules.
//!
//! - [`rpc`]: the JSON-RPC 2.0 envelope and error codes.
//! - [`frame`]: newline-delimited framing with a size limit.
//! - [`api`]: method names and their parameter and result types.
//! - [`session`], [`env`], [`facts`]: the session and its parts, as the seeds define them.
//! - [`transcript`]: Claude Code's transcript records, for the daemon and `ccmemctl import`.
//! - [`untrusted`]: reading files that come with a repository (or a user's argument) safely.
//! - [`paths`]: where the socket, pidfile and state live, and the checks that keep them private.

pub mod api;
pub mod atomic;
pub mod env;
pub mod facts;
pub mod frame;
pub mod memory;
pub mod paths;
pub mod redact;
pub mod report;
pub mod rpc;
pub mod session;
pub mod transcript;
pub mod untrusted;

/// Version of the wire protocol. Bumped on any incompatible change to [`api`] or [`rpc`].
pub const PROTOCOL_VERSION: u32 = 1;

/// Version of this build of ccmem (shared by all crates of the workspace).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `` `cargo test` `` for a command, else `fallback` (a test run or build recorded by an
/// event may come without its command: no empty backticks then).
pub fn command_or(command: &str, fallback: &str) -> String {
    match command.trim() {
        "" => fallback.to_string(),
        c => format!("`{c}`"),
    }
}

/// `` · `cargo test` `` (`sep`, then the command in backticks) for a command, nothing for
/// none: a command as a trailing part of a line.
pub fn command_after(sep: &str, command: &str) -> String {
    match command.trim() {
        "" => String::new(),
        c => format!("{sep}`{c}`"),
    }
}

/// `1 file`, `3 files`: a count with its noun in the right number.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}
