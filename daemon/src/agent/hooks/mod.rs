//! The agent's hook events: what each one means for the project's session, whichever agent
//! sent it (its adapter, `crate::agent::adapters`, made the neutral [`Hook`]).
//!
//! Text is redacted before it is kept (`crate::text::clean`), and tool outputs are never kept
//! whole.

use crate::{observe::testout, session::rules as session};
use ccmem_proto::model::environment::{SuiteStatus, TestFailure, TestSuite};
use ccmem_proto::model::session::{
    CheckpointReason, CheckpointType, Conversation, Session, SessionEvent, ShellCommand, TodoStatus,
};
use chrono::{DateTime, Utc};
use std::path::Path;

mod event;
mod todos;
mod tools;

pub use crate::agent::adapters::parse;
pub use event::{FileEdit, Hook, Kind, TaskChange, Tool};
use todos::*;
use tools::*;

/// Conversations kept per session (the oldest ended ones go first).
const CONVERSATIONS: usize = 50;
/// Prompts kept per conversation (besides its first).
const PROMPTS: usize = 12;
/// Shell commands kept per session.
const SHELL_COMMANDS: usize = 50;
/// Characters of a prompt kept as a command.
const PROMPT_CHARS: usize = 500;

/// What the project task must do after a hook changed the session.
#[derive(Debug, Default, PartialEq)]
pub struct Effects {
    /// Write a checkpoint, for this reason.
    pub checkpoint: Option<(CheckpointReason, CheckpointType)>,
    /// Look for `[REMEMBER: …]` and the like in this text.
    pub intents_in: Option<String>,
    /// The assistant's last message was not given: read it from this transcript.
    pub read_transcript: Option<String>,
    /// A subagent stopped: read its own transcript for the intents in it.
    pub read_agent_transcript: Option<String>,
    /// Files the agent edited: for matching with the watcher's sightings.
    pub agent_edits: Vec<AgentEdit>,
    /// A `git commit` succeeded: its hash is to be taken from git.
    pub commit: bool,
}

/// A file the agent says it edited.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEdit {
    /// Relative to the project root.
    pub rel: String,
    /// What changed, in a few words.
    pub summary: String,
    /// The tool that changed it.
    pub tool: String,
    /// The tool made the file.
    pub created: bool,
}

