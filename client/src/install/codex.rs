//! Codex CLI's hooks: ccmem's entries in `$CODEX_HOME/hooks.json` (Claude Code's shape), and
//! the trust Codex asks of every hook before it runs it.
//!
//! Codex skips, silently, a hook the user has not trusted: trusting one writes
//! `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"` into
//! `config.toml`, the hash being Codex's of the hook's normalized definition (the event, the
//! matcher, the command and its timeout, as canonical JSON). `hooks install --agent codex`
//! does what Codex's `/hooks` trust step does, for ccmem's hooks only; `doctor` checks it.

use super::*;
use sha2::{Digest, Sha256};

/// The events ccmem listens to in Codex, with the tool matcher where the event has one.
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("Bash|apply_patch|update_plan")),
    ("PreCompact", None),
    ("Stop", None),
    ("SessionEnd", None),
];

/// Codex's home: `$CODEX_HOME` (as Codex resolves it, links followed), else `~/.codex`.
pub fn home() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return Ok(std::fs::canonicalize(&dir).unwrap_or(dir));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(".codex"))
}

/// Installs or removes ccmem's Codex hooks and their trust.
pub fn run(installing: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
    let home = home()?;
    let hooks_path = home.join("hooks.json");
    let config_path = home.join("config.toml");
    let before = read(&hooks_path)?;
    let mut after = before.clone();
    let command = command(Some(Agent::Codex), WindowsShell::BashOrCmd)?;
    // What was trusted before an uninstall is found by where ccmem's hooks are now.
    let ours_before = handlers(&hooks_path, &before);
    let changed = if installing {
        install(&mut after, &command, EVENTS) && end_within_limit(&mut after)
    } else {
        uninstall(&mut after)
    };
    let config = read_config(&config_path)?;
    let mut new_config = config.clone();
    let trust_changed = if installing {
        trust(&mut new_config, &handlers(&hooks_path, &after))
    } else {
        distrust(&mut new_config, &ours_before)
    };
    if dry_run {
        write_settings(&hooks_path, &after, changed, installing, true)?;
        if trust_changed {
            print!("{new_config}");
            eprintln!("(dry run: {} would change)", config_path.display());
        }
        return Ok(());
    }
    write_settings(&hooks_path, &after, changed, installing, false)?;
    if trust_changed {
        // A config kept as a link is written where it leads, as the hooks file is.
        let config_path = through_link(&config_path)?;
        let backup = atomic::with_suffix(&config_path, ".ccmem-backup");
        if installing && config_path.exists() && !backup.exists() {
            std::fs::copy(&config_path, &backup)
                .map_err(|e| format!("cannot back up {}: {e}", config_path.display()))?;
        }
        let text = new_config.to_string();
        // Uninstalled from a config.toml the install made: nothing of the user's in it.
        let r = if !installing && text.trim().is_empty() && !backup.exists() {
            std::fs::remove_file(&config_path)
        } else {
            atomic::write(&config_path, text.as_bytes(), false)
        };
        r.map_err(|e| format!("cannot write {}: {e}", config_path.display()))?;
        if !installing {
            let _ = std::fs::remove_file(&backup);
        }
    }
    report(&hooks_path, installing, changed || trust_changed, json_out);
    Ok(())
}

/// Codex gives SessionEnd hooks 3 s at most (and warns of a longer limit at every start):
/// ccmem's is set to that. Returns true, for chaining after an install that changed things.
fn end_within_limit(hooks: &mut Value) -> bool {
    let groups = hooks.pointer_mut("/hooks/SessionEnd").and_then(Value::as_array_mut);
    for group in groups.into_iter().flatten() {
        for h in group.get_mut("hooks").and_then(Value::as_array_mut).into_iter().flatten() {
            if h.get("command").and_then(Value::as_str).is_some_and(is_ours) {
                h["timeout"] = json!(SESSION_END_LIMIT);
            }
        }
    }
    true
}

/// See [`end_within_limit`].
const SESSION_END_LIMIT: u64 = 3;

/// One of ccmem's hook handlers in a hooks.json: Codex's key for it and its current hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// `<hooks.json>:<event>:<group>:<handler>`.
    pub key: String,
    /// `sha256:…`, as Codex computes it.
    pub hash: String,
}

/// ccmem's handlers in `hooks` (the hooks.json at `path`), each with its key and hash.
pub fn handlers(path: &Path, hooks: &Value) -> Vec<Handler> {
    let mut out = Vec::new();
    let Some(events) = hooks.get("hooks").and_then(Value::as_object) else { return out };
    for (event, groups) in events {
        let Some(label) = event_label(event) else { continue };
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            for (h, handler) in group.get("hooks").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let Some(command) = handler.get("command").and_then(Value::as_str).filter(|c| is_ours(c)) else {
                    continue;
                };
                let timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(600).max(1);
                out.push(Handler {
                    key: format!("{}:{label}:{g}:{h}", path.display()),
                    hash: hash(&label, matcher, command, timeout),
                });
            }
        }
    }
    out
}

/// Codex's name for an event in trust keys and hashes (`PostToolUse` → `post_tool_use`).
fn event_label(event: &str) -> Option<String> {
    if event.is_empty() || !event.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    Some(out)
}

