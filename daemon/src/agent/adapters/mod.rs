//! One adapter per agent: each turns that agent's hook payloads into the neutral
//! [`Hook`](crate::agent::hooks::Hook) the session rules read, in the way watchexec keeps one
//! module per concern. Nothing below this module asks which agent spoke.
//!
//! `ccmemctl hook --agent NAME` names the agent in the payload ([`AGENT_KEY`]); a payload
//! without it is Claude Code's (its hooks and plugin were installed before agents were told
//! apart). Payloads are read leniently: unknown events and fields are accepted, and a field
//! of an unexpected type is as good as absent.

use crate::agent::hooks::Hook;
use ccmem_proto::model::agent::Agent;
use serde_json::Value;

mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod opencode;
mod pi;

pub use ccmem_proto::wire::api::AGENT_KEY;

/// Reads a payload; None when it is not a hook payload at all.
pub fn parse(v: &Value) -> Option<Hook> {
    let agent = match v.get(AGENT_KEY).and_then(Value::as_str) {
        None => Agent::Claude,
        Some(name) => Agent::from_name(name).unwrap_or(Agent::Other),
    };
    let mut hook = match agent {
        Agent::Codex => codex::parse(v)?,
        Agent::Gemini => gemini::parse(v)?,
        Agent::Opencode => opencode::parse(v)?,
        Agent::Pi => pi::parse(v)?,
        Agent::Copilot => copilot::parse(v)?,
        Agent::Cursor => cursor::parse(v)?,
        // An agent this version does not know is read in Claude Code's shape.
        _ => claude::parse(v)?,
    };
    hook.agent = agent;
    // A replayed event (`ccmemctl import`) happened when its transcript says; never later
    // than now, which is when a live one happens.
    hook.at = v
        .get(ccmem_proto::wire::api::EVENT_TIME)
        .and_then(Value::as_str)
        .and_then(crate::clock::parse_iso)
        .filter(|t| *t <= chrono::Utc::now());
    Some(hook)
}

pub(crate) fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Where the agent keeps the conversation (`transcript_path`, in the agent's own format):
/// looked for by recall, never read.
pub(crate) fn kept_at(v: &Value) -> Option<String> {
    path(v, "transcript_path").map(|p| p.to_string_lossy().into_owned())
}

/// A path field, within the size of a real path.
pub(crate) fn path(v: &Value, key: &str) -> Option<std::path::PathBuf> {
    text(v, key).filter(|p| p.len() <= crate::text::MAX_PATH_BYTES).map(std::path::PathBuf::from)
}

/// A path a tool named, relative to the agent's working directory when it is not absolute.
pub(crate) fn absolute(path: &str, cwd: Option<&std::path::Path>) -> String {
    match cwd {
        Some(dir) if std::path::Path::new(path).is_relative() => dir.join(path).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// One file a tool wrote (`created`) or changed, with the lines it added and removed.
pub(crate) fn edit_of(
    tool: &str,
    path: String,
    created: bool,
    added: u64,
    removed: u64,
) -> crate::agent::hooks::FileEdit {
    let summary = if created {
        format!("{tool}: {added} line{}", if added == 1 { "" } else { "s" })
    } else {
        format!("{tool}: +{added} −{removed}")
    };
    crate::agent::hooks::FileEdit { path, summary, tool: tool.into(), created, deleted: false, added, removed }
}

/// The delivery id of an agent's event that carries no id of its own: its time and what it
/// carries (two tools can finish within one millisecond).
pub(crate) fn timed_delivery(v: &Value) -> Option<String> {
    let what = format!("{}{}", v.get("tool_name").unwrap_or(&Value::Null), v.get("tool_input").unwrap_or(&Value::Null));
    text(v, "timestamp").map(|t| format!("{t}-{:x}", fnv(what.as_bytes())))
}

pub(crate) use crate::text::fnv1a as fnv;

/// A short keyword of the payload (a reason, a trigger), or "" when it is not one.
pub(crate) fn word(v: &Value, key: &str) -> String {
    text(v, key).filter(|w| w.len() <= 64 && is_id(w)).unwrap_or_default()
}

/// `~/x` is the user's `x`: Claude Code has sent transcript paths that way.
pub(crate) fn home(path: &str) -> String {
    match (path.strip_prefix("~/"), directories::BaseDirs::new()) {
        (Some(rest), Some(dirs)) => dirs.home_dir().join(rest).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A conversation id as agents make them: see [`ccmem_proto::model::agent::is_conversation_id`].
pub(crate) fn is_id(s: &str) -> bool {
    ccmem_proto::model::agent::is_conversation_id(s)
}

/// The delivery key of an event: its name and an id of the agent's, when that is an id.
pub(crate) fn delivery(event: &str, id: Option<String>) -> Option<String> {
    id.filter(|id| is_id(id)).map(|id| format!("{event}:{id}"))
}

/// A todo status as agents write it.
pub(crate) fn status_of(s: &str) -> Option<ccmem_proto::model::session::TodoStatus> {
    use ccmem_proto::model::session::TodoStatus;
    match s {
        "pending" | "todo" | "not_started" => Some(TodoStatus::Pending),
        "in_progress" | "in-progress" | "active" => Some(TodoStatus::InProgress),
        "completed" | "done" => Some(TodoStatus::Completed),
        _ => None,
    }
}

/// A todo from its text and status, the text redacted; None when it has no text.
pub(crate) fn todo(
    content: &str,
    status: Option<&str>,
    active_form: Option<&str>,
) -> Option<ccmem_proto::model::session::Todo> {
    let content = crate::text::clean(content);
    if content.is_empty() {
        return None;
    }
    Some(ccmem_proto::model::session::Todo {
        id: None,
        status: status.and_then(status_of).unwrap_or_default(),
        active_form: active_form.map(crate::text::clean).filter(|a| !a.is_empty()).unwrap_or_else(|| content.clone()),
        content,
    })
}

/// A whole todo list or plan as an agent's tool gives it: each item's text under `text_key`
/// and its `status`. A cancelled item is no longer part of the work; a blocked one still is.
pub(crate) fn todo_list(items: Option<&Value>, text_key: &str) -> crate::agent::hooks::Tool {
    crate::agent::hooks::Tool::Plan(
        items
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|t| t.get("status").and_then(Value::as_str) != Some("cancelled"))
            .take(crate::session::rules::caps::TODOS)
            .filter_map(|t| {
                let status = match t.get("status").and_then(Value::as_str) {
                    Some("blocked") => Some("pending"),
                    s => s,
                };
                todo(t.get(text_key).and_then(Value::as_str)?, status, None)
            })
            .collect(),
    )
}

/// Lines replaced between two texts, the lines they share at either end not counted.
pub(crate) fn changed_lines(old: &str, new: &str) -> (u64, u64) {
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let tail = o[head..].iter().rev().zip(n[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    ((n.len() - head - tail) as u64, (o.len() - head - tail) as u64)
}

#[cfg(test)]
mod tests;
