//! One project's task: the sole owner of its session.
//!
//! Everything that changes a session arrives here as a [`Msg`]; two timers run beside the
//! mailbox: the periodic checkpoint and the expiry deadline (last activity + TTL, on the
//! monotonic clock, so a wall-clock jump neither expires nor revives a session). Slow file
//! and git work goes to the blocking pool while the task waits, so messages queue in order
//! and no lock is ever held around the session.

use super::events::{ReadJob, TranscriptRead};
use super::jobs::JobResult;
use crate::report::blockers::CommentCache;
use crate::{
    agent::facts::GlobalFacts, observe::git, observe::manifest, observe::watch, session::environment,
    session::rules as session, store::Store,
};
use ccmem_proto::model::facts::Facts;
use ccmem_proto::model::session::{
    ArchivedSession, CheckpointReason, CheckpointType, EndReason, Session, SessionEvent,
};
use ccmem_proto::wire::api::{CheckpointReply, EndReply, RequestedReason};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

pub use super::msg::{not_live, FactsAnswer, ForgetLive, Msg, Place};

/// Settings every project task shares.
#[derive(Debug)]
pub struct Services {
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
    /// The socket this daemon serves, named in the projects' claims.
    pub socket: PathBuf,
    /// Every event, and each session's latest state.
    pub journal: crate::journal::Journal,
}

/// Hook deliveries remembered for spotting a second copy (both copies come within a
/// moment of each other, one per installed hook).
pub(super) const DELIVERIES: usize = 256;
/// A SessionStart of the same conversation and source within this is a second copy.
pub(super) const SAME_START: Duration = Duration::from_secs(2);
/// Recent edits remembered before the first pruning.
pub(super) const RECENT_EDITS: usize = 4096;

/// Memories named in the resume context at most.
pub(super) const MEMORIES_SHOWN: usize = 10;

pub(super) enum Flow {
    Continue,
    End(EndReason, Option<oneshot::Sender<EndReply>>),
    Shutdown(oneshot::Sender<()>),
}

