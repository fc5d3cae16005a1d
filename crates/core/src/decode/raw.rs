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

use crate::event::Event;

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

/// The text an agent wrote (a reply's text block, a result), owned.
///
/// Note [Replaced text] in `extract::replaced`: a lone surrogate escape (`\udc00`)
/// passes the line's check (`serde_json` checks a raw value's escapes
/// only for their hex digits) but no `String` holds it, so [`str_of`]
/// drops the whole text. Here it becomes U+FFFD and an
/// [`Event::ReplacedText`] says so; the reading is tried only when
/// [`str_of`] failed, so a valid text costs nothing more.
pub fn text_of(raw: Option<&RawValue>, sink: &mut dyn FnMut(Event)) -> Option<String> {
    if let Some(text) = string_of(raw) {
        return Some(text);
    }
    let mut sequences = 0;
    let text = crate::json::unescape_lossy(raw?.get(), &mut sequences)?;
    if sequences > 0 {
        sink(Event::ReplacedText { sequences });
    }
    Some(text)
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

/// The token counts of a `usage` object, as Claude and Codex both write them.
#[derive(Deserialize)]
pub struct UsageFields<'a> {
    /// Prompt tokens.
    #[serde(borrow, default)]
    pub input_tokens: Option<&'a RawValue>,
    /// Completion tokens.
    #[serde(borrow, default)]
    pub output_tokens: Option<&'a RawValue>,
}

/// An object read in the same pass as the line around it; a value of any
/// other JSON type reads as absent instead of failing the line.
///
/// Note [One pass over assistant lines]: reading `message` as a raw value and
/// parsing it again (then `content`, then each block) scanned the bytes of a
/// tool input three times. `Lenient` and [`LenientList`] keep seed 004's
/// leniency ("`message.content` tolerated-if-missing / non-list") while
/// `serde_json` walks each byte once.
#[derive(Debug)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(std::marker::PhantomData))
    }
}

struct LenientVisitor<T>(std::marker::PhantomData<T>);

/// Every non-object value is accepted and read as absent.
macro_rules! absent {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name<E: serde::de::Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(Lenient(None))
        })*
    };
}

impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    absent!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
}

/// A list of objects read in the same pass as the line around it: a non-list
/// reads as empty, a non-object element as absent (see [`Lenient`]).
#[derive(Debug)]
pub struct LenientList<T>(pub Vec<Lenient<T>>);

impl<T> Default for LenientList<T> {
    fn default() -> Self {
        LenientList(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for LenientList<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientListVisitor(std::marker::PhantomData))
    }
}

struct LenientListVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for LenientListVisitor<T> {
    type Value = LenientList<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element::<Lenient<T>>()? {
            out.push(item);
        }
        Ok(LenientList(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(LenientList(Vec::new()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(LenientList(Vec::new()))
    }
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
