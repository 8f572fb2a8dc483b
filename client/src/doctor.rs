//! `ccmemctl doctor`: checks the installation and says, for each check that fails, how to
//! fix it. Never starts the daemon.

use crate::call::HELLO_TIMEOUT;
use crate::conn::{Conn, IO_TIMEOUT};
use ccmem_proto::wire::api::{method, Hello, HelloReply};
use ccmem_proto::wire::paths;
use serde::Serialize;
use std::path::Path;

/// One check's outcome.
#[derive(Debug, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// ok, warn or fail.
    pub status: &'static str,
    /// What was found.
    pub detail: String,
    /// How to fix it, when it is not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn ok(name: &'static str, detail: impl Into<String>) -> Check {
    Check { name, status: "ok", detail: detail.into(), fix: None }
}

fn bad(name: &'static str, status: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    Check { name, status, detail: detail.into(), fix: Some(fix.into()) }
}

/// Runs every check and prints them; fails (exit 1) when one fails.
pub fn run(socket: &Path, json: bool) -> Result<(), crate::Error> {
    let mut checks = checks(socket);
    // Details name paths (the current directory's among them): no escape sequence in them.
    for c in &mut checks {
        c.detail = ccmem_proto::printable::text(&c.detail).into_owned();
    }
    if json {
        crate::output::print_json(&checks);
    } else {
        let colour = colour_wanted();
        for c in &checks {
            let (mark, sgr) = match c.status {
                "ok" => ("✓", "32"),
                "warn" => ("!", "33"),
                _ => ("✗", "31"),
            };
            let mark = if colour { format!("\x1b[1;{sgr}m{mark}\x1b[0m") } else { mark.to_string() };
            println!("{mark} {}: {}", c.name, c.detail);
            if let Some(f) = &c.fix {
                println!("    fix: {f}");
            }
        }
    }
    if checks.iter().any(|c| c.status == "fail") {
        Err(crate::Error::Quiet)
    } else {
        Ok(())
    }
}

