//! Command line of `ccmemd`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// ccmemd: keeps AI coding agents' work sessions in memory and on disk.
///
/// Runs in the foreground, as service managers expect; `ccmemctl` starts it on demand.
#[derive(Debug, Parser)]
#[command(name = "ccmemd", version, about, long_about = None)]
pub struct Args {
    /// Print a configuration file with every key at its default, commented, and exit
    #[arg(long)]
    pub config_template: bool,

    /// Read the configuration as start-up would, say whether it is good, and exit (1 when
    /// it is not)
    #[arg(long, conflicts_with = "config_template")]
    pub check_config: bool,

    /// Configuration file [default: $XDG_CONFIG_HOME/ccmem/config.toml, when it exists]
    #[arg(long, env = "CCMEM_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Socket to listen on [default: $CCMEM_SOCKET, else $XDG_RUNTIME_DIR/ccmem/ccmemd.sock]
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Log format on stderr; the level comes from RUST_LOG (default `info`)
    #[arg(long, value_enum, default_value_t = LogFormat::Pretty, value_name = "FORMAT")]
    pub log_format: LogFormat,

    /// Most connections open at once; more are answered "busy" and closed
    #[arg(long, default_value_t = 4096, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Close a connection that sends no complete message for this long (e.g. 500ms, 2m)
    #[arg(long, default_value = "2m", value_parser = parse_duration, value_name = "DURATION")]
    pub idle_timeout: Duration,

    /// How long shutdown waits for requests in flight before closing their connections
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_grace: Duration,

    /// A session with no activity for this long ends (final checkpoint, archived)
    #[arg(long, env = "CCMEM_SESSION_TTL", default_value = "24h", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub session_ttl: Duration,

    /// Checkpoint every live session this often (only when something changed)
    #[arg(long, env = "CCMEM_CHECKPOINT_INTERVAL", default_value = "15m", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub checkpoint_interval: Duration,

    /// Quiet time before file changes are counted (an editor's burst of events counts once)
    #[arg(long, default_value = "100ms", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub watch_coalesce: Duration,

    /// Most directory watches for the whole daemon; beyond it (or the kernel's
    /// fs.inotify.max_user_watches) directories are polled [default: no limit of our own]
    #[arg(long, value_name = "N")]
    pub max_watches: Option<usize>,

    /// How often directories without a watch are polled
    #[arg(long, default_value = "2s", value_parser = parse_positive_duration, value_name = "DURATION")]
    pub watch_poll_interval: Duration,

    /// File notifications buffered per project; when it overflows, the project is rescanned
    #[arg(long, default_value_t = 65_536, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub watch_queue: u32,

    /// Size of the resume context given to the agent, in characters (at most 10000)
    #[arg(long, default_value_t = 6000, value_name = "CHARS", value_parser = clap::value_parser!(u32).range(200..=10_000))]
    pub context_budget: u32,

    /// How often listening dev servers are looked for; `off` scans only when a status,
    /// context or checkpoint asks
    #[arg(long, env = "CCMEM_PORT_SCAN_INTERVAL", default_value = "10s", value_parser = parse_interval_or_off, value_name = "DURATION|off")]
    pub port_scan_interval: Every,

    /// Extra redaction patterns, one `kind = regex` per line
    /// [default: $XDG_CONFIG_HOME/ccmem/redact-patterns, when it exists]
    #[arg(long, env = "CCMEM_REDACT_PATTERNS", value_name = "FILE")]
    pub redact_patterns: Option<std::path::PathBuf>,

    /// Ended sessions `ccmemctl history` lists per project (the journal keeps them all, as
    /// long as --history-keep and --history-max-size allow)
    #[arg(long, default_value_t = 20, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub keep_sessions: u32,

    /// Ended sessions are kept in the journal this long; `off`: for ever
    #[arg(long, default_value = "off", value_parser = parse_interval_or_off, value_name = "DURATION|off")]
    pub history_keep: Every,

    /// The journal's largest size: past it, the oldest ended sessions are dropped
    #[arg(long, default_value = "1GiB", value_parser = parse_size, value_name = "SIZE")]
    pub history_max_size: u64,

    /// Keep no journal: live sessions are saved as files in the state dir at checkpoints
    /// only, and ended ones as archives (for a state dir on a network file system, where
    /// SQLite's write-ahead log cannot work)
    #[arg(long, env = "CCMEM_NO_JOURNAL")]
    pub no_journal: bool,
}

