//! systemd, the user manager (`systemctl --user`): Linux and the other Unixes but macOS.
//!
//! `install` writes `ccmemd.socket` and `ccmemd.service` to `~/.config/systemd/user/`
//! (`ExecStart` naming the installed `ccmemd`), stops a daemon started on demand (it holds
//! the socket), then `daemon-reload` and `enable --now ccmemd.socket`: the first connection
//! starts the service with the socket systemd made. `uninstall` is `disable --now` of both
//! units and removing the files; `start` starts the socket, `stop` stops both units; `view`
//! asks `is-enabled` and `is-active` for each unit.
//!
//! Where no user manager answers (a container, a login without systemd), `install` still
//! writes the files and says so, and the client's auto-start keeps covering it.
//!
//! This branch runs in the project's tests (`tests/service.rs`: `systemd-analyze verify`, a
//! real socket activation, install/status/uninstall into a temporary home).

use std::path::{Path, PathBuf};

/// The repository's socket unit, installed as it is.
pub const SOCKET_UNIT: &str = include_str!("../../../systemd/ccmemd.socket");
/// The service unit's template (`ExecStart` is rewritten).
pub const SERVICE_UNIT: &str = include_str!("../../../systemd/ccmemd.service");

/// What `status` says when no systemd user manager answers.
pub const NO_MANAGER: &str = "no systemd user manager is running here (`systemctl --user` does not answer): \
the unit files are in place for when one does; meanwhile ccmemctl starts ccmemd on demand";

/// The unit files for `ccmemd` at `exe`: (path, contents), in `config`/systemd/user.
pub fn files(_home: &Path, config: &Path, exe: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = config.join("systemd/user");
    vec![(dir.join("ccmemd.socket"), SOCKET_UNIT.into()), (dir.join("ccmemd.service"), service_unit(exe).into())]
}

/// Why `exe` cannot be written in a unit's `ExecStart`, if it cannot: a line break would
/// start directives of its own, and systemd refuses to run an executable whose name holds a
/// quote, a backslash, `$` or a control character. (`%` is written `%%`.)
pub fn unfit(exe: &Path) -> Option<String> {
    let text = exe.to_string_lossy();
    let c = text.chars().find(|c| c.is_control() || "\"\\$`'".contains(*c))?;
    Some(format!(
        "ccmemd's path {text:?} holds {c:?}, which a systemd unit cannot name: install ccmem in a directory \
         without it"
    ))
}

