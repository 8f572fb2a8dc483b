//! `ccmemd`, the per-user ccmem daemon.
//!
//! Data flow: [`main`] parses the command line and starts the runtime; [`run`] loads the
//! [`config`], takes the single-instance lock ([`server::instance`]), builds the services
//! every project task shares ([`project::task::Services`]: the [`store`], the watcher's
//! settings, the port scanner of [`observe`], user-wide facts of [`agent`], the knowledge
//! [`memories`]), binds the private socket ([`server::socket`]) and hands it to the accept
//! loop ([`server::accept`]). Each client gets a task ([`server::connection`]) whose frames
//! [`server::rpc`] routes to the [`project`] registry, and through it to one task per
//! project, which owns that project's [`session`], reads what [`observe`] and the [`agent`]'s
//! hooks report, and writes the checkpoint and the [`report`]. On SIGTERM, SIGINT or a
//! `shutdown` request ([`server::shutdown`]) the loop stops accepting, requests in flight
//! finish, every live project writes its final checkpoint, and the socket and pidfile go.

pub use ccmem_proto::files::atomic;
pub mod agent;
pub mod cli;
pub mod clock;
pub mod config;
pub mod heap;
pub mod journal;
pub mod logging;
pub mod memories;
pub mod observe;
pub mod project;
pub mod recall;
pub mod report;
pub mod server;
pub mod session;
pub mod store;
pub mod text;
pub mod travel;

use anyhow::Context;
use ccmem_proto::wire::paths;
use observe::{ports, watch};
use server::{activation, instance, shutdown, socket, state};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a second daemon waits for a starting one to answer before giving up.
const STARTING_PEER_WAIT: Duration = Duration::from_secs(3);

/// Entry point of the `ccmemd` binary.
pub fn main() -> ExitCode {
    let started = Instant::now();
    heap::limit_arenas();
    let matches = match <cli::Args as clap::CommandFactory>::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return bad_arguments(e),
    };
    let args = match <cli::Args as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => return bad_arguments(e),
    };
    let given = cli::given(&matches);
    if args.config_template {
        // `ccmemd --config-template | head`: a reader that stops early is a normal end.
        use std::io::Write;
        let _ = std::io::stdout().write_all(config::template().as_bytes());
        return ExitCode::SUCCESS;
    }
    let mut args = args;
    for p in [&mut args.config, &mut args.socket, &mut args.redact_patterns].into_iter().flatten() {
        if let Ok(abs) = std::path::absolute(&*p) {
            *p = abs;
        }
    }
    if args.check_config {
        return check_config(&args, &given);
    }
    leave_the_clients_directory();
    logging::init(args.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("ccmemd").build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(run(args, given, started)) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            start_failed(&format!("{e:#}"));
            ExitCode::FAILURE
        }
    };
    // Checkpoints are written: a blocking task still stuck (a hung file system) must not
    // keep the process alive after it said it stopped.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// clap's error (or help, or version) as clap prints it; an error is also the reason the
/// start failed, in the line a client that started the daemon looks for (a bad `CCMEM_*`
/// variable is a bad flag).
fn bad_arguments(e: clap::Error) -> ExitCode {
    if e.use_stderr() {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default().trim_start_matches("error: ");
        let _ = e.print();
        start_failed(first);
        return ExitCode::from(2);
    }
    let _ = e.print();
    ExitCode::SUCCESS
}

/// `ccmemd --check-config`: the configuration read as start-up reads it; the error, as
/// start-up would give it, on stderr.
fn check_config(args: &cli::Args, given: &config::Given) -> ExitCode {
    use std::io::Write;
    match config::load(args, given) {
        Ok(c) => {
            let file = c.file.display();
            let state = if c.file.exists() { "is good" } else { "does not exist: the defaults apply" };
            let _ = writeln!(std::io::stdout(), "{file} {state}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ccmemd: {}", ccmem_proto::redact::redact(&e));
            ExitCode::FAILURE
        }
    }
}

/// The reason a start failed, as the last line of stderr (the log of a daemon a client
/// started), marked so that the client finds it and shows it to the user.
fn start_failed(why: &str) {
    use std::io::Write;
    let why = ccmem_proto::redact::redact(why);
    let line = why.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": ");
    let _ = writeln!(std::io::stderr(), "{}{line}", paths::START_FAILURE);
}

/// The daemon outlives the client that started it, often from inside a repository (a hook
/// runs in the project): it works from `/`, and its PATH keeps only absolute directories, so
/// that a project's `node_modules/.bin/git` (reached through a relative or empty PATH entry)
/// is never what it runs. Called before any thread exists.
fn leave_the_clients_directory() {
    if let Some(path) = std::env::var_os("PATH") {
        let kept: Vec<std::path::PathBuf> = std::env::split_paths(&path).filter(|p| p.is_absolute()).collect();
        if let Ok(joined) = std::env::join_paths(kept) {
            std::env::set_var("PATH", joined);
        }
    }
    if let Err(e) = std::env::set_current_dir("/") {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "ccmemd: cannot change to /: {e}");
    }
}

