//! `ccmemctl service install | uninstall | start | stop | status`: ccmemd as a per-user
//! service, under the platform's own service manager, one module each:
//!
//! | OS | manager | module | `install` |
//! |---|---|---|---|
//! | Linux (any Unix but macOS) | the systemd user manager | [`systemd`] | `ccmemd.socket` and `ccmemd.service` in `~/.config/systemd/user/`, socket activation |
//! | macOS | launchd, the `gui/<uid>` domain | [`launchd`] | a user agent in `~/Library/LaunchAgents/`, started at load and kept alive after a crash |
//! | Windows | Task Scheduler, through `schtasks` | [`schtasks`] | a task started at your logon, no administrator rights |
//!
//! Every module has the same small set of functions: `files` (what it writes for a given
//! `ccmemd`) and `installed_exe` (the binary an installed file starts) are plain text work,
//! compiled and unit-tested on every platform; `install`, `uninstall`, `start`, `stop` and
//! `view` (the manager's own view, for `status`) call the manager, and are compiled only on
//! the platform whose manager it is. Which module serves is chosen at compile time (`backend`
//! below).
//!
//! The files are the repository's `systemd/`, `launchd/` and `windows/` templates, written with
//! the absolute path of the installed `ccmemd`. Where no service manager answers (a container,
//! a login without systemd), the files are still written and the client's auto-start keeps
//! covering it.
//!
//! What has run where: the systemd branch runs in this project's tests (a real socket
//! activation included). The launchd branch has never run on a real Mac, and the Task
//! Scheduler branch never on real Windows: both are type-checked for their targets, and their
//! files are read back by real plist and XML parsers in their tests. (wine's `schtasks
//! /Create` takes the task file, but keeps only its settings: no trigger, principal or
//! command, and `/Query` prints nothing, so it proves little.)

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod launchd;
pub mod schtasks;
pub mod systemd;

#[cfg(target_os = "macos")]
use launchd as backend;
#[cfg(windows)]
use schtasks as backend;
#[cfg(all(unix, not(target_os = "macos")))]
use systemd as backend;

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

/// The service files as they should be for `ccmemd` at `exe` on this platform: (path, bytes).
pub fn files(home: &Path, config: &Path, exe: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    backend::files(home, config, exe)
}

/// The binary an installed systemd unit, launchd plist or Task Scheduler task starts.
pub fn installed_exe(text: &str) -> Option<PathBuf> {
    if text.contains("<key>ProgramArguments</key>") {
        launchd::installed_exe(text)
    } else if text.contains("<Exec>") {
        schtasks::installed_exe(text)
    } else {
        systemd::installed_exe(text)
    }
}

/// The home and configuration directories (`directories`' `BaseDirs`).
pub fn home_and_config() -> Result<(PathBuf, PathBuf), String> {
    let b = directories::BaseDirs::new().ok_or("cannot find the home directory (is HOME set?)")?;
    Ok((b.home_dir().to_path_buf(), b.config_dir().to_path_buf()))
}

/// Runs `cmd` and returns its standard output, or says what failed.
fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("cannot run {cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let said = [&out.stderr, &out.stdout]
            .into_iter()
            .map(|s| String::from_utf8_lossy(s).trim().to_string())
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| out.status.to_string());
        Err(format!("`{cmd} {}` failed: {said}", args.join(" ")))
    }
}

/// `<exe> --version`'s version number.
pub fn version_of(exe: &Path) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).split_whitespace().last().map(str::to_string)
}

/// Text with `&`, `<`, `>` and `"` escaped, for XML element content and attributes.
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// XML text with its character and entity references resolved (the five predefined ones and
/// numeric ones); an unknown or broken reference is kept as it is.
pub fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').and_then(|end| {
            let c = match &rest[1..end] {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                n => {
                    let code = match n.strip_prefix("#x").or_else(|| n.strip_prefix("#X")) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => n.strip_prefix('#')?.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of the first `<tag>…</tag>` in `xml`, references resolved.
fn xml_element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml_unescape(xml[start..end].trim()))
}

/// A file's text: UTF-16 (with a byte-order mark, or little-endian ASCII without one, as
/// Windows tools write it) or UTF-8 (a BOM dropped, invalid bytes replaced).
pub fn decode_text(bytes: &[u8]) -> String {
    let utf16 = |b: &[u8], le: bool| {
        let units =
            b.chunks_exact(2)
                .map(|c| if le { u16::from_le_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], c[1]]) });
        char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect::<String>()
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, true),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, false),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        [c, 0, ..] if *c != 0 => utf16(bytes, true),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The ccmemd beside this ccmemctl (or on PATH), canonical, in the plain form a service
/// manager is given (`C:\…` on Windows, not `\\?\C:\…`).
fn this_daemon() -> Option<PathBuf> {
    crate::autostart::find_daemon().and_then(|p| ccmem_proto::files::within::canonical(&p).ok())
}