/// Colour for the marks: on a terminal, unless `NO_COLOR` is set (no-color.org) or the
/// terminal is `dumb`.
fn colour_wanted() -> bool {
    use std::io::IsTerminal;
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    // The Windows console shows escape sequences as text unless told otherwise; Windows
    // Terminal reads them.
    let reads_escapes = cfg!(unix) || set("WT_SESSION");
    reads_escapes
        && std::io::stdout().is_terminal()
        && !set("NO_COLOR")
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Every check, in order.
pub fn checks(socket: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let peer = daemon(socket, &mut out);
    config(socket, peer.is_some(), &mut out);
    let refused = peer.is_some() && project(socket, &mut out);
    #[cfg(unix)]
    permissions(socket, &mut out);
    service(&mut out);
    hooks(&mut out);
    codex_hooks(&mut out);
    gemini_hooks(&mut out);
    agent_plugin(&mut out, &crate::install::plugin_file::OPENCODE, "opencode", "opencode plugin");
    agent_plugin(&mut out, &crate::install::plugin_file::PI, "pi", "pi extension");
    copilot_hooks(&mut out);
    cursor_hooks(&mut out);
    #[cfg(target_os = "linux")]
    inotify(peer.as_ref().map(|p| p.pid), &mut out);
    let _ = &peer;
    git(&mut out);
    mcp(&mut out);
    dirs(&mut out, !refused);
    out
}

/// Whether the current directory can be a project, as the running daemon sees it; true when
/// it is refused (the filesystem root, the home directory, a system tree).
fn project(socket: &Path, out: &mut Vec<Check>) -> bool {
    const NAME: &str = "project";
    let Ok(cwd) = std::env::current_dir() else { return false };
    let Ok(mut conn) = Conn::connect_within(socket, HELLO_TIMEOUT) else { return false };
    if conn.hello().is_err() || conn.set_timeout(IO_TIMEOUT).is_err() {
        return false;
    }
    let params = ccmem_proto::wire::api::StatusParams { path: Some(cwd.clone()) };
    let Ok(st) = conn.call::<_, ccmem_proto::wire::api::StatusReply>(method::STATUS, &params) else { return false };
    let warnings = st.project.map(|p| p.warnings).unwrap_or_default();
    if let Some(capped) = warnings.iter().find(|w| w.contains("changes past that are not tracked")) {
        out.push(bad(
            "project size",
            "warn",
            capped.clone(),
            "add the big trees to `watch.ignore` in .claude/ccmem.toml",
        ));
    }
    if let Some(blind) = warnings.iter().find(|w| w.contains("cannot watch files")) {
        out.push(bad(
            "project watch",
            "fail",
            blind.clone(),
            "free or raise the limit the message names, then `ccmemctl unwatch` and `ccmemctl watch` the project",
        ));
    }
    // Watches refused by the kernel's limit (another program may hold most of them): the
    // project is polled, whatever ccmemd's own count of watches says.
    if let Some(limit) = warnings.iter().find(|w| w.contains("file-watch limit is reached")) {
        out.push(bad(
            "project watch",
            "warn",
            limit.clone(),
            "`sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it)",
        ));
    }
    if let Some(deep) = warnings.iter().find(|w| w.contains("could not be watched or read")) {
        out.push(bad(
            "project watch",
            "warn",
            deep.clone(),
            "shorten the deep directory chains, or add them to `watch.ignore` in .claude/ccmem.toml",
        ));
    }
    match warnings.into_iter().find(|w| w.contains("is not a project")) {
        Some(why) => {
            out.push(bad(
                NAME,
                "warn",
                why,
                "start the agent in a git repository or a directory of your own: hooks here record nothing",
            ));
            true
        }
        None => {
            out.push(ok(NAME, format!("{} can be tracked", cwd.display())));
            false
        }
    }
}

/// The configuration file, read as the daemon reads it: by the running daemon (which also
/// says whether the file changed since into something a restart would stop on), else by
/// `ccmemd --check-config`. A broken file stops the daemon from starting.
fn config(socket: &Path, running: bool, out: &mut Vec<Check>) {
    const NAME: &str = "configuration";
    let checked = if running { by_the_daemon(socket) } else { by_ccmemd() };
    match checked {
        Some(Ok(file)) => out.push(ok(NAME, file)),
        Some(Err(why)) => {
            let fix = if running {
                "correct the file, then `ccmemctl config reload` (until then the daemon keeps the configuration it read last)"
            } else {
                "correct it: ccmemd cannot start until then"
            };
            // A daemon that is not running cannot be started with it: not "nothing to do".
            if let Some(d) = out.iter_mut().find(|c| c.name == "daemon" && c.status == "warn") {
                d.status = "fail";
                d.fix = Some("it cannot start until the configuration is corrected (below)".into());
            }
            out.push(bad(NAME, "fail", why, fix));
        }
        None => {}
    }
}

/// The running daemon's word on its configuration file: its name, or what is wrong with it
/// (the knowledge memories' `config.json` included).
fn by_the_daemon(socket: &Path) -> Option<Result<String, String>> {
    let mut conn = Conn::connect_within(socket, HELLO_TIMEOUT).ok()?;
    conn.hello().ok()?;
    conn.set_timeout(IO_TIMEOUT).ok()?;
    let r: ccmem_proto::wire::api::ConfigReply =
        conn.call(method::CONFIG_SHOW, &ccmem_proto::wire::api::ConfigParams::default()).ok()?;
    Some(match (r.problem, r.memory_problem) {
        (Some(p), _) => Err(p),
        (None, Some(m)) => Err(format!("the knowledge memories' config.json is refused (memory commands fail): {m}")),
        (None, None) => Ok(file_state(&r.file)),
    })
}

/// `ccmemd --check-config`, within a few seconds: the file's name, or the daemon's error.
fn by_ccmemd() -> Option<Result<String, String>> {
    let exe = crate::autostart::find_daemon()?;
    let mut child = std::process::Command::new(exe)
        .arg("--check-config")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    fn read(r: Option<impl std::io::Read>) -> String {
        use std::io::Read;
        let mut text = String::new();
        if let Some(r) = r {
            let _ = r.take(64 << 10).read_to_string(&mut text);
        }
        text.trim().to_string()
    }
    let said = read(child.stdout.take());
    let err = read(child.stderr.take());
    // Its error: the marked reason of a failed start (a bad `CCMEM_*` variable gives clap's
    // usage text around it), else its first line.
    let reason = err.lines().rev().find_map(|l| l.strip_prefix(paths::START_FAILURE)).map(str::to_string);
    let first = || err.lines().next().unwrap_or_default().trim_start_matches("ccmemd: ").to_string();
    Some(if status.success() { Ok(said) } else { Err(reason.unwrap_or_else(first)) })
}

/// "FILE is good", or that there is none.
fn file_state(file: &Path) -> String {
    if file.exists() {
        format!("{} is good", file.display())
    } else {
        format!("{} does not exist: the defaults apply", file.display())
    }
}

fn mcp(out: &mut Vec<Check>) {
    match crate::autostart::find_program("ccmem-mcp") {
        Some(p) => out.push(ok("MCP server", format!("{} (`ccmemctl mcp`)", p.display()))),
        None => out.push(bad(
            "MCP server",
            "warn",
            "ccmem-mcp is not beside ccmemctl or on PATH: `ccmemctl mcp` cannot start",
            "install ccmem again: `npm i -g ccmem`, or `cargo install --locked --path .` (both install ccmemd, ccmemctl and ccmem-mcp)",
        )),
    }
}

fn daemon(socket: &Path, out: &mut Vec<Check>) -> Option<HelloReply> {
    const NAME: &str = "daemon";
    let mut conn = match Conn::connect_within(socket, HELLO_TIMEOUT) {
        Ok(c) => c,
        Err(e) if !crate::autostart::is_absent(&e) => {
            // Not "nobody is there": nobody can be (a socket path too long for the system,
            // a directory that cannot be entered).
            out.push(bad(
                NAME,
                "fail",
                format!("cannot connect to {}: {e}", socket.display()),
                "set CCMEM_SOCKET (or --socket) to a short path in a directory of your own",
            ));
            return None;
        }
        Err(e) => {
            // Auto-start needs ccmemd beside ccmemctl or on PATH.
            out.push(match crate::autostart::find_daemon() {
                Some(_) => bad(
                    NAME,
                    "warn",
                    format!("not running at {} ({e})", socket.display()),
                    "nothing to do if you use auto-start (any ccmemctl command starts it); or `ccmemctl service install`",
                ),
                None => bad(
                    NAME,
                    "fail",
                    format!("not running at {} ({e}), and ccmemd is neither beside ccmemctl nor on PATH", socket.display()),
                    "install ccmem again: `npm i -g ccmem`, or `cargo install --locked --path .`",
                ),
            });
            return None;
        }
    };
    let hello = Hello {
        client: "ccmemctl doctor".into(),
        version: ccmem_proto::VERSION.into(),
        protocol: ccmem_proto::PROTOCOL_VERSION,
    };
    match conn.call::<_, HelloReply>(method::HELLO, &hello) {
        Ok(r) if r.daemon_version == ccmem_proto::VERSION && r.compatible => {
            out.push(ok(NAME, format!("ccmemd {} (pid {}) answers at {}", r.daemon_version, r.pid, socket.display())));
            Some(r)
        }
        Ok(r) => {
            out.push(bad(
                NAME,
                "fail",
                format!("ccmemd {} (pid {}) runs; this ccmemctl is {}", r.daemon_version, r.pid, ccmem_proto::VERSION),
                "restart it on the new version: `ccmemctl shutdown` (the next command starts the new one)",
            ));
            Some(r)
        }
        Err(e) => {
            out.push(bad(
                NAME,
                "fail",
                format!("{} does not answer: {e:?}", socket.display()),
                "a stopped ccmemd (`kill -STOP`, a debugger) answers after `kill -CONT <pid>`; a hung one: end it (`kill <pid>`), then any command starts it again; see ccmemd.log in the state dir",
            ));
            None
        }
    }
}

#[cfg(unix)]
fn permissions(socket: &Path, out: &mut Vec<Check>) {
    use std::os::unix::fs::MetadataExt;
    const NAME: &str = "socket permissions";
    let me = paths::euid();
    let mut problems = Vec::new();
    if let Some(dir) = paths::socket_dir(socket) {
        match std::fs::metadata(dir) {
            Ok(m) if m.uid() != me => problems.push(format!("{} belongs to uid {}", dir.display(), m.uid())),
            Ok(m) if m.mode() & 0o077 != 0 => {
                problems.push(format!("{} is mode {:o}, not 0700", dir.display(), m.mode() & 0o777))
            }
            Ok(_) => {}
            Err(_) => {}
        }
    }
    match std::fs::symlink_metadata(socket) {
        Ok(m) if m.uid() != me => problems.push(format!("{} belongs to uid {}", socket.display(), m.uid())),
        Ok(m) if m.mode() & 0o077 != 0 => {
            problems.push(format!("{} is mode {:o}, not 0600", socket.display(), m.mode() & 0o777))
        }
        _ => {}
    }
    if let Some(moved) = paths::default_socket_moved() {
        out.push(bad(
            "socket directory",
            "warn",
            moved,
            "remove the shared directory if it is stale, or set XDG_RUNTIME_DIR to a private directory of yours",
        ));
    }
    if problems.is_empty() {
        out.push(ok(NAME, "directory 0700, socket 0600, both yours"));
    } else {
        out.push(bad(
            NAME,
            "fail",
            problems.join("; "),
            format!("`chmod 700 {}` and restart ccmemd", paths::socket_dir(socket).unwrap_or(socket).display()),
        ));
    }
}

/// The user service (systemd units, launchd agent or Task Scheduler task, as the platform
/// has): installed? starting an existing ccmemd of this version? enabled, as its manager sees
/// it?
fn service(out: &mut Vec<Check>) {
    const NAME: &str = "user service";
    let Some(b) = directories::BaseDirs::new() else { return };
    let st = crate::service::status(b.home_dir(), b.config_dir());
    let warnings: Vec<&str> = st.files.iter().flat_map(|f| &f.warnings).map(String::as_str).collect();
    let state = st.manager_lines().join("; ");
    if !st.installed() {
        out.push(bad(
            NAME,
            "warn",
            "not installed (ccmemctl starts ccmemd on demand)",
            "`ccmemctl service install` to have it started at login",
        ));
    } else if !warnings.is_empty() {
        out.push(bad(
            NAME,
            "fail",
            warnings.join("; "),
            "`ccmemctl service install` (it points the service at the ccmemd beside this ccmemctl)",
        ));
    } else if st.manager == "none" {
        out.push(bad(
            NAME,
            "warn",
            format!("installed, but {state}"),
            "`ccmemctl service install` again where the service manager answers",
        ));
    } else if st.enabled() {
        out.push(ok(NAME, format!("installed and enabled ({state})")));
    } else {
        out.push(bad(
            NAME,
            "warn",
            format!("installed, not enabled ({state})"),
            "`ccmemctl service install` (it enables and starts it)",
        ));
    }
}

fn hooks(out: &mut Vec<Check>) {
    const NAME: &str = "agent hooks";
    let Some(b) = directories::BaseDirs::new() else { return };
    let user = b.home_dir().join(".claude/settings.json");
    // `hooks install --project`'s file: the repository's, from any directory in it.
    let project = crate::install::settings_path(true).ok().map(|(_, p)| p);
    let project_settings = project.clone();
    let read = |p: &std::path::Path| -> Option<serde_json::Value> {
        serde_json::from_slice(&ccmem_proto::files::untrusted::read(p, 16 << 20).ok()?).ok()
    };
    // The plugin brings the same hooks.
    let plugin = crate::install::plugin_enabled([Some(user.clone()), project.clone()].into_iter().flatten());
    let all: Vec<_> = [Some(user.clone()), project]
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let v = read(&p)?;
            // Ours however the path is written: quoted (a space in it), or `ccmemctl.exe`.
            let ours = |groups: &serde_json::Value| event_commands(groups).any(crate::install::is_ours);
            let hooks = v.get("hooks").filter(|h| h.as_object().is_some_and(|o| o.values().any(ours)))?;
            let missing: Vec<&str> =
                crate::install::EVENTS.iter().map(|(e, _)| *e).filter(|e| !hooks.get(*e).is_some_and(ours)).collect();
            // The programs the hooks run: one that is gone (a `cargo clean`, a move) breaks
            // every hook silently, as the agent ignores a failing hook.
            let (mut gone, mut slow, mut theirs): (Vec<String>, Vec<String>, Vec<String>) = Default::default();
            // A repository's settings can run a program of the repository's own under
            // ccmemctl's name (`./tools/ccmemctl hook`): not ccmem, whatever it says.
            let repo_root = p.parent().and_then(std::path::Path::parent).filter(|_| Some(&p) != Some(&user));
            for cmd in commands(hooks).filter(|c| crate::install::is_ours(c)) {
                let program = cmd.trim().trim_end_matches(" hook").trim().trim_matches(['\'', '"']).to_string();
                let path = std::path::Path::new(&program);
                let relative = !path.is_absolute() && program.contains(['/', '\\']);
                if relative || repo_root.is_some_and(|r| path.starts_with(r)) {
                    if !theirs.contains(&program) {
                        theirs.push(program);
                    }
                    continue;
                }
                let list = match hook_program(&program) {
                    HookProgram::Missing => &mut gone,
                    HookProgram::Node(_) => &mut slow,
                    HookProgram::Native(_) => continue,
                };
                if !list.contains(&program) {
                    list.push(program);
                }
            }
            Some((p, missing, gone, slow, theirs))
        })
        .collect();
    // The user's file first, but a repository's that runs a program of its own is said
    // whatever the user's holds.
    let found = all.iter().find(|f| !f.4.is_empty()).or(all.first()).cloned();
    match (&plugin, &found) {
        (Some((p, id)), Some((settings, ..))) => {
            return out.push(bad(
                NAME,
                "warn",
                format!(
                "the plugin {id} (enabled in {}) and the hooks in {} both run: every event runs twice (counted once)",
                p.display(),
                settings.display()
            ),
                if Some(settings) == project_settings.as_ref() {
                    "keep one: `ccmemctl hooks uninstall --project`, or `claude plugin uninstall ccmem`"
                } else {
                    "keep one: `ccmemctl hooks uninstall`, or `claude plugin uninstall ccmem`"
                },
            ))
        }
        (Some((p, id)), None) => return out.push(plugin_hooks(p, id)),
        _ => {}
    }
    match found {
        Some((p, _, _, _, theirs)) if !theirs.is_empty() => out.push(bad(
            NAME,
            "warn",
            format!(
                "{} runs {}, a program of the repository's (or of a relative path), not an installed ccmemctl",
                p.display(),
                theirs.join(", ")
            ),
            "look at what it is; `ccmemctl hooks install` writes this ccmemctl's own path",
        )),
        Some((p, _, gone, ..)) if !gone.is_empty() => out.push(bad(
            NAME,
            "fail",
            format!("{} runs {}, which cannot be found", p.display(), gone.join(", ")),
            "`ccmemctl hooks install` again (it writes this ccmemctl's path)",
        )),
        Some((p, _, _, slow, _)) if !slow.is_empty() => out.push(bad(
            NAME,
            "warn",
            format!(
                "{} runs {}, a script that starts node: every event costs node's start-up (about 100 ms)",
                p.display(),
                slow.join(", ")
            ),
            "`ccmemctl hooks install` again (it writes the native ccmemctl's path)",
        )),
        Some((p, missing, ..)) if missing.is_empty() => {
            out.push(ok(NAME, format!("all events hooked in {}", p.display())))
        }
        Some((p, missing, ..)) => out.push(bad(
            NAME,
            "warn",
            format!("{} lacks {}", p.display(), missing.join(", ")),
            "`ccmemctl hooks install`",
        )),
        None => out.push(bad(
            NAME,
            "warn",
            format!("not installed in {}", user.display()),
            "`ccmemctl hooks install` (or `--project`)",
        )),
    }
}

