//! The accept loop: peer check, connection cap, one task per connection, graceful stop.

use crate::server::connection;
use crate::server::state::{Shared, Stats};
use interprocess::local_socket::tokio::{prelude::*, Listener};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::task::TaskTracker;

/// Accepts connections until shutdown is signalled, then stops accepting and waits (at most
/// the shutdown grace) for the connections to finish their requests in flight.
pub async fn serve(listener: Listener, shared: Arc<Shared>) {
    let tracker = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            biased;
            _ = shared.shutdown.cancelled() => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of descriptors or a transient error: back off rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Only our own user (uid on Unix, account SID on Windows). The 0700 directory and the
        // pipe's DACL already keep others out; this also stops root-owned or setuid helpers
        // that can reach the socket anyway.
        if let Err(r) = ccmem_proto::wire::peer::same_user(&stream) {
            Stats::bump(&shared.stats.refused_peer);
            tracing::warn!(peer_pid = ?r.pid, peer = %r, "refused connection from another user");
            continue;
        }
        let permit = match shared.permits.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            // At the cap: the connection idle longest makes room, if there is one.
            Err(_) if shared.idle.evict_oldest() => {
                tokio::time::timeout(Duration::from_secs(1), shared.permits.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(permit) = permit else {
            Stats::bump(&shared.stats.refused_busy);
            tracing::warn!(max = shared.limits.max_connections, "connection cap reached; refusing a client");
            tracker.spawn(connection::refuse_busy(stream, shared.limits.max_connections));
            continue;
        };
        Stats::bump(&shared.stats.accepted);
        tracker.spawn(connection::serve(stream, shared.clone(), permit));
    }
    drop(listener);
    tracker.close();
    let open = tracker.len();
    if open > 0 {
        tracing::info!(connections = open, "waiting for requests in flight");
    }
    if tokio::time::timeout(shared.limits.shutdown_grace, tracker.wait()).await.is_err() {
        tracing::warn!(connections = tracker.len(), "requests still in flight after the grace period; closing them");
    }
}
