//! Turns one frame into at most one reply: envelope checks, then the method's handler.
//! Session methods hand their work to the project's task and wait for its answer.

use crate::project::registry as projects;
use crate::project::task::{self as project, Msg};
use crate::server::state::{Shared, Stats};
use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::rpc::{self, code, RpcError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::oneshot;

/// Handles one frame. Returns the encoded reply, or `None` for a notification.
pub async fn handle_frame(frame: &[u8], shared: &Arc<Shared>) -> Option<Vec<u8>> {
    Stats::bump(&shared.stats.requests);
    shared.quiet.heard();
    let incoming = match rpc::parse_incoming(frame) {
        Ok(m) => m,
        Err(mut r) => {
            // The parser's explanation can quote what it was sent.
            redact_error(&mut r.error);
            tracing::debug!(code = r.error.code, error = %r.error.message, "rejected message");
            return Some(rpc::encode_response(&r.id, &Err(r.error)));
        }
    };
    let notification = incoming.id.is_none();
    let mut outcome = dispatch(&incoming.method, incoming.params, notification, shared).await;
    // Replies carry text read from repositories (file names, task lists, memories, warnings
    // naming files): whatever a client prints or hands an agent holds no escape sequence,
    // control or invisible character.
    match &mut outcome {
        Ok(v) => {
            // What these return is shown (by ccmemctl, to the agent by the MCP tools): the
            // project's own path, kept whole where the daemon watches it, can hold a token,
            // and so can paths in warnings. Their other text was redacted on its way in;
            // redacting it again changes nothing.
            if SHOWN.contains(&incoming.method.as_str()) {
                crate::text::redact_json(v);
            }
            ccmem_proto::printable::json(v)
        }
        // An error can quote a hand-written file (a memory's invalid tag) or what the client
        // sent (a relative path, `path must be absolute, got ghp_…`): redacted too, its
        // `data` with it (a client shows and logs `data.detail`).
        Err(e) => redact_error(e),
    }
    if let Err(e) = &outcome {
        tracing::debug!(method = %incoming.method, code = e.code, error = %e.message, "request failed");
    }
    incoming.id.map(|id| rpc::encode_response(&id, &outcome))
}

/// An error's message and data, redacted.
fn redact_error(e: &mut RpcError) {
    e.message = ccmem_proto::redact::redact(&e.message).into_owned();
    if let Some(d) = &mut e.data {
        crate::text::redact_json(d);
    }
}

/// Methods whose replies are shown to a person or the agent, paths and all. (The context and
/// a hook's answer are redacted whole where they are made; memories as they are served.)
const SHOWN: &[&str] = &[
    method::STATUS,
    method::WATCH,
    method::UNWATCH,
    method::PROJECTS,
    method::CHECKPOINT,
    method::RESET,
    method::HISTORY,
    method::FORGET,
    method::FACTS,
    method::SEARCH,
    method::TIMELINE,
    method::WHY,
    method::SHOW,
    method::CONFIG_SHOW,
    method::CONFIG_RELOAD,
    method::REPORT,
    method::TEST_REPORT,
    method::IMPORT_PLAN,
    method::HANDOFF,
    method::VIEW_PROJECTS,
    method::VIEW_SESSIONS,
];

async fn dispatch(name: &str, params: Value, notification: bool, shared: &Arc<Shared>) -> Result<Value, RpcError> {
    match name {
        method::HELLO => to_value(hello(parse(name, params)?)),
        method::PING => Ok(Value::from("pong")),
        method::STATUS => to_value(status(name, parse(name, params)?, shared).await?),
        method::SHUTDOWN => {
            tracing::info!("shutdown requested by a client");
            shared.shutdown.cancel();
            to_value(api::ShutdownReply { pid: std::process::id() })
        }
        method::WATCH => {
            let root = root_of(shared, name, parse::<api::PathParams>(name, params)?.path).await?;
            to_value(ask(shared, &root, |reply| Msg::Watch { reply }).await?)
        }
        method::UNWATCH => {
            let path = parse::<api::PathParams>(name, params)?.path;
            let root = match root_of(shared, name, path.clone()).await {
                Ok(root) => root,
                // A project deleted or moved away cannot be resolved any more: its live
                // session is the one whose root the path names (or lies in).
                Err(e) => match gone_root(shared, &path) {
                    Some(root) => root,
                    None if !path.exists() => {
                        return to_value(api::EndReply { root: path, ended_session: None, new_session: None })
                    }
                    None => return Err(e),
                },
            };
            to_value(ask(shared, &root, |reply| Msg::Unwatch { reply }).await?)
        }
        method::PROJECTS => to_value(api::ProjectList { projects: shared.projects.list().await }),
        method::EVENT => {
            let p: api::EventParams = parse(name, params)?;
            let root = root_of(shared, name, p.path).await?;
            if notification {
                // Fire and forget: the sender does not wait for the session to take it.
                shared.projects.send(&root, Msg::Event { event: p.event, reply: None }).await;
                return Ok(Value::Null);
            }
            ask(shared, &root, |reply| Msg::Event { event: p.event, reply: Some(reply) })
                .await?
                .map_err(RpcError::app)?;
            Ok(serde_json::json!({}))
        }
        method::CHECKPOINT => {
            let p: api::CheckpointParams = parse(name, params)?;
            let root = root_of(shared, name, p.path).await?;
            fresh_servers(shared, &root).await;
            let r = ask(shared, &root, |reply| Msg::Checkpoint { reason: p.reason, note: p.note, reply }).await?;
            to_value(r.map_err(RpcError::app)?)
        }
        method::RESET => {
            let root = root_of(shared, name, parse::<api::PathParams>(name, params)?.path).await?;
            to_value(ask(shared, &root, |reply| Msg::Reset { reply }).await?)
        }
        method::HISTORY => {
            let root = root_of(shared, name, parse::<api::PathParams>(name, params)?.path).await?;
            to_value(history(shared, root).await?)
        }
        method::FORGET => to_value(super::forget::forget(name, parse(name, params)?, shared).await?),
        method::IMPORT_PAST => {
            let p: api::ImportPastParams = parse(name, params)?;
            let root = root_of(shared, name, p.path).await?;
            let hooks: Vec<_> = p.payloads.iter().filter_map(crate::agent::hooks::parse).collect();
            // The live session, if any: its conversations are not taken again into history.
            let live = if shared.projects.is_live(&root) {
                let (tx, rx) = oneshot::channel();
                shared.projects.send(&root, Msg::Summary { conversations: true, reply: tx }).await;
                rx.await.ok().map(|s| crate::project::past_import::Live {
                    session_id: s.session_id,
                    conversations: s.conversations.into_iter().map(|c| c.id).collect(),
                })
            } else {
                None
            };
            let ctx = shared.projects.ctx();
            let r = shared.projects.past.take(ctx, &root, live, p.conversation, hooks, p.last).await;
            to_value(r.map_err(RpcError::app)?)
        }
        method::IMPORT_PLAN => to_value(super::import_plan::plan(name, parse(name, params)?, shared).await?),
        method::OPENCODE_SESSIONS => to_value(super::import_plan::opencode_sessions(name, parse(name, params)?).await?),
        method::SEARCH => to_value(super::recall::search(name, parse(name, params)?, shared).await?),
        method::TIMELINE => to_value(super::recall::timeline(name, parse(name, params)?, shared).await?),
        method::WHY => to_value(super::recall::why(name, parse(name, params)?, shared).await?),
        method::SHOW => to_value(super::recall::show(name, parse(name, params)?, shared).await?),
        method::VIEW_PROJECTS => to_value(super::view::projects(shared).await?),
        method::VIEW_SESSIONS => to_value(super::view::sessions(name, parse(name, params)?, shared).await?),
        method::VIEW_SUBSCRIBE => Err(RpcError::app("view.subscribe is a request (with an id), not a notification")),
        method::HOOK => {
            let hook = crate::agent::hooks::parse(&params)
                .ok_or_else(|| RpcError::invalid_params(name, "not a hook payload: no \"hook_event_name\""))?;
            let cwd = hook.cwd.clone().ok_or_else(|| {
                RpcError::invalid_params(name, "the payload has no usable \"cwd\" (a path of at most 4096 bytes)")
            })?;
            // A command that left the project (`cd /tmp && …`) moves the payload's cwd, not
            // the conversation: the directory Claude Code was started in still names it.
            let cwd = match &hook.project_dir {
                Some(dir) if !cwd.starts_with(dir) => dir.clone(),
                _ => cwd,
            };
            let root = match root_of(shared, name, cwd.clone()).await {
                Ok(root) => root,
                Err(e) => {
                    // The agent works somewhere that is not a project: nothing is recorded.
                    tracing::info!(cwd = %cwd.display(), reason = %e.message, "hook not recorded");
                    return Err(e);
                }
            };
            let prints = matches!(hook.kind, crate::agent::hooks::Kind::SessionStart { .. });
            let sent = params
                .get(api::SENT_TIME)
                .and_then(Value::as_i64)
                .and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_millis);
            if notification {
                shared.projects.send(&root, Msg::Hook { hook, reply: None, sent }).await;
                return to_value(api::HookReply::default());
            }
            // Answered once the event is applied and in the journal (not after the reads or the
            // checkpoint it may start): what the daemon answered survives a crash, and the
            // agent's next event cannot overtake this one.
            let mut reply = ask(shared, &root, |reply| Msg::Hook { hook, reply: Some(reply), sent }).await?;
            if !prints {
                return to_value(reply);
            }
            // The user hears of a configuration that the next start would stop on, while
            // this daemon still runs on the previous one.
            let reloader = shared.projects.ctx().config.clone();
            reply.notice = tokio::task::spawn_blocking(move || reloader.file_problem()).await.unwrap_or_default().map(
                |why| format!("ccmem's configuration is broken and ccmem will not start again with it: {why}. Fix the file; `ccmemctl config show` checks it."),
            );
            to_value(reply)
        }
        method::CONTEXT => {
            let p: api::ContextParams = parse(name, params)?;
            if let Some(b) = p.budget.filter(|b| !api::BUDGET_RANGE.contains(b)) {
                let (lo, hi) = (api::BUDGET_RANGE.start(), api::BUDGET_RANGE.end());
                return Err(RpcError::invalid_params(
                    name,
                    format!("budget {b} is out of range: {lo} to {hi} characters"),
                ));
            }
            let root = root_of(shared, name, p.path).await?;
            fresh_servers(shared, &root).await;
            to_value(ask(shared, &root, |reply| Msg::Context { budget: p.budget, reply }).await?)
        }
        method::FACTS => {
            let p: api::FactsParams = parse(name, params)?;
            let root = root_of(shared, name, p.path).await?;
            let global = &shared.projects.ctx().global;
            if p.for_agent && p.global && p.edit.is_some() {
                return Err(RpcError::app(
                    "user-wide facts are the user's to change: `ccmemctl facts forget N --global` in a terminal",
                ));
            }
            let (memory, changed) = match (p.edit, p.global) {
                (Some(edit), true) => {
                    let said = global.edit(edit).await.map_err(RpcError::app)?;
                    (ask(shared, &root, |reply| Msg::Facts { edit: None, reply }).await?.0, Some(said))
                }
                (edit, _) => {
                    let (memory, said) = ask(shared, &root, |reply| Msg::Facts { edit, reply }).await?;
                    (memory, said.map_err(RpcError::app)?)
                }
            };
            let global_facts = if p.for_agent { global.for_project(&root).await } else { global.list().await };
            to_value(api::FactsReply {
                root,
                changed,
                facts: memory.facts,
                global_facts,
                goals: memory.goals,
                completed_goals: memory.completed_goals,
            })
        }
        method::CONFIG_SHOW => {
            let p: api::ConfigParams = parse(name, params)?;
            let cfg = shared.projects.ctx().config.current();
            let root = match p.path {
                Some(path) => Some(root_of(shared, name, path).await?),
                None => None,
            };
            let reloader = shared.projects.ctx().config.clone();
            let read = tokio::task::spawn_blocking(move || {
                let (project, mut warnings) = match root.as_deref().map(crate::config::project) {
                    Some(Ok(pc)) => (Some(pc), Vec::new()),
                    Some(Err(e)) => (None, vec![e]),
                    None => (None, Vec::new()),
                };
                let mut entries = crate::config::entries(&cfg, project.as_ref());
                // Every setting in one view: the knowledge memories' `config.json` too.
                let global = crate::memories::global_dir().map(|d| d.join("config.json"));
                let local = root.map(|r| crate::memories::project_dir(&r).join("config.json"));
                let memory = crate::memories::config::entries(global.as_deref(), local.as_deref());
                entries.extend(memory.entries);
                warnings.extend(memory.warnings);
                api::ConfigReply {
                    file: cfg.file.clone(),
                    entries,
                    warnings,
                    problem: reloader.file_problem(),
                    memory_problem: memory.problem,
                }
            });
            to_value(
                read.await
                    .map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("cannot read the configuration: {e}")))?,
            )
        }
        method::CONFIG_RELOAD => {
            let reloader = shared.projects.ctx().config.clone();
            let cfg = tokio::task::spawn_blocking(move || reloader.reload())
                .await
                .map_err(|e| RpcError::app(e.to_string()))?
                .map_err(|e| RpcError::app(format!("{e}; the previous configuration stays in force")))?;
            to_value(api::ConfigReply {
                file: cfg.file.clone(),
                entries: crate::config::entries(&cfg, None),
                warnings: Vec::new(),
                problem: None,
                memory_problem: None,
            })
        }
        method::REPORT => {
            let p: api::ReportParams = parse(name, params)?;
            let root = root_of(shared, name, p.path).await?;
            fresh_servers(shared, &root).await;
            let r = ask(shared, &root, |reply| Msg::Report { write: p.write, reply }).await?;
            to_value(r.map_err(RpcError::app)?)
        }
        method::TEST_REPORT => {
            let p: api::TestReportParams = parse(name, params)?;
            let root = root_of(shared, name, p.path.clone()).await?;
            let runs = tokio::task::spawn_blocking(move || crate::observe::testout::report(&p))
                .await
                .map_err(|e| RpcError::app(format!("reading the report failed: {e}")))?
                .map_err(|e| RpcError::invalid_params(name, &e))?;
            for run in &runs {
                let event = ccmem_proto::model::session::SessionEvent::Tests { suite: run.suite.clone(), e2e: run.e2e };
                ask(shared, &root, |reply| Msg::Event { event, reply: Some(reply) }).await?.map_err(RpcError::app)?;
            }
            // The stored copy was redacted on its way in; so is what is shown back.
            let runs = runs.into_iter().map(redacted_run).collect();
            to_value(api::TestReportReply { runs })
        }
        method::HANDOFF => {
            let mut p: api::HandoffParams = parse(name, params)?;
            p.path = root_of(shared, name, p.path).await?;
            // Only a socket's path, never anything run: a relative one is dropped.
            p.ssh_auth_sock = p.ssh_auth_sock.filter(|s| s.is_absolute());
            let root = p.path.clone();
            let reply = ask(shared, &root, |reply| Msg::Handoff { params: p, reply }).await?;
            to_value(reply.map_err(RpcError::app)?)
        }
        m if m.starts_with("memory.") => memory(name, params, shared).await,
        _ => Err(RpcError::method_not_found(name)),
    }
}

