//! The `memory.*` methods: parameters and replies.
//!
//! Every request names the project by `path` (any directory inside it, absolute); the
//! global and enterprise scopes need none. `scope` is optional wherever a slug is looked up:
//! the first scope holding it, in [`Scope::PRECEDENCE`], is used, and a mutation that finds a
//! slug in two scopes asks for `--scope`.

use crate::model::memory::{Edge, Memory, MemoryType, Scope};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Method names.
pub mod method {
    /// [`super::WriteParams`] → [`super::MemoryReply`].
    pub const WRITE: &str = "memory.write";
    /// [`super::SlugParams`] → [`super::MemoryReply`].
    pub const SHOW: &str = "memory.show";
    /// [`super::ListParams`] → [`super::ListReply`].
    pub const LIST: &str = "memory.list";
    /// [`super::SearchParams`] → [`super::SearchReply`].
    pub const SEARCH: &str = "memory.search";
    /// [`super::UpdateParams`] → [`super::MemoryReply`].
    pub const UPDATE: &str = "memory.update";
    /// [`super::SlugParams`] → [`super::DeleteReply`].
    pub const DELETE: &str = "memory.delete";
    /// [`super::LinkParams`] → [`super::LinkReply`].
    pub const LINK: &str = "memory.link";
    /// [`super::LinkParams`] → [`super::LinkReply`].
    pub const UNLINK: &str = "memory.unlink";
    /// [`super::HealthParams`] → [`super::HealthReply`].
    pub const HEALTH: &str = "memory.health";
    /// [`super::ScopeParams`] → [`super::RebuildReply`].
    pub const REBUILD: &str = "memory.rebuild";
    /// [`super::SuggestParams`] → [`super::SuggestReply`].
    pub const SUGGEST: &str = "memory.suggest_links";
}

/// Params of `memory.write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteParams {
    /// The project (a directory inside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Where to keep it; the configured default (`scopes.default`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Asked for by an agent (through its shell or MCP): the user-wide scopes (global,
    /// enterprise) are refused, whichever scope the daemon would pick.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_agent: bool,
    /// Category.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// Title.
    pub title: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Markdown content.
    #[serde(default)]
    pub content: String,
    /// The slug; derived from type and title when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
}

/// Params naming one memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlugParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The scope to look in; all, in precedence order, when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Asked for by an agent (through its shell or MCP): the user-wide scopes (global,
    /// enterprise) are refused, whichever scope the daemon would pick.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_agent: bool,
    /// The memory.
    pub slug: String,
}

/// Params of `memory.update`: absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The scope to look in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Asked for by an agent (through its shell or MCP): the user-wide scopes (global,
    /// enterprise) are refused, whichever scope the daemon would pick.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_agent: bool,
    /// The memory.
    pub slug: String,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New category.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<MemoryType>,
    /// New content (replaces the old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Appended to the content, after a blank line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<String>,
    /// Replaces every tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Tags added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_tags: Vec<String>,
    /// Tags removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_tags: Vec<String>,
}

/// A memory and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryReply {
    /// The memory.
    pub memory: Memory,
    /// Its file.
    pub file: PathBuf,
    /// Its edges.
    #[serde(default)]
    pub edges: Vec<Edge>,
    /// Something the caller should know (e.g. a derived slug was taken and a suffix added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Params restricting a listing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Only this scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Only this type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<MemoryType>,
    /// Only memories with every one of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// One memory in a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListEntry {
    /// Scope.
    pub scope: Scope,
    /// The index entry.
    #[serde(flatten)]
    pub entry: crate::model::memory::IndexEntry,
    /// Number of edges.
    pub links: usize,
}

/// Result of `memory.list`: newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListReply {
    /// The memories.
    pub memories: Vec<ListEntry>,
    /// Files that are not valid memories, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<InvalidFile>,
}

/// A `.md` file in a scope directory that is not a valid memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidFile {
    /// The file.
    pub file: PathBuf,
    /// Every broken rule.
    pub errors: Vec<String>,
}

/// How to rank search results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Hybrid when an embedding provider is configured, else full text.
    #[default]
    Auto,
    /// BM25 over title, tags and content.
    Text,
    /// Embedding similarity only.
    Semantic,
    /// Both, combined.
    Hybrid,
}

/// Params of `memory.search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// What to look for.
    pub query: String,
    /// Only this scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Only this type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<MemoryType>,
    /// Only memories with every one of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Most results (default 10, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Ranking.
    #[serde(default)]
    pub mode: SearchMode,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// Scope.
    pub scope: Scope,
    /// Slug.
    pub slug: String,
    /// Category.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// Title.
    pub title: String,
    /// Tags.
    pub tags: Vec<String>,
    /// The combined score, higher is better.
    pub score: f32,
    /// BM25 score, when full text took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_score: Option<f32>,
    /// Cosine similarity, when embeddings took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_score: Option<f32>,
    /// The part of the content that matched.
    pub snippet: String,
    /// The file.
    pub file: PathBuf,
}

