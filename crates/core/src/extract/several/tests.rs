//! Several top-level values (Note [Several values]): collected for an
//! array schema, the valid one for another schema, the first without one;
//! each choice reported.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::super::tests::{compact_agrees, compact_agrees_under_options};
use super::super::{ExtractOptions, Method, Repair, Validator, extract_text, trace_text};
use super::{MAX_VALUES, accepts_array};
use crate::outcome::Extraction;

fn plain(text: &str) -> Extraction {
    compact_agrees_under_options(text);
    extract_text(text, &ExtractOptions::default())
}

fn with(schema: &Value, text: &str) -> Extraction {
    let v = Validator::new(schema).unwrap();
    let opts = ExtractOptions {
        validator: Some(&v),
        ..ExtractOptions::default()
    };
    compact_agrees(text, &opts);
    let got = extract_text(text, &opts);
    // The trace's chain gives the same extraction (Note [One chain, traced]).
    assert_eq!(trace_text(text, &opts).extraction, got, "trace of {text:?}");
    got
}

fn array() -> Value {
    json!({"type": "array"})
}

/// `(input, value, method, repairs)` with an array schema: collected.
#[test]
fn array_schema_collects_the_values() {
    let rows: &[(&str, Value, &[Repair])] = &[
        (
            "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n",
            json!([{"a": 1}, {"a": 2}, {"a": 3}]),
            &[Repair::CollectedValues],
        ),
        (
            "{\"a\":1}, [2]",
            json!([{"a": 1}, [2]]),
            &[Repair::CollectedValues],
        ),
        ("1\n2", json!([1, 2]), &[Repair::CollectedValues]),
        (
            "\"x\"\n\"y z\", -2.5e3 true null",
            json!(["x", "y z", -2500.0, true, null]),
            &[Repair::CollectedValues],
        ),
        // An array value is one item, not concatenated.
        (
            "[1, 2]\n[3]",
            json!([[1, 2], [3]]),
            &[Repair::CollectedValues],
        ),
        // Comments of every kind, and no separator between containers.
        (
            "/* 1 */ {} /* 2 */ {\"b\":1}",
            json!([{}, {"b": 1}]),
            &[Repair::CollectedValues],
        ),
        (
            "// first\n{\"a\":1}\n# second\n{\"a\":2}{\"a\":3}",
            json!([{"a": 1}, {"a": 2}, {"a": 3}]),
            &[Repair::CollectedValues],
        ),
        (
            "/* 1 */\n{},\n\n/* 2 */\n{},\n\n/* 3 */\n{}\n",
            json!([{}, {}, {}]),
            &[Repair::CollectedValues],
        ),
        // Repaired values: their repairs after `collected_values`.
        (
            "{'a': 1,}\n{'a': 2}\n",
            json!([{"a": 1}, {"a": 2}]),
            &[
                Repair::CollectedValues,
                Repair::SingleQuotes,
                Repair::TrailingComma,
            ],
        ),
        // A cut last line is closed (Note [Truncation]).
        (
            "{\"a\":1}\n{\"a\":2}\n{\"a\":\"x",
            json!([{"a": 1}, {"a": 2}, {"a": "x"}]),
            &[Repair::CollectedValues, Repair::Truncated],
        ),
        // Inside one fenced block.
        (
            "Here:\n```json\n{\"a\":1}\n{\"a\":2}\n```\nDone.",
            json!([{"a": 1}, {"a": 2}]),
            &[Repair::CollectedValues],
        ),
    ];
    for schema in [
        array(),
        json!({"type": ["array", "null"]}),
        json!({"$ref": "#/$defs/list", "$defs": {"list": {"type": "array"}}}),
        json!({"allOf": [{"type": "array"}, {"minItems": 2}]}),
    ] {
        for (input, want, repairs) in rows {
            let got = with(&schema, input);
            assert_eq!(got.value.as_ref(), Some(want), "{input:?} under {schema}");
            assert_eq!(got.method, Method::Repaired, "{input:?}");
            assert_eq!(&got.repairs, repairs, "{input:?}");
            assert!(got.valid, "{input:?}: {:?}", got.errors);
            assert!(got.warnings.is_empty(), "{input:?}: {:?}", got.warnings);
        }
    }
}

