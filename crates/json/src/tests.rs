//! Strategies and references the tests of the JSON modules share.

use serde_json::Value;

pub(super) fn reference_reply(line: &str) -> Option<(String, Option<Value>)> {
    match serde_json::from_str::<Value>(line).ok()? {
        Value::String(s) => Some((s, None)),
        Value::Object(mut m) => match m.remove("text") {
            Some(Value::String(s)) => Some((s, m.remove("id"))),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn value_strategy() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀]{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("(text|id|[a-c\"\\\\\\n]{0,3})", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// JSON-looking text broken in the ways the scans must get right.
pub(super) fn mangled_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just("\\u".to_owned()),
        Just("\\ud83d".to_owned()),
        Just("\\ude00".to_owned()),
        Just("\\n".to_owned()),
        Just("\u{1}".to_owned()),
        Just("true".to_owned()),
        Just("nul".to_owned()),
        Just("-".to_owned()),
        Just("0".to_owned()),
        Just("1e400".to_owned()),
        Just(".5".to_owned()),
        Just("E+".to_owned()),
        Just("12345678901234567890".to_owned()),
        Just("\"text\"".to_owned()),
        Just("\"id\"".to_owned()),
        "[a-z0-9é😀]{1,4}",
    ];
    prop_oneof![
        proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat()),
        (
            value_strategy(),
            0usize..300,
            "[\\x00-\\x7f]{0,3}",
            any::<bool>()
        )
            .prop_map(|(v, cut, junk, cut_off)| {
                let mut t = serde_json::to_string(&v).unwrap();
                let at = (0..=cut.min(t.len()))
                    .rev()
                    .find(|&i| t.is_char_boundary(i))
                    .unwrap_or(0);
                if cut_off {
                    t.truncate(at);
                }
                t.insert_str(at, &junk);
                t
            }),
    ]
}

/// Strings dense in what must be escaped, long enough for every path
/// of the run copies (short words, long runs, the text's last bytes).
pub(super) fn escapable_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    "([\\x00-\\x21\"\\\\a/\\x7f-\\u{a0}é😀 ]|[a-z ]{1,20}|\n {2,8}){0,60}"
}

/// Raw string bodies, valid or not: every escape (`\u` ones whole,
/// surrogate pairs, lone halves and broken ones), raw control
/// characters, bytes ≥ 0x80 (UTF-8 or not), quotes, and runs from 0 to
/// 90 bytes, so escapes fall at every offset of a 64-byte block and
/// strings end anywhere near the line's end.
pub(super) fn raw_body_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        4 => "[a-z ]{0,90}".prop_map(String::into_bytes),
        2 => Just(b"\\n".to_vec()),
        2 => Just(b"\\\"".to_vec()),
        1 => Just(b"\\\\".to_vec()),
        1 => prop::sample::select(&b"/bfnrtu\"\\x0 "[..]).prop_map(|c| vec![b'\\', c]),
        1 => Just(b"\\u00e9".to_vec()),
        1 => Just(b"\\ud83d\\ude00".to_vec()),
        1 => Just(b"\\ud83d".to_vec()),
        1 => Just(b"\\ude00x".to_vec()),
        1 => Just(b"\\u12g4".to_vec()),
        1 => Just("é→😀".as_bytes().to_vec()),
        1 => (0u8..0x20).prop_map(|c| vec![c]),
        1 => (0x80u8..=0xff).prop_map(|c| vec![c]),
        1 => Just(b"\"".to_vec()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}
