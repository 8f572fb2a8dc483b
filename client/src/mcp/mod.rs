//! `ccmemctl mcp`: an MCP server on stdin/stdout (the official Rust SDK, rmcp) that gives the
//! agent its memories and its session. Every tool forwards to the daemon (started if need
//! be) for the project the agent runs in (`$CLAUDE_PROJECT_DIR`, else the current directory).
//!
//! It is its own program, `ccmem-mcp` (`ccmemctl mcp` hands over to it): its async runtime
//! and the MCP library would otherwise make every `ccmemctl hook` start slower.

mod args;
mod guard;

pub use args::*;

use crate::call::{with_daemon, Ctx};
use crate::commands::memory as text;
use crate::Error;
use ccmem_proto::model::memory::{MemoryType, Scope};
use ccmem_proto::wire::api::{self, method};
use ccmem_proto::wire::memory::{self as mapi, method as mmethod};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// The MCP server: tools over the daemon.
#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
    ctx: Arc<Ctx>,
    project: PathBuf,
}

fn scope(s: Option<String>) -> Result<Option<Scope>, String> {
    s.map(|s| s.parse::<Scope>().map_err(|e| e.to_string())).transpose()
}

/// The scopes an agent may change through MCP: the project's and this machine's. A
/// user-wide memory reaches every project's context, and the agent speaks from inside a
/// repository, which is untrusted: a hostile `CLAUDE.md` could have it save an instruction
/// for every project. Global (and enterprise) memories are the user's to write.
fn agent_may_change(scope: Scope) -> Result<(), String> {
    match scope {
        Scope::Project | Scope::Local => Ok(()),
        other => Err(format!(
            "the {other} scope is the user's: a memory there reaches every project, so it is not changed from \
             inside one. Use the project or local scope, or ask the user to run `ccmemctl memory write --scope \
             {other} …` (or `update`, `delete`)"
        )),
    }
}

fn kind(s: Option<String>) -> Result<Option<MemoryType>, String> {
    s.map(|s| s.parse::<MemoryType>().map_err(|e| e.to_string())).transpose()
}

impl Server {
    /// The scope of the memory `slug` an agent asks to change: the one given, else the one
    /// that has it (most specific first, as the daemon would find it); refused when it is
    /// not the agent's to change.
    async fn changeable(&self, given: Option<Scope>, slug: &str) -> Result<Scope, String> {
        let scope = match given {
            Some(s) => s,
            None => {
                let p = mapi::SlugParams {
                    path: Some(self.project.clone()),
                    scope: None,
                    slug: slug.to_string(),
                    by_agent: false,
                };
                let r: mapi::MemoryReply = self.call(mmethod::SHOW, p).await?;
                r.memory.scope
            }
        };
        agent_may_change(scope)?;
        Ok(scope)
    }

    /// Calls the daemon off the async workers (the client's socket I/O blocks).
    async fn call<P, R>(&self, method: &'static str, params: P) -> Result<R, String>
    where
        P: Serialize + Send + 'static,
        R: DeserializeOwned + Send + 'static,
    {
        let ctx = self.ctx.clone();
        tokio::task::spawn_blocking(move || with_daemon(&ctx, |c, _| c.call(method, &params)))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.message().unwrap_or("failed").to_string())
    }
}

impl Server {
    /// The scope of the agent's recall: this project only (another project's past is not
    /// this conversation's to read).
    fn scope(
        &self,
        kinds: Vec<String>,
        agent: Option<String>,
        session: Option<String>,
        since: Option<String>,
        limit: usize,
    ) -> Result<api::Scope, String> {
        let since_ms = since.map(|s| crate::when::parse(&s, chrono::Utc::now())).transpose()?;
        Ok(api::Scope {
            project: Some(self.project.clone()),
            all: false,
            agent,
            session,
            kinds,
            since_ms,
            until_ms: None,
            limit: Some(limit),
        })
    }

    fn link_params(&self, a: LinkArgs) -> Result<mapi::LinkParams, String> {
        Ok(mapi::LinkParams {
            path: Some(self.project.clone()),
            scope: scope(a.scope)?,
            source: a.source,
            target: a.target,
            label: a.label,
            by_agent: true,
        })
    }

