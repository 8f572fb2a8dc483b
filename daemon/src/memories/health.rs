//! The health check of a scope (orphans, broken links, one-way edges, frontmatter out of step
//! with the graph, index drift, stale cache, quality), its mechanical repairs, and link
//! suggestions (seed 003's Proposed edges).

use super::config::Config;
use super::scope::ScopeStore;
use super::search::tokens;
use ccmem_proto::model::memory::{inverse_label, Edge, Memory, MemoryType};
use ccmem_proto::wire::memory::{Finding, FindingKind, Quality, ScopeHealth, Suggestion};
use chrono::{DateTime, Utc};
use std::collections::{BTreeSet, HashMap};

/// Checks a scope and, with `fix`, repairs what needs no judgement.
pub fn check(store: &mut ScopeStore, cfg: &Config, fix: bool, now: DateTime<Utc>) -> ScopeHealth {
    let mut findings = Vec::new();
    let mut finding = |kind, slug: &str, detail: String, fixable| {
        findings.push(Finding { kind, slug: slug.to_string(), detail, fixable, fixed: false });
    };

    // Links: what the graph and the frontmatter say, and what exists.
    let exists = |s: &str| store.memories.contains_key(s);
    let mut edges_to_drop: Vec<(String, String)> = Vec::new();
    let mut edges_to_add: Vec<(String, Edge)> = Vec::new();
    for (src, edges) in &store.graph {
        for e in edges {
            if !exists(src) || !exists(&e.target) {
                let gone = if exists(src) { &e.target } else { src };
                finding(
                    FindingKind::BrokenLink,
                    src,
                    format!("graph edge {} {src} → {} points at {gone}, which does not exist", e.label, e.target),
                    true,
                );
                edges_to_drop.push((src.clone(), e.target.clone()));
                continue;
            }
            let inverse = inverse_label(&e.label);
            let back =
                store.graph.get(&e.target).is_some_and(|b| b.iter().any(|b| b.target == *src && b.label == inverse));
            if !back {
                finding(
                    FindingKind::OneWayEdge,
                    src,
                    format!("{src} {} {} has no inverse edge {} {inverse} {src}", e.label, e.target, e.target),
                    true,
                );
                edges_to_add.push((
                    e.target.clone(),
                    Edge { target: src.clone(), label: inverse.to_string(), timestamp: e.timestamp.clone() },
                ));
            }
        }
    }
    let mut links_to_add: Vec<(String, String)> = Vec::new();
    let neighbour_map = store.neighbour_map();
    let none = Vec::new();
    for (slug, s) in &store.memories {
        let neighbours = neighbour_map.get(slug.as_str()).unwrap_or(&none);
        for l in &s.memory.links {
            if !exists(l) {
                finding(
                    FindingKind::BrokenLink,
                    slug,
                    format!("links names {l}, which does not exist in this scope"),
                    true,
                );
            } else if !neighbours.contains(&l.as_str()) {
                finding(
                    FindingKind::LinksOutOfStep,
                    slug,
                    format!("links names {l} but the graph has no edge between them"),
                    true,
                );
                links_to_add.push((slug.clone(), l.clone()));
            }
        }
        for n in neighbours.iter().filter(|n| exists(n) && !s.memory.links.iter().any(|l| l == *n)) {
            finding(FindingKind::LinksOutOfStep, slug, format!("the graph links it to {n} but its links do not"), true);
        }
        // Written while the clock ran ahead: ages and orders built on it are wrong.
        let skew = chrono::Duration::seconds(ccmem_proto::model::memory::CLOCK_SKEW_SECS);
        for (field, t) in [("created", s.memory.created), ("updated", s.memory.updated)] {
            if t > now + skew {
                finding(
                    FindingKind::FutureTimestamp,
                    slug,
                    format!(
                        "{field} {} is in the future: the clock was wrong when it was written",
                        ccmem_proto::model::memory::iso(t)
                    ),
                    false,
                );
            }
        }
        let days = (now - s.memory.created).num_days();
        let linked = !neighbours.is_empty() || s.memory.links.iter().any(|l| exists(l));
        if !linked && (s.memory.memory_type == MemoryType::Hub || days >= cfg.quality.orphan_threshold as i64) {
            let why = if s.memory.memory_type == MemoryType::Hub {
                "a hub with no edges".to_string()
            } else {
                format!("no links after {days} days (orphanThreshold {})", cfg.quality.orphan_threshold)
            };
            finding(
                FindingKind::Orphan,
                slug,
                format!("{why}: link it (`memory suggest-links {slug}`) or delete it"),
                false,
            );
        }
    }
    for (file, errors) in &store.invalid {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        finding(FindingKind::InvalidFile, &name, errors.join("; "), false);
    }
    let index_drift = store.index_drift.clone().or_else(|| store.index_drift_on_disk());
    if let Some(d) = &index_drift {
        finding(FindingKind::IndexDrift, "index.json", d.clone(), true);
    }
    let stale_cache = stale_cache_files(store);
    for slug in &stale_cache {
        finding(FindingKind::StaleCache, slug, "cached embedding of a memory that no longer exists".into(), true);
    }
    let mut quality: Vec<Quality> = store
        .memories
        .values()
        .map(|s| score(&s.memory, store, neighbour_map.get(s.memory.slug.as_str()).map_or(0, Vec::len), now))
        .collect();
    quality.sort_by(|a, b| a.score.cmp(&b.score).then_with(|| a.slug.cmp(&b.slug)));
    for q in quality.iter().filter(|q| q.score < cfg.quality.min_quality_score) {
        finding(
            FindingKind::LowQuality,
            &q.slug,
            format!("quality {} < {}: {}", q.score, cfg.quality.min_quality_score, q.reasons.join("; ")),
            false,
        );
    }

    if fix {
        let failed = repair(store, edges_to_drop, edges_to_add, links_to_add, &stale_cache, index_drift.is_some());
        for f in findings.iter_mut().filter(|f| f.fixable) {
            f.fixed = failed.is_none();
        }
        if let Some(e) = failed {
            finding_note(&mut findings, e);
        }
    }
    let mean = if quality.is_empty() {
        100.0
    } else {
        quality.iter().map(|q| q.score as f32).sum::<f32>() / quality.len() as f32
    };
    ScopeHealth {
        scope: store.scope,
        dir: store.dir.clone(),
        memories: store.memories.len(),
        edges: store.edge_count(),
        findings,
        quality,
        mean_quality: mean,
    }
}