/// Codex's trust hash of one command hook: SHA-256 of the canonical JSON (keys sorted, no
/// spaces) of `{"event_name", "matcher"?, "hooks": [{"type": "command", "command",
/// "timeout", "async": false}]}`.
pub fn hash(event_label: &str, matcher: Option<&str>, command: &str, timeout: u64) -> String {
    // serde_json keeps insertion order here (preserve_order): written sorted by hand.
    let handler = json!({"async": false, "command": command, "timeout": timeout, "type": "command"});
    let identity = match matcher {
        Some(m) => json!({"event_name": event_label, "hooks": [handler], "matcher": m}),
        None => json!({"event_name": event_label, "hooks": [handler]}),
    };
    let digest = Sha256::digest(identity.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn read_config(path: &Path) -> Result<toml_edit::DocumentMut, String> {
    match ccmem_proto::files::untrusted::read(path, 16 << 20) {
        Ok(b) => String::from_utf8_lossy(&b)
            .parse::<toml_edit::DocumentMut>()
            .map_err(|e| format!("{} is not valid TOML ({e}); fix it first", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(toml_edit::DocumentMut::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The `[hooks.state]` table of a config, made when `create`.
fn state_table(doc: &mut toml_edit::DocumentMut, create: bool) -> Option<&mut toml_edit::Table> {
    use toml_edit::{Item, Table};
    if create {
        let hooks = doc.entry("hooks").or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        let state = hooks.as_table_mut()?.entry("state").or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        return state.as_table_mut();
    }
    doc.get_mut("hooks")?.as_table_mut()?.get_mut("state")?.as_table_mut()
}

/// Trusts each handler (its hash under its key); returns whether anything changed.
fn trust(doc: &mut toml_edit::DocumentMut, handlers: &[Handler]) -> bool {
    let mut changed = false;
    for h in handlers {
        let Some(state) = state_table(doc, true) else { return changed };
        let entry = state.entry(&h.key).or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        let Some(table) = entry.as_table_mut() else { continue };
        if table.get("trusted_hash").and_then(|v| v.as_str()) != Some(h.hash.as_str()) {
            table["trusted_hash"] = toml_edit::value(h.hash.clone());
            changed = true;
        }
    }
    changed
}

/// Removes the trust of these handlers (only where it is still theirs); returns whether
/// anything changed.
fn distrust(doc: &mut toml_edit::DocumentMut, handlers: &[Handler]) -> bool {
    let mut changed = false;
    if let Some(state) = state_table(doc, false) {
        for h in handlers {
            let ours =
                state.get(&h.key).and_then(|t| t.get("trusted_hash")).and_then(|v| v.as_str()) == Some(h.hash.as_str());
            if ours {
                state.remove(&h.key);
                changed = true;
            }
        }
        let empty = state.is_empty();
        if empty {
            if let Some(hooks) = doc.get_mut("hooks").and_then(|h| h.as_table_mut()) {
                hooks.remove("state");
                if hooks.is_empty() {
                    doc.remove("hooks");
                }
            }
        }
    }
    changed
}

/// What `doctor` says of the Codex hooks: (installed, untrusted keys).
pub fn status() -> Result<(bool, Vec<String>), String> {
    let home = home()?;
    let hooks_path = home.join("hooks.json");
    let ours = handlers(&hooks_path, &read(&hooks_path)?);
    if ours.is_empty() {
        return Ok((false, Vec::new()));
    }
    let mut config = read_config(&home.join("config.toml"))?;
    let state = state_table(&mut config, false);
    let trusted = |h: &Handler| {
        state.as_ref().and_then(|s| s.get(&h.key)).and_then(|t| t.get("trusted_hash")).and_then(|v| v.as_str())
            == Some(h.hash.as_str())
    };
    Ok((true, ours.iter().filter(|h| !trusted(h)).map(|h| h.key.clone()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_hashes_are_codexs() {
        // Codex 0.169.0 ran hooks trusted with hashes made this way (tests/codex.rs runs it
        // without `--dangerously-bypass-hook-trust`); this pins the way, for
        // `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/ccmemctl hook --agent codex","timeout":5}]}]}}`
        // (Python's `json.dumps(…, sort_keys=True, separators=(",", ":"))` gives the same).
        assert_eq!(hash("stop", None, "/usr/bin/ccmemctl hook --agent codex", 5), CODEX_STOP_HASH);
        assert_eq!(event_label("PostToolUse").as_deref(), Some("post_tool_use"));
        assert_eq!(event_label("SessionStart").as_deref(), Some("session_start"));
        assert_eq!(event_label("../x"), None);
    }

    const CODEX_STOP_HASH: &str = "sha256:21fdbce527d5d209fa4d751096d28b7b7065083de18d207ad6f7996b325f1b13";

    #[test]
    fn trust_is_added_kept_and_removed_with_the_users_config_untouched() {
        let path = Path::new("/h/.codex/hooks.json");
        let mut hooks = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}});
        install(&mut hooks, "/usr/bin/ccmemctl hook --agent codex", EVENTS);
        let ours = handlers(path, &hooks);
        assert_eq!(ours.len(), EVENTS.len());
        assert!(ours.iter().any(|h| h.key == "/h/.codex/hooks.json:stop:1:0"), "{ours:?}");
        let original = "# my settings\nmodel = \"o3\"\n\n[hooks.state.\"/h/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:mine\"\n";
        let mut doc: toml_edit::DocumentMut = original.parse().unwrap();
        assert!(trust(&mut doc, &ours));
        assert!(!trust(&mut doc, &ours), "twice changes nothing");
        let text = doc.to_string();
        assert!(text.starts_with("# my settings\nmodel = \"o3\""), "{text}");
        assert!(text.contains("sha256:mine"), "{text}");
        let back: toml_edit::DocumentMut = text.parse().unwrap();
        for h in &ours {
            assert_eq!(back["hooks"]["state"][&h.key]["trusted_hash"].as_str(), Some(h.hash.as_str()));
        }
        assert!(distrust(&mut doc, &ours));
        assert_eq!(doc.to_string(), original, "uninstall leaves exactly what was there");
    }
}
