//! A branch's handoff, as it travels through git: what one clone (a machine, a person) left
//! on a branch, for the next clone that checks the branch out. Written as `handoff.json` in
//! a commit on `refs/ccmem/handoff/<author-id>/<branch>`.
//!
//! Read back from another clone, every field is someone else's text (anyone who can push to
//! the remote can forge it): it is shown quoted, never taken as a todo, fact or goal.

use crate::model::session::{Failure, Lesson, Todo};
use serde::{Deserialize, Serialize};

/// The format written; a reader takes what it knows of any other.
pub const FORMAT: u32 = 1;

/// Largest `handoff.json` written or read: what does not fit is cut when written, and a
/// larger blob is not read at all.
pub const MAX_BYTES: usize = 16 << 10;

/// What a clone left on a branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BranchHandoff {
    /// [`FORMAT`].
    pub format: u32,
    /// The branch it was made on.
    pub branch: String,
    /// The commit checked out then (full hash).
    pub commit: String,
    /// When it was made (ISO 8601, UTC).
    pub made_at: String,
    /// The machine's name.
    pub machine: String,
    /// The git author (`Name <email>`).
    pub author: String,
    /// The agent that did the work (its display name).
    pub agent: String,
    /// That agent's conversation.
    pub conversation: String,
    /// The task: the conversation's first prompt, on one line.
    pub task: String,
    /// The todos, with their status.
    pub todos: Vec<Todo>,
    /// What the agent said it would do next, if it said.
    pub next_step: String,
    /// Failures not yet resolved.
    pub failures: Vec<Failure>,
    /// Failures resolved since, with what fixed them.
    pub lessons: Vec<Lesson>,
    /// The agent's last words.
    pub last_words: String,
    /// Decisions and findings, newest first.
    pub decisions: Vec<String>,
    /// Files edited, most recent first.
    pub files: Vec<String>,
}

impl BranchHandoff {
    /// Whether it carries any work (an empty one is not written).
    pub fn has_work(&self) -> bool {
        !(self.task.is_empty()
            && self.todos.is_empty()
            && self.failures.is_empty()
            && self.last_words.is_empty()
            && self.next_step.is_empty()
            && self.files.is_empty())
    }

    /// The same work as `other`, whenever and wherever each was made.
    pub fn same_work(&self, other: &BranchHandoff) -> bool {
        let strip = |h: &BranchHandoff| BranchHandoff { made_at: String::new(), commit: String::new(), ..h.clone() };
        strip(self) == strip(other)
    }
}

/// One handoff found on a branch, and whose it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SeenHandoff {
    /// The ref it was read from.
    pub git_ref: String,
    /// Its writer's id (the ref's author part).
    pub author_id: String,
    /// This clone wrote it.
    pub own: bool,
    /// Newer than this clone's own work on the branch: the context opens with it.
    pub newer: bool,
    /// What it says (redacted again when read).
    pub handoff: BranchHandoff,
}
