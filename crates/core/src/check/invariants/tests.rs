use serde_json::json;

use super::*;
use crate::validate::Validator;

/// `(instance_path, schema_path, rule, message)` of each violation.
fn found(schema: &Value, instance: &Value) -> Vec<(String, String, String, String)> {
    let v = Validator::new(schema).unwrap();
    v.errors_and_invariants(instance)
        .into_iter()
        .map(|e| {
            (
                e.instance_path,
                e.schema_path,
                e.rule
                    .unwrap_or_else(|| format!("<schema, kind {:?}>", e.kind)),
                e.message,
            )
        })
        .collect()
}

fn code_review() -> Value {
    crate::profile::Profile::builtin("code-review")
        .unwrap()
        .schema
}

#[test]
fn code_review_counts_must_match_findings() {
    let schema = code_review();
    let inv = Invariants::compile(&schema).unwrap();
    assert_eq!(inv.len(), 4);
    let ok = json!({"findings": [
        {"severity": "blocker", "file": "a.rs", "line": 3, "description": "d", "raisedBy": "s"}
    ], "counts": {"blocker": 1, "major": 0, "minor": 0, "nit": 0}});
    assert_eq!(found(&schema, &ok), []);
    // Seed 002, journal 09: "3 blockers" while the findings list none.
    let writer = json!({"findings": [
        {"severity": "minor", "file": "a.rs", "line": 3, "description": "d", "raisedBy": "s"}
    ], "counts": {"blocker": 3, "major": 0, "minor": 1, "nit": 0}});
    let got = found(&schema, &writer);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "");
    assert_eq!(got[0].1, "/x-invariants/0");
    assert_eq!(
        got[0].2,
        "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()"
    );
    assert_eq!(
        got[0].3,
        "counts.blocker must equal the number of findings with severity blocker"
    );
}

#[test]
fn rules_over_arrays_nested_objects_and_optional_fields() {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "x-invariants": [{"rule": "self.all(i, i.qty > 0)", "message": "quantities are positive"}],
                "items": {
                    "type": "object",
                    "x-invariants": [
                        {"rule": "!has(self.discount) || self.discount <= self.price",
                         "message": "a discount never exceeds the price"}
                    ]
                }
            },
            "range": {
                "type": "object",
                "properties": {"inner": {"x-invariants": [{"rule": "self.lo <= self.hi"}]}}
            }
        }
    });
    let ok = json!({"items": [{"qty": 1, "price": 5}, {"qty": 2, "price": 5, "discount": 1}],
                    "range": {"inner": {"lo": 1, "hi": 2}}});
    assert_eq!(found(&schema, &ok), []);
    let bad = json!({"items": [{"qty": 0, "price": 5}, {"qty": 2, "price": 5, "discount": 9}],
                     "range": {"inner": {"lo": 3, "hi": 2}}});
    let got: Vec<(String, String, String)> = found(&schema, &bad)
        .into_iter()
        .map(|(i, s, _, m)| (i, s, m))
        .collect();
    let want: Vec<(String, String, String)> = [
        (
            "/items",
            "/properties/items/x-invariants/0",
            "quantities are positive",
        ),
        (
            "/items/1",
            "/properties/items/items/x-invariants/0",
            "a discount never exceeds the price",
        ),
        (
            "/range/inner",
            "/properties/range/properties/inner/x-invariants/0",
            "failed rule: self.lo <= self.hi",
        ),
    ]
    .into_iter()
    .map(|(a, b, c)| (a.into(), b.into(), c.into()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn runtime_errors_are_findings_not_panics() {
    let schema = json!({"x-invariants": [
        {"rule": "self.missing > 0", "message": "missing must be positive"},
        {"rule": "self.name + 1 == 2", "message": "type error"},
        {"rule": "self.n / 0 == 1", "message": "division"},
        {"rule": "self.n", "message": "not a boolean"}
    ]});
    let got = found(&schema, &json!({"name": "x", "n": 4}));
    let messages: Vec<&str> = got.iter().map(|g| g.3.as_str()).collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(
        messages[0],
        "missing must be positive: the rule could not be evaluated: No such key: missing"
    );
    assert!(
        messages[1].starts_with("type error: the rule could not be evaluated: "),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].starts_with("division: the rule could not be evaluated: "),
        "{}",
        messages[2]
    );
    assert_eq!(
        messages[3],
        "not a boolean: the rule gave an int instead of a boolean"
    );
    // Every one carries kind and rule.
    let v = Validator::new(&schema).unwrap();
    for e in v.errors_and_invariants(&json!({"name": "x", "n": 4})) {
        assert_eq!(e.kind, Some(ViolationKind::Invariant));
        assert!(e.rule.is_some());
    }
}

/// Note [Errors name values, not dump them]: a rule error that involves the
/// agent's lists, maps or long strings names them by size or cuts them, so
/// the message is short and the same on every run (the interpreter's own text
/// printed maps in `HashMap` order).
#[test]
fn runtime_error_messages_name_values_by_size() {
    let keys: serde_json::Map<String, Value> =
        (0..12).map(|i| (format!("key{i}"), json!(i))).collect();
    let long = "x".repeat(100);
    let instance = json!({"m": keys, "l": [1, 2, 3], "s": long, "n": 7});
    let cases = [
        (
            "self.m + 1 == 2",
            "Unsupported binary operator 'add': a map of 12 keys, 1",
        ),
        (
            "self.l / 2 == 1",
            "Unsupported binary operator 'div': a list of 3, 2",
        ),
        ("self.n / 0 == 1", "Division by zero of 7"),
        ("self.l[7] == 1", "Index out of bounds: 7"),
    ];
    for (rule, want) in cases {
        let schema = json!({"x-invariants": [{"rule": rule, "message": "m"}]});
        // Twice: each evaluation builds its maps afresh, in a new hash order.
        for _ in 0..2 {
            let got = found(&schema, &instance);
            assert_eq!(got.len(), 1, "{rule}: {got:?}");
            let message = &got[0].3;
            assert_eq!(
                message.strip_prefix("m: the rule could not be evaluated: "),
                Some(want),
                "{rule}"
            );
        }
    }
    // A long string is cut at 40 characters, quoted as JSON.
    let schema = json!({"x-invariants": [{"rule": "self.s - 1 == 2", "message": "m"}]});
    let got = found(&schema, &instance);
    let message = &got[0].3;
    assert!(
        message.ends_with(&format!("\"{}…\", 1", "x".repeat(40))),
        "{message}"
    );
    assert!(message.len() < 120, "{message}");
}

#[test]
fn rules_run_only_where_schema_validation_passed() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "object", "required": ["n"], "x-invariants": [{"rule": "self.n > 0"}]},
            "b": {"type": "object", "x-invariants": [{"rule": "self.n > 0"}]}
        },
        "x-invariants": [{"rule": "false", "message": "root"}]
    });
    // `a` fails its schema, so neither `a`'s rule nor the root's runs; `b`'s does.
    let got = found(&schema, &json!({"a": {}, "b": {"n": 0}}));
    let got: Vec<(&str, &str)> = got.iter().map(|g| (g.0.as_str(), g.2.as_str())).collect();
    assert_eq!(got, [("/a", "<schema, kind None>"), ("/b", "self.n > 0"),]);
}

