//! The project task's background work, one job at a time: checkpoints (the state file, the
//! report, the tracker) and git refreshes on the blocking pool, and what is queued behind.
use crate::report::blockers::CommentCache;
use crate::{project::checkpoint, session::rules as session};
use ccmem_proto::model::session::{CheckpointReason, CheckpointType, Session};
use ccmem_proto::wire::api::ReportReply;

use super::task::*;

/// What a background job hands back.
#[derive(Debug)]
pub enum JobResult {
    /// A checkpoint: the session as written, what happened, the version it was taken at,
    /// and the comment cache it used.
    Checkpoint { copy: Session, out: checkpoint::Outcome, exclude_done: bool, version: u64, comments: CommentCache },
    /// Fresh git state.
    Git { copy: Session },
}

impl Project {
    /// Starts a checkpoint in the background (or queues it behind the job in flight).
    pub(super) fn checkpoint_soon(&mut self, reason: CheckpointReason, kind: CheckpointType) {
        if self.job.is_some() || !self.running {
            self.queued_checkpoint = Some((reason, kind));
            return;
        }
        if kind == CheckpointType::EventDriven {
            // The agent stopped or compacts: the next checkpoint will hold fresh servers.
            self.ctx.ports.kick(&self.s.project_root);
        }
        let mut saver = self.saver();
        let (mut copy, ctx, mut exclude_done, version) =
            (self.s.clone(), self.ctx.clone(), self.exclude_done, self.version);
        let mut comments = self.comments.take().unwrap_or_default();
        let (root_id, deleted) = (self.root_id, self.root_deleted);
        self.spawn_job(move || {
            let out = match may_write(&copy.project_root, root_id, deleted, &ctx.socket) {
                Ok(()) => checkpoint::run(&mut copy, reason, kind, &mut saver, &mut exclude_done, &mut comments),
                Err(why) => checkpoint::Outcome { written: None, errors: vec![why] },
            };
            JobResult::Checkpoint { copy, out, exclude_done, version, comments }
        });
    }

