//! Values written as compact JSON, byte for byte what `serde_json` writes.

use serde_json::Value;

use super::scan::copy_plain;

/// Append `value` as compact JSON, byte for byte what
/// `serde_json::to_writer` writes (`compact_writer_agrees_with_serde_json`).
///
/// Why: writing results was a fifth of `extract --jsonl`, half of it
/// `serde_json`'s byte-at-a-time string escaping; here runs of 16 bytes that
/// need no escape are copied at once, and maps are walked directly.
pub fn write_compact(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Numbers are rare and short: `serde_json` writes them (`itoa`/`ryu`).
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(out, v);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_compact(out, v);
            }
            out.push(b'}');
        }
    }
}

/// Append `s` as a JSON string, escaped as `serde_json` escapes it: `"`,
/// `\\` and the control characters (`\b \t \n \f \r` short, the rest as
/// `\u00xx`); everything else, non-ASCII included, as is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    // Room for the quotes and for `copy_plain`'s last word store.
    out.reserve(s.len() + 10);
    out.push(b'"');
    let b = s.as_bytes();
    let mut start = 0;
    loop {
        let i = copy_plain(out, b, start, b'"', b'"');
        let Some(&c) = b.get(i) else {
            break;
        };
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 0xf)]);
            }
        }
        start = i + 1;
    }
    out.push(b'"');
}

/// Append the JSON text `json` with every character outside ASCII written
/// as a `\u` escape (two, a surrogate pair, beyond U+FFFF): the same JSON,
/// in ASCII bytes only. A JSON text holds non-ASCII only inside strings,
/// where an escape means the same character; bytes that are not UTF-8
/// (no writer here makes them) become `\ufffd`.
///
/// Why: JavaScript makes a string of ASCII bytes several times faster than
/// it decodes UTF-8, and `JSON.parse` reads the one-byte string faster too
/// (Note \[Answers read in place\] in crates/wasm): for the npm package's
/// `extract`, whose result only `JSON.parse` reads, escaping the bench
/// replies' five non-ASCII characters each made decoding and parsing the
/// result 1.5 µs (27%) faster.
pub fn escape_non_ascii(json: &[u8], out: &mut Vec<u8>) {
    escape_from(json, out, false);
}

/// Append the JSON text `json` in Latin-1 bytes: the characters U+00A0 to
/// U+00FF as the one byte of their number, every other character outside
/// ASCII as [`escape_non_ascii`] writes it. The same JSON, for a reader
/// that takes each byte as the character of that number (Node's
/// `Buffer` `latin1` slice, which makes a one-byte string of them); not
/// UTF-8. U+0080 to U+009F stay escaped, so a reader of windows-1252
/// (what browsers call `latin1`) reads the same text.
///
/// Why: `JSON.parse` reads a string without escapes by copying it and
/// one with an escape a character at a time; `é`, `ï` and `ñ` are most
/// of the bench replies' characters outside ASCII, and their results
/// were parsed 8% faster with them as bytes (Note \[Answers read in
/// place\] in crates/wasm).
pub fn escape_beyond_latin1(json: &[u8], out: &mut Vec<u8>) {
    escape_from(json, out, true);
}

/// [`escape_non_ascii`], or with `latin1` [`escape_beyond_latin1`].
fn escape_from(json: &[u8], out: &mut Vec<u8>, latin1: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(json.len() + 32);
    for piece in pieces(json) {
        match piece {
            Piece::Ascii(run) => out.extend_from_slice(run),
            Piece::Other(c) if latin1 && ('\u{a0}'..='\u{ff}').contains(&c) => {
                // In that range the cast keeps every bit.
                #[allow(clippy::cast_possible_truncation)]
                out.push(c as u8);
            }
            Piece::Other(c) => {
                for &u in c.encode_utf16(&mut [0u16; 2]).iter() {
                    out.extend_from_slice(b"\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(HEX[usize::from((u >> shift) & 0xf)]);
                    }
                }
            }
        }
    }
}

