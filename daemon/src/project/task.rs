//! One project's task: the sole owner of its session.
//!
//! Everything that changes a session arrives here as a [`Msg`]; two timers run beside the
//! mailbox: the periodic checkpoint and the expiry deadline (last activity + TTL, on the
//! monotonic clock, so a wall-clock jump neither expires nor revives a session). Slow file
//! and git work goes to the blocking pool while the task waits, so messages queue in order
//! and no lock is ever held around the session.

use crate::report::blockers::CommentCache;
use crate::{
    agent::context, agent::facts::GlobalFacts, agent::hooks, observe::git, observe::manifest, observe::watch,
    project::checkpoint, session::environment, session::rules as session, store::Store,
};
use ccmem_proto::api::{
    CheckpointReply, ContextReply, EndReply, HookReply, ProjectStatus, ProjectSummary, ReportReply, RequestedReason,
};
use ccmem_proto::facts::{self, Memory};
use ccmem_proto::session::{ArchivedSession, CheckpointReason, CheckpointType, EndReason, Session, SessionEvent};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

/// Settings every project task shares.
#[derive(Debug)]
pub struct Ctx {
    /// Where trackers and archives live.
    pub store: Store,
    /// The configuration's values that can change at run time.
    pub live: crate::config::LiveRx,
    /// File watching.
    pub watch: Arc<watch::Settings>,
    /// User-wide facts.
    pub global: GlobalFacts,
    /// The dev-server scanner.
    pub ports: crate::observe::ports::Ports,
    /// Knowledge memories.
    pub memories: crate::memories::Memories,
    /// The configuration, for `config show` and reloads.
    pub config: Arc<crate::config::Reloader>,
}

/// Hook deliveries remembered for spotting a second copy (both copies come within a
/// moment of each other, one per installed hook).
const DELIVERIES: usize = 256;
/// A SessionStart of the same conversation and source within this is a second copy.
const SAME_START: Duration = Duration::from_secs(2);
/// Recent edits remembered before the first pruning.
const RECENT_EDITS: usize = 4096;

/// Memories named in the resume context at most.
const MEMORIES_SHOWN: usize = 10;

/// Messages a project task accepts.
#[derive(Debug)]
pub enum Msg {
    /// Something happened; `reply` is None for notifications.
    Event { event: SessionEvent, reply: Option<oneshot::Sender<Result<(), String>>> },
    /// Keep (or start) the session.
    Watch { reply: oneshot::Sender<ProjectSummary> },
    /// The whole state.
    Status { reply: oneshot::Sender<ProjectStatus> },
    /// The state in brief.
    Summary { conversations: bool, reply: oneshot::Sender<ProjectSummary> },
    /// Write a checkpoint now.
    Checkpoint {
        reason: RequestedReason,
        note: Option<String>,
        reply: oneshot::Sender<Result<CheckpointReply, String>>,
    },
    /// End the session and start a new one.
    Reset { reply: oneshot::Sender<EndReply> },
    /// End the session and stop.
    Unwatch { reply: oneshot::Sender<EndReply> },
    /// The daemon is stopping: final checkpoint, keep the session for the next start.
    Shutdown { reply: oneshot::Sender<()> },
    /// Files changed on disk (from the project's watcher).
    FsChanges(Vec<(String, watch::Change)>),
    /// `.git/HEAD`, the index or a ref changed.
    GitChanged,
    /// The dev servers listening from this project now (from the port scanner).
    Servers(Vec<ccmem_proto::env::ServerInfo>),
    /// An agent hook event; `reply` is None for notifications.
    Hook { hook: hooks::Hook, reply: Option<oneshot::Sender<HookReply>> },
    /// The resume context.
    Context { budget: Option<usize>, reply: oneshot::Sender<ContextReply> },
    /// The session memory report, written into the project when `write`.
    Report { write: bool, reply: oneshot::Sender<Result<ReportReply, String>> },
    /// The project's facts and goals, after `edit` (what it did, or why it could not).
    Facts { edit: Option<facts::FactsEdit>, reply: oneshot::Sender<FactsAnswer> },
}

/// The facts and goals, and what an edit did.
pub type FactsAnswer = (Memory, Result<Option<String>, String>);

/// Applies a hand edit to a project's stored facts and goals (for a project without a live
/// session; a live one's task does the same to its own copy).
pub fn edit_stored_facts(ctx: &Ctx, root: &Path, edit: Option<&facts::FactsEdit>) -> FactsAnswer {
    let mut memory = ctx.store.load_memory(root);
    let Some(edit) = edit else { return (memory, Ok(None)) };
    match memory.apply(edit, &crate::clock::iso(chrono::Utc::now())) {
        Ok(said) => match ctx.store.save_memory(root, &memory) {
            Ok(()) => (memory, Ok(Some(said))),
            Err(e) => (ctx.store.load_memory(root), Err(format!("cannot save the facts: {e}"))),
        },
        Err(e) => (memory, Err(e)),
    }
}

/// What a background job hands back.
#[derive(Debug)]
pub enum JobResult {
    /// A checkpoint: the session as written, what happened, the version it was taken at,
    /// and the comment cache it used.
    Checkpoint { copy: Session, out: checkpoint::Outcome, exclude_done: bool, version: u64, comments: CommentCache },
    /// Fresh git state.
    Git { copy: Session },
}

/// What a project task needs of whoever started it (the registry): its place among the
/// live projects, held for the task's life, and once given up, the way to hand on the
/// messages that came too late for this session.
pub trait Place: Send + 'static {
    /// Frees the place; returns what hands a late message on to the next session.
    fn release(self: Box<Self>) -> Box<dyn Fn(PathBuf, Msg) + Send>;
}

impl From<watch::Event> for Msg {
    fn from(e: watch::Event) -> Self {
        match e {
            watch::Event::Changes(c) => Msg::FsChanges(c),
            watch::Event::GitChanged => Msg::GitChanged,
        }
    }
}

