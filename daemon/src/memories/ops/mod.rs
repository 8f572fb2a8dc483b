//! The memory requests, run on the memory thread. Semantic searches finish on the async
//! runtime (they wait for the embedding provider) and hand their new embeddings back.

use super::config::{Config, DefaultScope, Provider};
use super::embed::{self, Cached};
use super::{health, search, Actor, Failure, Relevant, Request};
use ccmem_proto::model::memory::frontmatter::{normalize_content, Layout};
use ccmem_proto::model::memory::{self as model, describe, Memory, Scope};
use ccmem_proto::wire::memory::*;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod query;

pub use query::{Embedded, SemanticJob};

/// Default and largest number of search results.
const LIMIT_DEFAULT: usize = 10;
const LIMIT_MAX: usize = 100;

/// A request's result: now, or after waiting for the embedding provider.
pub enum Outcome {
    /// Answered on the memory thread.
    Now(Result<Value, Failure>),
    /// To finish on the runtime.
    Later(Box<SemanticJob>),
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
        users_own(scope, p.by_agent)?;
        let dir = self.dir_of(scope, project, cfg)?;
        let now = now();
        let mut notes = Vec::new();
        let title = clean(p.title.trim(), "title", &mut notes);
        let content = clean_content(&normalize_content(&p.content), &mut notes);
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
        users_own(store.scope, p.by_agent)?;
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
            m.content = clean_content(&normalize_content(&c), &mut notes);
        }
        if let Some(a) = p.append {
            let a = clean_content(&normalize_content(&a), &mut notes);
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
        users_own(store.scope, p.by_agent)?;
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
        // A link is written into both memories' files and the scope's graph: a change.
        users_own(store.scope, p.by_agent)?;
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
}

/// Refuses an agent's change to a user-wide scope: a memory there reaches every project, so
/// a request in one repository's text must not put one there.
fn users_own(scope: Scope, by_agent: bool) -> Result<(), Failure> {
    match scope {
        Scope::Global | Scope::Enterprise if by_agent => Err(Failure::invalid(format!(
            "the {scope} scope is the user's: a memory there reaches every project, so an agent does not change \
             it. Use the project or local scope, or ask the user to run `ccmemctl memory write --scope {scope} …` \
             (or `update`, `delete`, `link`, `unlink`) in a terminal of their own"
        ))),
        _ => Ok(()),
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

/// A title as stored: secrets redacted (memories are committed and shown to agents), as
/// markdown: the context shows it as such (`gh*p_*…` reads as a token).
fn clean(text: &str, field: &str, notes: &mut Vec<String>) -> String {
    let out = crate::text::redact_markdown(text);
    if out != text {
        notes.push(format!("{field}: secrets were redacted"));
    }
    out
}

/// A memory's content as stored: markdown, so redacted as written and as it reads (a token
/// split by a comment or escaped is whole when read: see `text::redact_markdown`).
fn clean_content(text: &str, notes: &mut Vec<String>) -> String {
    let out = crate::text::redact_markdown(text);
    if out != text {
        notes.push("content: secrets were redacted".to_string());
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memorys_content_is_redacted_as_it_reads() {
        let mut notes = Vec::new();
        let out = clean_content("The key was ghp\\_0123456789abcdefghijABCDEFGHIJ012345, **rotated**.", &mut notes);
        assert_eq!(out, "The key was [REDACTED:github-token], **rotated**.");
        assert_eq!(notes, ["content: secrets were redacted"]);
        let mut notes = Vec::new();
        assert_eq!(
            clean_content("Use `PKCE`; see [the RFC](https://x.example).", &mut notes),
            "Use `PKCE`; see [the RFC](https://x.example)."
        );
        assert!(notes.is_empty());
        // Found by the independent tester (second round): a token split by stars that
        // render as themselves, in the content and in the title.
        let mut notes = Vec::new();
        let token = "gh*p_*Z8vLq2Xw7Kp4Rt9Ym3Nb6Hc1Jd5Fg0Se8Ua2Vo4";
        assert_eq!(clean_content(&format!("use {token}"), &mut notes), "use [REDACTED:github-token]");
        assert_eq!(clean(&format!("key {token}"), "title", &mut notes), "key [REDACTED:github-token]");
    }
}