/// Append the text `utf8` as UTF-16, little-endian, two bytes per unit;
/// bytes that are not UTF-8 (no writer here makes them) become U+FFFD.
///
/// Why: Node's `Buffer` makes a string of UTF-16 bytes by copying them
/// (0.5 µs for a bench reply's 700-character repair), where
/// `TextDecoder` took 2.1 µs to decode the same repair's UTF-8 (Note
/// \[Answers read in place\] in crates/wasm): for the npm package's
/// `repair`, whose answer is the user's text, characters and all.
pub fn utf16le_of(utf8: &[u8], out: &mut Vec<u8>) {
    use crate::bytescan::{LANES, widen_bytes};
    // Two output bytes per input byte at most (ASCII), so one reserve.
    out.reserve(utf8.len() * 2 + 8);
    let mut i = 0;
    loop {
        // Whole blocks widened, kept up to their first byte outside ASCII.
        while let Some(chunk) = utf8
            .get(i..i + LANES)
            .and_then(|c| <&[u8; LANES]>::try_from(c).ok())
        {
            let mut wide = [0; 2 * LANES];
            let others = widen_bytes(chunk, &mut wide);
            if others == 0 {
                out.extend_from_slice(&wide);
                i += LANES;
                continue;
            }
            let ascii = others.trailing_zeros() as usize;
            out.extend_from_slice(wide.get(..2 * ascii).unwrap_or_default());
            i += ascii;
            break;
        }
        // That character, or the tail's next byte.
        match utf8.get(i) {
            None => return,
            Some(&b) if b < 0x80 => {
                out.extend_from_slice(&[b, 0]);
                i += 1;
            }
            Some(_) => {
                let (c, len) = char_at(utf8, i);
                for &u in c.encode_utf16(&mut [0u16; 2]).iter() {
                    out.extend_from_slice(&u.to_le_bytes());
                }
                i += len;
            }
        }
    }
}

/// The UTF-8 of the UTF-16 text whose little-endian bytes are `utf16le`,
/// written at the start of `dst`: the bytes written, or `None` when the
/// text holds a lone surrogate, or is an odd number of bytes, or `dst` has
/// less than three bytes a unit (which is always enough).
///
/// Why: the npm package hands its strings to the module as UTF-16, which
/// Node's `Buffer` writes into the module's memory by copying them (3.4 ms
/// for the 20,000 bench replies), where `TextEncoder.encodeInto` took
/// 18 ms to encode the same strings as UTF-8 (Note \[Text written as
/// UTF-16\] in crates/wasm). A lone surrogate is found here, so the text
/// needs no U+FFFD scan after. Sixteen units a step
/// (`bytescan::narrow_units`), kept up to the first outside ASCII.
pub fn utf8_of_utf16le(utf16le: &[u8], dst: &mut [u8]) -> Option<usize> {
    use crate::bytescan::{LANES, narrow_units};
    let units = utf16le.len() / 2;
    if dst.len() / 3 < units || utf16le.len() % 2 != 0 {
        return None;
    }
    let unit = |i: usize| {
        Some(u16::from_le_bytes([
            *utf16le.get(2 * i)?,
            *utf16le.get(2 * i + 1)?,
        ]))
    };
    let mut i = 0;
    let mut n = 0;
    loop {
        // Whole blocks: narrowed, their bytes kept up to the first unit
        // outside ASCII (those after are written over), then that
        // character.
        while let (Some(src), Some(out)) = (
            utf16le
                .get(2 * i..2 * (i + LANES))
                .and_then(|s| <&[u8; 2 * LANES]>::try_from(s).ok()),
            dst.get_mut(n..n + LANES)
                .and_then(|d| <&mut [u8; LANES]>::try_from(d).ok()),
        ) {
            let others = narrow_units(src, out);
            if others == 0 {
                i += LANES;
                n += LANES;
                continue;
            }
            let ascii = others.trailing_zeros() as usize;
            i += ascii;
            n += ascii;
            break;
        }
        // That character, or the tail's next unit.
        let Some(u) = unit(i) else {
            return Some(n);
        };
        i += 1;
        let c = match u {
            0xD800..=0xDBFF => {
                let low = unit(i).filter(|l| (0xDC00..=0xDFFF).contains(l))?;
                i += 1;
                0x10000 + ((u32::from(u) - 0xD800) << 10 | (u32::from(low) - 0xDC00))
            }
            0xDC00..=0xDFFF => return None,
            _ => u32::from(u),
        };
        let c = char::from_u32(c)?;
        let len = c.len_utf8();
        c.encode_utf8(dst.get_mut(n..n + len)?);
        n += len;
    }
}

