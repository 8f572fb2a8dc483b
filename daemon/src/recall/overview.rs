//! The view's lists (`ccmemctl ui`): every project the journal holds, and a project's
//! sessions, each in brief. A session's brief is read from its last state with SQLite's
//! JSON functions (the few fields it needs, never the whole state into memory): a thousand
//! sessions take tens of milliseconds.

use super::snippet::first_line;
use ccmem_proto::model::agent::{is_conversation_id, Agent};
use ccmem_proto::model::environment::{SuiteStatus, TestResults};
use ccmem_proto::model::session::{Todo, TodoStatus};
use ccmem_proto::wire::api::{Brief, ConversationRow, ProjectRow, SessionRow, ViewSessions};
use rusqlite::{params, Connection};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Sessions listed at most for one project, and when the caller does not say.
pub const MAX_SESSIONS: usize = 1000;
pub const DEFAULT_SESSIONS: usize = 200;

/// The newest sessions of a project whose agents are named in its row.
const AGENTS_FROM: i64 = 5;

/// Failing tests named in a brief at most.
const FAILING: usize = 5;

/// A session's last activity, as the journal has it: when it ended, else when its state was
/// last written, else when it started.
const LAST: &str = "coalesce(s.ended_ms, s.state_ms, s.started_ms)";

/// The state's fields a brief is made of, in one JSON array (SQLite's `json_extract` of
/// several paths).
const BRIEF_FIELDS: &str = "json_extract(s.state, '$.todos', '$.test_results', '$.git.branch', '$.conversations')";

/// Every project, live ones (`live`: the roots the daemon keeps a session for) first, then
/// the past, each newest activity first.
pub fn projects(conn: &Connection, live: &HashSet<PathBuf>) -> rusqlite::Result<Vec<ProjectRow>> {
    let mut q = conn.prepare_cached(&format!(
        "SELECT p.id, p.root, p.name, count(*), max({LAST}),
                (SELECT {BRIEF_FIELDS} FROM sessions s WHERE s.project = p.id ORDER BY s.started_ms DESC, s.id DESC LIMIT 1)
         FROM projects p JOIN sessions s ON s.project = p.id GROUP BY p.id"
    ))?;
    let rows = q.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut agents = conn.prepare_cached(&format!(
        "SELECT json_extract(c.value, '$.agent') AS agent, max(json_extract(c.value, '$.last_activity')) AS at
         FROM (SELECT state FROM sessions s WHERE s.project = ?1 ORDER BY s.started_ms DESC LIMIT {AGENTS_FROM}) s,
              json_each(s.state, '$.conversations') c
         GROUP BY agent ORDER BY at DESC"
    ))?;
    let mut out = Vec::new();
    for row in rows {
        let (id, root, name, sessions, last_ms, fields) = row?;
        let root = PathBuf::from(root);
        let named: Vec<Option<String>> = agents.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        let agents = named.into_iter().map(|a| display(a.as_deref())).collect();
        let name = if name.is_empty() { dir_name(&root) } else { name };
        out.push(ProjectRow {
            live: live.contains(&root),
            root,
            name,
            last_ms,
            sessions: u64::try_from(sessions).unwrap_or(0),
            agents,
            brief: Fields::read(fields.as_deref()).brief(),
        });
    }
    out.sort_by(|a, b| b.live.cmp(&a.live).then(b.last_ms.cmp(&a.last_ms)).then(a.root.cmp(&b.root)));
    Ok(out)
}

/// The root the journal keeps for `given`: itself, or the one a reply showed as `given`
/// (redacted and made printable: a directory named with an invisible or control character,
/// or with what reads as a token, is shown without it, and asked about so).
pub fn root_named(conn: &Connection, given: &Path) -> rusqlite::Result<Option<PathBuf>> {
    let given = given.to_string_lossy();
    let mut q = conn.prepare_cached("SELECT root FROM projects")?;
    let roots: Vec<String> = q.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    if roots.iter().any(|r| *r == given) {
        return Ok(Some(PathBuf::from(given.as_ref())));
    }
    Ok(roots.into_iter().find(|r| shown(r) == given).map(PathBuf::from))
}

/// A root as a reply shows it: redacted, then made printable.
pub fn shown(root: &str) -> String {
    ccmem_proto::printable::text(&ccmem_proto::redact::redact(root)).into_owned()
}