#[test]
fn local_refs_all_of_additional_properties_and_tuples_are_followed() {
    let schema = json!({
        "$defs": {"pos": {"x-invariants": [{"rule": "self > 0", "message": "positive"}]}},
        "type": "object",
        "properties": {
            "r": {"$ref": "#/$defs/pos"},
            "t": {"prefixItems": [{"$ref": "#/$defs/pos"}], "items": {"x-invariants": [{"rule": "self < 0", "message": "negative"}]}}
        },
        "additionalProperties": {"x-invariants": [{"rule": "self == 'x'", "message": "x only"}]}
    });
    let got = found(&schema, &json!({"r": 0, "t": [0, 1], "extra": "y"}));
    let got: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|g| (g.0.as_str(), g.1.as_str(), g.3.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("/extra", "/additionalProperties/x-invariants/0", "x only"),
            ("/r", "/$defs/pos/x-invariants/0", "positive"),
            ("/t/0", "/$defs/pos/x-invariants/0", "positive"),
            ("/t/1", "/properties/t/items/x-invariants/0", "negative"),
        ]
    );
}

#[test]
fn draft7_tuples_and_additional_items_are_followed() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"pos": {"x-invariants": [{"rule": "self > 0", "message": "positive"}]}},
        "items": [{}, {"allOf": [{"$ref": "#/definitions/pos"}]}],
        "additionalItems": {"x-invariants": [{"rule": "self < 0", "message": "negative"}]}
    });
    let got = found(&schema, &json!([0, 0, 0]));
    let got: Vec<(&str, &str)> = got.iter().map(|g| (g.0.as_str(), g.1.as_str())).collect();
    assert_eq!(
        got,
        [
            ("/1", "/definitions/pos/x-invariants/0"),
            ("/2", "/additionalItems/x-invariants/0"),
        ]
    );
}

#[test]
fn recursive_refs_terminate() {
    let schema = json!({
        "$defs": {"node": {
            "type": "object",
            "x-invariants": [{"rule": "self.v >= 0", "message": "non-negative"}],
            "properties": {"next": {"$ref": "#/$defs/node"}},
            "allOf": [{"$ref": "#/$defs/node"}]
        }},
        "$ref": "#/$defs/node"
    });
    let got = found(
        &schema,
        &json!({"v": 1, "next": {"v": -1, "next": {"v": 2}}}),
    );
    let got: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(got, ["/next"]);
}

