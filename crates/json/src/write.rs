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
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(json.len() + 32);
    let mut from = 0;
    // Not `utf8_chunks`: it checks every byte again (the writers made
    // UTF-8), and its iterator was half of this function's time in a V8
    // profile; only the bytes at a non-ASCII one are decoded here.
    while let Some(rest) = json.get(from..) {
        let Some(off) = rest.iter().position(|b| !b.is_ascii()) else {
            out.extend_from_slice(rest);
            break;
        };
        let at = from + off;
        out.extend_from_slice(json.get(from..at).unwrap_or_default());
        let (c, len) = char_at(json, at);
        let mut units = [0u16; 2];
        for &u in c.encode_utf16(&mut units).iter() {
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[usize::from((u >> shift) & 0xf)]);
            }
        }
        from = at + len;
    }
}

/// The character whose UTF-8 begins at `at` of `b`, and its length; U+FFFD
/// and the length of the bytes that are not one.
fn char_at(b: &[u8], at: usize) -> (char, usize) {
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

    proptest::proptest! {
        #[test]
        fn compact_writer_agrees_with_serde_json(v in value_strategy()) {
            let mut mine = Vec::new();
            write_compact(&mut mine, &v);
            proptest::prop_assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&v).unwrap());
        }

        #[test]
        fn escaping_non_ascii_keeps_the_value(v in value_strategy()) {
            let mut escaped = Vec::new();
            escape_non_ascii(serde_json::to_string(&v).unwrap().as_bytes(), &mut escaped);
            proptest::prop_assert!(escaped.is_ascii());
            let back: Value = serde_json::from_slice(&escaped).unwrap();
            proptest::prop_assert_eq!(back, v);
        }
    }
}