impl Msg {
    /// Whether this message brings a project without a session to life.
    pub fn starts_session(&self) -> bool {
        matches!(
            self,
            Msg::Event { .. }
                | Msg::Watch { .. }
                | Msg::Checkpoint { .. }
                | Msg::Reset { .. }
                | Msg::Hook { .. }
                | Msg::Report { .. }
        )
    }

    /// Answers a message for a project with no live session (dropping the reply of those
    /// that cannot be answered that way, which the caller reports as "shutting down").
    pub fn answer_not_live(self, root: &Path) {
        match self {
            Msg::Status { reply } => {
                let _ = reply.send(not_live(root));
            }
            Msg::Unwatch { reply } => {
                let _ = reply.send(EndReply { root: root.to_path_buf(), ended_session: None, new_session: None });
            }
            Msg::Shutdown { reply } => {
                let _ = reply.send(());
            }
            Msg::Event { reply: Some(reply), .. } => {
                let _ = reply.send(Err("ccmemd is shutting down".into()));
            }
            Msg::Context { reply, .. } => {
                let _ = reply.send(ContextReply {
                    context: format!("No live ccmem session for {} yet.", root.display()),
                    conversation_id: None,
                });
            }
            _ => {}
        }
    }
}

/// The status of a project without a live session.
pub fn not_live(root: &Path) -> ProjectStatus {
    ProjectStatus {
        root: root.to_path_buf(),
        live: false,
        session: None,
        expires_in_secs: None,
        unsaved_changes: false,
        warnings: Vec::new(),
        watch: None,
    }
}

enum Flow {
    Continue,
    End(EndReason, Option<oneshot::Sender<EndReply>>),
    Shutdown(oneshot::Sender<()>),
}

/// A live project.
pub struct Project {
    s: Session,
    dirty: bool,
    deadline: Instant,
    errors: Vec<String>,
    exclude_done: bool,
    ctx: Arc<Ctx>,
    watcher: Option<watch::Handle>,
    /// Files changed while the daemon was not running count from here.
    changed_since: Option<std::time::SystemTime>,
    /// Facts and goals (seed 002), kept beyond sessions.
    memory: Memory,
    /// Who last counted a change to each file, and when: the agent's hook and the watcher
    /// report the same edit, which must count once.
    recent_edits: std::collections::HashMap<String, (Instant, bool)>,
    /// Size of `recent_edits` at which it is next pruned.
    prune_recent_at: usize,
    /// The latest hook deliveries (`hooks::Hook::delivery`), newest last: an event
    /// delivered twice (the plugin and `hooks install` both in place) counts once.
    deliveries: std::collections::VecDeque<String>,
    /// The last SessionStart (conversation, source, when): the same one again within
    /// [`SAME_START`] is a second copy, and gets no second context.
    last_start: Option<(String, String, Instant)>,
    /// Bumped on every change: a checkpoint clears "unsaved" only if nothing changed meanwhile.
    version: u64,
    /// The background job (checkpoint or git refresh) in flight; one at a time.
    /// Polled by the task's own loop: a job never sends into the task's mailbox, which a
    /// burst of events can fill while the task waits for that very job.
    job: Option<tokio::task::JoinHandle<(u64, JobResult)>>,
    /// Sequence of the last job started, and of the last result applied.
    seq: u64,
    applied: u64,
    /// Asked for while a job was running.
    queued_checkpoint: Option<(CheckpointReason, CheckpointType)>,
    queued_git: bool,
    /// The task's loop is running (jobs are started only then).
    running: bool,
    /// Marker comments of the files read for the report; lent to the job that writes it.
    comments: Option<CommentCache>,
    /// The project's `.claude/ccmem.toml`.
    overrides: crate::config::ProjectConfig,
    /// Why that file was not used, for status.
    config_error: Option<String>,
    /// The last activity (what the expiry counts from).
    active_at: Instant,
    /// The transcript read in flight (one at a time): the conversation, and the digest lent
    /// to it with what it found.
    reading: Option<tokio::task::JoinHandle<TranscriptRead>>,
    /// Reads asked for while one was running, in order (a few at most).
    read_next: std::collections::VecDeque<ReadJob>,
    /// A checkpoint that waits for the transcript read in flight (it should hold its words).
    after_read: Option<(CheckpointReason, CheckpointType)>,
    /// Hashes of assistant texts already scanned for intents (the Stop payload's message is
    /// also in the transcript), so that a `[DONE: …]` completes one goal, not two.
    scanned: std::collections::VecDeque<u64>,
}

/// A transcript to read: a conversation's own (read on from where its digest stopped), or a
/// subagent's (read once, for the intents in its words).
#[derive(Debug, Clone, PartialEq)]
struct ReadJob {
    conversation: String,
    path: String,
    subagent: bool,
}

/// Reads waiting at most: more are dropped (the next Stop reads the conversation again).
const READS_QUEUED: usize = 8;

/// A finished transcript read.
type TranscriptRead = (ReadJob, ccmem_proto::session::Digest, std::io::Result<crate::agent::transcript::Delta>);

/// Waits for a background read, or forever when there is none (for `select!`).
async fn finished<T>(job: &mut Option<tokio::task::JoinHandle<T>>) -> Option<T> {
    match job {
        Some(h) => h.await.ok(),
        None => std::future::pending().await,
    }
}

/// An agent's report and the watcher's sighting of one edit arrive within this of each other.
const SAME_EDIT: Duration = Duration::from_secs(2);

impl Project {
    /// A new session for `root`.
    pub async fn open(root: PathBuf, ctx: Arc<Ctx>) -> Self {
        let s = new_session(root, ctx.clone()).await;
        tracing::info!(project = %s.project_root.display(), session = %s.session_id, "session started");
        let deadline = Instant::now() + ctx.live.borrow().session_ttl;
        Self::with(s, true, deadline, None, ctx)
    }