    async fn facts(&self, edit: Option<ccmem_proto::model::facts::FactsEdit>, global: bool) -> Result<String, String> {
        if global && edit.is_some() {
            return Err("user-wide facts are the user's own to change, not an agent's".into());
        }
        let p = api::FactsParams { path: self.project.clone(), edit, global, for_agent: true };
        let r: api::FactsReply = self.call(method::FACTS, p).await?;
        Ok(crate::output::facts(&r, crate::output::FactsFor::Mcp))
    }
}

#[tool_router]
impl Server {
    fn new(ctx: Ctx, project: PathBuf) -> Self {
        Self { tool_router: Self::tool_router(), ctx: Arc::new(ctx), project }
    }

    /// Search the knowledge memories.
    #[tool(
        description = "Search the knowledge memories (decisions, learnings, gotchas, artifacts, breadcrumbs, hubs) \
        of this project and the user's global ones: ranked full-text search over titles, tags and content, \
        hybrid with embeddings when configured. Returns slugs, titles and the matching text."
    )]
    async fn memory_search(&self, Parameters(a): Parameters<SearchArgs>) -> Result<String, String> {
        let p = mapi::SearchParams {
            path: Some(self.project.clone()),
            query: a.query,
            scope: scope(a.scope)?,
            memory_type: kind(a.memory_type)?,
            tags: a.tags,
            limit: a.limit,
            mode: mapi::SearchMode::Auto,
        };
        let r: mapi::SearchReply = self.call(mmethod::SEARCH, p).await?;
        let mut out = text::hits(&r);
        for n in &r.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        Ok(out)
    }

    /// Write a memory.
    #[tool(description = "Save a knowledge memory for future sessions: a decision (with its reason), a learning, \
        a gotcha (pitfall and how to avoid it), an artifact (snippet, template), a breadcrumb (where to find \
        something) or a hub (a topic linking others). Returns the new memory's slug.")]
    async fn memory_write(&self, Parameters(a): Parameters<WriteArgs>) -> Result<String, String> {
        let memory_type = a.memory_type.parse::<MemoryType>().map_err(|e| e.to_string())?;
        // Not given: the project's (outside a project the daemon would take the user's).
        let scope = scope(a.scope)?.unwrap_or(Scope::Project);
        agent_may_change(scope)?;
        let p = mapi::WriteParams {
            path: Some(self.project.clone()),
            scope: Some(scope),
            by_agent: true,
            memory_type,
            title: a.title,
            tags: a.tags,
            content: a.content,
            slug: a.slug,
        };
        let r: mapi::MemoryReply = self.call(mmethod::WRITE, p).await?;
        let mut out = format!(
            "saved {} in the {} scope ({})\n",
            r.memory.slug,
            r.memory.scope,
            crate::output::path_line(&r.file)
        );
        for n in &r.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        Ok(out)
    }

    /// Show a memory.
    #[tool(description = "Show one knowledge memory in full: metadata, content and links, by slug.")]
    async fn memory_show(&self, Parameters(a): Parameters<SlugArgs>) -> Result<String, String> {
        let p = mapi::SlugParams {
            path: Some(self.project.clone()),
            scope: scope(a.scope)?,
            slug: a.slug,
            by_agent: false,
        };
        let r: mapi::MemoryReply = self.call(mmethod::SHOW, p).await?;
        Ok(text::memory(&r))
    }

    /// List memories.
    #[tool(description = "List the knowledge memories this project can see (its own, the user's global ones, \
        local and enterprise), newest first: scope, type, slug, title, tags and link counts.")]
    async fn memory_list(&self, Parameters(a): Parameters<ListArgs>) -> Result<String, String> {
        let p = mapi::ListParams {
            path: Some(self.project.clone()),
            scope: scope(a.scope)?,
            memory_type: kind(a.memory_type)?,
            tags: a.tags,
        };
        let r: mapi::ListReply = self.call(mmethod::LIST, p).await?;
        Ok(text::list(&r))
    }

    /// Update a memory.
    #[tool(description = "Change a knowledge memory: its title, type, content (replace, or append to it) or \
        tags. Fields not given stay as they are.")]
    async fn memory_update(&self, Parameters(a): Parameters<UpdateArgs>) -> Result<String, String> {
        let scope = self.changeable(scope(a.scope)?, &a.slug).await?;
        let p = mapi::UpdateParams {
            path: Some(self.project.clone()),
            scope: Some(scope),
            by_agent: true,
            slug: a.slug,
            title: a.title,
            memory_type: kind(a.memory_type)?,
            content: a.content,
            append: a.append,
            tags: None,
            add_tags: a.add_tags,
            remove_tags: a.remove_tags,
        };
        let r: mapi::MemoryReply = self.call(mmethod::UPDATE, p).await?;
        Ok(format!("updated {} ({})\n", r.memory.slug, crate::output::path_line(&r.file)))
    }

    /// Delete a memory.
    #[tool(description = "Delete a knowledge memory that is wrong or obsolete, with its links.")]
    async fn memory_delete(&self, Parameters(a): Parameters<SlugArgs>) -> Result<String, String> {
        let scope = self.changeable(scope(a.scope)?, &a.slug).await?;
        let p = mapi::SlugParams { path: Some(self.project.clone()), scope: Some(scope), slug: a.slug, by_agent: true };
        let r: mapi::DeleteReply = self.call(mmethod::DELETE, p).await?;
        let unlinked =
            if r.unlinked.is_empty() { String::new() } else { format!("; unlinked {}", r.unlinked.join(", ")) };
        Ok(format!("deleted {} from the {} scope{unlinked}\n", r.slug, r.scope))
    }

    /// Link two memories.
    #[tool(description = "Link two knowledge memories of the same scope (implements, part-of, builds-on, \
        relates-to, similar-to); the inverse link is added too.")]
    async fn memory_link(&self, Parameters(a): Parameters<LinkArgs>) -> Result<String, String> {
        let p = self.link_params(a)?;
        let r: mapi::LinkReply = self.call(mmethod::LINK, p).await?;
        Ok(text::edges("linked", &r))
    }

    /// Unlink two memories.
    #[tool(description = "Remove the links between two knowledge memories (both directions), or only those \
        with the given label.")]
    async fn memory_unlink(&self, Parameters(a): Parameters<LinkArgs>) -> Result<String, String> {
        let p = self.link_params(a)?;
        let r: mapi::LinkReply = self.call(mmethod::UNLINK, p).await?;
        Ok(if r.edges.is_empty() { "no such link\n".into() } else { text::edges("unlinked", &r) })
    }

    /// Check the memories.
    #[tool(description = "Check the knowledge memories: invalid files, broken or one-way links, orphans, \
        a stale index; with fix, repair what is mechanical.")]
    async fn memory_health(&self, Parameters(a): Parameters<HealthArgs>) -> Result<String, String> {
        let p = mapi::HealthParams { path: Some(self.project.clone()), scope: scope(a.scope)?, fix: a.fix };
        let r: mapi::HealthReply = self.call(mmethod::HEALTH, p).await?;
        Ok(text::health(&r))
    }

    /// The facts and goals.
    #[tool(description = "The facts and goals kept for this project ([REMEMBER: …], [GOAL: …] in your \
        messages), the user-wide facts, and the goals reached, numbered for fact_forget and goal_done.")]
    async fn facts_list(&self) -> Result<String, String> {
        self.facts(None, false).await
    }

    /// Forget a fact.
    #[tool(description = "Forget a fact that is wrong or no longer true, by its number in facts_list.")]
    async fn fact_forget(&self, Parameters(a): Parameters<ForgetArgs>) -> Result<String, String> {
        self.facts(Some(ccmem_proto::model::facts::FactsEdit::Forget(a.number)), a.global).await
    }

    /// Mark a goal reached.
    #[tool(description = "Mark an active goal as reached, by its number in facts_list.")]
    async fn goal_done(&self, Parameters(a): Parameters<GoalArgs>) -> Result<String, String> {
        self.facts(Some(ccmem_proto::model::facts::FactsEdit::GoalDone(a.number)), false).await
    }

    /// The conversation to resume.
    #[tool(description = "The id of this project's last conversation that did work, for \
        `claude --resume <id>`.")]
    async fn session_resume_id(&self) -> Result<String, String> {
        let p = api::ContextParams { path: self.project.clone(), budget: Some(200) };
        let r: api::ContextReply = self.call(method::CONTEXT, p).await?;
        r.conversation_id.map(|id| format!("{id}\n")).ok_or_else(|| "no conversation to resume".into())
    }

    /// The history.
    #[tool(description = "This project's sessions, newest first, with their conversations (which one did \
        work, which is the one to resume).")]
    async fn session_history(&self) -> Result<String, String> {
        let p = api::PathParams { path: self.project.clone() };
        let r: api::HistoryReply = self.call(method::HISTORY, p).await?;
        Ok(crate::output::history(&r))
    }

    /// The session's status.
    #[tool(description = "The current work session of this project as ccmem tracks it: files modified, commands, \
        tests, build, dev servers, git state, tasks and blockers.")]
    async fn session_status(&self) -> Result<String, String> {
        let p = api::StatusParams { path: Some(self.project.clone()) };
        let r: api::StatusReply = self.call(method::STATUS, p).await?;
        Ok(crate::output::status(&r))
    }

    /// The past searched.
    #[tool(description = "Search this project's whole past, every session and agent: prompts, the agent's \
        words, decisions, failures and their fixes, commands, tests, builds, commits, files, compaction \
        summaries. Any language. One line per hit (#id, when, kind, snippet with «matches»); \
        history_show gives one in full.")]
    async fn history_search(&self, Parameters(a): Parameters<HistorySearchArgs>) -> Result<String, String> {
        let scope = self.scope(a.kinds, a.agent, None, a.since, a.limit.unwrap_or(10).min(50))?;
        let p = api::SearchParams { query: a.query, scope };
        let r: api::Hits = self.call(method::SEARCH, p).await?;
        Ok(crate::commands::recall::for_agent(&r, "nothing found in this project's past"))
    }

    /// The past in order.
    #[tool(description = "This project's newest session (or one session, or everything since a time) as \
        a story in time order, one line per step: prompts, todos, files edited, commands and failures, \
        tests, commits, compactions, handovers between agents.")]
    async fn history_timeline(&self, Parameters(a): Parameters<TimelineArgs>) -> Result<String, String> {
        let scope = self.scope(a.kinds, None, a.session, a.since, a.limit.unwrap_or(60).min(500))?;
        let p = api::TimelineParams { scope, full: false };
        let r: api::Hits = self.call(method::TIMELINE, p).await?;
        Ok(crate::commands::recall::for_agent(&r, "nothing in this project's past for that span"))
    }

    /// One event in full.
    #[tool(description = "One event of this project's past in full, by the #id history_search or \
        history_timeline showed, with the events around it if asked.")]
    async fn history_show(&self, Parameters(a): Parameters<ShowArgs>) -> Result<String, String> {
        let p =
            api::ShowParams { seq: a.id, around: a.around.unwrap_or(0).min(20), project: Some(self.project.clone()) };
        let r: api::ShowReply = self.call(method::SHOW, p).await?;
        Ok(crate::commands::recall::show_for_agent(&r))
    }

    /// The resume context.
    #[tool(description = "What a fresh agent needs to carry on in this project: where the work stands, open \
        todos, failing tests, blockers, next steps, facts, goals and relevant memories.")]
    async fn session_context(&self, Parameters(a): Parameters<ContextArgs>) -> Result<String, String> {
        let p = api::ContextParams { path: self.project.clone(), budget: a.budget };
        let r: api::ContextReply = self.call(method::CONTEXT, p).await?;
        Ok(r.context)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ccmem", ccmem_proto::VERSION))
            .with_instructions(
                "ccmem keeps this project's work session and knowledge memories across conversations. \
                 Search memories before deciding something already decided; write one when you learn \
                 something the next session should know.",
            )
    }
}

