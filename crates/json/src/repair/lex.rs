//! The repair parser's lexing: quotes, whitespace, words, escapes and
//! numbers, the pieces the parser and the string boundaries share.
//!
//! Where a piece means what it means in strict JSON it is `json`'s own:
//! an escape is read by `json::unescape::escape` (the short escapes by its
//! table), a number literal's bytes are `json::is_number_byte`, a string's
//! plain run ends where `json::plain_run_end` says. What the parser
//! accepts beyond JSON is its policy, stated here: Note [Lenient escapes],
//! Note [Digit separators].

use serde_json::Number;

use super::node::Node;
use crate::Repair;
use crate::is_number_byte;
use crate::unescape::{Escape, SHORT_ESCAPES, escape as json_escape};

/// Where a string sits: it decides what may follow its closing quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    Key,
    /// A member value (or a top-level value).
    Object,
    Array,
    Tuple,
}

/// A string's opening quote: ASCII `"`/`'`, or a typographic pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    Ascii(u8),
    /// `“` or `”` (either closes).
    SmartDouble,
    /// `‘` or `’` (either closes).
    SmartSingle,
    /// `` ` `` (closed by `` ` `` or the acute accent `´`), Note [Backtick quotes]
    /// in `parser`.
    Backtick,
}

/// The escape at `at` of `src` (its backslash) written to `out`: where the
/// escape ends, and the repair it takes, if any.
///
/// Note [Lenient escapes]: an escape JSON defines is read as `json` reads
/// it (the one-letter escapes, `\uXXXX`, surrogate pairs); the rest is the
/// repair policy:
/// - a lone surrogate (`\ud800` unpaired, `\udc00`) becomes U+FFFD and is
///   listed (Note [Replaced text] in `extract::replaced`); the text after
///   its six bytes is read on;
/// - `\u+XXX` (a `+` and three hex digits) is the character `XXX`, as
///   `u32::from_str_radix` read the four digits before the lexer was shared
///   (kept as it was: a lexer change must not change what is repaired);
/// - `\u` cut by the end of the input (fewer than four bytes left, all hex)
///   drops the partial escape, [`Repair::Truncated`];
/// - `\u` without four hex digits is dropped, [`Repair::InvalidEscape`],
///   and what follows it is read as text;
/// - a backslash at the very end is dropped;
/// - any other escape (`\'`, `\x`, `\é`) keeps its character without the
///   backslash, [`Repair::InvalidEscape`] except for `\'` (a quote escaped
///   the way single-quoted strings escape it).
pub(super) fn escape(src: &[u8], at: usize, out: &mut Vec<u8>) -> (usize, Option<Repair>) {
    let Some(&c) = src.get(at + 1) else {
        // Cut right after the backslash: drop it.
        return (at + 1, None);
    };
    let short = SHORT_ESCAPES[usize::from(c)];
    if short != 0 {
        out.push(short);
        return (at + 2, None);
    }
    if c == b'u' {
        let (ch, used, repair) = match json_escape(src.get(at + 1..).unwrap_or_default()) {
            Escape::Char(ch, used) => (ch, used, None),
            Escape::Surrogate => ('\u{FFFD}', 5, Some(Repair::ReplacedInvalidText)),
            Escape::Bad => {
                let Some(ch) = plus_hex3(src.get(at + 2..at + 6)) else {
                    let rest = src.get(at + 2..).unwrap_or_default();
                    if rest.len() < 4 && rest.iter().all(u8::is_ascii_hexdigit) {
                        // Cut inside `\uXXXX`: drop the partial escape.
                        return (src.len(), Some(Repair::Truncated));
                    }
                    return (at + 2, Some(Repair::InvalidEscape));
                };
                (ch, 5, None)
            }
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        return (at + 1 + used, repair);
    }
    // `c` may start a multi-byte character; copy bytes up to the next boundary.
    let mut end = at + 2;
    while src.get(end).is_some_and(|b| (b & 0xC0) == 0x80) {
        end += 1;
    }
    out.extend_from_slice(src.get(at + 1..end).unwrap_or_default());
    (end, (c != b'\'').then_some(Repair::InvalidEscape))
}

/// The character of four bytes `+XXX` (Note [Lenient escapes]).
fn plus_hex3(b: Option<&[u8]>) -> Option<char> {
    let [b'+', digits @ ..] = b? else {
        return None;
    };
    let mut n = 0u32;
    for &c in digits {
        n = n * 16 + char::from(c).to_digit(16)?;
    }
    char::from_u32(n)
}

/// Where the number-like run at `start` ends, and whether it held a digit
/// separator.
///
/// Note [Digit separators]: `1_234.5_6` is a number with Python/JS digit
/// separators; an `_` counts only between two digits. The other bytes are
/// those of a JSON number literal (`json::is_number_byte`), in any order:
/// the parser then decides what the run is (a number, a cut number, a word).
pub(super) fn number_end(src: &[u8], start: usize) -> (usize, bool) {
    let mut i = start;
    let mut separated = false;
    while let Some(&b) = src.get(i) {
        let separator = b == b'_'
            && i > start
            && src.get(i - 1).is_some_and(u8::is_ascii_digit)
            && src.get(i + 1).is_some_and(u8::is_ascii_digit);
        if !(separator || is_number_byte(b)) {
            break;
        }
        separated |= separator;
        i += 1;
    }
    (i, separated)
}

/// The kind of the typographic quote `“ ” ‘ ’` at the start of `b`, if any.
pub(super) fn smart_quote(b: &[u8]) -> Option<Quote> {
    match b.get(..3)? {
        [0xE2, 0x80, 0x9C | 0x9D] => Some(Quote::SmartDouble),
        [0xE2, 0x80, 0x98 | 0x99] => Some(Quote::SmartSingle),
        _ => None,
    }
}

/// The length of the Unicode space at the start of `b` (no-break space,
/// the U+2000 block, zero-width space, narrow and math spaces, ideographic
/// space, BOM), if any.
pub(super) fn unicode_space_len(b: &[u8]) -> Option<usize> {
    match b.get(..2)? {
        [0xC2, 0xA0] => return Some(2),
        [0xE2 | 0xE3 | 0xEF, _] => {}
        _ => return None,
    }
    match b.get(..3)? {
        [0xE2, 0x80, 0x80..=0x8B | 0xAF]
        | [0xE2, 0x81, 0x9F]
        | [0xE3, 0x80, 0x80]
        | [0xEF, 0xBB, 0xBF] => Some(3),
        _ => None,
    }
}

/// The index of the first byte at or after `i` of `b` that is not a space
/// or a line feed, or `b.len()`: eight bytes at a time (Note [Whitespace
/// runs] in `parser`), each test exact per byte as in `json`'s word scans.
pub(super) fn spaces_end(b: &[u8], mut i: usize) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    while let Some(word) = b.get(i..i + 8) {
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(word);
        let w = u64::from_le_bytes(w8);
        let t = w & LOW7;
        // The high bit of a byte stays clear where it is a space or `\n`.
        let not_space = (t ^ (ONES * u64::from(b' '))) + LOW7;
        let not_newline = (t ^ (ONES * u64::from(b'\n'))) + LOW7;
        let other = ((not_space & not_newline) | w) & HIGH;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while matches!(b.get(i), Some(b' ' | b'\n')) {
        i += 1;
    }
    i
}

/// A whole word that is a literal, or a JSON literal cut short (at least
/// three letters: `nul`, `tru`, `fals`), with the repair it takes.
pub(super) fn literal(w: &[u8]) -> Option<(Node<'static>, Option<Repair>)> {
    let exact = match w {
        b"true" => Some(Node::Bool(true)),
        b"false" => Some(Node::Bool(false)),
        b"null" => Some(Node::Null),
        _ => None,
    };
    if let Some(v) = exact {
        return Some((v, None));
    }
    match w {
        b"True" => return Some((Node::Bool(true), Some(Repair::PythonLiteral))),
        b"False" => return Some((Node::Bool(false), Some(Repair::PythonLiteral))),
        b"None" => return Some((Node::Null, Some(Repair::PythonLiteral))),
        b"undefined" | b"NaN" | b"Infinity" => return Some((Node::Null, Some(Repair::JsLiteral))),
        _ => {}
    }
    if w.len() >= 3 {
        for (full, v) in [
            (&b"true"[..], Node::Bool(true)),
            (&b"false"[..], Node::Bool(false)),
            (&b"null"[..], Node::Null),
        ] {
            if full.starts_with(w) {
                return Some((v, Some(Repair::Truncated)));
            }
        }
    }
    None
}

/// The literal an identifier word `w` spells, with the repair it takes:
/// `true`, `false`, `null` as they stand; Python's spellings and every
/// other case of `true`, `false`, `null`, `none` ([`Repair::PythonLiteral`]);
/// `undefined`, `NaN`, `Infinity` as `null` (Note [Non-finite numbers]
/// in `parser`, [`Repair::JsLiteral`]). The parser's `word` and the lax
/// walk (Note [Lax one pass] in `minify`) read words by this one table.
pub(crate) fn word_literal(w: &[u8]) -> Option<(Node<'static>, Option<Repair>)> {
    Some(match w {
        b"true" => (Node::Bool(true), None),
        b"false" => (Node::Bool(false), None),
        b"null" => (Node::Null, None),
        _ if w.eq_ignore_ascii_case(b"true") => (Node::Bool(true), Some(Repair::PythonLiteral)),
        _ if w.eq_ignore_ascii_case(b"false") => (Node::Bool(false), Some(Repair::PythonLiteral)),
        _ if w.eq_ignore_ascii_case(b"null") || w.eq_ignore_ascii_case(b"none") => {
            (Node::Null, Some(Repair::PythonLiteral))
        }
        b"undefined" | b"NaN" | b"Infinity" => (Node::Null, Some(Repair::JsLiteral)),
        _ => return None,
    })
}

/// Whether the byte at `i`, right after a run of number bytes, glues the
/// run into a word (`3rd`, `1h`) or text (`12345/67890`, `12:30`): the
/// run is then no number (the parser's `number_or_word`).
pub(crate) fn glues_number(src: &[u8], i: usize) -> bool {
    src.get(i).is_some_and(|&b| {
        is_ident_start(b)
            || b >= 0x80
            || (b == b'/' && !matches!(src.get(i + 1), Some(b'/' | b'*')))
            || (b == b':' && src.get(i + 1).is_some_and(u8::is_ascii_digit))
    })
}

pub(crate) fn parse_number(s: &str) -> Option<Node<'static>> {
    if s.is_empty() {
        return None;
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        if let Ok(i) = s.parse::<i64>() {
            return Some(Node::Number(i.into()));
        }
        if let Ok(u) = s.parse::<u64>() {
            return Some(Node::Number(u.into()));
        }
    }
    let f: f64 = s.parse().ok()?;
    Some(Number::from_f64(f).map_or(Node::Null, Node::Number))
}