/// Every hook command in a settings file's `hooks` object.
/// Codex's hooks: in place and trusted (Codex skips an untrusted hook without a word), when
/// Codex is on PATH or its hooks are installed.
fn codex_hooks(out: &mut Vec<Check>) {
    const NAME: &str = "codex hooks";
    let on_path = !matches!(hook_program("codex"), HookProgram::Missing);
    match crate::install::codex::status() {
        Err(e) => out.push(bad(NAME, "warn", e, "fix the file, then `ccmemctl hooks install --agent codex`")),
        Ok((false, _)) if on_path => out.push(bad(
            NAME,
            "warn",
            "Codex is installed but ccmem's hooks are not: its sessions are not remembered",
            "`ccmemctl hooks install --agent codex`",
        )),
        Ok((false, _)) => {}
        Ok((true, untrusted)) if !untrusted.is_empty() => out.push(bad(
            NAME,
            "fail",
            format!(
                "{} of ccmem's Codex hooks are not trusted (changed since, or never trusted): Codex skips them silently",
                untrusted.len()
            ),
            "`ccmemctl hooks install --agent codex` (it trusts them as Codex's /hooks does)",
        )),
        Ok((true, _)) => out.push(ok(NAME, "installed and trusted")),
    }
}

/// Gemini CLI's hooks: in place and not switched off in its settings, when Gemini CLI is on
/// PATH or its hooks are installed. They run only in folders the user trusts in Gemini CLI.
fn gemini_hooks(out: &mut Vec<Check>) {
    const NAME: &str = "gemini hooks";
    let on_path = !matches!(hook_program("gemini"), HookProgram::Missing);
    match crate::install::gemini::status() {
        Err(e) => out.push(bad(NAME, "warn", e, "fix the file, then `ccmemctl hooks install --agent gemini`")),
        Ok((false, _)) if on_path => out.push(bad(
            NAME,
            "warn",
            "Gemini CLI is installed but ccmem's hooks are not (all of them): its sessions are not remembered",
            "`ccmemctl hooks install --agent gemini`",
        )),
        Ok((false, _)) => {}
        Ok((true, Some(off))) => {
            out.push(bad(NAME, "fail", off, "remove that setting, or `ccmemctl hooks uninstall --agent gemini`"))
        }
        Ok((true, None)) => out.push(ok(NAME, "installed (Gemini CLI runs them in the folders you trust)")),
    }
}

