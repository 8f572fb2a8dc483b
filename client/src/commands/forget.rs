//! `ccmemctl forget`: what will go, a question, then for good.

use super::{project_path, show, with_daemon, Ctx};
use crate::{output, Error};
use ccmem_proto::wire::api::{self, method};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// Shows what `params` names, asks (unless `yes`), and forgets it.
pub(super) fn forget(
    ctx: &Ctx,
    mut params: api::ForgetParams,
    project: Option<PathBuf>,
    yes: bool,
) -> Result<(), Error> {
    // An agent could erase the user's history, or the trace of what it did, with one command.
    crate::by_user::require("forgetting").map_err(Error::Failed)?;
    // A text is forgotten in the current project unless another, or all, is named (as a
    // search looks there).
    let here = params.text.is_some() && project.is_none() && !params.all;
    params.project =
        if here { Some(project_path(None)?) } else { project.map(|p| project_path(Some(p))).transpose()? };
    let would: api::ForgetReply = with_daemon(ctx, |c, _| c.call(method::FORGET, &params))?;
    if nothing(&would) {
        show(ctx, &would, || "nothing to forget: nothing ccmem keeps holds it".into());
        return Ok(());
    }
    if !yes {
        let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        if !terminal {
            return Err(Error::Failed(format!(
                "{}\nnot forgotten: without a terminal to ask on, add --yes",
                summary(&would)
            )));
        }
        eprintln!("{}", summary(&would));
        eprint!("Forget this for good? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            eprintln!("nothing forgotten");
            return Ok(());
        }
    }
    params.apply = true;
    let done: api::ForgetReply = with_daemon(ctx, |c, _| c.call(method::FORGET, &params))?;
    show(ctx, &done, || summary(&done));
    if done.problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed("some of it could not be forgotten (above)".into()))
    }
}

fn nothing(r: &api::ForgetReply) -> bool {
    r.events == 0 && r.sessions == 0 && r.rewritten == 0 && r.projects == 0 && r.live.is_empty() && r.files.is_empty()
}

/// What went (or will go), for a person.
fn summary(r: &api::ForgetReply) -> String {
    let verb = if r.applied { "forgotten" } else { "to forget" };
    let mut s = format!(
        "{verb}: {} journal events, {} whole sessions, {} projects' whole past, {} of the journal's session states rewritten",
        r.events, r.sessions, r.projects, r.rewritten
    );
    for root in &r.live {
        s.push_str(&format!("\n  live session of {}", output::path_line(root)));
    }
    if !r.files.is_empty() {
        s.push_str(&format!("\n  files {}:", if r.applied { "rewritten or removed" } else { "to rewrite or remove" }));
    }
    for f in &r.files {
        s.push_str(&format!("\n    {}", output::path_line(f)));
    }
    for p in &r.problems {
        s.push_str(&format!("\n  problem: {}", ccmem_proto::quote::name(p)));
    }
    s
}
