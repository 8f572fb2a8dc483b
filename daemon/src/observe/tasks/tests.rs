use super::*;

const SPEC_KIT: &str = "# Tasks: Session memory

**Input**: Design documents from `/specs/001-session-memory/`

## Phase 1: Setup (Shared Infrastructure)

- [x] T001 Create project structure per implementation plan
- [X] T002 [P] Initialize TypeScript project in `package.json`
- [ ] T003 [P] Configure linting in .eslintrc.json ✅

## Phase 2: Foundational

- [ ] T004 [US1] Add `src/lib/db.ts` connection using `.env.local`
- [ ] T005 [P] [US1] Write tests in tests/db.test.ts
- [ ] **T006** Document the setup

```markdown
- [ ] T999 not a task, an example in a fence
```

## Phase 3: User Story 1 - Resume (Priority: P1) 🎯 MVP

- [ ] T007 [US1] Implement resume
";

#[test]
fn spec_kit_tasks_read_with_ids_markers_and_phases() {
    let l = parse(SPEC_KIT);
    assert_eq!(
        l.phases,
        ["Setup (Shared Infrastructure)", "Foundational", "User Story 1 - Resume (Priority: P1) 🎯 MVP"]
    );
    assert_eq!(l.tasks.len(), 7, "the fenced example is not a task");
    assert_eq!(l.counts(), (3, 7), "[x], [X] and ✅ are done");
    let t2 = &l.tasks[1];
    assert_eq!((t2.id.as_str(), t2.title.as_str()), ("T002", "Initialize TypeScript project in `package.json`"));
    let t5 = &l.tasks[4];
    assert_eq!((t5.id.as_str(), t5.title.as_str()), ("T005", "Write tests in tests/db.test.ts"));
    assert_eq!(l.tasks[5].id, "T006");
    assert_eq!(l.tasks[3].paths, ["src/lib/db.ts", ".env.local"]);
    let st = l.status();
    assert_eq!(st.phases[0].percentage, 100.0);
    assert_eq!((st.phases[1].completed, st.phases[1].total, st.phases[1].percentage), (0, 3, 0.0));
    assert_eq!(st.current_task.as_ref().unwrap().id, "T004");
    assert_eq!(st.next_tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["T005", "T006", "T007"]);
}

fn shown(l: &TaskList) -> Vec<(String, u64, u64)> {
    l.status().phases.iter().map(|p| (p.name.clone(), p.completed, p.total)).collect()
}

#[test]
fn spec_kits_own_template_reads_as_its_six_phases() {
    let l = parse(include_str!("../../../../tests/fixtures/tasks/spec-kit-template.md"));
    assert_eq!(
        shown(&l),
        [
            ("Setup (Shared Infrastructure)".to_string(), 0, 3),
            ("Foundational (Blocking Prerequisites)".into(), 0, 6),
            ("User Story 1 - [Title] (Priority: P1) 🎯 MVP".into(), 0, 8),
            ("User Story 2 - [Title] (Priority: P2)".into(), 0, 6),
            ("User Story 3 - [Title] (Priority: P3)".into(), 0, 5),
            ("Polish & Cross-Cutting Concerns".into(), 0, 6),
        ]
    );
    assert_eq!(l.counts(), (0, 34), "no checkbox in the comment or the code block is a task");
    // Found by the fuzzer: an id-like token that starts with a multi-byte character.
    assert_eq!(parse("- [ ] \u{fffd}tT004 x").tasks.len(), 1);
    let t10 = l.tasks.iter().find(|t| t.id == "T010").unwrap();
    assert_eq!(t10.title, "Contract test for [endpoint] in tests/contract/test_[name].py");
    assert_eq!(t10.phase, "User Story 1 - [Title] (Priority: P1) 🎯 MVP", "### sub-headings are not phases");
    let polish = l.tasks.last().unwrap();
    assert_eq!((polish.id.as_str(), polish.title.as_str()), ("TXXX", "Run quickstart.md validation"));
    assert_eq!(l.tasks[0].line, 54, "{:?}", l.tasks[0]);
}

