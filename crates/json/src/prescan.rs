//! A scan of strict JSON text that builds nothing: whether a strict parse
//! can succeed at all (Note [Doomed strict parses]), and where a value ends.

use serde_json::Value;

use super::exact::{Parsed, parse};
use super::number::number_parts;
#[cfg(vector_bytes)]
use super::scan::CHUNK;
use super::scan::plain_run_end;
use super::unescape::{Escape, SHORT_ESCAPES, escape};
use super::ws::skip_ws;

/// Parse `text` as strict JSON when it can be: `None` when it is not JSON.
///
/// Note [Doomed strict parses]: most replies that need repair get there
/// after a strict parse that fails, and that parse built a `Value` (an
/// `IndexMap` per object, every key hashed, every string copied) up to the
/// failure, often near the end (a trailing comma, a cut). A scan that builds
/// nothing (`scan_value`) decides first; only text it cannot rule out
/// goes to [`parse`], so the values are still `serde_json`'s. It rules a
/// text out only where `serde_json` refuses it as well (a grammar error);
/// anything it is unsure of (a `\u` surrogate escape, a number not surely
/// exact, deep nesting) is parsed (`precheck_never_refuses_what_serde_reads`).
/// Measured with the reader of Note [Reading reply lines] and Note [Short
/// runs] together (`extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical): 2.104 → 1.998 billion instructions
/// (−5%); wall and user time on the loaded 2-core machine moved within
/// their noise (user −8% ± 10%).
pub fn parse_if_json(text: &str) -> Option<Parsed> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    match scan_value(b, start, 0) {
        Scan::Value(end) if skip_ws(b, end) != b.len() => None,
        Scan::Invalid => None,
        // Every number literal was surely exact (`scan_number`), so the
        // second pass of Note [Big numbers] (`has_float`, then
        // `any_inexact` over the whole text when a float is held) has
        // nothing to find.
        Scan::Value(_) => serde_json::from_str::<Value>(text)
            .ok()
            .map(|value| Parsed {
                value,
                inexact: Vec::new(),
            }),
        Scan::Doubtful => parse(text).ok(),
    }
}

/// What [`scan_value`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// A JSON value that ends just before this index.
    Value(usize),
    /// Not JSON: `serde_json` refuses it too.
    Invalid,
    /// JSON by the grammar so far, but `serde_json` may read it differently
    /// or refuse it: a `\u` escape of a surrogate, a number literal that is
    /// not surely exact (Note [Big numbers]), nesting deeper than
    /// [`SCAN_DEPTH`]. The scan stops there.
    Doubtful,
}

/// Deepest nesting [`scan_value`] follows (`serde_json` refuses beyond 128).
const SCAN_DEPTH: usize = 100;

/// Scan the JSON value at `i` of `b` (no whitespace before it), building
/// nothing: the grammar of RFC 8259, as `serde_json` reads it.
///
/// Note [Calls per container]: inlined, so that an object's or array's
/// strings, numbers and literals are read in its own loop and only a
/// nested object or array is a call ([`scan_object`], [`scan_array`]):
/// the call per member value (five registers saved and restored, the
/// dispatch) cost about as much as the short strings it read. Measured
/// (callgrind, `extract --jsonl --json` on the 20,000-reply bench corpus,
/// output byte-identical, release with thin LTO): 0.903 → 0.897 billion
/// instructions (−0.7%); `reply_of_line_into` with what it calls 239.5 →
/// 233.2 million.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn scan_value(b: &[u8], i: usize, depth: usize) -> Scan {
    match b.get(i) {
        Some(b'"') => scan_string(b, i),
        Some(b'{') => scan_object(b, i, depth + 1),
        Some(b'[') => scan_array(b, i, depth + 1),
        Some(b't') => scan_literal(b, i, b"true"),
        Some(b'f') => scan_literal(b, i, b"false"),
        Some(b'n') => scan_literal(b, i, b"null"),
        Some(b'-' | b'0'..=b'9') => scan_number(b, i),
        _ => Scan::Invalid,
    }
}

fn scan_literal(b: &[u8], i: usize, word: &[u8]) -> Scan {
    match b.get(i..i + word.len()) {
        Some(w) if w == word => Scan::Value(i + word.len()),
        _ => Scan::Invalid,
    }
}