#[test]
fn bad_rules_are_schema_errors_naming_rule_and_location() {
    for (schema, want) in [
        (
            json!({"properties": {"c": {"x-invariants": [{"rule": "self.a ==", "message": "m"}]}}}),
            "invalid schema: `x-invariants` rule `self.a ==` at `/properties/c/x-invariants/0` \
             does not compile: ",
        ),
        (
            json!({"x-invariants": {"rule": "true"}}),
            "invalid schema: `x-invariants` at `/x-invariants`: expected a list of",
        ),
        (
            json!({"x-invariants": [{"message": "no rule"}]}),
            "invalid schema: `x-invariants` at `/x-invariants/0`: expected an object with a \
             string `rule`",
        ),
        (
            json!({"anyOf": [{"x-invariants": [{"rule": "true"}]}]}),
            "invalid schema: `x-invariants` at `/anyOf/0/x-invariants` would never run",
        ),
    ] {
        let err = Validator::new(&schema).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn the_schema_validator_ignores_the_keyword() {
    let schema = json!({"type": "integer", "x-invariants": [{"rule": "self > 10"}]});
    let v = Validator::new(&schema).unwrap();
    assert!(v.is_valid(&json!(3)));
    assert_eq!(v.errors(&json!(3)), []);
    assert_eq!(v.errors_and_invariants(&json!(3)).len(), 1);
    // A property named like the keyword is data, not rules.
    let v = Validator::new(&json!({"properties": {"x-invariants": {"type": "string"}}})).unwrap();
    assert!(v.invariants().is_empty());
}

#[test]
fn check_extraction_marks_invalid_and_skips_nothing_found() {
    let inv = Invariants::compile(&json!({"x-invariants": [{"rule": "self.ok"}]})).unwrap();
    let mut e = Extraction::none();
    check_extraction(&mut e, &inv);
    assert!(e.errors.is_empty());
    let mut e = Extraction {
        value: Some(json!({"ok": false})),
        method: Method::Bare,
        valid: true,
        ..Extraction::none()
    };
    check_extraction(&mut e, &inv);
    assert!(!e.valid);
    assert_eq!(e.errors[0].rule.as_deref(), Some("self.ok"));
    assert_eq!(
        serde_json::to_value(&e.errors[0]).unwrap(),
        json!({"instance_path": "", "schema_path": "/x-invariants/0",
               "message": "failed rule: self.ok", "kind": "invariant", "rule": "self.ok"})
    );
}

#[test]
fn invariants_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Invariants>();
}

// ---- issue 13: the cost limit (Note [Cost limit]) ---------------------------

fn items(n: usize) -> Value {
    json!({ "items": (0..n).collect::<Vec<_>>() })
}

fn one_rule(rule: &str) -> Value {
    json!({"type": "object", "x-invariants": [{"rule": rule, "message": "m"}]})
}

/// An O(n³) rule over 400 items (64 million iterations, 36 s before the
/// limit) ends with a finding saying it exceeded the cost limit. A hang
/// guard, not a timed test: without the limit it would not end in any
/// reasonable time.
#[test]
fn cubic_rule_over_400_items_stops_at_the_cost_limit() {
    let schema =
        one_rule("self.items.all(a, self.items.all(b, self.items.all(c, a + b + c >= 0)))");
    let got = found(&schema, &items(400));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].3.contains("exceeded the cost limit"), "{}", got[0].3);
    assert!(got[0].3.starts_with("m: "), "{}", got[0].3);
}

#[test]
fn cost_is_charged_for_every_loop_and_scan() {
    // (rule, instance size, limit, passes)
    let cases: &[(&str, usize, u64, bool)] = &[
        // One loop over 100 items costs 100.
        ("self.items.all(x, x >= 0)", 100, 100, true),
        ("self.items.all(x, x >= 0)", 100, 99, false),
        // A pair loop costs n + n².
        (
            "self.items.all(a, self.items.exists(b, b == a))",
            30,
            930,
            true,
        ),
        (
            "self.items.all(a, self.items.exists(b, b == a))",
            30,
            929,
            false,
        ),
        // `map` and `filter` keep working and are charged: two loops of
        // 50, and the 50 elements `map` builds (Note [Memory charge]).
        (
            "self.items.map(x, x * 2).filter(x, x > 10).size() == 44",
            50,
            150,
            true,
        ),
        (
            "self.items.map(x, x * 2).filter(x, x > 10).size() == 44",
            50,
            149,
            false,
        ),
        // `in` scans its list: 20 loops, each scanning 20.
        ("self.items.all(x, x in self.items)", 20, 420, true),
        ("self.items.all(x, x in self.items)", 20, 419, false),
        // `+` copies its lists: 10 loops, each copying 10 + 10.
        (
            "self.items.all(x, (self.items + self.items).size() == 20)",
            10,
            210,
            true,
        ),
        (
            "self.items.all(x, (self.items + self.items).size() == 20)",
            10,
            209,
            false,
        ),
        // No loop, no cost.
        ("self.items.size() == 5", 5, 0, true),
    ];
    for (rule, n, limit, passes) in cases {
        let inv = Invariants::compile(&one_rule(rule))
            .unwrap()
            .with_cost_limit(*limit);
        let got = inv.evaluate(&items(*n), &[]);
        if *passes {
            assert!(got.is_empty(), "{rule} at {limit}: {got:?}");
        } else {
            assert_eq!(got.len(), 1, "{rule} at {limit}");
            assert!(
                got[0].message.contains("exceeded the cost limit"),
                "{rule}: {}",
                got[0].message
            );
        }
    }
}

