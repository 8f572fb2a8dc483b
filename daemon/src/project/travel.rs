//! The project task's side of travel: when a handoff is written, pushed and fetched, one
//! run at a time on the blocking pool (never on a hook's path: a push or fetch can take its
//! whole time bound), and the `handoff` requests answered when their run is done.

use super::task::*;
use crate::travel::{self, Work};
use ccmem_proto::wire::api::{HandoffAction, HandoffParams, HandoffReply};
use tokio::sync::oneshot;

/// A SessionStart fetches at most this often.
const FETCH_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// A requester waiting for a run, and what it asked for.
pub(super) type Waiter = (oneshot::Sender<Result<HandoffReply, String>>, HandoffAction);

/// The task's travel runs: the one in flight, what is queued behind, who waits for each.
#[derive(Debug, Default)]
pub struct Runs {
    pub(super) running: Option<tokio::task::JoinHandle<travel::Done>>,
    pub(super) waiting: Vec<Waiter>,
    pub(super) next: Option<Work>,
    pub(super) next_waiting: Vec<Waiter>,
}

impl Project {
    /// Starts `work` (or queues it behind the run in flight); `waiter` is answered when the
    /// run that does it is done.
    pub(super) fn travel_soon(&mut self, mut work: Work, waiter: Option<Waiter>) {
        if work.sock.is_some() {
            self.travel.sock = work.sock.clone();
        } else {
            work.sock = self.travel.sock.clone();
        }
        if self.runs.running.is_some() || !self.running {
            match &mut self.runs.next {
                Some(next) => next.merge(work),
                None => self.runs.next = Some(work),
            }
            self.runs.next_waiting.extend(waiter);
            return;
        }
        let root = self.s.project_root.clone();
        let dir = self.travel_dir();
        let (setting, maker) = (self.travel.setting.clone(), self.travel.maker.clone());
        self.runs.waiting.extend(waiter);
        self.runs.running = Some(tokio::task::spawn_blocking(move || travel::run(&root, &dir, setting, maker, work)));
    }

    /// A run finished: its result kept, its requesters answered, the next one started.
    pub(super) fn travel_done(&mut self, done: Option<travel::Done>) {
        self.runs.running = None;
        let done =
            done.unwrap_or_else(|| travel::Done { error: Some("the handoff run failed".into()), ..Default::default() });
        self.travel.take(&done, &crate::clock::iso(chrono::Utc::now()));
        for e in [&done.pushed, &done.fetched].into_iter().flatten().filter_map(|r| r.as_ref().err()) {
            tracing::warn!(project = %self.s.project_root.display(), "handoff: {e}");
        }
        for (w, action) in std::mem::take(&mut self.runs.waiting) {
            let _ = w.send(reply_of(&self.travel, &self.s.project_root, &done, action));
        }
        if let Some(next) = self.runs.next.take() {
            let waiting = std::mem::take(&mut self.runs.next_waiting);
            let mut waiting = waiting.into_iter();
            let first = waiting.next();
            self.travel_soon(next, first);
            self.runs.waiting.extend(waiting);
        }
    }

    /// A `handoff` request.
    pub(super) fn handoff(&mut self, p: HandoffParams, reply: oneshot::Sender<Result<HandoffReply, String>>) {
        let mut work = Work { sock: p.ssh_auth_sock, branch: p.branch, asked: true, ..Default::default() };
        // Showing reads only: answered beside the queue, not behind a push or fetch that can
        // take its whole time bound.
        if p.action == HandoffAction::Show && self.travel.loaded {
            let (root, dir, state) = (self.s.project_root.clone(), self.travel_dir(), self.travel.clone());
            tokio::spawn(async move {
                let (setting, maker) = (state.setting.clone(), state.maker.clone());
                let at = root.clone();
                let done = tokio::task::spawn_blocking(move || travel::run(&at, &dir, setting, maker, work)).await;
                let done = done.unwrap_or_else(|_| travel::Done {
                    error: Some("the handoff run failed".into()),
                    ..Default::default()
                });
                let _ = reply.send(reply_of(&state, &root, &done, HandoffAction::Show));
            });
            return;
        }
        match p.action {
            HandoffAction::Show => {}
            HandoffAction::Enable => {
                work.enable = Some((p.remote, p.auto));
                // Written at once from what the session holds, and everyone's fetched.
                work.session = Some(Box::new(self.s.clone()));
                work.fetch = true;
            }
            HandoffAction::Disable => work.disable = true,
            HandoffAction::Push => {
                work.session = Some(Box::new(self.s.clone()));
                work.push = true;
            }
            HandoffAction::Pull => work.fetch = true,
            HandoffAction::Forget => work.forget = Some(p.remote_too),
            HandoffAction::Prune => work.prune = Some(p.remote_too),
        }
        if p.action == HandoffAction::Pull {
            self.travel.fetch_started = Some(std::time::Instant::now());
        }
        self.travel_soon(work, Some((reply, p.action)));
    }

    /// At SessionStart: everyone's handoffs fetched in the background (at most once a
    /// minute). Returns whether a fetch started.
    pub(super) fn travel_at_start(&mut self) -> bool {
        // Before the setting is read (the task's first run is still on it), a fetch is asked
        // for all the same: it does nothing if handoff is off.
        let off = self.travel.loaded && self.travel.setting.is_none();
        if off || self.travel.fetch_started.is_some_and(|t| t.elapsed() < FETCH_EVERY) {
            return false;
        }
        self.travel.fetch_started = Some(std::time::Instant::now());
        self.travel_soon(Work { fetch: true, ..Default::default() }, None);
        true
    }

