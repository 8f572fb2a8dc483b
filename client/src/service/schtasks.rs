//! Task Scheduler, through `schtasks`: Windows.
//!
//! `install` writes the task (`windows/ccmemd-task.xml` with your account and the installed
//! `ccmemd.exe`; UTF-16 LE with a byte-order mark, as `schtasks /XML` reads it) to
//! `%APPDATA%\ccmem\ccmemd-task.xml`, stops a running daemon (cleanly, over its pipe), ends
//! an earlier install's task, registers the task with `schtasks /Create /TN
//! ccmem\ccmemd-<user> /XML <file> /F` and starts it with `schtasks /Run`. The task starts
//! ccmemd at your logon only (a `LogonTrigger` for your account), with your own rights
//! (`InteractiveToken`, `LeastPrivilege`: no administrator rights are needed to register it),
//! on battery too, with no time limit, one instance at a time, and again after a failure (3
//! times, a minute apart). The name carries the user because task names are machine-wide.
//!
//! `uninstall` stops the daemon, `schtasks /End`s and `/Delete`s the task and removes the
//! copy; `start` is `/Run`; `stop` shuts the daemon down over its pipe, then `/End` (which
//! would kill it outright); `view` reads the task back with `schtasks /Query /XML` (whether it
//! is enabled, and the binary it starts: what Task Scheduler holds is the truth, the copy in
//! `%APPDATA%` is used only when schtasks does not answer) and its status with `/Query /FO
//! CSV /NH` (`Ready`, `Running`, `Disabled`, in the system's language).
//!
//! Not run on real Windows yet: the task follows Microsoft's Task Scheduler schema; the
//! branch is type-checked for `x86_64-pc-windows-gnu`, and the generated task is read back by
//! an XML parser in the tests below. Known gaps: a console program started by an
//! `InteractiveToken` task gets a console window (ccmemd would have to detach from it), and
//! ccmemd's log goes to standard error, which a task discards.

use std::path::{Path, PathBuf};

/// The task's template (`@USERID@`, `@CCMEMD@`), without its XML declaration.
pub const TASK_XML: &str = include_str!("../../../windows/ccmemd-task.xml");

/// What `status` says when schtasks does not answer.
pub const NO_MANAGER: &str = "schtasks does not answer here (is the Task Scheduler service running?): \
the task's copy is in place, `ccmemctl service install` registers it once schtasks works; meanwhile \
ccmemctl starts ccmemd on demand";

/// The task's name for `user`: `ccmem\ccmemd-<user>` (in the `\ccmem\` folder; task names
/// are machine-wide, so each user has their own).
pub fn task_name(user: &str) -> String {
    let user: String = user.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
    format!(r"ccmem\ccmemd-{user}")
}

/// This user's name (`USERNAME`).
pub fn user_name() -> Option<String> {
    std::env::var("USERNAME").ok().filter(|u| !u.is_empty())
}

/// This user's account as Task Scheduler names it: `DOMAIN\user` (`USERDOMAIN`, `USERNAME`).
pub fn user_id() -> Option<String> {
    let user = user_name()?;
    Some(match std::env::var("USERDOMAIN") {
        Ok(domain) if !domain.is_empty() => format!(r"{domain}\{user}"),
        _ => user,
    })
}

/// The task for `ccmemd` at `exe`, started at the logon of `user_id` (`DOMAIN\user`).
pub fn task_xml(user_id: &str, exe: &Path) -> String {
    let body = TASK_XML
        .replace("@USERID@", &super::xml_escape(user_id))
        .replace("@CCMEMD@", &super::xml_escape(&exe.to_string_lossy()));
    format!("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n{body}")
}

/// `text` as UTF-16 LE with a byte-order mark: what `schtasks /Create /XML` reads (it
/// refuses UTF-8 files).
pub fn encode(text: &str) -> Vec<u8> {
    [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect()
}

/// ccmem's copy of the task, `config`\ccmem\ccmemd-task.xml (`%APPDATA%\ccmem\`).
pub fn files(_home: &Path, config: &Path, exe: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let xml = task_xml(&user_id().unwrap_or_default(), exe);
    vec![(config.join("ccmem").join("ccmemd-task.xml"), encode(&xml))]
}

/// The binary a task starts: its `Exec` action's `Command` (quotes around it dropped).
pub fn installed_exe(text: &str) -> Option<PathBuf> {
    let exec = &text[text.find("<Exec>")?..];
    let command = super::xml_element(exec, "Command")?;
    let command = command.strip_prefix('"').and_then(|c| c.strip_suffix('"')).unwrap_or(&command);
    Some(PathBuf::from(command))
}

/// Whether a task's `Settings` leave it enabled (`Enabled`, true when absent).
pub fn task_enabled(text: &str) -> bool {
    let settings = text.find("<Settings>").map(|s| &text[s..]).and_then(|s| Some(&s[..s.find("</Settings>")?]));
    settings.and_then(|s| super::xml_element(s, "Enabled")).is_none_or(|e| e != "false")
}

/// The last field of the first line of `schtasks /Query /FO CSV /NH`: the task's status.
pub fn csv_status(text: &str) -> Option<String> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut()?.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    fields.pop().filter(|f| !f.is_empty())
}

