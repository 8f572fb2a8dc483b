//! Configuration: `$XDG_CONFIG_HOME/ccmem/config.toml` (or `--config`), under environment
//! variables and command-line flags, over the defaults; and per project,
//! `<project>/.claude/ccmem.toml` over all of them for the keys a project may set.
//!
//! Every value remembers where it came from (`ccmemctl config show`). A bad file is an
//! error naming the key and the file: at start-up the daemon does not start; on reload
//! (SIGHUP, `ccmemctl config reload`) the previous configuration stays in force.

use crate::cli::{self, Args};
use ccmem_proto::wire::api::ConfigEntry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The file name in the config dir.
pub const FILE: &str = "config.toml";
/// The per-project file, relative to the root.
pub const PROJECT_FILE: &str = ".claude/ccmem.toml";

mod keys;
pub use keys::{Applies, Key, KEYS};

/// Keys a project's `.claude/ccmem.toml` may set.
pub const PROJECT_KEYS: &[&str] =
    &["checkpoint_interval", "session_ttl", "context_budget", "watch.ignore", "tasks.file", "history_keep"];

/// What can change while the daemon runs (sent to every task on reload).
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    /// Period of the automatic checkpoint.
    pub checkpoint_interval: Duration,
    /// Inactivity after which a session ends.
    pub session_ttl: Duration,
    /// Default size of the resume context.
    pub context_budget: usize,
    /// Dev-server scan period; None: on demand only.
    pub port_scan_interval: Option<Duration>,
    /// Extra ignore patterns for watchers opened from now on.
    pub watch_ignore: Vec<String>,
    /// Extra redaction patterns (kind, regex).
    pub redact_patterns: Vec<(String, String)>,
}

/// The whole configuration, with the source of each value.
#[derive(Debug, Clone)]
pub struct Config {
    /// What can change at run time.
    pub live: Live,
    /// Ended sessions `history` lists per project.
    pub keep_sessions: usize,
    /// How long the journal keeps ended sessions (None: for ever).
    pub history_keep: Option<Duration>,
    /// The journal's largest size, in bytes.
    pub history_max_size: u64,
    /// Watch settings, fixed at start.
    pub watch_coalesce: Duration,
    /// Poll period past the watch limit.
    pub watch_poll_interval: Duration,
    /// Notifications buffered per project.
    pub watch_queue: usize,
    /// Most watches; None: no limit of our own.
    pub max_watches: Option<usize>,
    /// The config file read (it may not exist).
    pub file: PathBuf,
    /// key → (value, source), for `config show`.
    pub sources: BTreeMap<String, (String, String)>,
}

/// Where flags and environment variables gave a value: flag id → "command line" or
/// "environment CCMEM_…".
pub type Given = BTreeMap<String, String>;

/// The config file to read.
pub fn file_path(args: &Args) -> Result<PathBuf, String> {
    match &args.config {
        Some(p) => Ok(p.clone()),
        None => ccmem_proto::wire::paths::config_dir().map(|d| d.join(FILE)).map_err(|e| e.to_string()),
    }
}