#[inline(never)]
fn scan_array(b: &[u8], i: usize, depth: usize) -> Scan {
    if depth > SCAN_DEPTH {
        return Scan::Doubtful;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Scan::Value(j + 1);
    }
    loop {
        match scan_value(b, j, depth) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Scan::Value(j + 1),
            _ => return Scan::Invalid,
        }
    }
}

#[inline(never)]
fn scan_object(b: &[u8], i: usize, depth: usize) -> Scan {
    if depth > SCAN_DEPTH {
        return Scan::Doubtful;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Scan::Value(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return Scan::Invalid;
        }
        match scan_string(b, j) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        if b.get(j) != Some(&b':') {
            return Scan::Invalid;
        }
        match scan_value(b, skip_ws(b, j + 1), depth) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Scan::Value(j + 1),
            _ => return Scan::Invalid,
        }
    }
}

/// The string at `i` (a `"`): its escapes are checked, nothing is copied.
///
/// Note [Inlined string scans]: most strings [`scan_value`] meets are keys
/// and short values that end within 16 bytes with no escape. Those are
/// read here, inlined into the callers (one vector mask of the 16 bytes
/// after the quote, Note [Vector byte masks] in `bytescan`); the rest go to
/// [`scan_string_slow`], whose escape handling (the `\u` reader is a call)
/// made every call save and restore six registers, ~25 of the ~60
/// instructions a string cost. Measured (callgrind, `extract --jsonl
/// --json` on the 20,000-reply bench corpus, output byte-identical,
/// release with thin LTO; with the first bracket-scan change of Note
/// [Vector bracket scan]): 0.931 → 0.903 billion instructions;
/// `reply_of_line_into` with what it calls 261 → 240 million, the out of
/// line [`scan_string_slow`] 10.7 million where `scan_string` was 54.1.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn scan_string(b: &[u8], i: usize) -> Scan {
    #[cfg(vector_bytes)]
    if let Some(chunk) = b.get(i + 1..i + 1 + CHUNK) {
        if let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) {
            let stops = crate::bytescan::quote_stops(chunk);
            let k = stops.trailing_zeros() as usize;
            if chunk.get(k) == Some(&b'"') {
                return Scan::Value(i + 1 + k + 1);
            }
        }
    }
    scan_string_slow(b, i)
}

/// [`scan_string`] past its first 16 bytes, or with an escape there.
#[inline(never)]
fn scan_string_slow(b: &[u8], i: usize) -> Scan {
    let mut j = i + 1;
    loop {
        j = plain_run_end(b, j, b'"', b'"');
        match b.get(j) {
            Some(b'"') => return Scan::Value(j + 1),
            Some(b'\\') => {
                let e = b.get(j + 1).copied().unwrap_or_default();
                if SHORT_ESCAPES[usize::from(e)] != 0 {
                    j += 2;
                    continue;
                }
                match escape(b.get(j + 1..).unwrap_or_default()) {
                    Escape::Char(_, used) => j += 1 + used,
                    Escape::Surrogate => return Scan::Doubtful,
                    Escape::Bad => return Scan::Invalid,
                }
            }
            // The end of the text, or a raw control character.
            _ => return Scan::Invalid,
        }
    }
}

