//! Time as the daemon writes and reads it: ISO 8601 stamps, and files' modification times.

use chrono::{DateTime, Utc};
use std::path::Path;

/// ISO 8601, UTC, to the second, as the seeds write it.
pub fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Parses a timestamp written by [`iso`] (or any RFC 3339 one).
pub fn parse_iso(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

/// "just now", "12 min ago", "3 h ago", "2 days ago"; "" for an unreadable time.
pub fn ago(iso: &str, now: DateTime<Utc>) -> String {
    let Some(t) = parse_iso(iso) else { return String::new() };
    let secs = (now - t).num_seconds();
    match secs {
        s if s < 60 => "just now".into(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 48 * 3600 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}

/// The modification time of `p`, if it exists.
pub fn modified(p: &Path) -> Option<DateTime<Utc>> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok().map(DateTime::<Utc>::from)
}
