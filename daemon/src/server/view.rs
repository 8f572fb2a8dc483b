//! The view's requests (`ccmemctl ui`): the projects and a project's sessions from the
//! journal, and the subscription that tells a view what the journal took, as it takes it.

use super::recall::ask;
use super::state::Shared;
use crate::project::task::Msg;
use crate::recall::overview;
use ccmem_proto::wire::api::{self, method, Changed, ViewProjects, ViewSessions};
use ccmem_proto::wire::rpc::{self, RpcError};
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

/// Changes coming this close together are told as one: a burst of hooks (an agent's tool
/// calls) redraws a view once, not once per event.
const COALESCE: Duration = Duration::from_millis(100);

/// `view.projects`.
pub async fn projects(shared: &Arc<Shared>) -> Result<ViewProjects, RpcError> {
    let live: HashSet<PathBuf> = shared.projects.roots().into_iter().collect();
    let projects = ask(shared, move |c| overview::projects(c, &live)).await?;
    Ok(ViewProjects { projects })
}

/// `view.sessions`. The project is named by the root the journal keeps (as `view.projects`
/// gives it), not resolved on disk: a project that is gone still has its past.
pub async fn sessions(name: &str, p: api::ViewSessionsParams, shared: &Arc<Shared>) -> Result<ViewSessions, RpcError> {
    if !p.path.is_absolute() {
        return Err(RpcError::invalid_params(name, format!("path must be absolute, got {}", p.path.display())));
    }
    let root = ccmem_proto::wire::paths::lexical(&p.path);
    // The session the daemon keeps, for each root it may be (a root shown stripped of an
    // invisible character is found in the journal first): asked of the project's task.
    let mut live = std::collections::HashMap::new();
    for r in shared.projects.roots() {
        if r == root || overview::shown(&r.to_string_lossy()) == root.to_string_lossy() {
            let (tx, rx) = oneshot::channel();
            shared.projects.send(&r, Msg::Summary { conversations: false, reply: tx }).await;
            if let Ok(s) = rx.await {
                live.insert(r, s.session_id);
            }
        }
    }
    let limit = p.limit.unwrap_or(overview::DEFAULT_SESSIONS);
    ask(shared, move |c| overview::sessions(c, &root, |r| live.get(r).cloned(), limit)).await
}

/// The id of a `view.subscribe` request, when `frame` is one (looked for cheaply first:
/// every hook's frame passes here).
pub fn subscribe_id(frame: &[u8]) -> Option<Value> {
    let name = method::VIEW_SUBSCRIBE.as_bytes();
    if !frame.windows(name.len()).any(|w| w == name) {
        return None;
    }
    let incoming = rpc::parse_incoming(frame).ok()?;
    (incoming.method == method::VIEW_SUBSCRIBE).then_some(incoming.id).flatten()
}

/// The answer to a subscription request `id`.
pub fn subscribed(id: &Value) -> Vec<u8> {
    rpc::encode_response(id, &Ok(serde_json::json!(api::Subscribed { subscribed: true })))
}

/// The notification telling a subscriber what changed.
pub fn changed(projects: Vec<PathBuf>) -> Vec<u8> {
    let mut v = serde_json::json!(Changed { projects });
    crate::text::redact_json(&mut v);
    ccmem_proto::printable::json(&mut v);
    rpc::encode_request(None, method::VIEW_CHANGED, &v)
}

/// Waits for the journal's next change, then for those that follow within [`COALESCE`]: the
/// projects they name (empty: any may have changed; a subscriber that fell behind reads
/// everything again). None: the journal is gone.
pub async fn next_change(rx: &mut broadcast::Receiver<crate::journal::Change>) -> Option<Vec<PathBuf>> {
    let mut roots = Vec::new();
    let mut everything = false;
    let mut take = |got: Result<crate::journal::Change, broadcast::error::RecvError>| match got {
        Ok(c) if c.is_empty() => {
            everything = true;
            true
        }
        Ok(c) => {
            roots.extend(c.iter().cloned());
            true
        }
        Err(broadcast::error::RecvError::Lagged(_)) => {
            everything = true;
            true
        }
        Err(broadcast::error::RecvError::Closed) => false,
    };
    if !take(rx.recv().await) {
        return None;
    }
    tokio::time::sleep(COALESCE).await;
    loop {
        match rx.try_recv() {
            Ok(c) => take(Ok(c)),
            Err(broadcast::error::TryRecvError::Lagged(n)) => take(Err(broadcast::error::RecvError::Lagged(n))),
            Err(_) => break,
        };
    }
    if everything {
        return Some(Vec::new());
    }
    roots.sort();
    roots.dedup();
    Some(roots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Changes;

    /// A burst is told once, each project once; a forget (no project named) as "anything".
    #[tokio::test]
    async fn a_burst_of_changes_is_told_once() {
        let changes = Changes::default();
        let mut rx = changes.subscribe();
        for root in ["/b", "/a", "/b"] {
            changes.tell(|| vec![PathBuf::from(root)]);
        }
        assert_eq!(next_change(&mut rx).await, Some(vec![PathBuf::from("/a"), PathBuf::from("/b")]));
        changes.tell(|| vec![PathBuf::from("/a")]);
        changes.tell(Vec::new);
        assert_eq!(next_change(&mut rx).await, Some(Vec::new()));
        drop(changes);
        assert_eq!(next_change(&mut rx).await, None, "the journal gone ends the subscription");
    }

    #[test]
    fn only_a_subscription_request_is_taken_for_one() {
        let req = br#"{"jsonrpc":"2.0","id":7,"method":"view.subscribe","params":{}}"#;
        assert_eq!(subscribe_id(req), Some(serde_json::json!(7)));
        // A notification has nowhere to be answered; a prompt that names it is a hook.
        assert_eq!(subscribe_id(br#"{"jsonrpc":"2.0","method":"view.subscribe"}"#), None);
        let hook = br#"{"jsonrpc":"2.0","id":1,"method":"hook","params":{"prompt":"call view.subscribe"}}"#;
        assert_eq!(subscribe_id(hook), None);
    }
}
