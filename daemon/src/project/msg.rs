//! What a project's task is told: its messages, each with the channel for its answer when it
//! has one.

use crate::{agent::hooks, observe::watch};
use ccmem_proto::model::facts::{self, Facts};
use ccmem_proto::model::session::SessionEvent;
use ccmem_proto::wire::api::{
    CheckpointReply, ContextReply, EndReply, HandoffParams, HandoffReply, HookReply, ProjectStatus, ProjectSummary,
    ReportReply, RequestedReason,
};
use std::path::{Path, PathBuf};
use tokio::sync::oneshot;

/// Messages a project task accepts.
#[derive(Debug)]
pub enum Msg {
    /// Something happened; `reply` is None for notifications.
    Event { event: SessionEvent, reply: Option<oneshot::Sender<Result<(), String>>> },
    /// Keep (or start) the session.
    Watch { reply: oneshot::Sender<ProjectSummary> },
    /// The whole state.
    Status { reply: oneshot::Sender<ProjectStatus> },
    /// The state in brief.
    Summary { conversations: bool, reply: oneshot::Sender<ProjectSummary> },
    /// Write a checkpoint now.
    Checkpoint {
        reason: RequestedReason,
        note: Option<String>,
        reply: oneshot::Sender<Result<CheckpointReply, String>>,
    },
    /// End the session and start a new one.
    Reset { reply: oneshot::Sender<EndReply> },
    /// End the session and stop.
    Unwatch { reply: oneshot::Sender<EndReply> },
    /// The daemon is stopping: final checkpoint, keep the session for the next start.
    Shutdown { reply: oneshot::Sender<()> },
    /// Files changed on disk (from the project's watcher).
    FsChanges(Vec<(String, watch::Change)>),
    /// `.git/HEAD`, the index or a ref changed.
    GitChanged,
    /// The project's directory was deleted or moved away (from its watcher); `deleted`: seen
    /// deleted, so a directory at its path now is another.
    RootGone { deleted: bool },
    /// The dev servers listening from this project now (from the port scanner).
    Servers(Vec<ccmem_proto::model::environment::ServerInfo>),
    /// An agent hook event; `reply` is None for notifications; `sent`: when the client sent
    /// it, when it says.
    Hook { hook: hooks::Hook, reply: Option<oneshot::Sender<HookReply>>, sent: Option<chrono::DateTime<chrono::Utc>> },
    /// The resume context.
    Context { budget: Option<usize>, reply: oneshot::Sender<ContextReply> },
    /// The session memory report, written into the project when `write`.
    Report { write: bool, reply: oneshot::Sender<Result<ReportReply, String>> },
    /// What brings the project's file watcher up to date (none before it runs).
    Syncer { reply: oneshot::Sender<Option<watch::Syncer>> },
    /// The project's facts and goals, after `edit` (what it did, or why it could not).
    Facts { edit: Option<facts::FactsEdit>, reply: oneshot::Sender<FactsAnswer> },
    /// Remove a text or a conversation from the live session, its checkpoint (and the copy
    /// before it), its report and its facts; answers whether anything went, and the files
    /// rewritten.
    Forget { what: ForgetLive, apply: bool, reply: oneshot::Sender<Result<(bool, Vec<PathBuf>), String>> },
    /// The handoff through git: turn it on or off, push, pull, show, forget, prune.
    Handoff { params: HandoffParams, reply: oneshot::Sender<Result<HandoffReply, String>> },
}

/// What `forget` takes out of a live session.
#[derive(Debug, Clone)]
pub enum ForgetLive {
    /// Every occurrence of the text.
    Text(String),
    /// The conversation's record.
    Conversation(String),
}

/// The facts and goals, and what an edit did.
pub type FactsAnswer = (Facts, Result<Option<String>, String>);

/// What a project task needs of whoever started it (the registry): its place among the
/// live projects, held for the task's life, and once given up, the way to hand on the
/// messages that came too late for this session.
pub trait Place: Send + 'static {
    /// Frees the place; returns what hands a late message on to the next session.
    fn release(self: Box<Self>) -> Box<dyn Fn(PathBuf, Msg) + Send>;
}

