//! What the writer stores, made ready before it is queued: an event redacted and
//! serialized, a session's state serialized. The work is done by the appending task, many
//! at once, and not by the one writer that every session waits on (redaction was half of
//! its time per event).

use super::Entry;
use ccmem_proto::model::session::Session;
use std::path::PathBuf;

/// Characters of an event's text kept (a prompt, a message, a command's output).
const TEXT_CHARS: usize = 16 * 1024;

/// The kinds of event whose text is the agent's markdown.
const MARKDOWN_KINDS: &[&str] = &["stop", "compacted", "precompact", "notification"];

/// An event as its row holds it: redacted, its data and replay as JSON text.
#[derive(Debug)]
pub(super) struct Row {
    pub root: PathBuf,
    pub root_name: String,
    pub session: String,
    pub at_ms: i64,
    pub source: &'static str,
    pub kind: &'static str,
    pub agent: Option<String>,
    pub conversation: Option<String>,
    pub path: Option<String>,
    pub text: String,
    pub data: Option<String>,
    pub replay: Option<String>,
}

impl Row {
    /// `e` redacted: the same rules as every other sink; an agent's words are read as
    /// markdown too, as the session reads them (markup can hide a token: `gh*p_*…`), and
    /// only then: reading every string so costs several times the plain rules. The event's
    /// text is most often a string of its replay too (a prompt, a command, a message): it is
    /// redacted once for both.
    pub(super) fn of(e: Entry) -> Row {
        let markdown = MARKDOWN_KINDS.contains(&e.kind);
        let redacted = Redacted::new(&e.text, markdown);
        let text = if markdown {
            ccmem_proto::model::session::truncate_chars(redacted.text.trim(), TEXT_CHARS)
        } else {
            crate::text::lines_kept(&redacted.text, TEXT_CHARS)
        };
        let data = e.data.map(|mut d| {
            crate::text::redact_json(&mut d);
            d.to_string()
        });
        let replay = e.replay.map(|mut r| {
            ccmem_proto::printable::map_strings(&mut r, &|s| redacted.of(s));
            r.to_string()
        });
        Row {
            path: e.path.as_deref().map(crate::text::clean),
            conversation: e.conversation.as_deref().map(crate::text::clean),
            text,
            data,
            replay,
            root: e.root,
            root_name: e.root_name,
            session: e.session,
            at_ms: e.at_ms,
            source: e.source,
            kind: e.kind,
            agent: e.agent,
        }
    }
}

/// A session's state as its row holds it (the session redacts what it keeps).
#[derive(Debug)]
pub(super) struct State {
    pub root: PathBuf,
    pub name: String,
    pub sid: String,
    pub json: String,
}

impl State {
    /// `s` serialized; None (logged) when it cannot be.
    pub(super) fn of(s: &Session) -> Option<State> {
        match serde_json::to_string(s) {
            Ok(json) => Some(State {
                root: s.project_root.clone(),
                name: s.project_name.clone(),
                sid: s.session_id.clone(),
                json,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialize a session's state for the journal");
                None
            }
        }
    }
}

/// An event's text redacted, and the redaction of the strings of its replay, that text's
/// reused.
struct Redacted<'t> {
    given: &'t str,
    text: String,
    markdown: bool,
}

impl<'t> Redacted<'t> {
    fn new(given: &'t str, markdown: bool) -> Self {
        Self { given, text: Self::redact(given, markdown).into_owned(), markdown }
    }

    fn redact(s: &str, markdown: bool) -> std::borrow::Cow<'_, str> {
        if markdown {
            crate::text::redact_markdown_cow(s)
        } else {
            ccmem_proto::redact::redact(s)
        }
    }

    /// `s` redacted: the text's redaction when `s` is the text.
    fn of<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        if !s.is_empty() && s == self.given {
            if self.text == s {
                std::borrow::Cow::Borrowed(s)
            } else {
                std::borrow::Cow::Owned(self.text.clone())
            }
        } else {
            Self::redact(s, self.markdown)
        }
    }
}
