//! launchd, a user agent in the `gui/<uid>` domain: macOS.
//!
//! `install` writes `~/Library/LaunchAgents/dev.ccmem.ccmemd.plist` (the installed `ccmemd`
//! in `ProgramArguments`, logs in `~/Library/Logs/ccmem/`), stops a daemon started on demand,
//! unloads an agent already loaded (`launchctl bootout gui/<uid>/dev.ccmem.ccmemd`, waiting
//! until launchd has let it go), clears a `launchctl disable` that would make `bootstrap`
//! refuse it (`launchctl enable`), and loads it (`launchctl bootstrap gui/<uid> <plist>`):
//! `RunAtLoad` starts it now and at each login, and `KeepAlive` (`SuccessfulExit` false,
//! `Crashed` true) starts it again after a crash but not after a clean exit, such as
//! `ccmemctl shutdown` or a daemon that lost the start-up race to another one. `uninstall` is
//! `bootout` and removing the plist; `start` is `kickstart` (or `bootstrap` when the agent is
//! not loaded); `stop` is `kill TERM` (a clean exit, so launchd leaves it stopped until the
//! next login or `start`); `view` reads `launchctl print`.
//!
//! Where the user has no GUI session (logged in over ssh only), `gui/<uid>` does not exist:
//! `install` writes the plist and says so; launchd loads it at the next login.
//!
//! Not run on a real Mac yet: the commands follow launchctl(1) and the plist
//! launchd.plist(5); the branch is type-checked for `x86_64-apple-darwin`, and the generated
//! plist is read back by a real plist parser in the tests below.

use std::path::{Path, PathBuf};

/// The agent's template (`@CCMEMD@`, `@HOME@`).
pub const PLIST: &str = include_str!("../../../launchd/dev.ccmem.ccmemd.plist");
/// The launchd label.
pub const LABEL: &str = "dev.ccmem.ccmemd";

/// What `status` says when launchd has no GUI domain for this user.
pub const NO_MANAGER: &str = "launchd has no GUI session for this user here (`launchctl print gui/<uid>` fails, \
as over ssh without a login at the screen): the agent is loaded at the next login; meanwhile ccmemctl starts \
ccmemd on demand";

/// Where the agent's standard output and error go.
pub fn log_dir(home: &Path) -> PathBuf {
    home.join("Library/Logs/ccmem")
}

/// The plist for `ccmemd` at `exe`: ~/Library/LaunchAgents/dev.ccmem.ccmemd.plist.
pub fn files(home: &Path, _config: &Path, exe: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    vec![(home.join("Library/LaunchAgents").join(format!("{LABEL}.plist")), plist(home, exe).into())]
}

/// The agent's plist, starting `exe`, logging under `home`.
pub fn plist(home: &Path, exe: &Path) -> String {
    let xml = |p: &Path| super::xml_escape(&p.to_string_lossy());
    PLIST.replace("@CCMEMD@", &xml(exe)).replace("@HOME@", &xml(home))
}

/// The binary a plist starts: the first of its `ProgramArguments`.
pub fn installed_exe(text: &str) -> Option<PathBuf> {
    let args = &text[text.find("<key>ProgramArguments</key>")?..];
    let array = &args[..args.find("</array>")?];
    super::xml_element(array, "string").map(PathBuf::from)
}

/// `state` and `pid` from `launchctl print gui/<uid>/<label>` (its top-level lines; the
/// format is for people, so only these two are read).
pub fn print_state(text: &str) -> (Option<String>, Option<u32>) {
    let top = |key: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix('\t').filter(|l| !l.starts_with('\t')))
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(" = "))
            .map(|v| v.trim().to_string())
    };
    (top("state"), top("pid").and_then(|p| p.parse().ok()))
}

#[cfg(target_os = "macos")]
pub(super) use imp::*;

#[cfg(target_os = "macos")]
mod imp {
    use super::super::{remove_files, run, write_files, Status, UnitState};
    use super::{files, print_state, LABEL, NO_MANAGER};
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn domain() -> String {
        format!("gui/{}", ccmem_proto::wire::paths::euid())
    }

    fn target() -> String {
        format!("{}/{LABEL}", domain())
    }

    /// Whether this user's GUI domain exists (a login at the screen).
    fn gui_domain() -> bool {
        run("launchctl", &["print", &domain()]).is_ok()
    }

    /// `launchctl print` of the agent, when it is loaded.
    fn print() -> Option<String> {
        run("launchctl", &["print", &target()]).ok()
    }

    /// An installed plist's text.
    pub fn installed_text(path: &Path) -> Option<(String, Option<String>)> {
        Some((super::super::decode_text(&std::fs::read(path).ok()?), None))
    }

    /// `enable` (a `launchctl disable` persists and makes `bootstrap` refuse the agent), then
    /// `bootstrap`.
    fn load(plist: &Path) -> Result<(), String> {
        run("launchctl", &["enable", &target()])?;
        run("launchctl", &["bootstrap", &domain(), &plist.to_string_lossy()])?;
        Ok(())
    }

