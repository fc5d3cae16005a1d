//! JSON inside JSON (Note [Embedded JSON] in `extract::embedded`, issue 32
//! §2): double-encoded and escaped documents are decoded where the schema
//! (or, without one, the whole value's shape) calls for it, never where the
//! schema says the field is a string; each decoding is reported.

use agentshape_core::extract::{ExtractOptions, Repair, extract_text, extract_text_compact};
use agentshape_core::outcome::CoercionKind;
use agentshape_core::validate::Validator;
use proptest::prelude::*;
use serde_json::{Value, json};

fn run(text: &str, schema: Option<&Value>) -> agentshape_core::outcome::Extraction {
    let validator = schema.map(|s| Validator::new(s).expect("a valid schema"));
    let opts = ExtractOptions {
        validator: validator.as_ref(),
        ..ExtractOptions::default()
    };
    let e = extract_text(text, &opts);
    // The compact writer gives the same value and repairs.
    let mut out = Vec::new();
    let c = extract_text_compact(text, &opts, &mut out);
    let written: Value = serde_json::from_slice(&out).expect("compact JSON");
    assert_eq!(
        Some(&written).filter(|v| !v.is_null()),
        e.value.as_ref(),
        "text: {text}"
    );
    assert_eq!(c.repairs, e.repairs, "text: {text}");
    e
}

fn object_schema(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "result": {"type": field},
            "note": {"type": "string"}
        },
        "required": ["result"]
    })
}

