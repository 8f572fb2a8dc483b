//! The journal: every event the daemon accepts, and each session's latest state, kept in
//! one SQLite database per user (`journal.db` in the state dir).
//!
//! The project task writes it (nothing else does); recall, travel and the view read it. An
//! event is durable once [`Journal::append`]'s receiver resolves: the project task answers
//! the agent only then, so whatever the daemon has answered survives a `kill -9`. Each event
//! carries its replay (what it did to the session), and now and then an append carries the
//! session's whole state: a restart takes a live session from here, its last state plus the
//! replays after it, when that is newer than the last checkpoint.
//!
//! Knows events and sessions, not agents, git or the socket.

mod changes;
mod forget;
pub mod grams;
mod migrate;
mod open;
mod past;
mod read;
mod reader;
mod retention;
mod row;
pub mod schema;
mod syncer;
mod writer;

use ccmem_proto::model::session::Session;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

pub use changes::{Change, Changes};
pub use forget::{Forget, Forgotten};
pub use open::FILE;
pub use read::Live;
pub use retention::Retention;

/// Operations waiting for the writer at most; past this an append is dropped and said.
const QUEUE: usize = 8192;

/// One event, as the project task saw it. Text and data are redacted by the journal (in
/// [`Journal::append`], on the caller's thread).
#[derive(Debug, Clone, Default)]
pub struct Entry {
    /// The project's directory.
    pub root: PathBuf,
    /// The project's name, when known.
    pub root_name: String,
    /// ccmem's session id.
    pub session: String,
    /// When it happened, in milliseconds since the epoch.
    pub at_ms: i64,
    /// Who said it: `hook`, `import`, `watch`, `user`.
    pub source: &'static str,
    /// What it is: `prompt`, `tool`, `edit`, `stop`, …
    pub kind: &'static str,
    /// The agent, by its display name.
    pub agent: Option<String>,
    /// The agent's conversation id.
    pub conversation: Option<String>,
    /// The file it is about, relative to the project.
    pub path: Option<String>,
    /// What search finds.
    pub text: String,
    /// Details, as JSON.
    pub data: Option<serde_json::Value>,
    /// What the event did to the session, as JSON its owner can apply again: a restart
    /// rebuilds a live session from its last state plus the replays after it.
    pub replay: Option<serde_json::Value>,
}

/// What the writer is asked to do.
enum Op {
    /// Events, and (now and then) the session's state after them.
    Append { rows: Vec<row::Row>, state: Option<row::State>, at_ms: i64, ack: Ack },
    /// The session ended: its last state is its archive.
    Ended { state: row::State, at_ms: i64, reason: String, ack: Ack },
    /// Answered once everything before it is written.
    Flush(Ack),
    /// A project's own `history_keep` (None: the user's).
    Keep { root: PathBuf, keep: Option<Duration> },
    /// The daemon is quiet: give SQLite's caches back.
    Shrink,
    /// Count, and when `apply` remove for good, what `what` names.
    Forget { what: Forget, apply: bool, reply: oneshot::Sender<Result<Forgotten, String>> },
}

/// Who waits for an operation to be written (None once answered).
type Ack = Option<oneshot::Sender<()>>;

impl Op {
    /// Who waits for the operation, taken out to be answered once it is written (or, the
    /// journal locked or failing, no longer to be waited on). None: nobody, or answered
    /// already.
    fn take_ack(&mut self) -> Option<oneshot::Sender<()>> {
        match self {
            Op::Append { ack, .. } | Op::Ended { ack, .. } | Op::Flush(ack) => ack.take(),
            Op::Forget { .. } | Op::Keep { .. } | Op::Shrink => None,
        }
    }

    /// The projects whose past the operation changes.
    fn roots(&self) -> Vec<PathBuf> {
        match self {
            Op::Append { rows, state, .. } => {
                rows.iter().map(|r| r.e.root.clone()).chain(state.iter().map(|s| s.root.clone())).collect()
            }
            Op::Ended { state, .. } => vec![state.root.clone()],
            _ => Vec::new(),
        }
    }
}

/// What is wrong with the journal, for `status`, `doctor` and the log.
#[derive(Clone, Default)]
pub struct Health(Arc<Mutex<HealthState>>);

#[derive(Default)]
struct HealthState {
    /// The database found at start-up could not be used, and where it went.
    replaced: Option<String>,
    /// The last write failed, and why.
    failing: Option<String>,
    /// Appends dropped because the writer fell behind.
    dropped: u64,
    /// Operations waiting for another program to let go of the database's write lock.
    held: usize,
    /// Sessions the size limit dropped, and when last.
    pruned: Option<(u64, String)>,
    /// When the writer began the write it is in (None: it is not writing).
    writing: Option<std::time::Instant>,
}

