//! `ccmemd`, the per-user ccmem daemon.
//!
//! Data flow: [`main`] parses the command line and starts the runtime; [`run`] takes the
//! single-instance lock ([`instance`]), binds the private socket ([`socket`]) once everything
//! else is set up, and hands it to the accept loop ([`server`]), which gives each client a
//! task ([`connection`]) that answers frames through [`rpc`]. Project sessions live in
//! [`projects`]. On SIGTERM, SIGINT or a `shutdown` request ([`shutdown`]) the loop stops
//! accepting, requests in flight finish, every live project writes its final checkpoint, and
//! the socket and pidfile are removed.

pub use ccmem_proto::atomic;
pub mod blockers;
pub mod checkpoint;
pub mod cli;
pub mod connection;
pub mod context;
pub mod deps;
pub mod environment;
pub mod git;
pub mod global;
pub mod hooks;
pub mod instance;
pub mod logging;
pub mod manifest;
pub mod memory;
pub mod ports;
pub mod project;
pub mod projects;
pub mod report;
pub mod rpc;
pub mod server;
pub mod service;
pub mod session;
pub mod shutdown;
pub mod socket;
pub mod state;
pub mod store;
pub mod tasks;
pub mod testout;
pub mod watch;

use anyhow::Context;
use ccmem_proto::paths;
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a second daemon waits for a starting one to answer before giving up.
const STARTING_PEER_WAIT: Duration = Duration::from_secs(3);

/// Entry point of the `ccmemd` binary.
pub fn main() -> ExitCode {
    let started = Instant::now();
    memory::limit_arenas();
    let args = cli::Args::parse();
    logging::init(args.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("ccmemd").build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args, started)) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the daemon until it is told to stop. `started` is when the process began.
pub async fn run(args: cli::Args, started: Instant) -> anyhow::Result<ExitCode> {
    // Socket activation: the service manager's socket is the one clients reach.
    #[cfg(unix)]
    let inherited = service::inherited_socket()?;
    #[cfg(unix)]
    let given = inherited.as_ref().and_then(|i| i.path.clone());
    #[cfg(not(unix))]
    let given: Option<std::path::PathBuf> = None;
    let socket = match given {
        Some(p) => p,
        None => paths::socket_path(args.socket.as_deref()).context("cannot work out the socket path")?,
    };
    #[cfg(unix)]
    if let Some(dir) = paths::socket_dir(&socket) {
        paths::ensure_private_dir(dir)?;
    }
    let lock = match instance::acquire(&socket, STARTING_PEER_WAIT).await? {
        instance::Instance::Primary(lock) => lock,
        instance::Instance::AlreadyRunning(peer) => return Ok(already_running(&socket, &peer)),
    };
    let max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX).min(fd_budget());
    let limits = state::Limits {
        max_connections,
        idle_timeout: args.idle_timeout,
        write_timeout: Duration::from_secs(10),
        max_frame: ccmem_proto::frame::MAX_FRAME,
        shutdown_grace: args.shutdown_grace,
    };
    install_redaction(args.redact_patterns.as_deref())?;
    let state_dir = paths::state_dir().context("cannot find the state directory")?;
    let store = store::Store::new(state_dir.clone(), args.keep_sessions as usize);
    let (ports, port_requests) = ports::channel();
    let ctx = project::Ctx {
        ports,
        global: global::GlobalFacts::spawn(store.clone()),
        context_budget: (args.context_budget as usize).min(context::MAX_BUDGET),
        store,
        ttl: args.session_ttl,
        checkpoint_interval: args.checkpoint_interval,
        watch: Arc::new(watch::Settings::new(
            args.watch_coalesce,
            args.watch_poll_interval,
            args.watch_queue as usize,
            args.max_watches.unwrap_or(usize::MAX),
        )),
    };
    let shared = Arc::new(state::Shared::new(socket.clone(), started, limits, ctx));
    tokio::spawn(shutdown::on_signals(shared.shutdown.clone()));
    ports::spawn(port_requests, shared.projects.clone(), args.port_scan_interval.0);
    let (restored, archived) = shared.projects.restore().await;
    if restored + archived > 0 {
        tracing::info!(restored, archived, state_dir = %state_dir.display(), "sessions found at start-up");
    }

    // Last step of start-up: a client that can connect finds the daemon fully set up.
    #[cfg(unix)]
    let (listener, socket_file) = match inherited {
        Some(i) => (socket::adopt(i, &socket)?, None),
        None => socket::bind(&socket).map(|(l, f)| (l, Some(f)))?,
    };
    #[cfg(not(unix))]
    let (listener, socket_file) = socket::bind(&socket).map(|(l, f)| (l, Some(f)))?;
    let ready_ms = started.elapsed().as_secs_f64() * 1000.0;
    let _ = shared.ready_ms.set(ready_ms);
    tracing::info!(
        socket = %socket.display(),
        pid = std::process::id(),
        version = ccmem_proto::VERSION,
        ready_ms = format!("{ready_ms:.1}"),
        max_connections,
        activated = socket_file.is_none(),
        "ccmemd ready"
    );
    service::notify(&format!("READY=1\nMAINPID={}", std::process::id()));
    service::spawn_watchdog();

    server::serve(listener, shared.clone()).await;
    service::notify("STOPPING=1");
    shared.projects.final_checkpoint_all().await;
    // The listener was closed by `serve`; the file goes only after the checkpoints, so a
    // client meanwhile finds a refusing socket and waits for the lock rather than racing it.
    // A socket the service manager made stays: it is the manager's to remove.
    if let Some(f) = socket_file {
        f.remove_file();
    }
    lock.release();
    tracing::info!("ccmemd stopped");
    Ok(ExitCode::SUCCESS)
}

