//! `ccmemctl service install | uninstall | start | stop | status`: ccmemd as a user service —
//! systemd user units with socket activation on Linux, a launchd user agent on macOS.
//!
//! The unit files are the ones in the repository's `systemd/` and `launchd/` directories,
//! written with the absolute path of the installed `ccmemd`. Where no user service manager
//! runs (a container, a login without systemd), the files are still written and the client's
//! auto-start keeps covering it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's unit files, as installed (ExecStart rewritten).
pub const SOCKET_UNIT: &str = include_str!("../../systemd/ccmemd.socket");
/// The service unit's template.
pub const SERVICE_UNIT: &str = include_str!("../../systemd/ccmemd.service");
/// The launchd agent's template (`@CCMEMD@`, `@HOME@`).
pub const PLIST: &str = include_str!("../../launchd/dev.ccmem.ccmemd.plist");
/// The launchd label.
pub const LABEL: &str = "dev.ccmem.ccmemd";

/// What `service` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Subcommand)]
pub enum Action {
    /// Write the user service files for the installed ccmemd, enable and start them
    Install,
    /// Stop and disable the service and remove its files
    Uninstall,
    /// Start the service
    Start,
    /// Stop the service
    Stop,
    /// Show whether the service is installed, enabled and running, and whether its files
    /// point at this ccmemd
    Status,
}

/// The service files as they should be for `ccmemd` at `exe`: (path, contents).
pub fn files(home: &Path, config: &Path, exe: &Path) -> Vec<(PathBuf, String)> {
    if cfg!(target_os = "macos") {
        let xml = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let plist =
            PLIST.replace("@CCMEMD@", &xml(&exe.to_string_lossy())).replace("@HOME@", &xml(&home.to_string_lossy()));
        vec![(home.join("Library/LaunchAgents").join(format!("{LABEL}.plist")), plist)]
    } else {
        let dir = config.join("systemd/user");
        vec![(dir.join("ccmemd.socket"), SOCKET_UNIT.to_string()), (dir.join("ccmemd.service"), service_unit(exe))]
    }
}