fn finding_note(findings: &mut Vec<Finding>, error: String) {
    findings.push(Finding {
        kind: FindingKind::RepairFailed,
        slug: String::new(),
        detail: format!("repair failed: {error}"),
        fixable: false,
        fixed: false,
    });
}

fn repair(
    store: &mut ScopeStore,
    drop: Vec<(String, String)>,
    add: Vec<(String, Edge)>,
    links_to_add: Vec<(String, String)>,
    stale_cache: &[String],
    index: bool,
) -> Option<String> {
    for (src, target) in drop {
        if let Some(edges) = store.graph.get_mut(&src) {
            edges.retain(|e| e.target != target);
        }
        if !store.memories.contains_key(&src) {
            store.graph.remove(&src);
        }
    }
    for (src, edge) in add {
        let edges = store.graph.entry(src).or_default();
        if !edges.iter().any(|e| e.target == edge.target && e.label == edge.label) {
            edges.push(edge);
        }
    }
    store.graph.retain(|_, e| !e.is_empty());
    store.mark_graph();
    for (a, b) in links_to_add {
        // Both sides may have named each other: the first link made the edges.
        if store.neighbours(&a).contains(&b) {
            continue;
        }
        if let Err(e) = store.link(&a, &b, "relates-to") {
            return Some(e);
        }
    }
    // Frontmatter follows the graph; links to memories that do not exist go.
    let slugs: Vec<String> = store.memories.keys().cloned().collect();
    for slug in slugs {
        let dangling: Vec<String> =
            store.memories[&slug].memory.links.iter().filter(|l| !store.memories.contains_key(*l)).cloned().collect();
        for d in dangling {
            if let Err(e) = store.sync_links(&slug, Some(&d)) {
                return Some(e.to_string());
            }
        }
        if let Err(e) = store.sync_links(&slug, None) {
            return Some(e.to_string());
        }
    }
    for slug in stale_cache {
        let cache = store.cache_path();
        super::embed::remove_cache(cache.as_deref(), slug, store.vectors.as_mut());
    }
    if index {
        store.touch_index();
    }
    store.flush().err().map(|e| e.to_string())
}