#[test]
fn a_false_rule_within_the_limit_is_still_just_false() {
    let schema = one_rule("self.items.all(a, self.items.all(b, a != b || a == b)) && false");
    assert_eq!(found(&schema, &items(50))[0].3, "m");
}

/// Rules over selections, iteration, whole-value comparison, indexing,
/// `has`, shadowed `self`, maps, two-variable comprehensions, floats and
/// functions outside the native subset.
const RULES: &[&str] = &[
    "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()",
    "self.findings.all(f, f.line > 0 && has(f.file))",
    "self.findings.exists(f, f.severity == 'nit')",
    "self.findings.map(f, f.line).filter(l, l > 2).size() == 1",
    "self.findings[0].severity == 'blocker'",
    "self.findings[0] == {'severity': 'blocker'}",
    "self.counts == {'blocker': 1}",
    "'blocker' in self.counts",
    "self.counts.all(k, self.counts[k] >= 0)",
    "self.counts.all(k, k.size() > 0)",
    "self.counts.exists(k, k.severity == 'x')",
    "self.findings.all(i, f, f.line > i)",
    "self.findings.all(self, self.line > 0)",
    "self.findings.all(f, self.findings.exists(g, g.line == f.line))",
    "self.findings.filter(f, f.severity == 'minor').all(f, f.file == 'b.rs')",
    "has(self.missing) || self.findings.size() == 2",
    "self.missing.x == 1",
    "self.findings.all(f, f.nope == 1)",
    "self.findings.exists(f, f.line == 3) && self.findings[1].file == 'b.rs'",
    "size(self) == 2",
    "self.findings.all(f, f.line.size() == 1)",
    "self.name.startsWith('r')",
    "self.nested.all(x, x.all(y, y.v == 1))",
    "self.nested.exists(x, x.exists(y, y.w == 2))",
    "self.findings.all(f, [f.severity].all(s, s in ['blocker', 'minor']))",
    "self.findings.exists_one(f, f.line == 3)",
    "self.findings.map(f, f.line + 1).all(l, l >= 2 && l <= 4)",
    "self.counts.blocker + 1 > 1 || !(self.name == 'r1')",
    "self.name < 's' && self.name != 'x'",
    "self.findings + [1] == self.findings",
    "(self.findings + self.findings).size() == 4",
    "self.counts.blocker in [1, 2]",
    "self.findings.all(f, f.line != null ? f.line >= 0 : true)",
    "self.counts.blocker == 1.0",
    "self.name.size() == 2",
    "self.findings.filter(f, f.line > 1).map(f, f.file) == ['a.rs']",
    "self.nested[0][0].v == 1",
    "self.counts.all(k, k != 'x')",
];

/// Instances for [`RULES`]: the shape they expect, then others.
fn table_instances() -> [Value; 5] {
    [
        json!({"findings": [
            {"severity": "blocker", "file": "a.rs", "line": 3},
            {"severity": "minor", "file": "b.rs", "line": 1}
        ], "counts": {"blocker": 1}, "name": "r1", "nested": [[{"v": 1, "w": 2}], [{"v": 1}]]}),
        json!({"findings": [{"severity": "nit", "line": 0}, "odd"], "counts": {"blocker": 2, "x": -1},
               "name": 5, "nested": {"a": 1}}),
        json!({"findings": {"a": {"severity": "blocker"}}, "counts": [1], "missing": {"x": 1}}),
        json!(["not", "an", "object"]),
        json!(null),
    ]
}

/// Note [Projected binding]: binding only what a rule reaches gives the same
/// findings (messages included) as binding the whole instance, over rules
/// that select, iterate, compare whole values, index, test with `has`,
/// shadow `self`, iterate maps and use two-variable comprehensions.
#[test]
fn projected_binding_gives_the_same_findings_as_binding_everything() {
    let rules = RULES;
    let instances = table_instances();
    for rule in rules {
        let schema = one_rule(rule);
        let projected = Invariants::compile(&schema).unwrap();
        let mut whole = Invariants::compile(&schema).unwrap();
        whole.projected = false;
        let validator = Validator::new(&schema).unwrap();
        for inst in &instances {
            assert_eq!(
                projected.evaluate(inst, &[]),
                whole.evaluate(inst, &[]),
                "rule {rule} on {inst}"
            );
            // Read in place (Note [Validating from text]): where the native
            // evaluator answers, the same findings.
            if let Some(got) = validator.check_text(&inst.to_string()) {
                assert_eq!(
                    got,
                    validator.errors_and_invariants(inst),
                    "rule {rule} on {inst}"
                );
            }
        }
    }
    let validator = Validator::new(&one_rule(rules[0])).unwrap();
    assert_eq!(
        validator.check_text(&instances[0].to_string()),
        Some(Vec::new())
    );
    let wrong = r#"{"findings": [{"severity": "minor"}], "counts": {"blocker": 1}}"#;
    assert_eq!(validator.check_text(wrong).map(|f| f.len()), Some(1));
}

