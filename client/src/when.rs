//! Times as people type them on a command line: a date (`2026-11-02`, `2026-11-02T14:00`,
//! RFC 3339), or a while ago (`2 weeks`, `3d`, `12h`, `30 min`, `yesterday`, `today`).

use chrono::{DateTime, Duration, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// `typed` as the end of the span it names: a plain date (`2026-11-02`, `yesterday`) is its
/// day's last millisecond, so that `--until 2026-11-02` holds that day; anything else as
/// [`parse`] reads it.
pub fn parse_until(typed: &str, now: DateTime<Utc>) -> Result<i64, String> {
    let start = parse(typed, now)?;
    let t = typed.trim().to_lowercase();
    let whole_day = matches!(t.as_str(), "today" | "yesterday") || NaiveDate::parse_from_str(&t, "%Y-%m-%d").is_ok();
    Ok(if whole_day { start + 86_400_000 - 1 } else { start })
}

/// `typed` as milliseconds since the epoch, read against `now`; or why it cannot be read.
pub fn parse(typed: &str, now: DateTime<Utc>) -> Result<i64, String> {
    let t = typed.trim().to_lowercase();
    let t = t.strip_suffix(" ago").unwrap_or(&t).trim();
    let local_midnight = |d: NaiveDate| {
        Local.from_local_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default()).earliest().map(|x| x.with_timezone(&Utc))
    };
    match t {
        "now" => return Ok(now.timestamp_millis()),
        "today" | "yesterday" => {
            let today = now.with_timezone(&Local).date_naive();
            let day = if t == "today" { today } else { today - Duration::days(1) };
            return local_midnight(day).map(|d| d.timestamp_millis()).ok_or_else(|| bad(typed));
        }
        _ => {}
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(d.timestamp_millis());
    }
    for format in ["%Y-%m-%dt%H:%M:%S", "%Y-%m-%dt%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, format) {
            return Local.from_local_datetime(&d).earliest().map(|x| x.timestamp_millis()).ok_or_else(|| bad(typed));
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return local_midnight(d).map(|d| d.timestamp_millis()).ok_or_else(|| bad(typed));
    }
    let ago = while_ago(t).ok_or_else(|| bad(typed))?;
    now.checked_sub_signed(ago)
        .map(|t| t.timestamp_millis())
        .ok_or_else(|| format!("{typed:?} is further back than any time ccmem can count"))
}

/// `2 weeks`, `3d`, `12h`, `1 month`: how long.
fn while_ago(t: &str) -> Option<Duration> {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let n: i64 = if digits == 0 { 1 } else { t[..digits].parse().ok()? };
    let unit = t[digits..].trim();
    let unit = unit.strip_prefix("a ").unwrap_or(unit).trim_end_matches('s');
    let per = match unit {
        "m" | "min" | "minute" => Duration::minutes(1),
        "h" | "hr" | "hour" => Duration::hours(1),
        "d" | "day" => Duration::days(1),
        "w" | "wk" | "week" => Duration::weeks(1),
        "mo" | "month" => Duration::days(30),
        "y" | "yr" | "year" => Duration::days(365),
        _ => return None,
    };
    per.checked_mul(i32::try_from(n).ok()?).filter(|d| d.num_days() <= 365 * 1000)
}

fn bad(typed: &str) -> String {
    format!("cannot read {typed:?} as a time: give a date (2026-11-02, 2026-11-02T14:00) or a while ago (2 weeks, 3d, 12h, yesterday)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_whiles_ago() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap();
        let ms = |d: Duration| (now - d).timestamp_millis();
        assert_eq!(parse("2 weeks", now), Ok(ms(Duration::weeks(2))));
        assert_eq!(parse("3d", now), Ok(ms(Duration::days(3))));
        assert_eq!(parse("12 hours ago", now), Ok(ms(Duration::hours(12))));
        assert_eq!(parse("a week", now), Ok(ms(Duration::weeks(1))));
        assert_eq!(
            parse("2026-11-02T10:00:00Z", now),
            Ok(Utc.with_ymd_and_hms(2026, 11, 2, 10, 0, 0).unwrap().timestamp_millis())
        );
        assert!(parse("2026-11-02", now).is_ok());
        assert!(parse("yesterday", now).unwrap() < now.timestamp_millis());
        assert!(parse("soon", now).unwrap_err().contains("cannot read"));
        assert!(parse("99999999999 years", now).is_err());
        assert!(parse("99999999d", now).is_err(), "no overflow, a clear error");
        let day = parse("2026-11-02", now).unwrap();
        assert_eq!(parse_until("2026-11-02", now), Ok(day + 86_400_000 - 1));
        assert_eq!(parse_until("3d", now), parse("3d", now));
    }
}
