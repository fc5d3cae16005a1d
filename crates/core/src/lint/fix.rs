//! The fix: rewrite a schema into one the dialect accepts, and map answers back.
//!
//! Note [Fix rewrites]: in order, per subschema:
//! 1. the root becomes an object (`OpenAI`): a non-object root is wrapped as
//!    `{"value": <root>}` and unwrapped again by [`Fixed::map_back`];
//! 2. `allOf` is merged into its parent (`OpenAI`), local `$ref` members inlined;
//! 3. `oneOf` becomes `anyOf` (looser; the original schema still decides);
//! 4. tuple `items` (an array) becomes `items: {anyOf: [...]}` where tuples are unsupported;
//! 5. every keyword the dialect rejects or ignores is removed and written into
//!    `description` as `name: value` (vendor keywords are dropped), so the
//!    model still reads the constraint and validation against the original
//!    schema still enforces it;
//! 6. objects are closed with `additionalProperties: false` where required;
//! 7. where every property must be required, optional properties are added to
//!    `required` and made nullable (`type` gains `"null"`, an `enum` gains
//!    `null`, anything else becomes `anyOf: [<schema>, {"type": "null"}]`).
//!
//! The answer to a fixed schema is mapped back by removing the `null`s of
//! properties that step 7 made nullable and unwrapping step 1; the result is
//! then validated against the original schema.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::walk::{self, KNOWN, SCHEMA_ARRAYS, SCHEMA_MAPS, SCHEMA_ONE};
use super::{Dialect, Severity, lint};

/// Marks a property made nullable by the fix (only in the annotated copy).
const OPTIONAL: &str = "x-agentshape-optional";
/// The property name used to wrap a non-object root.
const WRAP: &str = "value";
/// Longest `name: value` text written into a description.
const DESCRIBE_MAX: usize = 200;
/// `$ref` chains followed while mapping an answer, at most.
const MAX_REF_HOPS: usize = 64;

/// A schema rewritten for one dialect, with what is needed to map answers back.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    /// The dialect it was fixed for.
    pub dialect: Dialect,
    /// The schema to send to the provider.
    pub schema: Value,
    /// The same schema with nullable-made properties marked.
    annotated: Value,
    /// Whether the root was wrapped as `{"value": <root>}`.
    pub wrapped: bool,
    /// What was changed, one line each (`/properties/a: minLength moved into description`).
    pub changes: Vec<String>,
}

impl Fixed {
    /// Whether the fix changed anything (an unchanged schema is sent as is).
    pub fn changed(&self) -> bool {
        !self.changes.is_empty()
    }

    /// Map an answer in the fixed shape back to the original shape: the
    /// `null`s of originally optional properties are removed and a wrapped
    /// root is unwrapped. Anything unexpected is left as it is, for the
    /// validator to judge.
    pub fn map_back(&self, mut value: Value) -> Value {
        strip_nulls(&self.annotated, &self.annotated, &mut value, 0);
        if self.wrapped {
            if let Value::Object(mut m) = value {
                return m.remove(WRAP).unwrap_or(Value::Null);
            }
        }
        value
    }

    /// The inverse of [`Fixed::map_back`] for an answer valid against the
    /// original: wrap the root, and set every absent optional property to
    /// `null`. Used to test that answers round-trip.
    pub fn to_fixed_shape(&self, value: Value) -> Value {
        let mut value = if self.wrapped {
            json!({ WRAP: value })
        } else {
            value
        };
        fill_nulls(&self.annotated, &self.annotated, &mut value, 0);
        value
    }
}

