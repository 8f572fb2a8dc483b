//! `ccmemctl mcp`: an MCP server on stdin/stdout (the official Rust SDK, rmcp) that gives the
//! agent its memories and its session. Every tool forwards to the daemon (started if need
//! be) for the project the agent runs in (`$CLAUDE_PROJECT_DIR`, else the current directory).
//!
//! It is its own program, `ccmem-mcp` (`ccmemctl mcp` hands over to it): its async runtime
//! and the MCP library would otherwise make every `ccmemctl hook` start slower.

use crate::memory as text;
use crate::{with_daemon, Ctx, Error};
use ccmem_proto::api::{self, method};
use ccmem_proto::memory::api::{self as mapi, method as mmethod};
use ccmem_proto::memory::{MemoryType, Scope};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words to look for in titles, tags and content.
    pub query: String,
    /// Only this scope: global, project, local or enterprise.
    #[serde(default)]
    pub scope: Option<String>,
    /// Only this type: decision, learning, artifact, gotcha, breadcrumb or hub.
    #[serde(default, rename = "type")]
    pub memory_type: Option<String>,
    /// Only memories with all these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Most results (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Arguments of `memory_write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// decision, learning, artifact, gotcha, breadcrumb or hub.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// One line, 1-200 characters.
    pub title: String,
    /// Lowercase hyphenated tags, at least one, e.g. ["auth", "oauth2"].
    pub tags: Vec<String>,
    /// The memory, in markdown: what, why, and how to apply it.
    pub content: String,
    /// global (all projects), project (committed with the project), local (this machine
    /// only). Default: project inside a project, else global.
    #[serde(default)]
    pub scope: Option<String>,
    /// The slug; derived from type and title when absent.
    #[serde(default)]
    pub slug: Option<String>,
}

/// Arguments of `memory_show`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowArgs {
    /// The memory's slug.
    pub slug: String,
    /// The scope to look in (default: all, most specific first).
    #[serde(default)]
    pub scope: Option<String>,
}

/// Arguments of `session_context`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ContextArgs {
    /// At most this many characters (default 6000).
    #[serde(default)]
    pub budget: Option<usize>,
}

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

fn kind(s: Option<String>) -> Result<Option<MemoryType>, String> {
    s.map(|s| s.parse::<MemoryType>().map_err(|e| e.to_string())).transpose()
}

impl Server {
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
        let p = mapi::WriteParams {
            path: Some(self.project.clone()),
            scope: scope(a.scope)?,
            memory_type,
            title: a.title,
            tags: a.tags,
            content: a.content,
            slug: a.slug,
        };
        let r: mapi::MemoryReply = self.call(mmethod::WRITE, p).await?;
        let mut out = format!("saved {} in the {} scope ({})\n", r.memory.slug, r.memory.scope, r.file.display());
        for n in &r.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        Ok(out)
    }

    /// Show a memory.
    #[tool(description = "Show one knowledge memory in full: metadata, content and links, by slug.")]
    async fn memory_show(&self, Parameters(a): Parameters<ShowArgs>) -> Result<String, String> {
        let p = mapi::SlugParams { path: Some(self.project.clone()), scope: scope(a.scope)?, slug: a.slug };
        let r: mapi::MemoryReply = self.call(mmethod::SHOW, p).await?;
        Ok(text::memory(&r))
    }

    /// The session's status.
    #[tool(description = "The current work session of this project as ccmem tracks it: files modified, commands, \
        tests, build, dev servers, git state, tasks and blockers.")]
    async fn session_status(&self) -> Result<String, String> {
        let p = api::StatusParams { path: Some(self.project.clone()) };
        let r: api::StatusReply = self.call(method::STATUS, p).await?;
        Ok(crate::output::status(&r))
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
    let outcome = ccmem_proto::paths::socket_path(args.socket.as_deref())
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
        let service = Server::new(ctx, project)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Failed(format!("MCP initialisation failed: {e}")))?;
        service.waiting().await.map_err(|e| Error::Failed(format!("MCP server failed: {e}")))?;
        Ok(())
    })
}
