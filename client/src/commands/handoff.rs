//! `ccmemctl handoff …`: the handoff through git, turned on and off, pushed, pulled, shown,
//! forgotten and pruned. The daemon runs git (bounded in time, the repository's own
//! settings unable to run anything); this waits for it and says what happened.

use super::*;
use ccmem_proto::model::handoff::SeenHandoff;
use ccmem_proto::wire::api::{HandoffAction, HandoffParams, HandoffReply};

/// Longest wait for the daemon: a push or fetch is bounded at 20 s, and a run may wait for
/// one in flight.
const WAIT: Duration = Duration::from_secs(60);

/// Runs `handoff ACTION` for the project at `path`.
pub(super) fn run(ctx: &Ctx, action: Option<cli::HandoffCmd>, path: Option<PathBuf>) -> Result<(), Error> {
    use cli::HandoffCmd as C;
    let mut p = HandoffParams { path: project_path(path)?, ..Default::default() };
    match action.unwrap_or(C::Show { branch: None }) {
        C::Enable { remote, auto } => {
            p.action = HandoffAction::Enable;
            p.remote = remote;
            p.auto = auto;
        }
        C::Disable => p.action = HandoffAction::Disable,
        C::Push => p.action = HandoffAction::Push,
        C::Pull => p.action = HandoffAction::Pull,
        C::Show { branch } => p.branch = branch,
        C::Forget { remote } => {
            p.action = HandoffAction::Forget;
            p.remote_too = remote;
        }
        C::Prune { remote } => {
            p.action = HandoffAction::Prune;
            p.remote_too = remote;
        }
    }
    // What sends work elsewhere, or deletes it, is the user's to do, not an agent's at a
    // repository's request.
    if matches!(p.action, HandoffAction::Enable | HandoffAction::Push | HandoffAction::Forget | HandoffAction::Prune) {
        crate::by_user::require("sending or deleting a handoff through git").map_err(Error::Failed)?;
    }
    p.ssh_auth_sock = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from).filter(|s| s.is_absolute());
    let r: HandoffReply = with_daemon(ctx, |c, _| {
        c.set_timeout(WAIT).map_err(CallError::Io)?;
        c.call(method::HANDOFF, &p)
    })?;
    show(ctx, &r, || text(&r, chrono::Utc::now()));
    Ok(())
}

/// The reply as a person reads it.
fn text(r: &HandoffReply, now: chrono::DateTime<chrono::Utc>) -> String {
    let mut out = String::new();
    if !r.done.is_empty() {
        out.push_str(&format!("{}.\n", r.done));
    }
    if !r.enabled {
        out.push_str(
            "Handoff is off for this project: `ccmemctl handoff enable [--remote NAME] [--auto]` turns it on.\n",
        );
    } else {
        out.push_str(&format!(
            "Handoff is on: to and from {}{}; this clone writes refs/ccmem/handoff/{}/…\n",
            r.remote,
            if r.auto { ", pushed after each Stop" } else { ", pushed with `ccmemctl handoff push`" },
            r.author_id
        ));
        if !r.pushed_at.is_empty() {
            out.push_str(&format!("Last pushed {}.\n", r.pushed_at));
        }
        if !r.fetched_at.is_empty() {
            out.push_str(&format!("Last fetched {}.\n", r.fetched_at));
        }
        if let Some(f) = &r.failed {
            out.push_str(&format!("Last failure: {f}\n"));
        }
    }
    if !r.branch.is_empty() {
        if r.handoffs.is_empty() {
            out.push_str(&format!("\nNo handoff on {} here.\n", r.branch));
        } else {
            out.push_str(&format!(
                "\nHandoffs on {}, newest first (what others wrote is quoted as they wrote it):\n",
                r.branch
            ));
            for h in &r.handoffs {
                out.push_str(&one(h, now));
            }
        }
    }
    out
}

/// One handoff, indented.
fn one(seen: &SeenHandoff, now: chrono::DateTime<chrono::Utc>) -> String {
    let h = &seen.handoff;
    let whose = if seen.own {
        "this clone's own".to_string()
    } else if seen.newer {
        "another clone's, newer than this clone's own work".to_string()
    } else {
        "another clone's".to_string()
    };
    let ago = chrono::DateTime::parse_from_rfc3339(&h.made_at)
        .map(|t| {
            let mins = (now - t.with_timezone(&chrono::Utc)).num_minutes();
            match mins {
                m if m < -5 => "at a time in the future".to_string(),
                m if m < 1 => "just now".to_string(),
                m if m < 120 => format!("{m} min ago"),
                m if m < 48 * 60 => format!("{} h ago", m / 60),
                m => format!("{} days ago", m / 1440),
            }
        })
        .unwrap_or_else(|_| "at an unknown time".into());
    let q = |s: &str| ccmem_proto::quote::quoted(s, 300);
    let mut o = format!(
        "\n  {} ({whose}): by {} on {}, {ago}, commit {}\n",
        // A fetched ref's name is anyone's: one line, whatever it holds.
        ccmem_proto::quote::name(&seen.git_ref),
        q(&h.author),
        q(&h.machine),
        ccmem_proto::quote::name(h.commit.get(..10).unwrap_or(&h.commit))
    );
    if !h.agent.is_empty() {
        o.push_str(&format!("    agent: {} {}\n", q(&h.agent), q(&h.conversation)));
    }
    if !h.task.is_empty() {
        o.push_str(&format!("    task: {}\n", q(&h.task)));
    }
    if !h.next_step.is_empty() {
        o.push_str(&format!("    next step: {}\n", q(&h.next_step)));
    }
    for t in &h.todos {
        o.push_str(&format!("    [{}] {}\n", t.status.mark(), q(&t.content)));
    }
    for f in &h.failures {
        o.push_str(&format!("    failing: {}\n", q(&format!("{} `{}`: {}", f.kind, f.command, f.error))));
    }
    if !h.last_words.is_empty() {
        o.push_str(&format!("    last words: {}\n", ccmem_proto::quote::quoted(&h.last_words, 800)));
    }
    for d in h.decisions.iter().take(8) {
        o.push_str(&format!("    decision: {}\n", q(d)));
    }
    if !h.files.is_empty() {
        let files: Vec<String> = h.files.iter().take(12).map(|f| q(f)).collect();
        o.push_str(&format!("    files: {}\n", files.join(", ")));
    }
    o
}