    /// After a checkpoint: the handoff written from what the session holds now; after the
    /// agent's Stop (`push`), pushed too when the user asked for that.
    pub(super) fn travel_after(&mut self, push: bool) {
        let Some(setting) = &self.travel.setting else { return };
        let push = push && setting.auto;
        self.travel_soon(Work { session: Some(Box::new(self.s.clone())), push, ..Default::default() }, None);
    }

    /// The branch changed: its handoffs read.
    pub(super) fn travel_branch(&mut self) {
        if self.travel.setting.is_some() && self.travel.branch != self.s.git.branch {
            self.travel_soon(Work::default(), None);
        }
    }

    /// Waits up to `within` for the run in flight (a SessionStart's fetch): what it brings
    /// is in the context now rather than at the next one.
    pub(super) async fn travel_within(&mut self, within: std::time::Duration) {
        let until = tokio::time::Instant::now() + within;
        // The run in flight, then the one it started from the queue (the fetch behind the
        // first run's read of the setting).
        while let Some(run) = self.runs.running.as_mut() {
            match tokio::time::timeout_at(until, run).await {
                Ok(done) => self.travel_done(done.ok()),
                Err(_) => return,
            }
        }
    }

    /// The project's state dir, where travel keeps its repositories.
    fn travel_dir(&self) -> std::path::PathBuf {
        self.ctx.store.project_dir(&self.s.project_root)
    }

    /// The block of handoffs that arrived since `conversation` was last given them (at its
    /// start or a prompt before), or nothing; they count as given from now on.
    pub(super) fn handoffs_since(&mut self, conversation: Option<&str>) -> String {
        let Some(conversation) = conversation else { return String::new() };
        let newer = self.travel.newer(&self.s.git.branch);
        let fresh: Vec<_> = newer
            .into_iter()
            .filter(|h| {
                !self.travel.told.contains(&(conversation.to_string(), h.git_ref.clone(), h.handoff.made_at.clone()))
            })
            .collect();
        if fresh.is_empty() {
            return String::new();
        }
        self.handoffs_told(conversation, &fresh);
        let lines = travel::shown::lines(&fresh, chrono::Utc::now());
        let text = format!("{}\n{}", travel::shown::TITLE, lines.join("\n"));
        ccmem_proto::redact::redact(&text).into_owned()
    }

    /// `shown` count as given to `conversation`.
    pub(super) fn handoffs_told(&mut self, conversation: &str, shown: &[ccmem_proto::model::handoff::SeenHandoff]) {
        let told = &mut self.travel.told;
        for h in shown {
            told.insert((conversation.to_string(), h.git_ref.clone(), h.handoff.made_at.clone()));
        }
        // A few per conversation at most; past a bound the oldest knowledge is dropped whole.
        if told.len() > 512 {
            told.clear();
        }
    }

    /// The session ends: its handoff written, and pushed when the user asked for that, in
    /// the background (bounded; the task does not wait).
    pub(super) fn travel_at_end(&mut self) {
        let Some(setting) = self.travel.setting.clone() else { return };
        let work = Work {
            session: Some(Box::new(self.s.clone())),
            push: setting.auto,
            sock: self.travel.sock.clone(),
            ..Default::default()
        };
        let (root, dir, maker) = (self.s.project_root.clone(), self.travel_dir(), self.travel.maker.clone());
        tokio::task::spawn_blocking(move || {
            let done = travel::run(&root, &dir, Some(setting), maker, work);
            if let Some(Err(e)) = done.pushed {
                tracing::warn!(project = %root.display(), "handoff at session end: {e}");
            }
        });
    }
}

/// What a requester is told after `done`.
fn reply_of(
    t: &travel::State,
    root: &std::path::Path,
    done: &travel::Done,
    action: HandoffAction,
) -> Result<HandoffReply, String> {
    // A push or fetch that failed is the answer to the one who asked for it; enabling
    // (which fetches too) succeeded all the same, and says so.
    let failed = match action {
        HandoffAction::Push => done.pushed.clone().and_then(Result::err),
        HandoffAction::Pull => done.fetched.clone().and_then(Result::err),
        _ => None,
    };
    if let Some(e) = done.error.clone().or(failed) {
        return Err(e);
    }
    let author_id = t.maker.as_ref().map(|m| travel::refs::author_id(&m.author, &m.machine, root)).unwrap_or_default();
    let mut said = done.said.clone();
    if let (HandoffAction::Enable, Some(Err(e))) = (action, &done.fetched) {
        said.push(format!("the first fetch failed ({e}); it is tried again at the next session start"));
    }
    if done.more > 0 {
        said.push(format!("{} older handoff(s) of this branch not shown", done.more));
    }
    Ok(HandoffReply {
        root: root.to_path_buf(),
        enabled: t.setting.is_some(),
        remote: t.setting.as_ref().map(|s| s.remote.clone()).unwrap_or_default(),
        auto: t.setting.as_ref().is_some_and(|s| s.auto),
        branch: done.branch.clone(),
        author_id,
        done: said.join("; "),
        handoffs: done.seen.clone(),
        failed: t.failed.clone(),
        pushed_at: t.pushed_at.clone(),
        fetched_at: t.fetched_at.clone(),
    })
}
