//! The reply of one JSONL line of `extract --jsonl`, read in place (Note
//! [Reading reply lines]).

use serde_json::Value;

use super::prescan::{Scan, scan_string, scan_value};
use super::tape::Doc;
use super::unescape::unescape_into;
use super::ws::skip_ws;

/// The reply of one JSONL line read in place: the line's string, or the
/// string member `text` of its object, and the value of its member `id`
/// when present. `None` when the line has another shape or the borrowed
/// reader declines it (Note [Validating from text] in `validate`: a syntax
/// error, a repeated key, a lone surrogate, an inexact number anywhere in
/// the line); the caller then reads it with `serde_json`, which gives the
/// same answer for every line this function reads (`reply_lines_agree`).
///
/// Why: `extract --jsonl` spent a quarter of its time reading lines through
/// `serde_json`, mostly growing a scratch buffer for the escapes of `text`;
/// here `text` is unescaped into one buffer of the right size and the other
/// members are read without hashing or copying.
pub fn reply_line(line: &str) -> Option<(String, Option<Value>)> {
    let (text, id) = Doc::parse(line)?.take_reply()?;
    Some((text.into_owned(), id))
}
/// The reply of one JSONL line of `extract --jsonl`: the line's string, or
/// the string member `text` of its object, and the value of its member `id`
/// when present. `None` when the line has another shape or this reader
/// declines it (a key with an escape, a repeated `text` or `id`, anything
/// `scan_value` is not sure of, such as a number not surely exact
/// anywhere in the line); the caller then reads the line into a `Value`,
/// which gives the same answer for every line read here
/// (`reply_of_line_agrees_with_the_value_reading`).
///
/// Note [Reading reply lines]: reading lines was a fifth of
/// `extract --jsonl`: `serde_json` unescaped `text` into a scratch buffer,
/// grown escape by escape, then copied it into its `String` and checked its
/// UTF-8 again; the other members (a corpus line carries its whole
/// `expected` value) were walked through `serde`'s visitor machinery. Here
/// `text` is unescaped in one pass into a `String` allocated once (the rest
/// of the line bounds its length), and the other members are checked by
/// `scan_value` without building them.
/// Measured (criterion `extract/corpus/read` against `read/serde`, the
/// derive it replaced, 2,000 corpus lines, a loaded machine): 13.6 ms
/// against 12.4 ms ± 1 ms, so no gain shown yet; it is kept because it is
/// exact where the derive was not (`IgnoredAny` let `1e400` and lone
/// surrogates in other members through, the `Value` reading refuses them).
/// Tried and dropped: a forward scan of the other members (the stops of
/// 64 bytes found at once by `stop_mask64` when a string reached past
/// the last 64, every string end a shift and a `trailing_zeros`, the
/// grammar one loop over a stack of bits instead of recursion; exact
/// against `scan_value` by proptest): callgrind on the whole corpus
/// 1.117 → 1.126 billion instructions. The masks (47 million, ~20 a
/// line, computed at unaligned bases) cost more than the word tests they
/// replaced on strings of ~15 bytes, the per-string work stayed ~56
/// instructions, and the loop cost what the recursion did (47 against
/// 49 million).
///
/// Note [UTF-8 checked once]: the line must be UTF-8 (the `Value` reading
/// refuses it otherwise), and the unescaped `text` is checked as UTF-8 when
/// it becomes a `String`. That check covers `text`'s raw bytes too: runs
/// are copied whole between ASCII escapes, and an escape decodes to ASCII
/// or a whole character, which can neither complete a broken sequence
/// before it nor start one after it; so the output is UTF-8 exactly when
/// the raw runs are. The line is therefore checked around `text` only, not
/// whole and then `text` again (about 1,250 of a corpus line's 2,300 bytes
/// were checked twice). Measured (`extract --jsonl --json`, 20,000 bench
/// replies, output byte-identical, `perf stat -e instructions:u`): 1.683
/// → 1.662 billion instructions (−1.2%); callgrind on the first 4,000:
/// `reply_of_line` with what it calls 92.3 → 88.3 million.
pub fn reply_of_line(line: &[u8]) -> Option<(String, Option<Value>)> {
    let mut scratch = Vec::new();
    let (text, id) = reply_of_line_into(line, &mut scratch)?;
    Some((text.to_owned(), id))
}