    /// A session restored from the state dir, with `remaining` inactivity left.
    pub fn restored(s: Session, remaining: Duration, ctx: Arc<Ctx>) -> Self {
        let changed_since = if s.saved_at_ms > 0 {
            Some(std::time::UNIX_EPOCH + Duration::from_millis(s.saved_at_ms as u64))
        } else {
            crate::clock::parse_iso(&s.last_updated).map(std::time::SystemTime::from)
        };
        Self::with(s, false, Instant::now() + remaining, changed_since, ctx)
    }

    fn with(
        s: Session,
        dirty: bool,
        deadline: Instant,
        changed_since: Option<std::time::SystemTime>,
        ctx: Arc<Ctx>,
    ) -> Self {
        let active_at = deadline.checked_sub(ctx.live.borrow().session_ttl).unwrap_or_else(Instant::now);
        Self {
            s,
            dirty,
            deadline,
            errors: Vec::new(),
            exclude_done: false,
            ctx,
            watcher: None,
            changed_since,
            memory: Memory::default(),
            recent_edits: Default::default(),
            deliveries: Default::default(),
            last_start: None,
            prune_recent_at: RECENT_EDITS,
            version: 0,
            job: None,
            seq: 0,
            applied: 0,
            queued_checkpoint: None,
            queued_git: false,
            running: false,
            comments: Some(CommentCache::default()),
            overrides: Default::default(),
            config_error: None,
            active_at,
            reading: None,
            read_next: Default::default(),
            after_read: None,
            scanned: Default::default(),
        }
    }

    /// Serves messages and timers until the session ends or the daemon stops. `mailbox` is
    /// this task's own, for its file watcher to write to.
    pub async fn run(mut self, mut rx: mpsc::Receiver<Msg>, mailbox: mpsc::Sender<Msg>, place: Box<dyn Place>) {
        let (ctx, root) = (self.ctx.clone(), self.s.project_root.clone());
        self.memory = tokio::task::spawn_blocking(move || ctx.store.load_memory(&root)).await.unwrap_or_default();
        let root = self.s.project_root.clone();
        match tokio::task::spawn_blocking(move || crate::config::project(&root)).await {
            Ok(Ok(p)) => self.overrides = p,
            Ok(Err(e)) => {
                tracing::warn!(project = %self.s.project_root.display(), error = %e, "project configuration ignored");
                self.config_error = Some(e);
            }
            Err(_) => {}
        }
        self.running = true;
        self.ctx.ports.kick(&self.s.project_root);
        let mut ignore = self.ctx.live.borrow().watch_ignore.clone();
        ignore.extend(self.overrides.watch_ignore.iter().cloned());
        self.watcher = Some(watch::spawn(
            self.s.project_root.clone(),
            mailbox,
            self.ctx.watch.clone(),
            self.changed_since.take(),
            ignore,
        ));
        self.deadline = self.active_at + self.ttl();
        let mut live = self.ctx.live.clone();
        let period = self.checkpoint_interval();
        let mut tick = tokio::time::interval_at(Instant::now() + period, period);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let expiry = tokio::time::sleep_until(self.deadline);
        tokio::pin!(expiry);
        let flow = loop {
            tokio::select! {
                msg = rx.recv() => {
                    let Some(msg) = msg else { break Flow::Continue };
                    match self.handle(msg).await {
                        Flow::Continue => expiry.as_mut().reset(self.deadline),
                        stop => break stop,
                    }
                }
                _ = tick.tick() => {
                    if self.dirty {
                        self.checkpoint_soon(CheckpointReason::Automatic, CheckpointType::Periodic);
                    } else {
                        tracing::debug!(project = %self.s.project_root.display(), "periodic tick: nothing changed");
                    }
                }
                done = finished(&mut self.job) => self.job_finished(done),
                read = finished(&mut self.reading) => {
                    self.reading = None;
                    self.transcript_read(read).await;
                }
                _ = &mut expiry => break Flow::End(EndReason::Expired, None),
                Ok(()) = live.changed() => {
                    // A reload: the new period and TTL count from now and from the last activity.
                    let period = self.checkpoint_interval();
                    tick = tokio::time::interval_at(Instant::now() + period, period);
                    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
                    self.deadline = self.active_at + self.ttl();
                    expiry.as_mut().reset(self.deadline);
                }
            }
        };
        // From here on, senders wait for this task to be gone and then start a new session.
        rx.close();
        // Every watch is released with the watcher.
        self.watcher = None;
        let root = self.s.project_root.clone();
        let shutting_down = match flow {
            Flow::End(reason, reply) => {
                let ended = self.end_session(reason).await;
                if let Some(reply) = reply {
                    let _ = reply.send(EndReply { root: root.clone(), ended_session: Some(ended), new_session: None });
                }
                false
            }
            Flow::Shutdown(reply) => {
                self.finish_reads().await;
                self.settle_job().await;
                if self.dirty {
                    self.checkpoint(CheckpointReason::Automatic, CheckpointType::EventDriven).await;
                }
                let _ = reply.send(());
                true
            }
            Flow::Continue => true,
        };
        let hand_on = place.release();
        // Messages that arrived before the mailbox closed belong to the next session.
        while let Ok(msg) = rx.try_recv() {
            if shutting_down {
                msg.answer_not_live(&root);
            } else {
                hand_on(root.clone(), msg);
            }
        }
    }