/// Writes `files`, making their directories; says what it wrote.
fn write_files(files: &[(PathBuf, Vec<u8>)]) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    for (path, bytes) in files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        ccmem_proto::files::atomic::write(path, bytes, false)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        said.push(format!("wrote {}", path.display()));
    }
    Ok(said)
}

/// Removes `files` where they exist; says what it removed.
fn remove_files(files: &[(PathBuf, Vec<u8>)]) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    for (path, _) in files {
        match std::fs::remove_file(path) {
            Ok(()) => said.push(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
        }
    }
    Ok(said)
}

/// Runs a `service` action; `stop_running` stops a daemon that holds the socket (so the
/// service manager can bind it, or, on Windows, so it ends cleanly rather than killed).
/// Returns what to print.
pub fn act(action: Action, stop_running: impl FnOnce() -> Result<(), String>) -> Result<String, String> {
    let (home, config) = home_and_config()?;
    let said = match action {
        Action::Install => {
            let exe = this_daemon().ok_or(
                "cannot find ccmemd next to ccmemctl or on PATH; install ccmem again (`npm i -g ccmem`, or `cargo install --locked --path .`)",
            )?;
            backend::install(&home, &config, &exe, stop_running)?
        }
        Action::Uninstall => {
            let said = backend::uninstall(&home, &config, stop_running)?;
            if said.is_empty() {
                vec!["the service was not installed".into()]
            } else {
                said
            }
        }
        Action::Start | Action::Stop => {
            let start = action == Action::Start;
            // Nothing to start or stop as a service: say what there is instead.
            let installed =
                files(&home, &config, Path::new("ccmemd")).iter().all(|(p, _)| backend::installed_text(p).is_some());
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
            if start {
                backend::start(&home, &config)?
            } else {
                backend::stop(&home, &config, stop_running)?
            }
        }
        Action::Status => status(&home, &config).lines(),
    };
    Ok(said.join("\n"))
}

/// What `service status` finds: each unit file, the binary it starts and its version, and
/// the service manager's view. `--json` prints it as is; [`Status::lines`] is the human form.
#[derive(Debug, Default, serde::Serialize)]
pub struct Status {
    /// One entry per file ccmem installs (socket and service units; the plist; the task).
    pub files: Vec<UnitFile>,
    /// `systemd`, `launchd`, `task scheduler`, or `none` (no service manager answers here).
    pub manager: &'static str,
    /// The manager's view of each unit (`enabled`/`active` on systemd; `loaded` and
    /// `running` on launchd; `enabled` and the task's status on Task Scheduler).
    pub units: Vec<UnitState>,
    /// The ccmemd beside this ccmemctl, when it is not the one the service starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beside_this_client: Option<PathBuf>,
    /// What to say when no manager answers (`manager` is `none`).
    #[serde(skip)]
    pub no_manager: &'static str,
}

/// One installed (or missing) unit file.
#[derive(Debug, Default, serde::Serialize)]
pub struct UnitFile {
    /// Where it is (or would be).
    pub path: PathBuf,
    /// Whether it is installed: the file exists (systemd, launchd), or Task Scheduler has the
    /// task (the file is then ccmem's copy of it).
    pub installed: bool,
    /// Where the text was read from when not from `path`: the task as Task Scheduler holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
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
    /// Unit name, launchd label or task name.
    pub unit: String,
    /// `enabled`, `disabled`, … (systemd and Task Scheduler), or `loaded`/`not loaded`
    /// (launchd).
    pub enabled: String,
    /// `active`, `inactive`, … (systemd), `running`/`not running` (launchd), or the task's
    /// status as schtasks prints it (`Ready`, `Running`, `Disabled`, in the system's language).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub active: String,
}

/// The service's state, looked up.
pub fn status(home: &Path, config: &Path) -> Status {
    let mut st = Status { manager: "none", no_manager: backend::NO_MANAGER, ..Default::default() };
    let here = this_daemon();
    for (path, _) in files(home, config, Path::new("ccmemd")) {
        let mut f = UnitFile { path: path.clone(), ..Default::default() };
        let Some((text, source)) = backend::installed_text(&path) else {
            st.files.push(f);
            continue;
        };
        f.installed = true;
        f.source = source;
        check_exe(&mut f, installed_exe(&text), here.as_deref(), &mut st.beside_this_client);
        st.files.push(f);
    }
    if st.files.iter().any(|f| f.installed) {
        backend::view(home, config, &mut st);
    }
    st
}

/// Fills in what `f` starts, its version, and what is wrong with it.
fn check_exe(f: &mut UnitFile, exe: Option<PathBuf>, here: Option<&Path>, beside: &mut Option<PathBuf>) {
    // (The socket unit starts no binary.)
    let Some(exe) = exe else { return };
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
        if here.is_some_and(|h| h != exe) {
            *beside = here.map(Path::to_path_buf);
        }
        f.version = Some(version);
    }
    f.starts = Some(exe);
}