/// [`reply_of_line`] with `text` unescaped into `scratch`, a buffer the
/// caller keeps from line to line: the text borrowed from it, and `id`.
///
/// Note [Reused text buffers]: `text` was unescaped into a `String`
/// allocated per line and zeroed over the whole rest of the line first
/// (the unescaper writes by index, Note [Escape masks]), so a corpus line
/// paid an allocation, a free and a `memset` of ~1,900 bytes (the rest of
/// `text` and the whole `expected` member) for ~1,250 bytes of text. Here
/// the buffer only grows (it is zeroed only when it must grow, so once per
/// worker up to the longest line) and the caller borrows the text. The
/// last bytes of a line, where fewer than 80 are left, go through the same
/// block walk from a padded copy instead of a word-by-word tail.
/// Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical, release with thin LTO): 1.147 → 1.117
/// billion instructions (−2.6%); `reply_of_line` with what it calls
/// 385.3 → 352.5 million, of which the unescaper (without the UTF-8
/// check, now its caller's) 188.1 → 154.9 million.
pub fn reply_of_line_into<'s>(
    line: &[u8],
    scratch: &'s mut Vec<u8>,
) -> Option<(&'s str, Option<Value>)> {
    let b = line;
    let mut i = skip_ws(b, 0);
    if b.get(i) == Some(&b'"') {
        let (len, end) = unescape_into(b, i, scratch)?;
        if skip_ws(b, end) != b.len() {
            return None;
        }
        return Some((utf8(scratch.get(..len)?)?, None));
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    // The unescaped length of `text` and where its raw string lies (Note
    // [UTF-8 checked once]).
    let mut text: Option<(usize, usize, usize)> = None;
    let mut id: Option<Value> = None;
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let Scan::Value(key_end) = scan_string(b, i) else {
            return None;
        };
        let key = b.get(i + 1..key_end - 1)?;
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = match key {
            b"text" if text.is_none() => {
                let (len, end) = unescape_into(b, i, scratch)?;
                text = Some((len, i, end));
                end
            }
            b"id" if id.is_none() => {
                let Scan::Value(end) = scan_value(b, i, 0) else {
                    return None;
                };
                id = Some(serde_json::from_slice(b.get(i..end)?).ok()?);
                end
            }
            // A repeated `text` or `id`: the `Value` reading keeps the last.
            b"text" | b"id" => return None,
            _ => match scan_value(b, i, 0) {
                Scan::Value(end) => end,
                _ => return None,
            },
        };
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    let (len, start, end) = text?;
    utf8(b.get(..start)?)?;
    utf8(b.get(end..)?)?;
    Some((utf8(scratch.get(..len)?)?, id))
}

/// `bytes` as text when they are UTF-8.
///
/// Note [Vector UTF-8 checks]: a reply line is checked as UTF-8 whole
/// (Note [UTF-8 checked once]: the unescaped `text`, and the line around
/// its raw string), and `std::str::from_utf8` took ~0.9 instructions a byte
/// there. `simdutf8` checks 32 or 64 bytes a step with the vector
/// instructions the CPU has (found at run time) and gives the same
/// answer (`simdutf8_agrees_with_std`).
/// Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical, release with thin LTO): 1.117 → 1.095
/// billion instructions (−2.0%); `reply_of_line` with what it calls
/// 352.5 → 332.4 million, its UTF-8 checks 38.9 → 15.4 million.
fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tests::{escapable_strategy, mangled_strategy, reference_reply, value_strategy};

    proptest::proptest! {
        #[test]
        fn reply_lines_agree(v in value_strategy(), pretty in proptest::prelude::any::<bool>(), cut in 0usize..300, byte in proptest::prelude::any::<u8>()) {
            let line = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
            let mut mangled = line.clone().into_bytes();
            mangled.insert(cut.min(mangled.len()), byte);
            let mangled = String::from_utf8(mangled).unwrap_or_default();
            for line in [line, mangled] {
                if let Some(got) = reply_line(&line) {
                    proptest::prop_assert_eq!(Some(got), reference_reply(&line), "{}", line);
                }
            }
        }
    }

    proptest::proptest! {
        /// Note [Reading reply lines]: every line read gets the `Value`
        /// reading's answer.
        #[test]
        fn reply_of_line_agrees_with_the_value_reading(
            v in value_strategy(),
            text in "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀{}\\[\\]]{0,60}",
            junk in mangled_strategy(),
            shape in 0u8..4,
        ) {
            let line = match shape {
                0 => serde_json::to_string(&text).unwrap(),
                1 => serde_json::to_string(&serde_json::json!({"id": v, "text": text})).unwrap(),
                2 => serde_json::to_string_pretty(&serde_json::json!({"text": text, "expected": v, "id": 1})).unwrap(),
                _ => format!("{{\"text\": {}, \"x\": {junk}}}", serde_json::to_string(&text).unwrap()),
            };
            let reference = reference_reply(&line);
            match reply_of_line(line.as_bytes()) {
                Some(got) => proptest::prop_assert_eq!(Some(got), reference, "{}", line),
                // Declined only for what the reader is unsure of.
                // Declined only for what the reader is unsure of (numbers
                // and the like in the other members); a string line never.
                None => proptest::prop_assert!(shape != 0 || reference.is_none(), "{}", line),
            }
            for mangled in [junk.clone(), format!("{{\"text\": \"a\", {junk}}}"), format!("{line}{junk}")] {
                if let Some(got) = reply_of_line(mangled.as_bytes()) {
                    proptest::prop_assert_eq!(Some(got), reference_reply(&mangled), "{}", mangled);
                }
            }
        }
    }

    /// Note [UTF-8 checked once]: a byte that breaks UTF-8 anywhere in the
    /// line (inside `text` raw or next to an escape, in a key, in `id`, in
    /// another member, after the object) declines the line, as the `Value`
    /// reading refuses it.
    #[test]
    fn reply_of_line_refuses_broken_utf8_anywhere() {
        let lines: &[&[u8]] = &[
            b"{\"text\": \"a\xff\"}",
            b"{\"text\": \"a\\n\xc3\\n\"}",
            b"{\"text\": \"a\xc3\\u00a9\"}",
            b"{\"text\": \"\\u00e9\xa9\"}",
            b"{\"text\": \"a\xe2\x82\"}",
            b"{\"text\": \"a\", \"x\": \"\xff\"}",
            b"{\"x\": [\"\xc3\"], \"text\": \"a\"}",
            b"{\"\xff\": 1, \"text\": \"a\"}",
            b"{\"id\": \"\xc3\", \"text\": \"a\"}",
            b"\"a\xff\"",
        ];
        for line in lines {
            assert!(serde_json::from_slice::<Value>(line).is_err());
            assert_eq!(
                reply_of_line(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let fine = "{\"id\": \"é\", \"é\": [\"😀\"], \"text\": \"→\\n\\u00e9é\"}";
        assert_eq!(
            reply_of_line(fine.as_bytes()),
            Some(("→\néé".to_owned(), Some(json!("é"))))
        );
    }

    proptest::proptest! {
        /// Any byte written over any byte of a line: whatever is read
        /// gets the `Value` reading's answer (a line that is no longer
        /// UTF-8 is never read).
        #[test]
        fn reply_of_line_agrees_on_bytes(
            v in value_strategy(),
            text in "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀{}]{0,40}",
            at in 0usize..400,
            byte in proptest::prelude::any::<u8>(),
        ) {
            let line = serde_json::to_string(&serde_json::json!({"id": v, "text": text, "x": v})).unwrap();
            let mut bytes = line.into_bytes();
            let at = at % bytes.len();
            bytes[at] = byte;
            let reference = match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(mut m)) => match m.remove("text") {
                    Some(Value::String(s)) => Some((s, m.remove("id"))),
                    _ => None,
                },
                _ => None,
            };
            if let Some(got) = reply_of_line(&bytes) {
                proptest::prop_assert_eq!(Some(got), reference);
            }
        }
    }

    proptest::proptest! {
        /// Note [Reused text buffers]: one buffer read line after line
        /// (left longer than the next text, shorter, or full of earlier
        /// bytes) gives every line the `Value` reading's answer, and the
        /// same as a fresh buffer.
        #[test]
        fn reply_of_line_into_reuses_its_buffer(
            texts in proptest::collection::vec(escapable_strategy(), 1..6),
            shapes in proptest::collection::vec(0u8..4, 6),
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
            cut in 0usize..3000,
        ) {
            let mut scratch = junk;
            for (text, &shape) in texts.iter().zip(&shapes) {
                let line = match shape {
                    0 => serde_json::to_string(text).unwrap(),
                    1 => serde_json::to_string(&json!({"id": 7, "text": text})).unwrap(),
                    2 => serde_json::to_string(&json!({"text": text, "expected": {"a": [text]}})).unwrap(),
                    _ => {
                        // Cut anywhere (a string cut short ends the line).
                        let l = serde_json::to_string(&json!({"x": 1, "text": text})).unwrap();
                        let at = cut % (l.len() + 1);
                        String::from_utf8_lossy(&l.as_bytes()[..at]).into_owned()
                    }
                };
                let fresh = reply_of_line(line.as_bytes());
                let got = reply_of_line_into(line.as_bytes(), &mut scratch)
                    .map(|(t, id)| (t.to_owned(), id));
                proptest::prop_assert_eq!(&got, &fresh, "{}", line);
                if shape != 3 || got.is_some() {
                    proptest::prop_assert_eq!(got, reference_reply(&line), "{}", line);
                }
            }
        }
    }

    proptest::proptest! {
        /// Note [Vector UTF-8 checks]: the same verdict as the standard
        /// library on any bytes, mostly UTF-8 with a byte changed,
        /// inserted or cut, at any length around the vector steps.
        #[test]
        fn simdutf8_agrees_with_std(
            text in "[a-z\\x00-\\x7fé→😀\\u{10ffff}]{0,200}",
            at in 0usize..1000,
            byte in proptest::prelude::any::<u8>(),
            how in 0u8..4,
        ) {
            let mut bytes = text.into_bytes();
            let at = at % (bytes.len() + 1);
            match how {
                0 => {}
                1 => bytes.insert(at, byte),
                2 => bytes.truncate(at),
                _ => {
                    if let Some(c) = bytes.get_mut(at) {
                        *c = byte;
                    }
                }
            }
            proptest::prop_assert_eq!(utf8(&bytes), std::str::from_utf8(&bytes).ok());
        }
    }

    #[test]
    fn reply_of_line_table() {
        type Row = (&'static str, Option<(&'static str, Option<Value>)>);
        let rows: &[Row] = &[
            (r#""a\nb""#, Some(("a\nb", None))),
            (r#"  "x"  "#, Some(("x", None))),
            (
                r#"{"id": 3, "text": "x\"y"}"#,
                Some(("x\"y", Some(json!(3)))),
            ),
            (
                r#"{"id":0,"kind":"k","text":"t \u00e9\ud83d\ude00","expected":{"a":[1,2.5,null,true,"s"]}}"#,
                Some(("t é😀", Some(json!(0)))),
            ),
            (
                r#"{"text": "x", "id": {"k": [1, null]}}"#,
                Some(("x", Some(json!({"k": [1, null]})))),
            ),
            (r#"{"id": null, "text": ""}"#, Some(("", Some(Value::Null)))),
            (r#"{"text": "a", "x": 1, "x": 2}"#, Some(("a", None))),
            // Declined: the `Value` reading decides.
            (r#"{"text": "a", "text": "b"}"#, None),
            (r#"{"id": 1, "id": 2, "text": "a"}"#, None),
            (r#"{"te\u0078t": "a"}"#, None),
            (r#"{"text": 1}"#, None),
            (r#"{"text": null}"#, None),
            (r#"{"id": 1}"#, None),
            ("{}", None),
            (r#"{"text": "x", "n": 1e400}"#, None),
            (r#"{"text": "x", "n": "\ud800"}"#, None),
            (r#"{"text": "x", "n": [1,]}"#, None),
            (r#"{"text": "x"} trailing"#, None),
            (r#"{"text": "x""#, None),
            (r#"{"text": "x",}"#, None),
            (r#""\ud800""#, None),
            ("\"a\tb\"", None),
            ("[1]", None),
            ("nope", None),
            ("", None),
        ];
        for (line, want) in rows {
            let want = want.as_ref().map(|(t, id)| ((*t).to_owned(), id.clone()));
            assert_eq!(reply_of_line(line.as_bytes()), want, "{line}");
        }
        assert_eq!(reply_of_line(b"\"\xff\""), None);
    }

    #[test]
    fn reply_lines_of_every_shape() {
        type Row = (&'static str, Option<(&'static str, Option<Value>)>);
        let rows: &[Row] = &[
            (r#""a\nb""#, Some(("a\nb", None))),
            (
                r#"{"id": 3, "text": "x\"y"}"#,
                Some(("x\"y", Some(json!(3)))),
            ),
            (
                r#"{"text": "x", "id": {"k": [1, null]}, "expected": {"a": 1.5}}"#,
                Some(("x", Some(json!({"k": [1, null]})))),
            ),
            (r#"{"id": null, "text": ""}"#, Some(("", Some(Value::Null)))),
            // Declined: the `serde_json` reading decides.
            (r#"{"text": "a", "text": "b"}"#, None),
            (r#"{"text": 1}"#, None),
            (r#"{"id": 1}"#, None),
            (r#"{"text": "x", "n": 1e400}"#, None),
            (r#""\ud800""#, None),
            ("[1]", None),
            ("nope", None),
        ];
        for (line, want) in rows {
            let want = want.as_ref().map(|(t, id)| ((*t).to_owned(), id.clone()));
            assert_eq!(reply_line(line), want, "{line}");
        }
    }
}