/// The sessions of the project at `root` (as the journal keeps it, or as a reply showed it),
/// newest first, `limit` at most; `live` tells the session the daemon keeps for a root.
pub fn sessions(
    conn: &Connection,
    root: &Path,
    live: impl Fn(&Path) -> Option<String>,
    limit: usize,
) -> rusqlite::Result<ViewSessions> {
    let Some(root) = root_named(conn, root)? else {
        return Ok(ViewSessions { root: root.to_path_buf(), sessions: Vec::new(), more: false });
    };
    let live = live(&root);
    let live = live.as_deref();
    let limit = limit.clamp(1, MAX_SESSIONS);
    let mut q = conn.prepare_cached(&format!(
        "SELECT s.sid, s.started_ms, {LAST}, s.ended_ms, s.end_reason,
                (SELECT count(*) FROM events e WHERE e.session = s.id), {BRIEF_FIELDS}
         FROM sessions s JOIN projects p ON p.id = s.project WHERE p.root = ?1
         ORDER BY s.started_ms DESC, s.id DESC LIMIT ?2"
    ))?;
    let rows = q.query_map(params![root.to_string_lossy(), i64::try_from(limit + 1).unwrap_or(i64::MAX)], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, Option<i64>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    let mut sessions = Vec::new();
    for row in rows {
        let (session, started_ms, last_ms, ended_ms, reason, events, fields) = row?;
        let fields = Fields::read(fields.as_deref());
        // A session the journal has not seen end, that the daemon no longer keeps, ended
        // with the daemon (it is taken back at the next start).
        let ended_ms = ended_ms.or((live != Some(session.as_str())).then_some(last_ms));
        sessions.push(SessionRow {
            session,
            started_ms,
            last_ms,
            ended_ms,
            end_reason: reason.unwrap_or_default(),
            events: u64::try_from(events).unwrap_or(0),
            brief: fields.brief(),
            conversations: fields.conversations(),
        });
    }
    let more = sessions.len() > limit;
    sessions.truncate(limit);
    Ok(ViewSessions { root, sessions, more })
}

/// An agent's display name from its name in a state (`claude`; absent: Claude Code, the
/// default that states leave out).
fn display(name: Option<&str>) -> String {
    name.map_or(Agent::Claude, |n| Agent::from_name(n).unwrap_or(Agent::Other)).display().to_string()
}

fn dir_name(root: &Path) -> String {
    root.file_name().map_or_else(|| root.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The fields of a state a brief is made of ([`BRIEF_FIELDS`]).
#[derive(Default, Deserialize)]
struct Fields(
    #[serde(default)] Option<Vec<Todo>>,
    #[serde(default)] Option<TestResults>,
    #[serde(default)] Option<String>,
    #[serde(default)] Option<Vec<Conversation>>,
);

/// A conversation as a brief reads it from a state.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Conversation {
    id: String,
    agent: Option<String>,
    transcript_path: Option<String>,
    last_activity: String,
    message_count: u64,
    first_prompt: String,
}

impl Fields {
    /// Read from what [`BRIEF_FIELDS`] gives (none, or a state that does not read: empty).
    fn read(json: Option<&str>) -> Fields {
        json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default()
    }

    fn brief(&self) -> Brief {
        let todos = self.0.as_deref().unwrap_or_default();
        let done = todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
        let mut brief = Brief {
            todos_left: (todos.len() - done) as u64,
            todos_done: done as u64,
            branch: self.2.clone().filter(|b| b != "unknown").unwrap_or_default(),
            task: self.newest().map(|c| first_line(&c.first_prompt, 200)).unwrap_or_default(),
            ..Brief::default()
        };
        if let Some(t) = &self.1 {
            // The suite run last tells: a green unit run after a red end-to-end one is green.
            let suites = [&t.unit, &t.e2e];
            let last = suites.into_iter().filter(|s| s.status != SuiteStatus::NotRun).max_by_key(|s| s.ran_at.clone());
            if let Some(s) = last {
                brief.tests = if s.status == SuiteStatus::Failed { "failed" } else { "passed" }.into();
                brief.passed = s.passed;
                brief.failed = s.failed;
                brief.failing = s.failures.iter().take(FAILING).map(|f| first_line(&f.test_name, 120)).collect();
            }
        }
        brief
    }

    /// The conversation active last.
    fn newest(&self) -> Option<&Conversation> {
        self.3.as_deref().unwrap_or_default().iter().max_by(|a, b| a.last_activity.cmp(&b.last_activity))
    }

    /// The conversations, newest first.
    fn conversations(&self) -> Vec<ConversationRow> {
        let mut all: Vec<&Conversation> = self.3.as_deref().unwrap_or_default().iter().collect();
        all.sort_by(|a, b| b.last_activity.cmp(&a.last_activity));
        all.into_iter()
            .map(|c| {
                let agent = c.agent.as_deref().map_or(Agent::Claude, |n| Agent::from_name(n).unwrap_or(Agent::Other));
                // Offered only while the agent can still find it: its transcript is here.
                let here = c.transcript_path.as_deref().is_some_and(|p| Path::new(p).is_file());
                let resume = (here && is_conversation_id(&c.id)).then(|| agent.resume_command(&c.id)).flatten();
                ConversationRow {
                    id: c.id.clone(),
                    agent: agent.display().to_string(),
                    first_prompt: first_line(&c.first_prompt, 200),
                    prompts: c.message_count,
                    last_activity: c.last_activity.clone(),
                    resume,
                }
            })
            .collect()
    }
}
