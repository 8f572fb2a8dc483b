//! Logging to stderr with tracing: level from `RUST_LOG`, format from `--log-format`.

use crate::cli::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. A malformed `RUST_LOG` falls back to `info` with a warning
/// rather than silencing the daemon.
pub fn init(format: LogFormat) {
    let (filter, bad) = match EnvFilter::try_from_default_env() {
        Ok(f) => (f, None),
        Err(e) => (EnvFilter::new("info"), std::env::var("RUST_LOG").ok().map(|v| (v, e))),
    };
    // A stderr that breaks (a closed terminal, a reader gone) loses the log lines, nothing
    // more: tracing-subscriber would report the failed write with `eprintln!`, which panics
    // on that same stderr, in whichever task was logging (a signal handler among them).
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).log_internal_errors(false);
    match format {
        LogFormat::Pretty => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
    if let Some((value, err)) = bad.filter(|(v, _)| !v.is_empty()) {
        tracing::warn!(rust_log = %value, error = %err, "ignoring invalid RUST_LOG; logging at info");
    }
}
