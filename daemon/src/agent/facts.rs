//! The user-wide facts (`[REMEMBER GLOBAL: …]`): one store shared by every project, owned by
//! a task of its own so that projects never write it at once.

use crate::store::Store;
use tokio::sync::{mpsc, oneshot};

/// Facts kept at most (the oldest go first).
const KEPT: usize = 500;

enum Msg {
    Add(ccmem_proto::model::facts::Origin),
    List(Option<String>, oneshot::Sender<Vec<String>>),
    Edit(ccmem_proto::model::facts::FactsEdit, oneshot::Sender<Result<String, String>>),
}

/// A handle on the user-wide facts.
#[derive(Debug, Clone)]
pub struct GlobalFacts {
    tx: mpsc::Sender<Msg>,
}

impl GlobalFacts {
    /// Starts the owner task; facts are loaded from and saved to `store`.
    pub fn spawn(store: Store) -> Self {
        let (tx, mut rx) = mpsc::channel::<Msg>(64);
        tokio::spawn(async move {
            let s = store.clone();
            let mut memory = tokio::task::spawn_blocking(move || s.load_global_facts()).await.unwrap_or_default();
            while let Some(msg) = rx.recv().await {
                match msg {
                    Msg::Add(origin) => {
                        if origin.fact.is_empty() || memory.facts.contains(&origin.fact) {
                            continue;
                        }
                        memory.facts.push(origin.fact.clone());
                        memory.origins.push(origin);
                        let excess = memory.facts.len().saturating_sub(KEPT);
                        let gone: Vec<String> = memory.facts.drain(..excess).collect();
                        memory.origins.retain(|o| !gone.contains(&o.fact));
                        let (s, m) = (store.clone(), memory.clone());
                        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || s.save_global_facts(&m)).await {
                            tracing::error!(error = %e, "cannot save the user-wide facts");
                        }
                    }
                    Msg::List(root, reply) => {
                        let _ = reply.send(match root {
                            Some(root) => memory.shown_in(&root),
                            None => memory.listed(),
                        });
                    }
                    Msg::Edit(edit, reply) => {
                        let r = memory.apply(&edit, &crate::clock::iso(chrono::Utc::now()));
                        if r.is_ok() {
                            let (s, m) = (store.clone(), memory.clone());
                            if let Ok(Err(e)) = tokio::task::spawn_blocking(move || s.save_global_facts(&m)).await {
                                tracing::error!(error = %e, "cannot save the user-wide facts");
                            }
                        }
                        let _ = reply.send(r);
                    }
                }
            }
        });
        Self { tx }
    }

    /// Remembers a fact for every project, said in the project at `root`. One not `known`
    /// (every one an agent says: see `Project::intents`) reaches the projects only once the
    /// user confirms it.
    pub async fn add(&self, fact: String, root: &std::path::Path, known: bool) {
        let origin =
            ccmem_proto::model::facts::Origin { fact, project: root.to_string_lossy().into_owned(), pending: !known };
        let _ = self.tx.send(Msg::Add(origin)).await;
    }

    /// The user-wide facts shown in the project at `root`, each with where it came from.
    pub async fn for_project(&self, root: &std::path::Path) -> Vec<String> {
        self.ask(Some(root.to_string_lossy().into_owned())).await
    }

    async fn ask(&self, root: Option<String>) -> Vec<String> {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::List(root, tx)).await.is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }

    /// Forgets a user-wide fact (goals are per project).
    pub async fn edit(&self, edit: ccmem_proto::model::facts::FactsEdit) -> Result<String, String> {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Edit(edit, tx)).await.is_err() {
            return Err("ccmemd is shutting down".into());
        }
        rx.await.unwrap_or_else(|_| Err("ccmemd is shutting down".into()))
    }

    /// Every user-wide fact, oldest first, as `ccmemctl facts` lists them (with where each
    /// came from, and whether it waits for the user's word).
    pub async fn list(&self) -> Vec<String> {
        self.ask(None).await
    }
}