    pub fn install(
        home: &Path,
        config: &Path,
        exe: &Path,
        stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        let files = files(home, config, exe);
        let mut said = write_files(&files)?;
        let logs = super::log_dir(home);
        std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
        if !gui_domain() {
            said.push(NO_MANAGER.into());
            return Ok(said);
        }
        stop_running()?;
        if print().is_some() {
            // The agent of an earlier install: unload it, and wait until launchd has let go of
            // it, or `bootstrap` fails ("Bootstrap failed: 5: Input/output error").
            let _ = run("launchctl", &["bootout", &target()]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while print().is_some() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        load(&files[0].0)?;
        said.push(format!(
            "loaded {LABEL} into {}: started now and at each login (ccmemd {})",
            domain(),
            exe.display()
        ));
        Ok(said)
    }

    pub fn uninstall(
        home: &Path,
        config: &Path,
        _stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        let mut said = Vec::new();
        // bootout sends SIGTERM and waits for the exit.
        if print().is_some() && run("launchctl", &["bootout", &target()]).is_ok() {
            said.push(format!("unloaded {LABEL}"));
        }
        said.extend(remove_files(&files(home, config, Path::new("ccmemd")))?);
        Ok(said)
    }

    pub fn start(home: &Path, config: &Path) -> Result<Vec<String>, String> {
        if !gui_domain() {
            return Err(NO_MANAGER.into());
        }
        if print().is_some() {
            // Without -k: a running agent is left as it is.
            run("launchctl", &["kickstart", &target()])?;
        } else {
            load(&files(home, config, Path::new("ccmemd"))[0].0)?;
        }
        Ok(vec!["started".into()])
    }

    pub fn stop(
        _home: &Path,
        _config: &Path,
        _stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        let running = print()
            .map(|p| print_state(&p))
            .is_some_and(|(state, pid)| state.as_deref() == Some("running") || pid.is_some());
        if !running {
            return Ok(vec![format!(
                "{LABEL} is not running under launchd (a daemon started on demand stops with `ccmemctl shutdown`)"
            )]);
        }
        // ccmemd exits 0 on SIGTERM, and KeepAlive restarts only a failed or crashed agent.
        run("launchctl", &["kill", "TERM", &target()])?;
        Ok(vec!["stopped (launchd starts it again at the next login, or `ccmemctl service start`)".into()])
    }

    /// Whether the agent is loaded, and whether it runs.
    pub fn view(_home: &Path, _config: &Path, st: &mut Status) {
        if !gui_domain() {
            return;
        }
        st.manager = "launchd";
        let unit = match print() {
            Some(text) => {
                let active = match print_state(&text) {
                    (_, Some(pid)) => format!("running (pid {pid})"),
                    (Some(state), None) => state,
                    (None, None) => "not running".into(),
                };
                UnitState { unit: LABEL.into(), enabled: "loaded".into(), active }
            }
            None => UnitState { unit: LABEL.into(), enabled: "not loaded".into(), active: String::new() },
        };
        st.units.push(unit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated plist, read by a real plist parser: what launchd will see.
    #[test]
    fn the_plist_parses_and_names_the_binary() {
        let home = Path::new("/Users/a & <b>/home dir");
        let exe = Path::new("/Users/a & <b>/my tools/ccmemd");
        let text = plist(home, exe);
        let value = plist::Value::from_reader_xml(text.as_bytes()).expect("a well-formed plist");
        let dict = value.as_dictionary().expect("a dict at the top");
        assert_eq!(dict.get("Label").and_then(plist::Value::as_string), Some(LABEL));
        let args = dict.get("ProgramArguments").and_then(plist::Value::as_array).expect("ProgramArguments");
        assert_eq!(args.len(), 1);
        assert_eq!(args[0].as_string(), Some(exe.to_str().unwrap()));
        assert_eq!(dict.get("RunAtLoad").and_then(plist::Value::as_boolean), Some(true));
        let keep = dict.get("KeepAlive").and_then(plist::Value::as_dictionary).expect("KeepAlive is a dict");
        assert_eq!(keep.get("SuccessfulExit").and_then(plist::Value::as_boolean), Some(false));
        assert_eq!(keep.get("Crashed").and_then(plist::Value::as_boolean), Some(true));
        assert_eq!(dict.get("ProcessType").and_then(plist::Value::as_string), Some("Standard"));
        for key in ["StandardOutPath", "StandardErrorPath"] {
            let log = dict.get(key).and_then(plist::Value::as_string).expect(key);
            assert!(Path::new(log).is_absolute(), "{key}: {log}");
            assert_eq!(Path::new(log), log_dir(home).join("ccmemd.log"), "{key}");
        }
        assert_eq!(installed_exe(&text).as_deref(), Some(exe));
        let (path, bytes) = files(home, Path::new("/unused"), exe).remove(0);
        assert_eq!(path, home.join("Library/LaunchAgents/dev.ccmem.ccmemd.plist"));
        assert_eq!(bytes, text.as_bytes());
    }

    #[test]
    fn launchctl_print_gives_state_and_pid() {
        let text = "gui/501/dev.ccmem.ccmemd = {\n\tactive count = 1\n\tpath = /Users/a/Library/LaunchAgents/dev.ccmem.ccmemd.plist\n\tstate = running\n\n\tprogram = /Users/a/.cargo/bin/ccmemd\n\tendpoints = {\n\t\tstate = active\n\t}\n\tpid = 4242\n}\n";
        assert_eq!(print_state(text), (Some("running".into()), Some(4242)));
        let stopped = "gui/501/dev.ccmem.ccmemd = {\n\tstate = not running\n\tlast exit code = 0\n}\n";
        assert_eq!(print_state(stopped), (Some("not running".into()), None));
    }
}