/// Copilot CLI's hooks file: in place and running this `ccmemctl`, when Copilot CLI is on
/// PATH or the file is there.
fn copilot_hooks(out: &mut Vec<Check>) {
    const NAME: &str = "copilot hooks";
    let fix = "`ccmemctl hooks install --agent copilot`";
    let on_path = !matches!(hook_program("copilot"), HookProgram::Missing);
    match crate::install::copilot::status() {
        Err(e) => out.push(bad(NAME, "warn", e, format!("fix or move the file, then {fix}"))),
        Ok(None) if on_path => out.push(bad(
            NAME,
            "warn",
            "GitHub Copilot CLI is installed but ccmem's hooks are not: its sessions are not remembered",
            fix,
        )),
        Ok(None) => {}
        Ok(Some(false)) => out.push(bad(NAME, "warn", "written by another ccmemctl or another version", fix)),
        Ok(Some(true)) => out.push(ok(NAME, "installed")),
    }
}

/// Cursor's hooks (written from its documentation, untested): in place, when `cursor-agent`
/// is on PATH or `~/.cursor` is there.
fn cursor_hooks(out: &mut Vec<Check>) {
    const NAME: &str = "cursor hooks";
    let there = !matches!(hook_program("cursor-agent"), HookProgram::Missing)
        || crate::install::cursor::path().is_ok_and(|p| p.parent().is_some_and(Path::is_dir));
    match crate::install::cursor::status() {
        Err(e) => out.push(bad(NAME, "warn", e, "fix the file, then `ccmemctl hooks install --agent cursor`")),
        Ok(false) if there => out.push(bad(
            NAME,
            "warn",
            "Cursor is here but ccmem's hooks are not (support for Cursor is untested)",
            "`ccmemctl hooks install --agent cursor`",
        )),
        Ok(false) => {}
        Ok(true) => out.push(ok(NAME, "installed (support for Cursor is untested)")),
    }
}