/// The service unit with `ExecStart` naming `exe` (quoted, as systemd reads it).
pub fn service_unit(exe: &Path) -> String {
    let quoted = format!("\"{}\"", exe.to_string_lossy().replace('\\', "\\\\").replace('"', "\\\""));
    SERVICE_UNIT
        .lines()
        .map(|l| if l.starts_with("ExecStart=") { format!("ExecStart={quoted}") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The binary an installed unit or plist starts.
pub fn installed_exe(text: &str) -> Option<PathBuf> {
    if let Some(l) = text.lines().find_map(|l| l.strip_prefix("ExecStart=")) {
        return Some(PathBuf::from(l.trim().trim_matches('"').replace("\\\"", "\"").replace("\\\\", "\\")));
    }
    let start = text.find("<key>ProgramArguments</key>")?;
    let s = &text[start..];
    let open = s.find("<string>")? + "<string>".len();
    let close = s[open..].find("</string>")? + open;
    Some(PathBuf::from(s[open..close].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")))
}

pub fn home_and_config() -> Result<(PathBuf, PathBuf), String> {
    let b = directories::BaseDirs::new().ok_or("cannot find the home directory (is HOME set?)")?;
    Ok((b.home_dir().to_path_buf(), b.config_dir().to_path_buf()))
}

/// Whether a systemd user manager answers here.
fn systemd_user() -> bool {
    Command::new("systemctl")
        .args(["--user", "show-environment"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("cannot run {cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!("`{cmd} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// `<exe> --version`'s version number.
pub fn version_of(exe: &Path) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).split_whitespace().last().map(str::to_string)
}

const NO_MANAGER: &str = "no systemd user manager is running here (`systemctl --user` does not answer): \
the unit files are in place for when one does; meanwhile ccmemctl starts ccmemd on demand";

/// Runs a `service` action; `stop_running` stops a daemon that holds the socket (so the
/// service manager can bind it). Returns what to print.
pub fn act(action: Action, stop_running: impl FnOnce() -> Result<(), String>) -> Result<String, String> {
    let (home, config) = home_and_config()?;
    let mac = cfg!(target_os = "macos");
    match action {
        Action::Install => {
            let exe = crate::autostart::find_daemon().and_then(|p| std::fs::canonicalize(p).ok()).ok_or(
                "cannot find ccmemd next to ccmemctl or on PATH; install both with `cargo install --locked --path .`",
            )?;
            let mut said = Vec::new();
            for (path, text) in files(&home, &config, &exe) {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                ccmem_proto::files::atomic::write(&path, text.as_bytes(), false)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                said.push(format!("wrote {}", path.display()));
            }
            if mac {
                let _ = std::fs::create_dir_all(home.join("Library/Logs/ccmem"));
                stop_running()?;
                let plist = files(&home, &config, &exe).remove(0).0;
                let uid = ccmem_proto::wire::paths::euid();
                let _ = run("launchctl", &["bootout", &format!("gui/{uid}/{LABEL}")]);
                run("launchctl", &["bootstrap", &format!("gui/{uid}"), &plist.to_string_lossy()])?;
                said.push(format!("loaded {LABEL} (ccmemd {})", exe.display()));
            } else if systemd_user() {
                stop_running()?;
                run("systemctl", &["--user", "daemon-reload"])?;
                run("systemctl", &["--user", "enable", "--now", "ccmemd.socket"])?;
                said.push(format!("enabled and started ccmemd.socket (ccmemd {})", exe.display()));
            } else {
                said.push(NO_MANAGER.into());
            }
            Ok(said.join("\n"))
        }
        Action::Uninstall => {
            let mut said = Vec::new();
            if mac {
                let _ = run("launchctl", &["bootout", &format!("gui/{}/{LABEL}", ccmem_proto::wire::paths::euid())]);
            } else if systemd_user() {
                let _ = run("systemctl", &["--user", "disable", "--now", "ccmemd.socket", "ccmemd.service"]);
            }
            for (path, _) in files(&home, &config, Path::new("ccmemd")) {
                match std::fs::remove_file(&path) {
                    Ok(()) => said.push(format!("removed {}", path.display())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
                }
            }
            if !mac && systemd_user() {
                let _ = run("systemctl", &["--user", "daemon-reload"]);
            }
            if said.is_empty() {
                said.push("the service was not installed".into());
            }
            Ok(said.join("\n"))
        }
        Action::Start | Action::Stop => {
            let start = action == Action::Start;
            // Nothing to start or stop as a service: say what there is instead.
            let installed = files(&home, &config, Path::new("ccmemd")).iter().all(|(p, _)| p.exists());
            if !installed {
                return Err(format!(
                    "ccmemd is not installed as a user service (`ccmemctl service install` does it); {}",
                    if start {
                        "ccmemctl starts it on demand meanwhile"
                    } else {
                        "to stop the daemon: `ccmemctl shutdown`"
                    }
                ));
            }
            if mac {
                let target = format!("gui/{}/{LABEL}", ccmem_proto::wire::paths::euid());
                if start {
                    run("launchctl", &["kickstart", &target])?;
                } else {
                    run("launchctl", &["kill", "TERM", &target])?;
                }
            } else if systemd_user() {
                let verb = if start { "start" } else { "stop" };
                let units: &[&str] = if start { &["ccmemd.socket"] } else { &["ccmemd.socket", "ccmemd.service"] };
                let mut args = vec!["--user", verb];
                args.extend(units);
                run("systemctl", &args)?;
            } else if start {
                return Err(NO_MANAGER.into());
            } else {
                return Err(format!("{NO_MANAGER}; to stop the daemon: `ccmemctl shutdown`"));
            }
            Ok(if start { "started" } else { "stopped" }.into())
        }
        Action::Status => Ok(status(&home, &config).lines().join("\n")),
    }
}

/// What `service status` finds: each unit file, the binary it starts and its version, and
/// the service manager's view. `--json` prints it as is; [`Status::lines`] is the human form.
#[derive(Debug, Default, serde::Serialize)]
pub struct Status {
    /// One entry per file ccmem installs (the plist on macOS; socket and service units).
    pub files: Vec<UnitFile>,
    /// `systemd`, `launchd`, or `none` (no user service manager runs here).
    pub manager: &'static str,
    /// The manager's view of each unit (`enabled`/`active` on systemd; `loaded` on launchd).
    pub units: Vec<UnitState>,
    /// The ccmemd beside this ccmemctl, when it is not the one the service starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beside_this_client: Option<PathBuf>,
}

/// One installed (or missing) unit file.
#[derive(Debug, Default, serde::Serialize)]
pub struct UnitFile {
    /// Where it is (or would be).
    pub path: PathBuf,
    /// Whether it exists.
    pub installed: bool,
    /// The ccmemd it starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<PathBuf>,
    /// That ccmemd's version (`unknown` when it does not say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What needs doing about it.
    pub warnings: Vec<String>,
}

/// A unit as the service manager sees it.
#[derive(Debug, Default, serde::Serialize)]
pub struct UnitState {
    /// Unit name or launchd label.
    pub unit: String,
    /// `enabled`, `disabled`, … (systemd), or `loaded`/`not loaded` (launchd).
    pub enabled: String,
    /// `active`, `inactive`, … (systemd only).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub active: String,
}

/// The service's state, looked up.
pub fn status(home: &Path, config: &Path) -> Status {
    let mut st = Status { manager: "none", ..Default::default() };
    let here = crate::autostart::find_daemon().and_then(|p| std::fs::canonicalize(p).ok());
    for (path, _) in files(home, config, Path::new("ccmemd")) {
        let mut f = UnitFile { path: path.clone(), ..Default::default() };
        let Ok(text) = std::fs::read_to_string(&path) else {
            st.files.push(f);
            continue;
        };
        f.installed = true;
        if let Some(exe) = installed_exe(&text) {
            if !exe.is_file() {
                f.warnings.push(format!(
                    "it starts {}, which does not exist any more: run `ccmemctl service install` again",
                    exe.display()
                ));
            } else {
                let version = version_of(&exe).unwrap_or_else(|| "unknown".into());
                if version != ccmem_proto::VERSION {
                    f.warnings.push(format!(
                        "that ccmemd is version {version}, this ccmemctl is {}: run `ccmemctl service install` again",
                        ccmem_proto::VERSION
                    ));
                }
                if here.as_ref().is_some_and(|h| h != &exe) {
                    st.beside_this_client = here.clone();
                }
                f.version = Some(version);
            }
            f.starts = Some(exe);
        }
        st.files.push(f);
    }
    if !st.files.iter().any(|f| f.installed) {
        return st;
    }
    if cfg!(target_os = "macos") {
        st.manager = "launchd";
        let loaded = run("launchctl", &["print", &format!("gui/{}/{LABEL}", ccmem_proto::wire::paths::euid())]).is_ok();
        st.units.push(UnitState {
            unit: LABEL.into(),
            enabled: if loaded { "loaded" } else { "not loaded" }.into(),
            active: String::new(),
        });
    } else if systemd_user() {
        st.manager = "systemd";
        for unit in ["ccmemd.socket", "ccmemd.service"] {
            let enabled = run("systemctl", &["--user", "is-enabled", unit])
                .unwrap_or_else(|e| e.lines().last().unwrap_or("").to_string());
            let active = run("systemctl", &["--user", "is-active", unit]).unwrap_or_else(|_| "inactive".into());
            st.units.push(UnitState { unit: unit.into(), enabled, active });
        }
    }
    st
}

impl Status {
    /// The human form: a line per file, its binary and version, warnings, the manager's view.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            if !f.installed {
                out.push(format!("not installed: {} (run `ccmemctl service install`)", f.path.display()));
                continue;
            }
            out.push(format!("installed: {}", f.path.display()));
            if let (Some(exe), Some(v)) = (&f.starts, &f.version) {
                out.push(format!("starts {} (version {v})", exe.display()));
            }
            out.extend(f.warnings.iter().map(|w| format!("warning: {w}")));
        }
        if let Some(h) = &self.beside_this_client {
            out.push(format!("note: the ccmemd beside this ccmemctl is {}", h.display()));
        }
        if !self.files.iter().any(|f| f.installed) {
            return out;
        }
        match self.manager {
            "none" => out.push(NO_MANAGER.into()),
            "launchd" => out.extend(self.units.iter().map(|u| format!("launchd: {}", u.enabled))),
            _ => out.extend(self.units.iter().map(|u| format!("{}: {}, {}", u.unit, u.enabled, u.active))),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_the_binary_and_read_back() {
        let exe = Path::new("/opt/my tools/ccmemd");
        let unit = service_unit(exe);
        assert!(unit.contains("ExecStart=\"/opt/my tools/ccmemd\"\n"), "{unit}");
        assert!(unit.contains("Type=notify") && unit.contains("Restart=on-failure"));
        assert_eq!(installed_exe(&unit).as_deref(), Some(exe));
        assert!(
            SOCKET_UNIT.contains("ListenStream=%t/ccmem/ccmemd.sock")
                && SOCKET_UNIT.contains("SocketMode=0600")
                && SOCKET_UNIT.contains("DirectoryMode=0700")
        );
        let plist = PLIST.replace("@CCMEMD@", "/Users/a/bin/ccmemd").replace("@HOME@", "/Users/a");
        assert_eq!(installed_exe(&plist).as_deref(), Some(Path::new("/Users/a/bin/ccmemd")));
    }
}
