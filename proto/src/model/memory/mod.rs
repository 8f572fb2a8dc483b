//! Knowledge memories (seed 003): typed markdown notes with YAML frontmatter, kept per scope
//! beside a link graph (`graph.json`), an index (`index.json`) and an embedding cache.
//!
//! This module holds the data model and its validation rules; the daemon owns the files.

pub mod frontmatter;

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Schema version written into `index.json`.
pub const INDEX_VERSION: &str = "1.0.0";
/// Longest title, in characters.
pub const TITLE_MAX: usize = 200;
/// Longest content, in characters.
pub const CONTENT_MAX: usize = 50_000;
/// Longest tag, in characters.
pub const TAG_MAX: usize = 50;
/// Longest edge label, in characters.
pub const LABEL_MAX: usize = 50;
/// Longest slug we derive or accept (file names must stay well under 255 bytes).
pub const SLUG_MAX: usize = 120;
/// How far in the future a timestamp may be before it counts as "in the future": clocks of
/// two machines sharing a project memory are never exactly in step.
pub const CLOCK_SKEW_SECS: i64 = 300;

/// Seed 003's MemoryType.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Architectural or design decisions.
    Decision,
    /// Lessons learned from experience.
    Learning,
    /// Code snippets, templates, examples.
    Artifact,
    /// Warnings, pitfalls, anti-patterns.
    Gotcha,
    /// Navigational hints, quick references.
    Breadcrumb,
    /// Aggregation nodes for related memories.
    Hub,
}

impl MemoryType {
    /// Every type, in the seed's order.
    pub const ALL: [MemoryType; 6] = [
        MemoryType::Decision,
        MemoryType::Learning,
        MemoryType::Artifact,
        MemoryType::Gotcha,
        MemoryType::Breadcrumb,
        MemoryType::Hub,
    ];

    /// The name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Decision => "decision",
            MemoryType::Learning => "learning",
            MemoryType::Artifact => "artifact",
            MemoryType::Gotcha => "gotcha",
            MemoryType::Breadcrumb => "breadcrumb",
            MemoryType::Hub => "hub",
        }
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryType {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        Self::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            Invalid::new("type", format!("must be one of {} (got {s:?})", names(Self::ALL.map(Self::as_str))))
        })
    }
}

/// Seed 003's Scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.claude/memory/`: personal, across projects.
    Global,
    /// `.claude/memory/`: the project's, shared through git.
    Project,
    /// `.claude/memory/local/`: the project's, kept out of git.
    Local,
    /// A managed path: the organisation's.
    Enterprise,
}

impl Scope {
    /// Every scope, in the order a slug is looked up when no scope is named: the managed
    /// one first, then the most specific.
    pub const PRECEDENCE: [Scope; 4] = [Scope::Enterprise, Scope::Local, Scope::Project, Scope::Global];

    /// The name used on the command line and in replies.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Enterprise => "enterprise",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        Self::PRECEDENCE.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            Invalid::new("scope", format!("must be one of global, project, local, enterprise (got {s:?})"))
        })
    }
}

/// A memory: seed 003's Memory entity. The slug is the file name, the scope is the directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Unique within its scope; the file is `<slug>.md`.
    pub slug: String,
    /// Category.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// One line, 1–200 characters.
    pub title: String,
    /// At least one; lowercase and hyphenated.
    pub tags: Vec<String>,
    /// Creation time.
    pub created: DateTime<Utc>,
    /// Last change of content or frontmatter; never before `created`.
    pub updated: DateTime<Utc>,
    /// Slugs this memory is linked to (either direction), in step with the graph.
    #[serde(default)]
    pub links: Vec<String>,
    /// Markdown body, without the title heading.
    pub content: String,
    /// Where it is kept.
    pub scope: Scope,
}

