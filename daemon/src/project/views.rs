//! What the project task answers with: its status, summaries, the resume context, and for
//! a project with no live session, what its stored files say.
use crate::{
    agent::context, agent::hooks, observe::manifest, observe::watch, project::checkpoint, session::rules as session,
};
use ccmem_proto::model::facts::{self};
use ccmem_proto::model::session::Session;
use ccmem_proto::wire::api::{ContextReply, ProjectStatus, ProjectSummary};
use std::path::Path;
use tokio::time::Instant;

use super::task::*;

/// Applies a hand edit to a project's stored facts and goals (for a project without a live
/// session; a live one's task does the same to its own copy).
pub fn edit_stored_facts(ctx: &Services, root: &Path, edit: Option<&facts::FactsEdit>) -> FactsAnswer {
    let mut memory = ctx.store.load_facts(root);
    let Some(edit) = edit else { return (memory, Ok(None)) };
    match memory.apply(edit, &crate::clock::iso(chrono::Utc::now())) {
        Ok(said) => match ctx.store.save_facts(root, &memory) {
            Ok(()) => (memory, Ok(Some(said))),
            Err(e) => (ctx.store.load_facts(root), Err(format!("cannot save the facts: {e}"))),
        },
        Err(e) => (memory, Err(e)),
    }
}

/// The resume context of a project without a live session: what its last session left
/// (its last working conversation, todos, failures, last words). Reads files: for the
/// blocking pool.
pub fn ended_context(ctx: &Services, root: &Path, global_facts: &[String], budget: Option<usize>) -> ContextReply {
    let Some(handoff) = super::past::last_archived(ctx, root).and_then(|a| session::handoff(&a)) else {
        return ContextReply {
            context: format!("No live ccmem session for {} yet.", root.display()),
            conversation_id: None,
        };
    };
    let now = chrono::Utc::now();
    let mut s = session::start(root.to_path_buf(), manifest::project_name(root), String::new(), now, None);
    let conversation_id = handoff.conversation.as_ref().map(|c| c.id.clone());
    s.previous = Some(Box::new(handoff));
    let memory = ctx.store.load_facts(root);
    let budget = budget.unwrap_or_else(|| ctx.live.borrow().context_budget);
    let input = context::Input {
        session: &s,
        conversation: None,
        resume_id: None,
        memory: &memory,
        global_facts,
        after_compact: false,
        memories: &[],
        repo_memories: &[],
        now,
        past: ctx.journal.is_open(),
        handoffs: &[],
    };
    ContextReply { context: context::build(&input, budget), conversation_id }
}

/// A copy of the session as of `now`, with what the project's files say (manifests, build
/// outputs, the task list, up to a few MiB) read again on the blocking pool, not on the
/// task's thread.
async fn refreshed(s: &Session, now: chrono::DateTime<chrono::Utc>) -> Session {
    let refreshed_now = || {
        let mut copy = s.clone();
        session::refresh(&mut copy, now);
        copy
    };
    let mut copy = refreshed_now();
    tokio::task::spawn_blocking(move || {
        checkpoint::refresh_from_disk(&mut copy);
        copy
    })
    .await
    // A read that panicked: the session without what the files say, rather than nothing.
    .unwrap_or_else(|_| refreshed_now())
}

impl Project {
    /// The resume context for `conversation` (else the most recent one).
    pub(super) async fn context(
        &self,
        conversation: Option<&str>,
        after_compact: bool,
        budget: Option<usize>,
    ) -> ContextReply {
        let global = self.ctx.global.for_project(&self.s.project_root).await;
        let relevant = self.ctx.memories.relevant(self.s.project_root.clone(), self.topics(), MEMORIES_SHOWN).await;
        let (repo, own): (Vec<_>, Vec<_>) = relevant.into_iter().partition(|m| m.from_repository);
        let memories: Vec<String> = own.into_iter().map(|m| m.line).collect();
        let repo_memories: Vec<String> = repo.into_iter().map(|m| m.line).collect();
        let now = chrono::Utc::now();
        let s = refreshed(&self.s, now).await;
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
        let handoffs = crate::travel::shown::lines(&self.travel.newer(&s.git.branch), now);
        let text = context::build(
            &context::Input {
                session: &s,
                conversation: conv,
                resume_id: resume.as_deref(),
                memory: &self.memory,
                global_facts: &global,
                after_compact,
                memories: &memories,
                repo_memories: &repo_memories,
                now,
                past: self.ctx.journal.is_open() && (s.previous.is_some() || s.conversations.len() > 1),
                handoffs: &handoffs,
            },
            budget.unwrap_or_else(|| self.context_budget()),
        );
        ContextReply { context: text, conversation_id: resume.clone() }
    }