/// Result of `memory.search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchReply {
    /// Best first.
    pub hits: Vec<SearchHit>,
    /// The ranking used (may differ from the one asked for, see `notes`).
    pub mode: SearchMode,
    /// E.g. the embedding provider could not be reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Result of `memory.delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteReply {
    /// Scope it was in.
    pub scope: Scope,
    /// Slug.
    pub slug: String,
    /// The file removed.
    pub file: PathBuf,
    /// Memories whose edge to it was removed.
    pub unlinked: Vec<String>,
}

/// Params of `memory.link` and `memory.unlink`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The scope both memories are in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Source.
    pub source: String,
    /// Target.
    pub target: String,
    /// Relationship; `relates-to` when absent. For unlink: only edges with this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Asked by an agent (MCP, or `ccmemctl` run by one): a user-wide scope is refused.
    #[serde(default)]
    pub by_agent: bool,
}

/// Result of `memory.link` and `memory.unlink`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkReply {
    /// Scope.
    pub scope: Scope,
    /// Edges added or removed, both directions: `(source, label, target)`.
    pub edges: Vec<(String, String, String)>,
}

/// Params naming a scope (all of them the project can see, when absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScopeParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Only this scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

/// Result of `memory.rebuild`, per scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RebuildReply {
    /// Each scope rebuilt.
    pub scopes: Vec<RebuildScope>,
}

/// One scope rebuilt from its files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RebuildScope {
    /// Scope.
    pub scope: Scope,
    /// Its directory.
    pub dir: PathBuf,
    /// Memories indexed.
    pub memories: usize,
    /// Files skipped, with why.
    pub invalid: Vec<InvalidFile>,
    /// Milliseconds taken.
    pub ms: f64,
}

/// Params of `memory.health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Only this scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Repair what is mechanical.
    #[serde(default)]
    pub fix: bool,
}

/// Kinds of health findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// No edges, older than `quality.orphanThreshold` days (hubs at any age).
    Orphan,
    /// A link or edge to a memory that does not exist.
    BrokenLink,
    /// An edge without its inverse.
    OneWayEdge,
    /// Frontmatter `links` and the graph disagree.
    LinksOutOfStep,
    /// `index.json` does not match the files.
    IndexDrift,
    /// A file that is not a valid memory.
    InvalidFile,
    /// A cached embedding for a memory that no longer exists.
    StaleCache,
    /// Quality below `quality.minQualityScore`.
    LowQuality,
    /// `--fix` could not write its repairs (the detail says why).
    RepairFailed,
    /// Created or updated in the future: written while the clock was wrong.
    FutureTimestamp,
}

/// One thing the health check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What.
    pub kind: FindingKind,
    /// The memory (or file) concerned.
    pub slug: String,
    /// Details.
    pub detail: String,
    /// Whether `--fix` repaired it (now, or could if asked).
    pub fixable: bool,
    /// Whether it was repaired in this run.
    pub fixed: bool,
}

/// One memory's quality score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// Slug.
    pub slug: String,
    /// 0–100.
    pub score: u8,
    /// What cost points.
    pub reasons: Vec<String>,
}

/// The health of one scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeHealth {
    /// Scope.
    pub scope: Scope,
    /// Its directory.
    pub dir: PathBuf,
    /// Memories.
    pub memories: usize,
    /// Edges (each direction counted).
    pub edges: usize,
    /// Findings.
    pub findings: Vec<Finding>,
    /// Every memory's quality, lowest first.
    pub quality: Vec<Quality>,
    /// Mean quality.
    pub mean_quality: f32,
}

/// Result of `memory.health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthReply {
    /// Each scope checked.
    pub scopes: Vec<ScopeHealth>,
    /// The quality bar in force.
    pub min_quality_score: u8,
}

/// Params of `memory.suggest_links`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuggestParams {
    /// The project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The scope of the memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The memory to find links for.
    pub slug: String,
    /// Most suggestions (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// A proposed edge (seed 003's Proposed state): accepted with `memory link`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The memory to link to.
    pub target: String,
    /// Its title.
    pub title: String,
    /// The label proposed.
    pub label: String,
    /// Strength, 0–1.
    pub score: f32,
    /// Why: shared tags, shared words.
    pub reasons: Vec<String>,
}

/// Result of `memory.suggest_links`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestReply {
    /// Scope.
    pub scope: Scope,
    /// The memory.
    pub slug: String,
    /// Best first; memories already linked are left out.
    pub suggestions: Vec<Suggestion>,
}
