use super::*;
use serde_json::json;

#[test]
fn enums_use_the_seed_spellings() {
    assert_eq!(serde_json::to_value(CheckpointReason::StopHook).unwrap(), json!("Stop hook"));
    assert_eq!(serde_json::to_value(CheckpointReason::PhaseComplete).unwrap(), json!("phase_complete"));
    assert_eq!(serde_json::to_value(CheckpointType::UserRequested).unwrap(), json!("user_requested"));
    assert_eq!(serde_json::to_value(TodoStatus::InProgress).unwrap(), json!("in_progress"));
    let t: Todo = serde_json::from_value(json!({"content":"x","status":"completed","activeForm":"Xing"})).unwrap();
    assert_eq!(t.active_form, "Xing");
}

#[test]
fn events_are_tagged_by_kind_and_strict() {
    let e: SessionEvent = serde_json::from_value(json!({"kind":"file_edited","path":"a.rs"})).unwrap();
    assert_eq!(e, SessionEvent::FileEdited { path: "a.rs".into(), summary: None, workflow: None, created: false });
    let p: SessionEvent = serde_json::from_value(json!({"kind":"phase","name":"Phase 1","completion":50})).unwrap();
    assert!(matches!(p, SessionEvent::Phase(Phase { completion, .. }) if completion == 50.0));
    assert!(serde_json::from_value::<SessionEvent>(json!({"kind":"file_edited"})).is_err());
    assert!(serde_json::from_value::<SessionEvent>(json!({"kind":"nope"})).is_err());
    assert!(serde_json::from_value::<SessionEvent>(json!({"kind":"note","text":"x","extra":1})).is_err());
}

#[test]
fn timestamps_read_and_write_iso_8601() {
    let t: Timestamp = serde_json::from_value(json!("2026-01-26T10:30:00Z")).unwrap();
    assert_eq!(serde_json::to_value(t).unwrap(), json!("2026-01-26T10:30:00Z"));
    assert_eq!(Timestamp::parse("2026-01-26T11:30:00+01:00"), Some(t));
    assert!(serde_json::from_value::<Timestamp>(json!("yesterday")).is_err());
}

#[test]
fn truncation_counts_characters() {
    assert_eq!(truncate_chars("héllo", 5), "héllo");
    assert_eq!(truncate_chars("héllo wörld", 6), "héllo…");
    assert_eq!(truncate_chars("ééé", 2).chars().count(), 2);
}
