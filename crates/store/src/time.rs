//! UTC timestamps as RFC 3339 text (`2025-07-14T03:12:09.123Z`).
//!
//! Note \[Text timestamps\]: timestamps are stored as fixed-width UTC RFC 3339
//! strings with milliseconds, so they read well in `sqlite3` and compare
//! correctly as text (`created_at >= ?` works for windows and pruning). The
//! formatting is ours (days-to-civil, Howard Hinnant's algorithm), to keep a
//! date crate out of the dependency tree for one function.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The current time as RFC 3339 UTC text.
pub fn now() -> String {
    format_ms(now_ms())
}

/// Format milliseconds since the epoch as RFC 3339 UTC text with milliseconds.
pub fn format_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Parse a duration such as `30d`, `12h`, `45m`, `90s` or `500ms` into milliseconds.
pub fn parse_duration_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().ok()?;
    let per = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    n.checked_mul(per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_752_462_729_123, "2025-07-14T03:12:09.123Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ];
        for (ms, want) in cases {
            assert_eq!(format_ms(ms), want, "{ms}");
        }
    }

    #[test]
    fn parses_durations() {
        let cases = [
            ("30d", Some(2_592_000_000)),
            ("4h", Some(14_400_000)),
            ("45m", Some(2_700_000)),
            ("90s", Some(90_000)),
            ("500ms", Some(500)),
            ("2w", Some(1_209_600_000)),
            ("d", None),
            ("10", None),
            ("10y", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration_ms(text), want, "{text}");
        }
    }
}
