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

/// The modification time of `p`, if it exists.
pub fn modified(p: &Path) -> Option<DateTime<Utc>> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok().map(DateTime::<Utc>::from)
}
