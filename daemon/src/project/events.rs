//! What the project task makes of the agent's events: hooks applied to the session,
//! transcripts read for the agent's words, intents kept as facts and goals.
use crate::agent::hooks;
use ccmem_proto::model::agent::Agent;
use ccmem_proto::model::facts::{self};
use ccmem_proto::wire::api::HookReply;
use std::path::Path;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::replay::{self, Replay};
use super::task::*;

/// A finished transcript read.
pub(super) type TranscriptRead =
    (ReadJob, ccmem_proto::model::session::Digest, std::io::Result<crate::agent::transcript::Delta>);

/// How long a SessionStart's answer waits for transcript reads (the hook waits 2 s at most).
const START_READS: std::time::Duration = std::time::Duration::from_millis(700);

/// Reads waiting at most: more are dropped (the next Stop reads the conversation again).
pub(super) const READS_QUEUED: usize = 8;

/// A transcript to read: a conversation's own (read on from where its digest stopped), or a
/// subagent's (read once, for the intents in its words).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ReadJob {
    conversation: String,
    path: String,
    subagent: bool,
}

impl Project {
    pub(super) async fn hook(
        &mut self,
        mut hook: hooks::Hook,
        reply: Option<oneshot::Sender<HookReply>>,
        sent: Option<chrono::DateTime<chrono::Utc>>,
    ) {
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
        // A plan sent before the one in place reached us late: it replaces nothing.
        // The same for one task's change sent before the last change of that task.
        if let hooks::Kind::ToolUse { tool, .. } = &mut hook.kind {
            let newer = match tool {
                hooks::Tool::Plan(_) => self.late.newer_plan(sent),
                hooks::Tool::Task(change) => match change.id.as_deref().or(change.subject.as_deref()) {
                    Some(key) => self.late.newer_task_change(key, sent),
                    None => true,
                },
                _ => true,
            };
            if !newer {
                *tool = hooks::Tool::Other;
            }
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
        // A conversation resumed with nothing done since by anyone else has ccmem's context in
        // its own history already (the agent keeps what a start hook gave): it is not given
        // it twice.
        let quiet_resume = matches!(&hook.kind, hooks::Kind::SessionStart { source } if source == "resume")
            && hook.at.is_none()
            && hook.conversation.as_deref().is_some_and(|id| resumes_where_it_left(&self.s, id));
        let now = hook.at.unwrap_or_else(chrono::Utc::now);
        let mut fx = replay::hook(&mut self.s, &hook, now);
        if hook.at.is_none() && matches!(hook.kind, hooks::Kind::Stop { subagent: false, .. }) {
            self.push_after_checkpoint = true;
        }
        if hook.at.is_none() && fx.commit {
            // The commit is named by git itself, never by what the command printed: by the
            // first git state read after this (the command has run by now).
            self.commit_pending = Some(self.seq);
            self.git_soon();
        }
        for e in &fx.agent_edits {
            let at = Instant::now();
            let counted = self.recent_edits.get(&e.rel).is_some_and(|(t, agent)| !*agent && at - *t < SAME_EDIT);
            replay::agent_edit(&mut self.s, e, now, counted);
            self.note_edit(&e.rel, at, true);
        }
        self.activity();
        let mut entries = self.hook_entries(&hook, now);
        self.with_replay(&mut entries, replay::hook_json(&hook), now);
        let mut durable = self.journal(entries);
        // Answer first: the agent waits for this; intents and checkpoints can follow.
        if let Some(reply) = reply {
            let additional_context = match &hook.kind {
                hooks::Kind::SessionStart { source } => {
                    // What came before belongs in the context: a Stop's read still in flight,
                    // this conversation's transcript up to now (a compaction's summary). Given
                    // a moment, within the hook's wait; what is late comes next time.
                    if let (Some(conv), Some(path)) = (&hook.conversation, fx.read_transcript.take()) {
                        self.read_transcript(ReadJob { conversation: conv.clone(), path, subagent: false });
                    }
                    // Everyone's handoffs fetched, given the same moment (the fetch runs beside the
                    // reads): what comes later is in the next context.
                    if self.travel_at_start() {
                        self.travel_within(START_READS).await;
                    }
                    self.finish_reads_within(START_READS).await;
                    if quiet_resume {
                        String::new()
                    } else {
                        let text = self.context(hook.conversation.as_deref(), source == "compact", None).await.context;
                        if let Some(id) = hook.conversation.as_deref() {
                            let shown = self.travel.newer(&self.s.git.branch);
                            self.handoffs_told(id, &shown);
                        }
                        if let Some(id) = hook.conversation.clone().filter(|_| !text.is_empty()) {
                            if let Some(c) = hooks::find(&mut self.s, &id) {
                                c.context_given = true;
                            }
                            // Answered once this too is kept (after the hook's own entry).
                            let given = Replay::ContextGiven { conversation: id }.to_json();
                            let mut entries = vec![self.entry(now, "hook", "context")];
                            self.with_replay(&mut entries, given, now);
                            durable = self.journal(entries).or(durable);
                        }
                        text
                    }
                }
                // A handoff that arrived after this conversation's context was given: with the
                // next prompt, once (Claude Code takes a prompt hook's context).
                hooks::Kind::Prompt { .. } if hook.at.is_none() && hook.agent == Agent::Claude => {
                    self.handoffs_since(hook.conversation.as_deref())
                }
                _ => String::new(),
            };
            super::journal::answer_when_durable(durable, reply, HookReply { additional_context, notice: None });
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

    /// A restored session's conversations read on from where their digests stopped: what
    /// the agent wrote while no daemon ran, or what a killed one had not yet read. The
    /// checkpoint a restore queues waits for them.
    pub(super) fn read_transcripts_again(&mut self) {
        let jobs: Vec<ReadJob> = self
            .s
            .conversations
            .iter()
            .filter_map(|c| {
                let path = c.transcript_path.clone()?;
                Some(ReadJob { conversation: c.id.clone(), path, subagent: false })
            })
            .collect();
        for job in jobs {
            self.read_transcript(job);
        }
        if self.reading.is_some() {
            if let Some(queued) = self.queued_checkpoint.take() {
                self.after_read = Some(queued);
            }
        }
    }

    /// Reads what was appended to a conversation's transcript (or a subagent's whole one), on
    /// the blocking pool; the result comes back through [`Self::transcript_read`].
    pub(super) fn read_transcript(&mut self, job: ReadJob) {
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

    pub(super) async fn transcript_read(&mut self, read: Option<TranscriptRead>) {
        if let Some((job, digest, result)) = read {
            match result {
                Ok(delta) => {
                    let mut changed = !delta.texts.is_empty() || !delta.pull_requests.is_empty();
                    // A subagent's transcript gives its intents only: its last words and
                    // findings are not the conversation's.
                    if !job.subagent {
                        if let Some(c) = self.s.conversations.iter_mut().find(|c| c.id == job.conversation) {
                            changed |=
                                c.digest != digest || (c.first_prompt.is_empty() && delta.first_prompt.is_some());
                            c.digest = digest;
                            if c.first_prompt.is_empty() {
                                if let Some(p) = delta.first_prompt {
                                    c.first_prompt = ccmem_proto::model::session::truncate_chars(&p, 500);
                                }
                            }
                            c.count_tool_calls();
                        }
                    }
                    if !job.subagent {
                        for (number, repository, at) in &delta.pull_requests {
                            crate::session::shell::linked_pull_request(&mut self.s, *number, repository, at);
                        }
                    }
                    for text in &delta.texts {
                        self.intents(text).await;
                    }
                    if changed {
                        self.version += 1;
                        self.dirty = true;
                        // No event's replay holds what a transcript said: the state goes to
                        // the journal now, not within the second (a kill then would lose the
                        // agent's last words, and nothing would read them again).
                        let _ = self.journal_now(Vec::new());
                    }
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

    pub(super) fn note_edit(&mut self, rel: &str, at: Instant, by_agent: bool) {
        // Pruned when it has doubled since the last pruning: during a burst every entry is
        // recent, and pruning at a fixed size would scan the whole map on every edit.
        if self.recent_edits.len() > self.prune_recent_at {
            self.recent_edits.retain(|_, (t, _)| at - *t < SAME_EDIT);
            self.prune_recent_at = (2 * self.recent_edits.len()).max(RECENT_EDITS);
        }
        self.recent_edits.insert(rel.to_string(), (at, by_agent));
    }

    /// `[REMEMBER: …]`, `[GOAL: …]` and `[DONE: …]` from the assistant's words.
    pub(super) async fn intents(&mut self, text: &str) {
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
        let mut found = crate::agent::intents::detect(text);
        if found == facts::Intents::default() {
            return;
        }
        // One message states a few of each; thousands (a message of nothing else) are cut to
        // the last ones, so that what follows stays bounded (each is compared with those kept).
        keep_last(&mut found.remember, INTENTS_PER_MESSAGE);
        keep_last(&mut found.goals, INTENTS_PER_MESSAGE);
        keep_last(&mut found.done, INTENTS_PER_MESSAGE);
        let now = crate::clock::iso(chrono::Utc::now());
        let m = &mut self.memory;
        for (fact, global) in found.remember {
            let fact = crate::text::clean(&fact);
            if fact.is_empty() {
                continue;
            }
            if global {
                // Waits for the user's `facts confirm`, wherever it was said: a hook names its
                // project itself, so any program an agent runs can speak for any project
                // the user knows.
                self.ctx.global.add(fact, &self.s.project_root, false).await;
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

    pub(super) async fn save_facts(&self) {
        let (ctx, root, copy) = (self.ctx.clone(), self.s.project_root.clone(), self.memory.clone());
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || ctx.store.save_facts(&root, &copy)).await {
            tracing::error!(project = %self.s.project_root.display(), error = %e, "cannot save facts and goals");
        }
    }
}

/// Whether conversation `id` was given ccmem's context and nothing has happened since in
/// any other conversation of the session: no other one is more recent.
fn resumes_where_it_left(s: &ccmem_proto::model::session::Session, id: &str) -> bool {
    let Some(c) = s.conversations.iter().find(|c| c.id == id) else { return false };
    c.context_given && s.conversations.iter().all(|o| o.id == id || o.activity_seq < c.activity_seq)
}

/// Facts, goals and goals done taken from one message at most, each.
const INTENTS_PER_MESSAGE: usize = 64;

fn keep_last<T>(v: &mut Vec<T>, n: usize) {
    let excess = v.len().saturating_sub(n);
    v.drain(..excess);
}
