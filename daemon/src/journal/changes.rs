//! Who is told when the journal takes something: the view's subscribers (`view.subscribe`).
//! Told after the commit, so that what they read then holds it; nobody listening costs
//! nothing.

use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::broadcast;

/// The projects whose past changed in one commit (empty: any may have, after a forget).
pub type Change = Arc<[PathBuf]>;

/// Commits told at most while a subscriber is behind; past them it is told it lagged
/// (and reads everything again).
const BEHIND: usize = 64;

/// The sending side, shared by the writer and whoever subscribes.
#[derive(Clone, Debug)]
pub struct Changes(broadcast::Sender<Change>);

impl Default for Changes {
    fn default() -> Self {
        Self(broadcast::channel(BEHIND).0)
    }
}

impl Changes {
    /// A receiver of every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.0.subscribe()
    }

    /// Tells the subscribers, if any, that the projects `roots` names changed.
    pub(crate) fn tell(&self, roots: impl FnOnce() -> Vec<PathBuf>) {
        if self.0.receiver_count() == 0 {
            return;
        }
        let mut roots = roots();
        roots.sort();
        roots.dedup();
        let _ = self.0.send(roots.into());
    }
}
