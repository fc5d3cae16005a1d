//! Schema-aligned coercion: small, reported fixes that make what an agent said
//! fit the schema it was asked for.
//!
//! Agents get the shape right and the scalars slightly wrong: `"confidence":
//! "90%"`, `"severity": "Critical"` for an enum of lowercase words, one finding
//! where a list was asked for, `"reason": null` for an optional string, or the
//! whole payload wrapped in `{"output": …}`. Each coercion here is applied only
//! where the instance fails the schema *and* the coerced value fits the
//! subschema at that place; each one is returned as a [`Coercion`], never
//! applied silently.
//!
//! Note [Walking schema and instance together]: the walk follows `properties`,
//! `additionalProperties`, `items`/`prefixItems` (`items`/`additionalItems`
//! before 2020-12), local `$ref`s (`#/…`), `allOf`, and `anyOf`/`oneOf` (each
//! branch is tried on a copy; the first branch the coerced copy then satisfies
//! wins). "Fits" is decided by the real validator compiled for the subschema's
//! JSON Pointer, so coercion never disagrees with validation about what is
//! valid. Recursion is capped in depth and in total steps, so recursive
//! schemas and deep `anyOf` nests cannot run away.

use serde_json::{Map, Number, Value};

use super::{Draft, Validator};
use crate::outcome::{Coercion, CoercionKind};

/// Nesting depth (schema applicators and instance levels together) beyond
/// which the walk stops coercing.
const MAX_DEPTH: usize = 64;

/// Total schema nodes one [`coerce`] call may visit; bounds the cost of
/// trying `anyOf`/`oneOf` branches in nested unions.
const MAX_STEPS: usize = 20_000;

/// Keys an agent wraps its payload in; unwrapped only when the wrapper fails
/// and the inner value validates. `output` and `result` are the names agent
/// runtimes actually use for the final payload (Claude Code's `result`,
/// SDKs' `output`); broader names such as `data` or `response` are common
/// real fields of user schemas and are left alone.
const WRAPPER_KEYS: &[&str] = &["output", "result"];

/// See [`Validator::coerce`].
pub(super) fn coerce(validator: &Validator, instance: Value) -> (Value, Vec<Coercion>) {
    if validator.is_valid(&instance) {
        return (instance, Vec::new());
    }
    let root = validator.schema();
    let mut walk = Walk::new(validator);
    let mut value = instance.clone();
    walk.node("", root, &mut value, "", 0);
    if validator.is_valid(&value) {
        return (value, walk.out);
    }
    if let Some(inner) = wrapped(&instance) {
        let mut inner_walk = Walk::new(validator);
        let mut inner_value = inner.clone();
        inner_walk.node("", root, &mut inner_value, "", 0);
        if validator.is_valid(&inner_value) {
            let to = Some(inner.clone());
            let mut out = vec![Coercion {
                kind: CoercionKind::Unwrapped,
                instance_path: String::new(),
                from: instance,
                to,
            }];
            out.extend(inner_walk.out);
            return (inner_value, out);
        }
    }
    (value, walk.out)
}

/// The inner value of a one-key `{"output": x}` / `{"result": x}` wrapper.
fn wrapped(instance: &Value) -> Option<&Value> {
    let map = instance.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (key, inner) = map.iter().next()?;
    WRAPPER_KEYS.contains(&key.as_str()).then_some(inner)
}

/// See [`Validator::decode_embedded`]: the walk of [`coerce`] with only
/// the embedded-JSON conversion.
pub(super) fn decode_embedded(
    validator: &Validator,
    instance: Value,
    read: &dyn Fn(&str) -> Option<Value>,
) -> (Value, Vec<Coercion>) {
    if validator.is_valid(&instance) {
        return (instance, Vec::new());
    }
    let root = validator.schema();
    let mut walk = Walk::new(validator);
    walk.embedded = Some(read);
    let mut value = instance;
    walk.node("", root, &mut value, "", 0);
    (value, walk.out)
}