/// Reads the configuration: defaults, then the file, then environment and flags (`given`),
/// plus the redaction patterns file of `--redact-patterns` (or the config dir's).
pub fn load(args: &Args, given: &Given) -> Result<Config, String> {
    let file = file_path(args)?;
    let table = read_table(&file, args.config.is_some())?;
    let mut c = Config {
        live: Live {
            checkpoint_interval: args.checkpoint_interval,
            session_ttl: args.session_ttl,
            context_budget: (args.context_budget as usize).min(*ccmem_proto::wire::api::BUDGET_RANGE.end()),
            port_scan_interval: args.port_scan_interval.0,
            watch_ignore: Vec::new(),
            redact_patterns: Vec::new(),
        },
        keep_sessions: args.keep_sessions as usize,
        history_keep: args.history_keep.0,
        history_max_size: args.history_max_size,
        watch_coalesce: args.watch_coalesce,
        watch_poll_interval: args.watch_poll_interval,
        watch_queue: args.watch_queue as usize,
        max_watches: args.max_watches,
        file: file.clone(),
        sources: BTreeMap::new(),
    };
    let flat = flatten(&table);
    let src = format!("config file {}", file.display());
    for (key, v) in &flat {
        if empty_section(key, v, KEYS.iter().map(|k| k.name)) {
            continue;
        }
        let Some(k) = keys::find(key) else {
            return Err(unknown(key, &file, KEYS.iter().map(|k| k.name)));
        };
        if let Some(from) = k.flag.and_then(|f| given.get(f)) {
            // Checked all the same: the file must be right once the flag or variable is gone.
            k.set(&mut c.clone(), v).map_err(|e| format!("{}: key `{key}`: {e}", file.display()))?;
            c.sources.insert(key.clone(), (String::new(), format!("{from} (over {src})")));
            continue;
        }
        k.set(&mut c, v).map_err(|e| format!("{}: key `{key}`: {e}", file.display()))?;
        c.sources.insert(key.clone(), (String::new(), src.clone()));
    }
    for key in KEYS {
        let source = c
            .sources
            .get(key.name)
            .map(|s| s.1.clone())
            .or_else(|| key.flag.and_then(|f| given.get(f).cloned()))
            .unwrap_or_else(|| "default".into());
        c.sources.insert(key.name.to_string(), (key.show(&c), source));
    }
    let extra = patterns_file(args)?;
    if let Some((path, pats)) = extra {
        c.live.redact_patterns.extend(pats);
        c.sources.insert(
            "redact.patterns".into(),
            (
                keys::find("redact.patterns").map(|k| k.show(&c)).unwrap_or_default(),
                format!("{} and {path}", c.sources["redact.patterns"].1),
            ),
        );
    }
    // Compile them now: a bad pattern is the file's error, not a surprise later.
    ccmem_proto::redact::check_patterns(&c.live.redact_patterns)
        .map_err(|e| format!("{}: key `redact.patterns`: {e}", file.display()))?;
    Ok(c)
}

fn unknown<'a>(key: &str, file: &Path, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.collect();
    let prefix = format!("{key}.");
    let within: Vec<&str> = known.iter().filter_map(|k| k.strip_prefix(&prefix)).collect();
    if within.is_empty() {
        // A key a repository's file chose (TOML quotes any text as a key): a code span of one
        // line, as the warning reaches `status` and the agent's `session_status`.
        format!("{}: unknown key {} (known: {})", file.display(), ccmem_proto::quote::name_code(key), known.join(", "))
    } else {
        format!("{}: `{key}` is a table, not a value: [{key}] with {}", file.display(), within.join(", "))
    }
}

/// A TOML error on one line, without the excerpt of the file it quotes (`1 | …`): the file
/// may be a repository's, and its words would reach `status` and the agent as the warning.
fn parse_error(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let excerpt = |l: &str| {
        let t = l.trim_start();
        t.starts_with('|')
            || t.split_once(" |").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !excerpt(l)).collect::<Vec<_>>().join(": ")
}

