//! GitHub Copilot CLI's hooks: ccmem's own file among its user hooks,
//! `$COPILOT_HOME/hooks/ccmem.json` (`~/.copilot/hooks/`), which Copilot CLI loads in every
//! folder (a repository's hooks only in folders the user trusts). The events are named in
//! PascalCase, for which Copilot CLI sends Claude-like payloads. No `PreToolUse`: a hook
//! there that fails denies the tool.

use super::*;

/// The events ccmem listens to in Copilot CLI, with the tool matcher (a regular expression
/// the whole tool name must match) where the event has one.
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("Bash|Write|Edit|bash|powershell|create|edit")),
    ("PostToolUseFailure", None),
    ("Stop", None),
    ("PreCompact", None),
    ("SessionEnd", None),
];

/// Seconds Copilot CLI gives each of ccmem's hooks (SessionStart waits up to 2 s).
const TIMEOUT_SECS: u64 = 5;

/// Copilot CLI's home: `$COPILOT_HOME`, else `~/.copilot`.
pub fn home() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("COPILOT_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".copilot"))
}

/// The hooks file ccmem owns.
pub fn path() -> Result<PathBuf, String> {
    Ok(home()?.join("hooks/ccmem.json"))
}

/// The file for the hook command `command`.
pub fn file_for(command: &str) -> Value {
    let mut hooks = Map::new();
    for (event, matcher) in EVENTS {
        let mut hook = json!({"type": "command", "command": command, "timeoutSec": TIMEOUT_SECS});
        if let Some(m) = matcher {
            hook["matcher"] = json!(m);
        }
        hooks.insert((*event).to_string(), json!([hook]));
    }
    json!({"version": 1, "hooks": hooks})
}

/// Installs or removes ccmem's Copilot CLI hooks file.
pub fn run(installing: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
    let path = path()?;
    let current = read(&path)?;
    let exists = path.exists();
    if exists && !is_ccmems(&current) {
        return Err(format!("{} is not ccmem's: ccmem leaves it as it is (move it away first)", path.display()));
    }
    let wanted = file_for(&command(Some(Agent::Copilot), WindowsShell::PowerShell)?);
    let changed = if installing { current != wanted } else { exists };
    if installing {
        if !write_settings(&path, &wanted, changed, true, dry_run)? {
            return Ok(());
        }
    } else if dry_run {
        eprintln!("(dry run: {} would {})", path.display(), if changed { "go" } else { "stay as it is" });
        return Ok(());
    } else if changed {
        std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        let _ = std::fs::remove_file(atomic::with_suffix(&path, ".ccmem-backup"));
    }
    report(&path, installing, changed, json_out);
    Ok(())
}

/// Whether a hooks file holds ccmem's hooks alone.
fn is_ccmems(file: &Value) -> bool {
    let commands: Vec<&str> = file
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .collect();
    !commands.is_empty() && commands.iter().all(|c| is_ours(c))
}

/// For `doctor`: None when not installed, else whether it runs this `ccmemctl` with every
/// event.
pub fn status() -> Result<Option<bool>, String> {
    let path = path()?;
    if !path.exists() {
        return Ok(None);
    }
    let current = read(&path)?;
    Ok(Some(current == file_for(&command(Some(Agent::Copilot), WindowsShell::PowerShell)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_names_every_event_in_pascal_case_with_no_pre_tool_use() {
        let f = file_for("/bin/ccmemctl hook --agent copilot");
        assert!(is_ccmems(&f));
        let hooks = f["hooks"].as_object().unwrap();
        assert!(hooks.keys().all(|k| k.starts_with(|c: char| c.is_ascii_uppercase())), "{hooks:?}");
        assert!(!hooks.contains_key("PreToolUse"));
        assert_eq!(f["hooks"]["PostToolUse"][0]["matcher"], "Bash|Write|Edit|bash|powershell|create|edit");
        assert!(!is_ccmems(&json!({"hooks": {"Stop": [{"command": "notify.sh"}]}})));
    }
}