/// Rewrite `schema` into one `dialect` accepts (see Note [Fix rewrites]).
pub fn fix(schema: &Value, dialect: Dialect) -> Fixed {
    let mut changes = Vec::new();
    let mut root = schema.clone();
    let mut wrapped = false;
    if dialect.rules().root_object {
        if let Value::Object(obj) = &mut root {
            if !obj.contains_key("type")
                && obj.contains_key("properties")
                && !obj.contains_key("anyOf")
                && !obj.contains_key("oneOf")
            {
                obj.insert("type".into(), json!("object"));
                changes.push(": `type: object` added to the root".to_owned());
            }
        }
        let root_ok = root.as_object().is_some_and(|o| {
            o.get("type").and_then(Value::as_str) == Some("object")
                && !["anyOf", "oneOf", "allOf", "$ref"]
                    .iter()
                    .any(|k| o.contains_key(*k))
        });
        if !root_ok {
            root = wrap(root);
            wrapped = true;
            changes
                .push(": root wrapped as {\"value\": ...} (the root must be an object)".to_owned());
        }
    }
    let optional_all = dialect.all_required()
        || (dialect == Dialect::Anthropic
            && lint(schema, dialect)
                .iter()
                .any(|f| f.rule == "optional_count"));
    let snapshot = root.clone();
    let mut fx = Fixer {
        dialect,
        root: &snapshot,
        changes,
        optional_all,
        inlining: Vec::new(),
        moved: Vec::new(),
    };
    fx.node(&mut root, "");
    follow_moves(
        &mut root,
        &fx.moved,
        dialect.closed_objects(),
        &mut fx.changes,
    );
    let schema = strip_markers(root.clone());
    Fixed {
        dialect,
        schema,
        annotated: root,
        wrapped,
        changes: fx.changes,
    }
}

fn wrap(root: Value) -> Value {
    let mut inner = root;
    rebase_refs(&mut inner);
    let mut outer = Map::new();
    if let Value::Object(obj) = &mut inner {
        for key in ["$schema", "$defs", "definitions", "$id", "id"] {
            if let Some(v) = obj.remove(key) {
                outer.insert(key.into(), v);
            }
        }
    }
    outer.insert("type".into(), json!("object"));
    outer.insert("properties".into(), json!({ WRAP: inner }));
    outer.insert("required".into(), json!([WRAP]));
    outer.insert("additionalProperties".into(), json!(false));
    Value::Object(outer)
}

/// Point local `$ref`s of a root about to be wrapped at its new place
/// (`#/x` → `#/properties/value/x`), except into the definitions that move
/// to the wrapper.
fn rebase_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "$ref" {
                    if let Value::String(r) = x {
                        let moved = ["#/$defs/", "#/definitions/"]
                            .iter()
                            .any(|p| r.starts_with(p));
                        if !moved && (r == "#" || r.starts_with("#/")) {
                            *r = format!("#/properties/{WRAP}{}", &r[1..]);
                        }
                    }
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    rebase_refs(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rebase_refs),
        _ => {}
    }
}

struct Fixer<'a> {
    dialect: Dialect,
    root: &'a Value,
    changes: Vec<String>,
    optional_all: bool,
    /// `$ref` targets being inlined by `allOf` merges above this node, so a
    /// recursive `allOf` is not inlined forever.
    inlining: Vec<String>,
    /// Subschemas that moved (old pointer, new pointer), in order, so local
    /// `$ref`s can follow them.
    moved: Vec<(String, String)>,
}