    /// Refreshes git in the background (or after the job in flight).
    pub(super) fn git_soon(&mut self) {
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

    pub(super) fn spawn_job(&mut self, work: impl FnOnce() -> JobResult + Send + 'static) {
        self.seq += 1;
        let seq = self.seq;
        self.job = Some(tokio::task::spawn_blocking(move || (seq, work())));
    }

    /// A background job finished (or failed: `None`): its result, then what was queued
    /// behind it.
    pub(super) fn job_finished(&mut self, done: Option<(u64, JobResult)>) {
        self.job = None;
        if let Some((seq, result)) = done {
            self.apply_job(seq, result);
        }
        self.run_queued();
    }

    /// Waits for the job in flight and takes its result, without starting what was queued
    /// (the caller does the work itself).
    pub(super) async fn settle_job(&mut self) {
        if let Some(job) = self.job.take() {
            if let Ok((seq, result)) = job.await {
                self.apply_job(seq, result);
            }
        }
    }

    pub(super) fn apply_job(&mut self, seq: u64, result: JobResult) {
        // A synchronous checkpoint since then already holds newer data.
        if seq > self.applied {
            self.applied = seq;
            let checkpointed = matches!(result, JobResult::Checkpoint { .. });
            match result {
                JobResult::Checkpoint { copy, out, exclude_done, version, comments } => {
                    self.comments = Some(comments);
                    self.take_git(seq, &copy);
                    self.s.last_checkpoint = copy.last_checkpoint;
                    self.s.saved_at_ms = copy.saved_at_ms;
                    self.exclude_done = exclude_done;
                    if out.written.is_some() && version == self.version {
                        self.dirty = false;
                    }
                    self.report(&out);
                    let push = std::mem::take(&mut self.push_after_checkpoint);
                    self.travel_after(push);
                }
                JobResult::Git { copy } => self.take_git(seq, &copy),
            }
            // Git's state is not in any event's replay: the journal's next state holds it
            // (at once after a checkpoint, which the journal's state is never older than).
            self.version += 1;
            if checkpointed {
                let _ = self.journal_now(Vec::new());
            }
        }
    }

    pub(super) fn run_queued(&mut self) {
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

    pub(super) fn take_git(&mut self, seq: u64, copy: &Session) {
        // A job started before the commit's hook came may not show it: the next one will.
        if self.commit_pending.is_some_and(|before| seq > before) {
            let (hash, _) = crate::agent::context::commit_of(&copy.git.last_commit);
            if !hash.is_empty() {
                crate::session::shell::commit_hash(&mut self.s, hash);
            }
            self.commit_pending = None;
        }
        self.s.git = copy.git.clone();
        self.s.git_start = copy.git_start.clone();
        self.travel_branch();
        // Outside git the counts are the agent's, kept by the hooks since the copy was made.
        if copy.git_start.is_some() {
            self.s.activity_summary.lines_added = copy.activity_summary.lines_added;
            self.s.activity_summary.lines_deleted = copy.activity_summary.lines_deleted;
            self.s.activity_summary.commits = copy.activity_summary.commits;
        }
    }

    pub(super) fn report(&mut self, out: &checkpoint::Outcome) {
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
    pub(super) async fn checkpoint(&mut self, reason: CheckpointReason, kind: CheckpointType) -> checkpoint::Outcome {
        self.settle_job().await;
        // This checkpoint does what was queued (a later one, a git refresh) with newer data.
        self.queued_checkpoint = None;
        self.queued_git = false;
        self.seq += 1;
        self.applied = self.seq;
        let mut saver = self.saver();
        let mut copy = self.s.clone();
        let ctx = self.ctx.clone();
        let mut exclude_done = self.exclude_done;
        let mut comments = self.comments.take().unwrap_or_default();
        let (root_id, deleted) = (self.root_id, self.root_deleted);
        let job = tokio::task::spawn_blocking(move || {
            let out = match may_write(&copy.project_root, root_id, deleted, &ctx.socket) {
                Ok(()) => checkpoint::run(&mut copy, reason, kind, &mut saver, &mut exclude_done, &mut comments),
                Err(why) => checkpoint::Outcome { written: None, errors: vec![why] },
            };
            (copy, out, exclude_done, comments)
        });
        let out = match job.await {
            Ok((copy, out, exclude_done, comments)) => {
                self.s = copy;
                // Its git state was read after every hook before it.
                if self.commit_pending.take().is_some() {
                    let head = self.s.git.last_commit.clone();
                    let (hash, _) = crate::agent::context::commit_of(&head);
                    if !hash.is_empty() {
                        crate::session::shell::commit_hash(&mut self.s, hash);
                    }
                }
                self.exclude_done = exclude_done;
                self.comments = Some(comments);
                out
            }
            Err(e) => checkpoint::Outcome { written: None, errors: vec![format!("checkpoint failed: {e}")] },
        };
        if out.written.is_some() {
            self.dirty = false;
        }
        // The journal's state is never older than a checkpoint.
        self.version += 1;
        let _ = self.journal_now(Vec::new());
        self.report(&out);
        out
    }

    /// Builds the report on the blocking pool (it reads files) and writes it if asked.
    pub(super) async fn memory_report(&mut self, write: bool) -> Result<ReportReply, String> {
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
        Ok(ReportReply { markdown: ccmem_proto::model::report::serialize(&m), path })
    }

    /// Waits for the transcript reads asked for, so that what is saved holds their words
    /// (reads are bounded: regular files only, at most [`crate::agent::transcript::MAX_READ`]).
    /// [`Self::finish_reads`] until `wait` has passed: a read still going on then finishes
    /// in the background, as any other.
    pub(super) async fn finish_reads_within(&mut self, wait: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let Some(job) = self.reading.as_mut() else { return };
            let Ok(read) = tokio::time::timeout_at(deadline, job).await else { return };
            self.reading = None;
            self.transcript_read(read.ok()).await;
        }
    }

    pub(super) async fn finish_reads(&mut self) {
        while let Some(job) = self.reading.take() {
            let read = job.await.ok();
            self.transcript_read(read).await;
        }
    }
}

/// Whether a checkpoint may be written into `root`: it is still the directory the session
/// began in (one made again where the project was, after it was moved away, is another's),
/// and no other daemon has claimed the project since (see `lock`).
fn may_write(
    root: &std::path::Path,
    root_id: Option<(u64, u64)>,
    deleted: bool,
    socket: &std::path::Path,
) -> Result<(), String> {
    if deleted || (root_id.is_some() && !ccmem_proto::files::is_same_dir(root, root_id)) {
        return Err(format!(
            "{} is no longer this project's directory (moved away or made again): nothing written",
            root.display()
        ));
    }
    super::lock::recheck(root, socket)
}
