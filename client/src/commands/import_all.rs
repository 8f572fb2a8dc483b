//! `ccmemctl import --all`: every conversation every agent has stored on this machine, each
//! into the project it was recorded in, once.
//!
//! The client finds the files ([`import::discover`]), reads from each its conversation id
//! and the directory it was recorded in, and asks the daemon where each goes
//! (`session.import_plan`: the daemon knows the projects, the journal and the live
//! sessions). Then each is replayed, oldest first, into its project's history (or, a
//! project's newest, into its live session). A second run finds the journal holds them all
//! and imports nothing; a run cut short goes on where it stopped.

use super::session::{deliver_into_history, deliver_live};
use super::*;
use crate::import::discover::{self, Found};
use ccmem_proto::model::agent::Agent;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::{SystemTime, UNIX_EPOCH};

/// What `import --all` was asked.
pub(crate) struct Options {
    pub agent: Option<String>,
    pub since: Option<String>,
    pub dry_run: bool,
}

/// A conversation found and read enough to plan.
struct Candidate {
    found: Found,
    id: String,
    cwd: Option<String>,
    last_ms: i64,
    /// OpenCode's: no file yet; `opencode export` (this program) writes one when it is to
    /// be imported.
    export: Option<PathBuf>,
}

/// What the run did, printed (or given as JSON) at its end.
#[derive(Default, serde::Serialize)]
struct Report {
    /// Conversations imported: into histories, into live sessions.
    into_history: u64,
    into_live: u64,
    /// Conversations a live session took from an import before, gone on with: they said
    /// more since.
    grown: u64,
    /// Events they held.
    events: u64,
    /// The projects they went into.
    projects: BTreeSet<PathBuf>,
    /// Not imported, with why, one per conversation.
    skipped: Vec<Skipped>,
    /// Stores that exist but are not read, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    /// With --dry-run: what would go where.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    plan: Vec<Planned>,
}

#[derive(serde::Serialize)]
struct Skipped {
    file: PathBuf,
    agent: &'static str,
    why: String,
}

#[derive(serde::Serialize)]
struct Planned {
    file: PathBuf,
    agent: &'static str,
    conversation: String,
    project: PathBuf,
    into: api::Destination,
}