#[cfg(windows)]
pub(super) use imp::*;

#[cfg(windows)]
mod imp {
    use super::super::{decode_text, remove_files, run, write_files, Status, UnitState};
    use super::{csv_status, files, installed_exe, task_enabled, task_name, user_id, user_name};
    use std::path::Path;
    use std::process::Command;

    fn task() -> String {
        task_name(&user_name().unwrap_or_default())
    }

    /// What `schtasks /Query /TN <task> /XML` says.
    enum Query {
        /// The task, as Task Scheduler holds it.
        Task(String),
        /// schtasks ran and has no such task.
        NoTask,
        /// schtasks cannot be run.
        NoManager,
    }

    fn query() -> Query {
        match Command::new("schtasks").args(["/Query", "/TN", &task(), "/XML"]).output() {
            Err(_) => Query::NoManager,
            Ok(out) if out.status.success() => {
                let xml = decode_text(&out.stdout);
                // Success without a task (wine's schtasks prints nothing): no answer to trust.
                if xml.contains("<Task") {
                    Query::Task(xml)
                } else {
                    Query::NoManager
                }
            }
            Ok(_) => Query::NoTask,
        }
    }

    /// The task as Task Scheduler holds it, else (schtasks does not answer) ccmem's copy.
    pub fn installed_text(path: &Path) -> Option<(String, Option<String>)> {
        let copy = || std::fs::read(path).ok().map(|b| decode_text(&b));
        let source = Some(format!(r"task \{} in Task Scheduler", task()));
        match query() {
            // Not UTF-16 nor UTF-8 (a code page): the copy names the same binary, readably.
            Query::Task(xml) if xml.contains('\u{FFFD}') => match copy() {
                Some(c) if installed_exe(&c).is_some() => Some((c, source)),
                _ => Some((xml, source)),
            },
            Query::Task(xml) => Some((xml, source)),
            Query::NoTask => None,
            Query::NoManager => copy().map(|c| (c, None)),
        }
    }

    pub fn install(
        home: &Path,
        config: &Path,
        exe: &Path,
        stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        if user_id().is_none() {
            return Err("USERNAME is not set: cannot name the account the task runs for".into());
        }
        let files = files(home, config, exe);
        let mut said = write_files(&files)?;
        if matches!(query(), Query::NoManager) {
            said.push(super::NO_MANAGER.into());
            return Ok(said);
        }
        // The daemon ends cleanly over its pipe; `/End` would kill it.
        stop_running()?;
        let task = task();
        let _ = run("schtasks", &["/End", "/TN", &task]);
        run("schtasks", &["/Create", "/TN", &task, "/XML", &files[0].0.to_string_lossy(), "/F"])?;
        said.push(format!(
            r"registered the task \{task}: Task Scheduler starts ccmemd ({}) at each logon",
            exe.display()
        ));
        run("schtasks", &["/Run", "/TN", &task])?;
        said.push("started it".into());
        Ok(said)
    }

    pub fn uninstall(
        home: &Path,
        config: &Path,
        stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        let mut said = Vec::new();
        if matches!(query(), Query::Task(_)) {
            stop_running()?;
            let task = task();
            let _ = run("schtasks", &["/End", "/TN", &task]);
            run("schtasks", &["/Delete", "/TN", &task, "/F"])?;
            said.push(format!(r"removed the task \{task}"));
        }
        said.extend(remove_files(&files(home, config, Path::new("ccmemd")))?);
        Ok(said)
    }

    pub fn start(_home: &Path, _config: &Path) -> Result<Vec<String>, String> {
        run("schtasks", &["/Run", "/TN", &task()])?;
        Ok(vec!["started".into()])
    }

    pub fn stop(
        _home: &Path,
        _config: &Path,
        stop_running: impl FnOnce() -> Result<(), String>,
    ) -> Result<Vec<String>, String> {
        // After a clean shutdown `/End` has nothing left to end; after a failed one, it kills.
        let clean = stop_running();
        let ended = run("schtasks", &["/End", "/TN", &task()]);
        match (clean, ended) {
            (Ok(()), _) => Ok(vec!["stopped".into()]),
            (Err(e), Ok(_)) => Ok(vec![format!("ended the task ({e})")]),
            (Err(e), Err(end)) => Err(format!("{e}; {end}")),
        }
    }