/// The service unit with `ExecStart` naming `exe` (quoted, `%` doubled, as systemd reads
/// it); see [`unfit`] for the paths it cannot name.
pub fn service_unit(exe: &Path) -> String {
    let quoted = format!("\"{}\"", exe.to_string_lossy().replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%"));
    SERVICE_UNIT
        .lines()
        .map(|l| if l.starts_with("ExecStart=") { format!("ExecStart={quoted}") } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The binary a service unit's `ExecStart` names.
pub fn installed_exe(text: &str) -> Option<PathBuf> {
    let l = text.lines().find_map(|l| l.strip_prefix("ExecStart="))?;
    let l = l.trim();
    let unquoted = l.strip_prefix('"').and_then(|l| l.strip_suffix('"')).unwrap_or(l);
    let mut out = String::with_capacity(unquoted.len());
    let mut chars = unquoted.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
    }
    Some(PathBuf::from(out.replace("%%", "%")))
}

#[cfg(all(unix, not(target_os = "macos")))]
pub(super) use imp::*;

#[cfg(all(unix, not(target_os = "macos")))]
mod imp {
    use super::super::{remove_files, run, write_files, Status, UnitState};
    use super::files;
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// Whether a systemd user manager answers here.
    fn systemd_user() -> bool {
        Command::new("systemctl")
            .args(["--user", "show-environment"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// An installed unit file's text.
    pub fn installed_text(path: &Path) -> Option<(String, Option<String>)> {
        Some((super::super::decode_text(&std::fs::read(path).ok()?), None))
    }

    pub fn install(
        home: &Path,
        config: &Path,
        exe: &Path,
        stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        if let Some(why) = super::unfit(exe) {
            return Err(why);
        }
        let mut said = write_files(&files(home, config, exe))?;
        if systemd_user() {
            stop_running()?;
            run("systemctl", &["--user", "daemon-reload"])?;
            run("systemctl", &["--user", "enable", "--now", "ccmemd.socket"])?;
            said.push(format!("enabled and started ccmemd.socket (ccmemd {})", exe.display()));
        } else {
            said.push(super::NO_MANAGER.into());
        }
        Ok(said)
    }

    pub fn uninstall(
        home: &Path,
        config: &Path,
        _stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        let manager = systemd_user();
        if manager {
            let _ = run("systemctl", &["--user", "disable", "--now", "ccmemd.socket", "ccmemd.service"]);
        }
        let said = remove_files(&files(home, config, Path::new("ccmemd")))?;
        if manager {
            let _ = run("systemctl", &["--user", "daemon-reload"]);
        }
        Ok(said)
    }

    pub fn start(_home: &Path, _config: &Path) -> Result<Vec<String>, String> {
        if !systemd_user() {
            return Err(super::NO_MANAGER.into());
        }
        run("systemctl", &["--user", "start", "ccmemd.socket"])?;
        Ok(vec!["started".into()])
    }

    pub fn stop(
        _home: &Path,
        _config: &Path,
        _stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        if !systemd_user() {
            return Err(format!("{}; to stop the daemon: `ccmemctl shutdown`", super::NO_MANAGER));
        }
        run("systemctl", &["--user", "stop", "ccmemd.socket", "ccmemd.service"])?;
        Ok(vec!["stopped".into()])
    }

    /// `is-enabled` and `is-active` of each unit, when a user manager answers.
    pub fn view(_home: &Path, _config: &Path, st: &mut Status) {
        if !systemd_user() {
            return;
        }
        st.manager = "systemd";
        for unit in ["ccmemd.socket", "ccmemd.service"] {
            let enabled = run("systemctl", &["--user", "is-enabled", unit])
                .unwrap_or_else(|e| e.lines().last().unwrap_or("").to_string());
            let active = run("systemctl", &["--user", "is-active", unit]).unwrap_or_else(|_| "inactive".into());
            st.units.push(UnitState { unit: unit.into(), enabled, active });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the independent tester: a line break in the path wrote directives of its
    /// own into the unit, `%` was read as a specifier, and paths systemd will not run were
    /// installed as if they worked.
    #[test]
    fn paths_a_unit_cannot_name_are_refused() {
        for bad in [
            "/opt/x\nExecStart=sh -c 'echo INJECTED'\ny/ccmemd",
            "/opt/a\"b/ccmemd",
            "/opt/a\\b/ccmemd",
            "/opt/$HOME/ccmemd",
            "/opt/t\tab/ccmemd",
        ] {
            assert!(
                unfit(Path::new(bad)).is_some_and(|w| w.contains("install ccmem in a directory without it")),
                "{bad:?}"
            );
        }
        let pct = Path::new("/opt/50%off/ccmemd");
        assert!(unfit(pct).is_none());
        let unit = service_unit(pct);
        assert!(unit.contains("ExecStart=\"/opt/50%%off/ccmemd\"\n"), "{unit}");
        assert_eq!(installed_exe(&unit).as_deref(), Some(pct));
    }

    #[test]
    fn units_name_the_binary_and_read_back() {
        for exe in ["/opt/my tools/ccmemd", r#"/opt/a "quoted" \ dir/ccmemd"#] {
            let exe = Path::new(exe);
            let unit = service_unit(exe);
            assert_eq!(installed_exe(&unit).as_deref(), Some(exe), "{unit}");
        }
        let unit = service_unit(Path::new("/opt/my tools/ccmemd"));
        assert!(unit.contains("ExecStart=\"/opt/my tools/ccmemd\"\n"), "{unit}");
        assert!(unit.contains("Type=notify") && unit.contains("Restart=on-failure"));
        assert!(
            SOCKET_UNIT.contains("ListenStream=%t/ccmem/ccmemd.sock")
                && SOCKET_UNIT.contains("SocketMode=0600")
                && SOCKET_UNIT.contains("DirectoryMode=0700")
        );
        let files = files(Path::new("/h"), Path::new("/h/.config"), Path::new("/bin/ccmemd"));
        let names: Vec<_> = files.iter().map(|(p, _)| p.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["/h/.config/systemd/user/ccmemd.socket", "/h/.config/systemd/user/ccmemd.service"]);
    }
}
