//! A scope's index (`index.json`): derived from the memories, checked against what is on disk.

use super::*;

impl ScopeStore {
    pub(super) fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    /// Compares `index.json` with the files; a missing, corrupt or drifted index is rewritten
    /// at the next flush.
    pub(super) fn check_index(&mut self) {
        let drift = self.index_drift_on_disk();
        if let Some(d) = &drift {
            tracing::info!(scope = %self.scope, dir = %self.dir.display(), "{d}; rebuilding it");
            self.index_dirty = true;
        }
        self.index_drift = drift;
    }

    /// How `index.json` on disk differs from the files now, if it does.
    pub fn index_drift_on_disk(&self) -> Option<String> {
        let expected = self.index_entries();
        match self.read_own(&self.index_path(), MAX_DERIVED_FILE) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                (!self.memories.is_empty() || !self.invalid.is_empty()).then(|| "index.json is missing".to_string())
            }
            Err(e) => Some(format!("index.json cannot be read: {e}")),
            Ok(bytes) => match serde_json::from_slice::<Index>(&bytes) {
                Err(e) => Some(format!("index.json is corrupt: {e}")),
                Ok(i) if i.memories != expected => {
                    let missing = expected.keys().filter(|k| !i.memories.contains_key(*k)).count();
                    let extra = i.memories.keys().filter(|k| !expected.contains_key(*k)).count();
                    Some(format!(
                        "index.json differs from the files ({missing} missing, {extra} extra, {} changed)",
                        expected.iter().filter(|(k, v)| i.memories.get(*k).is_some_and(|o| o != *v)).count()
                    ))
                }
                Ok(_) => None,
            },
        }
    }

    /// Seed 003's index entries, from the memories held.
    pub fn index_entries(&self) -> BTreeMap<String, IndexEntry> {
        let cached = self.cached_embeddings();
        self.memories
            .iter()
            .map(|(slug, s)| (slug.clone(), index_entry(&s.memory, self.path_of(slug), cached(slug))))
            .collect()
    }

    /// `index.json`, compact (derived, not committed, rewritten on every change), from the
    /// entries serialised when each memory was stored.
    pub fn index_bytes(&self) -> Vec<u8> {
        let cached = self.cached_embeddings();
        let head = serde_json::json!({"version": model::INDEX_VERSION, "lastUpdated": chrono::Utc::now()});
        let mut out = serde_json::to_vec(&head).unwrap_or_default();
        out.pop();
        out.extend_from_slice(b",\"memories\":{");
        for (n, (slug, s)) in self.memories.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(serde_json::to_string(slug).unwrap_or_default().as_bytes());
            out.push(b':');
            let entry = &s.entry;
            match entry.strip_suffix("\"hasEmbedding\":false}") {
                Some(body) if cached(slug) => {
                    out.extend_from_slice(body.as_bytes());
                    out.extend_from_slice(b"\"hasEmbedding\":true}");
                }
                _ => out.extend_from_slice(entry.as_bytes()),
            }
        }
        out.extend_from_slice(b"}}\n");
        out
    }

    /// Whether a memory has a cached embedding: the loaded cache, else one listing of the
    /// cache directory.
    pub(super) fn cached_embeddings(&self) -> impl Fn(&str) -> bool + '_ {
        let on_disk: std::collections::HashSet<String> = match &self.vectors {
            Some(_) => Default::default(),
            None => self
                .cache_path()
                .and_then(|c| fs::read_dir(c).ok())
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        };
        move |slug: &str| match &self.vectors {
            Some(v) => v.contains_key(slug),
            None => on_disk.contains(&format!("{slug}.json")),
        }
    }

    /// Marks the index for rewriting.
    pub fn touch_index(&mut self) {
        self.index_dirty = true;
    }
}
