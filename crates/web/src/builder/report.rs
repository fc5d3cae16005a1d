//! What the builder shows beside the preview: per-provider lint and the
//! `x-invariants` compile check, computed by the same core functions the
//! CLI's `lint` and `check` call, so the page never disagrees with them.

use agentshape_core::check::Invariants;
use agentshape_core::lint::{Dialect, Severity, fix, lint};
use agentshape_core::validate::Validator;
use serde_json::{Map, Value, json};

/// `agentshape lint --json` for every provider, keyed by provider name.
///
/// Each entry has the CLI's fields (`provider`, `accepted`, `findings` with
/// `pointer`, `severity`, `rule`, `message`, `fixable`), plus what the page
/// needs to show the fix: each finding's `fix` (the `lint --fix` changes made
/// at its pointer) and `fixed` (`lint --fix --json`'s `schema`, `wrapped` and
/// `changes`).
pub(crate) fn lint_all(schema: &Value) -> Value {
    let mut providers = Map::new();
    for dialect in Dialect::ALL {
        let findings = lint(schema, dialect);
        let fixed = fix(schema, dialect);
        let accepted = !findings.iter().any(|f| f.severity == Severity::Error);
        let findings: Vec<Value> = findings
            .iter()
            .map(|f| {
                let mut v = json!(f);
                let prefix = format!("{}: ", f.pointer);
                let at_pointer: Vec<&str> = fixed
                    .changes
                    .iter()
                    .filter_map(|c| c.strip_prefix(&prefix))
                    .collect();
                if let Value::Object(m) = &mut v {
                    m.insert("fix".into(), json!(at_pointer));
                }
                v
            })
            .collect();
        providers.insert(
            dialect.as_str().into(),
            json!({
                "provider": dialect.as_str(),
                "accepted": accepted,
                "findings": findings,
                "fixed": {"schema": fixed.schema, "wrapped": fixed.wrapped, "changes": fixed.changes},
            }),
        );
    }
    json!({ "providers": providers })
}

/// The compile check of `schema`'s `x-invariants`.
///
/// `ok` is whether the whole schema loads as `agentshape check --schema`
/// loads it ([`Validator::new`]: the JSON Schema compiles and every rule,
/// wherever it sits, compiles and can run), with that one-line `error` when
/// not. `rules` are the root's rules one by one (the ones the builder
/// edits), each compiled on its own so every broken rule is named, not only
/// the first.
pub(crate) fn invariants(schema: &Value) -> Value {
    let whole = Validator::new(schema).err().map(|e| e.to_string());
    let mut rules = Vec::new();
    if let Some(Value::Array(list)) = schema.get("x-invariants") {
        for (index, rule) in list.iter().enumerate() {
            let mut r = Map::new();
            r.insert("index".into(), json!(index));
            if let Some(source) = rule.get("rule") {
                r.insert("rule".into(), source.clone());
            }
            if let Some(message) = rule.get("message") {
                r.insert("name".into(), message.clone());
            }
            let alone = json!({ "x-invariants": [rule] });
            match Invariants::compile(&alone) {
                Ok(_) => {
                    r.insert("ok".into(), json!(true));
                }
                Err(e) => {
                    r.insert("ok".into(), json!(false));
                    // Compiled alone, the rule sat at index 0: name its real place.
                    let text = e
                        .to_string()
                        .replace("`/x-invariants/0`", &format!("`/x-invariants/{index}`"));
                    r.insert("error".into(), json!(text));
                }
            }
            rules.push(Value::Object(r));
        }
    }
    let ok = whole.is_none() && rules.iter().all(|r| r["ok"] == json!(true));
    let mut out = json!({ "ok": ok, "rules": rules });
    if let (Some(e), Value::Object(m)) = (whole, &mut out) {
        m.insert("error".into(), json!(e));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn lint_names_every_provider_and_the_fix_of_a_finding() {
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 2}},
        });
        let out = super::lint_all(&schema);
        let providers = out["providers"].as_object().unwrap();
        let names: Vec<&str> = providers.keys().map(String::as_str).collect();
        // The dialects' own order (serde_json keeps insertion order).
        assert_eq!(names, ["anthropic", "openai", "gemini", "ollama", "local"]);
        let openai = &providers["openai"];
        assert_eq!(openai["provider"], "openai");
        assert_eq!(openai["accepted"], false, "{openai}");
        let findings = openai["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["pointer"] == "" && f["severity"] == "error"),
            "additionalProperties missing at the root: {openai}"
        );
        // Every finding carries the CLI's fields and a fix list.
        for f in findings {
            for key in ["pointer", "severity", "rule", "message", "fixable", "fix"] {
                assert!(f.get(key).is_some(), "{key} in {f}");
            }
        }
        assert!(
            findings
                .iter()
                .flat_map(|f| f["fix"].as_array().unwrap())
                .any(|c| c.as_str().unwrap().contains("additionalProperties")),
            "{openai}"
        );
        assert!(openai["fixed"]["schema"].is_object());
    }

    #[test]
    fn odd_schemas_are_answered_not_panicked_on() {
        for schema in [
            json!(true),
            json!(false),
            json!({}),
            json!({"type": ["string", "null"], "properties": 3}),
            json!({"x-invariants": "not a list"}),
            json!({"x-invariants": [3, {"rule": 4}, {"message": "no rule"}]}),
            json!({"$ref": "#/nowhere"}),
        ] {
            let lint = super::lint_all(&schema);
            assert_eq!(
                lint["providers"].as_object().unwrap().len(),
                agentshape_core::lint::Dialect::ALL.len(),
                "{schema}"
            );
            let inv = super::invariants(&schema);
            assert!(inv["ok"].is_boolean(), "{schema}: {inv}");
        }
        let inv = super::invariants(&json!({"x-invariants": [3, {"rule": "true"}]}));
        assert_eq!(inv["ok"], false);
        assert_eq!(inv["rules"][0]["ok"], false);
        assert_eq!(inv["rules"][1]["ok"], true);
    }

    #[test]
    fn invariants_name_each_broken_rule() {
        let ok = super::invariants(&json!({
            "type": "object",
            "x-invariants": [{"rule": "self.a == 1", "message": "a is one"}],
        }));
        assert_eq!(ok["ok"], true, "{ok}");
        assert_eq!(ok["rules"][0]["name"], "a is one");
        let bad = super::invariants(&json!({
            "type": "object",
            "x-invariants": [{"rule": "self.a == 1"}, {"rule": "self.a ==="}, {"rule": "size(self) > 0"}],
        }));
        assert_eq!(bad["ok"], false, "{bad}");
        let rules = bad["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(rules[0]["ok"], true);
        assert_eq!(rules[1]["ok"], false);
        assert_eq!(rules[1]["index"], 1);
        assert!(
            rules[1]["error"]
                .as_str()
                .unwrap()
                .contains("/x-invariants/1"),
            "{bad}"
        );
        assert_eq!(rules[2]["ok"], true);
        assert!(bad["error"].as_str().unwrap().contains("does not compile"));
        let no_rules = super::invariants(&json!({"type": "object"}));
        assert_eq!(no_rules, json!({"ok": true, "rules": []}));
        let bad_schema = super::invariants(&json!({"type": "nope"}));
        assert_eq!(bad_schema["ok"], false);
    }
}
