//! `check`: invariants per output, contradictions across sibling outputs
//! (core's check stage; the Python package's `check`, the CLI's
//! `agentshape check`).

use std::rc::Rc;

use agentshape_core::Violation;
use agentshape_core::check::{ContradictionOptions, ContradictionReport, find_contradictions};
use agentshape_core::validate::Validator;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::errors::{Failure, Kind, Result, from_json, to_json};
use crate::schema::{self, ProfileForm};

/// `check`'s options other than the schema (which comes compiled).
#[derive(Debug, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Options {
    /// A profile: its schema (when none is given) and its `[contradictions]`.
    pub profile: Option<ProfileForm>,
    /// Look for contradictions across the outputs.
    pub contradictions: bool,
    /// JSON Pointer to the items in each output.
    pub items: Option<String>,
    /// The identity fields of an item.
    pub key: Option<Vec<String>>,
    /// The verdict fields.
    pub compare: Option<Vec<String>>,
    /// Also group items whose line differs by at most this many lines.
    pub near_lines: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: None,
            contradictions: true,
            items: None,
            key: None,
            compare: None,
            near_lines: None,
        }
    }
}

/// The report, as the package reads it.
#[derive(Serialize)]
struct Answer<'a> {
    ok: bool,
    sources: &'a [String],
    errors: Map<String, Value>,
    contradictions: &'a [agentshape_core::check::Contradiction],
    contradiction_report: Option<&'a ContradictionReport>,
}

/// Check `values` (JSON text: an array of sibling outputs, named `"0"`,
/// `"1"`, ..., or an object `{name: output}`) against `validator` (or the
/// profile's schema) and for contradictions.
pub fn check(values: &str, validator: Option<Rc<Validator>>, options: &str) -> Result<String> {
    let opts: Options = from_json(options, "check options")?;
    let profile = opts.profile.as_ref().map(schema::profile).transpose()?;
    let validator = match (validator, &profile) {
        (Some(v), _) => Some(v),
        (None, Some(p)) => Some(Rc::new(Validator::new(&p.schema)?)),
        (None, None) => None,
    };
    if validator.is_none() && !opts.contradictions {
        return Err(Failure::usage(
            "nothing to check: give schema or profile (invariants) and/or contradictions: true",
        ));
    }
    let values: Value = serde_json::from_str(values)
        .map_err(|e| Failure::new(Kind::NotJson, format!("values: {e}")))?;
    let (sources, outputs): (Vec<String>, Vec<Value>) = match values {
        Value::Array(list) => list
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .unzip(),
        Value::Object(map) => map.into_iter().unzip(),
        _ => {
            return Err(Failure::usage(
                "values is an array of outputs or an object {name: output}",
            ));
        }
    };
    let contradiction_options = if opts.contradictions {
        let mut o = profile
            .as_ref()
            .and_then(|p| p.contradictions.clone())
            .unwrap_or_default();
        if let Some(items) = opts.items {
            if !(items.is_empty() || items.starts_with('/')) {
                return Err(Failure::usage(format!(
                    "items `{items}` is not a JSON Pointer (like `/findings`, or `` for the whole output)"
                )));
            }
            o.items = items;
        }
        if let Some(k) = opts.key {
            o.key = k;
        }
        if let Some(c) = opts.compare {
            o.compare = c;
        }
        if opts.near_lines.is_some() {
            o.near_lines = opts.near_lines;
        }
        Some(o)
    } else {
        None
    };
    let errors: Vec<Vec<Violation>> = match &validator {
        Some(v) => outputs.iter().map(|o| v.errors_and_invariants(o)).collect(),
        None => vec![Vec::new(); outputs.len()],
    };
    let report = contradiction_options.map(|o: ContradictionOptions| {
        let named: Vec<(&str, &Value)> = sources.iter().map(String::as_str).zip(&outputs).collect();
        find_contradictions(&named, &o)
    });
    let found: &[_] = report.as_ref().map_or(&[], |r| &r.contradictions);
    let ok = errors.iter().all(Vec::is_empty) && found.is_empty();
    let errors = sources
        .iter()
        .zip(&errors)
        .map(|(name, errs)| {
            let list = serde_json::to_value(errs).unwrap_or(Value::Null);
            (name.clone(), list)
        })
        .collect();
    Ok(to_json(&Answer {
        ok,
        sources: &sources,
        errors,
        contradictions: found,
        contradiction_report: report.as_ref(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn review(sev: &str, blockers: u32) -> Value {
        json!({"findings": [{"severity": sev, "file": "src/a.rs", "line": 10,
                             "description": "path traversal in join", "raisedBy": "security"}],
               "counts": {"blocker": blockers, "major": u32::from(sev == "major"), "minor": 0, "nit": 0}})
    }

    #[test]
    fn invariants_and_contradictions_as_in_python() {
        let schema = include_str!("../../../schemas/code-review.json");
        let v = Rc::new(schema::compile(schema, "{}").unwrap());
        let values = json!({"sec": review("blocker", 1), "conv": review("major", 1)}).to_string();
        let r: Value = serde_json::from_str(&check(&values, Some(v), "{}").unwrap()).unwrap();
        assert_eq!(r["sources"], json!(["sec", "conv"]));
        assert_eq!(r["ok"], false);
        assert_eq!(r["errors"]["sec"], json!([]));
        assert_eq!(r["errors"]["conv"][0]["kind"], "invariant");
        assert_eq!(
            r["contradictions"][0]["key"],
            json!({"file": "src/a.rs", "line": 10})
        );
        assert_eq!(r["contradiction_report"]["items_seen"], 2);
        let clean = json!([review("major", 0), review("major", 0)]).to_string();
        let r: Value =
            serde_json::from_str(&check(&clean, None, r#"{"profile": "code-review"}"#).unwrap())
                .unwrap();
        assert_eq!((&r["ok"], &r["contradictions"]), (&json!(true), &json!([])));
    }

    #[test]
    fn nothing_to_check_and_bad_items_are_usage_errors() {
        let kind = |o: &str| check("[{}]", None, o).err().map(|f| f.kind);
        assert_eq!(kind(r#"{"contradictions": false}"#), Some(Kind::Usage));
        assert_eq!(kind(r#"{"items": "findings"}"#), Some(Kind::Usage));
        assert_eq!(
            check("3", None, "{}").err().map(|f| f.kind),
            Some(Kind::Usage)
        );
    }
}