fn stale_cache_files(store: &ScopeStore) -> Vec<String> {
    let Some(Ok(entries)) = store.cache_path().map(std::fs::read_dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .filter(|s| !store.memories.contains_key(s))
        .collect()
}

/// A memory's quality, 0–100, with what cost points.
/// `neighbours`: how many memories the graph joins it to.
pub fn score(m: &Memory, store: &ScopeStore, neighbours: usize, now: DateTime<Utc>) -> Quality {
    let mut score: i32 = 100;
    let mut reasons = Vec::new();
    let mut cost = |points: i32, why: &str| {
        score -= points;
        reasons.push(format!("-{points} {why}"));
    };
    let len = m.content.chars().count();
    if len == 0 {
        cost(40, "no content");
    } else if len < 80 {
        cost(20, "content under 80 characters");
    }
    let links = neighbours.max(m.links.iter().filter(|l| store.memories.contains_key(*l)).count());
    if m.memory_type == MemoryType::Hub && links < 2 {
        cost(20, "a hub linking fewer than 2 memories");
    } else if links == 0 {
        cost(15, "not linked to any memory");
    }
    if m.tags.len() < 2 {
        cost(5, "a single tag");
    }
    if m.title.chars().count() < 8 {
        cost(10, "title under 8 characters");
    }
    if (now - m.updated).num_days() > 180 {
        cost(10, "not updated for over 180 days");
    }
    let lower = m.content.to_lowercase();
    if m.memory_type == MemoryType::Decision
        && !["because", "rationale", "why", "so that", "trade-off", "tradeoff", "instead of"]
            .iter()
            .any(|w| lower.contains(w))
    {
        cost(10, "a decision without its reason (because, rationale, trade-offs)");
    }
    if m.content.contains("[REDACTED:") {
        cost(5, "contains redacted secrets");
    }
    Quality { slug: m.slug.clone(), score: score.clamp(0, 100) as u8, reasons }
}

/// Proposed edges for `slug`: memories sharing tags or distinctive words, not yet linked.
pub fn suggest(store: &ScopeStore, slug: &str, limit: usize) -> Vec<Suggestion> {
    let Some(me) = store.memories.get(slug).map(|s| &s.memory) else { return Vec::new() };
    let linked: BTreeSet<String> = store.neighbours(slug).into_iter().chain(me.links.iter().cloned()).collect();
    let bag = |m: &Memory| -> HashMap<String, f32> {
        let mut b = HashMap::new();
        for t in tokens(&m.title).into_iter().chain(tokens(&m.content)).filter(|t| t.chars().count() > 2) {
            *b.entry(t).or_insert(0.0) += 1.0;
        }
        b
    };
    // Words in most memories tell nothing: weight by rarity across the scope.
    let bags: Vec<(&String, &Memory, HashMap<String, f32>)> =
        store.memories.iter().map(|(s, st)| (s, &st.memory, bag(&st.memory))).collect();
    let mut df: HashMap<&str, f32> = HashMap::new();
    for (_, _, b) in &bags {
        for t in b.keys() {
            *df.entry(t.as_str()).or_default() += 1.0;
        }
    }
    let n = bags.len() as f32;
    let idf = |t: &str| (1.0 + n / (1.0 + df.get(t).copied().unwrap_or(0.0))).ln();
    let mine = bag(me);
    let weigh =
        |b: &HashMap<String, f32>| -> HashMap<String, f32> { b.iter().map(|(t, f)| (t.clone(), f * idf(t))).collect() };
    let mine_w = weigh(&mine);
    let norm = |b: &HashMap<String, f32>| b.values().map(|v| v * v).sum::<f32>().sqrt();
    let my_norm = norm(&mine_w);
    let mut out: Vec<Suggestion> = Vec::new();
    for (other, m, b) in &bags {
        if *other == slug || linked.contains(*other) {
            continue;
        }
        let shared_tags: Vec<&String> = me.tags.iter().filter(|t| m.tags.contains(t)).collect();
        let union = me.tags.len() + m.tags.len() - shared_tags.len();
        let jaccard = if union == 0 { 0.0 } else { shared_tags.len() as f32 / union as f32 };
        let theirs = weigh(b);
        let dot: f32 = mine_w.iter().filter_map(|(t, w)| theirs.get(t).map(|v| v * w)).sum();
        let text = if my_norm == 0.0 { 0.0 } else { dot / (my_norm * norm(&theirs)).max(f32::EPSILON) };
        let score = 0.5 * jaccard + 0.5 * text;
        if score < 0.08 {
            continue;
        }
        let mut reasons = Vec::new();
        if !shared_tags.is_empty() {
            reasons.push(format!(
                "shared tags: {}",
                shared_tags.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        let mut words: Vec<(&String, f32)> =
            mine_w.iter().filter_map(|(t, w)| theirs.get(t).map(|v| (t, v * w))).collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        if text >= 0.05 && !words.is_empty() {
            let top: Vec<&str> = words.iter().take(5).map(|(t, _)| t.as_str()).collect();
            reasons.push(format!("similar text ({:.0}%): {}", text * 100.0, top.join(", ")));
        }
        if reasons.is_empty() {
            continue;
        }
        let label = match (me.memory_type, m.memory_type) {
            (_, MemoryType::Hub) if me.memory_type != MemoryType::Hub => "part-of",
            (MemoryType::Hub, _) => "contains",
            (a, b) if a == b && text >= 0.5 => "similar-to",
            _ => "relates-to",
        };
        out.push(Suggestion { target: (*other).clone(), title: m.title.clone(), label: label.into(), score, reasons });
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.target.cmp(&b.target)));
    out.truncate(limit);
    out
}
