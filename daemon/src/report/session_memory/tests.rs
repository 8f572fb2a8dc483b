use super::*;
use crate::session::rules as session;
use ccmem_proto::model::report::validate;

#[test]
fn a_session_makes_a_valid_report() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::create_dir_all(root.join("specs/001-x")).unwrap();
    std::fs::write(
        root.join("specs/001-x/tasks.md"),
        "## Phase 1: Setup\n- [x] T001 Create app\n## Phase 2: Core\n- [ ] T002 [P] Wire `src/db.ts` using .env.local\n- [ ] T003 Add login\n## Phase 3: Polish\n- [ ] T004 Write docs\n## Phase 4: Release\n- [ ] T005 Ship\n",
    )
    .unwrap();
    let now = Utc::now();
    let mut s = session::start(root.clone(), "demo".into(), session::new_id(now, None), now, None);
    let out = crate::observe::testout::tests::fixture("cargo-fail.txt");
    let mut suite = crate::observe::testout::parse(&out, Some("cargo"))[0].suite.clone();
    suite.command = "cargo test".into();
    crate::session::environment::apply_tests(&mut s, suite, false, now);
    let comments = blockers::comments_in("src/lib.rs", b"// FIXME: off by one\n// TODO later\n");
    let list = tasks::find(&root).unwrap().unwrap();
    let m = assemble(&s, Some(&list), &comments, now);
    assert_eq!(validate(&m), Vec::<String>::new());
    assert_eq!(m.summary.completion_status, "1/5 tasks complete (20.0%)");
    assert_eq!(m.summary.current_phase, "Core");
    assert_eq!(m.summary.major_blocker.as_deref(), Some("1 failing unit test (cargo)"));
    assert!(
        m.blockers.iter().any(|b| b.title == "Missing .env.local" && b.task_id.as_deref() == Some("T002")),
        "{:#?}",
        m.blockers
    );
    assert!(
        !m.blockers.iter().any(|b| b.title.contains("src/db.ts")),
        "code an open task names is its work, not a blocker: {:#?}",
        m.blockers
    );
    assert!(m.files_needing_attention[0].reason.starts_with("Failing test"));
    assert_eq!(m.next_steps[0].priority, StepPriority::Immediate);
    assert!(m
        .next_steps
        .iter()
        .any(|n| n.action == "Complete the task list's item \"T002: Wire `src/db.ts` using .env.local\""));
    assert!(m.next_steps.iter().any(|n| n.action.starts_with("Prepare Polish")));
    assert!(m.next_steps.iter().any(|n| n.action == "Plan Release"));
    let back = report::parse(&report::serialize(&m));
    assert_eq!(back.memory, m);
}

#[test]
fn an_empty_session_makes_a_minimal_valid_report() {
    let now = Utc::now();
    let s = session::start(PathBuf::from("/w/empty"), "empty".into(), session::new_id(now, None), now, None);
    let m = assemble(&s, None, &[], now);
    assert_eq!(validate(&m), Vec::<String>::new());
    assert_eq!(m.summary.completion_status, "0/0 tasks complete (0.0%): no task list or todos yet");
    assert_eq!(m.summary.major_blocker, None);
    // No template padding: one line for tests never run, no blocks for a build never seen.
    let md = report::serialize(&m);
    assert!(md.contains("No test run seen."), "{md}");
    for padding in ["Pass Rate", "Status: not-run", "### Build", "### Dependencies", "## Where You Left Off"] {
        assert!(!md.contains(padding), "{padding} in an empty report:\n{md}");
    }
    assert_eq!(report::parse(&md).warnings, Vec::<String>::new());
}

#[test]
fn build_errors_name_their_file_and_line_in_each_compilers_form() {
    assert_eq!(error_location("src/a.rs:12:5: error[E0308]: mismatched types"), Some(("src/a.rs".into(), Some(12))));
    assert_eq!(error_location("src/a.ts(1,1): error TS1: bad"), Some(("src/a.ts".into(), Some(1))));
    assert_eq!(error_location("Program.cs(12,5): error CS1002: ; expected"), Some(("Program.cs".into(), Some(12))));
    assert_eq!(error_location("error: could not compile `app`"), None);
}
