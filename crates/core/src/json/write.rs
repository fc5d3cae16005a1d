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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::tests::value_strategy;

    proptest::proptest! {
        #[test]
        fn compact_writer_agrees_with_serde_json(v in value_strategy()) {
            let mut mine = Vec::new();
            write_compact(&mut mine, &v);
            proptest::prop_assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&v).unwrap());
        }
    }
}
