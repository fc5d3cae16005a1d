//! Lenient readers over borrowed raw JSON values.
//!
//! Line decoders deserialize each line into structs of `Option<&RawValue>`:
//! `serde_json` still validates the whole line (so malformed lines are caught),
//! but nothing is built for the parts nobody reads, and a field of an
//! unexpected type is simply "absent" instead of failing the line.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The string a raw value holds, borrowed when it has no escapes.
pub fn str_of(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let text = raw?.get();
    if !text.starts_with('"') {
        return None;
    }
    if !text.contains('\\') {
        return text.get(1..text.len().saturating_sub(1)).map(Cow::Borrowed);
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// The string a raw value holds, owned.
pub fn string_of(raw: Option<&RawValue>) -> Option<String> {
    str_of(raw).map(Cow::into_owned)
}

/// Whether the raw value is exactly the boolean `true` (seed 004's strict
/// `is True`: the string `"true"` and `1` do not count).
pub fn is_true(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| r.get() == "true")
}

/// Whether the raw value is an object.
pub fn is_object(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| r.get().starts_with('{'))
}

/// Whether the raw value is an array.
pub fn is_array(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| r.get().starts_with('['))
}

/// A non-negative integer, only when the value is one.
pub fn u64_of(raw: Option<&RawValue>) -> Option<u64> {
    let text = raw?.get();
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    // `45000.0` and the like: an integral float still counts.
    match text.parse::<f64>() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Some(f as u64),
        _ => None,
    }
}

/// A number as `f64`, only when the value is one.
pub fn f64_of(raw: Option<&RawValue>) -> Option<f64> {
    let text = raw?.get();
    let first = text.as_bytes().first()?;
    if first.is_ascii_digit() || *first == b'-' {
        text.parse::<f64>().ok().filter(|f| f.is_finite())
    } else {
        None
    }
}

/// A token count the way seed 004's reference reads one (`int(v or 0)`, 0
/// when that fails): integers as is, floats truncated, numeric strings
/// parsed, `true` as 1, anything else (and negatives, which a count cannot
/// be) as 0.
pub fn token_count(raw: Option<&RawValue>) -> u64 {
    let Some(raw) = raw else { return 0 };
    let text = raw.get();
    if let Ok(n) = text.parse::<u64>() {
        return n;
    }
    if text == "true" {
        return 1;
    }
    if text.starts_with('"') {
        return str_of(Some(raw))
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    match text.parse::<f64>() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(f) if (1.0..1.8e19).contains(&f) => f.trunc() as u64,
        _ => 0,
    }
}

/// Parse a raw value into a [`Value`] (`None` for JSON `null`).
pub fn value_of(raw: Option<&RawValue>) -> Option<Value> {
    let raw = raw?;
    if raw.get() == "null" {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// The elements of a raw array (empty for anything else).
pub fn elements(raw: Option<&RawValue>) -> Vec<&RawValue> {
    if !is_array(raw) {
        return Vec::new();
    }
    raw.and_then(|r| serde_json::from_str::<Vec<&RawValue>>(r.get()).ok())
        .unwrap_or_default()
}

/// Deserialize a raw object into a borrowed struct (`None` for anything else).
pub fn object_of<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    if !is_object(raw) {
        return None;
    }
    raw.and_then(|r| serde_json::from_str::<T>(r.get()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn token_count_table() {
        let cases: &[(&str, u64)] = &[
            ("12", 12),
            ("12.9", 12),
            ("\"34\"", 34),
            ("\" 7 \"", 7),
            ("\"abc\"", 0),
            ("\"1.5\"", 0),
            ("null", 0),
            ("true", 1),
            ("false", 0),
            ("-5", 0),
            ("[1]", 0),
            ("{}", 0),
        ];
        for (text, want) in cases {
            assert_eq!(token_count(Some(&raw(text))), *want, "{text}");
        }
        assert_eq!(token_count(None), 0);
    }

    #[test]
    fn strict_true_table() {
        let cases: &[(&str, bool)] = &[
            ("true", true),
            ("\"true\"", false),
            ("1", false),
            ("false", false),
        ];
        for (text, want) in cases {
            assert_eq!(is_true(Some(&raw(text))), *want, "{text}");
        }
    }

    #[test]
    fn str_of_unescapes() {
        assert_eq!(str_of(Some(&raw(r#""a\nb""#))).as_deref(), Some("a\nb"));
        assert_eq!(str_of(Some(&raw(r#""plain""#))).as_deref(), Some("plain"));
        assert_eq!(str_of(Some(&raw("3"))), None);
    }
}