/// A byte [`Parser::skip_ws`] hands to the loop: one that can start
/// whitespace or a comment.
pub(super) fn starts_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'#' | 0xC2..=0xEF)
}

pub(crate) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

pub(crate) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Bytes an unquoted key may hold (non-ASCII included, so `{ключ: 1}` works).
pub(crate) fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-' | b'.') || b >= 0x80
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The parser's escape reader before it was built on `json`'s (four
    /// digits read by `u32::from_str_radix`): the reference that Note
    /// [Lenient escapes] keeps every answer of.
    fn escape_by_radix(src: &[u8], at: usize, out: &mut Vec<u8>) -> (usize, Option<Repair>) {
        let hex4 = |pos: &mut usize| -> Option<u32> {
            let s = src.get(*pos..*pos + 4)?;
            let v = u32::from_str_radix(std::str::from_utf8(s).ok()?, 16).ok()?;
            *pos += 4;
            Some(v)
        };
        let Some(&c) = src.get(at + 1) else {
            return (at + 1, None);
        };
        let mut pos = at + 2;
        let simple = match c {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            return (pos, None);
        }
        if c == b'u' {
            let Some(hi) = hex4(&mut pos) else {
                let rest = src.get(pos..).unwrap_or_default();
                if rest.len() < 4 && rest.iter().all(u8::is_ascii_hexdigit) {
                    return (src.len(), Some(Repair::Truncated));
                }
                return (pos, Some(Repair::InvalidEscape));
            };
            let ch = if (0xD800..0xDC00).contains(&hi) {
                if src.get(pos) == Some(&b'\\') && src.get(pos + 1) == Some(&b'u') {
                    let save = pos;
                    pos += 2;
                    match hex4(&mut pos) {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        }
                        _ => {
                            pos = save;
                            None
                        }
                    }
                } else {
                    None
                }
            } else {
                char::from_u32(hi)
            };
            let repair = ch.is_none().then_some(Repair::ReplacedInvalidText);
            let ch = ch.unwrap_or('\u{FFFD}');
            out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
            return (pos, repair);
        }
        let repair = (c != b'\'').then_some(Repair::InvalidEscape);
        while src.get(pos).is_some_and(|b| (b & 0xC0) == 0x80) {
            pos += 1;
        }
        out.extend_from_slice(src.get(at + 1..pos).unwrap_or_default());
        (pos, repair)
    }

    /// The parser's number run before it was a function of its own.
    fn number_end_by_loop(src: &[u8], start: usize) -> (usize, bool) {
        let mut pos = start;
        let mut separated = false;
        while let Some(&b) = src.get(pos) {
            let separator = b == b'_'
                && pos > start
                && src.get(pos - 1).is_some_and(u8::is_ascii_digit)
                && src.get(pos + 1).is_some_and(u8::is_ascii_digit);
            if !(separator || matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
                break;
            }
            separated |= separator;
            pos += 1;
        }
        (pos, separated)
    }

    /// Bytes dense in what escapes are made of: hex digits (surrogate
    /// halves `d8`/`dc` among them), `\u`, `+`, quotes, letters, UTF-8.
    fn escape_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\\u".to_vec()),
            Just(b"\\ud83d".to_vec()),
            Just(b"\\ude00".to_vec()),
            Just(b"+".to_vec()),
            Just("é".as_bytes().to_vec()),
            prop::sample::select(&b"0123456789abcdefABCDEFdDuxn'\"/\\ "[..]).prop_map(|c| vec![c]),
            any::<u8>().prop_map(|c| vec![c]),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    proptest! {
        /// Note [Lenient escapes]: every escape, valid, lenient or broken,
        /// reads as the reader before the shared lexer read it.
        #[test]
        fn escape_agrees_with_the_radix_reader(tail in escape_bytes(), lead in 0usize..3) {
            let mut src = vec![b'a'; lead];
            src.push(b'\\');
            src.extend(tail);
            let (mut got, mut want) = (vec![b'x'], vec![b'x']);
            let got_end = escape(&src, lead, &mut got);
            let want_end = escape_by_radix(&src, lead, &mut want);
            prop_assert_eq!(got_end, want_end, "{:?}", String::from_utf8_lossy(&src));
            prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&src));
        }

        /// Note [Digit separators]: the run ends where the parser's loop
        /// ended it.
        #[test]
        fn number_end_agrees_with_the_loop(
            src in "[-+.eE0-9_a ]{0,16}",
            start in 0usize..4,
        ) {
            let b = src.as_bytes();
            let start = start.min(b.len());
            prop_assert_eq!(number_end(b, start), number_end_by_loop(b, start));
        }
    }

    #[test]
    fn escape_table() {
        let rows: &[(&str, &str, usize, Option<Repair>)] = &[
            (r"\n", "\n", 2, None),
            (r"\u00e9x", "é", 6, None),
            (r"\ud83d\ude00", "😀", 12, None),
            (r"\u+041", "A", 6, None),
            (r"\ud800x", "\u{FFFD}", 6, Some(Repair::ReplacedInvalidText)),
            (r"\udc00", "\u{FFFD}", 6, Some(Repair::ReplacedInvalidText)),
            (
                r"\ud800\u0041",
                "\u{FFFD}",
                6,
                Some(Repair::ReplacedInvalidText),
            ),
            (r"\u12", "", 4, Some(Repair::Truncated)),
            (r"\uzz12", "", 2, Some(Repair::InvalidEscape)),
            (r"\'", "'", 2, None),
            ("\\é", "é", 3, Some(Repair::InvalidEscape)),
            ("\\", "", 1, None),
        ];
        for (text, want, end, repair) in rows {
            let mut out = Vec::new();
            let got = escape(text.as_bytes(), 0, &mut out);
            assert_eq!(got, (*end, *repair), "{text}");
            assert_eq!(String::from_utf8(out).unwrap(), *want, "{text}");
        }
    }
}
