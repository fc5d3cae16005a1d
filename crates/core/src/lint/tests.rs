//! Table tests for lint and fix, one dialect rule per row.

use serde_json::{Value, json};

use super::*;
use crate::validate::Validator;

fn rules_at(schema: &Value, d: Dialect) -> Vec<(String, &'static str, Severity)> {
    lint(schema, d)
        .into_iter()
        .map(|f| (f.pointer, f.rule, f.severity))
        .collect()
}

/// The seed-003 hook schema: `reason` optional, objects closed.
fn hook() -> Value {
    json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string", "minLength": 3}},
        "required": ["ok"],
        "additionalProperties": false
    })
}

#[test]
fn each_dialect_flags_what_it_rejects_or_ignores() {
    use Severity::{Error, Ignored};
    type Row = (Dialect, Value, Vec<(&'static str, &'static str, Severity)>);
    let cases: Vec<Row> = vec![
        (
            Dialect::Openai,
            hook(),
            vec![
                ("/properties/reason", "optional_property", Error),
                ("/properties/reason/minLength", "unsupported_keyword", Error),
            ],
        ),
        (
            Dialect::Anthropic,
            hook(),
            vec![("/properties/reason/minLength", "unsupported_keyword", Error)],
        ),
        (Dialect::Gemini, hook(), vec![]),
        (Dialect::Ollama, hook(), vec![]),
        (
            Dialect::Anthropic,
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
            vec![
                ("", "additional_properties", Error),
                ("/properties/n/minimum", "unsupported_keyword", Error),
            ],
        ),
        (
            Dialect::Openai,
            json!({"type": "array", "items": {"type": "string"}}),
            vec![("", "root_object", Error)],
        ),
        (
            Dialect::Openai,
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false, "oneOf": [{}, {}], "default": {}}),
            vec![
                ("", "root_object", Error),
                ("/default", "unsupported_keyword", Error),
                ("/oneOf", "unsupported_keyword", Error),
            ],
        ),
        (
            Dialect::Gemini,
            json!({"type": "array", "uniqueItems": true, "items": {"not": {"type": "null"}}}),
            vec![
                ("/items/not", "ignored_keyword", Ignored),
                ("/uniqueItems", "ignored_keyword", Ignored),
            ],
        ),
        (
            Dialect::Ollama,
            json!({"type": "number", "multipleOf": 5, "format": "email"}),
            vec![
                ("/format", "ignored_keyword", Ignored),
                ("/multipleOf", "ignored_keyword", Ignored),
            ],
        ),
        (
            Dialect::Anthropic,
            json!({"$defs": {"node": {"type": "object", "additionalProperties": false, "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}),
            vec![("/$defs/node/properties/next/$ref", "recursion", Error)],
        ),
        (
            Dialect::Anthropic,
            json!({"type": "array", "minItems": 2, "items": {"enum": [[1], 2]}}),
            vec![
                ("/items/enum", "complex_enum", Error),
                ("/minItems", "min_items", Error),
            ],
        ),
        (
            Dialect::Openai,
            json!({"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}, "required": ["a"], "additionalProperties": false}),
            vec![("/properties/a/$ref", "remote_ref", Error)],
        ),
    ];
    for (d, schema, want) in cases {
        let want: Vec<(String, &str, Severity)> = want
            .into_iter()
            .map(|(p, r, s)| (p.to_owned(), r, s))
            .collect();
        assert_eq!(rules_at(&schema, d), want, "{d:?} {schema}");
    }
}

#[test]
fn openai_limits_are_checked() {
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"], "additionalProperties": false});
    }
    let f = lint(&deep, Dialect::Openai);
    assert_eq!(
        f.iter().map(|f| f.rule).collect::<Vec<_>>(),
        vec!["nesting_depth"]
    );
    assert!(!f[0].fixable);
    let values: Vec<Value> = (0..1001).map(|i| json!(i)).collect();
    let big = json!({"type": "object", "properties": {"a": {"enum": values}}, "required": ["a"], "additionalProperties": false});
    assert_eq!(
        lint(&big, Dialect::Openai)
            .iter()
            .map(|f| f.rule)
            .collect::<Vec<_>>(),
        vec!["enum_values"]
    );
    let props: serde_json::Map<String, Value> = (0..25)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let many = json!({"type": "object", "properties": props, "additionalProperties": false});
    assert_eq!(
        lint(&many, Dialect::Anthropic)
            .iter()
            .map(|f| f.rule)
            .collect::<Vec<_>>(),
        vec!["optional_count"]
    );
}

#[test]
fn openai_fix_makes_optional_nullable_and_maps_back() {
    let fixed = fix(&hook(), Dialect::Openai);
    assert_eq!(
        fixed.schema,
        json!({
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "reason": {"type": ["string", "null"], "description": "(minLength: 3)"}
            },
            "required": ["ok", "reason"],
            "additionalProperties": false
        })
    );
    assert!(lint(&fixed.schema, Dialect::Openai).is_empty());
    let original = Validator::new(&hook()).unwrap();
    let back = fixed.map_back(json!({"ok": true, "reason": null}));
    assert_eq!(back, json!({"ok": true}));
    assert!(original.is_valid(&back));
    assert_eq!(
        fixed.to_fixed_shape(json!({"ok": false})),
        json!({"ok": false, "reason": null})
    );
}

#[test]
fn openai_fix_wraps_a_non_object_root_and_merges_all_of() {
    let schema = json!({"type": "array", "items": {"allOf": [{"$ref": "#/definitions/a"}, {"properties": {"b": {"type": "integer"}}}]}, "definitions": {"a": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}});
    let fixed = fix(&schema, Dialect::Openai);
    assert!(fixed.wrapped);
    assert_eq!(lint(&fixed.schema, Dialect::Openai), vec![]);
    assert_eq!(
        fixed.schema["properties"]["value"]["items"]["properties"]["b"],
        json!({"type": ["integer", "null"]})
    );
    let answer = json!({"value": [{"a": "x", "b": null}]});
    assert_eq!(fixed.map_back(answer), json!([{"a": "x"}]));
}

#[test]
fn nullable_covers_enums_refs_and_unions() {
    let schema = json!({"type": "object", "additionalProperties": false, "properties": {
        "e": {"enum": ["a", "b"]},
        "r": {"$ref": "#/$defs/x", "description": "d"},
        "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    }, "$defs": {"x": {"type": "string"}}});
    let fixed = fix(&schema, Dialect::Openai);
    let p = &fixed.schema["properties"];
    assert_eq!(p["e"], json!({"enum": ["a", "b", null]}));
    assert_eq!(
        p["r"],
        json!({"description": "d", "anyOf": [{"$ref": "#/$defs/x"}, {"type": "null"}]})
    );
    assert_eq!(
        p["u"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(lint(&fixed.schema, Dialect::Openai), vec![]);
    Validator::new(&fixed.schema).unwrap();
}

#[test]
fn anthropic_fix_moves_constraints_into_descriptions_and_closes_objects() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "description": "count"}, "tags": {"type": "array", "minItems": 2, "items": {"type": "string"}}}, "oneOf": [{"required": ["n"]}, {"required": ["tags"]}]});
    let fixed = fix(&schema, Dialect::Anthropic);
    assert_eq!(
        fixed.schema["properties"]["n"],
        json!({"type": "integer", "description": "count (minimum: 1)"})
    );
    assert_eq!(
        fixed.schema["properties"]["tags"]["description"],
        json!("(minItems: 2)")
    );
    assert_eq!(fixed.schema["additionalProperties"], json!(false));
    assert!(fixed.schema.get("anyOf").is_some());
    assert_eq!(lint(&fixed.schema, Dialect::Anthropic), vec![]);
}

#[test]
fn gemini_and_ollama_fixes_clear_ignored_keywords() {
    let schema =
        json!({"type": "array", "uniqueItems": true, "items": {"type": "number", "multipleOf": 2}});
    for d in [Dialect::Gemini, Dialect::Ollama] {
        let fixed = fix(&schema, d);
        assert_eq!(lint(&fixed.schema, d), vec![], "{d:?}");
        assert!(!fixed.wrapped);
    }
}

#[test]
fn an_accepted_schema_is_left_unchanged() {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false});
    for d in Dialect::ALL {
        let fixed = fix(&schema, d);
        assert!(!fixed.changed(), "{d:?}: {:?}", fixed.changes);
        assert_eq!(fixed.schema, schema);
    }
}