/// Reads the document a string holds (Note [Embedded JSON] in
/// `extract::embedded`).
type ReadDocument<'v> = &'v dyn Fn(&str) -> Option<Value>;

/// One walk of schema and instance, collecting coercions.
struct Walk<'v> {
    validator: &'v Validator,
    draft: Draft,
    steps: usize,
    out: Vec<Coercion>,
    /// Set for [`decode_embedded`]: the reader of a string's embedded
    /// document, and no other conversion.
    embedded: Option<ReadDocument<'v>>,
}

impl<'v> Walk<'v> {
    fn new(validator: &'v Validator) -> Self {
        Walk {
            validator,
            draft: validator.draft(),
            steps: 0,
            out: Vec::new(),
            embedded: None,
        }
    }

    fn fits(&self, pointer: &str, value: &Value) -> bool {
        self.validator.fits(pointer, value)
    }

    fn record(&mut self, kind: CoercionKind, path: &str, from: Value, to: Option<Value>) {
        self.out.push(Coercion {
            kind,
            instance_path: path.to_owned(),
            from,
            to,
        });
    }

    /// Coerce `value` toward the schema `schema` found at JSON Pointer `sp`.
    fn node(&mut self, sp: &str, schema: &'v Value, value: &mut Value, ip: &str, depth: usize) {
        self.steps += 1;
        if depth > MAX_DEPTH || self.steps > MAX_STEPS {
            return;
        }
        let Some(obj) = schema.as_object() else {
            // `true`/`false`: nothing to coerce toward.
            return;
        };
        if self.fits(sp, value) {
            return;
        }
        if let Some(Value::String(reference)) = obj.get("$ref") {
            if let Some((target_sp, target)) = self.resolve_local(reference) {
                self.node(&target_sp, target, value, ip, depth + 1);
                if self.fits(sp, value) {
                    return;
                }
            }
        }
        if let Some(Value::Array(branches)) = obj.get("allOf") {
            for (i, branch) in branches.iter().enumerate() {
                self.node(&format!("{sp}/allOf/{i}"), branch, value, ip, depth + 1);
            }
            if self.fits(sp, value) {
                return;
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(keyword) {
                let exclusive = keyword == "oneOf";
                self.union(
                    &format!("{sp}/{keyword}"),
                    branches,
                    exclusive,
                    value,
                    ip,
                    depth,
                );
                if self.fits(sp, value) {
                    return;
                }
            }
        }
        if let Some(read) = self.embedded {
            if self.embedded_document(sp, schema, obj, value, ip, depth, read) {
                return;
            }
            match value {
                Value::Object(map) => self.object(sp, obj, map, ip, depth),
                Value::Array(items) => self.array(sp, obj, items, ip, depth),
                _ => {}
            }
            return;
        }
        if self.scalar(sp, obj, value, ip) {
            return;
        }
        match value {
            Value::Object(map) => self.object(sp, obj, map, ip, depth),
            Value::Array(items) => self.array(sp, obj, items, ip, depth),
            _ => {}
        }
        if !value.is_array() && self.fits(sp, value) {
            return;
        }
        if !value.is_array() && allows_type(obj, "array") {
            self.single_to_array(sp, obj, value, ip, depth);
        }
    }

    /// `anyOf`/`oneOf`: when no branch accepts `value` as it is, coerce a copy
    /// toward each branch in order and keep the first that then fits (for
    /// `oneOf`, only if no other branch fits it too).
    fn union(
        &mut self,
        sp: &str,
        branches: &'v [Value],
        exclusive: bool,
        value: &mut Value,
        ip: &str,
        depth: usize,
    ) {
        let pointers: Vec<String> = (0..branches.len()).map(|i| format!("{sp}/{i}")).collect();
        if pointers.iter().any(|p| self.fits(p, value)) {
            return;
        }
        for (branch, pointer) in branches.iter().zip(&pointers) {
            let mark = self.out.len();
            let mut trial = value.clone();
            self.node(pointer, branch, &mut trial, ip, depth + 1);
            if self.out.len() > mark
                && self.fits(pointer, &trial)
                && (!exclusive || pointers.iter().filter(|p| self.fits(p, &trial)).count() == 1)
            {
                *value = trial;
                return;
            }
            self.out.truncate(mark);
        }
    }

    /// Scalar conversions at this node; `true` when one was applied.
    fn scalar(&mut self, sp: &str, obj: &Map<String, Value>, value: &mut Value, ip: &str) -> bool {
        let Value::String(s) = &*value else {
            return false;
        };
        let mut candidates: Vec<(CoercionKind, Value)> = Vec::new();
        if allows_type(obj, "number") || allows_type(obj, "integer") {
            if let Some(n) = parse_number(s) {
                candidates.push((CoercionKind::StringToNumber, n));
            } else if let Some(n) = s.trim().strip_suffix('%').and_then(parse_number) {
                candidates.push((CoercionKind::PercentToNumber, n));
            }
        }
        if allows_type(obj, "boolean") {
            let t = s.trim();
            if t.eq_ignore_ascii_case("true") {
                candidates.push((CoercionKind::StringToBoolean, Value::Bool(true)));
            } else if t.eq_ignore_ascii_case("false") {
                candidates.push((CoercionKind::StringToBoolean, Value::Bool(false)));
            }
        }
        if let Some(member) = enum_case_match(obj, s) {
            candidates.push((CoercionKind::EnumCase, Value::String(member.to_owned())));
        }
        for (kind, to) in candidates {
            if self.fits(sp, &to) {
                let from = std::mem::replace(value, to.clone());
                self.record(kind, ip, from, Some(to));
                return true;
            }
        }
        false
    }

    fn object(
        &mut self,
        sp: &str,
        obj: &'v Map<String, Value>,
        map: &mut Map<String, Value>,
        ip: &str,
        depth: usize,
    ) {
        let properties = obj.get("properties").and_then(Value::as_object);
        let has_patterns = obj.contains_key("patternProperties");
        let additional = obj.get("additionalProperties").filter(|a| a.is_object());
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let (child_sp, child_schema) = if let Some(s) = properties.and_then(|p| p.get(&key)) {
                (format!("{sp}/properties/{}", escape(&key)), s)
            } else if let (Some(s), false) = (additional, has_patterns) {
                (format!("{sp}/additionalProperties"), s)
            } else {
                continue;
            };
            let path = format!("{ip}/{}", escape(&key));
            let Some(child) = map.get_mut(&key) else {
                continue;
            };
            if child.is_null()
                && self.embedded.is_none()
                && !required.contains(&key.as_str())
                && !self.fits(&child_sp, &Value::Null)
            {
                map.remove(&key);
                self.record(CoercionKind::NullRemoved, &path, Value::Null, None);
                continue;
            }
            self.node(&child_sp, child_schema, child, &path, depth + 1);
        }
    }