impl Fixer<'_> {
    fn node(&mut self, node: &mut Value, ptr: &str) {
        let Value::Object(obj) = node else {
            return;
        };
        let rules = self.dialect.rules();
        let inlined = if self.dialect == Dialect::Openai {
            self.merge_all_of(obj, ptr)
        } else {
            0
        };
        let mut notes: Vec<String> = Vec::new();
        let keys: Vec<String> = obj.keys().cloned().collect();
        for key in keys {
            let Some(value) = obj.get(&key) else { continue };
            if key == OPTIONAL {
                continue;
            }
            if !KNOWN.contains(&key.as_str()) {
                if self.dialect == Dialect::Openai {
                    obj.remove(&key);
                    self.changes
                        .push(format!("{ptr}: vendor keyword `{key}` dropped"));
                }
                continue;
            }
            if key == "items" && value.is_array() {
                if (rules.keyword)("prefixItems", value).is_some() {
                    let members = obj.remove("items").unwrap_or(Value::Null);
                    obj.remove("additionalItems");
                    obj.insert("items".into(), json!({ "anyOf": members }));
                    self.moved
                        .push((format!("{ptr}/items"), format!("{ptr}/items/anyOf")));
                    self.changes.push(format!(
                        "{ptr}: tuple `items` became `items: {{anyOf: [...]}}`"
                    ));
                }
                continue;
            }
            let special = match key.as_str() {
                "enum" => {
                    rules.scalar_enums
                        && value
                            .as_array()
                            .is_some_and(|v| v.iter().any(|x| x.is_object() || x.is_array()))
                }
                "minItems" => {
                    matches!((rules.min_items_max, value.as_u64()), (Some(max), Some(n)) if n > max)
                }
                "pattern" => {
                    rules.simple_patterns
                        && value.as_str().is_some_and(walk::has_lookaround_or_backref)
                }
                _ => false,
            };
            let verdict = (rules.keyword)(&key, value)
                .or_else(|| rules.in_context.and_then(|rule| rule(obj, &key, value)));
            if verdict.is_none() && !special {
                continue;
            }
            if key == "oneOf"
                && !obj.contains_key("anyOf")
                && !matches!(verdict, Some((Severity::Ignored, _)))
            {
                if let Some(v) = obj.remove("oneOf") {
                    obj.insert("anyOf".into(), v);
                    self.moved
                        .push((format!("{ptr}/oneOf"), format!("{ptr}/anyOf")));
                    self.changes.push(format!("{ptr}: `oneOf` became `anyOf`"));
                }
                continue;
            }
            if let Some(v) = obj.remove(&key) {
                notes.push(describe(&key, &v));
                self.changes
                    .push(format!("{ptr}: `{key}` moved into description"));
            }
        }
        if walk::is_object_node(obj) && !obj.contains_key("$ref") {
            if self.dialect.closed_objects()
                && obj.get("additionalProperties") != Some(&Value::Bool(false))
            {
                if let Some(v) = obj.insert("additionalProperties".into(), Value::Bool(false)) {
                    if v != Value::Bool(true) {
                        notes.push(describe("additionalProperties", &v));
                    }
                }
                self.changes
                    .push(format!("{ptr}: `additionalProperties: false` set"));
            }
            if self.optional_all {
                self.require_all(obj, ptr);
            }
        }
        if !notes.is_empty() {
            let mut text = obj
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if !text.is_empty() {
                text.push(' ');
            }
            text.push('(');
            text.push_str(&notes.join("; "));
            text.push(')');
            obj.insert("description".into(), Value::String(text));
        }
        for (key, value) in obj.iter_mut() {
            let k = key.as_str();
            if SCHEMA_MAPS.contains(&k) {
                if let Value::Object(map) = value {
                    for (name, sub) in map.iter_mut() {
                        self.node(
                            sub,
                            &format!("{ptr}/{}/{}", walk::escape(k), walk::escape(name)),
                        );
                    }
                }
            } else if SCHEMA_ARRAYS.contains(&k) || k == "items" {
                match value {
                    Value::Array(items) => {
                        for (i, sub) in items.iter_mut().enumerate() {
                            self.node(sub, &format!("{ptr}/{}/{i}", walk::escape(k)));
                        }
                    }
                    v @ Value::Object(_) => self.node(v, &format!("{ptr}/{}", walk::escape(k))),
                    _ => {}
                }
            } else if SCHEMA_ONE.contains(&k) {
                self.node(value, &format!("{ptr}/{}", walk::escape(k)));
            }
        }
        let keep = self.inlining.len() - inlined;
        self.inlining.truncate(keep);
    }

    /// Merge `allOf` members (local `$ref`s inlined) into `obj`.
    ///
    /// Returns how many targets were pushed on `self.inlining`.
    fn merge_all_of(&mut self, obj: &mut Map<String, Value>, ptr: &str) -> usize {
        let mut pushed = 0;
        for _ in 0..8 {
            let Some(Value::Array(members)) = obj.remove("allOf") else {
                return pushed;
            };
            for member in members {
                let member = match member
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(walk::local_target)
                {
                    Some(target) if self.inlining.contains(&target) => {
                        self.changes.push(format!(
                            "{ptr}: recursive `allOf` member `#{target}` dropped"
                        ));
                        continue;
                    }
                    Some(target) => {
                        let inlined = self.root.pointer(&target).cloned().unwrap_or(member);
                        self.inlining.push(target);
                        pushed += 1;
                        inlined
                    }
                    None => member,
                };
                let Value::Object(m) = member else { continue };
                for (k, v) in m {
                    match (k.as_str(), obj.get_mut(&k)) {
                        ("properties", Some(Value::Object(mine))) => {
                            if let Value::Object(theirs) = v {
                                for (name, sub) in theirs {
                                    mine.entry(name).or_insert(sub);
                                }
                            }
                        }
                        ("required", Some(Value::Array(mine))) => {
                            if let Value::Array(theirs) = v {
                                for r in theirs {
                                    if !mine.contains(&r) {
                                        mine.push(r);
                                    }
                                }
                            }
                        }
                        (_, Some(_)) => {}
                        (_, None) => {
                            obj.insert(k, v);
                        }
                    }
                }
            }
            self.changes
                .push(format!("{ptr}: `allOf` merged into its parent"));
        }
        pushed
    }

    /// Make every property required; the optional ones nullable and marked.
    fn require_all(&mut self, obj: &mut Map<String, Value>, ptr: &str) {
        let required: BTreeSet<String> = walk::required_of(obj)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let Some(Value::Object(props)) = obj.get_mut("properties") else {
            return;
        };
        let mut names: Vec<String> = Vec::new();
        for (name, sub) in props.iter_mut() {
            names.push(name.clone());
            if required.contains(name) {
                continue;
            }
            *sub = nullable(std::mem::take(sub));
            if sub
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|b| b.len() == 2 && b[1] == json!({"type": "null"}))
                && sub.get("anyOf").and_then(|b| b.get(0)).is_some_and(|b| {
                    b.get("anyOf").is_some()
                        || b.get("$ref").is_some()
                        || b.get("const").is_some()
                        || b.is_object()
                })
                && sub.get("type").is_none()
            {
                let at = format!("{ptr}/properties/{}", walk::escape(name));
                if sub.pointer("/anyOf/0") != Some(&json!({"type": "null"})) && nested_wrapped(sub)
                {
                    self.moved.push((at.clone(), format!("{at}/anyOf/0")));
                }
            }
            if let Value::Object(s) = sub {
                s.insert(OPTIONAL.into(), Value::Bool(true));
            }
            self.changes.push(format!(
                "{ptr}/properties/{}: optional, made required and nullable",
                walk::escape(name)
            ));
        }
        let mut list: Vec<Value> = obj
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for name in names {
            if !required.contains(&name) {
                list.push(Value::String(name));
            }
        }
        // Draft-04 forbids an empty `required`.
        if list.is_empty() {
            obj.remove("required");
        } else {
            obj.insert("required".into(), Value::Array(list));
        }
    }
}

