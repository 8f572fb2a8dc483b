//! The view's way to the daemon: one connection for its questions, opened again when lost.
//! Every answer is the daemon's own (redacted and made printable there); nothing here reads
//! the journal or the state dir itself.

use crate::conn::{CallError, Conn};
use ccmem_proto::wire::api::{self, method, Hits, Scope, ShowReply, ViewProjects, ViewSessions};
use ccmem_proto::wire::memory::{self as mem, ListReply, MemoryReply, SearchReply};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the view waits for one answer: it is on the keyboard's path.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Results a search shows at most.
pub const SEARCH_HITS: usize = 50;

/// Steps of a timeline read at most (the daemon's own cap).
pub const TIMELINE_STEPS: usize = 2000;

/// The daemon, as the view asks it.
pub struct Source {
    socket: PathBuf,
    conn: Option<Conn>,
}

impl Source {
    /// The daemon at `socket`, connected to on first use.
    pub fn new(socket: &Path) -> Self {
        Self { socket: socket.to_path_buf(), conn: None }
    }

    /// The socket it talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Every project, live first.
    pub fn projects(&mut self) -> Result<ViewProjects, String> {
        self.call(method::VIEW_PROJECTS, &api::ViewProjectsParams {})
    }

    /// The sessions of the project at `root`, newest first.
    pub fn sessions(&mut self, root: &Path) -> Result<ViewSessions, String> {
        self.call(method::VIEW_SESSIONS, &api::ViewSessionsParams { path: root.to_path_buf(), limit: None })
    }

    /// A session's steps, in order.
    pub fn timeline(&mut self, session: &str) -> Result<Hits, String> {
        let scope =
            Scope { all: true, session: Some(session.to_string()), limit: Some(TIMELINE_STEPS), ..Scope::default() };
        self.call(method::TIMELINE, &api::TimelineParams { scope, full: false })
    }

    /// The past searched, every project.
    pub fn search(&mut self, query: &str) -> Result<Hits, String> {
        let scope = Scope { all: true, limit: Some(SEARCH_HITS), ..Scope::default() };
        self.call(method::SEARCH, &api::SearchParams { query: query.to_string(), scope })
    }

    /// One event in full.
    pub fn show(&mut self, seq: i64) -> Result<ShowReply, String> {
        self.call(method::SHOW, &api::ShowParams { seq, around: 0, project: None })
    }

    /// The memories the project at `root` sees (its own and the user's).
    pub fn memories(&mut self, root: &Path) -> Result<ListReply, String> {
        self.call(mem::method::LIST, &mem::ListParams { path: Some(root.to_path_buf()), ..Default::default() })
    }

    /// The memories that match `query`.
    pub fn search_memories(&mut self, root: &Path, query: &str) -> Result<SearchReply, String> {
        let params = mem::SearchParams {
            path: Some(root.to_path_buf()),
            query: query.to_string(),
            limit: Some(50),
            ..Default::default()
        };
        self.call(mem::method::SEARCH, &params)
    }

    /// One memory, with its links.
    pub fn memory(
        &mut self,
        root: &Path,
        scope: ccmem_proto::model::memory::Scope,
        slug: &str,
    ) -> Result<MemoryReply, String> {
        let params =
            mem::SlugParams { path: Some(root.to_path_buf()), scope: Some(scope), by_agent: false, slug: slug.into() };
        self.call(mem::method::SHOW, &params)
    }

    /// One request; a connection that was lost is opened again once.
    fn call<P: Serialize, R: DeserializeOwned>(&mut self, name: &str, params: &P) -> Result<R, String> {
        for attempt in 0..2 {
            let conn = match self.conn.as_mut() {
                Some(c) => c,
                None => {
                    let mut c = Conn::connect_within(&self.socket, ANSWER_WAIT)
                        .map_err(|e| format!("cannot reach ccmemd at {}: {e}", self.socket.display()))?;
                    c.hello_within(ANSWER_WAIT).map_err(said)?;
                    self.conn.insert(c)
                }
            };
            match conn.call(name, params) {
                Ok(v) => return Ok(v),
                // Lost (a daemon restarted): tried again at once, on a new connection.
                Err(CallError::Io(_)) if attempt == 0 => self.conn = None,
                Err(e) => {
                    if !matches!(e, CallError::Rpc(_)) {
                        self.conn = None;
                    }
                    return Err(said(e));
                }
            }
        }
        Err("the connection to ccmemd was lost".into())
    }
}

/// What went wrong, for the status line.
fn said(e: CallError) -> String {
    match e {
        CallError::Io(e) => format!("ccmemd did not answer: {e}"),
        CallError::Rpc(e) => e.for_people().to_string(),
        CallError::BadReply(e) => e,
    }
}