/// Parses a size: a number with an optional unit, `B`, `KB`/`KiB`, `MB`/`MiB`, `GB`/`GiB`
/// (each a power of 1024), at least 1 MiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("invalid size {text:?}: expected a number such as \"1GiB\""))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => return Err(format!("invalid size {text:?}: unknown unit {other:?} (B, KiB, MiB, GiB)")),
    };
    let bytes = n.checked_mul(scale).ok_or_else(|| format!("invalid size {text:?}: too large"))?;
    if bytes < 1 << 20 {
        return Err(format!("size {text:?} is too small (at least 1MiB)"));
    }
    Ok(bytes)
}

/// A size as [`parse_size`] reads it, in the largest unit that divides it.
pub fn format_size(bytes: u64) -> String {
    match bytes {
        b if b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

/// The longest duration any setting takes: a year. Longer ones mean "never" in practice, and
/// an instant that far ahead overflows the clock (`session_ttl = "18446744073709551615"` in a
/// repository's `.claude/ccmem.toml` panicked the project's task at every session start).
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 86_400);

/// Parses a human duration: a sequence of `<number><unit>` with units `ms`, `s`, `m`, `h`,
/// `d` (`2s`, `15m`, `1h30m`, `250ms`). A bare number is seconds. At most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = parse_unbounded(text)?;
    within_max(d).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

/// `d` if it is at most [`MAX_DURATION`].
pub fn within_max(d: Duration) -> Result<Duration, String> {
    if d > MAX_DURATION {
        return Err(format!("longer than the longest allowed ({}d)", MAX_DURATION.as_secs() / 86_400));
    }
    Ok(d)
}

fn parse_unbounded(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("invalid duration {text:?}: expected a number at {rest:?} (e.g. 2s, 15m, 24h)"));
        }
        let n: u64 = rest[..digits].parse().map_err(|_| format!("invalid duration {text:?}: number too large"))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let one = match unit {
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            "d" => Duration::from_secs(86_400),
            _ => return Err(format!("invalid duration {text:?}: unknown unit {unit:?} (use ms, s, m, h or d)")),
        };
        let part = one
            .checked_mul(u32::try_from(n).map_err(|_| format!("invalid duration {text:?}: number too large"))?)
            .ok_or_else(|| format!("invalid duration {text:?}: too long"))?;
        total = total.checked_add(part).ok_or_else(|| format!("invalid duration {text:?}: too long"))?;
    }
    Ok(total)
}

/// A duration as the flags take it: `15m`, `1h30m`, `250ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".into();
    }
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let mut secs = d.as_secs();
    let mut out = String::new();
    for (unit, n) in [("h", 3600), ("m", 60), ("s", 1)] {
        if secs >= n {
            out.push_str(&format!("{}{unit}", secs / n));
            secs %= n;
        }
    }
    out
}

/// Which settings the command line and the environment gave: flag id → where from.
pub fn given(m: &clap::ArgMatches) -> std::collections::BTreeMap<String, String> {
    use clap::parser::ValueSource;
    let mut out = std::collections::BTreeMap::new();
    // Built once, and only when a value came from the environment.
    let cmd = std::cell::OnceCell::new();
    for id in m.ids() {
        let from = match m.value_source(id.as_str()) {
            Some(ValueSource::CommandLine) => "command line".to_string(),
            Some(ValueSource::EnvVariable) => {
                let env = cmd
                    .get_or_init(<Args as clap::CommandFactory>::command)
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .and_then(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                format!("environment {env}")
            }
            _ => continue,
        };
        out.insert(id.to_string(), from);
    }
    out
}

/// A period, or never (`off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Every(pub Option<Duration>);

/// A positive duration, or `off` (also `0`, `never`, `false`, `no`).
pub fn parse_interval_or_off(text: &str) -> Result<Every, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "off" | "never" | "false" | "no" | "0" => Ok(Every(None)),
        _ => parse_positive_duration(text).map(|d| Every(Some(d))),
    }
}

/// A duration of at least 10 ms: zero would mean "never" or "always", neither meant.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(10) {
        return Err(format!("duration {text:?} is too short (at least 10ms)"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512 MB"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        for bad in ["", "GiB", "1.5GiB", "10KiB", "1 parsec", "99999999999999GiB"] {
            assert!(parse_size(bad).is_err(), "{bad:?} taken");
        }
        for s in ["1GiB", "3MiB", "1536MiB"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        for d in ["15m", "24h", "1h30m", "250ms", "2s", "26h"] {
            assert_eq!(format_duration(parse_duration(d).unwrap()), d);
        }
        assert_eq!(parse_interval_or_off("off"), Ok(Every(None)));
        assert_eq!(parse_interval_or_off("10s"), Ok(Every(Some(Duration::from_secs(10)))));
        assert!(parse_interval_or_off("1ms").is_err());
        for bad in ["", "s", "5x", "1.5h", "-3s", "h5"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
