//! Searches: full text at once, semantic ones finished on the runtime with the provider's
//! embeddings; and the memories relevant to a session's topics, for the resume context.

use super::*;

impl Actor {
    pub(super) fn search(&mut self, project: Option<&Path>, cfg: &Config, p: SearchParams) -> Result<Outcome, Failure> {
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
    /// hubs, and recent ones, best first. Those of the project's own scopes are files in the
    /// repository, which a clone brings: they are quoted, and said to be so.
    pub(in crate::memories) fn relevant(&mut self, project: &Path, topics: &[String], limit: usize) -> Vec<Relevant> {
        let Ok(cfg) = self.config(Some(project)) else { return Vec::new() };
        let Ok(dirs) = self.scopes_for(Some(project), &cfg, None) else { return Vec::new() };
        let now = Utc::now();
        let mut scored: Vec<(i64, DateTime<Utc>, Relevant)> = Vec::new();
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
                if score <= 0 {
                    continue;
                }
                // A file committed or edited by hand was never filtered on its way in: its
                // title and first line are redacted as the markdown they are (a token split by
                // a comment reads whole); the context they go into is redacted whole too.
                let first = m.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                let first = crate::text::redact_markdown(first);
                let title = crate::text::redact_markdown(&m.title);
                let from_repository = matches!(m.scope, model::Scope::Project | model::Scope::Local);
                let line = if from_repository {
                    let text = if first.is_empty() { title } else { format!("{title}: {first}") };
                    format!("- memory {} ({}, {}): {}", m.slug, m.memory_type, m.scope, crate::text::quoted(&text, 200))
                } else if first.is_empty() {
                    format!("- [{}] {title} ({}, {})", m.memory_type, m.slug, m.scope)
                } else {
                    format!("- [{}] {title} ({}, {}): {first}", m.memory_type, m.slug, m.scope)
                };
                scored.push((score, m.updated, Relevant { line, from_repository }));
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        scored.into_iter().take(limit).map(|(_, _, l)| l).collect()
    }
}

/// Memories embedded during one search at most; the rest follow in later searches.
const EMBED_PER_SEARCH: usize = 4 * embed::BATCH;

/// How long a search waits for the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// Weight of the full-text score in hybrid ranking (the rest is cosine similarity).
const TEXT_WEIGHT: f32 = 0.5;

/// An embedding computed for a memory, to be cached.
pub struct Embedded {
    /// The scope directory.
    pub dir: PathBuf,
    /// The memory.
    pub slug: String,
    /// The embedding and what it was computed from.
    pub cached: Cached,
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