fn read_table(file: &Path, required: bool) -> Result<toml::Table, String> {
    // A project's `.claude/ccmem.toml` comes with the repository: a link to a device or a
    // FIFO there must not stall or flood the daemon.
    match ccmem_proto::files::untrusted::read_string(file, 1 << 20) {
        Ok(text) => text.parse::<toml::Table>().map_err(|e| format!("{}: {}", file.display(), parse_error(&e))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(toml::Table::new()),
        Err(e) => match file.parent().and_then(ccmem_proto::wire::paths::file_in_the_way) {
            Some(f) => Err(format!("cannot read {}: {} is a file, not a directory", file.display(), f.display())),
            None => Err(format!("cannot read {}: {e}", file.display())),
        },
    }
}

/// `{watch = {queue = 1}}` → `watch.queue`. An empty table stays, as a table: `[watchh]`
/// with nothing in it is still a name to check.
fn flatten(t: &toml::Table) -> Vec<(String, toml::Value)> {
    let mut out = Vec::new();
    for (k, v) in t {
        match v {
            toml::Value::Table(sub) if !sub.is_empty() => {
                out.extend(flatten(sub).into_iter().map(|(kk, vv)| (format!("{k}.{kk}"), vv)))
            }
            v => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// An empty table named as a section of known keys (`[watch]` with its keys commented
/// out): nothing to read.
fn empty_section<'a>(key: &str, v: &toml::Value, mut known: impl Iterator<Item = &'a str>) -> bool {
    let prefix = format!("{key}.");
    v.as_table().is_some_and(toml::Table::is_empty) && known.any(|k| k.starts_with(&prefix))
}

fn duration(v: &toml::Value, off: bool) -> Result<Option<Duration>, String> {
    match v {
        // The parser's errors repeat the text as Rust writes it (`"x\n## Task"`): one line,
        // but shown here as every other value a file chose is.
        toml::Value::String(s) if off => cli::parse_interval_or_off(s).map(|e| e.0).map_err(|e| requote(&e, s)),
        toml::Value::String(s) => cli::parse_positive_duration(s).map(Some).map_err(|e| requote(&e, s)),
        toml::Value::Integer(n) if *n > 0 => cli::within_max(Duration::from_secs(*n as u64)).map(Some),
        toml::Value::Boolean(false) | toml::Value::Integer(0) if off => Ok(None),
        other => Err(format!(
            "expected a duration such as \"15m\"{}, got {}",
            if off { " or \"off\"" } else { "" },
            shown(other)
        )),
    }
}

/// Shortest `session_ttl` a project's `.claude/ccmem.toml` may set.
const MIN_PROJECT_TTL: Duration = Duration::from_secs(10 * 60);
/// Shortest `history_keep` a project's `.claude/ccmem.toml` may set: a repository may not
/// have its past forgotten at once.
const MIN_PROJECT_KEEP: Duration = Duration::from_secs(7 * 24 * 3600);
/// Shortest `checkpoint_interval` a project's `.claude/ccmem.toml` may set.
const MIN_PROJECT_INTERVAL: Duration = Duration::from_secs(60);

fn at_least(d: Result<Option<Duration>, String>, min: Duration) -> Result<Option<Duration>, String> {
    match d? {
        Some(d) if d < min => Err(format!("at least {}m here (a project's file may not set less)", min.as_secs() / 60)),
        d => Ok(d),
    }
}

fn size(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::String(s) => cli::parse_size(s).map_err(|e| requote(&e, s)),
        toml::Value::Integer(n) if *n > 0 => cli::parse_size(&n.to_string()),
        other => Err(format!("expected a size such as \"1GiB\", got {}", shown(other))),
    }
}

fn count(v: &toml::Value, min: i64, max: i64) -> Result<usize, String> {
    match v {
        toml::Value::Integer(n) if (min..=max).contains(n) => Ok(*n as usize),
        other => Err(format!("expected a whole number from {min} to {max}, got {}", shown(other))),
    }
}

fn strings(v: &toml::Value) -> Result<Vec<String>, String> {
    match v {
        toml::Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str().map(str::to_string).ok_or_else(|| format!("expected a list of strings, got {}", shown(x)))
            })
            .collect(),
        other => Err(format!("expected a list of strings, got {}", shown(other))),
    }
}

/// `watch.ignore` patterns taken at most, and the longest one: each is compiled into the
/// watcher's matcher, and a repository's 25,000 patterns took the project's watcher minutes
/// to build.
pub const MAX_IGNORE_PATTERNS: usize = 1_000;
const MAX_IGNORE_PATTERN_BYTES: usize = 1_024;

