//! The rules of a work session: how events change it, what is derived from it, and the
//! checkpoint view written to `.claude/.project-state.json` (seed 004) within its limits.
//!
//! Pure functions over [`Session`]; the project task owns the state and does the I/O.

use crate::clock::{iso, parse_iso};
use crate::text::{clean, relative};
use ccmem_proto::model::session::{
    limits, truncate_chars, CheckpointReason, CheckpointType, FileRecord, ProjectState, Session, SessionEvent,
    Timestamp, TodoStatus, TRACKER_FORMAT,
};
use chrono::{DateTime, NaiveDateTime, Utc};
use std::path::PathBuf;

/// Bounds on what a session keeps in memory, however long it runs.
pub mod caps {
    /// Commands kept (oldest dropped first).
    pub const COMMANDS: usize = 500;
    /// Files tracked (least recently modified dropped first): enough for a whole large tree.
    pub const FILES: usize = 50_000;
    /// Distinct workflows counted per session.
    pub const WORKFLOWS: usize = 200;
    /// Longest path kept as a file record (real ones are far shorter; PATH_MAX-long junk
    /// from a payload would cost 4 KB a record).
    pub const FILE_PATH_BYTES: usize = 1024;
    /// Characters of one file's changes summary.
    pub const SUMMARY_CHARS: usize = 500;
    /// Patterns kept.
    pub const PATTERNS: usize = 30;
    /// Steps and issues kept in each list of the snapshot.
    pub const STEPS: usize = 50;
    /// Warnings kept.
    pub const WARNINGS: usize = 50;
    /// Key files listed.
    pub const KEY_FILES: usize = 10;
    /// Todos kept.
    pub const TODOS: usize = 500;
    /// Characters of any one text field taken from a client.
    pub const TEXT_CHARS: usize = 2000;
}

const ID_FORMAT: &str = "session_%Y-%m-%d_%H-%M-%S";

/// A session id for `now` that sorts after `last`: two sessions of one project started in
/// the same second get consecutive seconds, so ids stay unique and in the seed's format.
pub fn new_id(now: DateTime<Utc>, last: Option<&str>) -> String {
    let mut t = now;
    if let Some(prev) = last.and_then(|l| NaiveDateTime::parse_from_str(l, ID_FORMAT).ok()).map(|p| p.and_utc()) {
        if t.timestamp() <= prev.timestamp() {
            t = prev + chrono::Duration::seconds(1);
        }
    }
    t.format(ID_FORMAT).to_string()
}

/// A fresh session.
pub fn start(root: PathBuf, name: String, id: String, now: DateTime<Utc>, git_start: Option<String>) -> Session {
    let t = iso(now);
    Session {
        format: TRACKER_FORMAT,
        session_id: id,
        project_root: root,
        project_name: name,
        created_at: t.clone(),
        last_updated: t.clone(),
        last_activity: t,
        git_start,
        ..Default::default()
    }
}

/// Records activity now.
pub fn touch(s: &mut Session, now: DateTime<Utc>) {
    s.last_activity = iso(now);
    s.last_updated = s.last_activity.clone();
}

/// Applies one event and records the activity. Errors (a path outside the project, say)
/// leave the session unchanged.
pub fn apply(s: &mut Session, ev: SessionEvent, now: DateTime<Utc>) -> Result<(), String> {
    apply_quietly(s, ev, now)?;
    touch(s, now);
    Ok(())
}