    /// Words naming what the session is about, to find relevant memories: its patterns
    /// (`auth`, `src/api/*`), the active task and the recent commands.
    pub(super) fn topics(&self) -> Vec<String> {
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

    pub(super) fn expires_in(&self) -> f64 {
        self.deadline.saturating_duration_since(Instant::now()).as_secs_f64()
    }

    /// The status as of now; what the project's files say is read by the returned future,
    /// on the blocking pool, so that the task can go on with its messages meanwhile.
    pub(super) fn status(&self) -> impl std::future::Future<Output = ProjectStatus> + Send + 'static {
        let status = ProjectStatus {
            root: self.s.project_root.clone(),
            live: true,
            session: None,
            expires_in_secs: Some(self.expires_in()),
            unsaved_changes: self.dirty,
            warnings: self.warnings(),
            watch: self.watch_status(),
            handoff: self.travel.status_line(),
        };
        let s = self.s.clone();
        let in_force = self.config_error.clone();
        async move {
            // The project's `.claude/ccmem.toml` as it is now: one changed since the session
            // started (a repository's that names a remote, say) is said at once, not at the
            // next session.
            let root = s.project_root.clone();
            let now = tokio::task::spawn_blocking(move || crate::config::project(&root).err()).await.ok().flatten();
            let mut status = status;
            if let Some(e) = now.filter(|e| Some(e) != in_force.as_ref()) {
                status.warnings.push(format!("{e} (the file changed since the session started)"));
            }
            ProjectStatus { session: Some(refreshed(&s, chrono::Utc::now()).await), ..status }
        }
    }

    pub(super) fn watch_status(&self) -> Option<ccmem_proto::wire::api::WatchStatus> {
        use std::sync::atomic::Ordering::Relaxed;
        let st = &self.watcher.as_ref()?.stats;
        Some(ccmem_proto::wire::api::WatchStatus {
            ready: st.ready.load(Relaxed),
            directories_watched: st.dirs_watched.load(Relaxed) as u64,
            directories_polled: st.dirs_polled.load(Relaxed) as u64,
            files: st.files.load(Relaxed) as u64,
            rescans: st.rescans.load(Relaxed),
            capped: st.capped.load(Relaxed),
            unwatchable: st.unwatchable.load(Relaxed) as u64,
        })
    }

    pub(super) fn warnings(&self) -> Vec<String> {
        let mut w = self.errors.clone();
        w.extend(self.config_error.clone());
        if let Some(why) = ccmem_proto::files::owned_by_another(&self.s.project_root) {
            if !w.iter().any(|e| e.contains(&why)) {
                w.push(why);
            }
        }
        // Polled for want of a watcher at all is said by the unwatchable warning, with its
        // own cause: the watch limit is not it.
        let no_watcher = self
            .watcher
            .as_ref()
            .is_some_and(|h| h.stats.unwatched.lock().unwrap_or_else(|p| p.into_inner()).is_some());
        if !no_watcher && self.watch_status().is_some_and(|st| st.directories_polled > 0) {
            w.push(watch::limit_warning(&self.ctx.watch));
        }
        if self.watch_status().is_some_and(|st| st.capped) {
            w.push(watch::cap_warning(&self.s.project_root, &self.ctx.watch));
        }
        if let Some(h) = &self.watcher {
            w.extend(watch::unwatchable_warning(&self.s.project_root, &h.stats));
        }
        if crate::observe::git::benched(&self.s.project_root) {
            w.push(crate::observe::git::benched_warning());
        }
        w
    }

    pub(super) fn summary(&self) -> ProjectSummary {
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
    pub(super) fn summary_with_conversations(&self) -> ProjectSummary {
        let resume = hooks::resumable(&self.s, self.ttl(), chrono::Utc::now(), None).map(|c| c.id.as_str());
        ProjectSummary {
            conversations: ccmem_proto::wire::api::ConversationEntry::list(&self.s, resume),
            ..self.summary()
        }
    }
}
