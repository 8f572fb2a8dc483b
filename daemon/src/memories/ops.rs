//! The memory requests, run on the memory thread. Semantic searches finish on the async
//! runtime (they wait for the embedding provider) and hand their new embeddings back.

use super::config::{Config, DefaultScope, Provider};
use super::embed::{self, Cached};
use super::{health, search, Actor, Failure, Request};
use ccmem_proto::model::memory::frontmatter::{normalize_content, Layout};
use ccmem_proto::model::memory::{self as model, describe, Memory, Scope};
use ccmem_proto::wire::memory::*;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default and largest number of search results.
const LIMIT_DEFAULT: usize = 10;
const LIMIT_MAX: usize = 100;
/// Memories embedded during one search at most; the rest follow in later searches.
const EMBED_PER_SEARCH: usize = 4 * embed::BATCH;
/// How long a search waits for the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// Weight of the full-text score in hybrid ranking (the rest is cosine similarity).
const TEXT_WEIGHT: f32 = 0.5;

/// A request's result: now, or after waiting for the embedding provider.
pub enum Outcome {
    /// Answered on the memory thread.
    Now(Result<Value, Failure>),
    /// To finish on the runtime.
    Later(Box<SemanticJob>),
}

/// An embedding computed for a memory, to be cached.
pub struct Embedded {
    /// The scope directory.
    pub dir: PathBuf,
    /// The memory.
    pub slug: String,
    /// The embedding and what it was computed from.
    pub cached: Cached,
}

fn now() -> DateTime<Utc> {
    let t = Utc::now();
    DateTime::from_timestamp(t.timestamp(), 0).unwrap_or(t)
}

fn reply<T: Serialize>(v: T) -> Outcome {
    Outcome::Now(serde_json::to_value(v).map_err(|e| Failure::io(format!("cannot encode the reply: {e}"))))
}

impl Actor {
    pub(super) fn request(&mut self, project: Option<&Path>, req: Request) -> Outcome {
        let cfg = match self.config(project) {
            Ok(c) => c,
            Err(e) => return Outcome::Now(Err(e)),
        };
        let r = match req {
            Request::Write(p) => self.write(project, &cfg, p).map(reply),
            Request::Show(p) => self.show(project, &cfg, p).map(reply),
            Request::List(p) => self.list(project, &cfg, p).map(reply),
            Request::Search(p) => self.search(project, &cfg, p),
            Request::Update(p) => self.update(project, &cfg, p).map(reply),
            Request::Delete(p) => self.delete(project, &cfg, p).map(reply),
            Request::Link(p) => self.link(project, &cfg, p, true).map(reply),
            Request::Unlink(p) => self.link(project, &cfg, p, false).map(reply),
            Request::Health(p) => self.health(project, &cfg, p).map(reply),
            Request::Rebuild(p) => self.rebuild(project, &cfg, p).map(reply),
            Request::Suggest(p) => self.suggest(project, &cfg, p).map(reply),
        };
        r.unwrap_or_else(|e| Outcome::Now(Err(e)))
    }

