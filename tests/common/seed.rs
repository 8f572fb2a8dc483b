//! The state files as the seeds define them: read, and checked against seed 004.

use super::*;

/// The checkpoint file of a project, parsed.
pub fn read_state(root: &Path) -> serde_json::Value {
    let p = root.join(".claude/.project-state.json");
    let b = std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
    serde_json::from_slice(&b).unwrap_or_else(|e| panic!("{} is not whole JSON ({e}): {}", p.display(), text(&b)))
}

/// Asserts seed 004's schema: required fields, types, enums and limits.
pub fn assert_seed_004(v: &serde_json::Value) {
    for f in ["session_id", "timestamp", "project_root", "checkpoint_reason"] {
        assert!(v.get(f).is_some_and(|x| !x.is_null()), "required field {f} missing: {v}");
    }
    let id = v["session_id"].as_str().expect("session_id is a string");
    assert!(is_session_id(id), "session_id {id:?} is not session_YYYY-MM-DD_HH-MM-SS");
    let ts = v["timestamp"].as_str().expect("timestamp");
    assert!(ts.len() == 20 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T', "timestamp {ts:?} is not ISO 8601");
    assert!(Path::new(v["project_root"].as_str().expect("project_root")).is_absolute());
    assert!(
        ["automatic", "manual", "phase_complete", "Stop hook"].contains(&v["checkpoint_reason"].as_str().unwrap()),
        "{v}"
    );
    assert!(["periodic", "event_driven", "user_requested"].contains(&v["checkpoint_type"].as_str().unwrap()), "{v}");
    let files = v["edited_files"].as_array().expect("edited_files");
    assert!(files.len() <= 50);
    assert!(files.iter().all(|f| !Path::new(f.as_str().unwrap()).is_absolute()), "edited files are relative");
    let todos = v["todos"].as_array().expect("todos");
    assert!(todos.len() <= 50);
    for t in todos {
        assert!(["pending", "in_progress", "completed"].contains(&t["status"].as_str().unwrap()));
        assert!(t["content"].is_string() && t["activeForm"].is_string());
    }
    for w in v["warnings"].as_array().expect("warnings") {
        assert!(w.as_str().unwrap().chars().count() <= 500);
    }
    if let Some(n) = v.get("context_notes") {
        assert!(n.as_str().unwrap().chars().count() <= 1000);
    }
    let g = &v["git"];
    for f in ["staged_files", "unstaged_files", "untracked_files"] {
        assert!(g[f].is_u64(), "git.{f}: {g}");
    }
    assert!(g["branch"].is_string() && g["has_uncommitted_changes"].is_boolean() && g["last_commit"].is_string());
    for f in ["files_created", "files_modified", "lines_added", "lines_deleted", "commits"] {
        assert!(v["activity_summary"][f].is_u64(), "activity_summary.{f}: {v}");
    }
    assert!(v["session_duration_minutes"].is_u64());
}

pub fn is_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    id.len() == 27
        && id.starts_with("session_")
        && b[8..].iter().enumerate().all(|(i, c)| match i {
            4 | 7 | 13 | 16 => *c == b'-',
            10 => *c == b'_',
            _ => c.is_ascii_digit(),
        })
}