/// Applies a hook to the session.
pub fn apply(s: &mut Session, h: &Hook, now: DateTime<Utc>) -> Effects {
    let mut fx = Effects::default();
    let t = crate::clock::iso(now);
    let conv_id = h.conversation.clone().unwrap_or_default();
    if let Some(seq) = h.import_seq {
        if s.conversations.iter().any(|c| c.id == conv_id && seq <= c.imported_events) {
            return fx; // taken from this import before
        }
    }
    if !conv_id.is_empty() {
        // Counted across the session: the stamps are to the second, and conversations that
        // end in the same second must still be told apart, newest last.
        let seq = s.conversations.iter().map(|c| c.activity_seq).max().unwrap_or(0) + 1;
        let c = conversation(s, &conv_id, &t);
        c.activity_seq = seq;
        c.agent = h.agent;
        if let Some(seq) = h.import_seq {
            c.imported_events = c.imported_events.max(seq);
        }
        c.last_activity = t.clone();
        // Kept for a reader only (the transcript is read from the payload's path): a path
        // can hold a token, so the copy is redacted.
        if let Some(p) = &h.transcript {
            c.transcript_path = Some(ccmem_proto::redact::redact(p).into_owned());
        }
    }
    match &h.kind {
        Kind::SessionStart { source } => {
            if let Some(c) = find(s, &conv_id) {
                c.source = source.clone();
                c.ended = false;
                if source == "compact" {
                    c.compacted = true;
                }
            }
            // A compacted or resumed conversation has a transcript already: its summary and
            // last words are part of what the agent is given now.
            if source == "compact" || source == "resume" {
                fx.read_transcript = h.transcript.clone();
            }
        }
        Kind::Prompt { text } if ccmem_proto::model::transcript::is_not_a_prompt(text) => {}
        Kind::Prompt { text } => {
            let readable = ccmem_proto::model::transcript::readable_prompt(text);
            let prompt = crate::text::clean(&readable);
            if !prompt.is_empty() {
                let workflow = prompt
                    .strip_prefix('/')
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(|cmd| format!("/{cmd}"))
                    .unwrap_or_else(|| "prompt".into());
                let command = ccmem_proto::model::session::truncate_chars(&prompt, PROMPT_CHARS);
                let _ = session::apply_quietly(
                    s,
                    SessionEvent::Command {
                        command: command.clone(),
                        workflow: Some(workflow),
                        status: None,
                        duration_seconds: None,
                    },
                    now,
                );
                // Its first line names it, cut from the prompt redacted whole: a token wrapped
                // over two lines is found only whole (its first line alone is too short for
                // any rule, and would be kept).
                let redacted = ccmem_proto::redact::redact(&readable);
                let first = redacted.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                let subject = ccmem_proto::model::session::truncate_chars(&crate::text::clean_redacted(first), 120);
                if let Some(c) = find(s, &conv_id) {
                    c.message_count += 1;
                    if c.first_prompt.is_empty() {
                        c.first_prompt = command.clone();
                    }
                    c.prompts.push(command);
                    let excess = c.prompts.len().saturating_sub(PROMPTS);
                    c.prompts.drain(..excess);
                }
                // The in-progress todo names the task best; without one, the prompt does.
                if !s.todos.iter().any(|t| t.status == TodoStatus::InProgress) {
                    s.context_snapshot.active_task = subject;
                }
            }
        }
        Kind::ToolUse { tool, .. } => {
            // Counted as the transcript counts them: the agent's calls, not the user's `!`
            // commands (`import` and `history` say the same number).
            let users = h
                .delivery
                .as_deref()
                .and_then(|d| d.split_once(':'))
                .is_some_and(|(_, id)| ccmem_proto::model::transcript::is_user_command(id));
            if let Some(c) = find(s, &conv_id).filter(|_| !users) {
                c.hook_tool_calls += 1;
                c.count_tool_calls();
            }
            tool_use(s, &conv_id, tool, h.cwd.as_deref(), now, &mut fx);
        }
        Kind::Stop { last_message, subagent, agent_transcript } => {
            if !subagent {
                close_last_command(s, now);
            }
            // An app's directives (`::git-create-pr{url=…}`) are markup, not words: read for
            // what was done, and taken out.
            let last_message = match last_message.as_deref().filter(|_| !*subagent) {
                Some(m) => {
                    let (words, found) = crate::agent::directives::split(m);
                    for (number, repository) in found.iter().filter_map(|d| d.pull_request()) {
                        crate::session::shell::opened_pull_request(s, number, &repository, &t);
                    }
                    Some(words)
                }
                None => last_message.clone(),
            };
            // The payload's own copy of the agent's last message: the transcript may not be
            // readable yet (or at all); its read later says the same or newer.
            if !*subagent {
                match (h.transcript.is_some(), last_message.as_deref(), find(s, &conv_id)) {
                    (true, Some(message), Some(c)) => {
                        if let Some(words) = crate::agent::transcript::last_words(message) {
                            c.digest.last_words = words;
                            c.digest.last_words_at = t.clone();
                        }
                    }
                    // No transcript of this agent's is read: its last message is all there is
                    // of what it said, findings included.
                    (false, Some(message), Some(c)) => {
                        crate::agent::transcript::take_message(&mut c.digest, message, &t)
                    }
                    _ => {}
                }
            }
            fx.intents_in = last_message;
            if *subagent {
                fx.read_agent_transcript = agent_transcript.clone();
            } else {
                fx.read_transcript = h.transcript.clone();
            }
            fx.checkpoint = Some((CheckpointReason::StopHook, CheckpointType::EventDriven));
        }
        Kind::PreCompact { trigger, instructions } => {
            // Read what the conversation said before it is summarised; it is `compacted`
            // once the compaction happened (the SessionStart with source "compact").
            fx.read_transcript = h.transcript.clone();
            if let Some(c) = find(s, &conv_id) {
                c.compact_trigger = trigger.clone();
                c.compact_instructions =
                    ccmem_proto::model::session::truncate_chars(&crate::text::clean(instructions), 500);
            }
            fx.checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        Kind::Compacted { summary } => {
            if let Some(c) = find(s, &conv_id) {
                c.compacted = true;
                if !summary.trim().is_empty() {
                    crate::agent::transcript::take_summary(&mut c.digest, summary, &t);
                }
            }
            fx.checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        Kind::SessionEnd { reason } => {
            fx.read_transcript = h.transcript.clone();
            if let Some(c) = find(s, &conv_id) {
                c.ended = true;
                c.end_reason = reason.clone();
            }
            fx.checkpoint = Some((CheckpointReason::Automatic, CheckpointType::EventDriven));
        }
        Kind::Notification { message } => {
            if let Some(c) = find(s, &conv_id) {
                c.notice = ccmem_proto::model::session::truncate_chars(&crate::text::clean(message), 200);
                c.notice_at = t.clone();
            }
        }
        Kind::Task(change) => change_task(s, &conv_id, change.clone()),
        Kind::Other(_) => {}
    }
    session::touch(s, now);
    fx
}

/// The last prompt's entry gets its duration and status when the agent stops.
fn close_last_command(s: &mut Session, now: DateTime<Utc>) {
    if let Some(c) = s.commands_executed.last_mut().filter(|c| c.duration_seconds.is_none()) {
        if let Some(start) = crate::clock::parse_iso(&c.timestamp) {
            c.duration_seconds = Some((now - start).num_milliseconds().max(0) as f64 / 1000.0);
        }
        c.status = Some("completed".into());
    }
}

pub(crate) fn find<'a>(s: &'a mut Session, id: &str) -> Option<&'a mut Conversation> {
    if id.is_empty() {
        return None;
    }
    s.conversations.iter_mut().find(|c| c.id == id)
}