impl From<watch::Event> for Msg {
    fn from(e: watch::Event) -> Self {
        match e {
            watch::Event::Changes(c) => Msg::FsChanges(c),
            watch::Event::GitChanged => Msg::GitChanged,
            watch::Event::RootGone { deleted } => Msg::RootGone { deleted },
        }
    }
}

impl Msg {
    /// Whether this message brings a project without a session to life.
    pub fn starts_session(&self) -> bool {
        matches!(
            self,
            Msg::Event { .. }
                | Msg::Watch { .. }
                | Msg::Checkpoint { .. }
                | Msg::Reset { .. }
                | Msg::Hook { .. }
                | Msg::Report { .. }
                | Msg::Handoff { .. }
        )
    }

    /// Answers a message for a project with no live session (dropping the reply of those
    /// that cannot be answered that way, which the caller reports as "shutting down").
    pub fn answer_not_live(self, root: &Path) {
        match self {
            Msg::Status { reply } => {
                let _ = reply.send(not_live(root));
            }
            Msg::Unwatch { reply } => {
                let _ = reply.send(EndReply { root: root.to_path_buf(), ended_session: None, new_session: None });
            }
            Msg::Shutdown { reply } => {
                let _ = reply.send(());
            }
            Msg::Event { reply: Some(reply), .. } => {
                let _ = reply.send(Err("ccmemd is shutting down".into()));
            }
            Msg::Handoff { reply, .. } => {
                let _ = reply.send(Err("ccmemd is shutting down".into()));
            }
            Msg::Context { reply, .. } => {
                let _ = reply.send(ContextReply {
                    context: format!("No live ccmem session for {} yet.", root.display()),
                    conversation_id: None,
                });
            }
            _ => {}
        }
    }
}

impl Msg {
    /// Answers a message for a project another daemon keeps: nothing recorded, `why` said
    /// wherever a person reads the answer (never in the agent's context).
    pub fn answer_refused(self, root: &Path, why: &str) {
        match self {
            Msg::Status { reply } => {
                let mut st = not_live(root);
                st.warnings.push(why.to_string());
                let _ = reply.send(st);
            }
            Msg::Watch { reply } => {
                let _ = reply.send(ProjectSummary {
                    root: root.to_path_buf(),
                    project_name: String::new(),
                    session_id: String::new(),
                    created_at: String::new(),
                    last_activity: String::new(),
                    expires_in_secs: 0.0,
                    files_modified: 0,
                    commands: 0,
                    last_checkpoint: None,
                    warnings: vec![why.to_string()],
                    conversations: Vec::new(),
                });
            }
            Msg::Hook { reply: Some(reply), .. } => {
                let _ = reply.send(HookReply::default());
            }
            Msg::Event { reply: Some(reply), .. } => {
                let _ = reply.send(Err(why.to_string()));
            }
            Msg::Checkpoint { reply, .. } => {
                let _ = reply.send(Err(why.to_string()));
            }
            Msg::Report { reply, .. } => {
                let _ = reply.send(Err(why.to_string()));
            }
            Msg::Handoff { reply, .. } => {
                let _ = reply.send(Err(why.to_string()));
            }
            Msg::Context { reply, .. } => {
                let _ = reply.send(ContextReply { context: why.to_string(), conversation_id: None });
            }
            Msg::Reset { reply } | Msg::Unwatch { reply } => {
                let _ = reply.send(EndReply { root: root.to_path_buf(), ended_session: None, new_session: None });
            }
            other => other.answer_not_live(root),
        }
    }
}

/// The status of a project without a live session.
pub fn not_live(root: &Path) -> ProjectStatus {
    ProjectStatus {
        root: root.to_path_buf(),
        live: false,
        session: None,
        expires_in_secs: None,
        unsaved_changes: false,
        warnings: Vec::new(),
        watch: None,
        handoff: None,
    }
}