#[test]
fn array_schema_whose_items_refuse_the_collection_takes_a_valid_value() {
    // Items must be numbers: `[[1, 2], [3]]` is invalid, `[1, 2]` is valid.
    let schema = json!({"type": "array", "items": {"type": "number"}});
    let got = with(&schema, "[1, 2]\n[3]");
    assert_eq!(got.value, Some(json!([1, 2])));
    assert!(got.valid);
    assert!(got.repairs.is_empty());
    assert_eq!(
        got.warnings,
        ["2 top-level values; took value 1: the first of 2 valid against the schema"]
    );
    // None valid: the collected array has the fewest errors (one per bad item).
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let got = with(&schema, "[1, 2, 3]\n[4, 5, \"a\"]");
    assert_eq!(got.value, Some(json!([[1, 2, 3], [4, 5, "a"]])));
    assert!(!got.valid);
    assert_eq!(got.errors.len(), 2);
    assert_eq!(
        got.warnings,
        [
            "2 top-level values; none valid against the schema; took the collected array with the fewest errors"
        ]
    );
}

#[test]
fn object_schema_takes_the_valid_value_and_says_which() {
    let need_b = json!({"type": "object", "required": ["b"]});
    let got = with(&need_b, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}");
    assert_eq!(got.value, Some(json!({"b": 2})));
    assert!(got.valid);
    assert_eq!(
        got.warnings,
        ["3 top-level values; took value 2: the only one valid against the schema"]
    );
    // The weak-looking `{}` first: the schema takes the second.
    let got = with(&need_b, "/* 1 */ {} /* 2 */ {\"b\":1}");
    assert_eq!(got.value, Some(json!({"b": 1})));
    assert_eq!(
        got.warnings,
        ["2 top-level values; took value 2: the only one valid against the schema"]
    );
    let need_a = json!({"type": "object", "required": ["a"]});
    let got = with(&need_a, "{\"x\":0}\n{\"a\":1}\n{\"a\":2}");
    assert_eq!(got.value, Some(json!({"a": 1})));
    assert_eq!(
        got.warnings,
        ["3 top-level values; took value 2: the first of 2 valid against the schema"]
    );
    // None valid: the fewest errors, the earliest on a tie.
    let need_zy = json!({"type": "object", "required": ["z", "y"]});
    let got = with(&need_zy, "{\"a\":1}\n{\"z\":1}\n{\"y\":1}");
    assert_eq!(got.value, Some(json!({"z": 1})));
    assert!(!got.valid);
    assert_eq!(got.errors.len(), 1);
    assert_eq!(
        got.warnings,
        ["3 top-level values; none valid against the schema; took value 2 with the fewest errors"]
    );
    // Inside a fence, likewise.
    let got = with(&need_b, "```json\n{\"a\":1}\n{\"b\":2}\n```");
    assert_eq!(got.value, Some(json!({"b": 2})));
    assert_eq!(got.method, Method::Fenced);
    assert_eq!(
        got.warnings,
        ["2 top-level values; took value 2: the only one valid against the schema"]
    );
}

#[test]
fn without_a_schema_the_first_with_a_warning() {
    let rows: &[(&str, Value, Method)] = &[
        ("{\"a\":1}\n{\"a\":2}", json!({"a": 1}), Method::Bare),
        ("{\"a\":1}, [2]", json!({"a": 1}), Method::Bare),
        ("1\n2", json!(1), Method::Bare),
        ("[1]\n[2]", json!([1]), Method::Bare),
        ("/* 1 */\n{},\n\n/* 2 */\n{}\n", json!({}), Method::Bare),
        ("{'a': 1}\n{'a': 2}", json!({"a": 1}), Method::Repaired),
        (
            "Sure:\n```json\n{\"a\":1}\n{\"a\":2}\n```",
            json!({"a": 1}),
            Method::Fenced,
        ),
    ];
    for (input, want, method) in rows {
        let got = plain(input);
        assert_eq!(got.value.as_ref(), Some(want), "{input:?}");
        assert_eq!(got.method, *method, "{input:?}");
        assert_eq!(
            got.warnings,
            ["2 top-level values; took the first"],
            "{input:?}"
        );
    }
    // Note [Several values]: an empty value goes last.
    for input in [
        "/* 1 */ {} /* 2 */ {\"b\":1}",
        "[]{\"b\":1}",
        "[]\n{\"b\":1}\n{}",
    ] {
        let got = plain(input);
        assert_eq!(got.value, Some(json!({"b": 1})), "{input:?}");
        let n = if input.ends_with("{}") { 3 } else { 2 };
        assert_eq!(
            got.warnings,
            [format!(
                "{n} top-level values; took value 2: the first that is not empty"
            )],
            "{input:?}"
        );
    }
}

