use super::*;
use ccmem_proto::model::facts::Goal;
use ccmem_proto::model::session::Todo;

fn rich_session() -> Session {
    let now = chrono::Utc::now();
    let mut s =
        crate::session::rules::start("/w/app".into(), "app".into(), "session_2026-01-01_00-00-00".into(), now, None);
    s.context_snapshot.active_task = "Add OAuth login".into();
    s.todos = vec![
        Todo { id: None, content: "Design".into(), status: TodoStatus::Completed, active_form: "Designing".into() },
        Todo {
            id: None,
            content: "Implement callback".into(),
            status: TodoStatus::InProgress,
            active_form: "Implementing".into(),
        },
        Todo {
            id: None,
            content: "Write tests".into(),
            status: TodoStatus::Pending,
            active_form: "Writing tests".into(),
        },
    ];
    for i in 0..200 {
        let _ = crate::session::rules::apply(
            &mut s,
            ccmem_proto::model::session::SessionEvent::FileEdited {
                path: format!("src/module_{i}/file_with_a_long_name_{i}.rs"),
                summary: Some("Edit: 1 → 2 lines".into()),
                workflow: None,
                created: false,
            },
            now,
        );
    }
    s
}

#[test]
fn goals_facts_and_memories_keep_their_share_of_a_crowded_budget() {
    let mut s = rich_session();
    for n in 0..400 {
        s.context_snapshot.blocking_issues.push(format!("blocker number {n} with a long description of what is wrong"));
    }
    let memory = Facts { facts: vec!["uses pnpm".into()], goals: vec![], completed_goals: vec![] };
    let memories: Vec<String> =
        (0..50).map(|n| format!("- [decision] Decision {n} (decision-{n}, project): because")).collect();
    let input = Input {
        session: &s,
        conversation: None,
        resume_id: None,
        memory: &memory,
        global_facts: &[],
        after_compact: false,
        memories: &memories,
        repo_memories: &[],
        now: chrono::Utc::now(),
    };
    for budget in [1000, DEFAULT_BUDGET, MAX_BUDGET] {
        let c = build(&input, budget);
        assert!(c.chars().count() <= budget, "{budget}: {} chars", c.chars().count());
        assert!(c.contains("- uses pnpm"), "{budget}: {c}");
        assert!(budget < DEFAULT_BUDGET || c.contains("## Blockers"), "{budget}: {c}");
        assert!(c.contains("decision-0,") && c.contains("more"), "{budget}: memories cut, not dropped:\n{c}");
        let knowledge = c.len() - c.find("## Facts").unwrap();
        assert!(knowledge as f32 <= budget as f32 * KNOWLEDGE_SHARE + 1.0, "{budget}: {knowledge}");
    }
}

#[test]
fn most_important_first_and_within_budget() {
    let s = rich_session();
    let memory = Facts {
        facts: vec!["OAuth callbacks must be https in prod".into(), "uses pnpm".into()],
        goals: vec![Goal { text: "ship login".into(), deadline: Some("Friday".into()), created_at: String::new() }],
        completed_goals: vec![],
    };
    let input = Input {
        session: &s,
        conversation: None,
        resume_id: Some("abc-123"),
        memory: &memory,
        global_facts: &[],
        after_compact: false,
        memories: &[],
        repo_memories: &[],
        now: chrono::Utc::now(),
    };
    for budget in [200, 800, 2000, DEFAULT_BUDGET, 50_000] {
        let c = build(&input, budget);
        assert!(c.chars().count() <= budget.min(MAX_BUDGET), "{budget}: {} chars", c.chars().count());
        assert!(c.contains("to resume it: `claude --resume abc-123`"), "{budget}: {c}");
    }
    let c = build(&input, DEFAULT_BUDGET);
    let pos = |x: &str| c.find(x).unwrap_or_else(|| panic!("{x} missing:\n{c}"));
    assert!(pos("Under way: Implementing.") < pos("## Todos (1 of 3 done"));
    assert!(pos("## Todos") < pos("## Files edited"));
    // Open items first, in their order, then the done ones.
    assert!(pos("- [~] Implement callback") < pos("- [ ] Write tests"));
    assert!(pos("- [ ] Write tests") < pos("- [x] Design"));
    assert!(c.contains("and 175 more files") || c.contains("- … and"), "a long list says what it left out:\n{c}");
    assert!(c.contains("ship login (by Friday)"));
    assert!(c.find("OAuth callbacks").unwrap() < c.find("uses pnpm").unwrap(), "related facts first");
    let small = build(&input, 800);
    assert!(small.contains("## Todos") && small.contains("[~] Implement callback"), "{small}");
    // At the smallest budget: no list note in the head, the open todo before a done one.
    let tiny = build(&input, 300);
    let head = tiny.split("\n\n").next().unwrap_or("");
    assert!(!head.contains("… and"), "{tiny}");
    assert!(!tiny.contains("- [x] Design") || tiny.contains("[~] Implement callback"), "{tiny}");
    // What a smaller budget keeps, a larger one keeps too; the git line goes first.
    let mut kept_before: Vec<String> = Vec::new();
    for budget in [500, 800, 1200, 2000, DEFAULT_BUDGET] {
        let c = build(&input, budget);
        assert!(c.contains("[~] Implement callback"), "{budget}: {c}");
        for l in &kept_before {
            assert!(c.contains(l.as_str()), "{budget} lost {l:?} that a smaller budget kept:\n{c}");
        }
        kept_before = c.lines().filter(|l| l.starts_with("- [")).map(str::to_string).collect();
    }
    let mut on_main = input.session.clone();
    on_main.git.branch = "main".into();
    let input = Input { session: &on_main, ..input };
    assert!(!build(&input, 500).contains("## Git"));
    assert!(build(&input, DEFAULT_BUDGET).contains("## Git\nBranch main, "));
}

#[test]
fn empty_sections_are_left_out_and_compaction_is_stressed() {
    let now = chrono::Utc::now();
    let s =
        crate::session::rules::start("/w/app".into(), "app".into(), "session_2026-01-01_00-00-00".into(), now, None);
    let memory = Facts::default();
    let c = build(
        &Input {
            session: &s,
            conversation: None,
            resume_id: None,
            memory: &memory,
            global_facts: &[],
            after_compact: true,
            memories: &[],
            repo_memories: &[],
            now: chrono::Utc::now(),
        },
        DEFAULT_BUDGET,
    );
    assert!(!c.contains("## Open todos") && !c.contains("## Facts") && !c.contains("## Files"), "{c}");
    assert!(c.contains("just compacted"));
}

#[test]
fn failing_tests_recorded_without_a_command_have_a_line_of_their_own() {
    use ccmem_proto::model::environment::{SuiteStatus, TestFailure};
    let now = chrono::Utc::now();
    let mut s =
        crate::session::rules::start("/w/app".into(), "app".into(), "session_2026-01-01_00-00-00".into(), now, None);
    s.test_results.unit.status = SuiteStatus::Failed;
    s.test_results.unit.failures =
        vec![TestFailure { test_name: "login works".into(), file: "a.test.ts".into(), ..Default::default() }];
    let memory = Facts::default();
    let input = Input {
        session: &s,
        conversation: None,
        resume_id: None,
        memory: &memory,
        global_facts: &[],
        after_compact: false,
        memories: &[],
        repo_memories: &[],
        now,
    };
    let c = build(&input, DEFAULT_BUDGET);
    assert!(
        c.contains("## Unresolved failures\n- tests: the last recorded run failed\n  - test login works (a.test.ts)"),
        "{c}"
    );
}