/// OpenCode's plugin or Pi's extension: in place and running this `ccmemctl`, when the agent
/// is on PATH or the file is there.
fn agent_plugin(
    out: &mut Vec<Check>,
    file: &crate::install::plugin_file::PluginFile,
    program: &str,
    name: &'static str,
) {
    let fix = format!("`ccmemctl hooks install --agent {program}`");
    let on_path = !matches!(hook_program(program), HookProgram::Missing);
    let this = std::env::current_exe().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    match file.status(&this) {
        Err(e) => out.push(bad(name, "warn", e, "move it away, then ".to_string() + &fix)),
        Ok(None) if on_path => out.push(bad(
            name,
            "warn",
            format!("{} is installed but ccmem's plugin is not: its sessions are not remembered", file.agent.display()),
            fix,
        )),
        Ok(None) => {}
        Ok(Some(false)) => out.push(bad(
            name,
            "warn",
            "installed by another ccmemctl or another version: it may run a program that is gone",
            format!("{fix} (it writes it again for this one)"),
        )),
        Ok(Some(true)) => out.push(ok(name, "installed")),
    }
}

fn commands(hooks: &serde_json::Value) -> impl Iterator<Item = &str> {
    hooks.as_object().into_iter().flat_map(|o| o.values()).flat_map(event_commands)
}

