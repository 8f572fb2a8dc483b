//! The agent's task list changed one task at a time (Claude Code's Task tools and events).

use super::*;
use ccmem_proto::model::session::Todo;

/// Applies a task change to the conversation's list (and the session's): by id when it has
/// one, else by subject. An update for an id never seen creates it, named by its subject or
/// its id, so that its status is not lost.
pub(super) fn change_task(s: &mut Session, conv: &str, ch: TaskChange) {
    let mut todos = find(s, conv).map(|c| c.todos.clone()).unwrap_or_else(|| s.todos.clone());
    let pos = match (&ch.id, &ch.subject) {
        (Some(id), _) => todos.iter().position(|t| t.id.as_deref() == Some(id.as_str())),
        (None, Some(subject)) => todos.iter().position(|t| &t.content == subject),
        (None, None) => return,
    };
    match (pos, ch.delete) {
        (Some(i), true) => {
            todos.remove(i);
        }
        (None, true) => return,
        (Some(i), false) => {
            let t = &mut todos[i];
            if let Some(st) = ch.status {
                t.status = st;
            }
            if let Some(subject) = ch.subject.filter(|x| *x != t.content) {
                // Renamed: the old "…ing" form no longer fits, unless a new one came.
                t.active_form = subject.clone();
                t.content = subject;
            }
            if let Some(a) = ch.active_form.filter(|a| !a.is_empty()) {
                t.active_form = a;
            }
        }
        // A list this long is junk, not a plan: new tasks are not taken (each would cost a
        // copy of the whole list).
        (None, false) if todos.len() >= session::caps::TODOS => return,
        (None, false) => {
            let content = ch.subject.clone().unwrap_or_else(|| format!("Task #{}", ch.id.as_deref().unwrap_or("?")));
            todos.push(Todo {
                id: ch.id,
                active_form: ch.active_form.filter(|a| !a.is_empty()).unwrap_or_else(|| content.clone()),
                content,
                status: ch.status.unwrap_or_default(),
            });
        }
    }
    if let Some(c) = find(s, conv) {
        c.todos = todos.clone();
        c.todos_at = c.message_count;
    }
    let _ = session::apply_quietly(s, SessionEvent::Todos { todos }, chrono::Utc::now());
}
