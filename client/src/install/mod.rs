//! `ccmemctl hooks install | uninstall`: ccmem's entries in each agent's hook settings
//! (Claude Code's settings.json, Codex's hooks.json and the trust it keeps in config.toml),
//! merged without touching other hooks or keys, idempotently, with a backup, atomically.

pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod plugin_file;

use crate::cli::HooksAction;
use ccmem_proto::files::atomic;
use ccmem_proto::model::agent::Agent;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The events ccmem listens to, with the tool matcher where the event has one.
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("Edit|Write|MultiEdit|NotebookEdit|TodoWrite|Bash|TaskCreate|TaskUpdate")),
    ("PostToolUseFailure", Some("Bash")),
    ("Stop", None),
    ("SubagentStop", None),
    ("PreCompact", None),
    ("SessionEnd", None),
    // Task lists kept by id also when the Task tools' PostToolUse is not delivered (a
    // teammate's task, a matcher changed by hand).
    ("TaskCreated", None),
    ("TaskCompleted", None),
    // What Claude Code tells the user (a permission it needs, input it waits for).
    ("Notification", None),
];

/// Runs `hooks install` or `hooks uninstall` for the agents `--agent` names.
pub fn run(action: HooksAction, json_out: bool) -> Result<(), String> {
    let (target, installing) = match action {
        HooksAction::Install(t) => (t, true),
        HooksAction::Uninstall(t) => (t, false),
    };
    let agents = match target.agent.trim().to_ascii_lowercase().as_str() {
        // Claude Code, and each other agent this machine has (its program on PATH, or its
        // settings directory): `all` does not litter a home with agents' folders.
        "all" => SUPPORTED.iter().copied().filter(|a| *a == Agent::Claude || present(*a)).collect(),
        name => match Agent::from_name(name) {
            Some(a) if SUPPORTED.contains(&a) => vec![a],
            Some(a) => return Err(format!("{} is not supported by this version of ccmem yet", a.display())),
            None => return Err(format!("unknown agent {name:?}: use {}, or all", names(SUPPORTED))),
        },
    };
    let all = target.agent.trim().eq_ignore_ascii_case("all");
    // `--project --agent all`: Claude Code's project settings, and a word on the others this
    // machine has, whose hooks are the user's only.
    let agents = if target.project && all {
        let others: Vec<Agent> = agents.iter().copied().filter(|a| *a != Agent::Claude).collect();
        if !others.is_empty() {
            eprintln!(
                "{}: hooks are installed for the user only, not per project (`ccmemctl hooks install --agent {}`)",
                others.iter().map(|a| a.display()).collect::<Vec<_>>().join(", "),
                others[0].name()
            );
        }
        vec![Agent::Claude]
    } else {
        agents
    };
    if target.project && agents != [Agent::Claude] {
        return Err("--project is for Claude Code's settings only (Codex and Gemini CLI run a project's hooks only \
                    once the project is trusted; OpenCode's and Pi's plugins are installed for the user): install \
                    for the user"
            .into());
    }
    // One agent's trouble (a settings file to fix first) does not keep the others from
    // their hooks: each is done, and what failed is said at the end.
    let mut failed = Vec::new();
    for agent in agents {
        let done = match agent {
            Agent::Codex => codex::run(installing, target.dry_run, json_out),
            Agent::Gemini => gemini::run(installing, target.dry_run, json_out),
            Agent::Opencode => plugin_file::OPENCODE.run(installing, target.dry_run, json_out),
            Agent::Pi => plugin_file::PI.run(installing, target.dry_run, json_out),
            Agent::Copilot => copilot::run(installing, target.dry_run, json_out),
            Agent::Cursor => cursor::run(installing, target.dry_run, json_out),
            _ => claude(installing, target.project, target.dry_run, json_out),
        };
        if let Err(e) = done {
            failed.push(format!("{}: {e}", agent.display()));
        }
    }
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    Ok(())
}

/// The agents `hooks install` knows, in the order `--agent all` installs them.
pub const SUPPORTED: &[Agent] =
    &[Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Opencode, Agent::Pi, Agent::Copilot, Agent::Cursor];

