//! What every screen shares: how it is drawn and told of keys, and what a key asks of the
//! view (go back, open another screen, print a command and leave).

use super::source::Source;
use super::text::Clock;
use super::theme::Theme;
use std::path::{Path, PathBuf};

/// How things look: the colours and the clock.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    pub theme: Theme,
    pub clock: Clock,
}

/// What a key asks of the view.
pub enum Step {
    /// Nothing more.
    Stay,
    /// A new screen on top.
    Open(Box<super::Screen>),
    /// Leave, printing this command on standard output.
    Print(String),
    /// A line for the status bar.
    Say(String),
}

/// The command that resumes a conversation where its project is: `cd` there first (an agent
/// resumes a conversation of the directory it is started in). The root is quoted whole, as
/// the shell reads it: `eval "$(ccmemctl ui)"` runs it.
pub fn resume_command(root: &Path, resume: &str) -> String {
    let root = root.to_string_lossy();
    if cfg!(windows) {
        format!("Set-Location -LiteralPath '{}'; {resume}", root.replace('\'', "''"))
    } else {
        format!("cd -- '{}' && {resume}", root.replace('\'', r"'\''"))
    }
}

/// Whether a change to `changed` (empty: any) concerns the project at `root`.
pub fn concerns(changed: &[PathBuf], root: &Path) -> bool {
    changed.is_empty() || changed.iter().any(|c| c == root)
}

/// The session's conversation that can be resumed, newest first, as a command.
pub fn resume_of_session(root: &Path, s: &ccmem_proto::wire::api::SessionRow) -> Step {
    match s.conversations.iter().find_map(|c| c.resume.as_deref()) {
        Some(r) => Step::Print(resume_command(root, r)),
        None => Step::Say(NO_RESUME.into()),
    }
}

/// Said when nothing can be resumed.
pub const NO_RESUME: &str = "nothing to resume: no conversation here has its transcript on this machine";

/// A screen's request failed: what the status bar says.
pub fn failed(what: &str, e: &str) -> String {
    format!("cannot {what}: {e}")
}

/// Loads with `src`, or says why not.
pub fn load<T>(what: &str, r: Result<T, String>) -> (Option<T>, Option<String>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(failed(what, &e))),
    }
}

/// Source, for screens that ask the daemon again.
pub type Src<'a> = &'a mut Source;
