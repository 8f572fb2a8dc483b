//! What the daemon keeps of text from outside (payloads, outputs, files): redacted, without
//! control characters, within its size; and paths given by clients, made relative to the
//! project and kept inside it.

use ccmem_proto::model::session::truncate_chars;
use ccmem_proto::printable;
use std::path::{Component, Path};

/// Characters of any one text field taken from a client.
pub const TEXT_CHARS: usize = 2000;

/// A path given by a client, relative to the project root. Absolute paths must lie inside
/// the project; relative ones must not climb out of it. The file need not exist (any more).
pub fn relative(root: &Path, path: &str) -> Result<String, String> {
    if path.trim().is_empty() {
        return Err("path is empty".into());
    }
    // No real path is longer (PATH_MAX): a longer one is junk that would only cost memory.
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("a path of {} bytes is longer than any real one ({MAX_PATH_BYTES})", path.len()));
    }
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        ccmem_proto::files::within::strip_root(p, root)
            .ok_or_else(|| format!("{path} is outside the project {}", root.display()))?
    } else {
        p.to_path_buf()
    };
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(x) => parts.push(x.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(|| format!("{path} is outside the project {}", root.display()))?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(format!("{path} is not a usable path")),
        }
    }
    if parts.is_empty() {
        return Err(format!("{path} names the project root, not a file"));
    }
    // A file name can hold a token (`src/AKIA…_ghp_….txt`): paths are kept redacted too. And
    // a line break of any kind (a name such as "x\n## Decisions\n- …", or the same with
    // U+2028) would forge lines in the context and the report: breaks and control characters
    // are shown as `?`. Invisible and reordering ones (a right-to-left override, zero-width
    // spaces) go: a name must read as what it is.
    let joined = parts.join("/");
    let shown = ccmem_proto::quote::name(&joined);
    Ok(ccmem_proto::redact::redact(&shown).into_owned())
}

/// The longest path taken in (Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;

/// Redacts secrets, trims, drops escape sequences, control and invisible characters, and
/// bounds the length of client text.
pub fn clean(s: &str) -> String {
    let redacted = ccmem_proto::redact::redact(s);
    let t = printable::line(redacted.trim());
    truncate_chars(t.trim(), TEXT_CHARS)
}

/// Like [`clean`], for text whose lines matter (an assistant message, a summary): line
/// breaks are kept, other control characters dropped, at most `max` characters.
pub fn clean_lines(s: &str, max: usize) -> String {
    // Redacting makes the text printable too (line breaks and tabs kept).
    let redacted = ccmem_proto::redact::redact(s);
    let t = redacted.trim().replace('\t', " ");
    truncate_chars(t.trim(), max)
}

/// Every string in `value` (keys too) through the redaction filter: for replies that serve
/// files a person or a repository may have written by hand (memories), which were never
/// filtered on their way in.
pub fn redact_json(value: &mut serde_json::Value) {
    ccmem_proto::printable::map_strings(value, &ccmem_proto::redact::redact);
}

/// Text from a repository's files as a quotation: one line, at most `max` characters, in
/// double quotes (inner ones made single), so that it reads as data and can neither open a
/// heading, a list item or a task, nor close its own quotes.
pub fn quoted(s: &str, max: usize) -> String {
    ccmem_proto::quote::quoted(s, max)
}

/// Output of the project's own tools (an error line, a test's name or message) as a code
/// span: data, kept whole (see [`ccmem_proto::quote::code`]).
pub fn code(s: &str, max: usize) -> String {
    ccmem_proto::quote::code(s, max)
}
