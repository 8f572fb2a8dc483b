//! Turns one frame into at most one reply: envelope checks, then the method's handler.

use crate::projects;
use crate::state::{Shared, Stats};
use ccmem_proto::api::{self, method};
use ccmem_proto::rpc::{self, RpcError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// Handles one frame. Returns the encoded reply, or `None` for a notification.
pub async fn handle_frame(frame: &[u8], shared: &Arc<Shared>) -> Option<Vec<u8>> {
    Stats::bump(&shared.stats.requests);
    let incoming = match rpc::parse_incoming(frame) {
        Ok(m) => m,
        Err((id, err)) => {
            tracing::debug!(code = err.code, error = %err.message, "rejected message");
            return Some(rpc::encode_response(&id, &Err(err)));
        }
    };
    let outcome = dispatch(&incoming.method, incoming.params, shared).await;
    if let Err(e) = &outcome {
        tracing::debug!(method = %incoming.method, code = e.code, error = %e.message, "request failed");
    }
    incoming.id.map(|id| rpc::encode_response(&id, &outcome))
}

async fn dispatch(name: &str, params: Value, shared: &Arc<Shared>) -> Result<Value, RpcError> {
    match name {
        method::HELLO => to_value(hello(parse(name, params)?)),
        method::PING => Ok(Value::from("pong")),
        method::STATUS => to_value(status(name, parse(name, params)?, shared).await?),
        method::SHUTDOWN => {
            tracing::info!("shutdown requested by a client");
            shared.shutdown.cancel();
            to_value(api::ShutdownReply { pid: std::process::id() })
        }
        _ => Err(RpcError::method_not_found(name)),
    }
}

fn hello(h: api::Hello) -> api::HelloReply {
    let compatible = h.protocol == ccmem_proto::PROTOCOL_VERSION;
    if !compatible {
        tracing::warn!(client = %h.client, version = %h.version, protocol = h.protocol, "client speaks another protocol");
    }
    api::HelloReply {
        daemon_version: ccmem_proto::VERSION.into(),
        protocol_version: ccmem_proto::PROTOCOL_VERSION,
        pid: std::process::id(),
        compatible,
    }
}

async fn status(name: &str, p: api::StatusParams, shared: &Arc<Shared>) -> Result<api::StatusReply, RpcError> {
    let project = match p.path {
        None => None,
        Some(path) if !path.is_absolute() => {
            return Err(RpcError::invalid_params(name, format!("path must be absolute, got {}", path.display())))
        }
        // File-system calls go to the blocking pool: a hung mount must not stall a worker.
        Some(path) => {
            let root = tokio::task::spawn_blocking(move || projects::resolve_root(&path))
                .await
                .map_err(|e| RpcError::new(rpc::code::INTERNAL_ERROR, format!("status failed: {e}")))?
                .map_err(|e| RpcError::app(e.to_string()))?;
            let live = shared.projects.is_live(&root);
            Some(api::ProjectStatus { root, live })
        }
    };
    Ok(api::StatusReply {
        daemon: api::DaemonStatus {
            version: ccmem_proto::VERSION.into(),
            protocol_version: ccmem_proto::PROTOCOL_VERSION,
            pid: std::process::id(),
            socket: shared.socket.clone(),
            started_at: shared.started_at.to_rfc3339(),
            uptime_secs: shared.started.elapsed().as_secs_f64(),
            ready_ms: shared.ready_ms.get().copied().unwrap_or(0.0),
            connections: shared.connection_stats(),
            live_projects: shared.projects.len(),
        },
        project,
    })
}

/// Params of a method; absent params read as `{}` so that all-optional params need none.
fn parse<T: DeserializeOwned>(name: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params };
    serde_json::from_value(params).map_err(|e| RpcError::invalid_params(name, e))
}

fn to_value<T: Serialize>(v: T) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::new(rpc::code::INTERNAL_ERROR, format!("cannot encode reply: {e}")))
}
