//! The tape reader's tests: against `serde_json`, and the verdicts of
//! both validation paths.

use proptest::prelude::*;

use jsonschema::JsonType;
use jsonschema::json::{Array, Node};

use super::*;
use crate::ws::ws_end;

fn agrees(text: &str) {
    let serde = serde_json::from_str::<Value>(text);
    // Note [Declined, not refused].
    if Doc::read_in(text, &mut Scratch::default()).err() == Some(Declined::Invalid) {
        assert!(serde.is_err(), "refused {text:?}, which serde_json reads");
    }
    let eager = Doc::parse(text);
    let lazy = Doc::parse_bytes(text.as_bytes());
    assert_eq!(eager.is_some(), lazy.is_some(), "{text:?}");
    for doc in [eager, lazy].into_iter().flatten() {
        let Ok(v) = &serde else {
            panic!("read {text:?}, which serde_json refuses: {serde:?}");
        };
        let mine = doc.root().value();
        assert_eq!(&mine, v, "{text:?}");
        // Note [Writing from the tape]: the same bytes as the value's.
        let (mut written, mut reference) = (Vec::new(), Vec::new());
        doc.root().write_compact(&mut written);
        crate::write_compact(&mut reference, v);
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&reference),
            "{text:?}"
        );
        // Key order too (objects compare as maps).
        assert_eq!(mine.to_string(), v.to_string(), "{text:?}");
        strings_agree(doc.root(), v);
    }
}

/// Whether every float of `v` is written by `serde_json` as a literal
/// that is exactly that float (`json::is_exact`).
fn floats_exact(v: &Value) -> bool {
    match v {
        Value::Number(n) => crate::is_exact(&n.to_string()),
        Value::Array(a) => a.iter().all(floats_exact),
        Value::Object(m) => m.values().all(floats_exact),
        _ => true,
    }
}

