//! The configuration keys: each is named, described, read from a file and shown in one
//! entry of [`KEYS`]; `config show`, the template and the file reader all come from it.
//! Only the command-line flag (its clap default is the key's default) and the field that
//! holds the value are elsewhere.

use super::{Config, Duration};
use crate::cli;

/// When a change of a key takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// At once, on `ccmemctl config reload` or SIGHUP.
    Reload,
    /// For sessions that start after the change.
    NewSessions,
    /// When ccmemd restarts.
    Restart,
}

impl Applies {
    /// As `config show` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Applies::Reload => "reload",
            Applies::NewSessions => "new sessions",
            Applies::Restart => "restart",
        }
    }
}

/// How a key's value is written in the file, for the template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `"15m"`.
    Duration,
    /// A whole number; with no flag default, 0.
    Count,
    /// A list of strings, empty by default.
    List,
    /// `"1GiB"`.
    Size,
}

/// One configuration key.
pub struct Key {
    /// Its name in the file (`section.name` for a key in a table).
    pub name: &'static str,
    /// The id of the flag (and environment variable) that sets it too, if any.
    pub flag: Option<&'static str>,
    /// What it is, for `config show` and the template.
    pub about: &'static str,
    /// When a change takes effect.
    pub applies: Applies,
    kind: Kind,
    set: fn(&mut Config, &toml::Value) -> Result<(), String>,
    show: fn(&Config) -> String,
}

impl Key {
    /// Sets the key from a file's value; the error says what was expected.
    pub fn set(&self, c: &mut Config, v: &toml::Value) -> Result<(), String> {
        (self.set)(c, v)
    }

    /// The value in force, as `config show` prints it.
    pub fn show(&self, c: &Config) -> String {
        (self.show)(c)
    }

    /// The default, as the file would write it: the flag's default when there is a flag.
    pub fn default_toml(&self) -> String {
        let default = self.flag.and_then(|f| {
            let cmd = <cli::Args as clap::CommandFactory>::command();
            let arg = cmd.get_arguments().find(|a| a.get_id() == f)?;
            arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned())
        });
        match (self.kind, default) {
            (Kind::Duration | Kind::Size, Some(d)) => format!("{d:?}"),
            (Kind::Count, Some(n)) => n,
            (Kind::Count, None) => "0".into(),
            (Kind::List, _) | (Kind::Duration | Kind::Size, None) => "[]".into(),
        }
    }
}

/// The key of this name.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

fn need(d: Option<Duration>) -> Result<Duration, String> {
    d.ok_or_else(|| "cannot be off".to_string())
}

fn d(d: Duration) -> String {
    cli::format_duration(d)
}

