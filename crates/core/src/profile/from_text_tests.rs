//! Verdicts read from text (the tape of agentshape-json, Note [Validating
//! from text] there) agree with verdicts on built values, for the built-in
//! profiles' schemas and a schema of the keywords the tape reads itself.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::profile::Profile;
use crate::validate::Validator;

/// Instances shaped like the built-in schemas', with wrong types,
/// missing fields and enum misses mixed in.
fn instance() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..70).prop_map(Value::from),
        (-1.0f64..2.0).prop_map(Value::from),
        prop::sample::select(vec![
            "info", "warning", "critical", "error", "healthy", "down", "Healthy", "blocker",
            "major", "minor", "nit", "x", "",
        ])
        .prop_map(Value::from),
    ];
    let keys = prop::sample::select(vec![
        "summary",
        "events",
        "level",
        "message",
        "service",
        "memories",
        "key",
        "value",
        "escalation",
        "needed",
        "reason",
        "failed_checks",
        "services_checked",
        "name",
        "status",
        "findings",
        "severity",
        "file",
        "line",
        "description",
        "counts",
        "confidence",
        "action",
    ]);
    scalar.prop_recursive(4, 60, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..8).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

fn validators() -> Vec<Validator> {
    let mut out: Vec<Validator> = ["claude-ops", "claude-loop", "code-review"]
        .iter()
        .map(|p| Validator::new(&Profile::builtin(p).expect("profile").schema).expect("schema"))
        .collect();
    out.push(
        Validator::new(&json!({"type": "object", "properties": {"a": {"const": 1.0},
            "b": {"enum": [[1, {"x": null}], "s"]}, "c": {"uniqueItems": true},
            "d": {"minLength": 2, "pattern": "^é"}, "e": {"multipleOf": 0.5}},
            "propertyNames": {"maxLength": 8}, "additionalProperties": {"type": ["string", "integer", "object", "array"]}}))
        .expect("schema"),
    );
    out
}

/// Code-review outputs whose counts are sometimes right.
fn review() -> impl Strategy<Value = Value> {
    let sev = prop::sample::select(vec![
        "blocker", "major", "minor", "nit", "blocker", "major", "minor", "nit", "other",
    ]);
    let finding = (sev, 0i64..20, prop::bool::weighted(0.95)).prop_map(|(s, line, file)| {
        let mut f = json!({"severity": s, "line": line, "description": "d", "raisedBy": "a"});
        if file {
            f["file"] = json!("a.rs");
        }
        f
    });
    (
        prop::collection::vec(finding, 0..8),
        -1i64..3,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(findings, skew, float)| {
            let count = |s: &str| {
                i64::try_from(findings.iter().filter(|f| f["severity"] == s).count()).unwrap()
            };
            let mut counts = json!({"blocker": count("blocker") + skew, "major": count("major"),
                "minor": count("minor"), "nit": count("nit")});
            if float {
                counts["nit"] = json!(0.5);
            }
            json!({"findings": findings, "counts": counts})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn tape_invariants_agree_with_value_invariants(v in review()) {
        let validator =
            Validator::new(&Profile::builtin("code-review").expect("profile").schema).expect("schema");
        let text = serde_json::to_string(&v).unwrap();
        let want = validator.errors_and_invariants(&v);
        match validator.check_text(&text) {
            Some(got) => prop_assert_eq!(got, want, "{}", text),
            // Declined: schema-invalid, or a rule the interpreter must run.
            None => prop_assert!(!validator.is_valid(&v) || text.contains("0.5"), "{}", text),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn tape_verdicts_agree_with_value_verdicts(v in instance(), extra in prop::collection::vec((prop::sample::select(vec!["a", "b", "c", "d", "e"]), instance()), 0..3)) {
        let mut v = v;
        if let Value::Object(m) = &mut v {
            for (k, x) in extra {
                m.insert(k.to_owned(), x);
            }
        }
        let text = serde_json::to_string(&v).unwrap();
        for validator in validators() {
            let want = validator.is_valid(&v);
            prop_assert_eq!(validator.is_valid_text(&text), Some(want), "{}", text);
            let want = validator.errors_and_invariants(&v);
            if let Some(got) = validator.check_text(&text) {
                prop_assert_eq!(&got, &want, "{}", text);
            } else {
                prop_assert!(!want.is_empty() || !validator.invariants().is_empty(), "{}", text);
            }
            // Note [Errors from text]: invalid instances too.
            match validator.verdict_json(text.as_bytes()) {
                Some(got) => prop_assert_eq!(got, want, "{}", text),
                None => prop_assert!(!validator.invariants().is_empty(), "{}", text),
            }
        }
    }
}