    fn array(
        &mut self,
        sp: &str,
        obj: &'v Map<String, Value>,
        items: &mut [Value],
        ip: &str,
        depth: usize,
    ) {
        let modern = self.draft == Draft::Draft202012;
        let (prefix_kw, rest_kw) = if modern {
            ("prefixItems", "items")
        } else {
            ("items", "additionalItems")
        };
        let prefix = obj.get(prefix_kw).and_then(Value::as_array);
        // Before 2020-12 an object-valued `items` applies to every element.
        let (prefix, rest_kw) = match (prefix, modern) {
            (None, false) => (None, "items"),
            (p, _) => (p, rest_kw),
        };
        let rest = obj.get(rest_kw).filter(|r| r.is_object());
        let prefix_len = prefix.map_or(0, Vec::len);
        for (i, item) in items.iter_mut().enumerate() {
            let child_ip = format!("{ip}/{i}");
            if let Some(s) = prefix.and_then(|p| p.get(i)) {
                self.node(
                    &format!("{sp}/{prefix_kw}/{i}"),
                    s,
                    item,
                    &child_ip,
                    depth + 1,
                );
            } else if i >= prefix_len {
                if let Some(s) = rest {
                    self.node(&format!("{sp}/{rest_kw}"), s, item, &child_ip, depth + 1);
                }
            }
        }
    }