/// Runs the daemon until it is told to stop. `given` says which settings the command line
/// and the environment set; `started` is when the process began.
pub async fn run(args: cli::Args, given: config::Given, started: Instant) -> anyhow::Result<ExitCode> {
    // Socket activation: the service manager's socket is the one clients reach.
    #[cfg(unix)]
    let inherited = activation::inherited_socket()?;
    #[cfg(unix)]
    let inherited_path = inherited.as_ref().and_then(|i| i.path.clone());
    #[cfg(not(unix))]
    let inherited_path: Option<std::path::PathBuf> = None;
    let socket = match inherited_path {
        Some(p) => p,
        None => paths::socket_path(args.socket.as_deref()).context("cannot work out the socket path")?,
    };
    #[cfg(unix)]
    if let Some(dir) = paths::socket_dir(&socket) {
        paths::ensure_private_dir(dir)?;
        if let Some(moved) =
            paths::default_socket_moved().filter(|_| socket == paths::default_socket_path().unwrap_or_default())
        {
            tracing::warn!("{moved}");
        }
    }
    let lock = match instance::acquire(&socket, STARTING_PEER_WAIT).await? {
        instance::Instance::Primary(lock) => lock,
        instance::Instance::AlreadyRunning(peer) => return Ok(instance::already_running(&socket, &peer)),
    };
    let max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX).min(state::fd_budget());
    let limits = state::Limits {
        max_connections,
        idle_timeout: args.idle_timeout,
        write_timeout: Duration::from_secs(10),
        max_frame: ccmem_proto::wire::frame::MAX_FRAME,
        shutdown_grace: args.shutdown_grace,
    };
    // A bad configuration stops the start with the key and the file, before anything runs.
    let cfg = config::load(&args, &given).map_err(anyhow::Error::msg)?;
    ccmem_proto::redact::install(&cfg.live.redact_patterns).map_err(anyhow::Error::msg)?;
    let state_dir = paths::state_dir().context("cannot find the state directory")?;
    let store = store::Store::new(state_dir.clone(), cfg.keep_sessions);
    let (ports, port_requests) = ports::channel();
    let watch = Arc::new(watch::Settings::new(
        cfg.watch_coalesce,
        cfg.watch_poll_interval,
        cfg.watch_queue,
        cfg.max_watches.unwrap_or(usize::MAX),
    ));
    let retention = journal::Retention { keep: cfg.history_keep, max_size: cfg.history_max_size, ..Default::default() };
    let no_journal = args.no_journal;
    let (reloader, live) = config::Reloader::new(args, given, cfg);
    let journal =
        if no_journal { journal::Journal::off(&state_dir) } else { journal::Journal::open(&state_dir, retention) };
    let services = project::task::Services {
        journal: journal.clone(),
        ports,
        global: agent::facts::GlobalFacts::spawn(store.clone()),
        memories: memories::Memories::spawn(memories::global_dir()),
        store,
        live: live.clone(),
        watch,
        config: reloader.clone(),
        socket: socket.clone(),
    };
    let shared = Arc::new(state::Shared::new(socket.clone(), started, limits, services));
    tokio::spawn(shutdown::on_signals(shared.shutdown.clone()));
    ports::spawn(port_requests, shared.projects.clone(), live);
    tokio::spawn(shutdown::on_hangup(reloader));
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
    activation::notify(&format!("READY=1\nMAINPID={}", std::process::id()));
    // Compile the redaction rules soon, rather than in the first hook; not at once, where
    // the compile would compete with the first clients for the CPU.
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = tokio::task::spawn_blocking(|| ccmem_proto::redact::finds("")).await;
    });
    // Once no client has asked anything for a while, what only speeds up the next request
    // goes back (see `heap::Quiet`).
    let releases = journal.clone();
    tokio::spawn(shared.quiet.clone().run(Arc::new(move || {
        ccmem_proto::redact::release_compiled();
        releases.let_go();
        heap::trim();
    })));
    activation::spawn_watchdog();
    // A socket file removed (or replaced) under us: stop, checkpoints written, and exit with
    // an error, so that the next client or the service manager starts a daemon that clients
    // can reach.
    let lost_socket = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let socket_watch = socket_file.as_ref().and_then(|f| {
        let (lost, stop, path) = (lost_socket.clone(), shared.shutdown.clone(), socket.clone());
        f.on_loss(move || {
            if stop.is_cancelled() {
                return;
            }
            tracing::error!(socket = %path.display(), "the socket file was removed or replaced; stopping so that a new daemon can serve");
            lost.store(true, std::sync::atomic::Ordering::SeqCst);
            stop.cancel();
        })
    });

    server::accept::serve(listener, shared.clone()).await;
    drop(socket_watch);
    activation::notify("STOPPING=1");
    shared.projects.final_checkpoint_all().await;
    journal.flush().await;
    // The listener was closed by `serve`; the file goes only after the checkpoints, so a
    // client meanwhile finds a refusing socket and waits for the lock rather than racing it.
    // A socket the service manager made stays: it is the manager's to remove.
    if let Some(f) = socket_file {
        f.remove_file();
    }
    lock.release();
    tracing::info!("ccmemd stopped");
    if lost_socket.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