    fn write(&mut self, project: Option<&Path>, cfg: &Config, p: WriteParams) -> Result<MemoryReply, Failure> {
        let home_project = project.is_some_and(|p| Some(super::project_dir(p)) == self.global_dir);
        let scope = p.scope.unwrap_or_else(|| default_scope(cfg, project.filter(|_| !home_project)));
        let dir = self.dir_of(scope, project, cfg)?;
        let now = now();
        let mut notes = Vec::new();
        let title = clean(p.title.trim(), "title", &mut notes);
        let content = clean(&normalize_content(&p.content), "content", &mut notes);
        let mut tags: Vec<String> = Vec::new();
        for t in p.tags {
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        let store = self.open(scope, &dir, cfg);
        let taken = |s: &str| store.memories.contains_key(s) || store.path_of(s).exists();
        let slug = match p.slug {
            Some(s) => {
                model::check_slug("slug", &s).map_err(|e| Failure::invalid(e.to_string()))?;
                if taken(&s) {
                    return Err(Failure::invalid(format!(
                        "slug: must be unique within a scope; {s} already exists in the {scope} scope"
                    )));
                }
                s
            }
            None => {
                let base = model::derive_slug(p.memory_type, &title);
                let mut slug = base.clone();
                let mut n = 2;
                while taken(&slug) {
                    slug = format!("{base}-{n}");
                    n += 1;
                }
                if slug != base {
                    notes.push(format!("{base} exists in the {scope} scope; the new memory is {slug}"));
                }
                slug
            }
        };
        let memory = Memory {
            slug,
            memory_type: p.memory_type,
            title,
            tags,
            created: now,
            updated: now,
            links: Vec::new(),
            content,
            scope,
        };
        memory.validate(now).map_err(|e| Failure::invalid(describe(&e)))?;
        let file = store.save(memory.clone(), Layout::default()).map_err(|e| io_failure(&dir, e))?;
        self.watch_new(&dir);
        Ok(MemoryReply { memory, file, edges: Vec::new(), notes })
    }

    fn show(&mut self, project: Option<&Path>, cfg: &Config, p: SlugParams) -> Result<MemoryReply, Failure> {
        let dir = self.find(project, cfg, p.scope, &p.slug, false)?;
        let store = &self.scopes[&dir];
        let s = &store.memories[&p.slug];
        Ok(MemoryReply {
            memory: s.memory.clone(),
            file: store.path_of(&p.slug),
            edges: store.edges(&p.slug),
            notes: Vec::new(),
        })
    }

    fn list(&mut self, project: Option<&Path>, cfg: &Config, p: ListParams) -> Result<ListReply, Failure> {
        let dirs = self.scopes_for(project, cfg, p.scope)?;
        let mut out = ListReply::default();
        for dir in dirs {
            let store = &self.scopes[&dir];
            let entries = store.index_entries();
            let neighbours = store.neighbour_map();
            for (slug, entry) in entries {
                let m = &store.memories[&slug].memory;
                if p.memory_type.is_some_and(|t| t != m.memory_type) || !p.tags.iter().all(|t| m.tags.contains(t)) {
                    continue;
                }
                let links = neighbours.get(slug.as_str()).map_or(0, Vec::len);
                out.memories.push(ListEntry { scope: store.scope, entry, links });
            }
            out.invalid.extend(store.invalid_files());
        }
        out.memories
            .sort_by(|a, b| b.entry.updated.cmp(&a.entry.updated).then_with(|| a.entry.slug.cmp(&b.entry.slug)));
        self.trim |= out.memories.len() > 1000;
        Ok(out)
    }

    fn update(&mut self, project: Option<&Path>, cfg: &Config, p: UpdateParams) -> Result<MemoryReply, Failure> {
        let dir = self.find(project, cfg, p.scope, &p.slug, true)?;
        let store = self.scopes.get_mut(&dir).ok_or_else(|| Failure::io("scope vanished"))?;
        let stored = store.memories[&p.slug].clone();
        let mut m = stored.memory.clone();
        let mut notes = Vec::new();
        if let Some(t) = p.title {
            m.title = clean(t.trim(), "title", &mut notes);
        }
        if let Some(t) = p.memory_type {
            m.memory_type = t;
        }
        if let Some(c) = p.content {
            m.content = clean(&normalize_content(&c), "content", &mut notes);
        }
        if let Some(a) = p.append {
            let a = clean(&normalize_content(&a), "content", &mut notes);
            m.content = if m.content.is_empty() { a } else { format!("{}\n\n{a}", m.content) };
        }
        if let Some(t) = p.tags {
            m.tags = t;
        }
        for t in p.add_tags {
            if !m.tags.contains(&t) {
                m.tags.push(t);
            }
        }
        m.tags.retain(|t| !p.remove_tags.contains(t));
        if m == stored.memory {
            notes.push("nothing changed".into());
            return Ok(MemoryReply { memory: m, file: store.path_of(&p.slug), edges: store.edges(&p.slug), notes });
        }
        // Never backwards, even if the clock was set back.
        m.updated = now().max(stored.memory.updated).max(m.created);
        m.validate(now().max(m.updated)).map_err(|e| Failure::invalid(describe(&e)))?;
        let file = store.save(m.clone(), stored.layout).map_err(|e| io_failure(&dir, e))?;
        // Seed 003: an update deletes the cached embedding; the next semantic search makes one.
        let cache = store.cache_path();
        embed::remove_cache(cache.as_deref(), &p.slug, store.vectors.as_mut());
        Ok(MemoryReply { memory: m, file, edges: store.edges(&p.slug), notes })
    }

    fn delete(&mut self, project: Option<&Path>, cfg: &Config, p: SlugParams) -> Result<DeleteReply, Failure> {
        let dir = self.find(project, cfg, p.scope, &p.slug, true)?;
        let store = self.scopes.get_mut(&dir).ok_or_else(|| Failure::io("scope vanished"))?;
        let file = store.path_of(&p.slug);
        let unlinked = store.delete(&p.slug).map_err(|e| io_failure(&dir, e))?;
        Ok(DeleteReply { scope: store.scope, slug: p.slug, file, unlinked })
    }

    fn link(&mut self, project: Option<&Path>, cfg: &Config, p: LinkParams, add: bool) -> Result<LinkReply, Failure> {
        let label = p.label.clone().unwrap_or_else(|| "relates-to".into());
        model::check_label(&label).map_err(|e| Failure::invalid(e.to_string()))?;
        let dirs = self.scopes_for(project, cfg, p.scope)?;
        let has = |a: &Actor, d: &PathBuf, s: &str| a.scopes[d].memories.contains_key(s);
        let with_source: Vec<&PathBuf> = dirs.iter().filter(|d| has(self, d, &p.source)).collect();
        let both: Vec<&PathBuf> = with_source.iter().copied().filter(|d| has(self, d, &p.target)).collect();
        let dir = match (both.as_slice(), with_source.first()) {
            ([one], _) => (*one).clone(),
            ([_, ..], _) => {
                let names: Vec<String> = both.iter().map(|d| self.scopes[*d].scope.to_string()).collect();
                return Err(Failure::invalid(format!(
                    "{} and {} are both in the {} scopes; pass --scope",
                    p.source,
                    p.target,
                    names.join(" and ")
                )));
            }
            ([], None) => return Err(not_found(&p.source, p.scope)),
            ([], Some(src)) => {
                let elsewhere = dirs.iter().find(|d| has(self, d, &p.target));
                return Err(match elsewhere {
                    Some(t) => Failure::invalid(format!(
                        "no cross-scope links: {} is in the {} scope, {} in the {} scope",
                        p.source, self.scopes[*src].scope, p.target, self.scopes[t].scope
                    )),
                    None => not_found(&p.target, p.scope),
                });
            }
        };
        let store = self.scopes.get_mut(&dir).ok_or_else(|| Failure::io("scope vanished"))?;
        let edges = if add {
            store.link(&p.source, &p.target, &label)
        } else {
            store.unlink(&p.source, &p.target, p.label.as_deref())
        }
        .map_err(Failure::invalid)?;
        Ok(LinkReply { scope: store.scope, edges })
    }

    fn health(&mut self, project: Option<&Path>, cfg: &Config, p: HealthParams) -> Result<HealthReply, Failure> {
        let dirs = self.scopes_for(project, cfg, p.scope)?;
        let now = Utc::now();
        let mut out = HealthReply { scopes: Vec::new(), min_quality_score: cfg.quality.min_quality_score };
        for dir in dirs {
            let Some(store) = self.scopes.get_mut(&dir) else { continue };
            if store.memories.is_empty() && store.invalid.is_empty() && !dir.is_dir() {
                continue;
            }
            out.scopes.push(health::check(store, cfg, p.fix, now));
        }
        Ok(out)
    }

    fn rebuild(&mut self, project: Option<&Path>, cfg: &Config, p: ScopeParams) -> Result<RebuildReply, Failure> {
        let dirs = self.scopes_for(project, cfg, p.scope)?;
        let mut out = RebuildReply::default();
        self.trim = true;
        for dir in dirs {
            let Some(store) = self.scopes.get_mut(&dir) else { continue };
            let t = Instant::now();
            store.read_all();
            store.touch_index();
            if dir.is_dir() {
                store.flush().map_err(|e| io_failure(&dir, e))?;
            }
            out.scopes.push(RebuildScope {
                scope: store.scope,
                dir: dir.clone(),
                memories: store.memories.len(),
                invalid: store.invalid_files(),
                ms: t.elapsed().as_secs_f64() * 1000.0,
            });
        }
        Ok(out)
    }

    fn suggest(&mut self, project: Option<&Path>, cfg: &Config, p: SuggestParams) -> Result<SuggestReply, Failure> {
        let dir = self.find(project, cfg, p.scope, &p.slug, false)?;
        let store = &self.scopes[&dir];
        let limit = p.limit.unwrap_or(5).clamp(1, 50);
        Ok(SuggestReply {
            scope: store.scope,
            slug: p.slug.clone(),
            suggestions: health::suggest(store, &p.slug, limit),
        })
    }

    /// The scope directory holding `slug`: the first in lookup order; with `unique`, a slug
    /// in two scopes is an error (a mutation must not guess).
    fn find(
        &mut self,
        project: Option<&Path>,
        cfg: &Config,
        scope: Option<Scope>,
        slug: &str,
        unique: bool,
    ) -> Result<PathBuf, Failure> {
        model::check_slug("slug", slug).map_err(|e| Failure::invalid(e.to_string()))?;
        let dirs = self.scopes_for(project, cfg, scope)?;
        let found: Vec<PathBuf> = dirs.into_iter().filter(|d| self.scopes[d].memories.contains_key(slug)).collect();
        match found.as_slice() {
            [] => {
                let invalid = self
                    .scopes
                    .values()
                    .find_map(|s| s.invalid.get(&s.path_of(slug)).map(|e| (s.path_of(slug), e.join("; "))));
                Err(match invalid {
                    Some((f, e)) => Failure::invalid(format!("{} is not a valid memory: {e}", f.display())),
                    None => not_found(slug, scope),
                })
            }
            [one] => Ok(one.clone()),
            [first, ..] if !unique => Ok(first.clone()),
            many => {
                let names: Vec<String> = many.iter().map(|d| self.scopes[d].scope.to_string()).collect();
                Err(Failure::invalid(format!("{slug} exists in the {} scopes; pass --scope", names.join(" and "))))
            }
        }
    }

    fn search(&mut self, project: Option<&Path>, cfg: &Config, p: SearchParams) -> Result<Outcome, Failure> {
        if p.query.trim().is_empty() {
            return Err(Failure::invalid("query: must not be empty"));
        }
        if p.limit == Some(0) {
            return Err(Failure::invalid("limit: must be at least 1"));
        }
        let limit = p.limit.unwrap_or(LIMIT_DEFAULT).min(LIMIT_MAX);
        let dirs = self.scopes_for(project, cfg, p.scope)?;
        let mut notes = Vec::new();
        let mode = match (p.mode, cfg.embedding.provider) {
            (SearchMode::Auto, Provider::Ollama) => SearchMode::Hybrid,
            (SearchMode::Auto | SearchMode::Text, _) => SearchMode::Text,
            (m, Provider::Ollama) => m,
            (_, Provider::Disabled) => {
                notes.push("semantic search needs an embedding provider (embedding.provider in config.json); showing full-text results".into());
                SearchMode::Text
            }
            (_, Provider::Openai) => {
                notes.push("the openai embedding provider is not supported yet; showing full-text results".into());
                SearchMode::Text
            }
        };
        let filter =
            |m: &Memory| p.memory_type.is_none_or(|t| t == m.memory_type) && p.tags.iter().all(|t| m.tags.contains(t));
        if mode == SearchMode::Text {
            let mut hits = Vec::new();
            for dir in &dirs {
                let store = &self.scopes[dir];
                for (slug, score) in
                    store.text.search(&p.query, limit, |s| store.memories.get(s).is_some_and(|x| filter(&x.memory)))
                {
                    let m = &store.memories[&slug].memory;
                    let mut h = hit(m, store.path_of(&slug), score, Some(score));
                    h.snippet = search::snippet(&m.content, &p.query);
                    hits.push(h);
                }
            }
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
            hits.truncate(limit);
            return Ok(reply(SearchReply { hits, mode, notes }));
        }
        // Semantic or hybrid: every memory that passes the filters is a candidate.
        let models: Vec<String> =
            std::iter::once(cfg.embedding.model.clone()).chain(cfg.embedding.fallback_models.iter().cloned()).collect();
        let mut candidates = Vec::new();
        let mut to_embed = 0;
        for dir in &dirs {
            let store = self.scopes.get_mut(dir).ok_or_else(|| Failure::io("scope vanished"))?;
            // A model change invalidates the cache (another embedding space): reloading it
            // deletes the entries of models no longer configured.
            if store.vectors.is_none() || store.vector_models != models {
                store.vectors = Some(embed::load_cache_models(store.cache_path().as_deref(), &models));
                store.vector_models.clone_from(&models);
            }
            let text: std::collections::HashMap<String, f32> =
                store.text.search(&p.query, store.text.len().max(1), |_| true).into_iter().collect();
            let vectors = store.vectors.as_ref();
            let mut mine: Vec<Candidate> = store
                .memories
                .values()
                .filter(|s| filter(&s.memory))
                .map(|s| {
                    let m = &s.memory;
                    let hash = s.text_hash().to_string();
                    let cached = vectors.and_then(|v| v.get(&m.slug)).filter(|c| c.hash == hash).cloned();
                    // Kept for embedding unless the primary model's vector is at hand; one of a
                    // fallback model is re-done if the primary model answers.
                    let keep_body = cached.as_ref().is_none_or(|c| c.model != models[0]);
                    Candidate {
                        // Snippets are made for the results only, once ranked (`snippets`).
                        hit: hit(m, store.path_of(&m.slug), 0.0, text.get(&m.slug).copied()),
                        dir: dir.clone(),
                        updated: m.updated,
                        hash,
                        body: keep_body.then(|| embed::text_of(m)),
                        cached,
                    }
                })
                .collect();
            // Newest first: when not everything can be embedded now, the recent ones are.
            mine.sort_by_key(|c| std::cmp::Reverse(c.updated));
            for c in mine.iter_mut().filter(|c| c.body.is_some() && c.cached.is_none()) {
                to_embed += 1;
                if to_embed > EMBED_PER_SEARCH {
                    c.body = None;
                }
            }
            candidates.extend(mine);
        }
        if to_embed > EMBED_PER_SEARCH {
            notes.push(format!(
                "{} memories have no embedding yet; they are embedded {EMBED_PER_SEARCH} per search",
                to_embed - EMBED_PER_SEARCH
            ));
        }
        Ok(Outcome::Later(Box::new(SemanticJob {
            endpoint: cfg.embedding.endpoint.clone(),
            models,
            query: p.query,
            mode,
            limit,
            candidates,
            notes,
        })))
    }

    /// Lines for the resume context: memories sharing words with the session's topics,
    /// hubs, and recent ones, best first.
    pub(super) fn relevant(&mut self, project: &Path, topics: &[String], limit: usize) -> Vec<String> {
        let Ok(cfg) = self.config(Some(project)) else { return Vec::new() };
        let Ok(dirs) = self.scopes_for(Some(project), &cfg, None) else { return Vec::new() };
        let now = Utc::now();
        let mut scored: Vec<(i64, DateTime<Utc>, String)> = Vec::new();
        for dir in dirs {
            let store = &self.scopes[&dir];
            for s in store.memories.values() {
                let m = &s.memory;
                let words: Vec<String> = m.tags.iter().flat_map(|t| search::tokens(t)).collect();
                let title = search::tokens(&m.title);
                let mut score = 3 * topics.iter().filter(|t| words.contains(t)).count() as i64
                    + topics.iter().filter(|t| title.contains(t)).count() as i64;
                if m.memory_type == model::MemoryType::Hub {
                    score += 2;
                }
                let age = (now - m.updated).num_days();
                score += if age <= 7 {
                    2
                } else if age <= 30 {
                    1
                } else {
                    0
                };
                if score > 0 {
                    let first = m.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                    let line = if first.is_empty() {
                        format!("- [{}] {} ({}, {})", m.memory_type, m.title, m.slug, m.scope)
                    } else {
                        format!("- [{}] {} ({}, {}): {first}", m.memory_type, m.title, m.slug, m.scope)
                    };
                    scored.push((score, m.updated, line));
                }
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        scored.into_iter().take(limit).map(|(_, _, l)| l).collect()
    }
}

/// Where `memory write` puts a memory without `--scope`.
fn default_scope(cfg: &Config, project: Option<&Path>) -> Scope {
    match cfg.scopes.default {
        DefaultScope::Global => Scope::Global,
        DefaultScope::Project => Scope::Project,
        DefaultScope::Local => Scope::Local,
        DefaultScope::Auto => match project {
            Some(p) if p.join(".git").exists() || p.join(".claude").is_dir() => Scope::Project,
            _ => Scope::Global,
        },
    }
}

/// Text as stored: secrets redacted (memories are committed and shown to agents).
fn clean(text: &str, field: &str, notes: &mut Vec<String>) -> String {
    let out = ccmem_proto::redact::redact(text);
    if out != text {
        notes.push(format!("{field}: secrets were redacted"));
    }
    out.into_owned()
}

fn not_found(slug: &str, scope: Option<Scope>) -> Failure {
    match scope {
        Some(s) => Failure::invalid(format!("no memory {slug} in the {s} scope")),
        None => Failure::invalid(format!("no memory {slug} in any scope (see `ccmemctl memory list`)")),
    }
}

fn io_failure(dir: &Path, e: std::io::Error) -> Failure {
    Failure::io(format!("cannot write in {}: {e}", dir.display()))
}

/// A result without its snippet.
fn hit(m: &Memory, file: PathBuf, score: f32, text: Option<f32>) -> SearchHit {
    SearchHit {
        scope: m.scope,
        slug: m.slug.clone(),
        memory_type: m.memory_type,
        title: m.title.clone(),
        tags: m.tags.clone(),
        score,
        text_score: text,
        semantic_score: None,
        snippet: String::new(),
        file,
    }
}

struct Candidate {
    hit: SearchHit,
    dir: PathBuf,
    updated: DateTime<Utc>,
    hash: String,
    /// Text to embed, when there is no fresh cached vector.
    body: Option<String>,
    cached: Option<Cached>,
}

/// The part of a semantic search that waits for the provider.
pub struct SemanticJob {
    endpoint: String,
    models: Vec<String>,
    query: String,
    mode: SearchMode,
    limit: usize,
    candidates: Vec<Candidate>,
    notes: Vec<String>,
}

impl SemanticJob {
    /// What is searched for.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Embeds the query (and memories without a fresh embedding), ranks, and returns the
    /// reply with the new embeddings to cache.
    pub async fn run(mut self) -> (SearchReply, Vec<Embedded>) {
        // Memories with no vector at all go with the query; those with a vector of another
        // model only once the model that answers is known.
        let uncached: Vec<usize> = (0..self.candidates.len())
            .filter(|i| self.candidates[*i].body.is_some() && self.candidates[*i].cached.is_none())
            .collect();
        let mut fresh = Vec::new();
        let mut inputs = vec![self.query.clone()];
        let first = uncached.len().min(embed::BATCH - 1);
        inputs.extend(uncached[..first].iter().filter_map(|i| self.candidates[*i].body.clone()));
        let query_vec = match embed::embed(&self.endpoint, &self.models, &inputs, PROVIDER_TIMEOUT).await {
            Ok((model, mut vectors)) => {
                let q = vectors.remove(0);
                self.take(&uncached[..first], &model, vectors, &mut fresh);
                let missing: Vec<usize> = (0..self.candidates.len())
                    .filter(|i| {
                        let c = &self.candidates[*i];
                        c.body.is_some() && c.cached.as_ref().is_none_or(|v| v.model != model)
                    })
                    .collect();
                for chunk in missing.chunks(embed::BATCH) {
                    let inputs: Vec<String> = chunk.iter().filter_map(|i| self.candidates[*i].body.clone()).collect();
                    match embed::embed(&self.endpoint, std::slice::from_ref(&model), &inputs, PROVIDER_TIMEOUT).await {
                        Ok((_, v)) => self.take(chunk, &model, v, &mut fresh),
                        Err(e) => {
                            self.notes.push(format!("embedding stopped part-way: {e}"));
                            break;
                        }
                    }
                }
                Some((model, q))
            }
            Err(e) => {
                self.notes.push(format!("embedding provider unavailable ({e}); showing full-text results"));
                None
            }
        };
        let mode = if query_vec.is_some() { self.mode } else { SearchMode::Text };
        let max_text = self.candidates.iter().filter_map(|c| c.hit.text_score).fold(0.0f32, f32::max);
        let mut hits: Vec<SearchHit> = Vec::new();
        for mut c in self.candidates {
            let semantic = match (&query_vec, &c.cached) {
                (Some((model, q)), Some(v)) if &v.model == model => Some(embed::cosine(q, &v.vector)),
                _ => None,
            };
            let text = c.hit.text_score.map(|t| if max_text > 0.0 { t / max_text } else { 0.0 });
            c.hit.score = match mode {
                SearchMode::Semantic => match semantic {
                    Some(s) => s,
                    None => continue,
                },
                SearchMode::Hybrid => {
                    if text.is_none() && semantic.is_none_or(|s| s <= 0.0) {
                        continue;
                    }
                    TEXT_WEIGHT * text.unwrap_or(0.0) + (1.0 - TEXT_WEIGHT) * semantic.unwrap_or(0.0).max(0.0)
                }
                _ => match c.hit.text_score {
                    Some(t) => t,
                    None => continue,
                },
            };
            c.hit.semantic_score = semantic;
            hits.push(c.hit);
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.slug.cmp(&b.slug)));
        hits.truncate(self.limit);
        let reply = SearchReply { hits, mode, notes: self.notes };
        (reply, fresh)
    }

    fn take(&mut self, idx: &[usize], model: &str, vectors: Vec<Vec<f32>>, fresh: &mut Vec<Embedded>) {
        for (i, v) in idx.iter().zip(vectors) {
            let c = &mut self.candidates[*i];
            let cached = Cached { model: model.to_string(), hash: c.hash.clone(), vector: Arc::new(v) };
            c.cached = Some(cached.clone());
            c.body = None;
            fresh.push(Embedded { dir: c.dir.clone(), slug: c.hit.slug.clone(), cached });
        }
    }
}