    /// `x` → `[x]` (with `x` itself coerced toward the item schema) when the
    /// array fits and `x` alone did not.
    fn single_to_array(
        &mut self,
        sp: &str,
        obj: &'v Map<String, Value>,
        value: &mut Value,
        ip: &str,
        depth: usize,
    ) {
        let mark = self.out.len();
        let mut trial = vec![value.clone()];
        self.array(sp, obj, &mut trial, ip, depth);
        let trial = Value::Array(trial);
        if self.fits(sp, &trial) {
            let from = std::mem::replace(value, trial);
            let to = Value::Array(vec![from.clone()]);
            self.out.insert(
                mark,
                Coercion {
                    kind: CoercionKind::SingleToArray,
                    instance_path: ip.to_owned(),
                    from,
                    to: Some(to),
                },
            );
        } else {
            self.out.truncate(mark);
        }
    }

    /// Note [Embedded JSON] in `extract::embedded`: a string where this
    /// node's `type` names `object` or `array` but not `string`, holding
    /// such a document (as `read` finds it), becomes that document, walked
    /// in turn; recorded as [`CoercionKind::EmbeddedJson`] before what the
    /// inner walk found. `true` when it did.
    #[allow(clippy::too_many_arguments)]
    fn embedded_document(
        &mut self,
        sp: &str,
        schema: &'v Value,
        obj: &Map<String, Value>,
        value: &mut Value,
        ip: &str,
        depth: usize,
        read: &dyn Fn(&str) -> Option<Value>,
    ) -> bool {
        let Value::String(s) = &*value else {
            return false;
        };
        let object = allows_type(obj, "object");
        let array = allows_type(obj, "array");
        if allows_type(obj, "string") || !(object || array) {
            return false;
        }
        let Some(doc) = read(s) else {
            return false;
        };
        if !(doc.is_object() && object || doc.is_array() && array) {
            return false;
        }
        let mark = self.out.len();
        let from = std::mem::replace(value, doc);
        self.node(sp, schema, value, ip, depth + 1);
        self.out.insert(
            mark,
            Coercion {
                kind: CoercionKind::EmbeddedJson,
                instance_path: ip.to_owned(),
                from,
                to: Some(value.clone()),
            },
        );
        true
    }

    /// A `$ref` to a place in the root schema (`#`, `#/…`), as pointer and
    /// subschema; `None` for anchors and other documents.
    fn resolve_local(&self, reference: &str) -> Option<(String, &'v Value)> {
        let fragment = reference.strip_prefix('#')?;
        let pointer = percent_decode(fragment)?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return None;
        }
        let target = self.validator.schema().pointer(&pointer)?;
        Some((pointer, target))
    }
}

/// Whether the node's `type` names `ty` (`integer` is also allowed by `number`
/// only through validation, so it is asked for separately).
fn allows_type(obj: &Map<String, Value>, ty: &str) -> bool {
    match obj.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

/// A string in JSON number syntax (surrounding blanks allowed) as a number,
/// only when the number holds it exactly: `"12345678901234567890123"` stays
/// a string rather than become `1.2345678901234568e22` (Note [Big numbers]
/// in [`crate::json`]).
fn parse_number(s: &str) -> Option<Value> {
    let s = s.trim();
    if !crate::json::is_exact(s) {
        return None;
    }
    let n: Number = s.parse().ok()?;
    // Integers stay integers; `"3.0"` stays `3.0` (it is still an integer to
    // JSON Schema from draft-06 on).
    Some(Value::Number(n))
}

/// The single string `enum` (or `const`) member equal to `s` ignoring case,
/// unless `s` is already a member or several members match.
fn enum_case_match<'s>(obj: &'s Map<String, Value>, s: &str) -> Option<&'s str> {
    let members: Vec<&str> = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(e)), _) => e.iter().filter_map(Value::as_str).collect(),
        (None, Some(Value::String(c))) => vec![c.as_str()],
        _ => return None,
    };
    if members.contains(&s) {
        return None;
    }
    let folded = s.trim().to_lowercase();
    let mut matches = members.iter().filter(|m| m.to_lowercase() == folded);
    let first = matches.next()?;
    matches.next().is_none().then_some(*first)
}

