//! Where a question looks: the SQL conditions on `events e`, `sessions s` and `projects p`
//! that a search and a timeline share, with their parameters.

use rusqlite::types::Value;
use std::path::PathBuf;

/// A question's scope, checked and resolved by the server (the project's root, the agent's
/// display name, the journal's kinds).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// One project's root; None: every project.
    pub root: Option<PathBuf>,
    /// One agent, by the names the journal may keep it under (its name, its display name).
    pub agent: Vec<String>,
    /// One session (ccmem's id) or conversation (the agent's).
    pub session: Option<String>,
    /// The journal's kinds kept; empty: every kind but the quiet ones.
    pub kinds: Vec<&'static str>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
}

impl Filter {
    /// The conditions (joined with AND, never empty) and their values, numbered from `?{first}`.
    pub fn sql(&self, first: usize) -> (String, Vec<Value>) {
        let mut conds: Vec<String> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        let next = |v: Value, values: &mut Vec<Value>| {
            values.push(v);
            format!("?{}", first + values.len() - 1)
        };
        if let Some(root) = &self.root {
            let n = next(Value::Text(root.to_string_lossy().into_owned()), &mut values);
            conds.push(format!("p.root = {n}"));
        }
        if !self.agent.is_empty() {
            let names: Vec<String> = self.agent.iter().map(|a| next(Value::Text(a.clone()), &mut values)).collect();
            conds.push(format!("e.agent IN ({})", names.join(", ")));
        }
        if let Some(id) = &self.session {
            let n = next(Value::Text(id.clone()), &mut values);
            conds.push(format!("(s.sid = {n} OR e.conversation = {n})"));
        }
        if self.kinds.is_empty() {
            let quiet: Vec<String> = super::kinds::QUIET.iter().map(|k| format!("'{k}'")).collect();
            conds.push(format!("e.kind NOT IN ({})", quiet.join(", ")));
        } else {
            let list: Vec<String> =
                self.kinds.iter().map(|k| next(Value::Text((*k).to_string()), &mut values)).collect();
            conds.push(format!("e.kind IN ({})", list.join(", ")));
        }
        if let Some(ms) = self.since_ms {
            let n = next(Value::Integer(ms), &mut values);
            conds.push(format!("e.at_ms >= {n}"));
        }
        if let Some(ms) = self.until_ms {
            let n = next(Value::Integer(ms), &mut values);
            conds.push(format!("e.at_ms <= {n}"));
        }
        (conds.join(" AND "), values)
    }
}
