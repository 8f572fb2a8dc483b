//! `ccmemctl`, the ccmem client.
//!
//! Small and quick on purpose: blocking socket I/O, no async runtime, nothing loaded before
//! the request is sent. Every command says hello first, so a daemon of another version is
//! noticed and named.

pub mod autostart;
pub mod cli;
pub mod conn;
pub mod doctor;
pub mod hook;
pub mod import;
pub mod input;
pub mod install;
mod man;
pub mod mcp;
pub mod memory;
mod output;
pub mod service;

use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::rpc::RpcError;
use ccmem_proto::{wire::paths, PROTOCOL_VERSION, VERSION};
use clap::Parser;
use conn::{CallError, Compat, Conn};
use serde_json::json;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Documented exit codes.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The daemon reported an error (or a local one stopped the command).
    pub const ERROR: u8 = 1;
    /// Bad command line (clap's own code).
    pub const USAGE: u8 = 2;
    /// The daemon could not be reached or started.
    pub const UNREACHABLE: u8 = 3;
}

/// How long a started daemon has to answer.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `shutdown` waits for the daemon to exit.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(20);

/// A failed command, with the exit code it maps to.
#[derive(Debug)]
pub enum Error {
    /// No daemon to talk to (exit 3).
    Unreachable(String),
    /// The daemon said no, or something local went wrong (exit 1).
    Failed(String),
    /// A failure already reported on stdout (exit 1).
    Quiet,
}

impl Error {
    fn code(&self) -> u8 {
        match self {
            Error::Unreachable(_) => exit::UNREACHABLE,
            Error::Failed(_) | Error::Quiet => exit::ERROR,
        }
    }

    /// What to tell the user (nothing for a failure already shown).
    fn message(&self) -> Option<&str> {
        match self {
            Error::Unreachable(m) | Error::Failed(m) => Some(m),
            Error::Quiet => None,
        }
    }
}

/// The exit of a program of ours: the error, if any, on stderr after `program: `, and its code.
fn exit_with(program: &str, outcome: Result<(), Error>) -> ExitCode {
    exit_as(program, outcome, false)
}

/// [`exit_with`]; with `json`, the error is `{"error": {"code": <exit code>, "message"}}` on
/// stdout instead, for scripts that read `--json` output.
fn exit_as(program: &str, outcome: Result<(), Error>, json: bool) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            match (e.message(), json) {
                (Some(m), true) => output::print_json(&json!({"error": {"code": e.code(), "message": m}})),
                (Some(m), false) => eprintln!("{program}: {m}"),
                (None, _) => {}
            }
            ExitCode::from(e.code())
        }
    }
}

impl From<CallError> for Error {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Io(e) => Error::Unreachable(format!("lost the connection to ccmemd: {e}")),
            CallError::Rpc(e) => Error::Failed(e.for_people().to_string()),
            CallError::BadReply(m) => Error::Failed(m),
        }
    }
}

/// Entry point of the `ccmemctl` binary.
pub fn main() -> ExitCode {
    // The agent's hook path: straight there, before any argument parsing.
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") && std::env::args_os().len() == 2 {
        return hook::run(None, !autostart_disabled());
    }
    // `ccmemctl completions bash | head -1`: a reader that stops early is a normal end, as
    // for any Unix tool (killed quietly by SIGPIPE, status 141), not a panic in `println!`.
    closed_stdout_ends_quietly(true);
    let cli = cli::Cli::parse();
    let json = cli.json;
    exit_as("ccmemctl", run(cli), json)
}

/// SIGPIPE's default action (end the process quietly) when `quietly`, else ignored (writes to
/// a closed pipe then fail with an error the caller handles: the hook path, which must exit 0).
fn closed_stdout_ends_quietly(quietly: bool) {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to one of libc's constants, before any thread of
    // ours runs (the hook path resets it first thing).
    unsafe {
        libc::signal(libc::SIGPIPE, if quietly { libc::SIG_DFL } else { libc::SIG_IGN });
    }
    #[cfg(not(unix))]
    let _ = quietly;
}