/// Whether this machine has `agent`: its program on PATH, or its settings directory.
fn present(agent: Agent) -> bool {
    let home = match agent {
        Agent::Codex => codex::home().ok(),
        Agent::Gemini => gemini::settings_path().ok().and_then(|p| p.parent().map(Path::to_path_buf)),
        // The plugin folder's parent: `~/.config/opencode`, `~/.pi/agent`.
        Agent::Opencode => plugin_file::OPENCODE.path().ok().and_then(|p| p.parent()?.parent().map(Path::to_path_buf)),
        Agent::Pi => plugin_file::PI.path().ok().and_then(|p| p.parent()?.parent().map(Path::to_path_buf)),
        Agent::Copilot => copilot::home().ok(),
        Agent::Cursor => cursor::path().ok().and_then(|p| p.parent().map(Path::to_path_buf)),
        _ => None,
    };
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            let exe = d.join(if agent == Agent::Cursor { "cursor-agent" } else { agent.name() });
            exe.is_file()
                || (cfg!(windows) && (exe.with_extension("exe").is_file() || exe.with_extension("cmd").is_file()))
        })
    });
    on_path || home.is_some_and(|h| h.is_dir())
}

/// `claude, codex, gemini`.
fn names(agents: &[Agent]) -> String {
    agents.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// Claude Code's settings.json (the user's, or the project's).
fn claude(installing: bool, project: bool, dry_run: bool, json_out: bool) -> Result<(), String> {
    let (root, path) = settings_path(project)?;
    if let Some(root) = &root {
        // A cloned repository can make `.claude` or its settings a link to another
        // project's (or to the user's own `~/.claude/settings.json`).
        for p in [path.parent().unwrap_or(root), path.as_path()] {
            match ccmem_proto::files::untrusted::within(root, p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
                _ => {}
            }
        }
    }
    let before = read(&path)?;
    let mut after = before.clone();
    // A project's settings are shared with the team: the plain command, found on each one's
    // PATH, not this machine's absolute path (the plugin does the same).
    let command = if project { "ccmemctl hook".to_string() } else { command(None, WindowsShell::BashOrCmd)? };
    let changed = if installing { install(&mut after, &command, EVENTS) } else { uninstall(&mut after) };
    if !write_settings(&path, &after, changed, installing, dry_run)? {
        return Ok(());
    }
    if !installing && changed && project && !path.exists() {
        // The `.claude` directory the install made, if nothing else is in it.
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    if installing && !json_out {
        let user = settings_path(false).ok().map(|(_, p)| p);
        let here = settings_path(true).ok().map(|(_, p)| p);
        if let Some((file, id)) = plugin_enabled([user, here].into_iter().flatten()) {
            eprintln!(
                "note: the ccmem plugin ({id}) is enabled in {} too: every event runs twice (counted once); \
                 keep one (`claude plugin uninstall ccmem`, or `ccmemctl hooks uninstall`)",
                file.display()
            );
        }
    }
    report(&path, installing, changed, json_out);
    Ok(())
}

/// Writes `after` to the settings file at `path` (JSON), if `changed`: atomically, after a
/// backup when installing; a file an uninstall leaves holding nothing is removed, with the
/// install's backup. With `dry_run` it is printed instead; returns false then.
pub(crate) fn write_settings(
    path: &Path,
    after: &Value,
    changed: bool,
    installing: bool,
    dry_run: bool,
) -> Result<bool, String> {
    let text = format!("{}\n", serde_json::to_string_pretty(after).map_err(|e| e.to_string())?);
    if dry_run {
        print!("{text}");
        eprintln!("(dry run: {} would {})", path.display(), if changed { "change" } else { "stay as it is" });
        return Ok(false);
    }
    // A settings file kept as a link (a dotfiles repository) is written where it leads,
    // and stays a link.
    let linked = through_link(path)?;
    let path = linked.as_path();
    let backup = atomic::with_suffix(path, ".ccmem-backup");
    if changed && installing {
        // The first backup is the user's own settings: a later install does not replace it.
        if path.exists() && !backup.exists() {
            std::fs::copy(path, &backup).map_err(|e| format!("cannot back up {}: {e}", path.display()))?;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        atomic::write(path, text.as_bytes(), false).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    } else if changed {
        // Uninstalled: what ccmem added goes, and nothing more. A file left holding nothing
        // that was not there before the install (no backup of it) was ccmem's alone, and
        // goes; one the user had stays, however little it holds.
        // What is left is what the user had before the install: their own file comes back
        // as it was, comments and layout (Gemini CLI's settings) included.
        let original = std::fs::read(&backup).ok();
        let same = |b: &Vec<u8>| serde_json::from_slice::<Value>(&without_comments(b)).ok().as_ref() == Some(after);
        let emptied = after.as_object().is_some_and(|o| o.is_empty());
        let r = match original.as_ref().filter(|b| same(b)) {
            Some(b) => atomic::write(path, b, false),
            None if emptied && original.is_none() => std::fs::remove_file(path),
            None => atomic::write(path, text.as_bytes(), false),
        };
        r.map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        match original {
            // The settings changed since the install, and only the backup has the comments.
            Some(b) if !same(&b) && without_comments(&b) != b => eprintln!(
                "note: {} is kept: it holds the comments your settings had before the install",
                backup.display()
            ),
            _ => {
                let _ = std::fs::remove_file(&backup);
            }
        }
    }
    Ok(true)
}

/// Where a settings file kept as a link (a dotfiles repository) leads: it is written there,
/// and stays a link. Any other path as it is.
pub(crate) fn through_link(path: &Path) -> Result<PathBuf, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| format!("{} leads nowhere: {e}", path.display()))
        }
        _ => Ok(path.to_path_buf()),
    }
}