#[test]
fn phases_with_task_subsections_and_sub_items() {
    let l = parse(include_str!("../../../../tests/fixtures/tasks/phases-with-subsections.md"));
    assert_eq!(
        shown(&l),
        [("Storage".to_string(), 4, 4), ("Transport".into(), 1, 3), ("UI".into(), 0, 3), ("Release".into(), 0, 2),],
        "{:#?}",
        l.tasks
    );
    assert_eq!(l.counts(), (5, 12), "sub-items, fenced, commented and indented checkboxes are not tasks");
    let t = l.tasks.iter().find(|t| t.id.is_empty() && t.title.starts_with("1.2")).map(|t| t.title.clone());
    assert_eq!(t.as_deref(), Some("1.2 Write `SyncQueue` in `src/sync/queue.ts`"), "a task's text is its own line");
    assert_eq!(l.current().map(|t| t.title.as_str()), Some("2.2 Resume interrupted uploads"));
}

#[test]
fn checklists_without_phases_or_ids() {
    let l = parse(include_str!("../../../../tests/fixtures/tasks/plain.md"));
    assert_eq!(l.phases, ["Tasks"]);
    assert_eq!(
        l.tasks.iter().map(|t| (t.title.as_str(), t.done)).collect::<Vec<_>>(),
        [
            ("pick a name", true),
            ("write the README", false),
            ("set up CI", false),
            ("publish the crate", true),
            ("upper-case X counts as done", true)
        ]
    );
}

#[test]
fn plain_checklists_and_big_lists() {
    let l = parse("# TODO\n\n- [ ] write docs\n* [x] ship it\n1. [ ] third\n- plain bullet\n- [ ]\n");
    assert_eq!(l.phases, ["Tasks"]);
    assert_eq!(
        l.tasks.iter().map(|t| (t.title.as_str(), t.done)).collect::<Vec<_>>(),
        [("write docs", false), ("ship it", true), ("third", false)]
    );
    let big: String = (0..250).map(|i| format!("- [{}] T{i:03} task {i}\n", if i < 100 { "x" } else { " " })).collect();
    let st = parse(&format!("## Phase 1: Big\n{big}")).status();
    assert_eq!((st.phases[0].completed, st.phases[0].total, st.phases[0].percentage), (100, 250, 40.0));
    assert_eq!(st.next_tasks.len(), 5);
}

#[test]
fn the_newest_spec_kit_list_wins_over_root_checklists() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    assert!(find(r).unwrap().is_none());
    std::fs::write(r.join("TODO.md"), "- [ ] root item\n").unwrap();
    assert_eq!(find(r).unwrap().unwrap().file, "TODO.md");
    for (d, t) in [("001-a", 100), ("002-b", 10)] {
        std::fs::create_dir_all(r.join("specs").join(d)).unwrap();
        let p = r.join("specs").join(d).join("tasks.md");
        std::fs::write(&p, format!("- [ ] from {d}\n")).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(t);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(when).unwrap();
    }
    let l = find(r).unwrap().unwrap();
    assert_eq!(l.file, "specs/002-b/tasks.md");
    assert_eq!(l.tasks[0].title, "from 002-b");
    std::fs::create_dir_all(r.join(".claude")).unwrap();
    std::fs::write(r.join(".claude/ccmem.toml"), "[tasks]\nfile = \"specs/001-a/tasks.md\"\n").unwrap();
    assert_eq!(find(r).unwrap().unwrap().file, "specs/001-a/tasks.md", "the configured list wins");
}

#[test]
fn task_list_files_are_recognised() {
    for yes in ["TODO.md", "tasks.md", "specs/001-x/tasks.md"] {
        assert!(is_task_list(yes), "{yes}");
    }
    for no in ["src/tasks.md", "specs/tasks.md", "specs/a/b/tasks.md", "README.md"] {
        assert!(!is_task_list(no), "{no}");
    }
}

#[test]
fn paths_named_by_tasks() {
    assert_eq!(
        paths_in("Create `src/app.ts` and update README.md, then docs/setup"),
        ["src/app.ts", "README.md", "docs/setup"]
    );
    assert!(
        paths_in("Discuss e.g. the plan at 3.5 pm with https://x.io/a").is_empty(),
        "{:?}",
        paths_in("Discuss e.g. the plan at 3.5 pm with https://x.io/a")
    );
}