/// Applies one event without recording activity: for batches, which call [`touch`] once.
pub fn apply_quietly(s: &mut Session, ev: SessionEvent, now: DateTime<Utc>) -> Result<(), String> {
    let stamp = Timestamp(now.timestamp());
    match ev {
        SessionEvent::FileEdited { path, summary, workflow, created } => {
            let rel = relative(&s.project_root, &path)?;
            if rel.len() > caps::FILE_PATH_BYTES {
                return Err(format!(
                    "a path of {} bytes is longer than ccmem keeps ({})",
                    rel.len(),
                    caps::FILE_PATH_BYTES
                ));
            }
            let rec = s.files_modified.entry(rel.as_str().into()).or_insert_with(|| FileRecord {
                first_modified: stamp,
                created,
                ..Default::default()
            });
            rec.last_modified = stamp;
            rec.modification_count += 1;
            rec.deleted = false;
            describe(rec, summary.as_deref(), workflow.as_deref());
            s.edited_files.retain(|f| f != &rel);
            s.edited_files.insert(0, rel.clone());
            s.edited_files.truncate(limits::EDITED_FILES);
            add_path_pattern(s, &rel);
            evict_files(s);
        }
        SessionEvent::FileDeleted { path } => {
            let rel = relative(&s.project_root, &path)?;
            s.edited_files.retain(|f| f != &rel);
            // A deletion is a change too, even of a file this session had not touched.
            let rec = s
                .files_modified
                .entry(rel.into())
                .or_insert_with(|| FileRecord { first_modified: stamp, ..Default::default() });
            if !rec.deleted {
                rec.modification_count += 1;
            }
            rec.deleted = true;
            rec.last_modified = stamp;
            evict_files(s);
        }
        SessionEvent::Command { command, workflow, status, duration_seconds } => {
            let command = clean(&command);
            if command.is_empty() {
                return Err("command is empty".into());
            }
            let workflow = workflow.map(|w| clean(&w)).filter(|w| !w.is_empty());
            if let Some(w) = &workflow {
                if let Some(n) = s.workflows_used.get_mut(w) {
                    *n += 1;
                } else if s.workflows_used.len() < caps::WORKFLOWS {
                    s.workflows_used.insert(w.clone(), 1);
                }
            }
            add_text_patterns(s, &command);
            if s.context_snapshot.active_task.is_empty() {
                s.context_snapshot.active_task = truncate_chars(command.lines().next().unwrap_or(""), 120);
            }
            s.statistics.total_commands += 1;
            s.commands_executed.push(ccmem_proto::model::session::CommandRecord {
                timestamp: iso(now),
                command,
                workflow,
                duration_seconds: duration_seconds.filter(|d| d.is_finite() && *d >= 0.0),
                status: status.map(|x| clean(&x)),
            });
            let excess = s.commands_executed.len().saturating_sub(caps::COMMANDS);
            s.commands_executed.drain(..excess);
        }
        SessionEvent::Todos { mut todos } => {
            todos.truncate(caps::TODOS);
            for todo in &mut todos {
                todo.content = clean(&todo.content);
                todo.active_form = clean(&todo.active_form);
            }
            let prompt = latest_prompt(s);
            let snap = &mut s.context_snapshot;
            for done in todos.iter().filter(|x| x.status == TodoStatus::Completed) {
                push_unique(&mut snap.completed_steps, &done.content, caps::STEPS);
            }
            snap.next_steps = todos
                .iter()
                .filter(|x| x.status != TodoStatus::Completed)
                .map(|x| x.content.clone())
                .take(10)
                .collect();
            if let Some(current) = todos.iter().find(|x| x.status == TodoStatus::InProgress) {
                snap.active_task = current.content.clone();
            } else if todos.iter().any(|t| t.status == TodoStatus::Completed && t.content == snap.active_task) {
                // The task named current is done and none is under way: the user's latest
                // request is what the agent works on.
                snap.active_task = prompt.unwrap_or_default();
            }
            s.todos = todos;
        }
        SessionEvent::Context { active_task, completed_steps, next_steps, blocking_issues } => {
            let snap = &mut s.context_snapshot;
            if let Some(a) = active_task {
                snap.active_task = clean(&a);
            }
            for step in completed_steps {
                push_unique(&mut snap.completed_steps, &clean(&step), caps::STEPS);
            }
            if let Some(n) = next_steps {
                snap.next_steps = n.iter().map(|x| clean(x)).filter(|x| !x.is_empty()).take(caps::STEPS).collect();
            }
            if let Some(b) = blocking_issues {
                snap.blocking_issues = b.iter().map(|x| clean(x)).filter(|x| !x.is_empty()).take(caps::STEPS).collect();
            }
        }
        SessionEvent::Phase(mut p) => {
            if !p.completion.is_finite() || !(0.0..=100.0).contains(&p.completion) {
                return Err(format!("phase completion must be between 0 and 100, got {}", p.completion));
            }
            p.name = clean(&p.name);
            p.chunk_files.truncate(limits::EDITED_FILES);
            s.phase = Some(p);
        }
        SessionEvent::Note { text } => s.context_notes = clean(&text),
        SessionEvent::Warning { text } => {
            let w = clean(&text);
            if !w.is_empty() && !s.warnings.contains(&w) {
                s.warnings.push(w);
                let excess = s.warnings.len().saturating_sub(caps::WARNINGS);
                s.warnings.drain(..excess);
            }
        }
        SessionEvent::Server(info) => {
            crate::session::environment::apply_server(s, info, now);
        }
        SessionEvent::Tests { suite, e2e } => crate::session::environment::apply_tests(s, suite, e2e, now),
        SessionEvent::Build(b) => crate::session::environment::apply_build(s, b, now),
    }
    Ok(())
}

