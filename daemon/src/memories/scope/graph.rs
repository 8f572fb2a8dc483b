//! A scope's link graph (`graph.json`): edges added, removed and kept in step with the memories.

use super::*;

impl ScopeStore {
    pub(super) fn graph_path(&self) -> PathBuf {
        self.dir.join("graph.json")
    }

    /// Reads `graph.json` if it changed since we last read or wrote it. A file that is not a
    /// graph is set aside (renamed `.corrupt`) and the graph starts empty; the health check
    /// then reports the links it lost.
    pub fn load_graph(&mut self) -> bool {
        let path = self.graph_path();
        let st = stamp(&path);
        // Unwritten changes of ours are newer than anything on disk (we are the one writer).
        if st == self.graph_stamp || self.graph_dirty {
            return false;
        }
        self.graph_stamp = st;
        self.graph = match self.read_own(&path, MAX_DERIVED_FILE) {
            Err(_) => Graph::new(),
            Ok(bytes) => match serde_json::from_slice::<Graph>(&bytes) {
                Ok(g) => g,
                Err(e) => {
                    let aside = atomic::with_suffix(&path, ".corrupt");
                    tracing::warn!(file = %path.display(), error = %e, "graph.json is not a graph; set aside");
                    let _ = fs::rename(&path, aside);
                    Graph::new()
                }
            },
        };
        self.graph.retain(|_, edges| !edges.is_empty());
        true
    }

    /// Marks the graph for rewriting (after a repair changed it directly).
    pub fn mark_graph(&mut self) {
        self.graph_dirty = true;
    }

    /// The edges of a memory.
    pub fn edges(&self, slug: &str) -> Vec<Edge> {
        self.graph.get(slug).cloned().unwrap_or_default()
    }

    /// Adds `source -label-> target` and its inverse, and both memories' `links`.
    pub fn link(&mut self, source: &str, target: &str, label: &str) -> Result<Vec<(String, String, String)>, String> {
        if source == target {
            return Err(format!("cannot link {source} to itself: the graph has no self edges"));
        }
        for s in [source, target] {
            if !self.memories.contains_key(s) {
                return Err(format!("no memory {s} in the {} scope", self.scope));
            }
        }
        if self.graph.get(source).is_some_and(|e| e.iter().any(|e| e.target == target && e.label == label)) {
            return Err(format!("{source} is already linked to {target} as {label}"));
        }
        let inverse = model::inverse_label(label).to_string();
        let timestamp = model::iso(chrono::Utc::now());
        let mut made = Vec::new();
        for (a, b, l) in [(source, target, label), (target, source, inverse.as_str())] {
            let edges = self.graph.entry(a.to_string()).or_default();
            if !edges.iter().any(|e| e.target == b && e.label == l) {
                edges.push(Edge { target: b.to_string(), label: l.to_string(), timestamp: timestamp.clone() });
                made.push((a.to_string(), l.to_string(), b.to_string()));
            }
        }
        self.graph_dirty = true;
        for s in [source, target] {
            self.sync_links(s, None).map_err(|e| format!("cannot write {s}: {e}"))?;
        }
        Ok(made)
    }

    /// Removes the edges between two memories (only those labelled `label`, and their
    /// inverses, when given), and updates `links`.
    pub fn unlink(
        &mut self,
        source: &str,
        target: &str,
        label: Option<&str>,
    ) -> Result<Vec<(String, String, String)>, String> {
        let inverse = label.map(model::inverse_label);
        let mut removed = Vec::new();
        for (a, b, l) in [(source, target, label), (target, source, inverse)] {
            if let Some(edges) = self.graph.get_mut(a) {
                edges.retain(|e| {
                    let hit = e.target == b && l.is_none_or(|l| e.label == l);
                    if hit {
                        removed.push((a.to_string(), e.label.clone(), b.to_string()));
                    }
                    !hit
                });
            }
        }
        if removed.is_empty() {
            let how = label.map(|l| format!(" as {l}")).unwrap_or_default();
            return Err(format!("{source} and {target} are not linked{how}"));
        }
        self.graph.retain(|_, e| !e.is_empty());
        self.graph_dirty = true;
        for (s, other) in [(source, target), (target, source)] {
            if !self.neighbours(s).iter().any(|n| n == other) {
                self.sync_links(s, Some(other)).map_err(|e| format!("cannot write {s}: {e}"))?;
            }
        }
        Ok(removed)
    }

    /// Brings a memory's frontmatter `links` in step with the graph: `dropped` leaves it,
    /// neighbours missing are added. A link the graph does not know (added by hand) stays:
    /// the health check reports it.
    pub fn sync_links(&mut self, slug: &str, dropped: Option<&str>) -> io::Result<()> {
        let Some(stored) = self.memories.get(slug) else { return Ok(()) };
        let mut links: Vec<String> =
            stored.memory.links.iter().filter(|l| Some(l.as_str()) != dropped).cloned().collect();
        for n in self.neighbours(slug) {
            if !links.contains(&n) {
                links.push(n);
            }
        }
        if links == stored.memory.links {
            return Ok(());
        }
        let mut m = stored.memory.clone();
        m.links = links;
        let layout = stored.layout.clone();
        self.save(m, layout).map(|_| ())
    }

    /// Memories joined to `slug` by an edge in either direction, in the graph's order.
    pub fn neighbours(&self, slug: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in self.graph.get(slug).into_iter().flatten() {
            if !out.contains(&e.target) {
                out.push(e.target.clone());
            }
        }
        for (src, edges) in &self.graph {
            if edges.iter().any(|e| e.target == slug) && !out.contains(src) {
                out.push(src.clone());
            }
        }
        out
    }

    /// Every memory's neighbours, as [`Self::neighbours`] gives them, in one pass over the
    /// graph: for work on all memories, where asking each would scan the graph each time.
    pub fn neighbour_map(&self) -> std::collections::HashMap<&str, Vec<&str>> {
        fn add<'a>(map: &mut std::collections::HashMap<&'a str, Vec<&'a str>>, a: &'a str, b: &'a str) {
            let v = map.entry(a).or_default();
            if !v.contains(&b) {
                v.push(b);
            }
        }
        let mut map = std::collections::HashMap::new();
        for (src, edges) in &self.graph {
            for e in edges {
                add(&mut map, src, &e.target);
            }
        }
        for (src, edges) in &self.graph {
            for e in edges {
                add(&mut map, &e.target, src);
            }
        }
        map
    }

    /// Edges in the graph, each direction counted.
    pub fn edge_count(&self) -> usize {
        self.graph.values().map(Vec::len).sum()
    }
}