/// Every hook command of one event's groups (`[{"matcher": …, "hooks": [{"command": …}]}]`).
fn event_commands(groups: &serde_json::Value) -> impl Iterator<Item = &str> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(serde_json::Value::as_str))
}

/// The check of hooks that come from the plugin (`client/plugin/hooks/hooks.json`), which run
/// `ccmemctl` by name: Claude Code finds it on PATH, as this does.
fn plugin_hooks(settings: &Path, id: &str) -> Check {
    const NAME: &str = "agent hooks";
    let here = format!("the plugin {id} is enabled in {}", settings.display());
    match hook_program("ccmemctl") {
        HookProgram::Native(p) => ok(NAME, format!("{here}; its hooks run {}", p.display())),
        HookProgram::Node(p) => bad(
            NAME,
            "warn",
            format!(
                "{here}; its hooks run {}, a script that starts node: every event costs node's start-up (about 100 ms)",
                p.display()
            ),
            if cfg!(windows) {
                "npm's shims on Windows always start node: `ccmemctl hooks install` writes the native ccmemctl's path \
                 (then `claude plugin disable ccmem`, or keep both: each event is counted once)"
            } else {
                "`npm rebuild -g ccmem` (its install script, which did not run, puts the native programs in place \
                 of the node stand-ins; pnpm: `pnpm approve-builds -g`), or `ccmemctl hooks install`"
            },
        ),
        HookProgram::Missing => bad(
            NAME,
            "fail",
            format!("{here}, but its hooks run `ccmemctl` from PATH, and there is none: every event is lost"),
            "put ccmem's programs on PATH: `npm i -g ccmem`, or `cargo install --locked --path .`",
        ),
    }
}