#[test]
fn a_list_too_large_to_read_is_said_and_its_old_figures_go() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(root.join("specs/001-x")).unwrap();
    let file = root.join("specs/001-x/tasks.md");
    std::fs::write(&file, "## Phase 1: A\n- [x] T001 one\n- [ ] T002 two\n").unwrap();
    let now = chrono::Utc::now();
    let mut s =
        crate::session::rules::start(root.clone(), "x".into(), crate::session::rules::new_id(now, None), now, None);
    assert!(refresh(&mut s).is_some());
    assert_eq!(s.plan.as_ref().map(|p| (p.completed_tasks, p.total_tasks)), Some((1, 2)));
    let big = "- [ ] T003 a task with a long enough title to fill the file\n".repeat((5 << 20) / 60);
    std::fs::write(&file, big).unwrap();
    assert!(refresh(&mut s).is_none());
    assert_eq!(s.plan, None, "no figures of a list that is not what the file says");
    assert_eq!(s.task_status, TaskStatus::default());
    assert_eq!(s.warnings, ["task list not read: `specs/001-x/tasks.md` is larger than 4 MiB"]);
    std::fs::write(&file, "- [x] T001 one\n").unwrap();
    assert!(refresh(&mut s).is_some());
    assert!(s.warnings.is_empty(), "the warning goes once the list reads again: {:?}", s.warnings);
    std::fs::remove_file(&file).unwrap();
    refresh(&mut s);
    assert_eq!(s.plan, None, "a list removed leaves no plan behind");
}

#[test]
fn a_hostile_list_of_a_hundred_thousand_items_is_read_up_to_the_cap_and_says_so() {
    // 4 MiB of items with a phase every 50 lines (an attacker's TODO.md): every phase and
    // item used to be compared with every other one, a minute of CPU at each checkpoint.
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < (4 << 20) - 200 {
        if i.is_multiple_of(50) {
            text.push_str(&format!("## Phase {i}: P{i}\n"));
        } else {
            text.push_str(&format!("- [ ] T{i:06} task {i}\n"));
        }
        i += 1;
    }
    let items = i - i.div_ceil(50);
    let l = parse(&text);
    assert_eq!(l.tasks.len(), MAX_TASKS);
    assert_eq!(l.left_out, items - MAX_TASKS);
    let st = l.status();
    assert_eq!(st.phases.iter().map(|p| p.total).sum::<u64>(), MAX_TASKS as u64);
    assert_eq!(st.phases[0].total, 49);

    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::write(root.join("TODO.md"), &text).unwrap();
    let now = chrono::Utc::now();
    let mut s =
        crate::session::rules::start(root.clone(), "x".into(), crate::session::rules::new_id(now, None), now, None);
    assert!(refresh(&mut s).is_some());
    assert_eq!(s.plan.as_ref().map(|p| p.total_tasks), Some(MAX_TASKS as u64));
    assert_eq!(
        s.warnings,
        [format!(
            "task list cut short: `TODO.md` has more than {MAX_TASKS} tasks: the first {MAX_TASKS} are read, {} left out",
            items - MAX_TASKS
        )]
    );
}

#[test]
fn a_deeply_nested_list_keeps_only_its_outer_task() {
    let deep: String = (0..2000).map(|d| format!("{}- [ ] level {d}\n", "  ".repeat(d))).collect();
    let l = parse(&deep);
    assert_eq!(l.tasks.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["level 0"]);
}

#[test]
fn a_list_rewritten_at_once_with_the_same_size_is_read_again() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let file = root.join("TODO.md");
    std::fs::write(&file, "- [ ] T001 one\n").unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    assert!(!find(&root).unwrap().unwrap().tasks[0].done);
    // Same length, same modification time: only the text tells them apart.
    std::fs::write(&file, "- [x] T001 one\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    assert!(find(&root).unwrap().unwrap().tasks[0].done, "served from the memo of the old text");
}