/// Runs `import --all`.
pub(super) fn run(ctx: &Ctx, o: Options) -> Result<(), Error> {
    crate::by_user::require("importing every agent's conversations").map_err(Error::Failed)?;
    let only = match o.agent.as_deref() {
        None => None,
        Some(name) => Some(Agent::from_name(name).ok_or_else(|| {
            Error::Failed(format!("{name:?} is not an agent ccmem knows: claude, codex, gemini, opencode, pi, copilot"))
        })?),
    };
    let since = match o.since.as_deref() {
        None => None,
        Some(w) => {
            let ms = crate::when::parse(w, chrono::Utc::now()).map_err(Error::Failed)?;
            Some(UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
        }
    };
    let stores = discover::stores(only);
    if let (Some(agent), true) = (only, stores.is_empty()) {
        return Err(Error::Failed(format!("{} keeps no conversations ccmem can read", agent.display())));
    }
    let mut report = Report::default();
    let mut found = Vec::new();
    let mut opencode = Vec::new();
    for store in stores {
        if store.agent == Agent::Opencode {
            opencode.extend(opencode_candidates(ctx, &store, since, &mut report)?);
            continue;
        }
        discover::files(&store, since, &mut found);
    }
    let tty = std::io::stderr().is_terminal() && !ctx.json;
    let bar = |len: u64, what: &str| -> ProgressBar {
        if !tty {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        let style = ProgressStyle::with_template(&format!(
            "{what} {{bar:30}} {{percent:>3}}%  {{bytes}}/{{total_bytes}}  {{wide_msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        pb.set_style(style);
        pb
    };
    // Each file's conversation id and directory, from its first records.
    let reading = bar(found.iter().map(|f| f.size).sum(), "reading ");
    let mut candidates = Vec::new();
    for f in found {
        reading.inc(f.size);
        let agent = f.agent.name();
        let (format, id) = match import::check(&f.path) {
            Ok((format, id)) => (format, id.filter(|i| ccmem_proto::model::agent::is_conversation_id(i))),
            Err(why) => {
                // The reader's error names the file, which the report lists beside it.
                let shown = f.path.display().to_string();
                let why = why.strip_prefix(&shown).map_or(why.as_str(), |w| w.trim_start_matches([':', ' ']));
                let why = if why.starts_with("is not a conversation") {
                    "not a conversation of an agent ccmem reads".to_string()
                } else {
                    first_line(why)
                };
                report.skipped.push(Skipped { file: f.path, agent, why });
                continue;
            }
        };
        let id = id.unwrap_or_else(|| import::id_from_name(&f.path));
        let cwd = import::origin_of(&f.path, format).ok().flatten();
        // When it last happened: its last record's time, else the file's.
        let last_ms = import::last_time(&f.path).unwrap_or_else(|| ms(f.modified));
        candidates.push(Candidate { found: f, id, cwd, last_ms, export: None });
    }
    reading.finish_and_clear();
    candidates.extend(opencode);
    // Oldest first: a project's history fills in the order it happened.
    candidates.sort_by(|a, b| (a.last_ms, &a.found.path).cmp(&(b.last_ms, &b.found.path)));
    let params = api::ImportPlanParams {
        conversations: candidates
            .iter()
            .map(|c| api::PlanCandidate {
                id: c.id.clone(),
                cwd: c.cwd.as_ref().map(PathBuf::from),
                last_ms: c.last_ms,
            })
            .collect(),
    };
    let plan: api::ImportPlanReply = with_daemon(ctx, |c, _| c.call(method::IMPORT_PLAN, &params))?;
    let mut todo = Vec::new();
    for (c, entry) in candidates.into_iter().zip(plan.plan) {
        let agent = c.found.agent.name();
        let after = entry.after;
        match (entry.into, entry.root, c.cwd.clone()) {
            (api::Destination::Skip, _, _) | (_, None, _) | (_, _, None) => report.skipped.push(Skipped {
                file: c.found.path.clone(),
                agent,
                why: entry.why.unwrap_or_else(|| "no project".into()),
            }),
            (into, Some(root), Some(cwd)) => {
                if o.dry_run {
                    report.plan.push(Planned {
                        file: c.found.path.clone(),
                        agent,
                        conversation: c.id.clone(),
                        project: root.clone(),
                        into,
                    });
                }
                todo.push((c, into, root, PathBuf::from(cwd), after));
            }
        }
    }
    // Made only when OpenCode's conversations are to be exported.
    let exports = match todo.iter().any(|(c, ..)| c.export.is_some()) && !o.dry_run {
        true => ExportDir::new(),
        false => Err("no export".to_string()),
    };
    if !o.dry_run {
        import::show_progress(false);
        let importing = bar(todo.iter().map(|(c, ..)| c.found.size).sum(), "importing");
        for (mut c, into, root, cwd, after) in todo {
            importing.set_message(format!("{} {}", c.found.agent.name(), short(&c.id)));
            let agent = c.found.agent.name();
            if let Some(program) = &c.export {
                match exports.as_ref().map_err(String::clone).and_then(|d| d.export(program, &c.id)) {
                    Ok(file) => c.found.path = file,
                    Err(why) => {
                        report.skipped.push(Skipped { file: c.found.path, agent, why });
                        continue;
                    }
                }
            }
            let outcome = match (into, after) {
                // Held already from an import: what it said since, if anything.
                (api::Destination::Live, Some(n)) => {
                    deliver_live(ctx, &c.found.path, &cwd, n as usize).map(|(_, sent)| {
                        match sent.saturating_sub(n as usize) {
                            0 => (0, Some(api::HELD.to_string())),
                            more => {
                                report.grown += 1;
                                (more as u64, None)
                            }
                        }
                    })
                }
                (api::Destination::Live, None) => {
                    deliver_live(ctx, &c.found.path, &cwd, 0).map(|(s, _)| (s.events, None))
                }
                _ => deliver_into_history(ctx, &c.found.path, &cwd, &c.id).map(|(s, r)| (s.events, r.skipped)),
            };
            if c.export.is_some() {
                let _ = std::fs::remove_file(&c.found.path);
            }
            importing.inc(c.found.size);
            match outcome {
                Ok((_, Some(why))) => report.skipped.push(Skipped { file: c.found.path, agent, why }),
                Ok((events, None)) => {
                    report.events += events;
                    report.projects.insert(root);
                    match (into, after) {
                        (api::Destination::Live, Some(_)) => {}
                        (api::Destination::Live, None) => report.into_live += 1,
                        _ => report.into_history += 1,
                    }
                }
                // The daemon gone is the end of the run; anything else is this file's.
                Err(Error::Unreachable(m)) => {
                    importing.finish_and_clear();
                    return Err(Error::Unreachable(m));
                }
                Err(e) => report.skipped.push(Skipped {
                    file: c.found.path,
                    agent,
                    why: e.message().map(first_line).unwrap_or_else(|| "failed".into()),
                }),
            }
        }
        importing.finish_and_clear();
    }
    show(ctx, &report, || text(&report, o.dry_run));
    Ok(())
}

/// OpenCode's conversations, from its database through the daemon (changed since `since`),
/// each to be exported by OpenCode's own program when it is imported; or a note on why
/// they cannot be.
fn opencode_candidates(
    ctx: &Ctx,
    store: &discover::Store,
    since: Option<SystemTime>,
    report: &mut Report,
) -> Result<Vec<Candidate>, Error> {
    let Some(db) = discover::opencode_database(store) else { return Ok(Vec::new()) };
    let Some(program) = discover::opencode_program() else {
        report.notes.push(format!(
            "OpenCode keeps its conversations in {}, read through its own program, which is not on PATH: \
             `opencode export ID > f.json` then `ccmemctl import f.json --into-history --project DIR` takes one in",
            output::path_line(&db)
        ));
        return Ok(Vec::new());
    };
    let params = api::OpencodeSessionsParams { db: db.clone() };
    let listed: Result<api::OpencodeSessionsReply, Error> =
        with_daemon(ctx, |c, _| c.call(method::OPENCODE_SESSIONS, &params));
    let listed = match listed {
        Ok(l) => l,
        Err(Error::Failed(why)) => {
            report.notes.push(format!("OpenCode's conversations in {} not read: {why}", output::path_line(&db)));
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let since_ms = since.map(ms);
    Ok(listed
        .sessions
        .into_iter()
        .filter(|s| since_ms.is_none_or(|t| s.updated_ms >= t))
        .map(|s| Candidate {
            found: Found {
                path: db.join(&s.id),
                agent: Agent::Opencode,
                size: 0,
                modified: UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(s.updated_ms).unwrap_or(0)),
            },
            id: s.id,
            cwd: Some(s.directory).filter(|d| !d.is_empty()),
            last_ms: s.updated_ms,
            export: Some(program.clone()),
        })
        .collect())
}

/// A private directory for OpenCode's exports while they are imported (each removed once
/// imported, the directory at the end): they hold the conversation as OpenCode keeps it.
struct ExportDir(PathBuf);

impl ExportDir {
    fn new() -> Result<ExportDir, String> {
        let dir = paths::state_dir()
            .map_err(|e| format!("no state directory: {e}"))?
            .join(format!("opencode-export-{}", std::process::id()));
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(ExportDir(dir))
    }

    /// `opencode export ID` (its plugins off, run in this directory, not a project), into a
    /// file here; or why not. A run that does not end in a minute is stopped.
    fn export(&self, program: &Path, id: &str) -> Result<PathBuf, String> {
        if !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err("not a conversation id".into());
        }
        let file = self.0.join(format!("{id}.json"));
        let out = std::fs::File::create(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut child = std::process::Command::new(program)
            .args(["export", "--pure", id])
            .current_dir(&self.0)
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("{} could not be run: {e}", program.display()))?;
        let started = std::time::Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > std::time::Duration::from_secs(60) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err("`opencode export` did not end within a minute".into());
                }
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(e) => return Err(e.to_string()),
            }
        };
        if !status.success() {
            let _ = std::fs::remove_file(&file);
            return Err(format!("`opencode export` failed ({status})"));
        }
        Ok(file)
    }
}

impl Drop for ExportDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// After `hooks install`: says once what the agents have stored on this machine and how to
/// bring it in; on a terminal, asks whether to do it now.
pub(super) fn offer(ctx: &Ctx) {
    let Ok(state) = paths::state_dir() else { return };
    let mark = state.join("import-offered");
    if std::fs::symlink_metadata(&mark).is_ok() {
        return;
    }
    let mut found = Vec::new();
    for store in discover::stores(None).iter().filter(|s| s.agent != Agent::Opencode) {
        discover::files(store, None, &mut found);
    }
    // Nothing yet: offered when there is something.
    if found.is_empty() {
        return;
    }
    if std::fs::create_dir_all(&state).is_err()
        || ccmem_proto::files::atomic::write(&mark, b"offered by hooks install\n", false).is_err()
    {
        return;
    }
    let agents: BTreeSet<&str> = found.iter().map(|f| f.agent.display()).collect();
    let agents: Vec<&str> = agents.into_iter().collect();
    eprintln!(
        "ccmem found {} that {} stored on this machine: `ccmemctl import --all` takes each whose project is \
         still here into its history, where `ccmemctl search` finds it (a project's newest becomes where it \
         left off); `--dry-run` shows which first",
        if found.len() == 1 {
            "1 past conversation".to_string()
        } else {
            format!("{} past conversations", found.len())
        },
        agents.join(", ")
    );
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return;
    }
    eprint!("Import them now? [y/N] ");
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes") {
        if let Err(e) = run(ctx, Options { agent: None, since: None, dry_run: false }) {
            eprintln!("import --all: {}", e.message().unwrap_or("failed"));
        }
    }
}