/// Says what an install or uninstall did to `path`.
pub(crate) fn report(path: &Path, installing: bool, changed: bool, json_out: bool) {
    let verb = match (installing, changed) {
        (true, true) => "installed ccmem's hooks in",
        (true, false) => "ccmem's hooks were already installed in",
        (false, true) => "removed ccmem's hooks from",
        (false, false) => "no ccmem hooks to remove in",
    };
    if json_out {
        println!("{}", json!({"settings": path, "changed": changed, "installed": installing}));
    } else {
        println!("{verb} {}", path.display());
    }
}

/// The first of these settings files that enables the ccmem plugin
/// (`"enabledPlugins": {"ccmem@<marketplace>": true}`), with the plugin's id.
pub fn plugin_enabled(files: impl IntoIterator<Item = PathBuf>) -> Option<(PathBuf, String)> {
    files.into_iter().find_map(|p| {
        let v: Value = serde_json::from_slice(&ccmem_proto::files::untrusted::read(&p, 16 << 20).ok()?).ok()?;
        let plugins = v.get("enabledPlugins")?.as_object()?;
        let id = plugins.iter().find(|(k, on)| k.starts_with("ccmem@") && on.as_bool() == Some(true))?.0.clone();
        Some((p, id))
    })
}

/// The settings file to change, with the project root it must stay inside (`--project`).
pub(crate) fn settings_path(project: bool) -> Result<(Option<PathBuf>, PathBuf), String> {
    if project {
        let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
        let root = cwd.ancestors().find(|a| a.join(".git").exists()).unwrap_or(&cwd).to_path_buf();
        Ok((Some(root.clone()), root.join(".claude/settings.json")))
    } else {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set")?;
        Ok((None, PathBuf::from(home).join(".claude/settings.json")))
    }
}

fn read(path: &Path) -> Result<Value, String> {
    read_with(path, false)
}

