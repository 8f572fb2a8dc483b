use super::ignores::Ignores;
use super::tree::in_order;
use super::*;

#[test]
fn a_batch_keeps_the_order_of_its_latest_events() {
    // Events for a, b, c, then a again: a is the most recent.
    let mut pending = HashMap::new();
    for (n, p) in ["a", "b", "c", "a"].iter().enumerate() {
        pending.insert(PathBuf::from(p), n as u64);
    }
    assert_eq!(in_order(pending), [PathBuf::from("b"), PathBuf::from("c"), PathBuf::from("a")]);
}

#[test]
fn own_files_are_recognised() {
    for f in [
        ".claude/.project-state.json",
        ".claude/.project-state.json.bak",
        ".claude/.project-state.json.tmp-1-2",
        ".claude/session-memory.md",
        ".claude/session-memory.md.tmp-3-4",
        ".claude/.project-state.json.bak.tmp-5-6",
        ".claude/memory/index.json",
    ] {
        assert!(is_own_file(f), "{f}");
    }
    // The user's files that only look like them are the user's.
    for f in [
        ".claude/settings.json",
        "src/.project-state.json",
        ".claude/session-memory.md.txt.x/y",
        ".claude/session-memory.md.txt",
        ".claude/session-memory.mdx",
        ".claude/.project-state.json.orig",
        ".claude/memoryless.md",
    ] {
        assert!(!is_own_file(f), "{f}");
    }
}

#[test]
fn ignore_rules_apply_to_single_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n!keep.log\n").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/.gitignore"), "secret.txt\n!important.log\n").unwrap();
    let mut ig = Ignores::new(root).with_patterns(root, &["fixtures/".to_string(), "*.tmp".to_string()]);
    assert!(ig.is_ignored(root, "fixtures/a/b.json", false), "configured patterns cover whole trees");
    assert!(ig.is_ignored(root, "sub/x.tmp", false));
    assert!(ig.is_ignored(root, "debug.log", false));
    assert!(!ig.is_ignored(root, "keep.log", false));
    assert!(ig.is_ignored(root, "build", true));
    assert!(ig.is_ignored(root, "build/out.o", false));
    assert!(ig.is_ignored(root, "sub/secret.txt", false));
    assert!(!ig.is_ignored(root, "sub/important.log", false), "a deeper rule wins");
    assert!(!ig.is_ignored(root, "src/main.rs", false));
}