/// Note [Compiled native rules]: which rules of [`RULES`] the compiled
/// native program decides on each of [`table_instances`] (`None`: the
/// interpreter decides), pinned to what the AST walk it replaced decided
/// (the two agreed on 30,000 random rules before the walk was deleted), and
/// each answer is the interpreter's.
#[test]
#[allow(clippy::too_many_lines)] // one row per rule
fn compiled_rules_decide_what_the_subset_covers() {
    let table: &[(&str, [Option<bool>; 5])] = &[
        (
            "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings.all(f, f.line > 0 && has(f.file))",
            [Some(true), Some(false), None, None, None],
        ),
        (
            "self.findings.exists(f, f.severity == 'nit')",
            [Some(false), Some(true), None, None, None],
        ),
        (
            "self.findings.map(f, f.line).filter(l, l > 2).size() == 1",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings[0].severity == 'blocker'",
            [None, None, None, None, None],
        ),
        (
            "self.findings[0] == {'severity': 'blocker'}",
            [None, None, None, None, None],
        ),
        (
            "self.counts == {'blocker': 1}",
            [None, None, None, None, None],
        ),
        (
            "'blocker' in self.counts",
            [Some(true), Some(true), None, None, None],
        ),
        (
            "self.counts.all(k, self.counts[k] >= 0)",
            [None, None, None, None, None],
        ),
        (
            "self.counts.all(k, k.size() > 0)",
            [Some(true), Some(true), None, None, None],
        ),
        (
            "self.counts.exists(k, k.severity == 'x')",
            [None, None, None, None, None],
        ),
        (
            "self.findings.all(i, f, f.line > i)",
            [None, None, None, None, None],
        ),
        (
            "self.findings.all(self, self.line > 0)",
            [Some(true), Some(false), None, None, None],
        ),
        (
            "self.findings.all(f, self.findings.exists(g, g.line == f.line))",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings.filter(f, f.severity == 'minor').all(f, f.file == 'b.rs')",
            [Some(true), None, None, None, None],
        ),
        (
            "has(self.missing) || self.findings.size() == 2",
            [Some(true), Some(true), Some(true), None, None],
        ),
        ("self.missing.x == 1", [None, None, Some(true), None, None]),
        (
            "self.findings.all(f, f.nope == 1)",
            [None, None, None, None, None],
        ),
        (
            "self.findings.exists(f, f.line == 3) && self.findings[1].file == 'b.rs'",
            [None, None, None, None, None],
        ),
        (
            "size(self) == 2",
            [Some(false), Some(false), Some(false), Some(false), None],
        ),
        (
            "self.findings.all(f, f.line.size() == 1)",
            [None, None, None, None, None],
        ),
        ("self.name.startsWith('r')", [None, None, None, None, None]),
        (
            "self.nested.all(x, x.all(y, y.v == 1))",
            [Some(true), None, None, None, None],
        ),
        (
            "self.nested.exists(x, x.exists(y, y.w == 2))",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings.all(f, [f.severity].all(s, s in ['blocker', 'minor']))",
            [Some(true), Some(false), None, None, None],
        ),
        (
            "self.findings.exists_one(f, f.line == 3)",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings.map(f, f.line + 1).all(l, l >= 2 && l <= 4)",
            [Some(true), None, None, None, None],
        ),
        (
            "self.counts.blocker + 1 > 1 || !(self.name == 'r1')",
            [Some(true), Some(true), None, None, None],
        ),
        (
            "self.name < 's' && self.name != 'x'",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings + [1] == self.findings",
            [None, None, None, None, None],
        ),
        (
            "(self.findings + self.findings).size() == 4",
            [Some(true), Some(true), None, None, None],
        ),
        (
            "self.counts.blocker in [1, 2]",
            [Some(true), Some(true), None, None, None],
        ),
        (
            "self.findings.all(f, f.line != null ? f.line >= 0 : true)",
            [None, None, None, None, None],
        ),
        ("self.counts.blocker == 1.0", [None, None, None, None, None]),
        (
            "self.name.size() == 2",
            [Some(true), None, None, None, None],
        ),
        (
            "self.findings.filter(f, f.line > 1).map(f, f.file) == ['a.rs']",
            [None, None, None, None, None],
        ),
        ("self.nested[0][0].v == 1", [None, None, None, None, None]),
        (
            "self.counts.all(k, k != 'x')",
            [Some(true), Some(false), None, None, None],
        ),
    ];
    assert_eq!(table.len(), RULES.len());
    let instances = table_instances();
    let env = Env::stdlib();
    for (rule, want) in table {
        let p = native::Program::compile(env.compile(rule).unwrap().expression());
        let got = instances.each_ref().map(|i| p.verdict(i, COST_LIMIT));
        assert_eq!(&got, want, "{rule}");
        let mut interpreter = Invariants::compile(&one_rule(rule)).unwrap();
        interpreter.projected = false;
        for (inst, verdict) in instances.iter().zip(got) {
            if let Some(b) = verdict {
                let found = interpreter.evaluate(inst, &[]);
                assert_eq!(found.is_empty(), b, "{rule} on {inst}");
                assert!(b || found[0].message == "m", "{rule} on {inst}: {found:?}");
            }
        }
    }
}

