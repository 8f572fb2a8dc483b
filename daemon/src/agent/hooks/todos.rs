//! The agent's task tools: TodoWrite's whole list, TaskCreate and TaskUpdate's changes.

use super::*;

pub(super) fn status_of(s: &str) -> Option<TodoStatus> {
    match s {
        "pending" => Some(TodoStatus::Pending),
        "in_progress" => Some(TodoStatus::InProgress),
        "completed" => Some(TodoStatus::Completed),
        _ => None,
    }
}

pub(super) fn todo_of(v: &Value) -> Option<Todo> {
    let content = crate::text::clean(v.get("content").and_then(Value::as_str)?);
    if content.is_empty() {
        return None;
    }
    Some(Todo {
        id: None,
        status: v.get("status").and_then(Value::as_str).and_then(status_of).unwrap_or_default(),
        active_form: v
            .get("activeForm")
            .and_then(Value::as_str)
            .map(crate::text::clean)
            .unwrap_or_else(|| content.clone()),
        content,
    })
}

pub(super) fn task_subject(v: &Value) -> Option<String> {
    ["subject", "title", "content", "description"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(crate::text::clean)
        .filter(|x| !x.is_empty())
}

/// One change to the agent's task list, from whichever source said it.
pub(super) struct TaskChange {
    pub(super) id: Option<String>,
    pub(super) subject: Option<String>,
    pub(super) status: Option<TodoStatus>,
    pub(super) active_form: Option<String>,
    pub(super) delete: bool,
}

/// Task ids arrive as strings (`"3"`) or numbers.
pub(super) fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.trim().trim_start_matches('#').to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

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
    }
    let _ = session::apply_quietly(s, SessionEvent::Todos { todos }, chrono::Utc::now());
}
