//! A project's session: watching, the agent's hook, events, imports, checkpoints, the resume
//! context, facts and goals, history.

use super::*;

/// Starts watching a project.
pub(super) fn watch(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    let params = api::PathParams { path: project_path(path)? };
    let r: api::ProjectSummary = with_daemon(ctx, |c, _| c.call(method::WATCH, &params))?;
    // No session: the daemon leaves the project alone (another daemon keeps it) and says why.
    if r.session_id.is_empty() {
        let why = r.warnings.join("; ");
        return Err(Error::Failed(if why.is_empty() {
            format!("{} is not watched", output::path_line(&r.root))
        } else {
            why
        }));
    }
    show(ctx, &r, || format!("watching {} (session {})", output::path_line(&r.root), r.session_id));
    Ok(())
}

/// Stops watching a project; its session ends and is archived.
pub(super) fn unwatch(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    crate::by_user::require("unwatching a project").map_err(Error::Failed)?;
    let params = api::PathParams { path: project_path(path)? };
    let r: api::EndReply = with_daemon(ctx, |c, _| c.call(method::UNWATCH, &params))?;
    show(ctx, &r, || match &r.ended_session {
        Some(id) => format!("{} is no longer watched; session {id} ended and was archived", output::path_line(&r.root)),
        None => format!("{} was not being watched", output::path_line(&r.root)),
    });
    Ok(())
}

/// The projects the daemon holds.
pub(super) fn projects(ctx: &Ctx) -> Result<(), Error> {
    let r: api::ProjectList = with_daemon(ctx, |c, _| c.call(method::PROJECTS, &json!({})))?;
    show(ctx, &r, || output::projects(&r));
    Ok(())
}

