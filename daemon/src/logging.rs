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
    let json = matches!(format, LogFormat::Json);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || Redacting { json, line: Vec::new() })
        .log_internal_errors(false);
    match format {
        LogFormat::Pretty => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
    if let Some((value, err)) = bad.filter(|(v, _)| !v.is_empty()) {
        tracing::warn!(rust_log = %value, error = %err, "ignoring invalid RUST_LOG; logging at info");
    }
}

/// One log event's output, written to stderr through the redaction filter when it is
/// dropped (the formatter makes one writer per event): log lines name project paths, a
/// refused hook's directory and errors that quote files, and any of them can hold a token,
/// which the log file (the daemon's stderr) must not.
struct Redacting {
    json: bool,
    line: Vec<u8>,
}

impl std::io::Write for Redacting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Redacting {
    fn drop(&mut self) {
        use std::io::Write;
        let text = String::from_utf8_lossy(&self.line);
        let out = redacted(&text, self.json);
        // Nothing to do about a stderr that fails (see `init`).
        let _ = match out {
            Some(clean) => std::io::stderr().lock().write_all(clean.as_bytes()),
            None => std::io::stderr().lock().write_all(&self.line),
        };
    }
}

/// `text` (one event's lines) redacted, or None when the filter finds nothing (the line is
/// written as it is, colours and all). A JSON line is redacted value by value, so that it
/// stays JSON.
fn redacted(text: &str, json: bool) -> Option<String> {
    if json {
        let mut out = String::with_capacity(text.len());
        let mut changed = false;
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches('\n');
            match serde_json::from_str::<serde_json::Value>(body) {
                Ok(mut v) => {
                    let before = v.clone();
                    crate::text::redact_json(&mut v);
                    if v == before {
                        out.push_str(line);
                    } else {
                        changed = true;
                        out.push_str(&v.to_string());
                        out.push_str(&line[body.len()..]);
                    }
                }
                Err(_) => {
                    let r = ccmem_proto::redact::redact(line);
                    changed |= r != ccmem_proto::printable::text(line);
                    out.push_str(&r);
                }
            }
        }
        return changed.then_some(out);
    }
    let r = ccmem_proto::redact::redact(text);
    (r != ccmem_proto::printable::text(text)).then(|| r.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the independent tester: a project's path and a refused hook's directory
    /// were logged with the token they held.
    #[test]
    fn log_lines_are_redacted_and_stay_json() {
        let line = "2026-01-01T00:00:00Z  INFO ccmemd: hook not recorded cwd=/etc/xoxb-123456789012-1234567890123-LoG4E5fG7hJ9kL1mN3pQ5rS\n";
        let out = redacted(line, false).expect("found");
        assert!(out.contains("cwd=/etc/[REDACTED:slack-token]") && out.ends_with('\n'), "{out}");
        assert_eq!(redacted("2026 INFO ccmemd: session started project=/w/app\n", false), None);
        let json = r#"{"level":"INFO","project":"/tmp/proj_ghp_Pj7mE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zD7","message":"session started"}"#;
        let out = redacted(&format!("{json}\n"), true).expect("found");
        let v: serde_json::Value = serde_json::from_str(out.trim_end()).expect("still JSON");
        assert_eq!(v["project"], "/tmp/proj_[REDACTED:github-token]");
        assert_eq!(redacted("{\"message\":\"ready\"}\n", true), None);
    }
}
