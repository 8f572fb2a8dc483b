//! Text fitted to the screen: times as people read them, and strings cut or padded to a
//! column's width (as the terminal counts it: wide characters take two cells).

use chrono::{DateTime, Local, Utc};
use unicode_width::UnicodeWidthChar;

/// The view's clock: now, and the time zone times are shown in.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Now, in milliseconds since the epoch (fixed for a test's screens).
    pub now_ms: Option<i64>,
    /// Times in UTC rather than the local zone.
    pub utc: bool,
}

impl Clock {
    /// The real clock, local times.
    pub fn real() -> Self {
        Self { now_ms: None, utc: false }
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms.unwrap_or_else(|| Utc::now().timestamp_millis())
    }

    /// `ms` as `format` in the view's zone.
    pub fn format(&self, ms: i64, format: &str) -> String {
        let Some(t) = DateTime::<Utc>::from_timestamp_millis(ms) else { return String::new() };
        match self.utc {
            true => t.format(format).to_string(),
            false => t.with_timezone(&Local).format(format).to_string(),
        }
    }

    /// An ISO 8601 time as milliseconds.
    pub fn parse(iso: &str) -> Option<i64> {
        DateTime::parse_from_rfc3339(iso).ok().map(|t| t.timestamp_millis())
    }

    /// How long ago `ms` was: `just now`, `5 min ago`, `3 h ago`, `4 d ago`, else its date.
    pub fn ago(&self, ms: i64) -> String {
        let secs = (self.now_ms() - ms) / 1000;
        match secs {
            s if s < 0 => self.format(ms, "%Y-%m-%d"),
            s if s < 60 => "just now".into(),
            s if s < 3600 => format!("{} min ago", s / 60),
            s if s < 86_400 => format!("{} h ago", s / 3600),
            s if s < 30 * 86_400 => format!("{} d ago", s / 86_400),
            _ => self.format(ms, "%Y-%m-%d"),
        }
    }
}

/// The cells `s` takes.
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` in exactly `w` cells: cut with `…`, or padded with spaces.
pub fn fit(s: &str, w: usize) -> String {
    let mut out = cut(s, w);
    let pad = w.saturating_sub(width(&out));
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// `s` in at most `w` cells, cut with `…`.
pub fn cut(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    if w > 0 {
        out.push('…');
    }
    out
}

/// The first non-blank line of `s`.
pub fn first_line(s: &str) -> &str {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
}

/// A path shown short: under the home directory as `~/…`.
pub fn short_path(p: &std::path::Path) -> String {
    if let Some(home) = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()) {
        if let Ok(rest) = p.strip_prefix(&home) {
            return format!("~/{}", rest.display());
        }
    }
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_fitted_by_the_cells_it_takes() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(width(&fit("마이그레이션", 5)), 5);
        assert_eq!(cut("마이그레이션", 5), "마이…");
    }

    #[test]
    fn times_read_as_how_long_ago() {
        let c = Clock { now_ms: Some(10_000_000_000), utc: true };
        assert_eq!(c.ago(10_000_000_000 - 30_000), "just now");
        assert_eq!(c.ago(10_000_000_000 - 7_200_000), "2 h ago");
        assert_eq!(c.ago(0), "1970-01-01");
    }
}
