//! JSON inside JSON: a string value that is itself a JSON document.
//!
//! Note [Embedded JSON]: models hand back JSON encoded twice (`"{\"a\":
//! 1}"`), escaped (`{\"a\": 1}` as raw text, handled by the repair parser
//! as [`Repair::EscapedJson`]), or a fenced block inside a string value
//! (`{"result": "```json\n{…}\n```"}`). A string is decoded into the
//! document it holds ([`Repair::DecodedEmbeddedJson`]) only where that is
//! what was asked for:
//! - with a schema, where the schema's `type` at that place names `object`
//!   or `array` and not `string`, and the candidate does not validate as it
//!   is (`Validator::decode_embedded` walks schema and value together); a
//!   field the schema types as a string is never touched, however much it
//!   looks like JSON (tool arguments are JSON strings by design);
//! - without a schema, only when the whole value is such a string: a
//!   reply's answer that is a string holding an object or array is that
//!   object or array encoded once more. A string inside an object or array
//!   stays a string: without a schema nothing says it was not meant as one.
//!
//! What a string holds ([`document`]): after trimming, strict JSON whose
//! top level is an object or array; or that inside one fence (```` ```json
//! … ``` ````); or, where a schema asks for the document, an object or
//! array that only needed the repairs that cannot change what it says
//! (unescaping once, quotes, commas, comments, Python literals). Anything
//! lax beyond that (unquoted words, dropped keys, a cut end) is not a
//! document but text that looks like one; and without a schema only
//! strict JSON is (`"[1,2,3,]"` stays a string, as jsonrepair keeps it).

use serde_json::Value;

use super::Repair;
use super::repair::repair_json;
use crate::json;

/// The JSON object or array the string `s` holds, if it holds exactly one
/// (Note [Embedded JSON]); the schema asked for one here.
pub(crate) fn document(s: &str) -> Option<Value> {
    read(s, true)
}

/// [`document`], strict JSON only (fenced or not): nothing asked for a
/// document, so a string that is not exactly one stays a string
/// (`"[1,2,3,]"`, jsonrepair-0272).
fn strict_document(s: &str) -> Option<Value> {
    read(s, false)
}

fn read(s: &str, lax: bool) -> Option<Value> {
    let t = s.trim();
    let t = unfenced(t).unwrap_or(t);
    if !matches!(t.as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    if !matches!(t.as_bytes().last(), Some(b'}' | b']')) {
        return None;
    }
    if let Some(p) = json::parse_if_json(t) {
        return (p.inexact.is_empty() && (p.value.is_object() || p.value.is_array()))
            .then_some(p.value);
    }
    if !lax {
        return None;
    }
    let r = repair_json(t)?;
    let harmless = r.repairs.iter().all(|x| {
        matches!(
            x,
            Repair::EscapedJson
                | Repair::TrailingComma
                | Repair::SingleQuotes
                | Repair::SmartQuotes
                | Repair::Comment
                | Repair::PythonLiteral
                | Repair::RawControlCharInString
        )
    });
    (harmless && r.inexact.is_empty() && (r.value.is_object() || r.value.is_array()))
        .then_some(r.value)
}

/// The inside of `t` when it is exactly one fenced block (its info string
/// `json`, `jsonc`, `json5` or none).
fn unfenced(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("```")?;
    let body = rest.strip_suffix("```")?;
    let (info, inner) = body.split_once('\n')?;
    let info = info.trim();
    let json_tag = info.is_empty()
        || ["json", "jsonc", "json5"]
            .iter()
            .any(|tag| info.eq_ignore_ascii_case(tag));
    (json_tag && !inner.contains("```")).then(|| inner.trim())
}

/// Whether some string in `v` may hold a document (it starts, trimmed,
/// with `{`, `[` or a fence): a walk without the schema, so a candidate
/// with no such string is not validated once more for nothing.
pub(crate) fn may_hold(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            t.starts_with(['{', '[']) || t.starts_with("```")
        }
        Value::Array(items) => items.iter().any(may_hold),
        Value::Object(m) => m.values().any(may_hold),
        _ => false,
    }
}

/// Without a schema (Note [Embedded JSON]): the whole value `v`, when it is
/// a string holding a document, as that document.
pub(crate) fn whole(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => strict_document(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_a_string_holds() {
        let cases: &[(&str, Option<Value>)] = &[
            (r#"{"a": 1}"#, Some(json!({"a": 1}))),
            ("  [1, 2]\n", Some(json!([1, 2]))),
            ("```json\n{\"a\": [1]}\n```", Some(json!({"a": [1]}))),
            ("```\n[true]\n```", Some(json!([true]))),
            (r#"{\"a\": \"b\"}"#, Some(json!({"a": "b"}))),
            ("{'a': 1,}", Some(json!({"a": 1}))),
            // Not documents: scalars, prose, lax words, a cut end, a fence
            // of another language.
            ("42", None),
            (r#""{\"a\": 1}""#, None),
            ("see {a} here", None),
            ("{placeholder}", None),
            (r#"{"a": 1"#, None),
            ("```python\n{\"a\": 1}\n```", None),
            ("{a: b}", None),
        ];
        for (s, want) in cases {
            assert_eq!(&document(s), want, "string: {s:?}");
        }
    }
}