    /// Whether the task is enabled, and its status.
    pub fn view(_home: &Path, _config: &Path, st: &mut Status) {
        let Query::Task(xml) = query() else { return };
        st.manager = "task scheduler";
        let task = task();
        let active = run("schtasks", &["/Query", "/TN", &task, "/FO", "CSV", "/NH"])
            .ok()
            .and_then(|out| csv_status(&out))
            .unwrap_or_default();
        let enabled = if task_enabled(&xml) { "enabled" } else { "disabled" };
        st.units.push(UnitState { unit: format!(r"\{task}"), enabled: enabled.into(), active });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text content of the first element named `name` under `node`.
    fn text<'a>(node: roxmltree::Node<'a, 'a>, path: &[&str]) -> Option<&'a str> {
        let mut n = node;
        for name in path {
            n = n.children().find(|c| c.has_tag_name(*name))?;
        }
        n.text()
    }

    /// The generated task, read by a real XML parser; the binary reads back through
    /// `installed_exe`, whatever its path holds.
    #[test]
    fn the_task_parses_and_names_the_binary() {
        let exe = Path::new(r"C:\Users\Ann & Bob\my <tools>\ccmemd.exe");
        let user = r"PC-1\Ann & <Bob>";
        let xml = task_xml(user, exe);
        let bytes = encode(&xml);
        assert_eq!(&bytes[..2], &[0xFF, 0xFE], "UTF-16 LE with a byte-order mark");
        assert_eq!(super::super::decode_text(&bytes), xml);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-16\"?>"));

        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let task = doc.root_element();
        assert_eq!(task.tag_name().name(), "Task");
        assert_eq!(task.tag_name().namespace(), Some("http://schemas.microsoft.com/windows/2004/02/mit/task"));
        assert_eq!(text(task, &["Actions", "Exec", "Command"]), exe.to_str());
        assert_eq!(text(task, &["Triggers", "LogonTrigger", "UserId"]), Some(user));
        assert_eq!(text(task, &["Triggers", "LogonTrigger", "Enabled"]), Some("true"));
        assert_eq!(text(task, &["Principals", "Principal", "UserId"]), Some(user));
        assert_eq!(text(task, &["Principals", "Principal", "LogonType"]), Some("InteractiveToken"));
        assert_eq!(text(task, &["Principals", "Principal", "RunLevel"]), Some("LeastPrivilege"));
        for (setting, value) in [
            ("MultipleInstancesPolicy", "IgnoreNew"),
            ("ExecutionTimeLimit", "PT0S"),
            ("DisallowStartIfOnBatteries", "false"),
            ("StopIfGoingOnBatteries", "false"),
            ("Hidden", "true"),
            ("Enabled", "true"),
        ] {
            assert_eq!(text(task, &["Settings", setting]), Some(value), "{setting}");
        }
        assert_eq!(text(task, &["Settings", "RestartOnFailure", "Interval"]), Some("PT1M"));
        assert_eq!(text(task, &["Settings", "RestartOnFailure", "Count"]), Some("3"));
        assert_eq!(installed_exe(&xml).as_deref(), Some(exe));
        assert!(task_enabled(&xml));
        assert!(!task_enabled(
            &xml.replace("<Enabled>true</Enabled>\n    <Hidden>", "<Enabled>false</Enabled>\n    <Hidden>")
        ));
    }

    /// What `schtasks /Query /XML` prints (as Windows exports a task: other whitespace, a
    /// quoted command, attributes) reads back too.
    #[test]
    fn an_exported_task_reads_back() {
        let exported = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\r\n<Task version=\"1.2\" xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\r\n  <Settings>\r\n    <IdleSettings>\r\n      <StopOnIdleEnd>false</StopOnIdleEnd>\r\n    </IdleSettings>\r\n    <Enabled>false</Enabled>\r\n  </Settings>\r\n  <Actions Context=\"Author\">\r\n    <Exec>\r\n      <Command>\"C:\\Program Files\\A &amp; B\\ccmemd.exe\"</Command>\r\n    </Exec>\r\n  </Actions>\r\n</Task>\r\n";
        assert_eq!(installed_exe(exported).as_deref(), Some(Path::new(r"C:\Program Files\A & B\ccmemd.exe")));
        assert!(!task_enabled(exported));
        assert!(task_enabled("<Task><Actions><Exec><Command>x</Command></Exec></Actions></Task>"));
    }

    #[test]
    fn names_and_status_columns() {
        assert_eq!(task_name("ann"), r"ccmem\ccmemd-ann");
        assert_eq!(task_name("Ann Bob.x"), r"ccmem\ccmemd-Ann_Bob_x");
        assert_eq!(csv_status("\"\\ccmem\\ccmemd-ann\",\"N/A\",\"Ready\"\r\n").as_deref(), Some("Ready"));
        assert_eq!(csv_status("\r\n\"\\ccmem\\ccmemd-ann\",\"N/A\",\"Running\"").as_deref(), Some("Running"));
        assert_eq!(csv_status("\"a,b\",\"c \"\"d\"\"\"").as_deref(), Some("c \"d\""));
        assert_eq!(csv_status(""), None);
        let (path, bytes) =
            files(Path::new("/unused"), Path::new(r"C:\Users\a\AppData\Roaming"), Path::new("x.exe")).remove(0);
        assert!(path.ends_with("ccmemd-task.xml") && bytes.starts_with(&[0xFF, 0xFE]));
    }
}
