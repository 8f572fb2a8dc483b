use super::*;
use ccmem_proto::model::memory::MemoryType;

#[test]
fn the_index_written_from_cached_entries_is_the_index_of_the_memories() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = ScopeStore::load(Scope::Project, tmp.path().join("memory"));
    let now = chrono::DateTime::from_timestamp(1_767_000_000, 0).unwrap();
    for (slug, title) in [("b-two", "Two \"quoted\""), ("a-one", "One"), ("c-three", "Три")] {
        let m = Memory {
            slug: slug.into(),
            memory_type: MemoryType::Learning,
            title: title.into(),
            tags: vec!["x".into()],
            created: now,
            updated: now,
            links: vec![],
            content: "text".into(),
            scope: Scope::Project,
        };
        store.save(m, Layout::default()).unwrap();
    }
    let read = |store: &ScopeStore| serde_json::from_slice::<Index>(&store.index_bytes()).unwrap();
    assert_eq!(read(&store).memories, store.index_entries());
    let mut vectors = std::collections::HashMap::new();
    let v = super::super::embed::Cached { model: "m".into(), hash: "h".into(), vector: std::sync::Arc::new(vec![1.0]) };
    vectors.insert("b-two".to_string(), v);
    store.vectors = Some(vectors);
    let index = read(&store);
    assert_eq!(index.memories, store.index_entries());
    assert!(index.memories["b-two"].has_embedding && !index.memories["a-one"].has_embedding);
    assert_eq!(index.version, "1.0.0");
}

#[test]
fn the_neighbour_map_gives_what_neighbours_gives_for_each_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = ScopeStore::load(Scope::Project, tmp.path().join("memory"));
    let edge = |t: &str, l: &str| Edge { target: t.into(), label: l.into(), timestamp: String::new() };
    // Two-way, one-way and duplicate-target edges, and an edge to a memory not stored.
    store.graph.insert("a".into(), vec![edge("b", "implements"), edge("c", "relates-to"), edge("b", "part-of")]);
    store.graph.insert("b".into(), vec![edge("a", "implemented-by")]);
    store.graph.insert("d".into(), vec![edge("a", "relates-to"), edge("ghost", "relates-to")]);
    let map = store.neighbour_map();
    for slug in ["a", "b", "c", "d", "ghost", "nobody"] {
        let want = store.neighbours(slug);
        let got: Vec<String> = map.get(slug).map(|v| v.iter().map(|s| s.to_string()).collect()).unwrap_or_default();
        assert_eq!(got, want, "{slug}");
    }
}

/// Round three's tester: a repository that committed 20,000 memory files held the memory
/// thread for most of a minute. A scope reads at most `MAX_MEMORIES` files (by name), says
/// so, and takes no more from notifications.
#[test]
fn a_scope_reads_at_most_its_limit_of_memory_files_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("memory");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |i: usize| {
        format!(
            "---\ntype: decision\ntitle: Decision {i}\ntags: [x]\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\nbody {i}\n"
        )
    };
    for i in 0..MAX_MEMORIES + 30 {
        std::fs::write(dir.join(format!("decision-m{i:05}.md")), file(i)).unwrap();
    }
    let mut store = ScopeStore::load(Scope::Project, dir.clone());
    assert_eq!(store.memories.len(), MAX_MEMORIES);
    assert!(store.memories.contains_key("decision-m00000"), "the first by name are read");
    let why = store.invalid.get(&dir).expect("the scope says it left files out");
    assert!(why[0].contains("30 memory files not read"), "{why:?}");
    let late = dir.join("decision-late.md");
    std::fs::write(&late, file(99_999)).unwrap();
    assert!(!store.read_file(&late), "no more from a notification");
    assert_eq!(store.memories.len(), MAX_MEMORIES);
}
