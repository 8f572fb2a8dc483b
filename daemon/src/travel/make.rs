//! A branch's handoff made from the session: what the resume context is built from, redacted,
//! within [`MAX_BYTES`], as `handoff.json` and a readable `handoff.md`.

use ccmem_proto::model::handoff::{BranchHandoff, FORMAT, MAX_BYTES};
use ccmem_proto::model::session::{truncate_chars, Conversation, Session, TodoStatus};

/// Who and where: the git author and the machine, read once per write.
#[derive(Debug, Clone, Default)]
pub struct Maker {
    /// `Name <email>`.
    pub author: String,
    /// The machine's name.
    pub machine: String,
}

/// The handoff of `s` on `branch` at `commit`; None when the session holds no work to hand
/// on. Its time is the work's (the conversation's last activity, or when the previous session
/// ended), not the write's: enabling handoff today does not make yesterday's work newer than
/// a teammate's of this morning. `now` when the work has no time.
pub fn handoff(s: &Session, branch: &str, commit: &str, by: &Maker, now: &str) -> Option<BranchHandoff> {
    let (conversation, todos, failures, lessons, files) = work(s);
    let carried =
        s.previous.as_deref().filter(|p| p.conversation.as_ref().map(|c| &c.id) == conversation.map(|c| &c.id));
    let at = match (conversation, carried) {
        (_, Some(p)) if !p.ended_at.is_empty() => p.ended_at.clone(),
        (Some(c), _) if !c.last_activity.is_empty() => c.last_activity.clone(),
        _ if !s.last_activity.is_empty() => s.last_activity.clone(),
        _ => now.to_string(),
    };
    let d = conversation.map(|c| &c.digest);
    let next_step = d
        .map(|d| d.next_step.trim().to_string())
        .filter(|n| !n.is_empty())
        .or_else(|| {
            let open = |st| todos.iter().find(|t| t.status == st).map(|t| t.content.clone());
            open(TodoStatus::InProgress).or_else(|| open(TodoStatus::Pending))
        })
        .unwrap_or_default();
    let mut h = BranchHandoff {
        format: FORMAT,
        branch: branch.to_string(),
        commit: commit.to_string(),
        made_at: at,
        machine: by.machine.clone(),
        author: by.author.clone(),
        agent: conversation.map(|c| c.agent.display().to_string()).unwrap_or_default(),
        conversation: conversation.map(|c| c.id.clone()).unwrap_or_default(),
        task: conversation.map(|c| one_line(&c.first_prompt, 400)).unwrap_or_default(),
        todos: todos.to_vec(),
        next_step: truncate_chars(&next_step, 600),
        failures: failures.to_vec(),
        lessons: lessons.to_vec(),
        last_words: d.map(|d| truncate_chars(&d.last_words, 3000)).unwrap_or_default(),
        decisions: d.map(|d| d.findings.iter().rev().take(20).cloned().collect()).unwrap_or_default(),
        files,
    };
    if !h.has_work() {
        return None;
    }
    redact(&mut h);
    fit(&mut h);
    Some(h)
}

type Work<'a> = (
    Option<&'a Conversation>,
    &'a [ccmem_proto::model::session::Todo],
    &'a [ccmem_proto::model::session::Failure],
    &'a [ccmem_proto::model::session::Lesson],
    Vec<String>,
);

/// The work to hand on: this session's, or (until it has its own) what the previous one
/// left, as the resume context takes it.
fn work(s: &Session) -> Work<'_> {
    let own = s.conversations.iter().filter(|c| c.did_work()).max_by(|a, b| a.recency().cmp(&b.recency()));
    let mut files: Vec<(&str, i64)> =
        s.files_modified.iter().filter(|(_, r)| !r.deleted).map(|(p, r)| (p.as_ref(), r.last_modified.0)).collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    let files: Vec<String> = files.into_iter().take(30).map(|(p, _)| p.to_string()).collect();
    match (own, s.previous.as_deref()) {
        (None, Some(p)) if s.todos.is_empty() => (
            p.conversation.as_ref(),
            &p.todos,
            &p.failures,
            &p.lessons,
            if files.is_empty() { p.edited_files.iter().take(30).cloned().collect() } else { files },
        ),
        _ => {
            let todos = own.filter(|c| !c.todos.is_empty()).map_or(s.todos.as_slice(), |c| c.todos.as_slice());
            (own, todos, &s.failures, &s.lessons, files)
        }
    }
}