/// Command line of `ccmem-mcp` (normally started by `ccmemctl mcp`).
#[derive(Debug, clap::Parser)]
#[command(name = "ccmem-mcp", version, about = "ccmem's MCP server on stdin/stdout (run by `ccmemctl mcp`)")]
struct Args {
    /// Socket of the daemon [default: as ccmemctl]
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Do not start the daemon if it is not running
    #[arg(long)]
    no_start: bool,
}

/// Entry point of the `ccmem-mcp` binary.
pub fn main() -> std::process::ExitCode {
    let args = <Args as clap::Parser>::parse();
    let outcome = ccmem_proto::wire::paths::socket_path(args.socket.as_deref())
        .map_err(|e| Error::Failed(format!("cannot work out the socket path: {e}")))
        .and_then(|socket| run(Ctx { socket, json: false, autostart: !args.no_start && !crate::autostart_disabled() }));
    crate::exit_with("ccmem-mcp", outcome)
}

/// Runs the server until stdin closes.
fn run(ctx: Ctx) -> Result<(), Error> {
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map_or_else(std::env::current_dir, Ok)
        .map_err(|e| Error::Failed(format!("cannot resolve the project directory: {e}")))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Failed(format!("cannot start the MCP server: {e}")))?;
    rt.block_on(async {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        // stdin → guard → rmcp; rmcp's replies and the guard's own errors → one writer.
        let (mut to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
        let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
        let (lines, mut out) = tokio::sync::mpsc::channel::<String>(64);
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = out.recv().await {
                if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                    break;
                }
            }
        });
        let replies = lines.clone();
        let forward = tokio::spawn(async move {
            let mut rd = BufReader::new(from_rmcp).lines();
            while let Ok(Some(l)) = rd.next_line().await {
                if replies.send(format!("{}\n", redacted(&l))).await.is_err() {
                    break;
                }
            }
        });
        let reader = tokio::spawn(async move {
            let mut rd = BufReader::new(tokio::io::stdin()).lines();
            while let Ok(Some(l)) = rd.next_line().await {
                match guard::check(&l, arguments_fit) {
                    guard::Verdict::Pass => {
                        if to_rmcp.write_all(format!("{l}\n").as_bytes()).await.is_err() {
                            break;
                        }
                    }
                    guard::Verdict::Answer(v) => {
                        if lines.send(format!("{v}\n")).await.is_err() {
                            break;
                        }
                    }
                    guard::Verdict::Skip => {}
                }
            }
            // End of input: rmcp sees its input end and stops.
            let _ = to_rmcp.shutdown().await;
        });
        let result = async {
            let service = Server::new(ctx, project)
                .serve((rmcp_in, rmcp_out))
                .await
                .map_err(|e| Error::Failed(format!("MCP initialisation failed: {e}")))?;
            service.waiting().await.map_err(|e| Error::Failed(format!("MCP server failed: {e}")))?;
            Ok(())
        }
        .await;
        reader.abort();
        let _ = forward.await;
        let _ = writer.await;
        result
    })
}