fn describe(key: &str, value: &Value) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    if text.len() > DESCRIBE_MAX {
        let mut cut = DESCRIBE_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    format!("{key}: {text}")
}

/// The schema with `null` added as an allowed value.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut obj) = schema else {
        // `true` (anything) already allows null; `false` becomes "only null".
        return if schema == Value::Bool(false) {
            json!({"type": "null"})
        } else {
            json!({})
        };
    };
    let simple = !obj.contains_key("anyOf")
        && !obj.contains_key("$ref")
        && !obj.contains_key("const")
        && !obj.contains_key("oneOf")
        && !obj.contains_key("allOf");
    if simple {
        match obj.get_mut("type") {
            Some(Value::String(t)) if t != "null" => {
                let t = std::mem::take(t);
                obj.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => {
                ts.push(json!("null"));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = obj.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
        if obj.contains_key("type") || obj.contains_key("enum") {
            return Value::Object(obj);
        }
        if obj.is_empty() {
            return Value::Object(obj);
        }
    }
    if obj.len() == 1 {
        if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
            branches.push(json!({"type": "null"}));
            return Value::Object(obj);
        }
    }
    // Keep annotations on the outside, where the model reads them.
    let mut outer = Map::new();
    if let Some(d) = obj.remove("description") {
        outer.insert("description".into(), d);
    }
    outer.insert(
        "anyOf".into(),
        json!([Value::Object(obj), {"type": "null"}]),
    );
    Value::Object(outer)
}

/// Whether `nullable` wrapped the schema as `anyOf: [<schema>, null]` (the
/// original then lives at `/anyOf/0`).
fn nested_wrapped(sub: &Value) -> bool {
    sub.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|b| b.len() == 2 && b[1] == json!({"type": "null"}) && b[0].is_object())
        && sub.as_object().is_some_and(|o| {
            o.keys()
                .all(|k| k == "anyOf" || k == "description" || k == OPTIONAL)
        })
}