/// A live project.
pub struct Project {
    pub(super) s: Session,
    pub(super) dirty: bool,
    pub(super) deadline: Instant,
    pub(super) errors: Vec<String>,
    pub(super) exclude_done: bool,
    pub(super) ctx: Arc<Services>,
    pub(super) watcher: Option<watch::Handle>,
    /// Files changed while the daemon was not running count from here.
    pub(super) changed_since: Option<std::time::SystemTime>,
    /// The root directory's identity (device, inode) when the session started: a directory
    /// made again at the same path after the project was moved away is not this project.
    pub(super) root_id: Option<(u64, u64)>,
    /// The watcher saw the project's directory deleted: nothing is written at its path again.
    pub(super) root_deleted: bool,
    /// Facts and goals (seed 002), kept beyond sessions.
    pub(super) memory: Facts,
    /// Who last counted a change to each file, and when: the agent's hook and the watcher
    /// report the same edit, which must count once.
    pub(super) recent_edits: std::collections::HashMap<String, (Instant, bool)>,
    /// Size of `recent_edits` at which it is next pruned.
    pub(super) prune_recent_at: usize,
    /// The latest hook deliveries (`hooks::Hook::delivery`), newest last: an event
    /// delivered twice (the plugin and `hooks install` both in place) counts once.
    pub(super) deliveries: std::collections::VecDeque<String>,
    /// The last SessionStart (conversation, source, when): the same one again within
    /// [`SAME_START`] is a second copy, and gets no second context.
    pub(super) last_start: Option<(String, String, Instant)>,
    /// Hooks that arrived late, held a moment to be applied in the order they were sent.
    pub(super) late: super::late::Late,
    /// Bumped on every change: a checkpoint clears "unsaved" only if nothing changed meanwhile.
    pub(super) version: u64,
    /// The `version` whose state was last journaled.
    pub(super) journaled: u64,
    /// The session's conclusions journaled already, as of `told_version`.
    pub(super) told: super::derived::Told,
    pub(super) told_version: u64,
    /// The session whose state was last journaled, and when (states go at most once per
    /// [`super::journal::STATE_EVERY`]; events carry their replays meanwhile).
    pub(super) state_journaled: Option<(String, Instant)>,
    /// The background job (checkpoint or git refresh) in flight; one at a time.
    /// Polled by the task's own loop: a job never sends into the task's mailbox, which a
    /// burst of events can fill while the task waits for that very job.
    pub(super) job: Option<tokio::task::JoinHandle<(u64, JobResult)>>,
    /// Sequence of the last job started, and of the last result applied.
    pub(super) seq: u64,
    pub(super) applied: u64,
    /// Asked for while a job was running.
    pub(super) queued_checkpoint: Option<(CheckpointReason, CheckpointType)>,
    pub(super) queued_git: bool,
    /// The agent just committed: the number of the last job started before, so that the git
    /// state of the first job started after it names the new commit in the finished work
    /// ([`crate::session::shell::commit_hash`]).
    pub(super) commit_pending: Option<u64>,
    /// The task's loop is running (jobs are started only then).
    pub(super) running: bool,
    /// Marker comments of the files read for the report; lent to the job that writes it.
    pub(super) comments: Option<CommentCache>,
    /// The project's `.claude/ccmem.toml`.
    pub(super) overrides: crate::config::ProjectConfig,
    /// Why that file was not used, for status.
    pub(super) config_error: Option<String>,
    /// The last activity (what the expiry counts from).
    pub(super) active_at: Instant,
    /// The transcript read in flight (one at a time): the conversation, and the digest lent
    /// to it with what it found.
    pub(super) reading: Option<tokio::task::JoinHandle<TranscriptRead>>,
    /// Reads asked for while one was running, in order (a few at most).
    pub(super) read_next: std::collections::VecDeque<ReadJob>,
    /// A checkpoint that waits for the transcript read in flight (it should hold its words).
    pub(super) after_read: Option<(CheckpointReason, CheckpointType)>,
    /// Taken up again at start-up (not begun by an event): its transcripts are read on.
    pub(super) restored: bool,
    /// Hashes of assistant texts already scanned for intents (the Stop payload's message is
    /// also in the transcript), so that a `[DONE: …]` completes one goal, not two.
    pub(super) scanned: std::collections::VecDeque<u64>,
    /// The handoff through git: its setting and what is known of the branch's handoffs.
    pub(super) travel: crate::travel::State,
    /// Its runs on the blocking pool (one at a time).
    pub(super) runs: super::travel::Runs,
    /// The agent stopped: the handoff written at the next checkpoint is pushed too (when the
    /// user asked for automatic pushes).
    pub(super) push_after_checkpoint: bool,
}