fn conversation<'a>(s: &'a mut Session, id: &str, now: &str) -> &'a mut Conversation {
    if let Some(i) = s.conversations.iter().position(|c| c.id == id) {
        return &mut s.conversations[i];
    }
    if s.conversations.len() >= CONVERSATIONS {
        let drop = s.conversations.iter().position(|c| c.ended).unwrap_or(0);
        s.conversations.remove(drop);
    }
    s.conversations.push(Conversation {
        id: id.to_string(),
        source: "startup".into(),
        started_at: now.to_string(),
        last_activity: now.to_string(),
        ..Default::default()
    });
    let last = s.conversations.len() - 1;
    &mut s.conversations[last]
}

/// The most recent conversation still within `ttl` (seed 002: an expired one counts as
/// none), other than `except` (the one asking).
pub fn resumable<'a>(
    s: &'a Session,
    ttl: std::time::Duration,
    now: DateTime<Utc>,
    except: Option<&str>,
) -> Option<&'a Conversation> {
    // The last conversation that did work: a `claude -p "continue"` that did nothing after
    // it is not what anyone wants to resume.
    s.conversations
        .iter()
        .filter(|c| Some(c.id.as_str()) != except)
        // An imported conversation keeps its own (old) times and was brought in to be
        // carried on: it is resumable while its session lives.
        .filter(|c| {
            c.imported_events > 0
                || crate::clock::parse_iso(&c.last_activity)
                    .is_some_and(|t| (now - t).to_std().map(|d| d < ttl).unwrap_or(true))
        })
        .max_by(|a, b| (a.did_work(), a.recency()).cmp(&(b.did_work(), b.recency())))
}

#[cfg(test)]
mod tests;
