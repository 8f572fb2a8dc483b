use super::*;
use ccmem_proto::model::handoff::{BranchHandoff, MAX_BYTES};
use ccmem_proto::model::session::{Todo, TodoStatus};

#[test]
fn an_author_id_is_stable_readable_and_a_valid_ref_part() {
    let here = std::path::Path::new("/home/a/app");
    let a = refs::author_id("Alice Doe <Alice.Doe+x@example.com>", "laptop", here);
    assert_eq!(a, refs::author_id("Alice Doe <Alice.Doe+x@example.com>", "laptop", here), "the same every time");
    assert!(a.starts_with("alice-doe-x-"), "{a}");
    assert_ne!(a, refs::author_id("Alice Doe <Alice.Doe+x@example.com>", "desktop", here), "one per machine");
    let other = std::path::Path::new("/home/a/app-2");
    assert_ne!(a, refs::author_id("Alice Doe <Alice.Doe+x@example.com>", "laptop", other), "one per clone");
    for odd in ["", "<>", "..:~^ <@>", "名前 <名前@例.jp>", "x\n<y\u{0}@z>"] {
        let id = refs::author_id(odd, "m", here);
        assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)), "{id:?}");
        assert!(refs::branch_ok(&id), "{id:?}");
    }
    // The hash is FNV-1a's, not the standard library's (which may change between releases).
    assert_eq!(refs::author_id("a <b@c>", "m", std::path::Path::new("/p")), "b-fec63f93");
}

#[test]
fn branch_names_git_refuses_are_refused() {
    for ok in ["main", "feature/login", "fix-123", "release/v1.2", "ünïcode"] {
        assert!(refs::branch_ok(ok), "{ok}");
    }
    for bad in [
        "", "HEAD", "-x", "a..b", "a/.b", "a.lock", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a/", "/a",
        "a//b", "a@{1}", "a.", "a\u{7}",
    ] {
        assert!(!refs::branch_ok(bad), "{bad:?}");
    }
}

#[test]
fn a_remote_name_is_a_plain_word() {
    assert!(remote::name_ok("origin") && remote::name_ok("my-fork.2"));
    for bad in ["", "-o", ".x", "a/b", "a..b", "ext::sh", "a b", &"x".repeat(65)] {
        assert!(!remote::name_ok(bad), "{bad:?}");
    }
}

/// A handoff whose every part is far too long.
fn huge() -> BranchHandoff {
    let long = "word ".repeat(4000);
    BranchHandoff {
        task: long.clone(),
        next_step: long.clone(),
        last_words: long.clone(),
        todos: (0..200)
            .map(|i| Todo {
                content: format!("todo {i} {}", "x".repeat(300)),
                status: if i % 2 == 0 { TodoStatus::Completed } else { TodoStatus::Pending },
                ..Default::default()
            })
            .collect(),
        decisions: (0..200).map(|i| format!("decision {i} {}", "y".repeat(300))).collect(),
        files: (0..500).map(|i| format!("src/{i}/{}.rs", "z".repeat(100))).collect(),
        ..Default::default()
    }
}

#[test]
fn a_handoff_is_cut_to_its_size_keeping_the_open_work() {
    let mut s = crate::session::rules::start("/w/app".into(), "app".into(), "s".into(), chrono::Utc::now(), None);
    let h = huge();
    s.todos = h.todos.clone();
    let mut c = ccmem_proto::model::session::Conversation {
        id: "c1".into(),
        first_prompt: h.task.clone(),
        tool_calls: 3,
        ..Default::default()
    };
    c.digest.last_words = h.last_words.clone();
    c.digest.findings = h.decisions.clone();
    s.conversations.push(c);
    let by = make::Maker { author: "A <a@b>".into(), machine: "m".into() };
    let made = make::handoff(&s, "main", "abc", &by, "2026-11-29T10:00:00Z").expect("work to hand on");
    assert!(make::json(&made).len() <= MAX_BYTES, "{} bytes", make::json(&made).len());
    assert!(made.todos.iter().any(|t| t.status == TodoStatus::Pending), "open todos kept");
    assert!(!made.last_words.is_empty() && !made.task.is_empty());
    // An empty session hands nothing on.
    let empty = crate::session::rules::start("/w/app".into(), "app".into(), "s".into(), chrono::Utc::now(), None);
    assert!(make::handoff(&empty, "main", "abc", &by, "2026-11-29T10:00:00Z").is_none());
}

#[test]
fn a_handoff_is_redacted_as_it_is_made_and_read() {
    let mut h = BranchHandoff {
        task: "deploy with ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA6".into(),
        author: "x\u{202e}y <a@b>".into(),
        ..Default::default()
    };
    make::redact(&mut h);
    assert!(!h.task.contains("ghp_aB3d"), "{}", h.task);
    assert!(!h.author.contains('\u{202e}'), "{:?}", h.author);
}

#[test]
fn queued_work_keeps_every_ask() {
    let mut w = Work { push: true, forget: Some(false), ..Default::default() };
    w.merge(Work { fetch: true, forget: Some(true), enable: Some((None, true)), ..Default::default() });
    assert!(w.push && w.fetch && w.forget == Some(true) && w.enable.is_some());
    w.merge(Work { disable: true, ..Default::default() });
    assert!(w.disable && w.enable.is_none(), "the later of enable and disable wins");
}

#[test]
fn a_failure_stays_until_a_push_or_fetch_goes_through() {
    let setting = Setting { remote: "origin".into(), auto: true, ..Default::default() };
    let mut st = State { setting: Some(setting), ..Default::default() };
    st.take(&Done { pushed: Some(Err("git push to origin failed: denied".into())), ..Default::default() }, "t1");
    assert!(st.status_line().unwrap().contains("FAILED: git push to origin failed: denied"));
    st.take(&Done { branch: "main".into(), ..Default::default() }, "t2");
    assert!(st.failed.is_some(), "a run without a push or fetch says nothing of it");
    st.take(&Done { pushed: Some(Ok(())), ..Default::default() }, "t3");
    assert!(st.failed.is_none() && st.pushed_at == "t3", "{st:?}");
}

#[test]
fn a_handoff_carries_the_time_of_its_work_not_of_its_writing() {
    let now = chrono::Utc::now();
    let mut s = crate::session::rules::start("/w/app".into(), "app".into(), "s2".into(), now, None);
    let c = ccmem_proto::model::session::Conversation {
        id: "c1".into(),
        first_prompt: "Fix the login".into(),
        tool_calls: 2,
        last_activity: "2026-11-28T17:00:00.000Z".into(),
        ..Default::default()
    };
    s.previous = Some(Box::new(ccmem_proto::model::session::Handoff {
        session_id: "s1".into(),
        ended_at: "2026-11-28T18:00:00.000Z".into(),
        conversation: Some(c),
        todos: vec![Todo { content: "Finish it".into(), status: TodoStatus::Pending, ..Default::default() }],
        ..Default::default()
    }));
    let by = make::Maker { author: "A <a@b>".into(), machine: "m".into() };
    let h = make::handoff(&s, "main", "abc", &by, "2026-11-29T09:00:00.000Z").expect("the previous session's work");
    assert_eq!(h.made_at, "2026-11-28T18:00:00.000Z", "yesterday's work is yesterday's");
    assert_eq!(h.task, "Fix the login");
}
