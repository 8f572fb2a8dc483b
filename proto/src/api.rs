//! Methods of the ccmem protocol and their parameter and result types.
//!
//! Every type tolerates unknown fields, so that a newer peer can add fields without
//! breaking an older one; incompatible changes bump [`crate::PROTOCOL_VERSION`].

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Method names.
pub mod method {
    /// Version exchange: [`super::Hello`] → [`super::HelloReply`].
    pub const HELLO: &str = "hello";
    /// Liveness check: no params → `"pong"`.
    pub const PING: &str = "ping";
    /// Daemon and project status: [`super::StatusParams`] → [`super::StatusReply`].
    pub const STATUS: &str = "status";
    /// Graceful shutdown: no params → [`super::ShutdownReply`], then the daemon exits.
    pub const SHUTDOWN: &str = "shutdown";
}

/// Params of `hello`: who the client is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Program name, e.g. `ccmemctl`.
    pub client: String,
    /// The client's ccmem version.
    pub version: String,
    /// The protocol version the client speaks.
    pub protocol: u32,
}

impl Hello {
    /// The hello this build sends.
    pub fn this_build(client: &str) -> Self {
        Self { client: client.into(), version: crate::VERSION.into(), protocol: crate::PROTOCOL_VERSION }
    }
}

/// Result of `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloReply {
    /// The daemon's ccmem version.
    pub daemon_version: String,
    /// The protocol version the daemon speaks.
    pub protocol_version: u32,
    /// The daemon's process id.
    pub pid: u32,
    /// Whether the daemon can serve a client of the protocol the client announced.
    pub compatible: bool,
}

/// Params of `status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusParams {
    /// A directory inside the project to report on; absolute. None: the daemon only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// Result of `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReply {
    /// The daemon itself.
    pub daemon: DaemonStatus,
    /// The project `path` belongs to, when a path was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectStatus>,
}

/// The daemon's identity, versions and load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStatus {
    /// The daemon's ccmem version.
    pub version: String,
    /// The protocol version the daemon speaks.
    pub protocol_version: u32,
    /// Process id.
    pub pid: u32,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Start time, RFC 3339.
    pub started_at: String,
    /// Seconds since start.
    pub uptime_secs: f64,
    /// Milliseconds from process start to accepting connections.
    pub ready_ms: f64,
    /// Connection counters.
    pub connections: ConnectionStats,
    /// Projects with a live session.
    pub live_projects: usize,
}

/// Connection counters since start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionStats {
    /// Open now.
    pub active: u64,
    /// The cap on open connections.
    pub max: u64,
    /// Accepted since start.
    pub accepted: u64,
    /// Refused because the peer was another user.
    pub refused_peer: u64,
    /// Refused because the cap was reached.
    pub refused_busy: u64,
    /// Requests and notifications handled.
    pub requests: u64,
}

/// A project as the daemon sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectStatus {
    /// The project root: the git top-level of the path asked about, else that path.
    pub root: PathBuf,
    /// Whether the daemon keeps a live session for it.
    pub live: bool,
}

/// Result of `shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownReply {
    /// The pid of the daemon that is stopping, so a caller can wait for it to exit.
    pub pid: u32,
}