/// A run of ASCII bytes of a text, or one character outside ASCII.
enum Piece<'t> {
    Ascii(&'t [u8]),
    Other(char),
}

/// The text `utf8` as runs of ASCII bytes and the characters between
/// them, for [`escape_non_ascii`]. Not `utf8_chunks`: it checks every
/// byte again (the writers made UTF-8), and its iterator was half of
/// `escape_non_ascii`'s time in a V8 profile; only the bytes at a
/// non-ASCII one are decoded here (U+FFFD for bytes that are not UTF-8).
fn pieces(utf8: &[u8]) -> impl Iterator<Item = Piece<'_>> {
    let mut from = 0;
    let mut char_next = false;
    std::iter::from_fn(move || {
        let rest = utf8.get(from..).filter(|r| !r.is_empty())?;
        if std::mem::take(&mut char_next) {
            let (c, len) = char_at(utf8, from);
            from += len;
            return Some(Piece::Other(c));
        }
        let run = ascii_prefix(rest);
        from += run;
        char_next = true;
        Some(Piece::Ascii(rest.get(..run).unwrap_or_default()))
    })
}

/// How many bytes `b` begins with that are ASCII, read eight at a time
/// (a byte loop, here and in [`escape_non_ascii`], ran at a byte a cycle:
/// 0.5–0.8 µs for a bench reply's repair natively).
fn ascii_prefix(b: &[u8]) -> usize {
    let mut words = b.chunks_exact(8);
    let mut n = 0;
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().unwrap_or([0x80; 8]));
        let high = x & 0x8080_8080_8080_8080;
        if high != 0 {
            return n + (high.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words
        .remainder()
        .iter()
        .position(|c| !c.is_ascii())
        .unwrap_or(words.remainder().len())
}

/// The character whose UTF-8 begins at `at` of `b`, and its length; U+FFFD
/// and the length of the bytes that are not one.
fn char_at(b: &[u8], at: usize) -> (char, usize) {
    // Well-formed UTF-8 (what the writers make) decoded by hand; a
    // `from_utf8` per character was a seventh of `utf16le_of`'s profile.
    let cont = |i: usize| {
        b.get(at + i)
            .filter(|&&c| c & 0xC0 == 0x80)
            .map(|&c| u32::from(c & 0x3F))
    };
    let decoded = match b.get(at) {
        Some(&lead @ 0xC2..=0xDF) => cont(1).map(|c1| ((u32::from(lead) & 0x1F) << 6 | c1, 2)),
        Some(&lead @ 0xE0..=0xEF) => cont(1)
            .zip(cont(2))
            .map(|(c1, c2)| ((u32::from(lead) & 0x0F) << 12 | c1 << 6 | c2, 3)),
        Some(&lead @ 0xF0..=0xF4) => cont(1)
            .zip(cont(2))
            .zip(cont(3))
            .map(|((c1, c2), c3)| ((u32::from(lead) & 0x07) << 18 | c1 << 12 | c2 << 6 | c3, 4)),
        _ => None,
    };
    // Overlong forms and surrogates are not UTF-8: the general path below.
    let shortest = |cp: u32, len: usize| match len {
        3 => cp >= 0x800,
        4 => cp >= 0x1_0000,
        _ => true,
    };
    if let Some((cp, len)) = decoded
        && shortest(cp, len)
        && let Some(c) = char::from_u32(cp)
    {
        return (c, len);
    }
    let bytes = b.get(at..b.len().min(at + 4)).unwrap_or_default();
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let (good, _) = bytes.split_at(e.valid_up_to());
            if good.is_empty() {
                return (
                    char::REPLACEMENT_CHARACTER,
                    e.error_len().unwrap_or(bytes.len()).max(1),
                );
            }
            std::str::from_utf8(good).unwrap_or_default()
        }
    };
    valid
        .chars()
        .next()
        .map_or((char::REPLACEMENT_CHARACTER, 1), |c| (c, c.len_utf8()))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::any;

    use super::*;
    use crate::tests::value_strategy;

    #[test]
    fn non_ascii_is_escaped_as_utf16_units() {
        let cases: &[(&[u8], &str)] = &[
            (b"{}", "{}"),
            ("{\"a\":\"caf\u{e9}\"}".as_bytes(), "{\"a\":\"caf\\u00e9\"}"),
            (
                "[\"\u{2014}\",\"\u{1F600}x\"]".as_bytes(),
                "[\"\\u2014\",\"\\ud83d\\ude00x\"]",
            ),
            ("{\"\u{fffd}\":1}".as_bytes(), "{\"\\ufffd\":1}"),
            (b"[\"a\xffb\"]", "[\"a\\ufffdb\"]"),
            (b"[\"\xe2\x80\"]", "[\"\\ufffd\"]"),
            (b"[\"\xe2\x80", "[\"\\ufffd"),
        ];
        for (json, want) in cases {
            let mut out = b"prefix".to_vec();
            escape_non_ascii(json, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), format!("prefix{want}"));
        }
    }

    #[test]
    fn broken_utf8_reads_as_lossy_does() {
        // Overlong forms, surrogates, past U+10FFFF, cut and stray bytes.
        let cases: &[&[u8]] = &[
            b"a\xc0\x80b",
            b"a\xe0\x80\x80b",
            b"a\xed\xa0\x80b",
            b"a\xf0\x80\x80\x80b",
            b"a\xf4\x90\x80\x80b",
            b"a\xe2\x82",
            b"\x80\xbf\xff",
            "é\u{20ac}\u{1F600}".as_bytes(),
        ];
        for &bytes in cases {
            let mut units = Vec::new();
            utf16le_of(bytes, &mut units);
            let units: Vec<u16> = units
                .chunks(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .collect();
            assert_eq!(
                String::from_utf16(&units).unwrap(),
                String::from_utf8_lossy(bytes),
                "{bytes:?}"
            );
            let mut escaped = Vec::new();
            escape_non_ascii(bytes, &mut escaped);
            let text = format!("\"{}\"", String::from_utf8(escaped).unwrap());
            let back: String = serde_json::from_str(&text).unwrap();
            assert_eq!(back, String::from_utf8_lossy(bytes), "{bytes:?}");
        }
    }

    /// `utf8_of_utf16le` of `units` into a buffer of three bytes a unit.
    fn utf8_of(units: &[u16]) -> Option<String> {
        let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
        let mut dst = vec![0xAA; units.len() * 3];
        let n = utf8_of_utf16le(&bytes, &mut dst)?;
        Some(String::from_utf8(dst[..n].to_vec()).unwrap())
    }

    #[test]
    fn utf16_text_is_written_as_utf8() {
        let long = "x".repeat(40);
        // Each character at each place around the 16-unit blocks.
        for c in [
            "\u{7f}",
            "\u{80}",
            "\u{e9}",
            "\u{7ff}",
            "\u{800}",
            "\u{2192}",
            "\u{fffd}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1F600}",
            "\u{10FFFF}",
        ] {
            for at in 0..=long.len() {
                let text = format!("{}{c}{}", &long[..at], &long[at..]);
                let units: Vec<u16> = text.encode_utf16().collect();
                assert_eq!(
                    utf8_of(&units).as_deref(),
                    Some(text.as_str()),
                    "{c:?} at {at}"
                );
            }
        }
        assert_eq!(utf8_of(&[]).as_deref(), Some(""));
        // Lone surrogates anywhere, a high one at the very end, a low one
        // first, two highs: refused, as `String::from_utf16` refuses them.
        for bad in [
            &[0xD800][..],
            &[0x61, 0xDC00],
            &[0xD83D, 0x61],
            &[0xD83D, 0xD83D, 0xDE00],
            &[0xDE00, 0xD83D],
        ] {
            for at in [0, 15, 16, 17, 31] {
                let mut units = vec![u16::from(b'a'); at];
                units.extend_from_slice(bad);
                assert_eq!(utf8_of(&units), None, "{bad:x?} at {at}");
            }
        }
        // A buffer with less than three bytes a unit is refused, not overrun.
        assert_eq!(
            utf8_of_utf16le(&[0x61, 0, 0x61, 0, 0x61, 0, 0x61, 0], &mut [0; 11]),
            None
        );
        // An odd byte count is not UTF-16.
        assert_eq!(utf8_of_utf16le(&[0x61, 0, 0x61], &mut [0; 9]), None);
    }

    proptest::proptest! {
        #[test]
        fn utf8_of_utf16le_is_what_std_decodes(units in proptest::collection::vec(proptest::prop_oneof![
            4 => 0x20u16..0x7f, 1 => 0x80u16..0x800, 1 => 0x800u16..0xffff, 1 => 0xD800u16..0xE000], 0..80)) {
            proptest::prop_assert_eq!(utf8_of(&units), String::from_utf16(&units).ok());
        }

        #[test]
        fn compact_writer_agrees_with_serde_json(v in value_strategy()) {
            let mut mine = Vec::new();
            write_compact(&mut mine, &v);
            proptest::prop_assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&v).unwrap());
        }

        #[test]
        fn utf16_of_text_is_what_std_encodes(text in any::<String>(), junk in proptest::collection::vec(any::<u8>(), 0..6), at in 0usize..64) {
            let mut mine = Vec::new();
            utf16le_of(text.as_bytes(), &mut mine);
            let want: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
            proptest::prop_assert_eq!(mine, want);
            // Bytes that are not UTF-8 read as `String::from_utf8_lossy` does.
            let mut bytes = text.into_bytes();
            let at = at.min(bytes.len());
            bytes.splice(at..at, junk);
            let mut mine = Vec::new();
            utf16le_of(&bytes, &mut mine);
            let lossy: Vec<u16> = mine.chunks(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
            let lossy = String::from_utf16(&lossy).unwrap();
            proptest::prop_assert_eq!(lossy, String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn escaping_non_ascii_keeps_the_value(v in value_strategy()) {
            let mut escaped = Vec::new();
            escape_non_ascii(serde_json::to_string(&v).unwrap().as_bytes(), &mut escaped);
            proptest::prop_assert!(escaped.is_ascii());
            let back: Value = serde_json::from_slice(&escaped).unwrap();
            proptest::prop_assert_eq!(back, v);
        }

        /// Read as Latin-1 (each byte the character of its number), the
        /// bytes are the same JSON value, and no byte is in 0x80..0xA0
        /// (where windows-1252 reads another character).
        #[test]
        fn latin1_bytes_keep_the_value(v in value_strategy()) {
            let mut bytes = Vec::new();
            escape_beyond_latin1(serde_json::to_string(&v).unwrap().as_bytes(), &mut bytes);
            proptest::prop_assert!(!bytes.iter().any(|b| (0x80..0xA0).contains(b)));
            let text: String = bytes.iter().map(|&b| char::from(b)).collect();
            let back: Value = serde_json::from_str(&text).unwrap();
            proptest::prop_assert_eq!(back, v);
        }
    }

    #[test]
    fn latin1_bytes_table() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"{\"a\":1}", b"{\"a\":1}"),
            (
                "[\"caf\u{e9}\",\"\u{a0}\u{ff}\"]".as_bytes(),
                b"[\"caf\xe9\",\"\xa0\xff\"]",
            ),
            ("[\"\u{80}\u{9f}\"]".as_bytes(), b"[\"\\u0080\\u009f\"]"),
            (
                "[\"\u{100}\u{2192}\u{1F680}\"]".as_bytes(),
                b"[\"\\u0100\\u2192\\ud83d\\ude80\"]",
            ),
            (b"[\"a\xffb\"]", b"[\"a\\ufffdb\"]"),
        ];
        for &(json, want) in cases {
            let mut out = b"prefix".to_vec();
            escape_beyond_latin1(json, &mut out);
            assert_eq!(
                out,
                [b"prefix", want].concat(),
                "{}",
                String::from_utf8_lossy(json)
            );
        }
    }
}