/// Replays a Claude Code transcript into a project's session.
pub(super) fn import(ctx: &Ctx, transcript: PathBuf, project: Option<PathBuf>) -> Result<(), Error> {
    let transcript =
        std::path::absolute(&transcript).map_err(|e| Error::Failed(format!("{}: {e}", transcript.display())))?;
    let project = project_path(project)?;
    let (_, id) = import::check(&transcript).map_err(Error::Failed)?;
    // Twice would count every edit twice: a conversation already there is refused, unless
    // an import of it was cut short (its events are numbered: it resumes after the last).
    let params = api::StatusParams { path: Some(project.clone()) };
    let st: serde_json::Value = with_daemon(ctx, |c, _| c.call(method::STATUS, &params))?;
    // The id the import will give it (see `Emit`): the records', or the file's name's.
    let id = id.filter(|i| ccmem_proto::model::agent::is_conversation_id(i));
    let id = id.unwrap_or_else(|| import::id_from_name(&transcript));
    let conversation = st["project"]["session"]["conversations"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"].as_str() == Some(id.as_str())).cloned());
    let resumed = conversation.as_ref().and_then(|c| c["imported_events"].as_u64()).unwrap_or(0) as usize;
    let refuse = || {
        Error::Failed(format!(
            "conversation {id} is already in the session of {} (imported before, or live); \
             `ccmemctl reset-session` first to import it again",
            output::path_line(&project)
        ))
    };
    if conversation.is_some() && resumed == 0 {
        return Err(refuse());
    }
    let (summary, sent) = deliver_live(ctx, &transcript, &project, resumed)?;
    if resumed > 0 && sent == resumed {
        return Err(refuse());
    }
    show(ctx, &summary, || {
        let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        format!(
            "imported {} into {}: {} conversation {}, {} ({}, {}, {}){}{}",
            output::path_line(&summary.transcript),
            output::path_line(&summary.project),
            summary.agent.display(),
            summary.conversation_id,
            n(summary.events, "event", "events"),
            n(summary.prompts, "prompt", "prompts"),
            n(summary.tool_calls, "tool call", "tool calls"),
            n(summary.compactions, "compaction", "compactions"),
            match summary.bad_lines {
                0 => String::new(),
                k => format!("; {} not JSON, skipped", n(k, "line was", "lines were")),
            },
            match resumed {
                0 => String::new(),
                k => format!("; resumed after the {k} events an earlier import delivered"),
            }
        )
    });
    Ok(())
}

/// Replays the conversation in `transcript` into the live session of `project` as its hooks
/// would have delivered it, numbered, after the first `resumed` events (delivered by an
/// import cut short); returns what was read and the number of the last event delivered.
pub(super) fn deliver_live(
    ctx: &Ctx,
    transcript: &Path,
    project: &Path,
    resumed: usize,
) -> Result<(import::Summary, usize), Error> {
    // Events the daemon has (from an import cut short, or before a retried connection) are
    // not sent again; were they, the daemon would not count them twice either.
    let mut sent = resumed;
    let summary = with_daemon(ctx, |c, _| {
        let mut n = 0usize;
        let mut lost = None;
        let r = import::replay(transcript, project, |p| {
            n += 1;
            if n <= sent {
                return Ok(());
            }
            // Numbered, so that the daemon takes each event once however often it is sent.
            let mut p = p.clone();
            // A record can be larger than a frame (an Edit of a large file keeps the whole
            // original; a pasted prompt of megabytes): bounded as the live hook bounds it.
            crate::hook::trim(&mut p);
            p[api::IMPORT_SEQ] = json!(n);
            match c.call::<_, serde_json::Value>(method::HOOK, &p) {
                Ok(_) => {
                    sent = n;
                    Ok(())
                }
                Err(CallError::Io(e)) => {
                    lost = Some(e);
                    Err("connection lost".into())
                }
                Err(e) => Err(Error::from(e).message().unwrap_or("refused").to_string()),
            }
        });
        match (r, lost) {
            (_, Some(e)) => Err(CallError::Io(e)),
            (Ok(s), None) => Ok(s),
            (Err(m), None) => Err(CallError::BadReply(m)),
        }
    })?;
    Ok((summary, sent))
}

/// Bytes of payloads sent in one batch at most (a frame holds 1 MiB).
const PAST_BATCH: usize = 512 * 1024;

/// Imports a past conversation into the project's history: its payloads in batches, the
/// last one ending its session.
pub(super) fn import_into_history(ctx: &Ctx, transcript: PathBuf, project: Option<PathBuf>) -> Result<(), Error> {
    let transcript =
        std::path::absolute(&transcript).map_err(|e| Error::Failed(format!("{}: {e}", transcript.display())))?;
    let project = project_path(project)?;
    let (_, id) = import::check(&transcript).map_err(Error::Failed)?;
    let id = id.filter(|i| ccmem_proto::model::agent::is_conversation_id(i));
    let conversation = id.unwrap_or_else(|| import::id_from_name(&transcript));
    let (summary, reply) = deliver_into_history(ctx, &transcript, &project, &conversation)?;
    let out = json!({"conversation_id": conversation, "session": reply.session, "events": reply.events,
        "skipped": reply.skipped, "agent": summary.agent.name(), "project": project});
    show(ctx, &out, || match &reply.skipped {
        Some(why) => format!("{conversation}: not imported ({why})"),
        None => format!(
            "imported {} into the history of {}: {} conversation {conversation}, {} events, as session {}",
            output::path_line(&transcript),
            output::path_line(&project),
            summary.agent.display(),
            reply.events,
            reply.session
        ),
    });
    Ok(())
}

/// Replays the conversation in `transcript` into the history of `project`, as the ended
/// session of its own that the daemon makes of it, in batches; returns what was read and the
/// daemon's last answer.
pub(super) fn deliver_into_history(
    ctx: &Ctx,
    transcript: &Path,
    project: &Path,
    conversation: &str,
) -> Result<(import::Summary, api::ImportPastReply), Error> {
    let mut payloads: Vec<serde_json::Value> = Vec::new();
    let mut n = 0usize;
    let summary = import::replay(transcript, project, |p| {
        n += 1;
        let mut p = p.clone();
        crate::hook::trim(&mut p);
        p[api::IMPORT_SEQ] = json!(n);
        payloads.push(p);
        Ok(())
    })
    .map_err(Error::Failed)?;
    let mut batches: Vec<Vec<serde_json::Value>> = vec![Vec::new()];
    let mut size = 0usize;
    for p in payloads {
        let bytes = p.to_string().len();
        if size + bytes > PAST_BATCH && !batches.last().is_some_and(Vec::is_empty) {
            batches.push(Vec::new());
            size = 0;
        }
        size += bytes;
        if let Some(b) = batches.last_mut() {
            b.push(p);
        }
    }
    let count = batches.len();
    let mut reply = api::ImportPastReply::default();
    for (i, batch) in batches.into_iter().enumerate() {
        let params = api::ImportPastParams {
            path: project.to_path_buf(),
            conversation: conversation.to_string(),
            payloads: batch,
            last: i + 1 == count,
        };
        reply = with_daemon(ctx, |c, _| c.call(method::IMPORT_PAST, &params))?;
        if reply.skipped.is_some() {
            break;
        }
    }
    Ok((summary, reply))
}

/// A project's archived sessions and its conversations.
pub(super) fn history(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    let params = api::PathParams { path: project_path(path)? };
    let r: api::HistoryReply = with_daemon(ctx, |c, _| c.call(method::HISTORY, &params))?;
    show(ctx, &r, || output::history(&r));
    Ok(())
}

/// Ends a project's session and starts a new one.
pub(super) fn reset_session(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    crate::by_user::require("ending a project's session").map_err(Error::Failed)?;
    let params = api::PathParams { path: project_path(path)? };
    let r: api::EndReply = with_daemon(ctx, |c, _| c.call(method::RESET, &params))?;
    if r.ended_session.is_none() && r.new_session.is_none() {
        // Left alone by this daemon (another keeps the project): status says which.
        return Err(Error::Failed(format!(
            "no session was started for {}: `ccmemctl status {}` says why",
            output::path_line(&r.root),
            output::path_line(&r.root)
        )));
    }
    show(ctx, &r, || {
        let new = r.new_session.as_deref().unwrap_or("?");
        match &r.ended_session {
            Some(old) => format!("session {old} ended and was archived; new session {new}"),
            None => format!("new session {new}"),
        }
    });
    Ok(())
}

/// Writes a checkpoint now.
pub(super) fn checkpoint(
    ctx: &Ctx,
    path: Option<PathBuf>,
    reason: cli::Reason,
    note: Option<String>,
) -> Result<(), Error> {
    let reason = match reason {
        cli::Reason::Manual => api::RequestedReason::Manual,
        cli::Reason::PhaseComplete => api::RequestedReason::PhaseComplete,
    };
    let params = api::CheckpointParams { path: project_path(path)?, reason, note };
    let r: api::CheckpointReply = with_daemon(ctx, |c, _| c.call(method::CHECKPOINT, &params))?;
    for w in &r.warnings {
        eprintln!("ccmemctl: warning: {w}");
    }
    show(ctx, &r, || {
        format!(
            "checkpoint written: {} ({} bytes, session {})",
            output::path_line(&r.checkpoint.path),
            r.checkpoint.bytes,
            r.session_id
        )
    });
    Ok(())
}

/// The agent's hook: reads the payload on stdin, answers quietly, always exits 0.
pub(super) fn hook(ctx: &Ctx, agent: Option<&str>) -> Result<(), Error> {
    crate::closed_stdout_ends_quietly(false);
    hook::run(Some(&ctx.socket), ctx.autostart, agent);
    Ok(())
}

/// The resume context for a fresh agent.
pub(super) fn context(ctx: &Ctx, path: Option<PathBuf>, budget: Option<u64>) -> Result<(), Error> {
    let params = api::ContextParams { path: project_path(path)?, budget: budget.map(|b| b as usize) };
    let r: api::ContextReply = with_daemon(ctx, |c, _| c.call(method::CONTEXT, &params))?;
    show(ctx, &r, || r.context.clone());
    Ok(())
}

/// The conversation id to resume (`claude --resume`).
pub(super) fn resume_id(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    let params = api::ContextParams { path: project_path(path)?, budget: Some(200) };
    let r: api::ContextReply = with_daemon(ctx, |c, _| c.call(method::CONTEXT, &params))?;
    match &r.conversation_id {
        Some(id) => {
            show(ctx, &json!({"conversation_id": id}), || id.clone());
            Ok(())
        }
        None => Err(Error::Failed(format!("no conversation to resume in {}", output::path_line(&params.path)))),
    }
}

/// Lists or edits facts and goals.
pub(super) fn facts(ctx: &Ctx, action: Option<cli::FactsAction>, project: Option<PathBuf>) -> Result<(), Error> {
    use ccmem_proto::model::facts::FactsEdit;
    let (edit, global) = match action.unwrap_or(cli::FactsAction::List) {
        cli::FactsAction::List => (None, false),
        cli::FactsAction::Forget { n, global } => {
            if global {
                crate::by_user::require("forgetting a user-wide fact").map_err(Error::Failed)?;
            }
            (Some(FactsEdit::Forget(n)), global)
        }
        cli::FactsAction::Done { n } => (Some(FactsEdit::GoalDone(n)), false),
        cli::FactsAction::Confirm { n } => {
            crate::by_user::require("confirming a user-wide fact").map_err(Error::Failed)?;
            (Some(FactsEdit::Confirm(n)), true)
        }
    };
    let params = api::FactsParams { path: project_path(project)?, edit, global, for_agent: false };
    let r: api::FactsReply = with_daemon(ctx, |c, _| c.call(method::FACTS, &params))?;
    show(ctx, &r, || output::facts(&r, output::FactsFor::Cli));
    Ok(())
}

/// Records one session event given as JSON.
pub(super) fn event(ctx: &Ctx, event: Option<String>, project: Option<PathBuf>) -> Result<(), Error> {
    let text = match event.as_deref() {
        Some(t) if t != "-" => t.to_string(),
        _ => input::capped_text(io::stdin().lock(), ccmem_proto::wire::frame::MAX_FRAME as u64, "the event on stdin")
            .map_err(Error::Failed)?,
    };
    let event: ccmem_proto::model::session::SessionEvent = serde_json::from_str(&text).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not JSON",
            _ => "not a valid event",
        };
        // serde's words quote what it was given, which can be a token pasted by mistake.
        let e = ccmem_proto::redact::redact(&e.to_string()).into_owned();
        Error::Failed(format!("{what} ({e}); `ccmemctl event --help` lists the kinds with an example of each"))
    })?;
    let params = api::EventParams { path: project_path(project)?, event };
    let _: serde_json::Value = with_daemon(ctx, |c, _| c.call(method::EVENT, &params))?;
    show(ctx, &json!({"recorded": true}), || "recorded".to_string());
    Ok(())
}