/// The settings at `path`, with `//` and `/* */` comments allowed when `comments` (Gemini CLI
/// reads its settings that way). What is written back has none; the backup keeps them.
pub(crate) fn read_with(path: &Path, comments: bool) -> Result<Value, String> {
    // A regular file only, within reason: a project's settings come with the repository.
    match ccmem_proto::files::untrusted::read(path, 16 << 20) {
        Ok(b) if b.iter().all(u8::is_ascii_whitespace) => Ok(json!({})),
        Ok(b) => match serde_json::from_slice::<Value>(&if comments { without_comments(&b) } else { b }) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err(format!("{} does not hold a JSON object; fix it first", path.display())),
            Err(e) => Err(format!("{} is not valid JSON ({e}); fix it first", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// JSON text without its `//` and `/* */` comments (outside strings), as strip-json-comments
/// reads it; line breaks are kept, so an error still names the right line.
pub(crate) fn without_comments(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let (mut i, mut in_string) = (0, false);
    while i < text.len() {
        let c = text[i];
        if in_string {
            out.push(c);
            if c == b'\\' {
                if let Some(&n) = text.get(i + 1) {
                    out.push(n);
                    i += 1;
                }
            } else if c == b'"' {
                in_string = false;
            }
        } else if c == b'"' {
            in_string = true;
            out.push(c);
        } else if text[i..].starts_with(b"//") {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if text[i..].starts_with(b"/*") {
            i += 2;
            while i < text.len() && !text[i..].starts_with(b"*/") {
                if text[i] == b'\n' {
                    out.push(b'\n');
                }
                i += 1;
            }
            i += 2;
            continue;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The shell an agent runs its hook commands in on Windows (on Unix every agent uses `sh -c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowsShell {
    /// Git Bash or cmd.exe: Claude Code runs hooks in Git Bash; for the others it is not
    /// documented, so the command is written to read the same in both.
    BashOrCmd,
    /// PowerShell: Gemini CLI (`getShellConfiguration()` gives `powershell.exe -Command` on
    /// Windows) and Copilot CLI (a hook's `command` runs in PowerShell there).
    PowerShell,
}

/// The hook command: this very executable, so that the agent finds it whatever its PATH,
/// naming the agent when it is not Claude Code, written for the shell the agent runs it in.
pub(crate) fn command(agent: Option<Agent>, on_windows: WindowsShell) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find ccmemctl's own path: {e}"))?;
    let shell = if cfg!(windows) { Some(on_windows) } else { None };
    let cmd = hook_command(&exe.to_string_lossy(), shell)?;
    Ok(match agent {
        Some(a) if !a.is_default() => format!("{cmd} --agent {}", a.name()),
        _ => cmd,
    })
}

/// Characters no shell an agent runs hooks in reads specially, anywhere in a word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c) || (!c.is_ascii() && c.is_alphanumeric())
}

/// The hook command line for `exe`, as the agent's shell reads it: `sh` on Unix (`None`),
/// else the Windows shell given.
///
/// On Unix the agents run it with `sh -c`: a path with anything but plain characters (a
/// space, a quote, `&`, `;`, `$`, `|`, a backtick, `(`, `<`, `>`, `\`, `*`, `~`, a line
/// break…) is single-quoted, which `sh` reads literally, inner single quotes as `'\''`.
///
/// On Windows the path is written with `/`, which Git Bash, cmd.exe and PowerShell all accept
/// (bash would eat backslashes), and bare when it holds only plain characters.
/// - For Git Bash or cmd, otherwise in double quotes, which both read alike as long as the
///   path holds none of `$`, a backtick, `%`, `!` or `"` (bash expands the first two inside
///   them, cmd the next two); such a path cannot be written for both at once, and is refused
///   with the reason rather than installed to break or to run what the path spells.
/// - For PowerShell, otherwise as `& '…'`: a quoted string alone is a value, not a command,
///   so it takes the call operator; single quotes are literal, each of PowerShell's single
///   quote characters (`'`, `‘`, `’`, `‚`, `‛`) doubled inside them.
pub fn hook_command(exe: &str, windows: Option<WindowsShell>) -> Result<String, String> {
    let Some(shell) = windows else {
        return Ok(if exe.chars().all(plain) && !exe.is_empty() {
            format!("{exe} hook")
        } else {
            format!("'{}' hook", exe.replace('\'', r"'\''"))
        });
    };
    let exe = exe.replace('\\', "/");
    if let Some(c) = exe.chars().find(|c| c.is_control()) {
        return Err(format!("ccmemctl's path {exe:?} holds {c:?}: install ccmem in a directory without it"));
    }
    match shell {
        WindowsShell::PowerShell => {
            // Fewer characters are plain to PowerShell: `,` `@` `=` `%` `+` mean something at
            // a command's start or inside it.
            if exe.chars().all(|c| c.is_alphanumeric() || "/._-:".contains(c)) && !exe.is_empty() {
                return Ok(format!("{exe} hook"));
            }
            let mut quoted = String::with_capacity(exe.len() + 8);
            for c in exe.chars() {
                if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
                    quoted.push(c);
                }
                quoted.push(c);
            }
            Ok(format!("& '{quoted}' hook"))
        }
        WindowsShell::BashOrCmd => {
            if exe.chars().all(|c| plain(c) && c != '%') {
                return Ok(format!("{exe} hook"));
            }
            if let Some(c) = exe.chars().find(|c| "$`%!\"".contains(*c)) {
                return Err(format!(
                    "ccmemctl's path {exe} holds {c:?}, which the shells agents run hooks in (Git Bash, cmd) \
                     read differently: install ccmem in a directory without it"
                ));
            }
            Ok(format!("\"{exe}\" hook"))
        }
    }
}

/// A hook command of ccmem's (this or any other install of it, for any agent).
pub fn is_ours(command: &str) -> bool {
    let c = command.trim();
    let c = match c.rsplit_once(" --agent ") {
        Some((head, agent)) if Agent::from_name(agent).is_some() => head,
        _ => c,
    };
    c.ends_with(" hook") && c.contains("ccmemctl")
}

/// Adds ccmem's entries for `events` (each with its tool matcher, if any); returns whether
/// anything changed.
pub fn install(settings: &mut Value, command: &str, events: &[(&str, Option<&str>)]) -> bool {
    install_hook(settings, &json!({"type": "command", "command": command, "timeout": 5}), events)
}

/// [`install`] with the whole hook entry given (agents differ in its other keys: Gemini CLI's
/// timeout is in milliseconds, and it names its hooks).
pub fn install_hook(settings: &mut Value, hook: &Value, events: &[(&str, Option<&str>)]) -> bool {
    let command = hook.get("command").and_then(Value::as_str).unwrap_or_default();
    let Some(root) = settings.as_object_mut() else { return false };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    if !hooks.is_object() {
        *hooks = json!({});
    }
    let hooks = hooks.as_object_mut().expect("made an object above");
    let mut changed = false;
    for (event, matcher) in events {
        let groups = hooks.entry(*event).or_insert_with(|| json!([]));
        if !groups.is_array() {
            *groups = json!([]);
        }
        let groups = groups.as_array_mut().expect("made an array above");
        let mut found = false;
        for group in groups.iter_mut() {
            for h in group.get_mut("hooks").and_then(Value::as_array_mut).into_iter().flatten() {
                if h.get("command").and_then(Value::as_str).is_some_and(is_ours) {
                    found = true;
                    if h.get("command").and_then(Value::as_str) != Some(command) {
                        h["command"] = json!(command);
                        changed = true;
                    }
                }
            }
        }
        if !found {
            let mut group = Map::new();
            if let Some(m) = matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert("hooks".into(), json!([hook]));
            groups.push(Value::Object(group));
            changed = true;
        }
    }
    changed
}

/// Removes ccmem's entries (and the groups and events they leave empty); returns whether
/// anything changed.
pub fn uninstall(settings: &mut Value) -> bool {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return false };
    let mut changed = false;
    for groups in hooks.values_mut() {
        let Some(groups) = groups.as_array_mut() else { continue };
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let n = list.len();
                list.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_ours));
                changed |= list.len() != n;
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
    }
    hooks.retain(|_, g| g.as_array().is_none_or(|a| !a.is_empty()));
    if changed && hooks.is_empty() {
        if let Some(root) = settings.as_object_mut() {
            root.remove("hooks");
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_merges_is_idempotent_and_uninstall_removes_only_ours() {
        let mut s = json!({
            "model": "opus",
            "hooks": {
                "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh", "timeout": 10}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            },
            "permissions": {"allow": ["Bash(ls)"]}
        });
        let original = s.clone();
        assert!(install(&mut s, "/usr/bin/ccmemctl hook", EVENTS));
        let once = s.clone();
        assert!(!install(&mut s, "/usr/bin/ccmemctl hook", EVENTS), "twice changes nothing");
        assert_eq!(s, once);
        assert_eq!(s["model"], "opus");
        assert_eq!(s["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "lint.sh");
        assert_eq!(s["hooks"]["PostToolUse"][1]["hooks"][0]["command"], "/usr/bin/ccmemctl hook");
        // The user's own hook on an event ccmem also hooks stays, first.
        assert_eq!(s["hooks"]["Notification"][0], original["hooks"]["Notification"][0]);
        assert_eq!(s["hooks"]["Notification"].as_array().map(Vec::len), Some(2));
        for (e, _) in EVENTS {
            assert!(s["hooks"][e].to_string().contains("ccmemctl hook"), "{e}");
        }
        // A moved binary: the command is updated in place, not duplicated.
        assert!(install(&mut s, "/opt/ccmemctl hook", EVENTS));
        assert_eq!(s.to_string().matches("ccmemctl hook").count(), EVENTS.len());
        assert!(uninstall(&mut s));
        assert_eq!(s, original, "uninstall leaves exactly what was there");
        assert!(!uninstall(&mut s));
        // Into nothing and out again: nothing left, not `{"hooks": {}}`.
        let mut empty = json!({});
        install(&mut empty, "ccmemctl hook", EVENTS);
        assert!(uninstall(&mut empty));
        assert_eq!(empty, json!({}));
        // A `"hooks": {}` of the user's own stays.
        let mut theirs = json!({"hooks": {}});
        assert!(!uninstall(&mut theirs));
        assert_eq!(theirs, json!({"hooks": {}}));
    }

    #[test]
    fn the_plugin_hooks_match_the_installer() {
        let plugin: Value = serde_json::from_str(include_str!("../../plugin/hooks/hooks.json")).unwrap();
        let mut installed = json!({});
        install(&mut installed, "ccmemctl hook", EVENTS);
        assert_eq!(plugin, installed);
        let manifest: Value = serde_json::from_str(include_str!("../../plugin/.claude-plugin/plugin.json")).unwrap();
        assert_eq!(manifest["name"], "ccmem");
        assert_eq!(manifest["version"], ccmem_proto::VERSION);
    }

    #[test]
    fn hook_commands_survive_the_agents_shells() {
        let unix = |p: &str| hook_command(p, None).unwrap();
        assert_eq!(unix("/home/a/.cargo/bin/ccmemctl"), "/home/a/.cargo/bin/ccmemctl hook");
        assert_eq!(unix("/opt/my tools/ccmemctl"), "'/opt/my tools/ccmemctl' hook");
        assert_eq!(unix("/opt/it's/ccmemctl"), r"'/opt/it'\''s/ccmemctl' hook");
        // Every character `sh` reads specially is quoted (tests/hooks.rs runs them in `sh`).
        for c in ["&", ";", "$", "|", "`", "(", ")", "<", ">", "\\", "*", "?", "[", "~", "#", "!", "{", "\n", "\t"] {
            let cmd = unix(&format!("/opt/a{c}b/ccmemctl"));
            assert!(cmd.starts_with('\'') && cmd.ends_with("' hook"), "{c:?}: {cmd}");
        }
        // Windows: Git Bash would read `\U` as an escape; `/` works in bash, cmd and PowerShell.
        let bash = |p: &str| hook_command(p, Some(WindowsShell::BashOrCmd));
        let plain = bash(r"C:\Users\Me\.cargo\bin\ccmemctl.exe").unwrap();
        assert_eq!(plain, "C:/Users/Me/.cargo/bin/ccmemctl.exe hook");
        let spaced = bash(r"C:\Program Files\ccmem\ccmemctl.exe").unwrap();
        assert_eq!(spaced, r#""C:/Program Files/ccmem/ccmemctl.exe" hook"#);
        let amp = bash(r"C:\R&D;(x)\ccmemctl.exe").unwrap();
        assert_eq!(amp, r#""C:/R&D;(x)/ccmemctl.exe" hook"#, "cmd and bash read & ; ( ) literally in quotes");
        for bad in [
            r"C:\$x\ccmemctl.exe",
            r"C:\50%off%\ccmemctl.exe",
            r"C:\a`b\ccmemctl.exe",
            r"C:\Hi!\ccmemctl.exe",
            "C:\\a\nb",
        ] {
            let e = bash(bad).unwrap_err();
            assert!(e.contains("install ccmem in a directory without it"), "{e}");
        }
        // PowerShell: a quoted path is a string, not a command, without `&`; inside single
        // quotes nothing is read but the quote characters themselves, doubled.
        let pwsh = |p: &str| hook_command(p, Some(WindowsShell::PowerShell));
        assert_eq!(pwsh(r"C:\Users\Me\ccmemctl.exe").unwrap(), "C:/Users/Me/ccmemctl.exe hook");
        let ps_spaced = pwsh(r"C:\Program Files\ccmem\ccmemctl.exe").unwrap();
        assert_eq!(ps_spaced, "& 'C:/Program Files/ccmem/ccmemctl.exe' hook");
        assert_eq!(pwsh(r"C:\$x;`a%b!\ccmemctl.exe").unwrap(), "& 'C:/$x;`a%b!/ccmemctl.exe' hook");
        assert_eq!(pwsh("C:\\O'Neil’s\\ccmemctl.exe").unwrap(), "& 'C:/O''Neil’’s/ccmemctl.exe' hook");
        for c in [",", "@", "=", "%", "+", "(", "&", "{", "#", "[", "<", "|"] {
            let cmd = pwsh(&format!(r"C:\a{c}b\ccmemctl.exe")).unwrap();
            assert!(cmd.starts_with("& '"), "{c:?}: {cmd}");
        }
        assert!(pwsh("C:\\a\rb\\ccmemctl.exe").is_err());
        assert!(is_ours(&ps_spaced));
        assert!(is_ours(&plain) && is_ours(&spaced));
    }

    #[test]
    fn key_order_is_kept() {
        let mut s: Value = serde_json::from_str(r#"{"z": 1, "a": 2, "m": {"y": 1, "b": 2}}"#).unwrap();
        install(&mut s, "ccmemctl hook", EVENTS);
        let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m", "hooks"]);
    }
}