#[test]
fn one_value_or_prose_between_is_not_several() {
    let need_b = json!({"type": "object", "required": ["b"]});
    let rows: &[(&str, Option<Value>)] = &[
        (
            "Option A: {\"a\":1} Option B: {\"b\":2}",
            Some(json!({"a": 1})),
        ),
        ("{\"a\":1}\nThanks!\n{\"b\":2}", Some(json!({"a": 1}))),
        ("{\"a\":1} // done\n", Some(json!({"a": 1}))),
        ("{\"a\": 1,}", Some(json!({"a": 1}))),
        ("{\"a\": 1}, \"b\": 2}", Some(json!({"a": 1, "b": 2}))),
        ("1. First\n2. Second", None),
        ("[Applause] [Laughter]", None),
        ("\"Done,\" she said, \"is better.\"", None),
        ("hello world", None),
    ];
    for (input, want) in rows {
        let got = plain(input);
        assert_eq!(got.value.as_ref(), want.as_ref(), "{input:?}");
        assert!(got.warnings.is_empty(), "{input:?}: {:?}", got.warnings);
        let got = with(&array(), input);
        assert!(
            !got.repairs.contains(&Repair::CollectedValues),
            "{input:?}: {got:?}"
        );
        let got = with(&need_b, input);
        assert!(got.warnings.is_empty(), "{input:?}: {:?}", got.warnings);
    }
}

#[test]
fn a_hundred_thousand_lines_are_read_up_to_the_cap() {
    let mut text = String::new();
    for i in 0..100_000 {
        let _ = writeln!(text, "{{\"i\":{i}}}");
    }
    let got = with(&array(), &text);
    let items = got.value.as_ref().and_then(Value::as_array).unwrap();
    assert_eq!(items.len(), MAX_VALUES);
    assert_eq!(items[MAX_VALUES - 1], json!({"i": MAX_VALUES - 1}));
    assert_eq!(
        got.warnings,
        ["100000 top-level values; only the first 10000 were read (the limit)"]
    );
    let got = extract_text(&text, &ExtractOptions::default());
    assert_eq!(got.value, Some(json!({"i": 0})));
    assert_eq!(got.warnings, ["100000 top-level values; took the first"]);
    // Scalars, one a line.
    let mut text = String::new();
    for i in 0..100_000 {
        let _ = writeln!(text, "{i}");
    }
    let got = with(&array(), &text);
    assert_eq!(
        got.value.as_ref().and_then(Value::as_array).map(Vec::len),
        Some(MAX_VALUES)
    );
}

#[test]
fn warnings_are_absent_from_the_json_when_empty() {
    let e = plain("{\"a\":1}");
    let v = serde_json::to_value(&e).unwrap();
    assert!(v.get("warnings").is_none(), "{v}");
    let e = plain("{\"a\":1}\n{\"a\":2}");
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["warnings"], json!(["2 top-level values; took the first"]));
    // Read back without the field.
    let back: Extraction =
        serde_json::from_value(json!({"value": 1, "method": "bare", "repairs": [],
            "coercions": [], "valid": true, "errors": []}))
        .unwrap();
    assert!(back.warnings.is_empty());
    assert_eq!(
        serde_json::to_value([Repair::CollectedValues]).unwrap(),
        json!(["collected_values"])
    );
}

#[test]
fn which_schemas_are_arrays() {
    let yes = [
        json!({"type": "array"}),
        json!({"type": ["object", "array"]}),
        json!({"$ref": "#/definitions/l", "definitions": {"l": {"type": "array", "items": {}}}}),
        json!({"allOf": [{"$ref": "#/$defs/l"}], "$defs": {"l": {"type": "array"}}}),
        json!({"anyOf": [{"type": "null"}, {"type": "array"}]}),
    ];
    let no = [
        json!({"type": "object"}),
        json!({}),
        json!(true),
        json!({"items": {"type": "number"}}),
        json!({"$ref": "#"}),
        json!({"$ref": "#/nowhere"}),
        json!({"type": "object", "allOf": [{"type": "array"}]}),
    ];
    for s in &yes {
        assert!(accepts_array(s), "{s}");
    }
    for s in &no {
        assert!(!accepts_array(s), "{s}");
    }
}

/// Note [Several values in a fence]: which blocks are looked at.
#[test]
fn fenced_blocks_looked_at() {
    use super::may_be_several;
    let yes = [
        "{\"a\": 1} {\"b\": 2}\n",
        "{\"a\":1}\n{\"b\":2}\n",
        "  {\"a\":1}\n  {\"b\":2}\n",
        "null, {a: null, // note\na_: null }\n",
        "{\n  \"a\": 1\n}, {\"b\": 2}\n",
        "{\n  \"a\": 1\n}\n// next\n{\n  \"b\": 2\n}\n",
    ];
    for c in yes {
        assert!(may_be_several(c), "{c:?}");
    }
    let no = [
        "{\n  \"a\": 1,\n  \"b\": [1, 2],\n}\n",
        "[\n  {\"a\": 1},\n  {\"b\": 2}\n]\n",
        "{\n  \"a\": 1\n},\n",
        "",
    ];
    for c in no {
        assert!(!may_be_several(c), "{c:?}");
    }
}