/// Every key, in the order `config show` and the template list them.
pub static KEYS: &[Key] = &[
    Key {
        name: "checkpoint_interval",
        flag: Some("checkpoint_interval"),
        about: "checkpoint live sessions this often, when something changed",
        applies: Applies::Reload,
        kind: Kind::Duration,
        set: |c, v| {
            c.live.checkpoint_interval = need(super::duration(v, false)?)?;
            Ok(())
        },
        show: |c| d(c.live.checkpoint_interval),
    },
    Key {
        name: "session_ttl",
        flag: Some("session_ttl"),
        about: "a session idle this long ends",
        applies: Applies::Reload,
        kind: Kind::Duration,
        set: |c, v| {
            c.live.session_ttl = need(super::duration(v, false)?)?;
            Ok(())
        },
        show: |c| d(c.live.session_ttl),
    },
    Key {
        name: "context_budget",
        flag: Some("context_budget"),
        about: "characters of resume context given to the agent (200–10000)",
        applies: Applies::Reload,
        kind: Kind::Count,
        set: |c, v| {
            c.live.context_budget = super::count(v, 200, 10_000)?;
            Ok(())
        },
        show: |c| c.live.context_budget.to_string(),
    },
    Key {
        name: "keep_sessions",
        flag: Some("keep_sessions"),
        about: "ended sessions kept per project",
        applies: Applies::Restart,
        kind: Kind::Count,
        set: |c, v| {
            c.keep_sessions = super::count(v, 1, 100_000)?;
            Ok(())
        },
        show: |c| c.keep_sessions.to_string(),
    },
    Key {
        name: "history_keep",
        flag: Some("history_keep"),
        about: "ended sessions are kept in the journal this long; \"off\": for ever",
        applies: Applies::Restart,
        kind: Kind::Duration,
        set: |c, v| {
            c.history_keep = super::duration(v, true)?;
            Ok(())
        },
        show: |c| c.history_keep.map_or("off".into(), d),
    },
    Key {
        name: "history_max_size",
        flag: Some("history_max_size"),
        about: "the journal's largest size; past it the oldest ended sessions are dropped",
        applies: Applies::Restart,
        kind: Kind::Size,
        set: |c, v| {
            c.history_max_size = super::size(v)?;
            Ok(())
        },
        show: |c| cli::format_size(c.history_max_size),
    },
    Key {
        name: "ports.scan_interval",
        flag: Some("port_scan_interval"),
        about: "how often dev servers are looked for; \"off\": only on demand",
        applies: Applies::Reload,
        kind: Kind::Duration,
        set: |c, v| {
            c.live.port_scan_interval = super::duration(v, true)?;
            Ok(())
        },
        show: |c| c.live.port_scan_interval.map_or("off".into(), d),
    },
    Key {
        name: "watch.ignore",
        flag: None,
        about: "extra gitignore-style patterns never watched or counted",
        applies: Applies::NewSessions,
        kind: Kind::List,
        set: |c, v| {
            c.live.watch_ignore = super::globs(v)?;
            Ok(())
        },
        show: |c| format!("{:?}", c.live.watch_ignore),
    },
    Key {
        name: "watch.coalesce",
        flag: Some("watch_coalesce"),
        about: "quiet time before file changes are counted",
        applies: Applies::Restart,
        kind: Kind::Duration,
        set: |c, v| {
            c.watch_coalesce = need(super::duration(v, false)?)?;
            Ok(())
        },
        show: |c| d(c.watch_coalesce),
    },
    Key {
        name: "watch.poll_interval",
        flag: Some("watch_poll_interval"),
        about: "how often directories past the watch limit are polled",
        applies: Applies::Restart,
        kind: Kind::Duration,
        set: |c, v| {
            c.watch_poll_interval = need(super::duration(v, false)?)?;
            Ok(())
        },
        show: |c| d(c.watch_poll_interval),
    },
    Key {
        name: "watch.queue",
        flag: Some("watch_queue"),
        about: "file notifications buffered per project",
        applies: Applies::Restart,
        kind: Kind::Count,
        set: |c, v| {
            c.watch_queue = super::count(v, 1, 1 << 24)?;
            Ok(())
        },
        show: |c| c.watch_queue.to_string(),
    },
    Key {
        name: "watch.max_watches",
        flag: Some("max_watches"),
        about: "most directory watches (0: the kernel's limit only)",
        applies: Applies::Restart,
        kind: Kind::Count,
        set: |c, v| {
            c.max_watches = Some(super::count(v, 0, i64::from(u32::MAX))?).filter(|n| *n > 0);
            Ok(())
        },
        show: |c| c.max_watches.map_or("0".into(), |n| n.to_string()),
    },
    Key {
        name: "redact.patterns",
        flag: None,
        about: "extra secret patterns: [\"kind = regex\", …]",
        applies: Applies::Reload,
        kind: Kind::List,
        set: |c, v| {
            let lines = super::strings(v)?.join("\n");
            c.live.redact_patterns = ccmem_proto::redact::parse_patterns(&lines, "redact.patterns")?;
            Ok(())
        },
        show: |c| match c.live.redact_patterns.len() {
            0 => "none".into(),
            n => format!(
                "{} ({})",
                ccmem_proto::count(n as u64, "pattern", "patterns"),
                c.live.redact_patterns.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(", ")
            ),
        },
    },
];
