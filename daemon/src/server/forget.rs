//! `journal.forget`: a conversation, a session, a project's past or a text, removed for good
//! from every place ccmem keeps it: the live session (and its checkpoint, the copy before it
//! and its report), the journal, and the state dir's trackers, archives and facts.

use super::rpc::{ask, resolved};
use super::state::Shared;
use crate::journal::Forget;
use crate::project::task::{ForgetLive, Msg};
use ccmem_proto::wire::api::{ForgetParams, ForgetReply, ProjectSummary};
use ccmem_proto::wire::rpc::RpcError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What one forget names.
enum What {
    Text(String),
    Conversation(String),
    Session(String),
    Project,
}

/// Serves `journal.forget`.
pub(super) async fn forget(name: &str, p: ForgetParams, shared: &Arc<Shared>) -> Result<ForgetReply, RpcError> {
    let what = match (p.conversation, p.session, p.text) {
        (Some(c), None, None) if !c.trim().is_empty() => What::Conversation(c),
        (None, Some(s), None) if !s.trim().is_empty() => What::Session(s),
        (None, None, Some(t)) if t.trim().chars().count() >= 3 => What::Text(t),
        (None, None, Some(_)) => return Err(RpcError::invalid_params(name, "the text to forget is too short (3 characters at least)")),
        (None, None, None) if p.project.is_some() => What::Project,
        _ => {
            return Err(RpcError::invalid_params(
                name,
                "say one of --conversation ID, --session ID, --text TEXT (with --project PATH or --all), or --project PATH alone",
            ))
        }
    };
    if matches!(what, What::Text(_)) && p.project.is_none() && !p.all {
        return Err(RpcError::invalid_params(name, "--text needs --project PATH or --all"));
    }
    if p.all && !matches!(what, What::Text(_)) {
        return Err(RpcError::invalid_params(name, "--all goes with --text only"));
    }
    let root = match p.project {
        None => None,
        Some(path) => Some(project_root(shared, name, path).await?),
    };
    let apply = p.apply;
    let mut reply = ForgetReply { applied: apply, ..Default::default() };
    let live = live_sessions(shared, root.as_deref()).await;
    let ctx = shared.projects.ctx();
    let journal_what = match &what {
        What::Text(t) => Forget::Text { text: t.clone(), project: root.clone() },
        What::Conversation(c) => Forget::Conversation { id: c.clone(), project: root.clone() },
        What::Session(s) => Forget::Session { sid: s.clone(), project: root.clone() },
        What::Project => Forget::Project(root.clone().unwrap_or_default()),
    };
    // The live sessions first: their state then goes into the journal without it, and the
    // journal's own forget finds nothing more of it there.
    let live_what = match &what {
        What::Text(t) => Some(ForgetLive::Text(t.clone())),
        What::Conversation(c) => Some(ForgetLive::Conversation(c.clone())),
        What::Session(_) | What::Project => None,
    };
    if let Some(live_what) = &live_what {
        for s in &live {
            let r = ask(shared, &s.root, |reply| Msg::Forget { what: live_what.clone(), apply, reply }).await?;
            match r {
                Ok((true, files)) => {
                    reply.live.push(s.root.clone());
                    reply.files.extend(files);
                }
                Ok((false, _)) => {}
                Err(e) => reply.problems.push(format!("{}: {e}", s.root.display())),
            }
        }
    }
    match (&what, &root) {
        (What::Session(sid), _) => {
            if let Some(s) = live.iter().find(|s| &s.session_id == sid) {
                return Err(RpcError::app(format!(
                    "session {sid} is live in {}: `ccmemctl reset-session {}` ends it, then it can be forgotten",
                    s.root.display(),
                    s.root.display()
                )));
            }
        }
        (What::Project, Some(root)) if apply && live.iter().any(|s| &s.root == root) => {
            ask(shared, root, |reply| Msg::Unwatch { reply }).await?;
            reply.live.push(root.clone());
        }
        _ => {}
    }
    let forgotten = ctx.journal.forget(journal_what, apply).await;
    let roots = match forgotten {
        Ok(f) => {
            reply.events = f.events;
            reply.sessions = f.sessions;
            reply.rewritten = f.rewritten;
            reply.projects = f.projects;
            f.roots
        }
        Err(e) => {
            reply.problems.push(format!("the journal: {e}"));
            root.iter().cloned().collect()
        }
    };
    // The state dir and the projects' own files, on the blocking pool.
    let store = ctx.store.clone();
    let live_roots: Vec<PathBuf> = live.iter().map(|s| s.root.clone()).collect();
    let scope = root.clone();
    let files = tokio::task::spawn_blocking(move || -> Result<(Vec<PathBuf>, u64), String> {
        let scope = scope.as_deref();
        let mut files = Vec::new();
        let mut projects = 0;
        match &what {
            What::Text(t) => {
                files.extend(
                    store
                        .rewrite_json(scope, apply, &|v| crate::text::scrub_json(v, t) > 0)
                        .map_err(|e| e.to_string())?,
                );
                for r in roots.iter().filter(|r| !live_roots.contains(r)) {
                    files.extend(crate::project::forget::scrub_files(r, t, apply).map_err(|e| e.to_string())?);
                }
            }
            What::Conversation(c) => {
                files.extend(
                    store
                        .rewrite_json(scope, apply, &|v| crate::text::drop_conversation(v, c))
                        .map_err(|e| e.to_string())?,
                );
            }
            What::Session(sid) => files.extend(store.remove_archive(scope, sid, apply).map_err(|e| e.to_string())?),
            What::Project => {
                if let Some(r) = scope {
                    if let Some(d) = store.remove_project(r, apply).map_err(|e| e.to_string())? {
                        projects = 1;
                        files.push(d);
                    }
                    files.extend(crate::project::forget::remove_files(r, apply).map_err(|e| e.to_string())?);
                }
            }
        }
        Ok((files, projects))
    })
    .await
    .map_err(|e| RpcError::app(format!("forget failed: {e}")))?;
    match files {
        Ok((files, projects)) => {
            reply.projects = reply.projects.max(projects);
            reply.rewritten += files.len() as u64;
            reply.files.extend(files);
        }
        Err(e) => reply.problems.push(e),
    }
    reply.files.sort();
    reply.files.dedup();
    reply.live.sort();
    reply.live.dedup();
    Ok(reply)
}

/// The project a path names: its root, or for a directory that is gone, the path itself
/// (its past can still be forgotten).
async fn project_root(shared: &Arc<Shared>, name: &str, path: PathBuf) -> Result<PathBuf, RpcError> {
    if !path.is_absolute() {
        return Err(RpcError::invalid_params(name, format!("path must be absolute, got {}", path.display())));
    }
    let gone = {
        let p = path.clone();
        tokio::task::spawn_blocking(move || std::fs::symlink_metadata(&p).is_err()).await.unwrap_or(true)
    };
    if gone {
        return Ok(path);
    }
    resolved(shared, name, path).await
}

/// The live sessions in scope: `root`'s, or every one.
async fn live_sessions(shared: &Arc<Shared>, root: Option<&Path>) -> Vec<ProjectSummary> {
    let roots = match root {
        Some(r) if shared.projects.is_live(r) => vec![r.to_path_buf()],
        Some(_) => Vec::new(),
        None => shared.projects.roots(),
    };
    let mut out = Vec::new();
    for r in roots {
        if let Ok(s) = ask(shared, &r, |reply| Msg::Summary { conversations: false, reply }).await {
            out.push(s);
        }
    }
    out
}