/// Waits for a background read, or forever when there is none (for `select!`).
pub(super) async fn finished<T>(job: &mut Option<tokio::task::JoinHandle<T>>) -> Option<T> {
    match job {
        Some(h) => h.await.ok(),
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`, or forever when there is none (for `select!`).
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// An agent's report and the watcher's sighting of one edit arrive within this of each other.
pub(super) const SAME_EDIT: Duration = Duration::from_secs(2);

impl Project {
    /// A new session for `root`.
    pub async fn open(root: PathBuf, ctx: Arc<Services>) -> Self {
        let s = new_session(root, ctx.clone()).await;
        tracing::info!(project = %s.project_root.display(), session = %s.session_id, "session started");
        let deadline = Instant::now() + ctx.live.borrow().session_ttl;
        Self::with(s, true, deadline, None, ctx)
    }

    /// A session restored from the state dir, with `remaining` inactivity left; `ahead`: it
    /// holds more than its last checkpoint, which is written again as soon as it runs.
    pub fn restored(s: Session, remaining: Duration, ahead: bool, ctx: Arc<Services>) -> Self {
        let changed_since = if s.saved_at_ms > 0 {
            Some(std::time::UNIX_EPOCH + Duration::from_millis(s.saved_at_ms as u64))
        } else {
            crate::clock::parse_iso(&s.last_updated).map(std::time::SystemTime::from)
        };
        let mut p = Self::with(s, ahead, Instant::now() + remaining, changed_since, ctx);
        p.restored = true;
        if ahead {
            p.queued_checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        p
    }

    fn with(
        s: Session,
        dirty: bool,
        deadline: Instant,
        changed_since: Option<std::time::SystemTime>,
        ctx: Arc<Services>,
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
            root_id: None,
            root_deleted: false,
            memory: Facts::default(),
            recent_edits: Default::default(),
            deliveries: Default::default(),
            last_start: None,
            late: Default::default(),
            prune_recent_at: RECENT_EDITS,
            version: 0,
            journaled: 0,
            state_journaled: None,
            told: Default::default(),
            told_version: 0,
            job: None,
            seq: 0,
            applied: 0,
            queued_checkpoint: None,
            queued_git: false,
            commit_pending: None,
            running: false,
            travel: Default::default(),
            runs: Default::default(),
            push_after_checkpoint: false,
            comments: Some(CommentCache::default()),
            overrides: Default::default(),
            config_error: None,
            active_at,
            reading: None,
            read_next: Default::default(),
            after_read: None,
            restored: false,
            scanned: Default::default(),
        }
    }

    /// Serves messages and timers until the session ends or the daemon stops. `mailbox` is
    /// this task's own, for its file watcher to write to.
    pub async fn run(mut self, mut rx: mpsc::Receiver<Msg>, mailbox: mpsc::Sender<Msg>, place: Box<dyn Place>) {
        let (ctx, root) = (self.ctx.clone(), self.s.project_root.clone());
        self.memory = tokio::task::spawn_blocking(move || ctx.store.load_facts(&root)).await.unwrap_or_default();
        self.told.seed(&self.s);
        let root = self.s.project_root.clone();
        match tokio::task::spawn_blocking(move || crate::config::project(&root)).await {
            Ok(Ok(p)) => self.overrides = p,
            Ok(Err(e)) => {
                tracing::warn!(project = %self.s.project_root.display(), error = %e, "project configuration ignored");
                self.config_error = Some(e);
            }
            Err(_) => {}
        }
        self.ctx.journal.keep_project(&self.s.project_root, self.overrides.history_keep);
        let root = self.s.project_root.clone();
        self.root_id = tokio::task::spawn_blocking(move || ccmem_proto::files::dir_id(&root)).await.ok().flatten();
        self.running = true;
        if self.restored {
            self.read_transcripts_again();
        }
        // A restored session's checkpoint, when the journal held more; git's state, in the
        // background.
        self.run_queued();
        self.git_soon();
        // The handoff setting read from the user's file, and the branch's handoffs.
        self.travel_soon(crate::travel::Work { load: true, ..Default::default() }, None);
        self.ctx.ports.kick(&self.s.project_root);
        let mut ignore = self.ctx.live.borrow().watch_ignore.clone();
        ignore.extend(self.overrides.watch_ignore.iter().cloned());
        self.watcher = Some(watch::spawn(
            self.s.project_root.clone(),
            mailbox,
            self.ctx.watch.clone(),
            // A new session counts what is written from its start on, even what the first
            // walk meets (the kernel's file times lag the clock by a tick: a little before).
            self.changed_since
                .take()
                .or_else(|| std::time::SystemTime::now().checked_sub(std::time::Duration::from_millis(20))),
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
            let state_due = self.state_due();
            tokio::select! {
                msg = rx.recv() => {
                    let Some(msg) = msg else { break Flow::Continue };
                    match self.handle(msg).await {
                        Flow::Continue => expiry.as_mut().reset(self.deadline),
                        stop => break stop,
                    }
                }
                _ = tick.tick() => {
                    // The watcher says when the directory goes; this catches what it cannot
                    // see (a polled root, a removed mount).
                    if !self.root_exists().await {
                        break Flow::End(EndReason::Vanished, None);
                    }
                    if self.dirty {
                        self.checkpoint_soon(CheckpointReason::Automatic, CheckpointType::Periodic);
                    } else {
                        tracing::debug!(project = %self.s.project_root.display(), "periodic tick: nothing changed");
                    }
                }
                done = finished(&mut self.job) => self.job_finished(done),
                done = finished(&mut self.runs.running) => self.travel_done(done),
                read = finished(&mut self.reading) => {
                    self.reading = None;
                    self.transcript_read(read).await;
                }
                _ = until(state_due) => {
                    let _ = self.journal_now(Vec::new());
                }
                _ = until(self.late.due()) => self.apply_late().await,
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
            // What changed after an answer (intents, a transcript read, git) is kept too.
            self.journal_state();
        };
        // Late hooks still held belong to the session that ends (or is saved) now.
        self.apply_late().await;
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
                if let Some(done) = self.journal_now(Vec::new()) {
                    let _ = done.await;
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
        let msg = match msg {
            Msg::Hook { hook, reply, sent } => match self.late.hold(hook, reply, sent) {
                None => return Flow::Continue,
                Some((hook, reply)) => Msg::Hook { hook, reply, sent },
            },
            other => other,
        };
        // Whatever comes now comes after the late hooks held: they are applied first.
        self.apply_late().await;
        match msg {
            Msg::Report { write, reply } => {
                let _ = reply.send(self.memory_report(write).await);
            }
            Msg::Handoff { params, reply } => self.handoff(params, reply),
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
                let now = chrono::Utc::now();
                let mut entry = self.event_entry(&event, now);
                entry.replay = super::replay::event_json(&event);
                let r = session::apply(&mut self.s, event, now);
                let mut durable = None;
                if r.is_ok() {
                    self.activity();
                    durable = self.journal(vec![entry]);
                } else if let Err(e) = &r {
                    tracing::debug!(project = %self.s.project_root.display(), error = %e, "event refused");
                }
                if let Some(reply) = reply {
                    super::journal::answer_when_durable(durable, reply, r);
                }
            }
            Msg::Watch { reply } => {
                session::touch(&mut self.s, chrono::Utc::now());
                self.activity();
                let _ = reply.send(self.summary());
            }
            Msg::Status { reply } => {
                let status = self.status();
                tokio::spawn(async move {
                    let _ = reply.send(status.await);
                });
            }
            Msg::Syncer { reply } => {
                let _ = reply.send(self.watcher.as_ref().map(watch::Handle::syncer));
            }
            Msg::Summary { conversations, reply } => {
                let _ = reply.send(if conversations { self.summary_with_conversations() } else { self.summary() });
            }
            Msg::Checkpoint { reply, .. } if !self.root_exists().await => {
                let _ = reply.send(Err(format!(
                    "{} is no longer this project's directory (moved away, deleted or made again): its session ends",
                    self.s.project_root.display()
                )));
                return Flow::End(EndReason::Vanished, None);
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
                self.git_soon();
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
            Msg::RootGone { deleted } => {
                // Deleted and made again at once, a directory can get its inode number back:
                // the watcher's word is what tells it from the session's own.
                self.root_deleted |= deleted;
                if !self.root_exists().await {
                    return Flow::End(EndReason::Vanished, None);
                }
            }
            Msg::FsChanges(changes) => {
                let now = chrono::Utc::now();
                let mut entries = self.file_entries(&changes, now);
                self.with_replay(&mut entries, super::replay::files_json(&changes), now);
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
                    super::replay::file_change(&mut self.s, path, change, now);
                }
                session::touch(&mut self.s, now);
                self.activity();
                let _ = self.journal(entries);
                if task_list {
                    // The plan moved: the checkpoint and the report follow it now.
                    self.checkpoint_soon(CheckpointReason::Automatic, CheckpointType::EventDriven);
                }
                if large {
                    tokio::task::spawn_blocking(crate::heap::trim);
                }
            }
            Msg::Hook { hook, reply, sent } => self.hook(hook, reply, sent).await,
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
            Msg::Forget { what, apply, reply } => {
                let _ = reply.send(self.forget(what, apply).await);
            }
        }
        Flow::Continue
    }

    pub(super) fn activity(&mut self) {
        self.version += 1;
        self.dirty = true;
        self.active_at = Instant::now();
        self.deadline = self.active_at + self.ttl();
    }

    /// Session TTL: the project's own, else the configuration's.
    pub(super) fn ttl(&self) -> Duration {
        self.overrides.session_ttl.unwrap_or_else(|| self.ctx.live.borrow().session_ttl)
    }

    pub(super) fn checkpoint_interval(&self) -> Duration {
        self.overrides.checkpoint_interval.unwrap_or_else(|| self.ctx.live.borrow().checkpoint_interval)
    }

    pub(super) fn context_budget(&self) -> usize {
        self.overrides.context_budget.unwrap_or_else(|| self.ctx.live.borrow().context_budget)
    }

    /// Whether the project's directory is still there, and still the one the session began
    /// in (not another made at the same path after it was moved away).
    async fn root_exists(&self) -> bool {
        if self.root_deleted {
            return false;
        }
        let (root, known) = (self.s.project_root.clone(), self.root_id);
        tokio::task::spawn_blocking(move || ccmem_proto::files::is_same_dir(&root, known)).await.unwrap_or(true)
    }

    /// Final checkpoint, archive, and the tracker forgotten. Returns the ended session's id.
    async fn end_session(&mut self, reason: EndReason) -> String {
        self.finish_reads().await;
        let (why, kind) = match reason {
            EndReason::Expired | EndReason::Restored | EndReason::Vanished | EndReason::Imported => {
                (CheckpointReason::Automatic, CheckpointType::EventDriven)
            }
            EndReason::Reset | EndReason::Unwatched => (CheckpointReason::Manual, CheckpointType::UserRequested),
        };
        // A project whose directory is gone has nowhere to take a checkpoint (and making its
        // `.claude` again would bring a deleted project back): only the archive is written.
        if self.root_exists().await {
            self.checkpoint(why, kind).await;
            self.travel_at_end();
        } else {
            tracing::warn!(project = %self.s.project_root.display(), "the project's directory is gone: its session ends, archived");
        }
        let archived =
            ArchivedSession { ended: reason, ended_at: crate::clock::iso(chrono::Utc::now()), session: self.s.clone() };
        // The journal first: a crash after it leaves the session ended, not live again.
        self.ctx.journal.ended(Box::new(self.s.clone()), crate::store::end_reason_text(reason)).await;
        let ctx = self.ctx.clone();
        let id = archived.session.session_id.clone();
        let root = archived.session.project_root.clone();
        let done = tokio::task::spawn_blocking(move || {
            super::past::archive(&ctx, &archived)?;
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
}

/// A new session: name from the manifest, an id after the project's last one, git's HEAD.
pub(super) async fn new_session(root: PathBuf, ctx: Arc<Services>) -> Session {
    let r = root.clone();
    let job = tokio::task::spawn_blocking(move || {
        let name = manifest::project_name(&r);
        let now = chrono::Utc::now();
        let id = session::new_id(now, super::past::last_session_id(&ctx, &r).as_deref());
        let head = git::head(&r);
        let previous = super::past::last_archived(&ctx, &r).and_then(|a| session::handoff(&a));
        let mut s = session::start(r, name, id, now, head);
        s.previous = previous.map(Box::new);
        // The branch and the last commit, from the repository's own small files; the changes
        // (`git status` walks the work tree, which a FIFO at a `.gitignore` or a huge
        // checkout holds up) by the task's first job, not here: the session's first
        // SessionStart, which waits for this, must not wait for them.
        if s.git_start.is_some() {
            s.git = git::head_state(&s.project_root);
        }
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