    async fn handle(&mut self, msg: Msg) -> Flow {
        match msg {
            Msg::Report { write, reply } => {
                let _ = reply.send(self.memory_report(write).await);
            }
            Msg::Facts { edit, reply } => {
                let said = match edit {
                    None => Ok(None),
                    Some(edit) => match self.memory.apply(&edit, &crate::clock::iso(chrono::Utc::now())) {
                        Ok(said) => {
                            self.save_facts().await;
                            Ok(Some(said))
                        }
                        Err(e) => Err(e),
                    },
                };
                let _ = reply.send((self.memory.clone(), said));
            }
            Msg::Event { event, reply } => {
                let r = session::apply(&mut self.s, event, chrono::Utc::now());
                if r.is_ok() {
                    self.activity();
                } else if let Err(e) = &r {
                    tracing::debug!(project = %self.s.project_root.display(), error = %e, "event refused");
                }
                if let Some(reply) = reply {
                    let _ = reply.send(r);
                }
            }
            Msg::Watch { reply } => {
                session::touch(&mut self.s, chrono::Utc::now());
                self.activity();
                let _ = reply.send(self.summary());
            }
            Msg::Status { reply } => {
                let _ = reply.send(self.status());
            }
            Msg::Summary { conversations, reply } => {
                let _ = reply.send(if conversations { self.summary_with_conversations() } else { self.summary() });
            }
            Msg::Checkpoint { reason, note, reply } => {
                if let Some(note) = note {
                    let _ = session::apply(&mut self.s, SessionEvent::Note { text: note }, chrono::Utc::now());
                }
                session::touch(&mut self.s, chrono::Utc::now());
                self.activity();
                let reason = match reason {
                    RequestedReason::Manual => CheckpointReason::Manual,
                    RequestedReason::PhaseComplete => CheckpointReason::PhaseComplete,
                };
                let out = self.checkpoint(reason, CheckpointType::UserRequested).await;
                let r = match out.written {
                    Some(checkpoint) => {
                        Ok(CheckpointReply { session_id: self.s.session_id.clone(), checkpoint, warnings: out.errors })
                    }
                    None => Err(out.errors.join("; ")),
                };
                let _ = reply.send(r);
            }
            Msg::Reset { reply } => {
                let ended = self.end_session(EndReason::Reset).await;
                self.s = new_session(self.s.project_root.clone(), self.ctx.clone()).await;
                self.activity();
                // The scanner only speaks on changes: the new session must hear the servers.
                self.ctx.ports.kick(&self.s.project_root);
                tracing::info!(project = %self.s.project_root.display(), session = %self.s.session_id, "session started");
                let _ = reply.send(EndReply {
                    root: self.s.project_root.clone(),
                    ended_session: Some(ended),
                    new_session: Some(self.s.session_id.clone()),
                });
            }
            Msg::Unwatch { reply } => return Flow::End(EndReason::Unwatched, Some(reply)),
            Msg::FsChanges(changes) => {
                let now = chrono::Utc::now();
                let large = changes.len() > crate::heap::LARGE_BATCH;
                let at = Instant::now();
                let task_list = changes.iter().any(|(p, _)| crate::observe::tasks::is_task_list(p));
                for (path, change) in changes {
                    if change != watch::Change::Deleted {
                        // Already counted from the agent's own report of this edit.
                        if self.recent_edits.get(&path).is_some_and(|(t, agent)| *agent && at - *t < SAME_EDIT) {
                            continue;
                        }
                        // A burst (a checkout, a build) is not the agent's doing: remembering
                        // each of its files, to match a later hook, would only cost memory.
                        if !large {
                            self.note_edit(&path, at, false);
                        }
                    }
                    let event = match change {
                        watch::Change::Created => {
                            SessionEvent::FileEdited { path, summary: None, workflow: None, created: true }
                        }
                        watch::Change::Modified => {
                            SessionEvent::FileEdited { path, summary: None, workflow: None, created: false }
                        }
                        watch::Change::Deleted => SessionEvent::FileDeleted { path },
                    };
                    let _ = session::apply_quietly(&mut self.s, event, now);
                }
                session::touch(&mut self.s, now);
                self.activity();
                if task_list {
                    // The plan moved: the checkpoint and the report follow it now.
                    self.checkpoint_soon(CheckpointReason::Automatic, CheckpointType::EventDriven);
                }
                if large {
                    tokio::task::spawn_blocking(crate::heap::trim);
                }
            }
            Msg::Hook { hook, reply } => self.hook(hook, reply).await,
            Msg::Context { budget, reply } => {
                // Asked for by a person or a script: the reads already asked for come first
                // (a SessionStart does not wait for them).
                self.finish_reads().await;
                let _ = reply.send(self.context(None, false, budget).await);
            }
            Msg::GitChanged => {
                self.activity();
                self.git_soon();
            }
            Msg::Servers(listening) => {
                // A change, not activity: a server left running does not keep a session alive.
                if environment::apply_scan(&mut self.s, &listening, chrono::Utc::now()) {
                    self.version += 1;
                    self.dirty = true;
                }
            }
            Msg::Shutdown { reply } => return Flow::Shutdown(reply),
        }
        Flow::Continue
    }