/// A writer that has been in one write this long is held up (another program's lock on the
/// shared-memory file holds SQLite up to ten seconds, whatever the busy timeout): appends
/// are queued, and not waited on.
const STUCK: Duration = Duration::from_secs(1);

impl Health {
    fn lock(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wrote(&self) {
        let mut h = self.lock();
        if h.failing.take().is_some() || std::mem::take(&mut h.held) > 0 {
            tracing::info!("the journal is written again");
        }
    }

    /// The writer begins (`true`) or ends a write.
    fn writing(&self, now: bool) {
        self.lock().writing = now.then(std::time::Instant::now);
    }

    /// Whether the writer has been held up in a write for [`STUCK`] or more.
    pub fn stuck(&self) -> bool {
        self.lock().writing.is_some_and(|t| t.elapsed() >= STUCK)
    }

    /// `n` operations wait for another program's write lock to go.
    fn held(&self, n: usize) {
        let mut h = self.lock();
        if h.held == 0 {
            tracing::warn!("the journal is locked by another program: events are kept in memory until it lets go");
        }
        h.held = n;
    }

    fn pruned(&self, n: u64) {
        if n > 0 {
            let mut h = self.lock();
            let total = h.pruned.as_ref().map_or(0, |(t, _)| *t) + n;
            tracing::warn!(
                sessions = n,
                "the journal reached history_max_size: the oldest ended sessions were dropped"
            );
            h.pruned = Some((total, crate::clock::iso(chrono::Utc::now())));
        }
    }

    fn failed(&self, why: String) {
        let mut h = self.lock();
        if h.failing.as_deref() != Some(why.as_str()) {
            tracing::error!("{why}");
        }
        h.failing = Some(why);
    }

    /// What a person should know, one line each (none when all is well).
    pub fn problems(&self) -> Vec<String> {
        let h = self.lock();
        let mut out: Vec<String> = h.replaced.iter().chain(h.failing.iter()).cloned().collect();
        if h.held > 0 {
            out.push(format!(
                "the journal is locked by another program (a `sqlite3` shell in a transaction?): {} writes wait in memory, and are made when it lets go",
                h.held
            ));
        }
        if let Some(t) = h.writing.filter(|t| t.elapsed() >= STUCK) {
            out.push(format!(
                "the journal is locked by another program (or its disk stalls): a write has waited {:.0} s; events wait in memory, and are written when it lets go",
                t.elapsed().as_secs_f64()
            ));
        }
        if h.dropped > 0 {
            out.push(format!("{} events were not journaled: the journal fell behind or stayed locked", h.dropped));
        }
        if let Some((n, at)) = &h.pruned {
            out.push(format!(
                "the journal reached history_max_size: its {n} oldest ended sessions were dropped (last at {at}); raise it to keep more"
            ));
        }
        out
    }
}

/// The handle the project tasks share.
#[derive(Clone)]
pub struct Journal {
    tx: Option<mpsc::SyncSender<Op>>,
    health: Health,
    path: PathBuf,
    /// The live sessions found at start-up, until the registry takes them.
    live: Arc<Mutex<Vec<Live>>>,
    /// The connection that reads the past, on its own thread (started on first use).
    reader: Arc<reader::Reader>,
    /// The one that answers recall's questions: a search must not hold up a new session's
    /// read, and may take longer.
    recall: Arc<reader::Reader>,
    /// Told of every commit (the view's subscribers).
    changes: Changes,
}

/// How long a recall question waits for its answer.
const RECALL_WAIT: Duration = Duration::from_secs(10);

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("path", &self.path).field("open", &self.tx.is_some()).finish()
    }
}