fn globs(v: &toml::Value) -> Result<Vec<String>, String> {
    let g = strings(v)?;
    if g.len() > MAX_IGNORE_PATTERNS {
        return Err(format!("{} patterns: at most {MAX_IGNORE_PATTERNS} are taken", g.len()));
    }
    if let Some(p) = g.iter().find(|p| p.len() > MAX_IGNORE_PATTERN_BYTES) {
        return Err(format!("a pattern of {} bytes: at most {MAX_IGNORE_PATTERN_BYTES}", p.len()));
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new("/");
    for p in &g {
        b.add_line(None, p).map_err(|e| {
            // The glob crate's reason repeats the pattern unquoted: only its reason is kept.
            let why = match e {
                ignore::Error::Glob { err, .. } => err,
                other => other.to_string(),
            };
            format!("{} is not a gitignore pattern: {}", quoted(p), quoted(&why))
        })?;
    }
    Ok(g)
}

/// Extra redaction patterns: (kind, regex).
type Patterns = Vec<(String, String)>;

/// The redaction patterns file (`--redact-patterns`, else the config dir's when it exists):
/// its name and its patterns.
fn patterns_file(args: &Args) -> Result<Option<(String, Patterns)>, String> {
    let (path, required) = match &args.redact_patterns {
        Some(f) => (f.clone(), true),
        None => match ccmem_proto::wire::paths::config_dir() {
            Ok(d) => (d.join(ccmem_proto::wire::paths::REDACT_PATTERNS_FILE), false),
            Err(_) => return Ok(None),
        },
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let name = path.display().to_string();
            Ok(Some((name.clone(), ccmem_proto::redact::parse_patterns(&text, &name)?)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
        Err(e) => Err(format!("cannot read the redaction patterns {}: {e}", path.display())),
    }
}

/// A project's overrides from `.claude/ccmem.toml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectConfig {
    /// Checkpoint period.
    pub checkpoint_interval: Option<Duration>,
    /// Session TTL.
    pub session_ttl: Option<Duration>,
    /// Context budget.
    pub context_budget: Option<usize>,
    /// Ignore patterns added to the global ones.
    pub watch_ignore: Vec<String>,
    /// The task list to read, relative to the root (instead of looking for one).
    pub tasks_file: Option<String>,
    /// How long the journal keeps the project's ended sessions, when shorter than the
    /// user's `history_keep` (a project can only shorten it, to 7 days at least).
    pub history_keep: Option<Duration>,
    /// The file, when it exists.
    pub file: Option<PathBuf>,
}

/// Reads `<root>/.claude/ccmem.toml`; an error names the key and the file. The error reaches
/// `status` and the agent's `session_status` as a warning: it is one line whatever the file
/// (or the directory's name) holds, and the values the file chose are quoted in it.
pub fn project(root: &Path) -> Result<ProjectConfig, String> {
    read_project(root).map_err(|e| ccmem_proto::quote::defuse_tags(&ccmem_proto::quote::name(&e)).into_owned())
}

/// A value a repository's file chose, as an error repeats it: a string quoted, anything else
/// (a list, a table) a code span, on one line either way, so that `"x\n## Task: …"` cannot
/// open a heading in `status`.
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => quoted(s),
        other => ccmem_proto::quote::code(&other.to_string(), SHOWN_CHARS),
    }
}

/// Characters of a repository's value repeated in an error.
const SHOWN_CHARS: usize = 120;

/// `error` with `value` as Rust's `{:?}` wrote it quoted as [`quoted`] does.
fn requote(error: &str, value: &str) -> String {
    error.replace(&format!("{value:?}"), &quoted(value))
}

fn quoted(s: &str) -> String {
    ccmem_proto::quote::quoted(s, SHOWN_CHARS)
}

