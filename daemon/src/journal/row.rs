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
    /// The event, its text redacted and its names cleaned (its data and replay are below).
    pub e: Entry,
    pub data: Option<String>,
    pub replay: Option<String>,
    /// The text's unspaced runs as pairs, for `events_cjk` ([`super::grams`]).
    pub grams: Option<String>,
}

impl Row {
    /// `e` redacted: the same rules as every other sink; an agent's words are read as
    /// markdown too, as the session reads them (markup can hide a token: `gh*p_*…`), and
    /// only then: reading every string so costs several times the plain rules. The event's
    /// text is most often a string of its replay too (a prompt, a command, a message): it is
    /// redacted once for both.
    pub(super) fn of(mut e: Entry) -> Row {
        let markdown = MARKDOWN_KINDS.contains(&e.kind);
        let mut redacted = Redacted::new(&e.text, markdown);
        // What a command that prints a secret printed (its output, in the replay) is read
        // after the command, as the text holds them (`pass show db⏎…`).
        redacted.printed = e.kind == "command" && ccmem_proto::redact::prints_secret(&e.text);
        let data = e.data.take().map(|mut d| {
            crate::text::redact_json(&mut d);
            d.to_string()
        });
        let replay = e.replay.take().map(|mut r| {
            ccmem_proto::printable::map_strings(&mut r, &|s| redacted.of(s));
            r.to_string()
        });
        let text = if markdown {
            ccmem_proto::model::session::truncate_chars(redacted.text.trim(), TEXT_CHARS)
        } else {
            crate::text::lines_kept(&redacted.text, TEXT_CHARS)
        };
        drop(redacted);
        e.text = text;
        e.path = e.path.as_deref().map(crate::text::clean);
        e.conversation = e.conversation.as_deref().map(crate::text::clean);
        let grams = super::grams::of(&e.text);
        Row { e, data, replay, grams }
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
    /// The text is a command that prints a secret: the other strings may be its output.
    printed: bool,
}

impl<'t> Redacted<'t> {
    fn new(given: &'t str, markdown: bool) -> Self {
        Self { given, text: Self::redact(given, markdown).into_owned(), markdown, printed: false }
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
        } else if self.printed {
            ccmem_proto::redact::redact_output(self.given, s)
        } else {
            Self::redact(s, self.markdown)
        }
    }
}