/// Escape a key as a JSON Pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Decode `%XX` escapes of a URI fragment; `None` when malformed.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::CoercionKind::*;
    use super::*;
    use serde_json::json;

    /// One row: schema, input, expected output, expected `(kind, path)`s.
    type Row = (Value, Value, Value, &'static [(CoercionKind, &'static str)]);

    fn run(rows: Vec<Row>) {
        for (i, (schema, input, want, kinds)) in rows.into_iter().enumerate() {
            let v = Validator::new(&schema).unwrap();
            let (got, coercions) = v.coerce(input.clone());
            assert_eq!(got, want, "row {i}: value for input {input}");
            let got_kinds: Vec<(CoercionKind, &str)> = coercions
                .iter()
                .map(|c| (c.kind, c.instance_path.as_str()))
                .collect();
            assert_eq!(got_kinds, kinds, "row {i}: coercions for input {input}");
        }
    }

    fn obj(props: &Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": props, "required": required})
    }

    /// Issue 13: a digit string no number holds exactly is not coerced (it
    /// used to become `1.2345678901234568e22`); the schema error stays.
    #[test]
    fn inexact_number_strings_are_not_coerced() {
        for s in [
            "12345678901234567890123",
            "1e400",
            "0.30000000000000000001",
            "1e400%",
        ] {
            run(vec![(
                obj(&json!({"n": {"type": ["integer", "number"]}}), &["n"]),
                json!({ "n": s }),
                json!({ "n": s }),
                &[],
            )]);
        }
        run(vec![(
            obj(&json!({"n": {"type": "integer"}}), &["n"]),
            json!({"n": "18446744073709551615"}),
            json!({"n": 18_446_744_073_709_551_615_u64}),
            &[(StringToNumber, "/n")],
        )]);
    }

    #[test]
    fn each_kind() {
        run(vec![
            // string → number
            (
                obj(&json!({"n": {"type": "integer"}}), &["n"]),
                json!({"n": "42"}),
                json!({"n": 42}),
                &[(StringToNumber, "/n")],
            ),
            (
                obj(&json!({"c": {"type": "number"}}), &[]),
                json!({"c": " 3.5 "}),
                json!({"c": 3.5}),
                &[(StringToNumber, "/c")],
            ),
            // "3.5" cannot become an integer
            (
                obj(&json!({"n": {"type": "integer"}}), &[]),
                json!({"n": "3.5"}),
                json!({"n": "3.5"}),
                &[],
            ),
            // percent
            (
                obj(
                    &json!({"confidence": {"type": "number", "maximum": 100}}),
                    &[],
                ),
                json!({"confidence": "90%"}),
                json!({"confidence": 90}),
                &[(PercentToNumber, "/confidence")],
            ),
            // booleans, any case
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"ok": "TRUE"}),
                json!({"ok": true}),
                &[(StringToBoolean, "/ok")],
            ),
            (
                json!({"type": "boolean"}),
                json!("False"),
                json!(false),
                &[(StringToBoolean, "")],
            ),
            // enum case
            (
                obj(&json!({"severity": {"enum": ["critical", "minor"]}}), &[]),
                json!({"severity": "Critical"}),
                json!({"severity": "critical"}),
                &[(EnumCase, "/severity")],
            ),
            // single → array, with the element coerced too
            (
                obj(
                    &json!({"tags": {"type": "array", "items": {"type": "string"}}}),
                    &[],
                ),
                json!({"tags": "x"}),
                json!({"tags": ["x"]}),
                &[(SingleToArray, "/tags")],
            ),
            (
                json!({"type": "array", "items": {"type": "integer"}}),
                json!("7"),
                json!([7]),
                &[(SingleToArray, ""), (StringToNumber, "/0")],
            ),
            // null on an optional property
            (
                obj(
                    &json!({"ok": {"type": "boolean"}, "reason": {"type": "string"}}),
                    &["ok"],
                ),
                json!({"ok": false, "reason": null}),
                json!({"ok": false}),
                &[(NullRemoved, "/reason")],
            ),
            // wrappers
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"output": {"ok": true}}),
                json!({"ok": true}),
                &[(Unwrapped, "")],
            ),
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"result": {"ok": "true"}}),
                json!({"ok": true}),
                &[(Unwrapped, ""), (StringToBoolean, "/ok")],
            ),
        ]);
    }

    #[test]
    fn walks_applicators() {
        let defs = json!({
            "$defs": {"level": {"enum": ["info", "warning"]}},
            "definitions": {"n": {"type": "integer"}},
            "type": "object",
            "properties": {
                "events": {"type": "array", "items": {"$ref": "#/$defs/level"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}]},
                "extra": {"type": "object", "additionalProperties": {"$ref": "#/definitions/n"}},
                "both": {"allOf": [{"type": "number"}, {"minimum": 1}]},
                "either": {"anyOf": [{"type": "boolean"}, {"type": "integer"}]},
                "one": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}}]}
            }
        });
        run(vec![
            (
                defs.clone(),
                json!({"events": ["Info", "WARNING"]}),
                json!({"events": ["info", "warning"]}),
                &[(EnumCase, "/events/0"), (EnumCase, "/events/1")],
            ),
            (
                defs.clone(),
                json!({"pair": ["1", "false"]}),
                json!({"pair": [1, false]}),
                &[(StringToNumber, "/pair/0"), (StringToBoolean, "/pair/1")],
            ),
            (
                defs.clone(),
                json!({"extra": {"a": "1", "b": 2}}),
                json!({"extra": {"a": 1, "b": 2}}),
                &[(StringToNumber, "/extra/a")],
            ),
            (
                defs.clone(),
                json!({"both": "5"}),
                json!({"both": 5}),
                &[(StringToNumber, "/both")],
            ),
            (
                defs.clone(),
                json!({"either": "12"}),
                json!({"either": 12}),
                &[(StringToNumber, "/either")],
            ),
            (
                defs.clone(),
                json!({"one": "3"}),
                json!({"one": [3]}),
                &[(SingleToArray, "/one"), (StringToNumber, "/one/0")],
            ),
        ]);
    }

    #[test]
    fn draft7_tuple_items() {
        run(vec![(
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"n": {"type": "number"}},
                "type": "array",
                "items": [{"$ref": "#/definitions/n"}],
                "additionalItems": {"type": "boolean"}
            }),
            json!(["1.5", "true"]),
            json!([1.5, true]),
            &[(StringToNumber, "/0"), (StringToBoolean, "/1")],
        )]);
    }

    #[test]
    fn negative_rows() {
        run(vec![
            // already valid: untouched, even if a coercion would also fit
            (
                json!({"type": ["string", "integer"]}),
                json!("42"),
                json!("42"),
                &[],
            ),
            // "abc" stays a string
            (
                obj(&json!({"n": {"type": "number"}}), &[]),
                json!({"n": "abc"}),
                json!({"n": "abc"}),
                &[],
            ),
            // ambiguous enum: two members match ignoring case
            (
                json!({"enum": ["High", "high"]}),
                json!("HIGH"),
                json!("HIGH"),
                &[],
            ),
            // a coerced value that still does not fit is not applied
            (
                json!({"type": "integer", "maximum": 10}),
                json!("42"),
                json!("42"),
                &[],
            ),
            // required nulls are not removed
            (
                obj(&json!({"reason": {"type": "string"}}), &["reason"]),
                json!({"reason": null}),
                json!({"reason": null}),
                &[],
            ),
            // nullable optional properties are left alone (already valid)
            (
                obj(&json!({"reason": {"type": ["string", "null"]}}), &[]),
                json!({"reason": null}),
                json!({"reason": null}),
                &[],
            ),
            // wrappers are not unwrapped when the inner value is not valid
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"output": {"nope": 1}}),
                json!({"output": {"nope": 1}}),
                &[],
            ),
            // only output/result are wrappers
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"data": {"ok": true}}),
                json!({"data": {"ok": true}}),
                &[],
            ),
            // a wrapper with siblings is not a wrapper
            (
                obj(&json!({"ok": {"type": "boolean"}}), &["ok"]),
                json!({"output": {"ok": true}, "x": 1}),
                json!({"output": {"ok": true}, "x": 1}),
                &[],
            ),
            // strings are not wrapped into arrays of integers they do not fit
            (
                json!({"type": "array", "items": {"type": "integer"}}),
                json!("x"),
                json!("x"),
                &[],
            ),
            // oneOf: a coercion that would satisfy two branches is not applied
            (
                json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}),
                json!("5"),
                json!("5"),
                &[],
            ),
            // boolean words are not numbers
            (json!({"type": "number"}), json!("true"), json!("true"), &[]),
        ]);
    }

    #[test]
    fn recursive_schema_terminates() {
        let schema = json!({
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "v": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    }
                },
                "loop_a": {"anyOf": [{"$ref": "#/$defs/loop_b"}, {"type": "integer"}]},
                "loop_b": {"anyOf": [{"$ref": "#/$defs/loop_a"}, {"type": "boolean"}]}
            },
            "type": "object",
            "properties": {
                "tree": {"$ref": "#/$defs/node"},
                "weird": {"$ref": "#/$defs/loop_a"}
            }
        });
        let v = Validator::new(&schema).unwrap();
        let (got, c) = v.coerce(
            json!({"tree": {"v": "1", "children": [{"v": "2", "children": [{"v": "3"}]}]}}),
        );
        assert_eq!(
            got,
            json!({"tree": {"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}})
        );
        assert_eq!(c.len(), 3);
        // Coercions come in document order (serde_json keeps key order).
        let paths: Vec<&str> = c.iter().map(|c| c.instance_path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/tree/v",
                "/tree/children/0/v",
                "/tree/children/0/children/0/v"
            ]
        );
        // A union that refers back to itself: terminates (the crate treats
        // the cycle as satisfied, so nothing needs coercing).
        let (got, _) = v.coerce(json!({"weird": "x"}));
        assert_eq!(got, json!({"weird": "x"}));
        // A subschema whose union refers to itself, with an instance that
        // cannot be fixed: the depth cap stops the walk.
        let v = Validator::new(&json!({
            "$defs": {"a": {"type": "integer", "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a"
        }))
        .unwrap();
        let (got, c) = v.coerce(json!("x"));
        assert_eq!((got, c.len()), (json!("x"), 0));
    }

    #[test]
    fn coercion_serializes_in_the_documented_shape() {
        let v = Validator::new(&obj(&json!({"confidence": {"type": "number"}}), &[])).unwrap();
        let (_, c) = v.coerce(json!({"confidence": "90%"}));
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!([{"kind": "percent_to_number", "instance_path": "/confidence", "from": "90%", "to": 90}])
        );
        let v = Validator::new(&obj(&json!({"r": {"type": "string"}}), &[])).unwrap();
        let (_, c) = v.coerce(json!({"r": null}));
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!([{"kind": "null_removed", "instance_path": "/r", "from": null}])
        );
    }

    #[test]
    fn odd_keys_and_refs() {
        run(vec![(
            json!({
                "$defs": {"a b": {"type": "integer"}},
                "type": "object",
                "properties": {"x/y~z": {"$ref": "#/$defs/a%20b"}}
            }),
            json!({"x/y~z": "5"}),
            json!({"x/y~z": 5}),
            &[(StringToNumber, "/x~1y~0z")],
        )]);
    }
}