/// The `memory.*` methods: the params name the project by `path`, resolved to its root here;
/// the memory thread does the rest.
async fn memory(name: &str, params: Value, shared: &Arc<Shared>) -> Result<Value, RpcError> {
    use crate::memories::Request;
    use ccmem_proto::wire::memory::method as m;
    let path = params.get("path").and_then(Value::as_str).map(PathBuf::from);
    let req = match name {
        m::WRITE => Request::Write(parse(name, params)?),
        m::SHOW => Request::Show(parse(name, params)?),
        m::LIST => Request::List(parse(name, params)?),
        m::SEARCH => Request::Search(parse(name, params)?),
        m::UPDATE => Request::Update(parse(name, params)?),
        m::DELETE => Request::Delete(parse(name, params)?),
        m::LINK => Request::Link(parse(name, params)?),
        m::UNLINK => Request::Unlink(parse(name, params)?),
        m::HEALTH => Request::Health(parse(name, params)?),
        m::REBUILD => Request::Rebuild(parse(name, params)?),
        m::SUGGEST => Request::Suggest(parse(name, params)?),
        _ => return Err(RpcError::method_not_found(name)),
    };
    // A directory that cannot be a project (the home directory, say) has no project scope:
    // its memories are the user's global ones.
    let project = match path {
        Some(p) => Some(resolved(shared, name, p).await?).filter(|root| projects::refused(root).is_none()),
        None => None,
    };
    let mut reply = shared.projects.ctx().memories.request(project, req).await.map_err(|f| {
        if f.invalid {
            RpcError::new(code::INVALID_PARAMS, f.message)
        } else {
            RpcError::app(f.message)
        }
    })?;
    // A memory committed to the repository or edited by hand was never filtered: what is
    // served is redacted here, whatever wrote the file, as the markdown it is.
    crate::text::redact_json_markdown(&mut reply);
    Ok(reply)
}

