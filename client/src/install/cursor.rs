//! Cursor's hooks: ccmem's entries in the user's `~/.cursor/hooks.json`
//! (`{"version": 1, "hooks": {"<event>": [{"command": …}]}}`), merged without touching other
//! hooks. **Written from Cursor's documentation, untested here** (Cursor cannot be installed
//! or run offline on this project's machines). Only event names Cursor documents are used:
//! one it does not know makes it ignore the whole file.

use super::*;

/// The events ccmem listens to in Cursor, with the tool matcher where the event has one.
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("sessionStart", None),
    ("beforeSubmitPrompt", None),
    ("postToolUse", Some("Shell")),
    ("afterFileEdit", None),
    ("afterAgentResponse", None),
    ("preCompact", None),
    ("sessionEnd", None),
];

/// Seconds Cursor gives each of ccmem's hooks.
const TIMEOUT_SECS: u64 = 5;

/// `~/.cursor/hooks.json`.
pub fn path() -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".cursor/hooks.json"))
}

/// Adds ccmem's entries (Cursor's flat shape); returns whether anything changed.
pub fn install_flat(file: &mut Value, command: &str) -> bool {
    let Some(root) = file.as_object_mut() else { return false };
    root.entry("version").or_insert(json!(1));
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    if !hooks.is_object() {
        *hooks = json!({});
    }
    let hooks = hooks.as_object_mut().expect("made an object above");
    let mut changed = false;
    for (event, matcher) in EVENTS {
        let list = hooks.entry(*event).or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        let list = list.as_array_mut().expect("made an array above");
        let mut found = false;
        for h in list.iter_mut() {
            if h.get("command").and_then(Value::as_str).is_some_and(is_ours) {
                found = true;
                if h.get("command").and_then(Value::as_str) != Some(command) {
                    h["command"] = json!(command);
                    changed = true;
                }
            }
        }
        if !found {
            let mut h = json!({"command": command, "timeout": TIMEOUT_SECS});
            if let Some(m) = matcher {
                h["matcher"] = json!(m);
            }
            list.push(h);
            changed = true;
        }
    }
    changed
}

/// Removes ccmem's entries (and the events they leave empty); returns whether anything
/// changed.
pub fn uninstall_flat(file: &mut Value) -> bool {
    let Some(hooks) = file.get_mut("hooks").and_then(Value::as_object_mut) else { return false };
    let mut changed = false;
    for list in hooks.values_mut() {
        if let Some(list) = list.as_array_mut() {
            let n = list.len();
            list.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_ours));
            changed |= list.len() != n;
        }
    }
    hooks.retain(|_, l| l.as_array().is_none_or(|a| !a.is_empty()));
    if changed && hooks.is_empty() {
        if let Some(root) = file.as_object_mut() {
            root.remove("hooks");
            if root.len() == 1 && root.contains_key("version") {
                root.clear();
            }
        }
    }
    changed
}

/// Installs or removes ccmem's Cursor hooks.
pub fn run(installing: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
    let path = path()?;
    let before = read(&path)?;
    let mut after = before.clone();
    let changed = if installing {
        install_flat(&mut after, &command(Some(Agent::Cursor), WindowsShell::BashOrCmd)?)
    } else {
        uninstall_flat(&mut after)
    };
    // The user's own file (backed up at the install) keeps its `version` and `hooks` keys,
    // however empty: an uninstall gives back what it had.
    if !installing && changed && after.as_object().is_some_and(|o| o.is_empty()) {
        if let Ok(mut original) = read(&atomic::with_suffix(&through_link(&path)?, ".ccmem-backup")) {
            uninstall_flat(&mut original);
            // Only keys and no hooks: nothing the user has since removed comes back.
            let hooks = original.get("hooks").and_then(Value::as_object);
            if hooks.is_none_or(|h| h.values().all(|l| l.as_array().is_some_and(Vec::is_empty))) {
                after = original;
            }
        }
    }
    if write_settings(&path, &after, changed, installing, dry_run)? {
        report(&path, installing, changed, json_out);
    }
    Ok(())
}

/// For `doctor`: whether ccmem's hooks are in `~/.cursor/hooks.json`, for every event.
pub fn status() -> Result<bool, String> {
    let file = read(&path()?)?;
    Ok(EVENTS.iter().all(|(event, _)| {
        file.pointer(&format!("/hooks/{event}"))
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|h| h.get("command").and_then(Value::as_str).is_some_and(is_ours)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_hooks_merge_flat_and_leave_the_users_own() {
        let mut f = json!({"version": 1, "hooks": {"stop": [{"command": "./hooks/audit.sh"}]}});
        let original = f.clone();
        assert!(install_flat(&mut f, "/bin/ccmemctl hook --agent cursor"));
        assert!(!install_flat(&mut f, "/bin/ccmemctl hook --agent cursor"), "twice changes nothing");
        assert_eq!(f["hooks"]["postToolUse"][0]["matcher"], "Shell");
        assert_eq!(f["hooks"]["stop"], original["hooks"]["stop"]);
        // Only events Cursor documents: one it does not know voids the file.
        let documented = [
            "sessionStart",
            "sessionEnd",
            "beforeSubmitPrompt",
            "preToolUse",
            "postToolUse",
            "postToolUseFailure",
            "subagentStart",
            "subagentStop",
            "beforeShellExecution",
            "afterShellExecution",
            "beforeMCPExecution",
            "afterMCPExecution",
            "beforeReadFile",
            "afterFileEdit",
            "afterAgentResponse",
            "afterAgentThought",
            "stop",
            "preCompact",
        ];
        assert!(f["hooks"].as_object().unwrap().keys().all(|k| documented.contains(&k.as_str())));
        assert!(uninstall_flat(&mut f));
        assert_eq!(f, original);
        let mut empty = json!({});
        install_flat(&mut empty, "ccmemctl hook --agent cursor");
        assert!(uninstall_flat(&mut empty));
        assert_eq!(empty, json!({}));
    }
}
