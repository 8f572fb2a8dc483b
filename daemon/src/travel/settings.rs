//! Which projects hand off through git, to which remote, and whether automatically: the
//! user's own file, `$XDG_CONFIG_HOME/ccmem/handoff.toml`, written by `ccmemctl handoff
//! enable`/`disable`. Never a repository's: a repository must not be able to make ccmem push
//! anything anywhere (its `.claude/ccmem.toml` naming a remote is refused, see
//! [`crate::config::project`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file's name in the config dir.
pub const FILE: &str = "handoff.toml";

/// One project's setting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    /// The remote it is pushed to and fetched from.
    pub remote: String,
    /// Pushed after each Stop and at session end.
    #[serde(default)]
    pub auto: bool,
    /// The remote's URLs when it was enabled (fetch, push): a URL changed since (by an agent,
    /// by a repository's script) is not used until the user enables again.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub push_url: String,
}

/// Edits of the file, one at a time (projects' tasks write it).
static WRITING: Mutex<()> = Mutex::new(());

/// The file, in the config dir.
pub fn path() -> Result<PathBuf, String> {
    ccmem_proto::wire::paths::config_dir().map(|d| d.join(FILE)).map_err(|e| e.to_string())
}

/// Every project's setting; an error names the file and what is wrong with it.
pub fn read_all(file: &Path) -> Result<BTreeMap<String, Setting>, String> {
    let text = match ccmem_proto::files::untrusted::read_string(file, 1 << 20) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    toml::from_str(&text).map_err(|e| format!("{}: {}", file.display(), e.message()))
}

/// `root`'s setting, if handoff is on for it.
pub fn of(root: &Path) -> Result<Option<Setting>, String> {
    let all = read_all(&path()?)?;
    Ok(all.get(&root.to_string_lossy().into_owned()).cloned())
}

/// Sets (or with None, removes) `root`'s setting, keeping every other.
pub fn set(root: &Path, setting: Option<Setting>) -> Result<(), String> {
    let _one = WRITING.lock().unwrap_or_else(|p| p.into_inner());
    let file = path()?;
    let mut all = read_all(&file)?;
    let key = root.to_string_lossy().into_owned();
    match setting {
        Some(s) => all.insert(key, s),
        None => all.remove(&key),
    };
    let body = toml::to_string(&all).map_err(|e| e.to_string())?;
    let text = format!(
        "# ccmem's handoff through git, per project: written by `ccmemctl handoff enable` and\n\
         # `disable`. Only this file (never a repository's) turns it on.\n\n{body}"
    );
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    ccmem_proto::files::atomic::write(&file, text.as_bytes(), false)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}
