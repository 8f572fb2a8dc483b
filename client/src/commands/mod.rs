//! The commands: each one a function taking the context and its arguments, grouped by what
//! it works on. `run` is the table from the command line to them.

mod daemon;
mod forget;
mod handoff;
mod import_all;
pub(crate) mod memory;
pub(crate) mod recall;
mod reports;
mod session;
mod setup;

pub(crate) use crate::call::{project_path, show, with_daemon, with_daemon_of, Ctx};
use crate::conn::{CallError, Conn};
use crate::{autostart, cli, hook, import, input, man, output, Error};
use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::paths;
use ccmem_proto::{PROTOCOL_VERSION, VERSION};
use serde_json::json;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs the parsed command line.
pub(crate) fn run(cli: cli::Cli) -> Result<(), Error> {
    let socket = paths::socket_path(cli.socket.as_deref())
        .map_err(|e| Error::Failed(format!("cannot work out the socket path: {e}")))?;
    let ctx = &Ctx { socket, json: cli.json, autostart: !cli.no_start && !crate::autostart_disabled() };
    match cli.command {
        cli::Command::Memory { action } => memory::run(ctx, action),
        cli::Command::Mcp => daemon::mcp(ctx),
        cli::Command::Ping => daemon::ping(ctx),
        cli::Command::Status { path } => daemon::status(ctx, path),
        cli::Command::Shutdown => daemon::shutdown(ctx),
        cli::Command::Version => daemon::version(ctx),
        cli::Command::Watch { path } => session::watch(ctx, path),
        cli::Command::Unwatch { path } => session::unwatch(ctx, path),
        cli::Command::Projects => session::projects(ctx),
        cli::Command::Import { all: true, agent, since, dry_run, .. } => {
            import_all::run(ctx, import_all::Options { agent, since, dry_run })
        }
        cli::Command::Import { transcript, project, into_history, .. } => {
            let transcript =
                transcript.ok_or_else(|| Error::Failed("name the transcript to import, or --all".into()))?;
            if into_history {
                session::import_into_history(ctx, transcript, project)
            } else {
                session::import(ctx, transcript, project)
            }
        }
        cli::Command::History { path } => session::history(ctx, path),
        cli::Command::ResetSession { path } => session::reset_session(ctx, path),
        cli::Command::Checkpoint { path, reason, note } => session::checkpoint(ctx, path, reason, note),
        cli::Command::Hook { agent } => session::hook(ctx, agent.as_deref()),
        cli::Command::Context { path, budget } => session::context(ctx, path, budget),
        cli::Command::ResumeId { path } => session::resume_id(ctx, path),
        cli::Command::Hooks { action } => {
            let offer = matches!(&action, cli::HooksAction::Install(t) if !t.dry_run) && !ctx.json;
            crate::install::run(action, ctx.json).map_err(Error::Failed)?;
            if offer {
                import_all::offer(ctx);
            }
            Ok(())
        }
        cli::Command::Config { action } => setup::config(ctx, action),
        cli::Command::Completions { shell } => setup::completions(shell),
        cli::Command::Man => setup::man(),
        cli::Command::Doctor => crate::doctor::run(&ctx.socket, ctx.json),
        cli::Command::Service { action } => daemon::service(ctx, action),
        cli::Command::Report { path, stdout, check } => reports::report(ctx, path, stdout, check),
        cli::Command::TestReport { path, framework, junit, command, e2e } => {
            reports::test_report(ctx, path, framework, junit, command, e2e)
        }
        cli::Command::Facts { action, project } => session::facts(ctx, action, project),
        cli::Command::Handoff { action, project } => handoff::run(ctx, action, project),
        cli::Command::Event { event, project } => session::event(ctx, event, project),
        cli::Command::Search { query, scope, limit } => recall::search(ctx, &query.join(" "), scope, limit),
        cli::Command::Timeline { path, scope, full, limit } => recall::timeline(ctx, path, scope, full, limit),
        cli::Command::Ui => ui(ctx),
        cli::Command::Why { file, project, limit } => recall::why(ctx, &file, project, limit),
        cli::Command::Show { seq, around } => recall::show(ctx, &seq, around),
        cli::Command::Forget { conversation, session, text, project, all, yes } => {
            let params = api::ForgetParams { conversation, session, text, project: None, all, apply: false };
            forget::forget(ctx, params, project, yes)
        }
    }
}

/// `ui`: the daemon started if need be (and its versions checked), then the view; the
/// command the user picked is all that goes to standard output.
fn ui(ctx: &Ctx) -> Result<(), Error> {
    with_daemon(ctx, |_, _| Ok(()))?;
    match crate::ui::run(&ctx.socket) {
        Ok(Some(command)) => {
            println!("{command}");
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(Error::Failed(format!("cannot run the view: {e}"))),
    }
}