#[test]
fn self_is_bound_to_what_the_rules_reach() {
    let schema = code_review();
    let inv = Invariants::compile(&schema).unwrap();
    let root = &inv.nodes[0];
    let inst = json!({"findings": [
        {"severity": "blocker", "file": "a.rs", "line": 3, "description": "d", "raisedBy": "s"}
    ], "counts": {"blocker": 1, "major": 0, "minor": 0, "nit": 0}, "summary": "long text"});
    let got = root.reach.project(&inst);
    let want = to_cel(&json!({"findings": [{"severity": "blocker"}],
        "counts": {"blocker": 1, "major": 0, "minor": 0, "nit": 0}}));
    assert_eq!(got, want);
}

/// Note [Native rules]: the native evaluator decides the code-review rules
/// (so the interpreter is not needed for them), and its verdicts are the
/// interpreter's (the table above compares every finding and message).
#[test]
fn native_rules_agree_with_the_interpreter() {
    let env = Env::stdlib();
    let ok = json!({"findings": [{"severity": "blocker", "line": 1}], "counts": {"blocker": 1}});
    let bad = json!({"findings": [{"severity": "minor", "line": 1}], "counts": {"blocker": 1}});
    let rule = "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()";
    let p = env.compile(rule).unwrap();
    assert_eq!(
        native::Program::compile(p.expression()).verdict(&ok, COST_LIMIT),
        Some(true)
    );
    assert_eq!(
        native::Program::compile(p.expression()).verdict(&bad, COST_LIMIT),
        Some(false)
    );
    // Outside the subset: no answer, the interpreter decides.
    let float = json!({"findings": [], "counts": {"blocker": 1.5}});
    assert_eq!(
        native::Program::compile(p.expression()).verdict(&float, COST_LIMIT),
        None
    );
    let missing = json!({"findings": []});
    assert_eq!(
        native::Program::compile(p.expression()).verdict(&missing, COST_LIMIT),
        None
    );
    // Past the cost limit: no answer, the interpreter reports the limit.
    assert_eq!(
        native::Program::compile(p.expression()).verdict(&ok, 0),
        None
    );
}

// ---- Note [Compiled native rules]: random rules against the interpreter ----

mod random_rules {
    use proptest::prelude::*;
    use proptest::sample::select;

    use super::*;

    const FIELDS: &[&str] = &[
        "findings", "counts", "severity", "line", "file", "blocker", "name", "nested",
    ];
    const VARS: &[&str] = &["self", "f", "g"];

