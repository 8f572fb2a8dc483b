//! Recall's requests: a client's scope checked and resolved, then the journal asked on its
//! recall connection, off the runtime's threads.

use super::rpc::{resolved, root_of};
use super::state::Shared;
use crate::recall::{self, Filter};
use ccmem_proto::model::agent::Agent;
use ccmem_proto::wire::api::{self, Commit, Hits, Scope, ShowReply, WhyReply};
use ccmem_proto::wire::rpc::{code, RpcError};
use std::path::Path;
use std::sync::Arc;

/// Characters of a query, an id or an agent's name taken at most.
const TEXT_MAX: usize = 1000;

/// `recall.search`.
pub async fn search(name: &str, p: api::SearchParams, shared: &Arc<Shared>) -> Result<Hits, RpcError> {
    if p.query.chars().count() > TEXT_MAX {
        return Err(RpcError::invalid_params(name, format!("the query is longer than {TEXT_MAX} characters")));
    }
    let filter = filter(name, &p.scope, shared).await?;
    let limit = p.scope.limit.unwrap_or(recall::DEFAULT_HITS);
    ask(shared, move |c| Ok(recall::search(c, &p.query, &filter, limit))).await?.map_err(RpcError::app)
}

/// `recall.timeline`.
pub async fn timeline(name: &str, p: api::TimelineParams, shared: &Arc<Shared>) -> Result<Hits, RpcError> {
    let filter = filter(name, &p.scope, shared).await?;
    if filter.root.is_none() && filter.session.is_none() && filter.since_ms.is_none() {
        return Err(RpcError::invalid_params(name, "a timeline of every project needs a session or a time (--since)"));
    }
    let limit = p.scope.limit.unwrap_or(recall::DEFAULT_STEPS);
    ask(shared, move |c| recall::timeline(c, &filter, p.full, limit)).await
}

/// `recall.why`.
pub async fn why(name: &str, p: api::WhyParams, shared: &Arc<Shared>) -> Result<WhyReply, RpcError> {
    let base = match &p.project {
        Some(project) => project.clone(),
        None if p.file.is_absolute() => p.file.parent().map(Path::to_path_buf).unwrap_or_default(),
        None => return Err(RpcError::invalid_params(name, "a relative file needs the project it is in")),
    };
    // A directory that may not be a project (`/etc`, the home directory) has no `why`.
    let root = root_of(shared, name, base).await?;
    let file = if p.file.is_absolute() { p.file.clone() } else { root.join(&p.file) };
    let rel = relative(&root, &file)
        .ok_or_else(|| RpcError::app(format!("{} is not in the project at {}", file.display(), root.display())))?;
    let limit = p.limit.unwrap_or(recall::DEFAULT_TOUCHES);
    let (r, f, line) = (root.clone(), rel.clone(), p.line);
    let commit =
        tokio::task::spawn_blocking(move || crate::observe::git::last_change(&r, &f, line)).await.unwrap_or_default();
    let (r, f) = (root.clone(), rel.clone());
    let (touches, commit) = ask(shared, move |c| {
        let touches = recall::why(c, &r, &f, limit)?;
        let commit = match commit {
            Some((hash, subject, at_ms)) => {
                let mut commit = Commit { hash, subject, at: recall::iso(at_ms), session: None };
                recall::session_at(c, &r, &mut commit, at_ms)?;
                Some(commit)
            }
            None => None,
        };
        Ok((touches, commit))
    })
    .await?;
    Ok(WhyReply { project: root, file: rel, commit, touches })
}

/// `recall.show`.
pub async fn show(name: &str, p: api::ShowParams, shared: &Arc<Shared>) -> Result<ShowReply, RpcError> {
    let (seq, around) = (p.seq, p.around);
    let root = match p.project {
        Some(path) => Some(resolved(shared, name, path).await?),
        None => None,
    };
    // Another project's event answers as one that is not there: whether it exists is that
    // project's to tell.
    let found = ask(shared, move |c| recall::show(c, seq, around)).await?;
    match found.filter(|r| root.as_ref().is_none_or(|root| r.hit.project == *root)) {
        Some(reply) => Ok(reply),
        None => Err(RpcError::app(format!("there is no event {seq} in the journal (forgotten, or never kept)"))),
    }
}

/// The scope a client sent, checked, as the journal is asked.
async fn filter(name: &str, scope: &Scope, shared: &Arc<Shared>) -> Result<Filter, RpcError> {
    let root = match (&scope.project, scope.all) {
        (_, true) => None,
        (Some(path), false) => Some(resolved(shared, name, path.clone()).await?),
        (None, false) => return Err(RpcError::invalid_params(name, "give a project (a path in it) or `all`")),
    };
    let agent = match scope.agent.as_deref() {
        None => Vec::new(),
        Some(a) => Agent::ALL
            .into_iter()
            .find(|x| x.name().eq_ignore_ascii_case(a.trim()) || x.display().eq_ignore_ascii_case(a.trim()))
            .map(|x| vec![x.name().to_string(), x.display().to_string()])
            .ok_or_else(|| {
                let known: Vec<&str> = Agent::ALL.iter().map(|x| x.name()).collect();
                RpcError::invalid_params(name, format!("unknown agent {a:?}: one of {}", known.join(", ")))
            })?,
    };
    if let Some(id) = &scope.session {
        if id.chars().count() > TEXT_MAX || id.chars().any(char::is_control) {
            return Err(RpcError::invalid_params(name, "a session or conversation id is one line of text"));
        }
    }
    // A session or conversation the journal knows: its whole id, or the start of a
    // conversation's (`2d984148`, as hits show it) when that names one.
    let session = match scope.session.clone() {
        Some(id) => Some(
            ask(shared, move |c| recall::session_named(c, &id))
                .await?
                .map_err(|e| RpcError::invalid_params(name, e))?,
        ),
        None => None,
    };
    let kinds = recall::kinds::journal_kinds(&scope.kinds).map_err(|e| RpcError::invalid_params(name, e))?;
    if let (Some(since), Some(until)) = (scope.since_ms, scope.until_ms) {
        if since > until {
            return Err(RpcError::invalid_params(name, "the span ends before it starts (--until is before --since)"));
        }
    }
    Ok(Filter { root, agent, session, kinds, since_ms: scope.since_ms, until_ms: scope.until_ms })
}

/// `f` on the journal's recall connection, in the blocking pool.
pub(super) async fn ask<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
) -> Result<T, RpcError> {
    let journal = shared.projects.ctx().journal.clone();
    tokio::task::spawn_blocking(move || journal.recall(f))
        .await
        .map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("recall failed: {e}")))?
        .map_err(RpcError::app)
}

/// `file` relative to `root`, as the journal keeps an edit's path; None outside it.
fn relative(root: &Path, file: &Path) -> Option<String> {
    let lexical = crate::observe::cmdline::lexical(file);
    crate::text::relative(root, &lexical.to_string_lossy()).ok().filter(|r| !r.is_empty() && !r.starts_with(".."))
}