/// Brings a live project up to date before a request that shows it: the port scanner tells
/// it its servers, and its file watcher delivers every change made before the request (a
/// `checkpoint` run right after a file was written names that file).
async fn fresh_servers(shared: &Arc<Shared>, root: &Path) {
    if !shared.projects.is_live(root) {
        return;
    }
    let ports = shared.projects.ctx().ports.refresh(root);
    let files = async {
        let (tx, rx) = oneshot::channel();
        shared.projects.send(root, Msg::Syncer { reply: tx }).await;
        if let Ok(Some(syncer)) = rx.await {
            syncer.sync(FILES_SYNC_LIMIT).await;
        }
    };
    tokio::join!(ports, files);
}

/// How long a request waits for the file watcher to catch up (it answers in milliseconds;
/// this bounds a watcher still walking a huge tree).
const FILES_SYNC_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Sends a message with a reply channel to the project's task and waits for the answer.
pub(super) async fn ask<T>(
    shared: &Arc<Shared>,
    root: &Path,
    make: impl FnOnce(oneshot::Sender<T>) -> Msg,
) -> Result<T, RpcError> {
    let (tx, rx) = oneshot::channel();
    shared.projects.send(root, make(tx)).await;
    rx.await.map_err(|_| RpcError::new(code::SHUTTING_DOWN, "ccmemd is shutting down; try again in a moment"))
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
        Some(path) => {
            let root = resolved(shared, name, path).await?;
            if let Some(why) = projects::refused(&root) {
                // The daemon's own status still answers; the path's refusal is its warning.
                let mut st = project::not_live(&root);
                st.warnings.push(why);
                return Ok(status_reply(shared, Some(st)));
            }
            fresh_servers(shared, &root).await;
            let (tx, rx) = oneshot::channel();
            shared.projects.send(&root, Msg::Status { reply: tx }).await;
            Some(rx.await.unwrap_or_else(|_| project::not_live(&root)))
        }
    };
    Ok(status_reply(shared, project))
}