    /// CEL source over the subset the native evaluator knows and a little
    /// beyond it (floats, `uint`s, maps, `has`, string functions), with
    /// variables that may be unbound or shadow `self`.
    pub(super) fn rule() -> impl Strategy<Value = String> {
        let path = (select(VARS), prop::collection::vec(select(FIELDS), 0..3))
            .prop_map(|(v, fs)| std::iter::once(v).chain(fs).collect::<Vec<_>>().join("."));
        let leaf = prop_oneof![
            4 => path,
            2 => (-2i64..5).prop_map(|i| i.to_string()),
            2 => select(vec![
                "'blocker'", "'minor'", "'a.rs'", "''", "null", "true", "false", "1.5", "2u",
                "{'blocker': 1}", "[]",
            ])
            .prop_map(str::to_owned),
        ];
        leaf.prop_recursive(4, 40, 3, |inner| {
            prop_oneof![
                4 => (
                    inner.clone(),
                    select(vec!["==", "!=", "<", "<=", ">", ">=", "&&", "||", "+", "in"]),
                    inner.clone()
                )
                    .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                1 => inner.clone().prop_map(|a| format!("!({a})")),
                3 => (
                    inner.clone(),
                    select(vec!["all", "exists", "exists_one", "map", "filter"]),
                    select(VARS),
                    inner.clone()
                )
                    .prop_map(|(r, m, v, b)| format!("({r}).{m}({v}, {b})")),
                2 => (inner.clone(), select(VARS), inner.clone())
                    .prop_map(|(r, v, b)| format!("({r}).filter({v}, {b}).size()")),
                1 => inner.clone().prop_map(|a| format!("size({a})")),
                1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
                1 => (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
                1 => (inner.clone(), select(FIELDS))
                    .prop_map(|(a, f)| format!("has(({a}).{f})")),
                1 => inner.clone().prop_map(|a| format!("({a}).startsWith('b')")),
            ]
        })
    }

    /// JSON over the same field names: ints, big and negative numbers,
    /// floats, strings, lists and objects.
    pub(super) fn instance() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-2i64..5).prop_map(Value::from),
            Just(json!(u64::MAX)),
            Just(json!(1.5)),
            select(vec!["blocker", "minor", "a.rs", "", "é"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((select(FIELDS), inner), 0..5).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    /// A small deterministic generator (the seed comes from proptest).
    struct Gen(u64);

    impl Gen {
        fn below(&mut self, n: usize) -> usize {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
            usize::try_from(x >> 33).unwrap() % n
        }

        fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
            from[self.below(from.len())]
        }

        /// A finding variable in scope, or `self.findings[0]`.
        fn finding(&mut self, vars: &[String]) -> String {
            if vars.is_empty() || self.below(8) == 0 {
                "self.findings[0]".to_owned()
            } else {
                vars[self.below(vars.len())].clone()
            }
        }

        fn int(&mut self, depth: usize, vars: &mut Vec<String>) -> String {
            match self.below(if depth == 0 { 4 } else { 8 }) {
                0 => format!("self.counts.{}", self.pick(&["blocker", "major", "nope"])),
                1 => format!("{}.line", self.finding(vars)),
                2 => self.pick(&["0", "1", "2", "-1", "3"]).to_owned(),
                3 => self
                    .pick(&[
                        "size(self.findings)",
                        "self.name.size()",
                        "size(self.counts)",
                    ])
                    .to_owned(),
                4 | 5 => {
                    let v = self.var(vars);
                    let list = self.list(depth - 1, vars);
                    vars.push(v.clone());
                    let p = self.bool(depth - 1, vars);
                    vars.pop();
                    format!("{list}.filter({v}, {p}).size()")
                }
                6 => format!(
                    "({} + {})",
                    self.int(depth - 1, vars),
                    self.int(depth - 1, vars)
                ),
                _ => format!("size({})", self.list(depth - 1, vars)),
            }
        }

        fn string(&mut self, vars: &[String]) -> String {
            match self.below(4) {
                0 => format!("{}.severity", self.finding(vars)),
                1 => format!("{}.file", self.finding(vars)),
                2 => "self.name".to_owned(),
                _ => self
                    .pick(&["'blocker'", "'minor'", "'a.rs'", "''"])
                    .to_owned(),
            }
        }

        fn var(&mut self, vars: &[String]) -> String {
            // Mostly fresh names, sometimes shadowing an outer one.
            let names = ["f", "g", "h", "k"];
            if !vars.is_empty() && self.below(6) == 0 {
                vars[self.below(vars.len())].clone()
            } else {
                names[vars.len().min(3)].to_owned()
            }
        }

        /// A list of findings.
        fn list(&mut self, depth: usize, vars: &mut Vec<String>) -> String {
            match self.below(if depth == 0 { 1 } else { 4 }) {
                0 => "self.findings".to_owned(),
                1 => {
                    let v = self.var(vars);
                    let list = self.list(depth - 1, vars);
                    vars.push(v.clone());
                    let p = self.bool(depth - 1, vars);
                    vars.pop();
                    format!("{list}.filter({v}, {p})")
                }
                2 => format!(
                    "({} + {})",
                    self.list(depth - 1, vars),
                    self.list(depth - 1, vars)
                ),
                _ => format!("[{}]", self.finding(vars)),
            }
        }

        fn bool(&mut self, depth: usize, vars: &mut Vec<String>) -> String {
            let d = depth.saturating_sub(1);
            match self.below(if depth == 0 { 4 } else { 12 }) {
                0 => format!(
                    "{} {} {}",
                    self.int(d, vars),
                    self.pick(&["==", "!=", "<", "<=", ">", ">="]),
                    self.int(d, vars)
                ),
                1 => format!(
                    "{} {} {}",
                    self.string(vars),
                    self.pick(&["==", "!=", "<", ">="]),
                    self.string(vars)
                ),
                2 => format!("has({}.file)", self.finding(vars)),
                3 => format!(
                    "{} in {}",
                    self.string(vars),
                    self.pick(&["['blocker', 'minor']", "self.counts", "[]"])
                ),
                4 | 5 => {
                    let v = self.var(vars);
                    let m = self.pick(&["all", "exists", "exists_one"]);
                    let list = self.list(d, vars);
                    vars.push(v.clone());
                    let p = self.bool(d, vars);
                    vars.pop();
                    format!("{list}.{m}({v}, {p})")
                }
                6 => format!("({} && {})", self.bool(d, vars), self.bool(d, vars)),
                7 => format!("({} || {})", self.bool(d, vars), self.bool(d, vars)),
                8 => format!("!({})", self.bool(d, vars)),
                9 => format!(
                    "({} ? {} : {})",
                    self.bool(d, vars),
                    self.bool(d, vars),
                    self.bool(d, vars)
                ),
                10 => {
                    let v = self.var(vars);
                    let list = self.list(d, vars);
                    vars.push(v.clone());
                    let line = format!("{v}.line");
                    vars.pop();
                    format!("{} in {list}.map({v}, {line})", self.int(d, vars))
                }
                _ => self.pick(&["true", "false"]).to_owned(),
            }
        }

        /// A code-review-like instance, sometimes bent: a float or a huge
        /// line, a missing field, a count that is a string.
        fn instance(&mut self) -> Value {
            let n = self.below(5);
            let findings: Vec<Value> = (0..n)
                .map(|_| {
                    let mut f = json!({
                        "severity": self.pick(&["blocker", "major", "minor", "nit"]),
                        "file": self.pick(&["a.rs", "b.rs"]),
                        "line": i64::try_from(self.below(4)).unwrap(),
                    });
                    match self.below(12) {
                        0 => f["line"] = json!(1.5),
                        1 => f["line"] = json!(u64::MAX),
                        2 => {
                            f.as_object_mut().unwrap().remove("file");
                        }
                        3 => f["severity"] = json!(3),
                        _ => {}
                    }
                    f
                })
                .collect();
            let mut counts = json!({"blocker": 1, "major": 0});
            if self.below(8) == 0 {
                counts["major"] = json!("zero");
            }
            json!({"findings": findings, "counts": counts, "name": self.pick(&["r1", "é", ""])})
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Where the compiled native evaluator answers, the interpreter
        /// (binding the whole instance, with its meters) gives the same
        /// verdict, and the findings with their messages are the same
        /// whichever path ran, under the default cost limit and a small one.
        #[test]
        fn native_verdicts_agree_with_the_interpreter(
            rule in rule(),
            insts in prop::collection::vec(instance(), 1..4),
            limit in prop_oneof![Just(COST_LIMIT), 0u64..40],
        ) {
            if Env::stdlib().compile(&rule).is_ok() {
                agree(&rule, &insts, limit)?;
            }
        }

        /// The same over well-typed rules on code-review-like instances,
        /// where the native evaluator mostly answers.
        #[test]
        fn native_verdicts_agree_on_typed_rules(
            seed in any::<u64>(),
            limit in prop_oneof![3 => Just(COST_LIMIT), 1 => 0u64..60],
        ) {
            let mut g = Gen(seed | 1);
            let rule = g.bool(4, &mut Vec::new());
            let insts: Vec<Value> = (0..3).map(|_| g.instance()).collect();
            agree(&rule, &insts, limit)?;
        }
    }

    /// `rule`'s findings on each instance are the same with the native
    /// evaluator first as with the interpreter alone; where the native
    /// program answers, its verdict is the interpreter's (a plain `false`,
    /// not an error), on the `Value` and on the text read in place.
    fn agree(rule: &str, insts: &[Value], limit: u64) -> Result<(), TestCaseError> {
        let schema = json!({"x-invariants": [{"rule": rule, "message": "m"}]});
        let fast = Invariants::compile(&schema).unwrap().with_cost_limit(limit);
        let mut reference = Invariants::compile(&schema).unwrap().with_cost_limit(limit);
        reference.projected = false;
        let program = Env::stdlib().compile(rule).unwrap();
        let p = native::Program::compile(program.expression());
        for inst in insts {
            let want = reference.evaluate(inst, &[]);
            prop_assert_eq!(
                stable(fast.evaluate(inst, &[])),
                stable(want.clone()),
                "rule {} on {}",
                rule,
                inst
            );
            let got = p.verdict(inst, limit);
            if let Some(b) = got {
                prop_assert_eq!(want.is_empty(), b, "rule {} on {}", rule, inst);
                if !b {
                    prop_assert_eq!(want[0].message.as_str(), "m");
                }
            }
            let text = inst.to_string();
            if let Some(doc) = crate::json::tape::Doc::parse(&text) {
                prop_assert_eq!(
                    p.verdict_tape(doc.root(), limit),
                    got,
                    "rule {} on {}",
                    rule,
                    inst
                );
            }
        }
        Ok(())
    }

    /// The interpreter's messages quote CEL maps in hash order, which
    /// differs between two bindings of the same map: compare up to the
    /// first map.
    fn stable(found: Vec<Violation>) -> Vec<Violation> {
        found
            .into_iter()
            .map(|mut v| {
                if let Some(at) = v.message.find("Map(") {
                    v.message.truncate(at);
                }
                v
            })
            .collect()
    }
}
