//! The tools' arguments, as the agent sends them: each field described for its schema.

use super::*;

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words to look for in titles, tags and content.
    pub query: String,
    /// Only this scope: global, project, local or enterprise.
    #[serde(default)]
    pub scope: Option<String>,
    /// Only this type: decision, learning, artifact, gotcha, breadcrumb or hub.
    #[serde(default, rename = "type")]
    pub memory_type: Option<String>,
    /// Only memories with all these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Most results (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<usize>,
}

/// Arguments of `memory_write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// decision, learning, artifact, gotcha, breadcrumb or hub.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// One line, 1-200 characters.
    pub title: String,
    /// Lowercase hyphenated tags, at least one, e.g. ["auth", "oauth2"].
    pub tags: Vec<String>,
    /// The memory, in markdown: what, why, and how to apply it.
    pub content: String,
    /// global (all projects), project (committed with the project), local (this machine
    /// only). Default: project inside a project, else global.
    #[serde(default)]
    pub scope: Option<String>,
    /// The slug; derived from type and title when absent.
    #[serde(default)]
    pub slug: Option<String>,
}

/// Arguments of `session_context`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ContextArgs {
    /// At most this many characters (default 6000).
    #[serde(default)]
    pub budget: Option<usize>,
}

/// Arguments naming a memory (`memory_show`, `memory_delete`).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SlugArgs {
    /// The memory's slug.
    pub slug: String,
    /// The scope it is in (default: the first that has it, most specific first).
    #[serde(default)]
    pub scope: Option<String>,
}

/// Arguments of `memory_list`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only this scope: global, project, local or enterprise.
    #[serde(default)]
    pub scope: Option<String>,
    /// Only this type.
    #[serde(default, rename = "type")]
    pub memory_type: Option<String>,
    /// Only memories with all these tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Arguments of `memory_update`: what is absent stays as it is.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateArgs {
    /// The memory's slug.
    pub slug: String,
    /// The scope it is in.
    #[serde(default)]
    pub scope: Option<String>,
    /// A new title.
    #[serde(default)]
    pub title: Option<String>,
    /// A new type.
    #[serde(default, rename = "type")]
    pub memory_type: Option<String>,
    /// New content, replacing the old.
    #[serde(default)]
    pub content: Option<String>,
    /// Text added at the end of the content.
    #[serde(default)]
    pub append: Option<String>,
    /// Tags added.
    #[serde(default)]
    pub add_tags: Vec<String>,
    /// Tags removed.
    #[serde(default)]
    pub remove_tags: Vec<String>,
}

/// Arguments of `memory_link` and `memory_unlink`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LinkArgs {
    /// The memory the link starts from.
    pub source: String,
    /// The memory it points to (same scope).
    pub target: String,
    /// implements, part-of, builds-on, relates-to (default) or similar-to; the inverse edge
    /// is kept too. For unlink: only links with this label.
    #[serde(default)]
    pub label: Option<String>,
    /// The scope both are in.
    #[serde(default)]
    pub scope: Option<String>,
}

/// Arguments of `memory_health`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct HealthArgs {
    /// Only this scope.
    #[serde(default)]
    pub scope: Option<String>,
    /// Repair what is mechanical (stale index, one-way links).
    #[serde(default)]
    pub fix: bool,
}

/// Arguments of `fact_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForgetArgs {
    /// The fact's number, as `facts_list` numbers them (from 1).
    pub number: usize,
    /// A user-wide fact (`[REMEMBER GLOBAL: …]`): refused, those are the user's to change.
    #[serde(default)]
    pub global: bool,
}

/// Arguments of `goal_done`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GoalArgs {
    /// The active goal's number, as `facts_list` numbers them (from 1).
    pub number: usize,
}

/// Arguments of `history_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct HistorySearchArgs {
    /// Words in any language, "a phrase", prefix*, -word to leave out.
    pub query: String,
    /// Only these kinds: prompt, message, decision, failure, fixed, command, test, build,
    /// commit, file, todo, compaction, session.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Only this agent: claude, codex, gemini, opencode, pi, copilot, cursor.
    #[serde(default)]
    pub agent: Option<String>,
    /// From then on: a date (2026-11-02) or a while ago (2 weeks, 3d).
    #[serde(default)]
    pub since: Option<String>,
    /// Most hits (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<usize>,
}

/// Arguments of `history_timeline`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TimelineArgs {
    /// One session (ccmem's id) or conversation (the agent's id); default: the newest session.
    #[serde(default)]
    pub session: Option<String>,
    /// From then on, instead of one session: a date or a while ago (2 days).
    #[serde(default)]
    pub since: Option<String>,
    /// Only these kinds (as history_search).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Most steps, the newest (default 60).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<usize>,
}

/// Arguments of `history_show`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowArgs {
    /// The event's number, as history_search and history_timeline show it (#1234).
    pub id: i64,
    /// Events of its session to show before and after it (default 0, at most 20).
    #[serde(default)]
    #[schemars(range(min = 0, max = 20))]
    pub around: Option<usize>,
}