/// One of rmcp's replies as the agent gets it: a tool's result (and an error's message)
/// through the redaction filter, whatever the tool. The daemon redacts what it keeps and
/// what it shows, but this is what reaches the agent: nothing it returns holds a secret
/// (a project's directory named after a token, a path in a warning).
fn redacted(line: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(line) else { return line.to_string() };
    let redact = |x: &mut serde_json::Value| ccmem_proto::printable::map_strings(x, &ccmem_proto::redact::redact);
    let mut changed = false;
    if let Some(result) = v.get_mut("result").filter(|r| r.get("content").is_some()) {
        redact(result);
        changed = true;
    }
    if let Some(message) = v.get_mut("error").and_then(|e| e.get_mut("message")) {
        redact(message);
        changed = true;
    }
    if changed {
        serde_json::to_string(&v).unwrap_or_else(|_| line.to_string())
    } else {
        line.to_string()
    }
}

/// Whether `args` fit tool `name`'s arguments (None: not one of ours, rmcp answers).
fn arguments_fit(name: &str, args: &serde_json::Value) -> Option<Result<(), String>> {
    fn fits<T: DeserializeOwned>(a: &serde_json::Value) -> Result<(), String> {
        T::deserialize(a).map(|_| ()).map_err(|e| e.to_string())
    }
    Some(match name {
        "memory_search" => fits::<SearchArgs>(args),
        "memory_write" => fits::<WriteArgs>(args),
        "memory_show" | "memory_delete" => fits::<SlugArgs>(args),
        "memory_list" => fits::<ListArgs>(args),
        "memory_update" => fits::<UpdateArgs>(args),
        "memory_link" | "memory_unlink" => fits::<LinkArgs>(args),
        "memory_health" => fits::<HealthArgs>(args),
        "fact_forget" => fits::<ForgetArgs>(args),
        "goal_done" => fits::<GoalArgs>(args),
        "session_context" => fits::<ContextArgs>(args),
        "history_search" => fits::<HistorySearchArgs>(args),
        "history_timeline" => fits::<TimelineArgs>(args),
        "history_show" => fits::<ShowArgs>(args),
        "facts_list" | "session_status" | "session_resume_id" | "session_history" => Ok(()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
