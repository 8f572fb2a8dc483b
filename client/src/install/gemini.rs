//! Gemini CLI's hooks: ccmem's entries in its user settings (`~/.gemini/settings.json`, or
//! `$GEMINI_CLI_HOME/.gemini/settings.json`), in the shape Gemini CLI shares with Claude Code
//! (`hooks.<Event>: [{matcher, hooks: [{type, command, timeout}]}]`), with two differences:
//! timeouts are in milliseconds, and each hook has a name (what `hooksConfig.disabled`
//! lists).
//!
//! Gemini CLI runs hooks only in folders the user trusts (its folder-trust prompt, or
//! `trustedFolders.json`); that is the user's choice per folder, which ccmem leaves to them.

use super::*;

/// The events ccmem listens to in Gemini CLI, with the tool matcher where the event has one.
/// Not `PreCompress`: it fires before every model call, compressing or not.
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("SessionStart", None),
    ("BeforeAgent", None),
    ("AfterTool", Some("^(run_shell_command|write_file|replace|edit|write_todos)$")),
    ("AfterAgent", None),
    ("Notification", None),
    ("SessionEnd", None),
];

/// The name ccmem's hooks go by in Gemini CLI's settings.
pub const HOOK_NAME: &str = "ccmem";

/// The time Gemini CLI gives each of ccmem's hooks, in milliseconds: SessionStart waits up to
/// 2 s for its context, after starting the daemon if need be.
const TIMEOUT_MS: u64 = 5_000;

/// Gemini CLI's home for its settings: `$GEMINI_CLI_HOME`, else the user's home; the
/// settings are in its `.gemini/`.
pub fn settings_path() -> Result<PathBuf, String> {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|d| !d.is_empty())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()))
        .ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".gemini/settings.json"))
}

/// Installs or removes ccmem's Gemini CLI hooks.
pub fn run(installing: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
    let path = settings_path()?;
    let before = read_with(&path, true)?;
    let mut after = before.clone();
    let changed = if installing {
        let hook = json!({"name": HOOK_NAME, "type": "command", "command": command(Some(Agent::Gemini), WindowsShell::PowerShell)?, "timeout": TIMEOUT_MS});
        install_hook(&mut after, &hook, EVENTS)
    } else {
        uninstall(&mut after)
    };
    if write_settings(&path, &after, changed, installing, dry_run)? {
        report(&path, installing, changed, json_out);
        let had_comments = std::fs::read(&path).is_ok() && changed && !json_out && {
            let backup = atomic::with_suffix(&path, ".ccmem-backup");
            std::fs::read(&backup).is_ok_and(|b| without_comments(&b) != b)
        };
        if had_comments {
            eprintln!("note: the comments in {} were not kept (they are in its .ccmem-backup)", path.display());
        }
    }
    Ok(())
}

/// For `doctor`: whether ccmem's hooks are in Gemini CLI's settings (every event), and whether
/// the user disabled them there (`hooksConfig.enabled: false`, or ccmem named in
/// `hooksConfig.disabled`).
pub fn status() -> Result<(bool, Option<String>), String> {
    let path = settings_path()?;
    let settings = read_with(&path, true)?;
    let installed = EVENTS.iter().all(|(event, _)| {
        settings
            .pointer(&format!("/hooks/{event}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
            .any(|h| h.get("command").and_then(Value::as_str).is_some_and(is_ours))
    });
    let config = settings.get("hooksConfig");
    let off = if config.and_then(|c| c.get("enabled")).and_then(Value::as_bool) == Some(false) {
        Some(format!("hooksConfig.enabled is false in {}", path.display()))
    } else if config
        .and_then(|c| c.get("disabled"))
        .and_then(Value::as_array)
        .is_some_and(|d| d.iter().any(|n| n.as_str().is_some_and(|n| n == HOOK_NAME || is_ours(n))))
    {
        Some(format!("ccmem is in hooksConfig.disabled in {}", path.display()))
    } else {
        None
    };
    Ok((installed, off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_hooks_are_named_timed_in_milliseconds_and_leave_the_rest() {
        let mut s = json!({
            "model": {"name": "gemini-2.5-pro"},
            "hooks": {"AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "prettier.sh"}]}]}
        });
        let original = s.clone();
        let hook = json!({"name": HOOK_NAME, "type": "command", "command": "/bin/ccmemctl hook --agent gemini", "timeout": TIMEOUT_MS});
        assert!(install_hook(&mut s, &hook, EVENTS));
        assert!(!install_hook(&mut s, &hook, EVENTS), "twice changes nothing");
        assert_eq!(s["hooks"]["AfterTool"][0], original["hooks"]["AfterTool"][0]);
        let ours = &s["hooks"]["AfterTool"][1];
        assert_eq!(ours["matcher"], "^(run_shell_command|write_file|replace|edit|write_todos)$");
        assert_eq!(ours["hooks"][0]["timeout"], 5000);
        assert_eq!(ours["hooks"][0]["name"], "ccmem");
        assert!(s["hooks"].get("PreCompress").is_none());
        assert!(uninstall(&mut s));
        assert_eq!(s, original);
    }

    #[test]
    fn settings_with_comments_are_read_as_gemini_cli_reads_them() {
        let text =
            b"{\n  // the theme\n  \"theme\": \"Dracula\", /* a \"quoted\" word */\n  \"url\": \"http://x//y\"\n}\n";
        let v: Value = serde_json::from_slice(&without_comments(text)).unwrap();
        assert_eq!(v, json!({"theme": "Dracula", "url": "http://x//y"}));
        assert_eq!(without_comments(b"{\"a\": \"\\\" // not a comment\"}"), b"{\"a\": \"\\\" // not a comment\"}");
    }
}