impl Journal {
    /// Opens the journal in the state dir `dir` and starts its writer, which keeps the past
    /// as `retention` says. A journal that cannot be opened at all leaves the daemon working
    /// without one (checkpoints still kept), and says so in [`Journal::health`].
    pub fn open(dir: &Path, retention: Retention) -> Journal {
        let path = dir.join(FILE);
        let health = Health::default();
        let opened = ccmem_proto::wire::paths::create_private_dirs(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| open::open(dir));
        let opened = match opened {
            Ok(o) => o,
            Err(why) => return Journal::none(health, path, &why),
        };
        health.lock().replaced = opened.replaced;
        let mut conn = opened.conn;
        // The archives of a state dir from before the journal, once.
        if let Err(e) = migrate::archives(&mut conn, dir) {
            tracing::error!(error = %e, "cannot take the archived sessions into the journal");
        }
        let live = match read::live(&conn) {
            Ok(live) => live,
            // Damaged pages behind a whole header: the file opened, but every write would
            // fail and every event answered from now on be lost. Moved aside, as one that
            // does not open (the checkpoints and trackers still hold the live sessions).
            Err(e) if open::is_damaged(&e) => {
                drop(conn);
                match open::replace(&path, &e.to_string()) {
                    Ok(o) => {
                        health.lock().replaced = o.replaced;
                        conn = o.conn;
                    }
                    Err(why) => return Journal::none(health, path, &why),
                }
                Vec::new()
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read the live sessions from the journal");
                Vec::new()
            }
        };
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let h = health.clone();
        let db = path.clone();
        let changes = Changes::default();
        let told = changes.clone();
        let spawned = std::thread::Builder::new()
            .name("ccmem-journal".into())
            .spawn(move || writer::run(conn, rx, h, db, retention, told));
        if let Err(e) = spawned {
            health.lock().failing = Some(format!("cannot start the journal's writer: {e}"));
            return Journal::with(None, health, path, live);
        }
        Journal { changes, ..Journal::with(Some(tx), health, path, live) }
    }

    /// The handle on the writer `tx` (None: no journal is written) and the journal at `path`.
    fn with(tx: Option<mpsc::SyncSender<Op>>, health: Health, path: PathBuf, live: Vec<Live>) -> Journal {
        let reader = Arc::new(reader::Reader::new(path.clone()));
        let recall = Arc::new(reader::Reader::waiting(path.clone(), RECALL_WAIT));
        Journal { tx, health, path, live: Arc::new(Mutex::new(live)), reader, recall, changes: Changes::default() }
    }

    /// No journal, as the user asked (`--no-journal`): sessions are kept in the state dir's
    /// files, as before the journal.
    pub fn off(dir: &Path) -> Journal {
        tracing::info!("no journal (--no-journal): sessions are kept as files in the state dir");
        Journal::with(None, Health::default(), dir.join(FILE), Vec::new())
    }