    async fn hook(&mut self, hook: hooks::Hook, reply: Option<oneshot::Sender<HookReply>>) {
        if let Some(key) = &hook.delivery {
            if self.deliveries.contains(key) {
                tracing::debug!(project = %self.s.project_root.display(), key, "hook delivered twice; counted once");
                if let Some(reply) = reply {
                    let _ = reply.send(HookReply::default());
                }
                return;
            }
            if self.deliveries.len() >= DELIVERIES {
                self.deliveries.pop_front();
            }
            self.deliveries.push_back(key.clone());
        }
        // SessionStart has no id of its own: a second copy is the same conversation and
        // source within moments. The agent gets the context once.
        let second_start = match &hook.kind {
            hooks::Kind::SessionStart { source } => {
                let key = (hook.conversation.clone().unwrap_or_default(), source.clone());
                let again = self
                    .last_start
                    .as_ref()
                    .is_some_and(|(c, s, at)| (c, s) == (&key.0, &key.1) && at.elapsed() < SAME_START);
                self.last_start = Some((key.0, key.1, Instant::now()));
                again
            }
            _ => false,
        };
        if second_start {
            if let Some(reply) = reply {
                let _ = reply.send(HookReply::default());
            }
            return;
        }
        let now = chrono::Utc::now();
        let fx = hooks::apply(&mut self.s, &hook, now);
        if let Some(e) = &fx.agent_edit {
            let at = Instant::now();
            if self.recent_edits.get(&e.rel).is_some_and(|(t, agent)| !*agent && at - *t < SAME_EDIT) {
                session::annotate(&mut self.s, &e.rel, &e.summary, &e.tool, e.created);
            } else {
                let edit = SessionEvent::FileEdited {
                    path: e.rel.clone(),
                    summary: Some(e.summary.clone()),
                    workflow: Some(e.tool.clone()),
                    created: e.created,
                };
                let _ = session::apply_quietly(&mut self.s, edit, now);
            }
            self.note_edit(&e.rel, at, true);
        }
        self.activity();
        // Answer first: the agent waits for this; intents and checkpoints can follow.
        if let Some(reply) = reply {
            let additional_context = match &hook.kind {
                hooks::Kind::SessionStart { source } => {
                    self.context(hook.conversation.as_deref(), source == "compact", None).await.context
                }
                _ => String::new(),
            };
            let _ = reply.send(HookReply { additional_context });
        }
        if let Some(text) = fx.intents_in {
            self.intents(&text).await;
        }
        if let Some(conv) = &hook.conversation {
            if let Some(path) = fx.read_transcript {
                self.read_transcript(ReadJob { conversation: conv.clone(), path, subagent: false });
            }
            if let Some(path) = fx.read_agent_transcript {
                self.read_transcript(ReadJob { conversation: conv.clone(), path, subagent: true });
            }
        }
        if let Some((reason, kind)) = fx.checkpoint {
            // In the background: the next event (a SessionStart waiting for its context, say)
            // must not wait for git and fsync. After the transcript read in flight, if any,
            // so that it holds the agent's last words.
            if self.reading.is_some() {
                self.after_read = Some((reason, kind));
            } else {
                self.checkpoint_soon(reason, kind);
            }
        }
    }

    /// Reads what was appended to a conversation's transcript (or a subagent's whole one), on
    /// the blocking pool; the result comes back through [`Self::transcript_read`].
    fn read_transcript(&mut self, job: ReadJob) {
        if !Path::new(&job.path).is_absolute() {
            return;
        }
        if self.reading.is_some() {
            if !self.read_next.contains(&job) && self.read_next.len() < READS_QUEUED {
                self.read_next.push_back(job);
            }
            return;
        }
        let digest = match job.subagent {
            true => Default::default(),
            false => match self.s.conversations.iter().find(|c| c.id == job.conversation) {
                Some(c) => c.digest.clone(),
                None => return,
            },
        };
        let mut digest = digest;
        self.reading = Some(tokio::task::spawn_blocking(move || {
            let r =
                crate::agent::transcript::read(Path::new(&job.path), &mut digest, crate::agent::transcript::MAX_READ);
            (job, digest, r)
        }));
    }

    async fn transcript_read(&mut self, read: Option<TranscriptRead>) {
        if let Some((job, digest, result)) = read {
            match result {
                Ok(delta) => {
                    // A subagent's transcript gives its intents only: its last words and
                    // findings are not the conversation's.
                    if !job.subagent {
                        if let Some(c) = self.s.conversations.iter_mut().find(|c| c.id == job.conversation) {
                            c.digest = digest;
                            if c.first_prompt.is_empty() {
                                if let Some(p) = delta.first_prompt {
                                    c.first_prompt = ccmem_proto::session::truncate_chars(&p, 500);
                                }
                            }
                            c.tool_calls = c.tool_calls.max(delta.tool_calls);
                        }
                    }
                    for text in &delta.texts {
                        self.intents(text).await;
                    }
                    self.version += 1;
                    self.dirty = true;
                }
                Err(e) => tracing::debug!(project = %self.s.project_root.display(), error = %e, "transcript not read"),
            }
        }
        if let Some(job) = self.read_next.pop_front() {
            self.read_transcript(job);
        } else if let Some((reason, kind)) = self.after_read.take() {
            self.checkpoint_soon(reason, kind);
        }
    }

    fn note_edit(&mut self, rel: &str, at: Instant, by_agent: bool) {
        // Pruned when it has doubled since the last pruning: during a burst every entry is
        // recent, and pruning at a fixed size would scan the whole map on every edit.
        if self.recent_edits.len() > self.prune_recent_at {
            self.recent_edits.retain(|_, (t, _)| at - *t < SAME_EDIT);
            self.prune_recent_at = (2 * self.recent_edits.len()).max(RECENT_EDITS);
        }
        self.recent_edits.insert(rel.to_string(), (at, by_agent));
    }

    /// `[REMEMBER: …]`, `[GOAL: …]` and `[DONE: …]` from the assistant's words.
    async fn intents(&mut self, text: &str) {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.trim().hash(&mut h);
        let hash = h.finish();
        if self.scanned.contains(&hash) {
            return;
        }
        self.scanned.push_back(hash);
        if self.scanned.len() > 256 {
            self.scanned.pop_front();
        }
        let found = crate::agent::intents::detect(text);
        if found == facts::Intents::default() {
            return;
        }
        let now = crate::clock::iso(chrono::Utc::now());
        let m = &mut self.memory;
        for (fact, global) in found.remember {
            let fact = crate::text::clean(&fact);
            if fact.is_empty() {
                continue;
            }
            if global {
                self.ctx.global.add(fact).await;
            } else if !m.facts.contains(&fact) {
                m.facts.push(fact);
            }
        }
        for (text, deadline) in found.goals {
            let text = crate::text::clean(&text);
            if !text.is_empty() && !m.goals.iter().any(|g| g.text == text) {
                m.goals.push(facts::Goal {
                    text,
                    deadline: deadline.map(|d| crate::text::clean(&d)),
                    created_at: now.clone(),
                });
            }
        }
        for done in found.done {
            if let Some(i) = facts::best_match(&m.goals, &done) {
                let g = m.goals.remove(i);
                m.completed_goals.push(facts::CompletedGoal { text: g.text, completed_at: now.clone() });
            }
        }
        // Stored beyond the soft caps (applied when shown), but not without bound.
        let excess = m.facts.len().saturating_sub(500);
        m.facts.drain(..excess);
        let excess = m.completed_goals.len().saturating_sub(200);
        m.completed_goals.drain(..excess);
        let excess = m.goals.len().saturating_sub(200);
        m.goals.drain(..excess);
        self.save_facts().await;
    }