/// Adds a change summary and a workflow to a file's record without counting another change:
/// the agent's word on an edit the watcher already counted.
pub fn annotate(s: &mut Session, rel: &str, summary: &str, workflow: &str, created: bool) {
    if let Some(rec) = s.files_modified.get_mut(rel) {
        rec.created |= created;
        describe(rec, Some(summary), Some(workflow));
    }
}

/// What an ended session hands to the next: its last conversation that did work, its todos,
/// failures, finished work and edited files. A session that did nothing hands on what it
/// was handed.
pub fn handoff(a: &ccmem_proto::model::session::ArchivedSession) -> Option<ccmem_proto::model::session::Handoff> {
    let s = &a.session;
    let conversation =
        s.conversations.iter().filter(|c| c.did_work()).max_by(|x, y| x.recency().cmp(&y.recency())).cloned();
    if conversation.is_none() && s.todos.is_empty() && s.failures.is_empty() && s.edited_files.is_empty() {
        return s.previous.as_deref().cloned();
    }
    let todos = conversation
        .as_ref()
        .filter(|c| !c.todos.is_empty())
        .map(|c| c.todos.clone())
        .unwrap_or_else(|| s.todos.clone());
    Some(ccmem_proto::model::session::Handoff {
        session_id: s.session_id.clone(),
        ended_at: a.ended_at.clone(),
        reason: crate::store::end_reason_text(a.ended).to_string(),
        conversation,
        todos,
        failures: s.failures.clone(),
        // What the sessions before it learnt stays learnt.
        lessons: crate::session::shell::carried_lessons(s),
        done: s.done.clone(),
        edited_files: s.edited_files.clone(),
    })
}

/// Appends a change summary (bounded) and a workflow (once) to a file's record.
fn describe(rec: &mut FileRecord, summary: Option<&str>, workflow: Option<&str>) {
    if let Some(summary) = summary.map(clean).filter(|x| !x.is_empty()) {
        let joined =
            if rec.changes_summary.is_empty() { summary } else { format!("{}, {summary}", rec.changes_summary) };
        rec.changes_summary = truncate_chars(&joined, caps::SUMMARY_CHARS).into();
    }
    if let Some(w) = workflow.map(clean).filter(|w| !w.is_empty()) {
        if !rec.workflows.iter().any(|x| **x == *w) {
            let mut all = std::mem::take(&mut rec.workflows).into_vec();
            all.push(w.into());
            rec.workflows = all.into_boxed_slice();
        }
    }
}

/// Recomputes what is derived: statistics, key files, activity counts from the file records.
pub fn refresh(s: &mut Session, now: DateTime<Utc>) {
    // Counted as they come (the kept list is capped); a session saved before the count
    // was kept has at least its list.
    s.statistics.total_commands = s.statistics.total_commands.max(s.commands_executed.len() as u64);
    s.statistics.total_files_modified = s.files_modified.len() as u64;
    s.statistics.total_workflows = s.workflows_used.len() as u64;
    s.statistics.session_duration_minutes = duration_minutes(s, now);
    // Files there at the end: one made and removed in the session (an editor's or a tool's
    // temporary file, seen by the watcher in between) was neither created nor modified.
    let present = || s.files_modified.values().filter(|r| !r.deleted);
    s.activity_summary.files_created = present().filter(|r| r.created).count() as u64;
    s.activity_summary.files_modified = present().filter(|r| !r.created).count() as u64;
    let mut files: Vec<(&Box<str>, &FileRecord)> = s.files_modified.iter().filter(|(_, r)| !r.deleted).collect();
    files.sort_by(|a, b| {
        b.1.modification_count.cmp(&a.1.modification_count).then(b.1.last_modified.cmp(&a.1.last_modified))
    });
    s.context_snapshot.key_files = files.into_iter().take(caps::KEY_FILES).map(|(p, _)| p.to_string()).collect();
}

