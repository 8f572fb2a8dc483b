//! A session, or a span of a project's past, as a story in time order: one line per step,
//! repeated edits of a file and runs of files changed around the agent folded into one.

use super::{snippet, Event, Filter, COLUMNS, FROM};
use ccmem_proto::wire::api::{Hit, Hits};
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;

/// Events read at most for one timeline (the newest, when there are more).
const READ_AT_MOST: usize = 20_000;

/// Steps answered at most, and when the caller does not say.
pub const MAX_STEPS: usize = 2000;
pub const DEFAULT_STEPS: usize = 200;

/// Characters of a step's line.
const LINE: usize = 160;

/// The steps of what `filter` names (with no session and no time given: the project's
/// newest session), the newest `limit` when there are more. `full`: every event as it is.
pub fn timeline(conn: &Connection, filter: &Filter, full: bool, limit: usize) -> rusqlite::Result<Hits> {
    let mut filter = filter.clone();
    if filter.session.is_none() && filter.since_ms.is_none() && filter.until_ms.is_none() {
        if let Some(root) = &filter.root {
            filter.session = conn
                .query_row(
                    "SELECT s.sid FROM sessions s JOIN projects p ON p.id = s.project WHERE p.root = ?1
                     ORDER BY s.started_ms DESC, s.id DESC LIMIT 1",
                    [root.to_string_lossy()],
                    |r| r.get(0),
                )
                .optional()?;
        }
    }
    let (conds, values) = filter.sql(1);
    // Sessions in the order they started, each one's events second by second, and within a
    // second in the order the daemon took them: a conclusion the session drew (its own time
    // is to the second) is told after the event it came from, and what an import concluded
    // at its end (a test run's results, a commit) at its own time, not after the whole
    // conversation.
    let sql = format!(
        "SELECT * FROM (SELECT {COLUMNS}, e.data, s.started_ms AS started FROM {FROM} WHERE {conds}
                        ORDER BY s.started_ms DESC, e.seq DESC LIMIT {READ_AT_MOST})
         ORDER BY started, at_ms / 1000, seq"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows =
        stmt.query_map(rusqlite::params_from_iter(values), |r| Ok((Event::read(r)?, r.get::<_, Option<String>>(9)?)))?;
    let mut story = Story::default();
    let mut read = 0usize;
    for row in rows {
        let (e, data) = row?;
        read += 1;
        story.tell(e, data.as_deref(), full);
    }
    let limit = limit.clamp(1, MAX_STEPS);
    let mut steps = story.steps;
    let more = steps.len() > limit || read == READ_AT_MOST;
    if steps.len() > limit {
        steps.drain(..steps.len() - limit);
    }
    Ok(Hits { hits: steps, more })
}

/// The steps told so far, and what the next one is told against.
#[derive(Default)]
struct Story {
    steps: Vec<Hit>,
    /// The agent of the last conversation that started: another one is a handover.
    last_agent: Option<String>,
    /// Each conversation's last todo list: a new one is told as what changed.
    todos: HashMap<String, Vec<(String, String)>>,
}

impl Story {
    fn tell(&mut self, e: Event, data: Option<&str>, full: bool) {
        let data: serde_json::Value = data.and_then(|d| serde_json::from_str(d).ok()).unwrap_or_default();
        if full {
            let line = snippet::first_line(&e.text, LINE);
            self.steps.push(e.hit(line));
            return;
        }
        let line = match e.kind.as_str() {
            "start" => {
                let agent = e.agent.clone().unwrap_or_else(|| "an agent".into());
                match self.last_agent.replace(agent.clone()) {
                    Some(before) if before != agent => format!("handed over from {before} to {agent}"),
                    _ => format!("{agent} started ({})", snippet::first_line(&e.text, 40)),
                }
            }
            "end" => format!("conversation ended ({})", snippet::first_line(&e.text, 40)),
            "command" => {
                let failed = data.get("failed").and_then(serde_json::Value::as_bool).unwrap_or(false);
                let command = snippet::first_line(&e.text, LINE);
                if failed {
                    format!("✗ {command}")
                } else {
                    format!("$ {command}")
                }
            }
            "edit" | "delete" | "created" | "modified" | "deleted" => {
                let path = e.path.clone().unwrap_or_default();
                let verb = match e.kind.as_str() {
                    "delete" | "deleted" => "deleted",
                    "created" => "created",
                    "edit" => "edited",
                    _ => "changed",
                };
                // The same file again in a row, by the same hand: one step.
                if self.folded_into_last("file", &e) {
                    return;
                }
                format!("{verb} {path}")
            }
            "todos" => match self.todo_changes(&e) {
                Some(line) => line,
                None => return,
            },
            "precompact" | "context" | "tool" | "other" => return,
            // The findings of one read of a transcript come together: one step, the first
            // of them told (`recall.show` and a search give the rest).
            "decision" => {
                if self.folded_into_last("decision", &e) {
                    return;
                }
                snippet::first_line(&e.text, LINE)
            }
            "compacted" => format!("compacted: {}", snippet::first_line(&e.text, LINE)),
            _ => snippet::first_line(&e.text, LINE),
        };
        if line.is_empty() {
            return;
        }
        self.steps.push(e.hit(line));
    }

    /// Counts `e` into the last step when that step is of `kind` (a file: the same file) in
    /// `e`'s conversation: a run of the same thing is one step.
    fn folded_into_last(&mut self, kind: &str, e: &Event) -> bool {
        match self.steps.last_mut() {
            Some(last)
                if last.kind == kind
                    && last.conversation == e.conversation
                    && (kind != "file" || last.path.as_deref() == Some(e.path.as_deref().unwrap_or_default())) =>
            {
                last.folded += 1;
                true
            }
            _ => false,
        }
    }

    /// What changed in a conversation's todo list (`✓ done`, `→ started`, `+ added`); None
    /// when nothing did.
    fn todo_changes(&mut self, e: &Event) -> Option<String> {
        let now: Vec<(String, String)> = e
            .text
            .lines()
            .filter_map(|l| l.strip_prefix('[').and_then(|l| l.split_once("] ")))
            .map(|(status, content)| (status.to_string(), content.to_string()))
            .collect();
        let key = e.conversation.clone().unwrap_or_default();
        let before = self.todos.insert(key, now.clone()).unwrap_or_default();
        let mut said = Vec::new();
        for (status, content) in &now {
            let was = before.iter().find(|(_, c)| c == content).map(|(s, _)| s.as_str());
            let mark = match (was, status.as_str()) {
                (Some(w), s) if w == s => continue,
                (_, "Completed") => "✓",
                (_, "InProgress") => "→",
                (None, _) => "+",
                _ => continue,
            };
            said.push(format!("{mark} {content}"));
        }
        if said.is_empty() {
            return None;
        }
        let n = said.len();
        let mut line = said.into_iter().take(3).collect::<Vec<_>>().join("; ");
        if n > 3 {
            line.push_str(&format!(" (+{} more)", n - 3));
        }
        Some(format!("todos: {}", ccmem_proto::model::session::truncate_chars(&line, LINE)))
    }
}