    /// Waits until what `done` stands for is committed, `wait` at most (see [`Journal::append`]).
    /// Blocking.
    pub fn wait_committed(mut done: oneshot::Receiver<()>, wait: Duration) -> std::io::Result<()> {
        use tokio::sync::oneshot::error::TryRecvError;
        let deadline = std::time::Instant::now() + wait;
        loop {
            match done.try_recv() {
                Ok(()) => return Ok(()),
                Err(TryRecvError::Closed) => return Err(std::io::Error::other("the journal dropped it")),
                Err(TryRecvError::Empty) if std::time::Instant::now() >= deadline => {
                    return Err(std::io::Error::other("the journal did not commit it in time"))
                }
                Err(TryRecvError::Empty) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// No journal, for `why` (the daemon works on with its checkpoints; health says so).
    fn none(health: Health, path: PathBuf, why: &str) -> Journal {
        tracing::error!("no journal: {why}");
        health.lock().replaced = Some(format!("no journal: {why}"));
        Journal::with(None, health, path, Vec::new())
    }

    /// Whether events are being journaled (a journal could be opened).
    pub fn is_open(&self) -> bool {
        self.tx.is_some()
    }

    /// The ended sessions of the project at `root`, newest first, `limit` at most (None:
    /// there is no journal to ask, or it cannot be read). Reads the database: for the
    /// blocking pool.
    pub fn history(&self, root: &Path, limit: usize) -> Option<Vec<ccmem_proto::model::session::ArchivedSession>> {
        let root = root.to_path_buf();
        self.read(move |c| past::history(c, &root, limit))
    }

    /// The newest session id the project at `root` has used, live or ended, as journaled.
    pub fn last_session_id(&self, root: &Path) -> Option<String> {
        let root = root.to_path_buf();
        self.read(move |c| past::last_session_id(c, &root)).flatten()
    }

    /// Whether the journal holds the agent's conversation `id` (None: it cannot be asked).
    /// Blocking.
    pub fn conversation_known(&self, id: &str) -> Option<bool> {
        let id = id.to_string();
        self.recall(move |c| past::conversation_known(c, &id)).ok()
    }

    /// Which of `ids` the journal holds (None: it cannot be asked). Blocking.
    pub fn known_conversations(&self, ids: Vec<String>) -> Option<Vec<String>> {
        self.recall(move |c| past::known_conversations(c, &ids)).ok()
    }

    /// When the project at `root` was last active, as the journal tells (None inside: never;
    /// None: it cannot be asked). Blocking.
    pub fn last_active_ms(&self, root: &Path) -> Option<Option<i64>> {
        let root = root.to_path_buf();
        self.recall(move |c| past::last_active_ms(c, &root)).ok()
    }

    /// The session ids the project at `root` has used, live or ended. Blocking.
    pub fn session_ids(&self, root: &Path) -> Option<Vec<String>> {
        let root = root.to_path_buf();
        self.recall(move |c| past::session_ids(c, &root)).ok()
    }

    /// Runs `f` on the reading connection (see [`reader::Reader::read`]).
    fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Option<T> {
        self.tx.as_ref()?;
        self.reader.read(f)
    }

    /// `f` run on recall's own reading connection, or why the journal could not answer.
    /// Blocking: for the blocking pool.
    pub fn recall<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        if self.tx.is_none() {
            return Err(
                "there is no journal (the daemon runs with --no-journal, or could not open it: see `ccmemctl status`)"
                    .into(),
            );
        }
        self.recall.ask(f)
    }

    /// Where the database is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the journal takes from now on, commit by commit.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// What is wrong with it.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// The live sessions the journal held at start-up (once; empty after).
    pub fn take_live(&self) -> Vec<Live> {
        std::mem::take(&mut *self.live.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Queues `entries`, and when given the session's state after them; the receiver resolves
    /// once they are committed (None: there is no journal, or it fell behind and they were
    /// dropped). The state need not go with every append: a restart applies the entries'
    /// replays after the last state it has.
    pub fn append(&self, entries: Vec<Entry>, state: Option<&Session>) -> Option<oneshot::Receiver<()>> {
        let tx = self.tx.as_ref()?;
        let (ack, done) = oneshot::channel();
        let at_ms = chrono::Utc::now().timestamp_millis();
        // Redacted and serialized here, by the caller: see `row`.
        let rows = entries.into_iter().map(row::Row::of).collect();
        let state = state.and_then(row::State::of);
        match tx.try_send(Op::Append { rows, state, at_ms, ack: Some(ack) }) {
            // Queued; a writer held up in a write is not waited on.
            Ok(()) if self.health.stuck() => None,
            Ok(()) => Some(done),
            Err(_) => {
                self.health.lock().dropped += 1;
                None
            }
        }
    }

    /// Records that a session ended, with its last state; resolves once committed.
    pub async fn ended(&self, state: Box<Session>, reason: &str) {
        self.ended_at(state, reason, chrono::Utc::now().timestamp_millis()).await
    }

    /// [`Journal::ended`] at `at_ms` (a past conversation imported ends when it ended).
    pub async fn ended_at(&self, state: Box<Session>, reason: &str, at_ms: i64) {
        let (ack, done) = oneshot::channel();
        let Some(state) = row::State::of(&state) else { return };
        if self.send(Op::Ended { state, at_ms, reason: reason.to_string(), ack: Some(ack) }).await {
            let _ = done.await;
        }
    }

    /// Sets how long the project at `root` keeps its ended sessions (its
    /// `.claude/ccmem.toml`; None: as the user set); applied at once.
    pub fn keep_project(&self, root: &Path, keep: Option<Duration>) {
        if let Some(tx) = self.tx.as_ref() {
            let _ = tx.try_send(Op::Keep { root: root.to_path_buf(), keep });
        }
    }

    /// Lets go of the connections' page caches (the daemon is quiet): the reader's
    /// connection is closed (opened again when next needed), the writer shrinks its cache.
    pub fn let_go(&self) {
        self.reader.let_go();
        self.recall.let_go();
        if let Some(tx) = self.tx.as_ref() {
            let _ = tx.try_send(Op::Shrink);
        }
    }

    /// Resolves once everything queued before it is committed.
    pub async fn flush(&self) {
        let (ack, done) = oneshot::channel();
        if self.send(Op::Flush(Some(ack))).await {
            let _ = done.await;
        }
    }

    /// Counts what `what` names in the journal and, when `apply`, removes it for good.
    pub async fn forget(&self, what: Forget, apply: bool) -> Result<Forgotten, String> {
        let (reply, done) = oneshot::channel();
        if !self.send(Op::Forget { what, apply, reply }).await {
            return Err("there is no journal".into());
        }
        done.await.unwrap_or_else(|_| Err("the journal's writer stopped".into()))
    }

    /// Queues `op`, waiting (off the runtime's threads) for room if the writer is behind.
    async fn send(&self, op: Op) -> bool {
        let Some(tx) = &self.tx else { return false };
        match tx.try_send(op) {
            Ok(()) => true,
            Err(mpsc::TrySendError::Disconnected(_)) => false,
            Err(mpsc::TrySendError::Full(op)) => {
                let tx = tx.clone();
                tokio::task::spawn_blocking(move || tx.send(op).is_ok()).await.unwrap_or(false)
            }
        }
    }
}
