//! What the session concluded from its events, journaled as events of their own so that
//! recall finds them by kind: a failure and its fix, a commit, a test run or a build, a
//! decision the agent stated. The session's rules find them (from commands, git, the
//! transcript); the journal is told each once, when it first appears in the session.

use crate::clock::parse_iso;
use crate::journal::Entry;
use ccmem_proto::model::session::Session;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// A conclusion whose own time is this close to now is told at now (its own time is to the
/// second, and would stand before the event it came from).
const AS_NOW_SECS: i64 = 60;

/// What was told already, by a hash of its session, kind and text.
#[derive(Default)]
pub(super) struct Told {
    seen: HashSet<u64>,
}

/// One conclusion: its journal kind, the session's words for it (made its text only when it
/// is news: this is read at every event), time (ISO 8601; empty: now) and conversation.
struct Found<'s> {
    kind: &'static str,
    parts: [&'s str; 4],
    at: &'s str,
    conversation: Option<&'s str>,
}

impl Found<'_> {
    /// The text an entry of it holds.
    fn text(&self) -> String {
        let [a, b, c, d] = self.parts;
        match self.kind {
            // A failure: its kind, command, error line.
            "failure" if c.is_empty() => format!("{a} failed: {b}"),
            "failure" => format!("{a} failed: {b}\n{c}"),
            // A fix: its kind, command, error line, what fixed it.
            "fixed" if d.is_empty() => format!("{a} failed, then went through: {b}\n{c}"),
            "fixed" => format!("{a} failed, then went through (fixed by {d}): {b}\n{c}"),
            // Finished work: its kind and text.
            "commit" => format!("{a}: {b}"),
            _ => a.to_string(),
        }
    }
}

impl Told {
    /// Takes everything `s` holds as told (a session restored: its conclusions are older
    /// than this daemon's journal, or in it already).
    pub(super) fn seed(&mut self, s: &Session) {
        for f in found(s) {
            self.seen.insert(key(s, &f));
        }
    }

    /// The conclusions in `s` not told yet, as entries made by `entry`: each at its own time
    /// when it has one; a failure, a fix, a commit of the conversation whose event drew it
    /// (`trigger`: its id and time), a decision of its own conversation.
    pub(super) fn news(
        &mut self,
        s: &Session,
        trigger: Option<(&str, i64)>,
        entry: impl Fn(chrono::DateTime<chrono::Utc>, &'static str) -> Entry,
    ) -> Vec<Entry> {
        let now = chrono::Utc::now();
        let mut out = Vec::new();
        for f in found(s) {
            if !self.seen.insert(key(s, &f)) {
                continue;
            }
            let conversation =
                f.conversation.or(trigger.map(|t| t.0)).map(str::to_string).or_else(|| latest_conversation(s));
            let conv = conversation.as_deref().and_then(|id| s.conversations.iter().find(|c| c.id == id));
            // Its own time; else its event's, its conversation's last; drawn just now from
            // what just happened, now (its own time is to the second, and would stand before
            // the event it came from).
            let own = parse_iso(f.at)
                .or_else(|| trigger.and_then(|t| chrono::DateTime::from_timestamp_millis(t.1)))
                .or_else(|| conv.and_then(|c| parse_iso(&c.last_activity)));
            let at = own.filter(|t| now - *t > chrono::Duration::seconds(AS_NOW_SECS)).unwrap_or(now);
            let agent = conv.map(|c| c.agent.to_string());
            out.push(Entry { text: f.text(), conversation, agent, ..entry(at, f.kind) });
        }
        out
    }
}

/// A conclusion's identity: the same text at another time (a test run red again) is news.
fn key(s: &Session, f: &Found<'_>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&s.session_id, f.kind, f.parts, f.at).hash(&mut h);
    h.finish()
}

/// The conversation active last.
fn latest_conversation(s: &Session) -> Option<String> {
    s.conversations.iter().max_by(|a, b| a.last_activity.cmp(&b.last_activity)).map(|c| c.id.clone())
}

/// Every conclusion `s` holds now.
fn found(s: &Session) -> Vec<Found<'_>> {
    let mut out = Vec::new();
    for f in &s.failures {
        // Known by when it started: repeated, it is the same failure.
        let parts = [f.kind.as_str(), &f.command, &f.error, ""];
        out.push(Found { kind: "failure", parts, at: &f.first_at, conversation: None });
    }
    for l in &s.lessons {
        let parts = [l.kind.as_str(), &l.command, &l.error, &l.fixed_by];
        out.push(Found { kind: "fixed", parts, at: &l.at, conversation: None });
    }
    for d in &s.done {
        out.push(Found { kind: "commit", parts: [&d.kind, &d.text, "", ""], at: &d.at, conversation: None });
    }
    for t in &s.timeline {
        let kind = match t.kind.as_str() {
            "tests" => "test",
            "build" => "build",
            _ => continue,
        };
        out.push(Found { kind, parts: [&t.text, "", "", ""], at: &t.timestamp, conversation: None });
    }
    for c in &s.conversations {
        for text in c.digest.findings.iter().chain(&c.digest.points) {
            out.push(Found { kind: "decision", parts: [text, "", "", ""], at: "", conversation: Some(&c.id) });
        }
    }
    out
}