/// The sensitive-data filter with the user's extra patterns. A pattern file that is given
/// but cannot be read, or holds a bad pattern, stops the start: running without a rule the
/// user relies on would leak what it was meant to hide.
fn install_redaction(file: Option<&std::path::Path>) -> anyhow::Result<()> {
    let (path, required) = match file {
        Some(f) => (f.to_path_buf(), true),
        None => match paths::config_dir() {
            Ok(d) => (d.join(paths::REDACT_PATTERNS_FILE), false),
            Err(_) => return ccmem_proto::redact::install(&[]).map_err(anyhow::Error::msg),
        },
    };
    let extra = match std::fs::read_to_string(&path) {
        Ok(text) => {
            ccmem_proto::redact::parse_patterns(&text, &path.display().to_string()).map_err(anyhow::Error::msg)?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Vec::new(),
        Err(e) => anyhow::bail!("cannot read the redaction patterns {}: {e}", path.display()),
    };
    if !extra.is_empty() {
        tracing::info!(patterns = extra.len(), file = %path.display(), "extra redaction patterns");
    }
    ccmem_proto::redact::install(&extra).map_err(anyhow::Error::msg)
}

fn already_running(socket: &std::path::Path, peer: &ccmem_proto::api::HelloReply) -> ExitCode {
    if peer.daemon_version == ccmem_proto::VERSION && peer.protocol_version == ccmem_proto::PROTOCOL_VERSION {
        tracing::info!(pid = peer.pid, socket = %socket.display(), "ccmemd is already running; nothing to do");
        ExitCode::SUCCESS
    } else {
        tracing::error!(
            pid = peer.pid,
            running = %peer.daemon_version,
            this = ccmem_proto::VERSION,
            socket = %socket.display(),
            "another version of ccmemd is running; stop it with `ccmemctl shutdown` and start this one again"
        );
        ExitCode::FAILURE
    }
}

/// Raises the soft open-files limit to the hard one and returns how many connections fit in
/// it, keeping room for watches, files and the runtime's own descriptors.
#[cfg(unix)]
fn fd_budget() -> usize {
    const RESERVED: u64 = 256;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid rlimit for getrlimit/setrlimit to read and write.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return usize::MAX;
        }
        let want = lim.rlim_max.min(1 << 20);
        if lim.rlim_cur < want {
            let raised = libc::rlimit { rlim_cur: want, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = want;
            }
        }
    }
    // rlim_t is not u64 on every platform.
    #[allow(clippy::useless_conversion)]
    let cur = u64::from(lim.rlim_cur);
    usize::try_from(cur.saturating_sub(RESERVED).max(16)).unwrap_or(usize::MAX)
}

#[cfg(not(unix))]
fn fd_budget() -> usize {
    usize::MAX
}