fn duration_minutes(s: &Session, now: DateTime<Utc>) -> u64 {
    parse_iso(&s.created_at).map(|c| (now - c).num_minutes().max(0) as u64).unwrap_or(0)
}

/// Seed 004's checkpoint, encoded, within its limits: at most 50 edited files and 50 todos,
/// warnings ≤ 500 characters, notes ≤ 1,000, and the whole under 10 KB whatever the session
/// holds (lists are shortened further when needed, oldest and least useful first).
pub fn checkpoint_file(s: &Session, reason: CheckpointReason, kind: CheckpointType, now: DateTime<Utc>) -> Vec<u8> {
    let mut st = ProjectState {
        session_id: s.session_id.clone(),
        timestamp: iso(now),
        // For a reader (nothing reads it back): a directory named after a token is not
        // written into the project's files.
        project_root: ccmem_proto::redact::redact(&s.project_root.to_string_lossy()).into_owned(),
        project_name: truncate_chars(&s.project_name, 200),
        edited_files: s.edited_files.iter().take(limits::EDITED_FILES).cloned().collect(),
        todos: s
            .todos
            .iter()
            .take(limits::TODOS)
            .map(|t| ccmem_proto::model::session::Todo {
                id: None,
                content: truncate_chars(&t.content, 300),
                status: t.status,
                active_form: truncate_chars(&t.active_form, 300),
            })
            .collect(),
        phase: s.phase.clone(),
        plan: s.plan.clone(),
        git: s.git.clone(),
        session_duration_minutes: duration_minutes(s, now),
        checkpoint_reason: reason,
        checkpoint_type: kind,
        activity_summary: s.activity_summary.clone(),
        context_notes: truncate_chars(&s.context_notes, limits::CONTEXT_NOTES_CHARS),
        // The last warnings reported, then what is failing now (last: shrinking drops the
        // oldest first).
        warnings: s
            .warnings
            .iter()
            .rev()
            .take(20)
            .rev()
            .map(|w| truncate_chars(w, limits::WARNING_CHARS))
            .chain(crate::session::environment::warnings(s))
            .collect(),
    };
    st.git.last_commit = truncate_chars(&st.git.last_commit, 200);
    st.git.branch = truncate_chars(&st.git.branch, 200);
    loop {
        let bytes = encode(&st);
        if bytes.len() < limits::FILE_BYTES || !shrink(&mut st) {
            return bytes;
        }
    }
}

fn encode(st: &ProjectState) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(st).unwrap_or_else(|_| b"{}".to_vec());
    b.push(b'\n');
    b
}

/// One step towards a smaller file; false when nothing is left to drop.
fn shrink(st: &mut ProjectState) -> bool {
    if let Some(p) = st.phase.as_mut().filter(|p| !p.chunk_files.is_empty()) {
        p.chunk_files.clear();
    } else if st.warnings.len() > 5 {
        st.warnings.drain(..st.warnings.len() - 5);
    } else if let Some(i) =
        st.todos.iter().rposition(|t| t.status == TodoStatus::Completed).filter(|_| st.todos.len() > 10)
    {
        st.todos.remove(i);
    } else if st.todos.len() > 10 || st.edited_files.len() > 10 {
        let (t, e) = (st.todos.len(), st.edited_files.len());
        if t >= e {
            st.todos.truncate(t * 3 / 4);
        } else {
            st.edited_files.truncate(e * 3 / 4);
        }
    } else if st.context_notes.chars().count() > 100 {
        st.context_notes = truncate_chars(&st.context_notes, st.context_notes.chars().count() / 2);
    } else if !st.warnings.is_empty() {
        st.warnings.remove(0);
    } else if !st.todos.is_empty() || !st.edited_files.is_empty() {
        st.todos.pop();
        st.edited_files.pop();
    } else if st.phase.is_some() || st.plan.is_some() {
        st.phase = None;
        st.plan = None;
    } else {
        return false;
    }
    true
}