impl Status {
    /// Whether any of ccmem's files (or the task) is installed.
    pub fn installed(&self) -> bool {
        self.files.iter().any(|f| f.installed)
    }

    /// Whether the manager will start ccmemd: a unit enabled (systemd, Task Scheduler) or the
    /// agent loaded (launchd).
    pub fn enabled(&self) -> bool {
        self.units.iter().any(|u| u.enabled.starts_with("enabled") || u.enabled == "loaded")
    }

    /// The manager's view, a line per unit (or why there is none).
    pub fn manager_lines(&self) -> Vec<String> {
        match self.manager {
            "none" => vec![self.no_manager.to_string()],
            "systemd" => self.units.iter().map(|u| format!("{}: {}, {}", u.unit, u.enabled, u.active)).collect(),
            m => self
                .units
                .iter()
                .map(|u| {
                    let active = if u.active.is_empty() { String::new() } else { format!(", {}", u.active) };
                    format!("{m}: {} {}{active}", u.unit, u.enabled)
                })
                .collect(),
        }
    }

    /// The human form: a line per file, its binary and version, warnings, the manager's view.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            if !f.installed {
                out.push(format!("not installed: {} (run `ccmemctl service install`)", f.path.display()));
                continue;
            }
            match &f.source {
                Some(s) if f.path.is_file() => out.push(format!("installed: {s} (a copy in {})", f.path.display())),
                Some(s) => out.push(format!("installed: {s}")),
                None => out.push(format!("installed: {}", f.path.display())),
            }
            if let (Some(exe), Some(v)) = (&f.starts, &f.version) {
                out.push(format!("starts {} (version {v})", exe.display()));
            }
            out.extend(f.warnings.iter().map(|w| format!("warning: {w}")));
        }
        if let Some(h) = &self.beside_this_client {
            out.push(format!("note: the ccmemd beside this ccmemctl is {}", h.display()));
        }
        if self.installed() {
            out.extend(self.manager_lines());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_round_trips() {
        for s in ["plain", "a & b", "<x>", "\"q\" 'a'", "&amp; literal", "C:\\Program Files\\x & y\\ccmemd.exe"] {
            assert_eq!(xml_unescape(&xml_escape(s)), s);
        }
        assert_eq!(xml_unescape("&#65;&#x42;&apos;&unknown; & &#xZZ;"), "AB'&unknown; & &#xZZ;");
    }

    #[test]
    fn text_is_decoded_from_utf16_and_utf8() {
        let text = "<Task>é</Task>";
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode_text(&le), text);
        let bare: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(decode_text(&bare), text);
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode_text(&be), text);
        assert_eq!(decode_text(&[&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat()), text);
        assert_eq!(decode_text(text.as_bytes()), text);
        assert_eq!(decode_text(b""), "");
    }

    #[test]
    fn installed_exe_reads_every_kind_of_file() {
        let exe = Path::new("/opt/my tools & more/<ccmemd>");
        assert_eq!(installed_exe(&systemd::service_unit(exe)).as_deref(), Some(exe));
        assert_eq!(installed_exe(&launchd::plist(Path::new("/Users/a"), exe)).as_deref(), Some(exe));
        let win = Path::new(r"C:\Users\a b\tools & more\ccmemd.exe");
        assert_eq!(installed_exe(&schtasks::task_xml(r"PC\a", win)).as_deref(), Some(win));
    }

    #[test]
    fn status_lines_name_the_manager_view() {
        let mut st = Status { manager: "none", no_manager: "no manager here", ..Default::default() };
        st.files.push(UnitFile { path: "/x/unit".into(), installed: true, ..Default::default() });
        assert_eq!(st.lines(), ["installed: /x/unit", "no manager here"]);
        assert!(!st.enabled());
        st.manager = "task scheduler";
        st.files[0].source = Some(r"task \ccmem\ccmemd-a in Task Scheduler".into());
        st.units.push(UnitState { unit: r"\ccmem\ccmemd-a".into(), enabled: "enabled".into(), active: "Ready".into() });
        assert_eq!(
            st.lines(),
            [r"installed: task \ccmem\ccmemd-a in Task Scheduler", r"task scheduler: \ccmem\ccmemd-a enabled, Ready"]
        );
        assert!(st.enabled());
        st.manager = "launchd";
        st.units[0] =
            UnitState { unit: "dev.ccmem.ccmemd".into(), enabled: "not loaded".into(), active: String::new() };
        assert_eq!(st.manager_lines(), ["launchd: dev.ccmem.ccmemd not loaded"]);
        assert!(!st.enabled());
    }
}