/// What a hook command's program is.
enum HookProgram {
    /// Not found, or not something that can be run.
    Missing,
    /// A script that starts node (npm's shims and ccmem's own stand-ins before their first
    /// run): it works, at node's start-up cost on every event.
    Node(std::path::PathBuf),
    /// Anything else that can be run.
    Native(std::path::PathBuf),
}

/// Finds `program` (a path, or a name looked up on PATH, as the agent's shell would) and
/// says what it is.
fn hook_program(program: &str) -> HookProgram {
    let is_exe = crate::autostart::is_executable;
    let found = if program.contains('/') || program.contains('\\') {
        Some(std::path::PathBuf::from(program)).filter(|p| is_exe(p))
    } else {
        // Git Bash, which runs Claude Code's hooks on Windows, takes the bare name first.
        let names: Vec<String> = if cfg!(windows) {
            vec![program.to_string(), format!("{program}.exe"), format!("{program}.cmd")]
        } else {
            vec![program.to_string()]
        };
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path).flat_map(|d| names.iter().map(move |n| d.join(n))).find(|p| is_exe(p))
        })
    };
    match found {
        None => HookProgram::Missing,
        Some(p) if starts_node(&p) => HookProgram::Node(p),
        Some(p) => HookProgram::Native(p),
    }
}