#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    socket: PathBuf,
    json: bool,
    autostart: bool,
}

fn run(cli: cli::Cli) -> Result<(), Error> {
    let socket = paths::socket_path(cli.socket.as_deref())
        .map_err(|e| Error::Failed(format!("cannot work out the socket path: {e}")))?;
    let ctx = Ctx { socket, json: cli.json, autostart: !cli.no_start && !autostart_disabled() };
    match cli.command {
        cli::Command::Memory { action } => memory::run(&ctx, action),
        cli::Command::Mcp => run_mcp(&ctx),
        cli::Command::Ping => ping(&ctx),
        cli::Command::Status { path } => status(&ctx, path),
        cli::Command::Shutdown => shutdown(&ctx),
        cli::Command::Version => version(&ctx),
        cli::Command::Watch { path } => {
            let params = api::PathParams { path: project_path(path)? };
            let r: api::ProjectSummary = with_daemon(&ctx, |c, _| c.call(method::WATCH, &params))?;
            show(&ctx, &r, || format!("watching {} (session {})", r.root.display(), r.session_id));
            Ok(())
        }
        cli::Command::Unwatch { path } => {
            let params = api::PathParams { path: project_path(path)? };
            let r: api::EndReply = with_daemon(&ctx, |c, _| c.call(method::UNWATCH, &params))?;
            show(&ctx, &r, || match &r.ended_session {
                Some(id) => format!("{} is no longer watched; session {id} ended and was archived", r.root.display()),
                None => format!("{} was not being watched", r.root.display()),
            });
            Ok(())
        }
        cli::Command::Projects => {
            let r: api::ProjectList = with_daemon(&ctx, |c, _| c.call(method::PROJECTS, &json!({})))?;
            show(&ctx, &r, || output::projects(&r));
            Ok(())
        }
        cli::Command::Import { transcript, project } => {
            let transcript = std::path::absolute(&transcript)
                .map_err(|e| Error::Failed(format!("{}: {e}", transcript.display())))?;
            let project = project_path(project)?;
            let id = import::check(&transcript).map_err(Error::Failed)?;
            // Twice would count every edit twice: a conversation already there is refused.
            let params = api::StatusParams { path: Some(project.clone()) };
            let st: serde_json::Value = with_daemon(&ctx, |c, _| c.call(method::STATUS, &params))?;
            let stem = transcript.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
            let id = id.unwrap_or(stem);
            let known = st["project"]["session"]["conversations"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["id"].as_str() == Some(id.as_str())));
            if known {
                return Err(Error::Failed(format!(
                    "conversation {id} is already in the session of {} (imported before, or live); \
                     `ccmemctl reset-session` first to import it again",
                    project.display()
                )));
            }
            // Events already delivered are not sent again if the connection is retried.
            let mut sent = 0usize;
            let summary = with_daemon(&ctx, |c, _| {
                let mut n = 0usize;
                let mut lost = None;
                let r = import::replay(&transcript, &project, |p| {
                    n += 1;
                    if n <= sent {
                        return Ok(());
                    }
                    match c.call::<_, serde_json::Value>(method::HOOK, p) {
                        Ok(_) => {
                            sent += 1;
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
            show(&ctx, &summary, || {
                let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
                format!(
                    "imported {} into {}: conversation {}, {} ({}, {}, {}){}",
                    summary.transcript.display(),
                    summary.project.display(),
                    summary.conversation_id,
                    n(summary.events, "event", "events"),
                    n(summary.prompts, "prompt", "prompts"),
                    n(summary.tool_calls, "tool call", "tool calls"),
                    n(summary.compactions, "compaction", "compactions"),
                    match summary.bad_lines {
                        0 => String::new(),
                        k => format!("; {} not JSON, skipped", n(k, "line was", "lines were")),
                    }
                )
            });
            Ok(())
        }
        cli::Command::History { path } => {
            let params = api::PathParams { path: project_path(path)? };
            let r: api::HistoryReply = with_daemon(&ctx, |c, _| c.call(method::HISTORY, &params))?;
            show(&ctx, &r, || output::history(&r));
            Ok(())
        }
        cli::Command::ResetSession { path } => {
            let params = api::PathParams { path: project_path(path)? };
            let r: api::EndReply = with_daemon(&ctx, |c, _| c.call(method::RESET, &params))?;
            show(&ctx, &r, || {
                let new = r.new_session.as_deref().unwrap_or("?");
                match &r.ended_session {
                    Some(old) => format!("session {old} ended and was archived; new session {new}"),
                    None => format!("new session {new}"),
                }
            });
            Ok(())
        }
        cli::Command::Checkpoint { path, reason, note } => {
            let reason = match reason {
                cli::Reason::Manual => api::RequestedReason::Manual,
                cli::Reason::PhaseComplete => api::RequestedReason::PhaseComplete,
            };
            let params = api::CheckpointParams { path: project_path(path)?, reason, note };
            let r: api::CheckpointReply = with_daemon(&ctx, |c, _| c.call(method::CHECKPOINT, &params))?;
            for w in &r.warnings {
                eprintln!("ccmemctl: warning: {w}");
            }
            show(&ctx, &r, || {
                format!(
                    "checkpoint written: {} ({} bytes, session {})",
                    r.checkpoint.path.display(),
                    r.checkpoint.bytes,
                    r.session_id
                )
            });
            Ok(())
        }
        cli::Command::Hook => {
            closed_stdout_ends_quietly(false);
            hook::run(Some(&ctx.socket), ctx.autostart);
            Ok(())
        }
        cli::Command::Context { path, budget } => {
            let params = api::ContextParams { path: project_path(path)?, budget: budget.map(|b| b as usize) };
            let r: api::ContextReply = with_daemon(&ctx, |c, _| c.call(method::CONTEXT, &params))?;
            show(&ctx, &r, || r.context.clone());
            Ok(())
        }
        cli::Command::ResumeId { path } => {
            let params = api::ContextParams { path: project_path(path)?, budget: Some(200) };
            let r: api::ContextReply = with_daemon(&ctx, |c, _| c.call(method::CONTEXT, &params))?;
            match &r.conversation_id {
                Some(id) => {
                    show(&ctx, &json!({"conversation_id": id}), || id.clone());
                    Ok(())
                }
                None => Err(Error::Failed(format!("no conversation to resume in {}", params.path.display()))),
            }
        }
        cli::Command::Hooks { action } => install::run(action, ctx.json).map_err(Error::Failed),
        cli::Command::Config { action } => {
            let (method, params) = match action {
                cli::ConfigAction::Show { path } => {
                    (method::CONFIG_SHOW, api::ConfigParams { path: path.map(|p| project_path(Some(p))).transpose()? })
                }
                cli::ConfigAction::Reload => (method::CONFIG_RELOAD, api::ConfigParams::default()),
            };
            let r: api::ConfigReply = with_daemon(&ctx, |c, _| c.call(method, &params))?;
            show(&ctx, &r, || output::config(&r));
            Ok(())
        }
        cli::Command::Completions { shell } => {
            let mut cmd = <cli::Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "ccmemctl", &mut io::stdout());
            Ok(())
        }
        cli::Command::Man => {
            let cmd = <cli::Cli as clap::CommandFactory>::command();
            man::render(cmd, &mut io::stdout()).map_err(|e| Error::Failed(format!("cannot write the man page: {e}")))
        }
        cli::Command::Doctor => doctor::run(&ctx.socket, ctx.json),
        cli::Command::Service { action } => {
            // A daemon started on demand holds the socket the service manager must bind.
            let stop = || stop_daemon(&ctx).map(|_| ()).map_err(|e| format!("cannot stop the running ccmemd: {e:?}"));
            if ctx.json && action == service::Action::Status {
                let (home, config) = service::home_and_config().map_err(Error::Failed)?;
                output::print_json(&service::status(&home, &config));
                return Ok(());
            }
            let said = service::act(action, stop).map_err(Error::Failed)?;
            let done: Vec<&str> = said.lines().collect();
            output::say(ctx.json, json!({"action": format!("{action:?}").to_lowercase(), "done": done}), &said);
            Ok(())
        }
        cli::Command::Report { path, stdout, check } => {
            if let Some(file) = check {
                return check_report(&ctx, &file);
            }
            let params = api::ReportParams { path: project_path(path)?, write: !stdout };
            let r: api::ReportReply = with_daemon(&ctx, |c, _| c.call(method::REPORT, &params))?;
            match (&r.path, stdout) {
                (_, true) => show(&ctx, &r, || r.markdown.trim_end().to_string()),
                (Some(p), false) => show(&ctx, &r, || format!("wrote {} ({} bytes)", p.display(), r.markdown.len())),
                (None, false) => show(&ctx, &r, || r.markdown.trim_end().to_string()),
            }
            Ok(())
        }
        cli::Command::TestReport { path, framework, junit, command, e2e } => {
            let output = match &junit {
                Some(_) => None,
                None => Some(read_output()?),
            };
            let junit = junit
                .map(|f| std::path::absolute(&f).map_err(|e| Error::Failed(format!("{}: {e}", f.display()))))
                .transpose()?;
            let params = api::TestReportParams {
                path: project_path(path)?,
                output,
                junit,
                framework,
                command,
                e2e: e2e.then_some(true),
            };
            let r: api::TestReportReply = with_daemon(&ctx, |c, _| c.call(method::TEST_REPORT, &params))?;
            show(&ctx, &r, || output::test_runs(&r.runs));
            Ok(())
        }
        cli::Command::Facts { action, project } => {
            use ccmem_proto::model::facts::FactsEdit;
            let (edit, global) = match action.unwrap_or(cli::FactsAction::List) {
                cli::FactsAction::List => (None, false),
                cli::FactsAction::Forget { n, global } => (Some(FactsEdit::Forget(n)), global),
                cli::FactsAction::Done { n } => (Some(FactsEdit::GoalDone(n)), false),
            };
            let params = api::FactsParams { path: project_path(project)?, edit, global };
            let r: api::FactsReply = with_daemon(&ctx, |c, _| c.call(method::FACTS, &params))?;
            show(&ctx, &r, || output::facts(&r));
            Ok(())
        }
        cli::Command::Event { event, project } => {
            let text = match event.as_deref() {
                Some(t) if t != "-" => t.to_string(),
                _ => input::capped_text(
                    io::stdin().lock(),
                    ccmem_proto::wire::frame::MAX_FRAME as u64,
                    "the event on stdin",
                )
                .map_err(Error::Failed)?,
            };
            let event: ccmem_proto::model::session::SessionEvent = serde_json::from_str(&text).map_err(|e| {
                let what = match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not JSON",
                    _ => "not a valid event",
                };
                Error::Failed(format!("{what} ({e}); `ccmemctl event --help` lists the kinds with an example of each"))
            })?;
            let params = api::EventParams { path: project_path(project)?, event };
            let _: serde_json::Value = with_daemon(&ctx, |c, _| c.call(method::EVENT, &params))?;
            show(&ctx, &json!({"recorded": true}), || "recorded".to_string());
            Ok(())
        }
    }
}

/// `report --check FILE`: what cannot be read and what breaks seed 000's rules; exit 1 when
/// anything does.
fn check_report(ctx: &Ctx, file: &std::path::Path) -> Result<(), Error> {
    // A report is at most 50 KB by seed 000's rules; far larger is not one.
    let text = input::file_text(file, 16 << 20).map_err(Error::Failed)?;
    let problems = ccmem_proto::model::report::check(&text);
    if ctx.json {
        output::print_json(&json!({"file": file, "valid": problems.is_empty(), "problems": problems}));
    } else if problems.is_empty() {
        println!("{}: valid", file.display());
    } else {
        println!("{}: {} problem{}", file.display(), problems.len(), if problems.len() == 1 { "" } else { "s" });
        for p in &problems {
            println!("  - {p}");
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Quiet)
    }
}

/// A test runner's output from stdin: its start and its end (where summaries are) when it is
/// too long for one message.
fn read_output() -> Result<String, Error> {
    input::head_and_tail(io::stdin().lock(), 128 << 10, 640 << 10)
        .map_err(|e| Error::Failed(format!("cannot read the test output from stdin: {e}")))
}

/// Hands over to `ccmem-mcp`, the MCP server. It is a program of its own so that its async
/// runtime and MCP library stay out of this one, which every agent hook starts.
fn run_mcp(ctx: &Ctx) -> Result<(), Error> {
    let exe = autostart::find_program("ccmem-mcp").ok_or_else(|| {
        Error::Failed(
            "ccmem-mcp is not installed beside ccmemctl or on PATH (cargo install --path . installs it)".into(),
        )
    })?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg("--socket").arg(&ctx.socket);
    if !ctx.autostart {
        cmd.arg("--no-start");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        Err(Error::Failed(format!("cannot run {}: {e}", exe.display())))
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().map_err(|e| Error::Failed(format!("cannot run {}: {e}", exe.display())))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::Quiet)
        }
    }
}

/// Whether `CCMEM_NO_AUTOSTART` is set (to anything but `0`).
pub fn autostart_disabled() -> bool {
    std::env::var_os(paths::NO_AUTOSTART_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The absolute path for a command's PATH argument (default: the current directory).
fn project_path(path: Option<PathBuf>) -> Result<PathBuf, Error> {
    match path {
        Some(p) => std::path::absolute(&p),
        None => std::env::current_dir(),
    }
    .map_err(|e| Error::Failed(format!("cannot resolve the project path: {e}")))
}

/// Prints `value` as JSON with --json, else the text `human` makes.
fn show<T: serde::Serialize>(ctx: &Ctx, value: &T, human: impl FnOnce() -> String) {
    if ctx.json {
        output::print_json(value);
    } else {
        println!("{}", human().trim_end());
    }
}

/// Connects (starting the daemon if allowed), says hello and runs `f`. A connection lost
/// mid-request (a daemon that was just stopping, say) is retried once.
fn with_daemon<T>(ctx: &Ctx, f: impl FnMut(&mut Conn, &api::HelloReply) -> Result<T, CallError>) -> Result<T, Error> {
    with_daemon_of(ctx, true, f)
}

/// [`with_daemon`], with the versions checked or not: `shutdown` must reach a daemon of any
/// release, since the way out of a mismatch is to stop it.
fn with_daemon_of<T>(
    ctx: &Ctx,
    check: bool,
    mut f: impl FnMut(&mut Conn, &api::HelloReply) -> Result<T, CallError>,
) -> Result<T, Error> {
    let mut started = false;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut conn = match Conn::connect(&ctx.socket) {
            Ok(c) => c,
            Err(e) if ctx.autostart && !started && autostart::is_absent(&e) => {
                started = true;
                autostart::start_and_connect(&ctx.socket, START_TIMEOUT).map_err(Error::Unreachable)?
            }
            Err(e) => return Err(unreachable(ctx, &e)),
        };
        let outcome = conn.hello().and_then(|hello| {
            if check {
                check_versions(&hello)?;
            }
            f(&mut conn, &hello)
        });
        match outcome {
            Err(CallError::Io(_)) if attempt == 1 => continue,
            other => return other.map_err(Error::from),
        }
    }
}

fn unreachable(ctx: &Ctx, e: &io::Error) -> Error {
    let hint = if autostart::is_absent(e) && !ctx.autostart {
        " (not started: --no-start or CCMEM_NO_AUTOSTART is set)"
    } else {
        ""
    };
    Error::Unreachable(format!("cannot reach ccmemd at {}: {e}{hint}", ctx.socket.display()))
}

fn check_versions(hello: &api::HelloReply) -> Result<(), CallError> {
    match conn::compat(hello) {
        Compat::Same => Ok(()),
        Compat::OtherRelease => {
            eprintln!(
                "ccmemctl: note: the running ccmemd is version {}, this ccmemctl is {VERSION}; run `ccmemctl shutdown` to restart it with this version",
                hello.daemon_version
            );
            Ok(())
        }
        Compat::Incompatible => Err(CallError::Rpc(RpcError::new(
            ccmem_proto::wire::rpc::code::INCOMPATIBLE,
            format!(
                "the running ccmemd {} speaks protocol {}, this ccmemctl {VERSION} speaks protocol {PROTOCOL_VERSION}; stop it with `ccmemctl shutdown` and try again",
                hello.daemon_version, hello.protocol_version
            ),
        ))),
    }
}

fn ping(ctx: &Ctx) -> Result<(), Error> {
    let (hello, rtt) = with_daemon(ctx, |c, hello| {
        let t = Instant::now();
        let _: String = c.call(method::PING, &json!({}))?;
        Ok((hello.clone(), t.elapsed()))
    })?;
    if ctx.json {
        output::print_json(
            &json!({"pong": true, "pid": hello.pid, "version": hello.daemon_version, "rtt_ms": rtt.as_secs_f64() * 1e3}),
        );
    } else {
        println!("pong from ccmemd {} (pid {}) in {:.2} ms", hello.daemon_version, hello.pid, rtt.as_secs_f64() * 1e3);
    }
    Ok(())
}

fn status(ctx: &Ctx, path: Option<PathBuf>) -> Result<(), Error> {
    let params = api::StatusParams { path: Some(project_path(path)?) };
    let reply: api::StatusReply = with_daemon(ctx, |c, _| c.call(method::STATUS, &params))?;
    if ctx.json {
        output::print_json(&reply);
    } else {
        print!("{}", output::status(&reply));
    }
    Ok(())
}

fn shutdown(ctx: &Ctx) -> Result<(), Error> {
    match stop_daemon(ctx)? {
        None => output::say(ctx.json, json!({"stopped": false, "running": false}), "ccmemd is not running"),
        Some(pid) => {
            output::say(ctx.json, json!({"stopped": true, "pid": pid}), &format!("ccmemd (pid {pid}) stopped"))
        }
    }
    Ok(())
}

/// Stops the running daemon and waits for it to exit; its pid, or None when none ran.
/// Never starts a daemon just to stop it.
fn stop_daemon(ctx: &Ctx) -> Result<Option<u32>, Error> {
    let quiet = Ctx { socket: ctx.socket.clone(), json: ctx.json, autostart: false };
    let reply =
        match with_daemon_of(&quiet, false, |c, _| c.call::<_, api::ShutdownReply>(method::SHUTDOWN, &json!({}))) {
            Ok(r) => r,
            Err(Error::Unreachable(_)) if !ctx.socket_present() => return Ok(None),
            Err(e) => return Err(e),
        };
    wait_for_exit(&ctx.socket, SHUTDOWN_WAIT).map_err(Error::Failed)?;
    Ok(Some(reply.pid))
}

impl Ctx {
    fn socket_present(&self) -> bool {
        paths::is_named_pipe(&self.socket) || self.socket.exists()
    }
}

/// The daemon removes its pidfile (and so releases its lock) as its very last act.
fn wait_for_exit(socket: &Path, timeout: Duration) -> Result<(), String> {
    let pidfile = paths::pidfile_for(socket).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    loop {
        match std::fs::File::open(&pidfile) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Ok(f) if f.try_lock().is_ok() => return Ok(()),
            _ => {}
        }
        if Instant::now() >= deadline {
            return Err(format!("ccmemd is still shutting down after {timeout:?} (pidfile {})", pidfile.display()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn version(ctx: &Ctx) -> Result<(), Error> {
    // Asking for versions must not start a daemon.
    let daemon = Conn::connect(&ctx.socket).ok().and_then(|mut c| c.hello().ok());
    if ctx.json {
        output::print_json(&json!({
            "client": {"version": VERSION, "protocol_version": PROTOCOL_VERSION},
            "daemon": daemon,
        }));
        return Ok(());
    }
    println!("ccmemctl {VERSION} (protocol {PROTOCOL_VERSION})");
    match daemon {
        Some(h) => println!("ccmemd   {} (protocol {}), pid {}", h.daemon_version, h.protocol_version, h.pid),
        None => println!("ccmemd   not running (socket {})", ctx.socket.display()),
    }
    Ok(())
}