/// Note [Copied runs]: a document read for writing copies its text
/// between cuts, and writes what the node writer and
/// `json::write_compact` write; `copyable` says which path it took.
fn copied_agrees(text: &str, copyable: bool) {
    let v: Value = serde_json::from_str(text).expect("JSON");
    let doc = Doc::read_in(text, &mut Scratch::default()).expect("read");
    assert_eq!(doc.copyable, copyable, "{text:?}");
    let (mut copied, mut nodes, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    doc.root().write_compact(&mut copied);
    doc.root().write_nodes(&mut nodes);
    crate::write_compact(&mut reference, &v);
    let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(shown(&copied), shown(&reference), "{text:?}");
    assert_eq!(shown(&nodes), shown(&reference), "{text:?}");
}

#[test]
fn copied_runs_agree_with_the_nodes() {
    let rows: &[(&str, bool)] = &[
        (
            " {\n  \"a\": [1, 2.50, -0, 1e3, 18446744073709551615, 123456789012345678],\n  \"b\": null\n} ",
            true,
        ),
        (
            "[\"\\u00e9\\/x\", \"a\\nb\\t\\\"\\\\\", \"\\ud83d\\ude00\"]",
            true,
        ),
        ("\t\r\n[ true ,false\t, null ]\r\n", true),
        ("{\"k\\u0041\": 1,  \"b\": 2}", false),
        ("{\"k\\/\": {\"x\": [ ]}}", false),
        ("{\"k\\n\": \"v\" }", true),
        ("  1.50  ", true),
        ("-0", true),
        ("\"\\u0001\"", true),
        (" \"plain\" ", true),
        ("{}", true),
        // Escaped backslashes before `u` and `/`: copied as they stand.
        (r#"["a\\u\\/", {"k\\u": 1}]"#, true),
    ];
    for &(text, copyable) in rows {
        copied_agrees(text, copyable);
        agrees(text);
    }
}

/// Every string node reads as the value's string through each accessor
/// keywords use (Note [Lazy escapes]).
fn strings_agree(node: TapeNode<'_>, v: &Value) {
    match v {
        Value::String(s) => {
            assert_eq!(node.as_string().as_deref(), Some(s.as_str()));
            assert!(node.equals_value(v));
            assert!(!node.equals_value(&Value::String(format!("{s}x"))));
            assert!(matches!(node.shape(), Shape::Str(t) if t == s));
            assert_eq!(node.json_type(), JsonType::String);
        }
        Value::Array(items) => {
            let a = node.as_array().expect("an array");
            for (n, item) in a.elements().zip(items) {
                strings_agree(n, item);
            }
        }
        Value::Object(m) => {
            let o = node.as_object().expect("an object");
            for (k, item) in m {
                strings_agree(o.member(k).expect("a member"), item);
            }
        }
        _ => {}
    }
}

/// Bytes that may not be UTF-8: read only when they are, and then as
/// `serde_json` reads them (Note [Bytes, not text]).
fn bytes_agree(bytes: &[u8]) {
    let serde = serde_json::from_slice::<Value>(bytes);
    if let Some(doc) = Doc::parse_bytes(bytes) {
        let text = std::str::from_utf8(bytes).expect("read only UTF-8");
        let Ok(v) = &serde else {
            panic!("read {text:?}, which serde_json refuses: {serde:?}");
        };
        assert_eq!(&doc.root().value(), v, "{text:?}");
    } else if let Ok(text) = std::str::from_utf8(bytes) {
        assert!(Doc::parse(text).is_none(), "{text:?}");
    }
}

#[test]
fn bytes_that_are_not_utf8_are_declined() {
    let rows: &[&[u8]] = &[
        b"\"\xff\"",
        b"{\"a\": \"x\xc3\"}",
        b"{\"\xe9\": 1}",
        b"[1, \xff]",
        b"\xef\xbb\xbf{}",
        b"{\"a\": \"\\n\xed\xa0\x80\"}",
        b"[\"\xf0\x9f\x98\"]",
    ];
    for bytes in rows {
        assert!(Doc::parse_bytes(bytes).is_none(), "{bytes:?}");
        bytes_agree(bytes);
    }
    assert!(Doc::parse_bytes("[\"é\\u00e9😀\"]".as_bytes()).is_some());
}

#[test]
fn escaped_strings_are_read_once_and_kept() {
    let doc = Doc::parse_bytes(br#"["a\nb", "c\\d", "plain"]"#).expect("reads");
    assert_eq!(doc.unescaped.len(), 2, "one cell per escaped string");
    assert!(
        doc.unescaped.iter().all(|c| c.get().is_none()),
        "not read yet"
    );
    let a = doc.root().as_array().expect("array");
    let first = a.elements().next().expect("an element");
    assert_eq!(first.as_string().as_deref(), Some("a\nb"));
    assert_eq!(
        doc.unescaped.iter().filter(|c| c.get().is_some()).count(),
        1
    );
}

#[test]
fn recycled_vectors_keep_their_allocation() {
    let text = r#"{"a": ["x\ny", 1, {"b": null}], "c": "d"}"#.to_owned();
    let mut scratch = Scratch::default();
    let doc = Doc::parse_in(&text, &mut scratch).expect("reads");
    let slots = doc.slots.as_ptr().cast::<u8>();
    let members = doc.members.as_ptr().cast::<u8>();
    let cap = doc.slots.capacity();
    doc.recycle(&mut scratch);
    assert_eq!(scratch.slots.as_ptr().cast::<u8>(), slots);
    assert_eq!(scratch.members.as_ptr().cast::<u8>(), members);
    assert_eq!(scratch.slots.capacity(), cap);
    let other = text.clone();
    let doc = Doc::parse_in(&other, &mut scratch).expect("reads again");
    assert_eq!(doc.slots.as_ptr().cast::<u8>(), slots, "the same buffer");
    assert_eq!(
        doc.root().value(),
        serde_json::from_str::<Value>(&other).unwrap()
    );
    doc.recycle(&mut scratch);
    // A declined text gives the vectors back too.
    assert!(Doc::parse_in("[1, 2,", &mut scratch).is_none());
    assert_eq!(scratch.slots.as_ptr().cast::<u8>(), slots);
    assert!(scratch.slots.is_empty() && scratch.item_stack.is_empty());
}

/// Escape-heavy string bodies, valid or not: every escape letter, `\u`
/// with good and bad hex, high and low surrogates alone and in pairs.
pub(crate) fn string_body() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z é😀]{0,3}",
        prop::sample::select(vec![
            "\\n",
            "\\t",
            "\\\\",
            "\\\"",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\u00e9",
            "\\u0000",
            "\\uD83D\\uDE00",
            "\\ud800",
            "\\udc00",
            "\\uD83D\\u0041",
            "\\uD83Dx",
            "\\u12",
            "\\u12g4",
            "\\x",
            "\\a",
            "\\",
            "\\'",
            "\\U0041",
            "\\uDBFF\\uDFFF",
            "\\uFFFF",
            "\t",
            "\"",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn escaped_strings_read_lazily_agree_with_serde_json(
        body in string_body(),
        key in string_body(),
        wrap in 0..3,
    ) {
        let text = match wrap {
            0 => format!("\"{body}\""),
            1 => format!("[\"{body}\", 1]"),
            _ => format!("{{\"{key}\": \"{body}\"}}"),
        };
        agrees(&text);
    }

    #[test]
    fn doc_agrees_with_serde_json_on_any_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..40),
        v in json_value(),
        cut in 0usize..200,
        byte in 0x80u8..=0xff,
    ) {
        bytes_agree(&bytes);
        let mut text = serde_json::to_string(&v).unwrap().into_bytes();
        let at = cut.min(text.len());
        text.insert(at, byte);
        bytes_agree(&text);
    }

    #[test]
    fn reused_scratch_reads_as_a_fresh_one(
        texts in prop::collection::vec(json_value().prop_map(|v| v.to_string()), 1..6),
    ) {
        for text in &texts {
            let fresh = Doc::parse_bytes(text.as_bytes()).map(|d| d.root().value());
            let reused = with_doc(text.as_bytes(), |d| d.root().value());
            prop_assert_eq!(fresh, reused);
        }
    }
}

#[test]
fn reads_what_serde_json_reads_or_declines() {
    let rows: &[(&str, bool)] = &[
        (
            r#"{"a": [1, -2, 3.5, true, false, null, "x\ny\u00e9\ud83d\ude00"]}"#,
            true,
        ),
        ("  [ ]  ", true),
        ("{}", true),
        ("\"\\/\\b\\f\\r\\t\\\"\\\\\"", true),
        (r#"{"a": 1, "a": 2}"#, false),
        (r#""\ud800""#, false),
        (r#""\udc00x""#, false),
        ("[1,]", false),
        ("{\"a\" 1}", false),
        ("01", false),
        ("-0", true),
        ("1e400", false),
        ("12345678901234567890123", false),
        ("18446744073709551615", true),
        ("-9223372036854775808", true),
        ("0.1e-5", true),
        ("1.", false),
        ("\"a\tb\"", false),
        ("[1] x", false),
        ("nul", false),
        ("", false),
    ];
    for (text, read) in rows {
        assert_eq!(Doc::parse(text).is_some(), *read, "{text:?}");
        agrees(text);
    }
    // A wide object is left to `serde_json` (Note [Declined, not refused]).
    let members = |n: usize| (0..n).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>();
    let wide = format!("{{{}}}", members(MAX_SCANNED_KEYS + 1).join(","));
    let read = |t: &str| Doc::read_in(t, &mut Scratch::default()).map(|d| d.root().value());
    assert_eq!(read(&wide).err(), Some(Declined::Doubtful));
    agrees(&wide);
    let widest_read = format!("{{{}}}", members(MAX_SCANNED_KEYS).join(","));
    assert!(read(&widest_read).is_ok());
    for (text, why) in [
        (r#"{"a": 1, "a": 2}"#, Declined::Doubtful),
        (r#""\ud800""#, Declined::Doubtful),
        ("1e400", Declined::Doubtful),
        ("[1,]", Declined::Invalid),
        ("{\"a\": tru}", Declined::Invalid),
        ("\"a\tb\"", Declined::Invalid),
        ("[1, 2", Declined::Invalid),
    ] {
        assert_eq!(read(text).err(), Some(why), "{text:?}");
    }
    // Note [Cut text refused at once]: cut (or misclosed) text is
    // refused before any of it is read, so a point the reader would
    // have doubted on the way no longer makes it doubtful.
    for text in [
        r#"{"a": 1, "a": 2"#,
        "[\"\\ud800\", 1",
        r#"{"a": [1e400]"#,
        "[[[1]]} ",
        "{\"a\": [1]]",
        "{ \n\t\r",
        "[",
    ] {
        assert_eq!(read(text).err(), Some(Declined::Invalid), "{text:?}");
        agrees(text);
    }
    for text in [" \t{\"a\": [1]} \r\n", "[ ]\n", "{}"] {
        assert!(read(text).is_ok(), "{text:?}");
        agrees(text);
    }
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(Doc::parse(&deep).is_some());
    let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert!(Doc::parse(&deeper).is_none());
    assert_eq!(read(&deeper).err(), Some(Declined::Doubtful));
}

pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c\"\\\\é]{0,3}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn doc_agrees_with_serde_json_on_any_text(text in ".{0,40}") {
        agrees(&text);
    }

    #[test]
    fn doc_agrees_with_serde_json_on_json(v in json_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        agrees(&text);
        // Every JSON text serde_json writes is read here (its maps have
        // no repeated key), unless it holds a float whose shortest
        // round-trip form is not that float exactly: `ryu` may write
        // `-1192658002281151.2` for the double `…151.25`, which the
        // reader declines (Note [Big numbers] in `json`).
        prop_assert!(Doc::parse(&text).is_some() || !floats_exact(&v), "{}", text);
    }

    /// Note [Whitespace words]: the word scan stops where a byte scan
    /// would, whatever the bytes around.
    #[test]
    fn ws_end_agrees_with_position(
        b in prop::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r'), Just(b'"'), Just(0xA0u8), Just(0x8Au8), any::<u8>()], 0..40),
        from in 0usize..45,
    ) {
        let want = b.get(from..).and_then(|r| r.iter().position(|&c| !matches!(c, b' ' | b'\n' | b'\t' | b'\r')))
            .map_or(b.len().max(from), |p| p + from);
        prop_assert_eq!(ws_end(&b, from), want);
    }

    /// Note [Copied runs] on any JSON, spaced in every way.
    #[test]
    fn copied_runs_agree_on_json(v in json_value(), seps in prop::collection::vec("[ \n\t\r]{0,6}", 1..5), slash in any::<bool>()) {
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let mut text = String::new();
        for (i, line) in pretty.split('\n').enumerate() {
            text.push_str(&seps[i % seps.len()]);
            text.push_str(line.trim_start_matches(' '));
        }
        // A `\/` escape, which `serde_json` never writes.
        if slash {
            text = text.replacen('"', "\"\\/", 1);
        }
        if let Ok(doc) = Doc::read_in(&text, &mut Scratch::default()) {
            // Only a key with `\u` or `\/` is written node by node.
            let rewritten_key = doc.members.iter().any(|(k, _)| matches!(k, Cow::Owned(_)))
                && (text.contains("\\u") || text.contains("\\/"));
            prop_assert!(doc.copyable || rewritten_key, "{}", text);
            copied_agrees(&text, doc.copyable);
        }
    }

    /// JSON with every kind of whitespace between its tokens reads as
    /// `serde_json` reads it.
    #[test]
    fn doc_agrees_with_serde_json_on_spaced_json(v in json_value(), seps in prop::collection::vec("[ \n\t\r]{0,12}", 1..8)) {
        let compact = serde_json::to_string_pretty(&v).unwrap();
        // Replace each line break and indentation with a chosen run.
        let mut text = String::new();
        for (i, line) in compact.split('\n').enumerate() {
            text.push_str(&seps[i % seps.len()]);
            text.push_str(line.trim_start_matches(' '));
        }
        text.push_str(&seps[0]);
        agrees(&text);
    }

    #[test]
    fn doc_agrees_with_serde_json_on_mangled_json(v in json_value(), cut in 0usize..200, byte in any::<u8>()) {
        let mut text = serde_json::to_string(&v).unwrap().into_bytes();
        let at = cut.min(text.len());
        text.insert(at, byte);
        if let Ok(text) = String::from_utf8(text) {
            agrees(&text);
        }
    }
}
