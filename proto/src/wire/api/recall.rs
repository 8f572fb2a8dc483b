//! Recall's requests: the past searched (`recall.search`), told in order
//! (`recall.timeline`), asked about one file (`recall.why`), and one event in full
//! (`recall.show`).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where recall looks, and what it keeps: shared by search and timeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// The project (a path inside it); None with `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// Every project.
    #[serde(default)]
    pub all: bool,
    /// One agent, by its name (`claude`, `codex`, …) or display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// One session, by ccmem's id, or one conversation, by the agent's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Only these kinds (see [`KINDS`]); empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// From this time on, in milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<i64>,
    /// Up to this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<i64>,
    /// Results at most (the daemon caps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// The kinds a search or a timeline can be narrowed to, and what each holds.
pub const KINDS: &[(&str, &str)] = &[
    ("prompt", "what the user asked"),
    ("message", "the agent's last words of a turn"),
    ("decision", "decisions and findings the agent stated"),
    ("failure", "commands, tests and builds that failed"),
    ("fixed", "a failure resolved, and by what"),
    ("command", "commands the agent ran"),
    ("test", "test runs"),
    ("build", "builds"),
    ("commit", "commits, pull requests and issues closed"),
    ("file", "files edited, created or deleted"),
    ("todo", "todo lists and tasks"),
    ("compaction", "compaction summaries"),
    ("session", "conversations starting and ending, agents handing over"),
];

/// Params of `recall.search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    /// Words (any language), `"a phrase"`, `prefix*`; `-word` leaves out what holds it.
    pub query: String,
    #[serde(flatten)]
    pub scope: Scope,
}

/// One event found, or told.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The event's number in the journal (`recall.show` takes it).
    pub seq: i64,
    /// When, ISO 8601.
    pub at: String,
    /// The project's directory.
    pub project: PathBuf,
    /// ccmem's session id.
    pub session: String,
    /// The agent's conversation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// The agent, by its display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// One of [`KINDS`].
    pub kind: String,
    /// The file it is about, relative to the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Its text around the match, the matches between `«` and `»` (a timeline: its first
    /// line). Redacted as the journal keeps it.
    pub snippet: String,
    /// The command that resumes its conversation, when the conversation is still on this
    /// machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Events like it folded into this one (a timeline's repeated edits).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folded: u32,
    /// A test run's or a build's outcome: `passed` or `failed` (a failure: `failed`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub outcome: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What `recall.search` and `recall.timeline` answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hits {
    pub hits: Vec<Hit>,
    /// More matched than were sent.
    #[serde(default)]
    pub more: bool,
}

/// Params of `recall.timeline`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineParams {
    #[serde(flatten)]
    pub scope: Scope,
    /// Every event as it is, none folded.
    #[serde(default)]
    pub full: bool,
}

/// Params of `recall.why`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhyParams {
    /// The file, absolute or relative to `project`.
    pub file: PathBuf,
    /// A line of it: the commit that last changed it is asked of git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The project (a path inside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    /// Conversations at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// What `recall.why` answers: the conversations that touched a file, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhyReply {
    /// The project's directory.
    pub project: PathBuf,
    /// The file, relative to it.
    pub file: String,
    /// The commit that last changed the line asked about (or the file), from git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<Commit>,
    pub touches: Vec<Touch>,
}

/// A commit, as git tells it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
    /// When, ISO 8601.
    pub at: String,
    /// The session that was live in the project then, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// One conversation's work on a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Touch {
    pub session: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The first and last edit, ISO 8601.
    pub first: String,
    pub last: String,
    /// Edits to the file.
    pub edits: u32,
    /// The prompt the first edit served (the last one before it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prompt: String,
    /// Decisions, failures and commits around the edits, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub around: Vec<Hit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

/// Params of `recall.show`: one event in full.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowParams {
    pub seq: i64,
    /// Events of its session before and after it, told too.
    #[serde(default)]
    pub around: usize,
    /// Only an event of this project (a path inside it): an agent's question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
}

/// What `recall.show` answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowReply {
    /// The event, its whole text in `snippet`.
    pub hit: Hit,
    /// Its details, as the journal keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
    /// The events around it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub around: Vec<Hit>,
}