/// The run told in a few lines: what went where, then what was skipped, by reason.
fn text(r: &Report, dry_run: bool) -> String {
    let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let mut out = String::new();
    if dry_run {
        for p in &r.plan {
            let into = if p.into == api::Destination::Live { "live session of" } else { "history of" };
            out.push_str(&format!(
                "{} {} → the {into} {}\n",
                p.agent,
                short(&p.conversation),
                output::path_line(&p.project)
            ));
        }
        out.push_str(&format!(
            "{} to import (--dry-run: nothing imported)\n",
            n(r.plan.len() as u64, "conversation", "conversations")
        ));
    } else if r.into_history + r.into_live + r.grown == 0 {
        out.push_str("nothing new to import\n");
    } else if r.into_history + r.into_live == 0 {
        out.push_str(&format!(
            "went on with {} that said more since: {}\n",
            n(r.grown, "conversation", "conversations"),
            n(r.events, "event", "events")
        ));
    } else {
        out.push_str(&format!(
            "imported {} ({} into histories, {} into live sessions) into {}: {}{}\n",
            n(r.into_history + r.into_live, "conversation", "conversations"),
            r.into_history,
            r.into_live,
            n(r.projects.len() as u64, "project", "projects"),
            n(r.events, "event", "events"),
            match r.grown {
                0 => String::new(),
                g => format!("; went on with {} that said more since", n(g, "conversation", "conversations")),
            }
        ));
    }
    let mut by_kind: BTreeMap<&str, Vec<&Skipped>> = BTreeMap::new();
    for s in &r.skipped {
        by_kind.entry(kind_of(&s.why)).or_default().push(s);
    }
    if !by_kind.is_empty() {
        out.push_str(&format!("skipped {}:\n", n(r.skipped.len() as u64, "file", "files")));
    }
    for (kind, list) in by_kind {
        out.push_str(&format!("  {} {kind}\n", list.len()));
        if kind == api::HELD {
            continue;
        }
        // A few of each, with the reason in full where it says more than its kind.
        for s in list.iter().take(3) {
            let detail = if s.why == kind { String::new() } else { format!(": {}", s.why) };
            out.push_str(&format!("    {}{detail}\n", output::path_line(&s.file)));
        }
        if list.len() > 3 {
            out.push_str(&format!("    … and {} more (--json lists them all)\n", list.len() - 3));
        }
    }
    for note in &r.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// The kind of a reason for a skip, for counting alike ones together: a directory gone is
/// one kind whichever directory it was.
fn kind_of(why: &str) -> &str {
    if why.starts_with("its directory ") && why.ends_with(" is gone") {
        "recorded in a directory that is gone"
    } else {
        why
    }
}

/// The first eight characters of an id, as `history` shows them.
fn short(id: &str) -> &str {
    id.char_indices().nth(8).map_or(id, |(i, _)| &id[..i])
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Milliseconds since the epoch of a file's time.
fn ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