/// One row per llguidance rule (`docs/json_schema.md` and its compiler's
/// `IMPLEMENTED` list): what compiles passes, what does not is an error.
#[test]
fn local_flags_what_llguidance_refuses_to_compile() {
    use Severity::Error;
    type Row = (Value, Vec<(&'static str, &'static str, Severity)>);
    let cases: Vec<Row> = vec![
        // Everything it implements: no finding.
        (
            json!({"type": "object", "title": "t", "x-guidance": {"whitespace_flexible": false},
                   "properties": {
                       "a": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^[a-z]+$", "format": "email"},
                       "b": {"type": "number", "minimum": 0, "exclusiveMaximum": 5, "multipleOf": 0.5},
                       "c": {"type": "array", "items": {"enum": [1, 2]}, "minItems": 1, "maxItems": 3},
                       "d": {"anyOf": [{"$ref": "#/$defs/x"}, {"const": null}]},
                       "e": {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": false},
                       "f": {"allOf": [{"type": "integer"}, {"maximum": 3}]}},
                   "required": ["a"], "$defs": {"x": {"type": "boolean"}}}),
            vec![],
        ),
        (
            json!({"type": "array", "uniqueItems": true}),
            vec![("/uniqueItems", "unsupported_keyword", Error)],
        ),
        (
            json!({"type": "array", "contains": {"const": 1}}),
            vec![("/contains", "unsupported_keyword", Error)],
        ),
        (
            json!({"not": {"type": "null"}}),
            vec![("/not", "unsupported_keyword", Error)],
        ),
        (
            json!({"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"type": "null"}}),
            vec![
                ("/else", "unsupported_keyword", Error),
                ("/if", "unsupported_keyword", Error),
                ("/then", "unsupported_keyword", Error),
            ],
        ),
        (
            json!({"type": "object", "propertyNames": {"maxLength": 3}}),
            vec![("/propertyNames", "unsupported_keyword", Error)],
        ),
        (
            json!({"type": "object", "dependentRequired": {"a": ["b"]}}),
            vec![("/dependentRequired", "unsupported_keyword", Error)],
        ),
        (
            json!({"type": "object", "unevaluatedProperties": false}),
            vec![("/unevaluatedProperties", "unsupported_keyword", Error)],
        ),
        (json!({"type": "string", "format": "ipv4"}), vec![]),
        (
            json!({"type": "string", "format": "regex"}),
            vec![("/format", "unsupported_keyword", Error)],
        ),
        (
            json!({"type": "string", "format": "uri-reference"}),
            vec![("/format", "unsupported_keyword", Error)],
        ),
        (
            json!({"type": "string", "pattern": "^(?!x).*$"}),
            vec![("/pattern", "pattern", Error)],
        ),
        (
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            vec![("/oneOf", "unsupported_keyword", Error)],
        ),
        // min/maxProperties: only when every listed property is required.
        (
            json!({"type": "object", "properties": {"a": {}}, "required": ["a"], "maxProperties": 3}),
            vec![],
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1}),
            vec![],
        ),
        (
            json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"], "minProperties": 1}),
            vec![("/minProperties", "unsupported_keyword", Error)],
        ),
        (
            json!({"$ref": "https://example.com/s.json"}),
            vec![("/$ref", "remote_ref", Error)],
        ),
        // Vendor keys are not JSON Schema keywords: llguidance skips them.
        (json!({"type": "string", "x-whatever": {"not": 1}}), vec![]),
    ];
    for (schema, want) in cases {
        let got = rules_at(&schema, Dialect::Local);
        let want: Vec<(String, &str, Severity)> = want
            .into_iter()
            .map(|(p, r, s)| (p.to_owned(), r, s))
            .collect();
        assert_eq!(got, want, "{schema}");
    }
}

#[test]
fn local_fix_leaves_a_schema_llguidance_compiles() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "format": "regex"}, "uniqueItems": true},
            "v": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "w": {"not": {"const": 0}}
        },
        "minProperties": 1
    });
    let fixed = fix(&schema, Dialect::Local);
    assert!(
        lint(&fixed.schema, Dialect::Local).is_empty(),
        "{:#}",
        fixed.schema
    );
    assert!(fixed.schema["properties"]["v"].get("anyOf").is_some());
    let tags = &fixed.schema["properties"]["tags"];
    assert!(tags.get("uniqueItems").is_none());
    assert!(
        tags["description"]
            .as_str()
            .unwrap()
            .contains("uniqueItems"),
        "{tags}"
    );
    // The original keeps enforcing what moved (belt and suspenders).
    let original = Validator::new(&schema).unwrap();
    assert!(!original.is_valid(&json!({"tags": ["a", "a"]})));
    assert!(Dialect::from_name("local") == Some(Dialect::Local));
}