fn status_reply(shared: &Arc<Shared>, project: Option<api::ProjectStatus>) -> api::StatusReply {
    api::StatusReply {
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
            journal: shared.projects.ctx().journal.path().to_string_lossy().into_owned(),
            journal_problems: shared.projects.ctx().journal.health().problems(),
        },
        project,
    }
}

async fn history(shared: &Arc<Shared>, root: PathBuf) -> Result<api::HistoryReply, RpcError> {
    let (tx, rx) = oneshot::channel();
    shared.projects.send(&root, Msg::Summary { conversations: true, reply: tx }).await;
    let (live_session, conversations) = match rx.await {
        Ok(s) => (Some(s.session_id), s.conversations),
        Err(_) => (None, Vec::new()),
    };
    let projects = shared.projects.clone();
    let r = root.clone();
    let sessions = tokio::task::spawn_blocking(move || crate::project::past::history(projects.ctx(), &r))
        .await
        .map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("history failed: {e}")))?;
    let mut sessions: Vec<api::HistoryEntry> = sessions.iter().map(api::HistoryEntry::from).collect();
    // One conversation is the one `resume-id` names: the live session's, else the newest
    // ended session's (each ended session marks its own last that did work).
    let mut named = conversations.iter().any(|c| c.resume);
    for c in sessions.iter_mut().flat_map(|s| s.conversations.iter_mut()).filter(|c| c.resume) {
        c.resume = !std::mem::replace(&mut named, true);
    }
    Ok(api::HistoryReply { root, live_session, conversations, sessions })
}

