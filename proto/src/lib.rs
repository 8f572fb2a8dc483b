//! What `ccmemd` and `ccmemctl` share, in two parts with one direction between them.
//!
//! - [`wire`]: what a client needs to talk to the daemon: framing ([`wire::frame`]), the
//!   JSON-RPC envelope ([`wire::rpc`]), the methods and their types ([`wire::api`],
//!   [`wire::memory`]), and where the socket lives ([`wire::paths`]). The hook's fast path
//!   uses this part only.
//! - [`model`]: what ccmem keeps, as the seeds define it: the session ([`model::session`]),
//!   its environment, facts and goals, knowledge memories, the session-memory report, and
//!   Claude Code's transcript records. The wire carries these types; they never import it.
//!
//! Beside them, [`files`] (atomic writes, safe reads of untrusted files), [`redact`]
//! (secrets out of everything kept) and [`printable`] (no escape sequences or invisible
//! characters in anything printed or injected). Synchronous and free of any async runtime, so that the
//! client stays small and starts fast.

pub mod files;
pub mod model;
pub mod printable;
pub mod quote;
pub mod redact;
pub mod wire;

/// Version of the wire protocol. Bumped on any incompatible change to [`wire::api`] or [`wire::rpc`].
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
/// A word as `sh` reads it back: bare when it holds nothing special, else single-quoted
/// (for the `cd DIR && …` that tells a command's working directory).
pub fn sh_quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || "/._-+:@%,=".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}