/// Whether the file is a script that starts node: a `#!` line naming node, or a shell or
/// cmd script (npm's shims) that runs it. Its first 1 KiB decides.
fn starts_node(p: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(1024);
    let Ok(f) = std::fs::File::open(p) else { return false };
    if f.take(1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let script = head.starts_with(b"#!") || head.starts_with(b"@") || head.starts_with(b":");
    let text = String::from_utf8_lossy(&head);
    script
        && text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_')).any(|w| w == "node" || w == "node.exe")
}

#[cfg(target_os = "linux")]
fn inotify(pid: Option<u32>, out: &mut Vec<Check>) {
    const NAME: &str = "inotify watches";
    const FIX: &str = "`sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it)";
    let limit: Option<u64> =
        std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches").ok().and_then(|t| t.trim().parse().ok());
    // The limit is the user's, shared by every program of theirs (editors, language
    // servers, other watchers): ccmemd's share alone says nothing of what is left.
    let holders = user_watches();
    let total: u64 = holders.iter().map(|(_, _, n)| n).sum();
    let mine = pid.map(|p| holders.iter().find(|(q, _, _)| *q == p).map_or(0, |(_, _, n)| *n));
    let ours = match mine {
        Some(u) => format!("ccmemd uses {u}"),
        None => "ccmemd's use is unknown (the daemon did not answer)".to_string(),
    };
    match limit {
        Some(l) if total * 10 >= l * 8 => {
            let most = holders
                .iter()
                .filter(|(p, _, _)| Some(*p) != pid)
                .take(3)
                .map(|(p, comm, n)| format!("{comm} (pid {p}) {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            let others = if most.is_empty() { String::new() } else { format!("; the most: {most}") };
            out.push(bad(
                NAME,
                "warn",
                format!("this user's programs hold {total} of the {l} allowed ({ours}{others}); beyond it ccmemd polls directories"),
                FIX,
            ))
        }
        // The kernel's limit; ccmemd's own (`--max-watches`) is the project watch line's.
        Some(l) => {
            out.push(ok(NAME, format!("{ours}; this user's programs hold {total} of the {l} the kernel allows")))
        }
        None => out.push(bad(NAME, "warn", "cannot read fs.inotify.max_user_watches", "check that /proc is mounted")),
    }
}

/// The inotify watches each of this user's processes holds (pid, name, count), the most
/// first; those it cannot read (another user's) are not counted.
#[cfg(target_os = "linux")]
fn user_watches() -> Vec<(u32, String, u64)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else { return Vec::new() };
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if std::fs::metadata(e.path()).map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let watches: u64 = std::fs::read_dir(e.path().join("fdinfo"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|f| {
                std::fs::read_to_string(f.path())
                    .unwrap_or_default()
                    .lines()
                    .filter(|l| l.starts_with("inotify wd:"))
                    .count() as u64
            })
            .sum();
        if watches > 0 {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default().trim().to_string();
            out.push((pid, comm, watches));
        }
    }
    out.sort_by_key(|w| std::cmp::Reverse(w.2));
    out
}

fn git(out: &mut Vec<Check>) {
    match std::process::Command::new("git").arg("--version").output() {
        Ok(o) if o.status.success() => out.push(ok("git", String::from_utf8_lossy(&o.stdout).trim().to_string())),
        _ => out.push(bad("git", "warn", "not found: branch, commits and line counts are left out", "install git")),
    }
}

fn dirs(out: &mut Vec<Check>, project: bool) {
    let mut targets: Vec<(&'static str, std::path::PathBuf)> = Vec::new();
    if let Ok(d) = paths::state_dir() {
        targets.push(("state directory", d));
    }
    // Never a probe in a directory that is not a project (`~/.claude` is Claude Code's own).
    if let Some(cwd) = std::env::current_dir().ok().filter(|_| project) {
        let root = std::process::Command::new("git")
            .args(["rev-parse", "--show-toplevel"])
            .current_dir(&cwd)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .unwrap_or(cwd);
        targets.push(("project directory", root.join(".claude")));
    }
    for (name, dir) in targets {
        let probe = dir.join(format!(".ccmem-doctor-{}", std::process::id()));
        let made_dir = !dir.exists();
        let r = std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&probe, b"x"))
            .and_then(|_| std::fs::remove_file(&probe));
        if made_dir {
            let _ = std::fs::remove_dir(&dir);
        }
        match r {
            Ok(()) => out.push(ok(name, format!("{} is writable", dir.display()))),
            Err(e) => out.push(bad(
                name,
                "fail",
                format!("{} is not writable: {e}", dir.display()),
                format!("make {} writable by you", dir.display()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real shims (client/tests/fixtures/npm-shims/SOURCES.md) and the stand-in, written
    /// where a hook would find them.
    #[test]
    fn scripts_that_start_node_are_told_from_native_programs() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npm-shims");
        for (file, node) in
            [("node.sh", true), ("node.cmd", true), ("stand-in.js", true), ("native.sh", false), ("native.cmd", false)]
        {
            let p = dir.path().join(file);
            std::fs::copy(fixtures.join(file), &p).unwrap();
            assert_eq!(starts_node(&p), node, "{file}");
        }
        // A native program, and one whose bytes name node only inside.
        let exe = dir.path().join("exe");
        std::fs::write(&exe, b"\x7fELF\x02\x01\x01\0 node /usr/bin/node").unwrap();
        assert!(!starts_node(&exe));
        assert!(!starts_node(&dir.path().join("gone")));
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "paths and modes of Unix")]
    fn a_hook_program_is_found_by_path_or_name() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            let native = dir.path().join("ccmemctl");
            std::fs::write(&native, b"\x7fELF").unwrap();
            std::fs::set_permissions(&native, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert!(matches!(hook_program(native.to_str().unwrap()), HookProgram::Native(_)));
            let shim = dir.path().join("shim");
            std::fs::write(&shim, "#!/usr/bin/env node\nrequire('../lib/run')('ccmemctl');\n").unwrap();
            assert!(matches!(hook_program(shim.to_str().unwrap()), HookProgram::Missing), "not executable");
            std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert!(matches!(hook_program(shim.to_str().unwrap()), HookProgram::Node(_)));
            assert!(matches!(hook_program(&format!("{}/none", dir.path().display())), HookProgram::Missing));
        }
    }
}
