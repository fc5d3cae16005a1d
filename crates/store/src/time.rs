//! UTC timestamps as RFC 3339 text (`2025-07-14T03:12:09.123Z`).
//!
//! Note \[Text timestamps\]: timestamps are stored as fixed-width UTC RFC 3339
//! strings with milliseconds, so they read well in `sqlite3` and compare
//! correctly as text (`created_at >= ?` works for windows and pruning). The
//! calendar work is jiff's (maintained, no time-zone database needed for
//! UTC); this module only pins the one format we write and the forms we read.
//!
//! Note \[Reading old timestamps\]: [`parse_ms`] reads what any store may
//! hold: our own format, RFC 3339 without fractions or with any number of
//! fraction digits, any offset (`+02:00`), lower-case `t`/`z`, a space for
//! `T`, and a civil time with no offset at all (taken as UTC: every writer of
//! ours wrote UTC). Fractions below a millisecond are dropped, never rounded
//! up, so a parsed time never lands after the instant written.

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::fmt::temporal::DateTimePrinter;
use jiff::tz::TimeZone;

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
///
/// Instants outside jiff's range (years -9999 to 9999) are clamped to its
/// ends: no caller stores such times, and a clamped string still sorts in
/// the right place.
pub fn format_ms(ms: i64) -> String {
    let at = Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    DateTimePrinter::new()
        .precision(Some(3))
        .timestamp_to_string(&at)
}

/// Milliseconds since the epoch of a stored timestamp (Note \[Reading old
/// timestamps\]); `None` when the text is no date-time.
pub fn parse_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(at) = t.parse::<Timestamp>() {
        return Some(at.as_millisecond());
    }
    let civil: DateTime = t.parse().ok()?;
    civil
        .to_zoned(TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

/// Parse a duration such as `30d`, `12h`, `45m`, `90s` or `500ms` into
/// milliseconds (core's parser, which the alert rules use too).
pub use agentshape_core::duration::parse_ms as parse_duration_ms;

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
            assert_eq!(parse_ms(want), Some(ms), "{want}");
        }
    }

    #[test]
    fn parses_what_older_stores_hold() {
        let cases = [
            ("2025-07-14T03:12:09.123Z", Some(1_752_462_729_123)),
            ("2025-07-14T03:12:09Z", Some(1_752_462_729_000)),
            ("2025-07-14T03:12:09.1Z", Some(1_752_462_729_100)),
            ("2025-07-14T03:12:09.123999Z", Some(1_752_462_729_123)),
            ("2025-07-14t03:12:09.123z", Some(1_752_462_729_123)),
            ("2025-07-14 03:12:09.123Z", Some(1_752_462_729_123)),
            ("2025-07-14T05:12:09.123+02:00", Some(1_752_462_729_123)),
            ("2025-07-14T03:12:09.123", Some(1_752_462_729_123)),
            ("2025-07-14T03:12:09", Some(1_752_462_729_000)),
            (" 2025-07-14T03:12:09.123Z\n", Some(1_752_462_729_123)),
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("2025-13-01T00:00:00Z", None),
            ("2025-02-30T00:00:00Z", None),
            ("yesterday", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_ms(text), want, "{text:?}");
        }
    }

    #[test]
    fn out_of_range_instants_clamp_and_keep_the_shape() {
        assert!(format_ms(i64::MIN).starts_with("-009999-01-0"));
        assert!(format_ms(i64::MAX).starts_with("9999-12-"));
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