impl Memory {
    /// Checks every rule of seed 003 that a single memory can break, against `now`.
    /// Returns every broken rule, each naming its field.
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<Invalid>> {
        let mut errors = Vec::new();
        if let Err(e) = check_slug("slug", &self.slug) {
            errors.push(e);
        }
        if let Err(e) = check_title(&self.title) {
            errors.push(e);
        }
        if let Err(mut e) = check_tags(&self.tags) {
            errors.append(&mut e);
        }
        if self.created.timestamp() > now.timestamp() + CLOCK_SKEW_SECS {
            errors.push(Invalid::new("created", format!("must not be in the future (got {})", iso(self.created))));
        }
        if self.updated < self.created {
            errors.push(Invalid::new(
                "updated",
                format!("must be at or after created ({} is before {})", iso(self.updated), iso(self.created)),
            ));
        }
        for (i, l) in self.links.iter().enumerate() {
            if let Err(e) = check_slug(&format!("links[{i}]"), l) {
                errors.push(e);
            }
        }
        if let Err(e) = check_content(&self.content) {
            errors.push(e);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The index entry for this memory, stored at `file_path`.
    pub fn index_entry(&self, file_path: PathBuf, has_embedding: bool) -> IndexEntry {
        IndexEntry {
            slug: self.slug.clone(),
            title: self.title.clone(),
            memory_type: self.memory_type,
            tags: self.tags.clone(),
            created: self.created,
            updated: self.updated,
            file_path,
            has_embedding,
        }
    }
}

/// One broken rule: the field and what the rule asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invalid {
    /// The field, e.g. `title` or `tags[2]`.
    pub field: String,
    /// The rule and the offending value.
    pub rule: String,
}

impl Invalid {
    /// A broken rule of `field`.
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self { field: field.into(), rule: rule.into() }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl std::error::Error for Invalid {}

/// Joins several broken rules into one message, one per line.
pub fn describe(errors: &[Invalid]) -> String {
    errors.iter().map(Invalid::to_string).collect::<Vec<_>>().join("\n")
}

fn names<const N: usize>(n: [&str; N]) -> String {
    n.join(", ")
}

/// `^[a-z0-9]+(-[a-z0-9]+)*$`: lowercase words joined by single hyphens.
pub fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Seed 003's slug rule, for `field`.
pub fn check_slug(field: &str, slug: &str) -> Result<(), Invalid> {
    if !is_kebab(slug) {
        // A value holding a secret (a hand-edited file's) is shown redacted, with no
        // suggestion made from it.
        let shown = crate::redact::redact(slug);
        let hint = match kebab(slug) {
            k if !k.is_empty() && k != slug && shown == slug => format!("; did you mean {k:?}?"),
            _ => String::new(),
        };
        return Err(Invalid::new(
            field,
            format!("must match ^[a-z0-9]+(-[a-z0-9]+)*$: lowercase letters and digits in words joined by single hyphens (got {shown:?}{hint})"),
        ));
    }
    if slug.len() > SLUG_MAX {
        return Err(Invalid::new(field, format!("must be at most {SLUG_MAX} characters (got {})", slug.len())));
    }
    Ok(())
}

/// Seed 003's title rule: 1–200 characters; one line, since it is the file's heading.
pub fn check_title(title: &str) -> Result<(), Invalid> {
    let n = title.chars().count();
    if title.trim().is_empty() || n > TITLE_MAX {
        return Err(Invalid::new("title", format!("must be 1-{TITLE_MAX} characters (got {n})")));
    }
    if title.contains(['\n', '\r']) {
        return Err(Invalid::new("title", "must be a single line"));
    }
    Ok(())
}

/// Seed 003's tag rules: at least one tag, each lowercase and hyphenated, 1–50 characters.
pub fn check_tags(tags: &[String]) -> Result<(), Vec<Invalid>> {
    if tags.is_empty() {
        return Err(vec![Invalid::new("tags", "must not be empty: give at least one tag")]);
    }
    let mut errors = Vec::new();
    for (i, t) in tags.iter().enumerate() {
        if let Err(e) = check_tag(t) {
            errors.push(Invalid::new(format!("tags[{i}]"), e.rule));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// One tag: lowercase, hyphenated, 1–50 characters.
pub fn check_tag(tag: &str) -> Result<(), Invalid> {
    let n = tag.chars().count();
    if !is_kebab(tag) || n > TAG_MAX {
        let shown = crate::redact::redact(tag);
        let hint = match kebab(tag) {
            k if !k.is_empty() && k != tag && k.len() <= TAG_MAX && shown == tag => format!("; did you mean {k:?}?"),
            _ => String::new(),
        };
        return Err(Invalid::new(
            "tag",
            format!("must be lowercase and hyphenated (a-z, 0-9, single hyphens), 1-{TAG_MAX} characters (got {shown:?}{hint})"),
        ));
    }
    Ok(())
}

/// An edge label: 1–50 characters, lowercase and hyphenated.
pub fn check_label(label: &str) -> Result<(), Invalid> {
    if !is_kebab(label) || label.len() > LABEL_MAX {
        return Err(Invalid::new(
            "label",
            format!(
                "must be lowercase and hyphenated, 1-{LABEL_MAX} characters, e.g. implements, part-of (got {label:?})"
            ),
        ));
    }
    Ok(())
}

/// Content: at most 50,000 characters of markdown.
pub fn check_content(content: &str) -> Result<(), Invalid> {
    let n = content.chars().count();
    if n > CONTENT_MAX {
        return Err(Invalid::new("content", format!("must be at most {CONTENT_MAX} characters (got {n})")));
    }
    Ok(())
}

/// `text` as lowercase words joined by single hyphens: `"OAuth2 Flow!"` → `"oauth2-flow"`.
pub fn kebab(text: &str) -> String {
    let mut out = String::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

/// The slug derived from a title: type-prefixed, whole words, at most 60 characters.
pub fn derive_slug(memory_type: MemoryType, title: &str) -> String {
    let mut slug = memory_type.as_str().to_string();
    for word in kebab(title).split('-').filter(|w| !w.is_empty()) {
        if slug.len() + 1 + word.len() > 60 {
            break;
        }
        slug.push('-');
        slug.push_str(word);
    }
    slug
}

/// The label of the edge going back: seed 003's conventions, a few more common pairs, and
/// any other label symmetric.
pub fn inverse_label(label: &str) -> &str {
    const PAIRS: &[(&str, &str)] = &[
        ("implements", "implemented-by"),
        ("part-of", "contains"),
        ("builds-on", "foundation-for"),
        ("depends-on", "dependency-of"),
        ("supersedes", "superseded-by"),
        ("blocks", "blocked-by"),
        ("causes", "caused-by"),
        ("documents", "documented-by"),
    ];
    for (a, b) in PAIRS {
        if label == *a {
            return b;
        }
        if label == *b {
            return a;
        }
    }
    label
}

/// An ISO 8601 timestamp as written to files: UTC, seconds, `Z`.
pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Reads an ISO 8601 timestamp: RFC 3339 with any offset, a date and time without offset
/// (taken as UTC), or a bare date (midnight UTC).
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    use chrono::Datelike;
    // chrono reads signed and five-digit years; ISO 8601 without expansion has four digits.
    parse_any(s.trim()).filter(|t| (1..=9999).contains(&t.year()))
}

fn parse_any(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    for f in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| t.and_utc())
}

/// One edge of the graph: seed 003's Edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// The memory the edge points to, in the same scope.
    pub target: String,
    /// The relationship, e.g. `implements`.
    pub label: String,
    /// When the edge was made, ISO 8601.
    pub timestamp: String,
}

/// Seed 003's Graph: each memory's outgoing edges. Every edge has its inverse.
pub type Graph = BTreeMap<String, Vec<Edge>>;

/// Seed 003's IndexEntry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// Memory identifier (also the key).
    pub slug: String,
    /// Title.
    pub title: String,
    /// Category.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// Tags.
    pub tags: Vec<String>,
    /// Creation time.
    pub created: DateTime<Utc>,
    /// Last update.
    pub updated: DateTime<Utc>,
    /// Absolute path of the memory file.
    pub file_path: PathBuf,
    /// Whether a cached embedding exists.
    pub has_embedding: bool,
}

/// Seed 003's Index: `index.json` of one scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// Schema version.
    pub version: String,
    /// When it was written.
    pub last_updated: DateTime<Utc>,
    /// Every memory of the scope by slug.
    pub memories: BTreeMap<String, IndexEntry>,
}

/// Seed 003's EmbeddingCacheEntry: `.embedding-cache/<slug>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingCacheEntry {
    /// The memory.
    pub slug: String,
    /// The model that computed the vector.
    pub model: String,
    /// The embedding.
    pub vector: Vec<f32>,
    /// SHA-256 (hex) of the text embedded; a different hash means the entry is stale.
    pub content_hash: String,
    /// When it was computed, ISO 8601.
    pub timestamp: String,
}

#[cfg(test)]
mod tests;