    async fn save_facts(&self) {
        let (ctx, root, copy) = (self.ctx.clone(), self.s.project_root.clone(), self.memory.clone());
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || ctx.store.save_memory(&root, &copy)).await {
            tracing::error!(project = %self.s.project_root.display(), error = %e, "cannot save facts and goals");
        }
    }

    /// The resume context for `conversation` (else the most recent one).
    async fn context(&self, conversation: Option<&str>, after_compact: bool, budget: Option<usize>) -> ContextReply {
        let global = self.ctx.global.list().await;
        let memories = self.ctx.memories.relevant(self.s.project_root.clone(), self.topics(), MEMORIES_SHOWN).await;
        let mut s = self.s.clone();
        let now = chrono::Utc::now();
        session::refresh(&mut s, now);
        checkpoint::refresh_from_disk(&mut s);
        // A conversation that is starting is pointed at the one before it; the work carried
        // is its own when it has done some (a resume, a compaction), else that one's.
        let resume = hooks::resumable(&s, self.ttl(), now, conversation).map(|c| c.id.clone());
        let asking = conversation.and_then(|id| s.conversations.iter().find(|c| c.id == id)).filter(|c| c.did_work());
        let conv = asking.or_else(|| resume.as_deref().and_then(|id| s.conversations.iter().find(|c| c.id == id)));
        // To resume: the last conversation that did work, this session's, else the ended
        // session's (a new conversation that did nothing since is not it), else any.
        let worked = |id: &String| s.conversations.iter().any(|c| &c.id == id && c.did_work());
        let previous = s
            .previous
            .as_ref()
            .and_then(|p| p.conversation.as_ref())
            .map(|c| c.id.clone())
            .filter(|id| Some(id.as_str()) != conversation);
        let resume = resume.clone().filter(worked).or(previous).or(resume);
        let text = context::build(
            &context::Input {
                session: &s,
                conversation: conv,
                resume_id: resume.as_deref(),
                memory: &self.memory,
                global_facts: &global,
                after_compact,
                memories: &memories,
                now,
            },
            budget.unwrap_or_else(|| self.context_budget()),
        );
        ContextReply { context: text, conversation_id: resume.clone() }
    }

    /// Words naming what the session is about, to find relevant memories: its patterns
    /// (`auth`, `src/api/*`), the active task and the recent commands.
    fn topics(&self) -> Vec<String> {
        let s = &self.s;
        let text = s
            .patterns_detected
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(s.context_snapshot.active_task.as_str()))
            .chain(s.commands_executed.iter().rev().take(5).map(|c| c.command.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        let mut words: Vec<String> =
            crate::memories::search::tokens(&text).into_iter().filter(|w| w.chars().count() > 2).collect();
        words.sort();
        words.dedup();
        words
    }

    fn activity(&mut self) {
        self.version += 1;
        self.dirty = true;
        self.active_at = Instant::now();
        self.deadline = self.active_at + self.ttl();
    }

    /// Session TTL: the project's own, else the configuration's.
    fn ttl(&self) -> Duration {
        self.overrides.session_ttl.unwrap_or_else(|| self.ctx.live.borrow().session_ttl)
    }

    fn checkpoint_interval(&self) -> Duration {
        self.overrides.checkpoint_interval.unwrap_or_else(|| self.ctx.live.borrow().checkpoint_interval)
    }

    fn context_budget(&self) -> usize {
        self.overrides.context_budget.unwrap_or_else(|| self.ctx.live.borrow().context_budget)
    }

    /// Starts a checkpoint in the background (or queues it behind the job in flight).
    fn checkpoint_soon(&mut self, reason: CheckpointReason, kind: CheckpointType) {
        if self.job.is_some() || !self.running {
            self.queued_checkpoint = Some((reason, kind));
            return;
        }
        if kind == CheckpointType::EventDriven {
            // The agent stopped or compacts: the next checkpoint will hold fresh servers.
            self.ctx.ports.kick(&self.s.project_root);
        }
        let (mut copy, ctx, mut exclude_done, version) =
            (self.s.clone(), self.ctx.clone(), self.exclude_done, self.version);
        let mut comments = self.comments.take().unwrap_or_default();
        self.spawn_job(move || {
            let out = checkpoint::run(&mut copy, reason, kind, &ctx.store, &mut exclude_done, &mut comments);
            JobResult::Checkpoint { copy, out, exclude_done, version, comments }
        });
    }

    /// Refreshes git in the background (or after the job in flight).
    fn git_soon(&mut self) {
        if self.job.is_some() || !self.running {
            self.queued_git = true;
            return;
        }
        let mut copy = self.s.clone();
        self.spawn_job(move || {
            checkpoint::refresh_git(&mut copy);
            JobResult::Git { copy }
        });
    }

    fn spawn_job(&mut self, work: impl FnOnce() -> JobResult + Send + 'static) {
        self.seq += 1;
        let seq = self.seq;
        self.job = Some(tokio::task::spawn_blocking(move || (seq, work())));
    }

    /// A background job finished (or failed: `None`): its result, then what was queued
    /// behind it.
    fn job_finished(&mut self, done: Option<(u64, JobResult)>) {
        self.job = None;
        if let Some((seq, result)) = done {
            self.apply_job(seq, result);
        }
        self.run_queued();
    }

    /// Waits for the job in flight and takes its result, without starting what was queued
    /// (the caller does the work itself).
    async fn settle_job(&mut self) {
        if let Some(job) = self.job.take() {
            if let Ok((seq, result)) = job.await {
                self.apply_job(seq, result);
            }
        }
    }

    fn apply_job(&mut self, seq: u64, result: JobResult) {
        // A synchronous checkpoint since then already holds newer data.
        if seq > self.applied {
            self.applied = seq;
            match result {
                JobResult::Checkpoint { copy, out, exclude_done, version, comments } => {
                    self.comments = Some(comments);
                    self.take_git(&copy);
                    self.s.last_checkpoint = copy.last_checkpoint;
                    self.s.saved_at_ms = copy.saved_at_ms;
                    self.exclude_done = exclude_done;
                    if out.written.is_some() && version == self.version {
                        self.dirty = false;
                    }
                    self.report(&out);
                }
                JobResult::Git { copy } => self.take_git(&copy),
            }
        }
    }

    fn run_queued(&mut self) {
        if let Some((reason, kind)) = self.queued_checkpoint.take() {
            // A periodic tick that came while a slow checkpoint ran: only if something
            // changed since (else the file would be rewritten with nothing new).
            if self.dirty || kind != CheckpointType::Periodic {
                self.checkpoint_soon(reason, kind);
            }
        } else if std::mem::take(&mut self.queued_git) {
            self.git_soon();
        }
    }

    fn take_git(&mut self, copy: &Session) {
        self.s.git = copy.git.clone();
        self.s.git_start = copy.git_start.clone();
        // Outside git the counts are the agent's, kept by the hooks since the copy was made.
        if copy.git_start.is_some() {
            self.s.activity_summary.lines_added = copy.activity_summary.lines_added;
            self.s.activity_summary.lines_deleted = copy.activity_summary.lines_deleted;
            self.s.activity_summary.commits = copy.activity_summary.commits;
        }
    }

    fn report(&mut self, out: &checkpoint::Outcome) {
        let root = self.s.project_root.display().to_string();
        match &out.written {
            Some(info) => tracing::debug!(project = %root, bytes = info.bytes, "checkpoint written"),
            None => tracing::warn!(project = %root, "checkpoint not written; retrying at the next one"),
        }
        for e in &out.errors {
            tracing::warn!(project = %root, "{e}");
        }
        self.errors = out.errors.clone();
    }

    /// Writes a checkpoint now and waits for it (after any background job). The session is
    /// copied to the blocking pool and the copy (with fresh git data) taken back, so a failure
    /// mid-way loses nothing.
    async fn checkpoint(&mut self, reason: CheckpointReason, kind: CheckpointType) -> checkpoint::Outcome {
        self.settle_job().await;
        // This checkpoint does what was queued (a later one, a git refresh) with newer data.
        self.queued_checkpoint = None;
        self.queued_git = false;
        self.seq += 1;
        self.applied = self.seq;
        let mut copy = self.s.clone();
        let ctx = self.ctx.clone();
        let mut exclude_done = self.exclude_done;
        let mut comments = self.comments.take().unwrap_or_default();
        let job = tokio::task::spawn_blocking(move || {
            let out = checkpoint::run(&mut copy, reason, kind, &ctx.store, &mut exclude_done, &mut comments);
            (copy, out, exclude_done, comments)
        });
        let out = match job.await {
            Ok((copy, out, exclude_done, comments)) => {
                self.s = copy;
                self.exclude_done = exclude_done;
                self.comments = Some(comments);
                out
            }
            Err(e) => checkpoint::Outcome { written: None, errors: vec![format!("checkpoint failed: {e}")] },
        };
        if out.written.is_some() {
            self.dirty = false;
        }
        self.report(&out);
        out
    }

    /// Builds the report on the blocking pool (it reads files) and writes it if asked.
    async fn memory_report(&mut self, write: bool) -> Result<ReportReply, String> {
        let mut copy = self.s.clone();
        let mut comments = self.comments.take().unwrap_or_default();
        let job = tokio::task::spawn_blocking(move || {
            let now = chrono::Utc::now();
            session::refresh(&mut copy, now);
            let tasks = checkpoint::refresh_from_disk(&mut copy);
            let m = crate::report::session_memory::build(&copy, tasks.as_ref(), &mut comments, now);
            let written = write.then(|| crate::report::session_memory::write(&copy.project_root, &m));
            (m, written, comments)
        });
        let (m, written, comments) = job.await.map_err(|e| format!("building the report failed: {e}"))?;
        self.comments = Some(comments);
        let path = match written {
            Some(Ok(_)) => Some(self.s.project_root.join(crate::report::session_memory::REPORT_FILE)),
            Some(Err(e)) => {
                return Err(format!(
                    "cannot write {}: {e}",
                    self.s.project_root.join(crate::report::session_memory::REPORT_FILE).display()
                ))
            }
            None => None,
        };
        Ok(ReportReply { markdown: ccmem_proto::report::serialize(&m), path })
    }

    /// Waits for the transcript reads asked for, so that what is saved holds their words
    /// (reads are bounded: regular files only, at most [`crate::agent::transcript::MAX_READ`]).
    async fn finish_reads(&mut self) {
        while let Some(job) = self.reading.take() {
            let read = job.await.ok();
            self.transcript_read(read).await;
        }
    }

    /// Final checkpoint, archive, and the tracker forgotten. Returns the ended session's id.
    async fn end_session(&mut self, reason: EndReason) -> String {
        self.finish_reads().await;
        let (why, kind) = match reason {
            EndReason::Expired | EndReason::Restored => (CheckpointReason::Automatic, CheckpointType::EventDriven),
            EndReason::Reset | EndReason::Unwatched => (CheckpointReason::Manual, CheckpointType::UserRequested),
        };
        self.checkpoint(why, kind).await;
        let archived =
            ArchivedSession { ended: reason, ended_at: crate::clock::iso(chrono::Utc::now()), session: self.s.clone() };
        let ctx = self.ctx.clone();
        let id = archived.session.session_id.clone();
        let root = archived.session.project_root.clone();
        let done = tokio::task::spawn_blocking(move || {
            ctx.store.archive(&archived)?;
            ctx.store.remove_tracker(&archived.session.project_root)
        })
        .await;
        match done {
            Ok(Ok(())) => {
                tracing::info!(project = %root.display(), session = %id, reason = ?reason, "session ended and archived")
            }
            Ok(Err(e)) => {
                tracing::error!(project = %root.display(), session = %id, error = %e, "cannot archive the session")
            }
            Err(e) => tracing::error!(project = %root.display(), session = %id, error = %e, "archiving failed"),
        }
        self.dirty = false;
        id
    }

    fn expires_in(&self) -> f64 {
        self.deadline.saturating_duration_since(Instant::now()).as_secs_f64()
    }

    fn status(&self) -> ProjectStatus {
        let mut s = self.s.clone();
        session::refresh(&mut s, chrono::Utc::now());
        checkpoint::refresh_from_disk(&mut s);
        ProjectStatus {
            root: s.project_root.clone(),
            live: true,
            session: Some(s),
            expires_in_secs: Some(self.expires_in()),
            unsaved_changes: self.dirty,
            warnings: self.warnings(),
            watch: self.watch_status(),
        }
    }

    fn watch_status(&self) -> Option<ccmem_proto::api::WatchStatus> {
        use std::sync::atomic::Ordering::Relaxed;
        let st = &self.watcher.as_ref()?.stats;
        Some(ccmem_proto::api::WatchStatus {
            ready: st.ready.load(Relaxed),
            directories_watched: st.dirs_watched.load(Relaxed) as u64,
            directories_polled: st.dirs_polled.load(Relaxed) as u64,
            files: st.files.load(Relaxed) as u64,
            rescans: st.rescans.load(Relaxed),
            capped: st.capped.load(Relaxed),
        })
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.errors.clone();
        w.extend(self.config_error.clone());
        if self.watch_status().is_some_and(|st| st.directories_polled > 0) {
            w.push(watch::limit_warning(&self.ctx.watch));
        }
        if self.watch_status().is_some_and(|st| st.capped) {
            w.push(watch::cap_warning(&self.s.project_root, &self.ctx.watch));
        }
        w
    }

    fn summary(&self) -> ProjectSummary {
        ProjectSummary {
            root: self.s.project_root.clone(),
            project_name: self.s.project_name.clone(),
            session_id: self.s.session_id.clone(),
            created_at: self.s.created_at.clone(),
            last_activity: self.s.last_activity.clone(),
            expires_in_secs: self.expires_in(),
            files_modified: self.s.files_modified.len() as u64,
            commands: self.s.commands_executed.len() as u64,
            last_checkpoint: self.s.last_checkpoint.clone(),
            warnings: self.warnings(),
            conversations: Vec::new(),
        }
    }

    /// The summary with the session's conversations, for `history`.
    fn summary_with_conversations(&self) -> ProjectSummary {
        let resume = hooks::resumable(&self.s, self.ttl(), chrono::Utc::now(), None).map(|c| c.id.as_str());
        ProjectSummary { conversations: ccmem_proto::api::ConversationEntry::list(&self.s, resume), ..self.summary() }
    }
}