#[test]
fn without_a_schema_a_whole_string_holding_a_document_is_decoded() {
    for (text, want) in [
        (r#""{\"a\": 1}""#, json!({"a": 1})),
        (r#"  "[1, {\"b\": [true]}]"  "#, json!([1, {"b": [true]}])),
        (r#""```json\n{\"a\": 1}\n```""#, json!({"a": 1})),
    ] {
        let e = run(text, None);
        assert_eq!(e.value, Some(want), "text: {text}");
        assert!(
            e.repairs.contains(&Repair::DecodedEmbeddedJson),
            "text: {text}"
        );
    }
}

#[test]
fn without_a_schema_other_strings_stay_strings() {
    for (text, want) in [
        // A string inside a value: nothing says it was not meant as one.
        (
            r#"{"args": "{\"path\": \"/tmp\"}"}"#,
            json!({"args": "{\"path\": \"/tmp\"}"}),
        ),
        // Not strict JSON inside.
        (r#""[1,2,3,]""#, json!("[1,2,3,]")),
        (r#""hello""#, json!("hello")),
        (r#""{placeholder}""#, json!("{placeholder}")),
    ] {
        let e = run(text, None);
        assert_eq!(e.value, Some(want), "text: {text}");
        assert!(
            !e.repairs.contains(&Repair::DecodedEmbeddedJson),
            "text: {text}"
        );
    }
}

#[test]
fn a_schema_asking_for_an_object_decodes_the_field() {
    let schema = object_schema("object");
    for text in [
        r#"{"result": "{\"a\": 1}", "note": "{\"b\": 2}"}"#,
        r#"{"result": "```json\n{\"a\": 1}\n```", "note": "{\"b\": 2}"}"#,
        // Lax but harmless inside: single quotes, a trailing comma.
        r#"{"result": "{'a': 1,}", "note": "{\"b\": 2}"}"#,
        // Escaped once more inside the string.
        r#"{"result": "{\\\"a\\\": 1}", "note": "{\"b\": 2}"}"#,
    ] {
        let e = run(text, Some(&schema));
        // `note` is typed string: never decoded.
        assert_eq!(
            e.value,
            Some(json!({"result": {"a": 1}, "note": "{\"b\": 2}"})),
            "text: {text}"
        );
        assert!(e.valid, "text: {text}");
        assert!(
            e.repairs.contains(&Repair::DecodedEmbeddedJson),
            "text: {text}"
        );
    }
}

#[test]
fn a_whole_reply_encoded_twice_meets_its_schema() {
    let schema = object_schema("array");
    let e = run(r#""{\"result\": [1, 2]}""#, Some(&schema));
    assert_eq!(e.value, Some(json!({"result": [1, 2]})));
    assert!(e.valid);
    assert!(e.repairs.contains(&Repair::DecodedEmbeddedJson));
}

#[test]
fn a_schema_saying_string_keeps_the_string() {
    let schema = object_schema("string");
    let text = r#"{"result": "{\"a\": 1}"}"#;
    let e = run(text, Some(&schema));
    assert_eq!(e.value, Some(json!({"result": "{\"a\": 1}"})));
    assert!(e.valid);
    assert!(!e.repairs.contains(&Repair::DecodedEmbeddedJson));
    // A root typed string keeps a whole-reply string too.
    let e = run(r#""{\"a\": 1}""#, Some(&json!({"type": "string"})));
    assert_eq!(e.value, Some(json!("{\"a\": 1}")));
    // `["object", "string"]` allows the string: left alone.
    let e = run(text, Some(&object_schema_types(&["object", "string"])));
    assert_eq!(e.value, Some(json!({"result": "{\"a\": 1}"})));
}

fn object_schema_types(types: &[&str]) -> Value {
    json!({"type": "object", "properties": {"result": {"type": types}}})
}

#[test]
fn text_that_only_looks_like_json_is_not_decoded() {
    let schema = object_schema("object");
    for text in [
        r#"{"result": "{see the logs}"}"#,
        r#"{"result": "{\"a\": 1"}"#,
        r#"{"result": "```python\n{\"a\": 1}\n```"}"#,
    ] {
        let e = run(text, Some(&schema));
        assert!(
            e.value.as_ref().is_some_and(|v| v["result"].is_string()),
            "text: {text}"
        );
        assert!(!e.valid, "text: {text}");
        assert!(
            !e.repairs.contains(&Repair::DecodedEmbeddedJson),
            "text: {text}"
        );
    }
}

#[test]
fn decoding_follows_refs_unions_and_items() {
    let schema = json!({
        "type": "object",
        "$defs": {"finding": {"type": "object", "required": ["id"]}},
        "properties": {
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
            "meta": {"anyOf": [{"type": "null"}, {"type": "object"}]}
        }
    });
    let text = r#"{"findings": ["{\"id\": 1}", {"id": 2}], "meta": "{\"k\": \"v\"}"}"#;
    let e = run(text, Some(&schema));
    assert_eq!(
        e.value,
        Some(json!({"findings": [{"id": 1}, {"id": 2}], "meta": {"k": "v"}}))
    );
    assert!(e.valid, "{:?}", e.errors);
}

#[test]
fn the_decodings_are_listed_where_they_happened() {
    let schema = object_schema("object");
    let v = Validator::new(&schema).expect("a valid schema");
    let (value, done) = v.decode_embedded(
        json!({"result": "{\"a\": \"{\\\"b\\\": 1}\"}"}),
        &|s: &str| {
            serde_json::from_str::<Value>(s)
                .ok()
                .filter(|d| d.is_object() || d.is_array())
        },
    );
    // The inner string is not asked for as an object: it stays a string.
    assert_eq!(value, json!({"result": {"a": "{\"b\": 1}"}}));
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].kind, CoercionKind::EmbeddedJson);
    assert_eq!(done[0].instance_path, "/result");
}

#[test]
fn escaped_quotes_and_bracketed_fences() {
    let e = run(r#"\"hello world\""#, None);
    assert_eq!(e.value, Some(json!("hello world")));
    assert!(e.repairs.contains(&Repair::EscapedJson));
    let e = run(r#"{\"a\": 1}"#, None);
    assert_eq!(e.value, Some(json!({"a": 1})));
    let e = run("[```json\n{\"a\": \"b\"}\n```]", None);
    assert_eq!(e.value, Some(json!({"a": "b"})));
}

fn doc() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-zA-Z \"{}\\[\\]:,]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        proptest::collection::btree_map("[a-z]{1,6}", inner, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
    })
    .prop_filter("an object", Value::is_object)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any object, encoded into a string field the schema types `object`,
    /// comes back decoded; in a field typed `string` it stays the string.
    #[test]
    fn encoded_documents_round_trip(d in doc(), pretty in any::<bool>()) {
        let inner = if pretty {
            serde_json::to_string_pretty(&d).expect("JSON")
        } else {
            serde_json::to_string(&d).expect("JSON")
        };
        let text = serde_json::to_string(&json!({"result": inner, "note": inner})).expect("JSON");
        let e = run(&text, Some(&object_schema("object")));
        prop_assert_eq!(e.value, Some(json!({"result": d, "note": inner})), "text: {}", text);
        prop_assert!(e.valid);
    }
}
