//! What `forget` does to the files ccmem keeps inside a project whose session is not live:
//! the checkpoint, the copy before it and the report, rewritten without a text, or removed.
//! (A live session's task rewrites its own, [`super::task::Project`]'s `forget`.)

use crate::project::checkpoint::STATE_FILE;
use crate::report::session_memory::REPORT_FILE;
use ccmem_proto::files::{atomic, dir::Dir, untrusted};
use std::io;
use std::path::{Path, PathBuf};

/// The largest file read to be rewritten (ours are far smaller).
const MAX_BYTES: u64 = 16 << 20;

/// ccmem's files in the project at `root` that can hold a session's words: the checkpoint,
/// the copy kept before it, and the report.
pub fn files(root: &Path) -> [PathBuf; 3] {
    [root.join(STATE_FILE), root.join(format!("{STATE_FILE}.bak")), root.join(REPORT_FILE)]
}

/// Rewrites each of ccmem's files in `root` that holds `text` (in any case, as it is or
/// escaped as JSON writes it) with [`crate::text::FORGOTTEN`] in its place; lists them.
pub fn scrub_files(root: &Path, text: &str, apply: bool) -> io::Result<Vec<PathBuf>> {
    let escaped = crate::text::json_escaped(text);
    let escaped = escaped.as_str();
    let mut out = Vec::new();
    for path in files(root) {
        let Ok(body) = untrusted::read_string_in(root, &path, MAX_BYTES) else { continue };
        let holds = crate::text::holds_any_case;
        if !holds(&body, text) && !holds(&body, escaped) {
            continue;
        }
        if apply {
            let replace = crate::text::replace_any_case;
            let body = replace(&replace(&body, text, crate::text::FORGOTTEN), escaped, crate::text::FORGOTTEN);
            atomic::write_in_private(root, &path, body.as_bytes(), false)?;
        }
        out.push(path);
    }
    Ok(out)
}

/// Removes ccmem's files from `root` (never following a link); lists them.
pub fn remove_files(root: &Path, apply: bool) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let Ok(dir) = Dir::open_under(root, &root.join(".claude"), false) else { return Ok(out) };
    for path in files(root) {
        let Some(name) = path.file_name() else { continue };
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if apply {
            dir.remove(name)?;
        }
        out.push(path);
    }
    Ok(out)
}
