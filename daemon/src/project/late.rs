//! Hooks that reach the project late are applied in the order the agent sent them.
//!
//! The agent runs its hooks one after another, but a daemon that was stopped (`SIGSTOP`, a
//! debugger, a machine swapping hard) finds several connections waiting when it runs again,
//! and reads them on as many tasks: they reach the project in any order, and a todo list or
//! a test's result could be overwritten by an older one. A hook whose client says it was
//! sent more than [`LATE`] ago is held for [`SETTLE`] after the last such arrival, then the
//! held ones are applied sorted by when they were sent. A hook on time is never held (the
//! agent waits for it); anything else the project receives applies the held ones first.

use crate::agent::hooks;
use ccmem_proto::wire::api::HookReply;
use chrono::{DateTime, Utc};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

use super::task::Project;

/// A hook sent longer ago than this was held up on its way.
const LATE: Duration = Duration::from_secs(1);

/// How long after the last late arrival the held hooks wait for others.
const SETTLE: Duration = Duration::from_millis(200);

/// Late hooks held at most; past this they are applied (a backlog of thousands is not one
/// the agent made in a second).
const HELD: usize = 256;

type Held = (DateTime<Utc>, hooks::Hook, Option<oneshot::Sender<HookReply>>);

/// The late hooks held, and when they are due.
#[derive(Default)]
pub(crate) struct Late {
    held: Vec<Held>,
    due: Option<Instant>,
    /// When the plan in place was sent.
    plan_sent: Option<DateTime<Utc>>,
    /// When the newest change of each task (by id or subject) was sent; at most
    /// [`TASKS`], the oldest forgotten first.
    task_sent: std::collections::VecDeque<(String, DateTime<Utc>)>,
}

/// Tasks whose last change's time is kept.
const TASKS: usize = 512;

impl Late {
    /// Whether a plan sent at `sent` is newer than the one in place (and now the one in
    /// place); one without a stamp is.
    pub(super) fn newer_plan(&mut self, sent: Option<DateTime<Utc>>) -> bool {
        let Some(sent) = sent else { return true };
        if self.plan_sent.is_some_and(|t| sent < t) {
            return false;
        }
        self.plan_sent = Some(sent);
        true
    }

    /// Whether a change of the task `key` (its id, else its subject) sent at `sent` is
    /// newer than the plan in place and than the last change of that task (and now the
    /// last); one without a stamp is.
    pub(super) fn newer_task_change(&mut self, key: &str, sent: Option<DateTime<Utc>>) -> bool {
        let Some(sent) = sent else { return true };
        if self.plan_sent.is_some_and(|t| sent < t) {
            return false;
        }
        match self.task_sent.iter_mut().find(|(k, _)| k == key) {
            Some((_, t)) if sent < *t => return false,
            Some((_, t)) => *t = sent,
            None => {
                if self.task_sent.len() >= TASKS {
                    self.task_sent.pop_front();
                }
                self.task_sent.push_back((key.to_string(), sent));
            }
        }
        true
    }

    /// Holds `hook` if it is late (None), or gives it back to be applied now.
    pub(super) fn hold(
        &mut self,
        hook: hooks::Hook,
        reply: Option<oneshot::Sender<HookReply>>,
        sent: Option<DateTime<Utc>>,
    ) -> Option<(hooks::Hook, Option<oneshot::Sender<HookReply>>)> {
        let late = sent.filter(|t| (Utc::now() - *t).to_std().is_ok_and(|ago| ago > LATE) && self.held.len() < HELD);
        match late {
            None => Some((hook, reply)),
            Some(t) => {
                self.held.push((t, hook, reply));
                self.due = Some(Instant::now() + SETTLE);
                None
            }
        }
    }

    /// When the held hooks are to be applied (None: none are held).
    pub(super) fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The held hooks, oldest sent first.
    fn take(&mut self) -> Vec<Held> {
        self.due = None;
        let mut held = std::mem::take(&mut self.held);
        // Stable: two sent in the same millisecond keep their order of arrival.
        held.sort_by_key(|(t, _, _)| *t);
        held
    }
}

impl Project {
    /// Applies the late hooks held, in the order they were sent.
    pub(super) async fn apply_late(&mut self) {
        for (sent, hook, reply) in self.late.take() {
            self.hook(hook, reply, Some(sent)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(text: &str) -> hooks::Hook {
        hooks::parse(&serde_json::json!({
            "hook_event_name": "UserPromptSubmit", "session_id": "c", "cwd": "/p", "prompt": text
        }))
        .expect("a prompt")
    }

    fn prompt(h: &hooks::Hook) -> String {
        match &h.kind {
            hooks::Kind::Prompt { text } => text.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn late_hooks_come_back_in_the_order_they_were_sent() {
        let mut late = Late::default();
        let now = Utc::now();
        let ago = |s: i64| Some(now - chrono::Duration::seconds(s));
        assert!(late.hold(hook("third"), None, ago(3)).is_none());
        assert!(late.hold(hook("first"), None, ago(9)).is_none());
        assert!(late.hold(hook("second"), None, ago(5)).is_none());
        assert!(late.due().is_some());
        let order: Vec<String> = late.take().iter().map(|(_, h, _)| prompt(h)).collect();
        assert_eq!(order, ["first", "second", "third"]);
        assert!(late.due().is_none());
    }

    #[test]
    fn an_older_plan_replaces_no_newer_one() {
        let mut late = Late::default();
        let now = Utc::now();
        assert!(late.newer_plan(Some(now)));
        assert!(!late.newer_plan(Some(now - chrono::Duration::seconds(1))), "sent before the one in place");
        assert!(late.newer_plan(Some(now + chrono::Duration::milliseconds(5))));
        assert!(late.newer_plan(None), "an import's or an old client's has no stamp");
    }

    #[test]
    fn an_older_change_of_a_task_undoes_no_newer_one() {
        let mut late = Late::default();
        let now = Utc::now();
        let at = |ms: i64| Some(now + chrono::Duration::milliseconds(ms));
        assert!(late.newer_task_change("1", at(100)), "in progress");
        assert!(late.newer_task_change("2", at(50)), "another task, sent earlier: its own");
        assert!(!late.newer_task_change("1", at(20)), "a pending sent before it, arriving late");
        assert!(late.newer_task_change("1", at(200)), "completed, after");
        assert!(late.newer_plan(at(300)));
        assert!(!late.newer_task_change("2", at(250)), "the whole list sent after it says more");
        assert!(late.newer_task_change("2", None), "an import's has no stamp");
    }

    #[test]
    fn a_hook_on_time_or_without_a_stamp_is_never_held() {
        let mut late = Late::default();
        assert!(late.hold(hook("now"), None, Some(Utc::now())).is_some());
        assert!(late.hold(hook("unstamped"), None, None).is_some());
        // A clock that says the future is not late either.
        assert!(late.hold(hook("ahead"), None, Some(Utc::now() + chrono::Duration::seconds(60))).is_some());
        assert!(late.due().is_none());
    }
}
