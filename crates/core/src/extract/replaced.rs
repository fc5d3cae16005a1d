//! Text that could not be kept: the errors of [`Repair::ReplacedInvalidText`].
//!
//! Note [Replaced text]: JSON text may write a code unit no Rust (or
//! Python, or UTF-8) string can hold, a lone surrogate (`"\udc00x"`), and an
//! input may hold bytes that are not UTF-8 (a Latin-1 `é`, 0xE9). Either
//! becomes U+FFFD, and the value then holds text the agent never wrote.
//! `validate` refuses such an instance ("not valid JSON"); extraction used to
//! report it `valid` with no repair. It follows Note [Big numbers] in
//! [`crate::json`] instead, the other place where a value cannot hold what
//! was written: the repair `replaced_invalid_text` is listed and every
//! string (or key) holding U+FFFD is an error of kind `text`, so the value
//! is never `valid`. A repair alone (as `invalid_escape` is) would not do:
//! that repair keeps every character the agent wrote, this one loses some,
//! and a caller checking only `valid` must not take such a value as the
//! answer. With a schema the value competes by its error count, so a clean
//! candidate beside it wins.
//!
//! Found where the text is already decoded, so valid input pays nothing:
//! the tolerant parser notes the repair when its `\u` reader meets a lone
//! surrogate (the strict readers, `serde_json`, the tape and the one-pass
//! writer, all refuse one, so such a candidate is always repaired), and the
//! decoder counts the invalid UTF-8 sequences where it converts bytes
//! lossily ([`crate::summary::RunSummary::replaced_text`]); only then does
//! the chooser look into a value for U+FFFD. An input with bad bytes marks
//! every candidate that holds U+FFFD, including one the agent wrote as
//! `\ufffd`: the bytes cannot tell them apart, and reporting one too many
//! is the safe side. Bad bytes outside the chosen value (in the prose
//! around it) change nothing in it and are not reported.

use serde_json::Value;

use crate::outcome::{Violation, ViolationKind};

/// Whether any string or key of `value` holds U+FFFD.
pub(super) fn holds_replacement(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\u{fffd}'),
        Value::Array(items) => items.iter().any(holds_replacement),
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| k.contains('\u{fffd}') || holds_replacement(v)),
        _ => false,
    }
}

/// One error of kind `text` for each string (or member, for a key) holding
/// U+FFFD, at its JSON Pointer; one at the root when none does (the
/// replaced text was dropped by a later repair).
pub(super) fn violations(value: &Value) -> Vec<Violation> {
    let mut paths = Vec::new();
    let mut path = String::new();
    walk(value, &mut path, &mut paths);
    if paths.is_empty() {
        paths.push(String::new());
    }
    paths.into_iter().map(violation).collect()
}

fn walk(value: &Value, path: &mut String, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s.contains('\u{fffd}') => out.push(path.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                walk(item, path, out);
                path.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                if k.contains('\u{fffd}') {
                    out.push(path.clone());
                }
                walk(v, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn violation(instance_path: String) -> Violation {
    Violation {
        instance_path,
        schema_path: String::new(),
        message: "text held a lone surrogate escape or bytes that are not UTF-8, now U+FFFD; \
                  refused rather than changed"
            .to_owned(),
        kind: Some(ViolationKind::Text),
        rule: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_string_or_key_holding_u_fffd_is_one_error_at_its_path() {
        let v =
            json!({"a": "x\u{fffd}", "b": [1, "ok", "\u{fffd}"], "c\u{fffd}/": {"d": "\u{fffd}"}});
        assert!(holds_replacement(&v));
        let paths: Vec<_> = violations(&v)
            .into_iter()
            .map(|e| e.instance_path)
            .collect();
        assert_eq!(paths, ["/a", "/b/2", "/c\u{fffd}~1", "/c\u{fffd}~1/d"]);
        let clean = json!({"a": "é", "b": [1, "ok"]});
        assert!(!holds_replacement(&clean));
        let root = violations(&clean);
        assert_eq!(root.len(), 1);
        assert_eq!(root[0].instance_path, "");
        assert_eq!(root[0].kind, Some(ViolationKind::Text));
    }
}