/// The resume context of a project without a live session: what its last session left
/// (its last working conversation, todos, failures, last words). Reads files: for the
/// blocking pool.
pub fn ended_context(ctx: &Ctx, root: &Path, global_facts: &[String], budget: Option<usize>) -> ContextReply {
    let Some(handoff) = ctx.store.last_archived(root).and_then(|a| session::handoff(&a)) else {
        return ContextReply {
            context: format!("No live ccmem session for {} yet.", root.display()),
            conversation_id: None,
        };
    };
    let now = chrono::Utc::now();
    let mut s = session::start(root.to_path_buf(), manifest::project_name(root), String::new(), now, None);
    let conversation_id = handoff.conversation.as_ref().map(|c| c.id.clone());
    s.previous = Some(Box::new(handoff));
    let memory = ctx.store.load_memory(root);
    let budget = budget.unwrap_or_else(|| ctx.live.borrow().context_budget);
    let input = context::Input {
        session: &s,
        conversation: None,
        resume_id: None,
        memory: &memory,
        global_facts,
        after_compact: false,
        memories: &[],
        now,
    };
    ContextReply { context: context::build(&input, budget), conversation_id }
}

/// A new session: name from the manifest, an id after the project's last one, git's HEAD.
async fn new_session(root: PathBuf, ctx: Arc<Ctx>) -> Session {
    let r = root.clone();
    let job = tokio::task::spawn_blocking(move || {
        let name = manifest::project_name(&r);
        let now = chrono::Utc::now();
        let id = session::new_id(now, ctx.store.last_session_id(&r).as_deref());
        let head = git::head(&r);
        let previous = ctx.store.last_archived(&r).and_then(|a| session::handoff(&a));
        let mut s = session::start(r, name, id, now, head);
        s.previous = previous.map(Box::new);
        checkpoint::refresh_git(&mut s);
        s
    });
    match job.await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(project = %root.display(), error = %e, "could not inspect the project; starting a bare session");
            let now = chrono::Utc::now();
            let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            session::start(root, name, session::new_id(now, None), now, None)
        }
    }
}