/// Rewrite local `$ref`s whose target moved; a reference whose target no
/// longer exists (it was inside a keyword moved into a description) becomes
/// `{}` with a note, so the fixed schema still compiles: the original schema
/// still judges the answer.
fn follow_moves(
    root: &mut Value,
    moved: &[(String, String)],
    close: bool,
    changes: &mut Vec<String>,
) {
    fn collect(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push((at.to_owned(), r.clone()));
                }
                for (k, x) in m {
                    if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        collect(x, &format!("{at}/{}", walk::escape(k)), out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    collect(x, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut refs = Vec::new();
    collect(root, "", &mut refs);
    for (at, reference) in refs {
        let Some(mut target) = walk::local_target(&reference) else {
            continue;
        };
        for (old, new) in moved {
            if target == *old || target.starts_with(&format!("{old}/")) {
                target = format!("{new}{}", &target[old.len()..]);
            }
        }
        let exists = root.pointer(&target).is_some();
        let Some(Value::Object(node)) = root.pointer_mut(&at) else {
            continue;
        };
        if exists {
            let fresh = format!("#{}", target.replace('%', "%25"));
            if fresh != reference {
                node.insert("$ref".into(), Value::String(fresh));
            }
        } else {
            node.remove("$ref");
            let mut text = node
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if !text.is_empty() {
                text.push(' ');
            }
            let _ = write!(text, "(see `{reference}` of the original schema)");
            node.insert("description".into(), Value::String(text));
            if close && walk::is_object_node(node) {
                node.insert("additionalProperties".into(), Value::Bool(false));
            }
            changes.push(format!(
                "{at}: `$ref: {reference}` pointed into a removed keyword; dropped"
            ));
        }
    }
}

fn strip_markers(mut v: Value) -> Value {
    fn go(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove(OPTIONAL);
                for x in m.values_mut() {
                    go(x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(go),
            _ => {}
        }
    }
    go(&mut v);
    v
}

/// Follow local `$ref`s from `schema`, at most [`MAX_REF_HOPS`] times.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_REF_HOPS {
        let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(walk::local_target)
        else {
            return schema;
        };
        match root.pointer(&target) {
            Some(t) => schema = t,
            None => return schema,
        }
    }
    schema
}

/// Branch schemas an instance may be judged by (`anyOf`/`oneOf`/`allOf`).
fn branches(schema: &Value) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf", "allOf"]
        .into_iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flatten()
}

fn strip_nulls(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_REF_HOPS {
        return;
    }
    let schema = resolve(root, schema);
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    let marked = sub.get(OPTIONAL) == Some(&Value::Bool(true));
                    if marked && map.get(name) == Some(&Value::Null) {
                        map.remove(name);
                    } else if let Some(v) = map.get_mut(name) {
                        strip_nulls(root, sub, v, depth + 1);
                    }
                }
            }
            if let Some(extra) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                let props = schema.get("properties").and_then(Value::as_object);
                for (k, v) in map.iter_mut() {
                    if !props.is_some_and(|p| p.contains_key(k)) {
                        strip_nulls(root, extra, v, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => match schema.get("items") {
            Some(s @ Value::Object(_)) => {
                for v in items.iter_mut() {
                    strip_nulls(root, s, v, depth + 1);
                }
            }
            Some(Value::Array(tuple)) => {
                for (v, s) in items.iter_mut().zip(tuple) {
                    strip_nulls(root, s, v, depth + 1);
                }
            }
            _ => {}
        },
        _ => {}
    }
    for branch in branches(schema) {
        strip_nulls(root, branch, value, depth + 1);
    }
}

fn fill_nulls(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_REF_HOPS {
        return;
    }
    let schema = resolve(root, schema);
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    match map.get_mut(name) {
                        Some(v) => fill_nulls(root, sub, v, depth + 1),
                        None if sub.get(OPTIONAL) == Some(&Value::Bool(true)) => {
                            map.insert(name.clone(), Value::Null);
                        }
                        None => {}
                    }
                }
            }
            // Only the first object branch that names every key of the instance.
            let keys: Vec<String> = map.keys().cloned().collect();
            let fits = |b: &&Value| {
                let b = resolve(root, b);
                b.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| keys.iter().all(|k| p.contains_key(k)))
            };
            if let Some(branch) = branches(schema).find(fits) {
                fill_nulls(root, branch, value, depth + 1);
            }
        }
        Value::Array(items) => {
            if let Some(s @ Value::Object(_)) = schema.get("items") {
                for v in items.iter_mut() {
                    fill_nulls(root, s, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}
