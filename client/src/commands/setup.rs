//! Setting up: configuration, shell completions, the man page.

use super::*;

/// Shows or reloads the daemon's configuration.
pub(super) fn config(ctx: &Ctx, action: cli::ConfigAction) -> Result<(), Error> {
    let (method, params) = match action {
        cli::ConfigAction::Show { path } => {
            (method::CONFIG_SHOW, api::ConfigParams { path: path.map(|p| project_path(Some(p))).transpose()? })
        }
        cli::ConfigAction::Reload => (method::CONFIG_RELOAD, api::ConfigParams::default()),
    };
    let r: api::ConfigReply = with_daemon(ctx, |c, _| c.call(method, &params))?;
    show(ctx, &r, || output::config(&r));
    // The values shown are the ones in force; the file as it is would stop the next start.
    let mut problems = Vec::new();
    if let Some(p) = &r.problem {
        problems.push(format!(
            "the configuration file is broken: {p}\n(the values above are the ones in force; ccmemd will not start again with this file, and `ccmemctl config reload` refuses it)"
        ));
    }
    if let Some(p) = &r.memory_problem {
        problems.push(format!(
            "the knowledge memories' configuration is refused (memory commands fail until it is fixed): {p}"
        ));
    }
    match (problems.is_empty(), ctx.json) {
        (true, _) => Ok(()),
        (false, true) => Err(Error::Quiet),
        (false, false) => Err(Error::Failed(problems.join("\n"))),
    }
}

/// Shell completions.
pub(super) fn completions(shell: clap_complete::Shell) -> Result<(), Error> {
    let mut cmd = <cli::Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "ccmemctl", &mut io::stdout());
    Ok(())
}

/// The man page.
pub(super) fn man() -> Result<(), Error> {
    let cmd = <cli::Cli as clap::CommandFactory>::command();
    man::render(cmd, &mut io::stdout()).map_err(|e| Error::Failed(format!("cannot write the man page: {e}")))
}