fn push_unique(list: &mut Vec<String>, item: &str, cap: usize) {
    if !item.is_empty() && !list.iter().any(|x| x == item) {
        list.push(item.to_string());
        let excess = list.len().saturating_sub(cap);
        list.drain(..excess);
    }
}

fn evict_files(s: &mut Session) {
    // Over the cap, the oldest tenth goes at once: one sort per 5,000 new files, not a scan
    // of all of them per file.
    if s.files_modified.len() <= caps::FILES {
        return;
    }
    let mut by_age: Vec<(Timestamp, String)> =
        s.files_modified.iter().map(|(k, r)| (r.last_modified, k.to_string())).collect();
    by_age.sort();
    for (_, k) in by_age.into_iter().take(s.files_modified.len() - caps::FILES * 9 / 10) {
        s.files_modified.remove(k.as_str());
    }
}

/// Themes recognised in commands (seed 001's keyword extraction), with their synonyms.
const VOCABULARY: &[(&str, &[&str])] = &[
    ("authentication", &["auth", "authentication", "login", "logout", "oauth", "session", "sessions"]),
    ("jwt", &["jwt", "token", "tokens"]),
    ("database", &["database", "db", "sql", "postgres", "sqlite", "mysql", "schema", "query", "queries"]),
    ("migration", &["migration", "migrations", "migrate"]),
    ("api-endpoints", &["api", "endpoint", "endpoints", "route", "routes", "rest", "graphql"]),
    ("middleware", &["middleware"]),
    ("component", &["component", "components", "ui", "frontend", "react", "vue", "css", "style"]),
    ("testing", &["test", "tests", "testing", "spec", "specs", "coverage"]),
    ("validation", &["validation", "validate", "validator", "validators"]),
    ("registration", &["registration", "register", "signup"]),
    ("user-management", &["user", "users", "account", "accounts", "profile"]),
    ("performance", &["performance", "perf", "optimize", "optimise", "slow", "latency", "cache", "caching"]),
    ("security", &["security", "secure", "vulnerability", "xss", "csrf", "injection", "encrypt", "encryption"]),
    ("configuration", &["config", "configuration", "settings", "env"]),
    ("deployment", &["deploy", "deployment", "docker", "kubernetes", "ci", "pipeline", "release"]),
    ("documentation", &["docs", "documentation", "readme"]),
    ("bug-fix", &["fix", "bug", "bugs", "error", "crash", "broken"]),
    ("refactoring", &["refactor", "refactoring", "cleanup", "rename"]),
    ("logging", &["log", "logs", "logging", "tracing", "metrics"]),
    ("payments", &["payment", "payments", "billing", "stripe", "invoice"]),
    ("search", &["search", "index", "indexing"]),
];

fn add_text_patterns(s: &mut Session, text: &str) {
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if let Some((theme, _)) = VOCABULARY.iter().find(|(_, words)| words.contains(&word)) {
            push_pattern(s, theme);
        }
    }
}

/// Working areas: `src/auth/*` for a file under `src/auth/`.
fn add_path_pattern(s: &mut Session, rel: &str) {
    let dirs: Vec<&str> = rel.split('/').collect();
    if dirs.len() >= 3 {
        push_pattern(s, &format!("{}/{}/*", dirs[0], dirs[1]));
    }
}

fn push_pattern(s: &mut Session, p: &str) {
    if !s.patterns_detected.iter().any(|x| x == p) && s.patterns_detected.len() < caps::PATTERNS {
        s.patterns_detected.push(p.to_string());
    }
}

/// The first line of the user's latest prompt (or slash command), as an active task.
fn latest_prompt(s: &Session) -> Option<String> {
    s.commands_executed
        .iter()
        .rev()
        .find(|c| c.workflow.as_deref().is_some_and(|w| w == "prompt" || w.starts_with('/')))
        .map(|c| truncate_chars(c.command.lines().next().unwrap_or(""), 120))
}

#[cfg(test)]
mod tests;