/// The number literal at `i`; [`Scan::Doubtful`] when it is JSON but not
/// surely exact (Note [Big numbers]).
///
/// The digits are counted while the literal is read (`number_parts`, the
/// one number grammar), the same test as [`surely_exact`](super::exact::surely_exact)
/// (at most 15 significant digits, an exponent of at most two) without
/// walking the literal again (`scan_number_agrees_with_the_two_pass_scan`).
/// What follows the literal is the caller's to check, as for any value.
fn scan_number(b: &[u8], i: usize) -> Scan {
    match number_parts(b, i) {
        None => Scan::Invalid,
        Some(n) if n.int_end - n.int_start + n.fraction <= 15 && n.exponent <= 2 => {
            Scan::Value(n.end)
        }
        Some(_) => Scan::Doubtful,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::surely_exact;
    use crate::tests::{mangled_strategy, raw_body_strategy, value_strategy};

    proptest::proptest! {
        /// Note [Doomed strict parses]: the pre-check never turns away
        /// text `serde_json` reads, and whatever it lets through gets
        /// `parse`'s answer.
        #[test]
        fn precheck_never_refuses_what_serde_reads(t in mangled_strategy(), v in value_strategy()) {
            for text in [t, serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
                proptest::prop_assert_eq!(parse_if_json(&text), parse(&text).ok(), "{:?}", text);
            }
        }
    }

    proptest::proptest! {
        /// Note [Inlined string scans]: the inlined first chunk gives the
        /// slow scan's verdict, wherever the string ends (or is cut).
        #[test]
        fn scan_string_agrees_with_the_slow_scan(
            body in raw_body_strategy(),
            after in "[ ,}\\]a\"]{0,20}",
            cut in 0usize..200,
        ) {
            let mut line = vec![b'"'];
            line.extend_from_slice(&body);
            line.push(b'"');
            line.extend_from_slice(after.as_bytes());
            let cut = cut % (line.len() + 1);
            for text in [&line[..], &line[..cut.max(1)]] {
                proptest::prop_assert_eq!(scan_string(text, 0), scan_string_slow(text, 0), "{:?}", String::from_utf8_lossy(text));
            }
        }

        /// `scan_number` counts digits as it reads: the same verdict as
        /// the two-pass scan it replaced, on numbers and near-numbers.
        #[test]
        fn scan_number_agrees_with_the_two_pass_scan(
            text in proptest::prelude::prop_oneof![
                "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{0,20})?([eE][+-]?[0-9]{0,4})?[,\\]} a.eE+-]{0,2}",
                "[-+0-9.eE ]{0,12}",
            ],
        ) {
            proptest::prop_assert_eq!(
                scan_number(text.as_bytes(), 0),
                scan_number_two_pass(text.as_bytes(), 0),
                "{}",
                text
            );
        }
    }

    /// The number scan before digits were counted on the way: the literal
    /// read, then `surely_exact` over it.
    fn scan_number_two_pass(b: &[u8], i: usize) -> Scan {
        let digits = |mut k: usize| {
            while b.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            k
        };
        let mut j = i;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        match b.get(j) {
            Some(b'0') => j += 1,
            Some(b'1'..=b'9') => j = digits(j + 1),
            _ => return Scan::Invalid,
        }
        if b.get(j) == Some(&b'.') {
            let end = digits(j + 1);
            if end == j + 1 {
                return Scan::Invalid;
            }
            j = end;
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            j += 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let end = digits(j);
            if end == j {
                return Scan::Invalid;
            }
            j = end;
        }
        if surely_exact(b.get(i..j).unwrap_or_default()) {
            Scan::Value(j)
        } else {
            Scan::Doubtful
        }
    }

    #[test]
    fn scan_table() {
        let rows: &[(&str, Scan)] = &[
            ("{}", Scan::Value(2)),
            (
                r#"{"a": [1, -0.5e+3, true, false, null, "x\"\u00e9"]} x"#,
                Scan::Value(51),
            ),
            ("[1,]", Scan::Invalid),
            ("{'a': 1}", Scan::Invalid),
            ("{a: 1}", Scan::Invalid),
            (r#"{"a": 1,}"#, Scan::Invalid),
            (r#"{"a" 1}"#, Scan::Invalid),
            ("[01]", Scan::Invalid),
            ("[1.]", Scan::Invalid),
            ("[.5]", Scan::Invalid),
            ("[1e]", Scan::Invalid),
            ("[+1]", Scan::Invalid),
            ("[True]", Scan::Invalid),
            ("[nul]", Scan::Invalid),
            ("[\"a\nb\"]", Scan::Invalid),
            (r#"["\x"]"#, Scan::Invalid),
            (r#"["\u12"]"#, Scan::Invalid),
            ("[1", Scan::Invalid),
            ("", Scan::Invalid),
            ("[1e400]", Scan::Doubtful),
            ("[12345678901234567890]", Scan::Doubtful),
            (r#"["\udc00"]"#, Scan::Doubtful),
            (r#"["\ud800x"]"#, Scan::Doubtful),
        ];
        for (text, want) in rows {
            assert_eq!(scan_value(text.as_bytes(), 0, 0), *want, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan_value(deep.as_bytes(), 0, 0), Scan::Doubtful);
        let deep_bad = format!("{}1,]{}", "[".repeat(50), "]".repeat(49));
        assert_eq!(scan_value(deep_bad.as_bytes(), 0, 0), Scan::Invalid);
    }
}