fn read_project(root: &Path) -> Result<ProjectConfig, String> {
    let file = root.join(PROJECT_FILE);
    match ccmem_proto::files::untrusted::within(root, &file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot read {}: {e}", file.display()))
        }
        _ => {}
    }
    let table = read_table(&file, false)?;
    let mut p = ProjectConfig { file: file.exists().then(|| file.clone()), ..Default::default() };
    for (key, v) in flatten(&table) {
        if empty_section(&key, &v, PROJECT_KEYS.iter().copied()) {
            continue;
        }
        let err = |e: String| format!("{}: key `{key}`: {e}", file.display());
        match key.as_str() {
            // A repository's own file: never so short that its sessions are forgotten at once
            // or its checkpoints written in a loop.
            "checkpoint_interval" => {
                p.checkpoint_interval = at_least(duration(&v, false), MIN_PROJECT_INTERVAL).map_err(err)?
            }
            "session_ttl" => p.session_ttl = at_least(duration(&v, false), MIN_PROJECT_TTL).map_err(err)?,
            "context_budget" => p.context_budget = Some(count(&v, 200, 10_000).map_err(err)?),
            "history_keep" => match duration(&v, false).map_err(err)? {
                Some(d) if d < MIN_PROJECT_KEEP => {
                    return Err(err("at least 7d here (a project's file may not set less)".into()))
                }
                d => p.history_keep = d,
            },
            "watch.ignore" => p.watch_ignore = globs(&v).map_err(err)?,
            "tasks.file" => match v.as_str() {
                Some(f) if !f.starts_with('/') && !f.split('/').any(|c| c == "..") && !f.is_empty() => {
                    p.tasks_file = Some(f.to_string())
                }
                _ => return Err(err(format!("expected a path inside the project, got {}", shown(&v)))),
            },
            // A repository must not be able to make ccmem push anything anywhere.
            k if k.starts_with("handoff") || k.contains("remote") || k.contains("push") => {
                return Err(err(
                    "refused: the handoff through git is turned on, and its remote named, only in the user's own \
                     configuration (`ccmemctl handoff enable`), never by a repository"
                        .into(),
                ))
            }
            _ => return Err(unknown(&key, &file, PROJECT_KEYS.iter().copied())),
        }
    }
    Ok(p)
}

/// The entries of `config show`, with a project's overrides when one is given.
pub fn entries(c: &Config, project: Option<&ProjectConfig>) -> Vec<ConfigEntry> {
    let mut out: Vec<ConfigEntry> = KEYS
        .iter()
        .map(|key| {
            let (value, source) = c.sources.get(key.name).cloned().unwrap_or_default();
            ConfigEntry {
                key: key.name.to_string(),
                value,
                source,
                about: key.about.to_string(),
                applies: key.applies.as_str().to_string(),
            }
        })
        .collect();
    if let Some(p) = project {
        let src = p.file.as_ref().map(|f| format!("project file {}", f.display())).unwrap_or_default();
        for e in &mut out {
            let v = match e.key.as_str() {
                "checkpoint_interval" => p.checkpoint_interval.map(cli::format_duration),
                "session_ttl" => p.session_ttl.map(cli::format_duration),
                "context_budget" => p.context_budget.map(|n| n.to_string()),
                // In force only where it is shorter than the user's.
                "history_keep" => {
                    p.history_keep.filter(|k| c.history_keep.is_none_or(|u| *k < u)).map(cli::format_duration)
                }
                // The repository's patterns, on one line (`config show` prints them).
                "watch.ignore" if !p.watch_ignore.is_empty() => {
                    Some(ccmem_proto::quote::name(&format!("{:?} + {}", p.watch_ignore, e.value)).into_owned())
                }
                _ => None,
            };
            if let Some(v) = v {
                e.value = v;
                e.source = src.clone();
            } else if let (Some(k), "history_keep") = (p.history_keep, e.key.as_str()) {
                // Said, not silently dropped: the file asks for more than the user keeps.
                e.source = format!(
                    "{} (the {src} asks for {}, which is not in force: a project may only keep its past less long)",
                    e.source,
                    cli::format_duration(k)
                );
            }
        }
        if let Some(f) = &p.tasks_file {
            out.push(ConfigEntry {
                key: "tasks.file".into(),
                value: ccmem_proto::quote::name(f).into_owned(),
                source: src,
                about: "the project's task list".into(),
                applies: "next checkpoint".into(),
            });
        }
    }
    out
}

/// The live values sent to tasks.
pub type LiveRx = tokio::sync::watch::Receiver<Arc<Live>>;

/// A commented config file with every key at its default, for `ccmemctl config show --template`.
pub fn template() -> String {
    let mut s = String::from("# ccmem configuration ($XDG_CONFIG_HOME/ccmem/config.toml). Every key is optional;\n# the values shown are the defaults. Command-line flags and CCMEM_* variables win over this file.\n\n");
    let mut section = "";
    for key in KEYS {
        let (sec, name) = key.name.split_once('.').unwrap_or(("", key.name));
        if sec != section {
            s.push_str(&format!("\n[{sec}]\n"));
            section = sec;
        }
        let (about, applies, default) = (key.about, key.applies.as_str(), key.default_toml());
        s.push_str(&format!("# {about} (applies: {applies})\n{name} = {default}\n"));
    }
    s
}