/// `s` on one line, at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    truncate_chars(&s.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// Every text of `h` redacted again, as markdown (a token split by markup is whole once
/// read), and made printable.
pub fn redact(h: &mut BranchHandoff) {
    let Ok(mut v) = serde_json::to_value(&*h) else { return };
    crate::text::redact_json_markdown(&mut v);
    ccmem_proto::printable::json(&mut v);
    if let Ok(back) = serde_json::from_value(v) {
        *h = back;
    }
}

/// `handoff.json` as written.
pub fn json(h: &BranchHandoff) -> Vec<u8> {
    serde_json::to_vec_pretty(h).unwrap_or_default()
}

/// Cuts `h` until its JSON fits [`MAX_BYTES`]: the oldest decisions, files and done todos
/// first, then long texts shortened, then lists halved.
fn fit(h: &mut BranchHandoff) {
    let size = |h: &BranchHandoff| json(h).len();
    while size(h) > MAX_BYTES {
        if h.decisions.len() > 5 {
            h.decisions.truncate(h.decisions.len() - 1);
        } else if h.files.len() > 10 {
            h.files.truncate(h.files.len() - 1);
        } else if let Some(i) = h.todos.iter().position(|t| t.status == TodoStatus::Completed) {
            h.todos.remove(i);
        } else if h.last_words.chars().count() > 800 {
            h.last_words = truncate_chars(&h.last_words, h.last_words.chars().count() * 3 / 4);
        } else if !h.lessons.is_empty() {
            h.lessons.remove(0);
        } else {
            // Whatever is still too long: every text to a tenth less, every list halved.
            h.decisions.truncate(h.decisions.len() / 2);
            h.files.truncate(h.files.len() / 2);
            h.todos.truncate(h.todos.len().div_ceil(2).min(h.todos.len().saturating_sub(1)));
            h.failures.truncate(h.failures.len() / 2);
            for t in [&mut h.task, &mut h.next_step, &mut h.last_words] {
                *t = truncate_chars(t, t.chars().count() * 9 / 10);
            }
            if h.todos.is_empty() && h.decisions.is_empty() && h.failures.is_empty() && h.last_words.len() < 64 {
                h.task = truncate_chars(&h.task, 200);
                h.next_step = truncate_chars(&h.next_step, 200);
                break;
            }
        }
    }
}

/// `handoff.md`: the same, to read with `git show`.
pub fn markdown(h: &BranchHandoff) -> String {
    let mut md = format!(
        "# Handoff on {}\n\nBy {} on {}, {} (commit {}), with {}.\n\n",
        h.branch,
        h.author,
        h.machine,
        h.made_at,
        short(&h.commit),
        if h.agent.is_empty() { "no agent" } else { &h.agent }
    );
    if !h.task.is_empty() {
        md.push_str(&format!("Task: {}\n\n", h.task));
    }
    if !h.next_step.is_empty() {
        md.push_str(&format!("Next step: {}\n\n", h.next_step));
    }
    if !h.todos.is_empty() {
        md.push_str("## Todos\n\n");
        for t in &h.todos {
            md.push_str(&format!("- [{}] {}\n", t.status.mark(), t.content));
        }
        md.push('\n');
    }
    if !h.failures.is_empty() {
        md.push_str("## Unresolved failures\n\n");
        for f in &h.failures {
            md.push_str(&format!("- {} `{}`: {}\n", f.kind, f.command, f.error));
        }
        md.push('\n');
    }
    if !h.last_words.is_empty() {
        md.push_str("## Last words\n\n");
        for l in h.last_words.lines() {
            md.push_str(&format!("> {l}\n"));
        }
        md.push('\n');
    }
    if !h.decisions.is_empty() {
        md.push_str("## Decisions and findings\n\n");
        for d in &h.decisions {
            md.push_str(&format!("- {d}\n"));
        }
        md.push('\n');
    }
    if !h.files.is_empty() {
        md.push_str("## Files\n\n");
        for f in &h.files {
            md.push_str(&format!("- {f}\n"));
        }
    }
    md
}

/// A commit's first 10 hex digits.
pub fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}