/// The project root for a client's path. File-system calls go to the blocking pool: a hung
/// mount must not stall a worker.
pub(super) async fn root_of(shared: &Arc<Shared>, name: &str, path: PathBuf) -> Result<PathBuf, RpcError> {
    let root = resolved(shared, name, path).await?;
    match projects::refused(&root) {
        Some(why) => Err(RpcError::app(why)),
        None => Ok(root),
    }
}

/// The live project that a path which no longer exists named: the one whose root is the
/// path or holds it (the deepest, when projects nest).
fn gone_root(shared: &Arc<Shared>, path: &Path) -> Option<PathBuf> {
    let lexical = crate::observe::cmdline::lexical(&std::path::absolute(path).ok()?);
    shared.projects.roots().into_iter().filter(|r| lexical.starts_with(r)).max_by_key(|r| r.components().count())
}

/// The root `path` resolves to, whether or not it may be a project.
pub(super) async fn resolved(shared: &Arc<Shared>, name: &str, path: PathBuf) -> Result<PathBuf, RpcError> {
    if !path.is_absolute() {
        return Err(RpcError::invalid_params(name, format!("path must be absolute, got {}", path.display())));
    }
    let live = shared.projects.roots();
    tokio::task::spawn_blocking(move || projects::resolve_root(&path, &live))
        .await
        .map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("cannot resolve the project: {e}")))?
        .map_err(|e| RpcError::app(e.to_string()))
}

/// A test run's text fields through the redaction filter.
fn redacted_run(mut run: api::TestRun) -> api::TestRun {
    let s = &mut run.suite;
    s.command = crate::text::clean(&s.command);
    for f in &mut s.failures {
        f.test_name = crate::text::clean(&f.test_name);
        f.file = crate::text::clean(&f.file);
        f.message = f.message.as_deref().map(crate::text::clean);
    }
    run
}

/// Params of a method; absent params read as `{}` so that all-optional params need none.
fn parse<T: DeserializeOwned>(name: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params };
    serde_json::from_value(params).map_err(|e| RpcError::invalid_params(name, e))
}

fn to_value<T: Serialize>(v: T) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("cannot encode reply: {e}")))
}