#[cfg(test)]
mod tests;

/// The configuration in force, and how to read it again.
#[derive(Debug)]
pub struct Reloader {
    args: Args,
    given: Given,
    current: std::sync::Mutex<Config>,
    /// The configuration read at start: what is in force for the keys that need a restart.
    started: Config,
    tx: tokio::sync::watch::Sender<Arc<Live>>,
    /// The last check of the files on disk, by their size and modification times.
    checked: std::sync::Mutex<Option<(Stamps, Option<String>)>>,
}

/// The size and modification time of the configuration file and the patterns file (None
/// for one that cannot be read): what a check of them depends on.
type Stamps = [Option<(u64, std::time::SystemTime)>; 2];

impl Reloader {
    /// Starts from `config` (already loaded); returns the reloader and the receiver tasks watch.
    pub fn new(args: Args, given: Given, config: Config) -> (Arc<Self>, LiveRx) {
        let (tx, rx) = tokio::sync::watch::channel(Arc::new(config.live.clone()));
        let started = config.clone();
        // The files were just read without a problem.
        let checked = std::sync::Mutex::new(None);
        let me = Self { args, given, current: std::sync::Mutex::new(config), started, tx, checked };
        let stamps = me.stamps();
        if let Ok(mut c) = me.checked.lock() {
            *c = Some((stamps, None));
        }
        (Arc::new(me), rx)
    }

    /// The configuration files' sizes and modification times, now.
    fn stamps(&self) -> Stamps {
        let stamp = |p: Option<PathBuf>| {
            let m = std::fs::metadata(p?).ok()?;
            Some((m.len(), m.modified().ok()?))
        };
        let patterns = self.args.redact_patterns.clone().or_else(|| {
            ccmem_proto::wire::paths::config_dir().ok().map(|d| d.join(ccmem_proto::wire::paths::REDACT_PATTERNS_FILE))
        });
        [stamp(file_path(&self.args).ok()), stamp(patterns)]
    }

    /// Why the configuration files as they are now would stop a restart (or be refused by a
    /// reload), if they would: read as start-up reads them. Read again only when they
    /// changed, so that every SessionStart may ask.
    pub fn file_problem(&self) -> Option<String> {
        let now = self.stamps();
        let mut checked = match self.checked.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        match &*checked {
            Some((was, problem)) if *was == now => problem.clone(),
            _ => {
                // Shown to the user and maybe the agent: a token typed into the wrong key is
                // quoted in the error.
                let problem = load(&self.args, &self.given).err().map(|e| ccmem_proto::redact::redact(&e).into_owned());
                *checked = Some((now, problem.clone()));
                problem
            }
        }
    }

    /// The configuration in force.
    pub fn current(&self) -> Config {
        match self.current.lock() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Reads the file again. On success the new values take effect (those marked
    /// "restart" excepted); on error the previous configuration stays and the error says why.
    pub fn reload(&self) -> Result<Config, String> {
        let next = load(&self.args, &self.given)?;
        ccmem_proto::redact::install(&next.live.redact_patterns)?;
        let changed = self.tx.borrow().as_ref() != &next.live;
        if changed {
            self.tx.send_replace(Arc::new(next.live.clone()));
        }
        let mut next = next;
        for key in KEYS.iter().filter(|k| k.applies == Applies::Restart) {
            let (Some(in_force), Some(read)) = (self.started.sources.get(key.name), next.sources.get_mut(key.name))
            else {
                continue;
            };
            if in_force.0 != read.0 {
                tracing::warn!(key = key.name, "changed in the configuration; it takes effect when ccmemd restarts");
                // `config show` says what is in force, and what a restart will bring.
                *read = (in_force.0.clone(), format!("{}; {} ({}) after a restart", in_force.1, read.0, read.1));
            }
        }
        match self.current.lock() {
            Ok(mut c) => *c = next.clone(),
            Err(p) => *p.into_inner() = next.clone(),
        }
        tracing::info!(file = %next.file.display(), changed, "configuration reloaded");
        Ok(next)
    }
}
