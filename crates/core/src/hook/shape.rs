//! A schema in one line, for a model to read: `{"action": "complete"|"continue",
//! "confidence": number, "notes"?: [string]}`.
//!
//! Note \[A reminder, not the schema\]: a blocked model gets the errors and
//! this line, never the schema itself: the schema may be kilobytes of
//! descriptions and the reason has 2 KB. Objects list their properties
//! (`?` after an optional one), arrays their item shape in brackets, enums
//! their values; `$ref`s to the same document are followed once (a
//! recursive one is written `…`); `anyOf`/`oneOf` are alternatives with
//! `|`. Past a depth of four, or once the line reaches its budget, the rest
//! is `…`.

use std::fmt::Write as _;

use serde_json::Value;

/// How deep [`shape_line`] goes before writing `…`.
const MAX_DEPTH: usize = 4;

/// The shape of `schema` in at most `max` bytes (Note \[A reminder, not the
/// schema\]).
pub fn shape_line(schema: &Value, max: usize) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    write_shape(&mut out, schema, schema, 0, max, &mut seen);
    cut(&mut out, max);
    out
}

/// Cut `s` to at most `max` bytes at a char boundary, ending in `…`.
pub(crate) fn cut(s: &mut String, max: usize) {
    if s.len() <= max {
        return;
    }
    let keep = max.saturating_sub('…'.len_utf8());
    let mut end = keep.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn write_shape(
    out: &mut String,
    root: &Value,
    schema: &Value,
    depth: usize,
    max: usize,
    seen: &mut Vec<String>,
) {
    if out.len() > max {
        return;
    }
    let Some(obj) = schema.as_object() else {
        // `true` accepts anything; `false` nothing.
        out.push_str(if schema == &Value::Bool(false) {
            "never"
        } else {
            "any"
        });
        return;
    };
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        if seen.iter().any(|s| s == r) {
            out.push('…');
            return;
        }
        if let Some(target) = resolve(root, r) {
            seen.push(r.to_owned());
            write_shape(out, root, target, depth, max, seen);
            seen.pop();
            return;
        }
    }
    if let Some(c) = obj.get("const") {
        out.push_str(&c.to_string());
        return;
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            out.push_str(&v.to_string());
            if out.len() > max {
                return;
            }
        }
        return;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = obj.get(key).and_then(Value::as_array) {
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_shape(out, root, alt, depth + 1, max, seen);
            }
            return;
        }
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        if let [one] = all.as_slice() {
            write_shape(out, root, one, depth, max, seen);
            return;
        }
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if obj.contains_key("properties") => vec!["object"],
        _ if obj.contains_key("items") => vec!["array"],
        _ => Vec::new(),
    };
    if types.is_empty() {
        out.push_str("any");
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        match *t {
            "object" => write_object(out, root, obj, depth, max, seen),
            "array" => {
                out.push('[');
                match obj.get("items").or_else(|| obj.get("prefixItems")) {
                    Some(items) if items.is_object() || items.is_boolean() => {
                        write_shape(out, root, items, depth + 1, max, seen);
                    }
                    _ => out.push_str("any"),
                }
                out.push(']');
            }
            other => out.push_str(other),
        }
    }
}

fn write_object(
    out: &mut String,
    root: &Value,
    obj: &serde_json::Map<String, Value>,
    depth: usize,
    max: usize,
    seen: &mut Vec<String>,
) {
    let Some(props) = obj.get("properties").and_then(Value::as_object) else {
        out.push_str("object");
        return;
    };
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push('{');
    for (i, (name, sub)) in props.iter().enumerate() {
        if out.len() > max {
            return;
        }
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}", Value::String(name.clone()));
        if !required.contains(&name.as_str()) {
            out.push('?');
        }
        out.push_str(": ");
        write_shape(out, root, sub, depth + 1, max, seen);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_of_common_schemas() {
        let cases = [
            (
                json!({"type": "object", "properties": {
                    "action": {"enum": ["complete", "continue"]},
                    "confidence": {"type": "number", "description": "0 to 100"},
                    "notes": {"type": "array", "items": {"type": "string"}}},
                    "required": ["action", "confidence"]}),
                r#"{"action": "complete"|"continue", "confidence": number, "notes"?: [string]}"#,
            ),
            (
                json!({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
                       "$ref": "#/$defs/n"}),
                r#"{"next"?: …}"#,
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                "string | null",
            ),
            (json!({"type": ["string", "integer"]}), "string|integer"),
            (json!({"const": 3}), "3"),
            (json!(true), "any"),
            (json!({}), "any"),
        ];
        for (schema, want) in cases {
            assert_eq!(shape_line(&schema, 400), want, "{schema}");
        }
    }

    #[test]
    fn the_line_keeps_its_budget_and_depth() {
        let mut props = serde_json::Map::new();
        for i in 0..200 {
            props.insert(format!("field_{i}"), json!({"type": "string"}));
        }
        let wide = json!({"type": "object", "properties": props});
        let line = shape_line(&wide, 300);
        assert!(line.len() <= 300, "{}", line.len());
        assert!(line.ends_with('…'));
        let mut deep = json!({"type": "string"});
        for _ in 0..10 {
            deep = json!({"type": "array", "items": deep});
        }
        assert_eq!(shape_line(&deep, 400), "[[[[[…]]]]]");
        let mut wide_utf8 = String::from("é").repeat(400);
        cut(&mut wide_utf8, 11);
        assert!(wide_utf8.len() <= 11 && wide_utf8.ends_with('…'));
    }
}
