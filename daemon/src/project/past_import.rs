//! A past conversation taken into a project's history: an ended session of its own, built
//! from the conversation's hooks by the same rules as a live one, journaled and ended as
//! `imported`. No project task is started for it and the live session is never touched:
//! importing a machine's old conversations must not open a session in every project they
//! name. A conversation the journal holds already is not taken again.

use super::journal::{entry_of, hook_entries_of};
use super::task::Services;
use crate::agent::hooks;
use ccmem_proto::model::session::{EndReason, Session};
use ccmem_proto::wire::api::ImportPastReply;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A past conversation being imported: its session, where its transcript is, events so far.
struct PastImport {
    s: Session,
    transcript: Option<String>,
    events: u64,
}

/// Past imports under way, by project and conversation (each holds a session until its
/// last batch).
#[derive(Default)]
pub struct PastImports(tokio::sync::Mutex<HashMap<(PathBuf, String), PastImport>>);

/// Imports open at once at most.
const OPEN_AT_MOST: usize = 8;

/// What the live session of the project is, when there is one: its id and conversations.
pub struct Live {
    pub session_id: String,
    pub conversations: Vec<String>,
}

impl PastImports {
    /// Takes a batch of `conversation`'s hooks into its past session in the project at
    /// `root` (made at the first batch); at the `last`, reads its transcript, journals its
    /// conclusions and ends it.
    pub async fn take(
        &self,
        ctx: &Services,
        root: &Path,
        live: Option<Live>,
        conversation: String,
        hooks: Vec<hooks::Hook>,
        last: bool,
    ) -> Result<ImportPastReply, String> {
        if !ccmem_proto::model::agent::is_conversation_id(&conversation) {
            return Err(format!("{conversation:?} is not a conversation id"));
        }
        if !ctx.journal.is_open() {
            return Err("a project's history is the journal's, and there is no journal (see `ccmemctl status`)".into());
        }
        let key = (root.to_path_buf(), conversation.clone());
        let mut open = self.0.lock().await;
        if !open.contains_key(&key) {
            if open.len() >= OPEN_AT_MOST {
                return Err("too many imports into histories at once; try again when they end".into());
            }
            let (journal, id, r) = (ctx.journal.clone(), conversation.clone(), root.to_path_buf());
            let (known, taken) =
                tokio::task::spawn_blocking(move || (journal.conversation_known(&id), journal.session_ids(&r)))
                    .await
                    .map_err(|e| e.to_string())?;
            match known {
                None => return Err("the journal could not be asked whether it holds the conversation".into()),
                Some(true) => return Ok(skipped("the journal holds this conversation already")),
                Some(false) if live.as_ref().is_some_and(|l| l.conversations.contains(&conversation)) => {
                    return Ok(skipped("this conversation is in the live session"))
                }
                Some(false) => {}
            }
            let first = hooks.iter().find_map(|h| h.at).unwrap_or_else(chrono::Utc::now);
            let taken = taken.unwrap_or_default();
            // Its own time's id; the next free second when another session has it.
            let busy = |sid: &str| {
                taken.iter().any(|t| t == sid)
                    || live.as_ref().is_some_and(|l| l.session_id == sid)
                    || open.iter().any(|((r, _), p)| r == root && p.s.session_id == sid)
            };
            let mut sid = crate::session::rules::new_id(first, None);
            while busy(&sid) {
                sid = crate::session::rules::new_id(first, Some(&sid));
            }
            let name = crate::observe::manifest::project_name(root);
            let s = crate::session::rules::start(root.to_path_buf(), name, sid, first, None);
            open.insert(key.clone(), PastImport { s, transcript: None, events: 0 });
        }
        let Some(p) = open.get_mut(&key) else { return Err("the import was lost".into()) };
        let mut entries = Vec::new();
        for h in hooks.iter().filter(|h| h.conversation.as_deref() == Some(conversation.as_str())) {
            let at = h.at.unwrap_or_else(chrono::Utc::now);
            let fx = super::replay::hook(&mut p.s, h, at);
            for e in &fx.agent_edits {
                super::replay::agent_edit(&mut p.s, e, at, false);
            }
            if let Some(t) = fx.read_transcript {
                p.transcript = Some(t);
            }
            entries.extend(hook_entries_of(&p.s, h, at));
            p.events += 1;
        }
        let (events, sid) = (p.events, p.s.session_id.clone());
        let past = if last { open.remove(&key) } else { None };
        drop(open);
        if let Some(done) = ctx.journal.append(entries, None) {
            let _ = done.await;
        }
        if let Some(p) = past {
            end(ctx, &conversation, p).await;
        }
        Ok(ImportPastReply { session: sid, events, skipped: None })
    }
}

/// Reads the conversation's transcript into its session (its last words, decisions),
/// journals what it concluded, and ends it as imported.
async fn end(ctx: &Services, conversation: &str, mut p: PastImport) {
    if let Some(path) = p.transcript.take().filter(|t| Path::new(t).is_absolute()) {
        if let Some(mut digest) = p.s.conversations.iter().find(|c| c.id == conversation).map(|c| c.digest.clone()) {
            let read = tokio::task::spawn_blocking(move || {
                let r =
                    crate::agent::transcript::read(Path::new(&path), &mut digest, crate::agent::transcript::MAX_READ);
                (r.is_ok(), digest)
            })
            .await;
            if let Ok((true, digest)) = read {
                if let Some(c) = p.s.conversations.iter_mut().find(|c| c.id == conversation) {
                    c.digest = digest;
                    c.count_tool_calls();
                }
            }
        }
    }
    let news = super::derived::Told::default().news(&p.s, None, |at, kind| entry_of(&p.s, at, "session", kind));
    if let Some(done) = ctx.journal.append(news, Some(&p.s)) {
        let _ = done.await;
    }
    // It ended when its last event happened.
    let ms = |iso: &str| crate::clock::parse_iso(iso).map(|t| t.timestamp_millis());
    let last =
        p.s.conversations
            .iter()
            .filter_map(|c| ms(&c.last_activity))
            .max()
            .or_else(|| ms(&p.s.last_activity))
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    ctx.journal.ended_at(Box::new(p.s), crate::store::end_reason_text(EndReason::Imported), last).await;
}

fn skipped(why: &str) -> ImportPastReply {
    ImportPastReply { skipped: Some(why.to_string()), ..ImportPastReply::default() }
}
