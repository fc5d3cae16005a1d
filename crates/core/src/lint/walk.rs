//! The shared walker: visits every subschema with its JSON Pointer and asks
//! the dialect's [`Rules`] about each keyword, then checks the whole-schema
//! limits (nesting depth, property and enum counts, recursion).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{Dialect, Finding, Severity};

/// What a dialect says about one keyword: `None` when supported.
pub(crate) type KeywordRule = fn(key: &str, value: &Value) -> Option<(Severity, &'static str)>;

/// What a dialect says about one keyword given the rest of its node: `None` when supported.
pub(crate) type ContextRule =
    fn(node: &Map<String, Value>, key: &str, value: &Value) -> Option<(Severity, &'static str)>;

/// One dialect's rules, with the documented limits (`None`: no documented limit).
pub(crate) struct Rules {
    /// Verdict on one keyword of a schema node.
    pub keyword: KeywordRule,
    /// Verdict on one keyword that depends on its siblings (asked after `keyword`).
    pub in_context: Option<ContextRule>,
    /// Maximum object nesting depth.
    pub max_depth: Option<usize>,
    /// Maximum number of object properties over the whole schema.
    pub max_properties: Option<usize>,
    /// Maximum number of enum values over the whole schema.
    pub max_enum_values: Option<usize>,
    /// Maximum total characters of property names, definition names, enum and const values.
    pub max_name_chars: Option<usize>,
    /// (values, characters): an enum with more than `values` string values may hold at most `characters`.
    pub large_enum: Option<(usize, usize)>,
    /// Maximum number of optional properties over the whole schema.
    pub max_optional: Option<usize>,
    /// Maximum number of subschemas with union types (`anyOf` or a type array).
    pub max_unions: Option<usize>,
    /// Whether recursive `$ref`s are supported.
    pub recursion: bool,
    /// Whether the root must be a plain object schema (no root `anyOf`).
    pub root_object: bool,
    /// Whether enum values must be scalars.
    pub scalar_enums: bool,
    /// Allowed values of `minItems` (`None`: any).
    pub min_items_max: Option<u64>,
    /// Whether `pattern` must avoid backreferences and look-around.
    pub simple_patterns: bool,
    /// Where the rules come from.
    pub source: &'static str,
}

/// Every keyword of JSON Schema (drafts 4 to 2020-12) that can hold a subschema
/// or constrain an instance; other keys are annotations or vendor extensions.
pub(crate) const KNOWN: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$ref",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "unevaluatedItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keys whose value is a map of name → subschema.
pub(crate) const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keys whose value is an array of subschemas.
pub(crate) const SCHEMA_ARRAYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keys whose value is one subschema.
pub(crate) const SCHEMA_ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];
/// Keys that nest the instance one level deeper.
const DATA_NESTING: &[&str] = &[
    "properties",
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
];

/// JSON Pointer escaping of one reference token.
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The local pointer a `$ref` names (`#/definitions/a` → `/definitions/a`), or
/// `None` for a remote reference or an anchor.
pub(crate) fn local_target(reference: &str) -> Option<String> {
    let rest = reference.strip_prefix('#')?;
    if rest.is_empty() {
        return Some(String::new());
    }
    if !rest.starts_with('/') {
        return None;
    }
    Some(percent_decode(rest))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a node describes an object (by `type` or by `properties`).
pub(crate) fn is_object_node(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => node.contains_key("properties"),
    }
}

/// Names listed in `required`.
pub(crate) fn required_of(node: &Map<String, Value>) -> BTreeSet<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[derive(Default)]
struct Stats {
    properties: usize,
    enum_values: usize,
    name_chars: usize,
    optional: usize,
    unions: usize,
    /// `$ref` pointer → target pointer.
    refs: Vec<(String, String)>,
}

struct Walk<'a> {
    dialect: Dialect,
    rules: &'a Rules,
    out: Vec<Finding>,
    stats: Stats,
    depth_reported: bool,
}

impl Walk<'_> {
    fn push(
        &mut self,
        pointer: &str,
        severity: Severity,
        rule: &'static str,
        message: String,
        fixable: bool,
    ) {
        self.out.push(Finding {
            pointer: pointer.to_owned(),
            severity,
            rule,
            message,
            fixable,
        });
    }

    fn visit(&mut self, node: &Value, ptr: &str, depth: usize) {
        let Some(obj) = node.as_object() else {
            return;
        };
        let src = self.rules.source;
        if let Some(max) = self.rules.max_depth {
            if depth > max && !self.depth_reported {
                self.depth_reported = true;
                self.push(
                    ptr,
                    Severity::Error,
                    "nesting_depth",
                    format!(
                        "nesting depth {depth} exceeds the documented limit of {max} levels ({src})"
                    ),
                    false,
                );
            }
        }
        // A `$ref` sibling defers to the target, which is checked where it is defined.
        if is_object_node(obj) && !obj.contains_key("$ref") {
            self.object(obj, ptr);
        }
        for (key, value) in obj {
            let at = format!("{ptr}/{}", escape(key));
            self.keyword(obj, key, value, &at);
        }
        for (key, value) in obj {
            let nest = usize::from(DATA_NESTING.contains(&key.as_str()));
            if SCHEMA_MAPS.contains(&key.as_str()) {
                if let Some(map) = value.as_object() {
                    for (name, sub) in map {
                        if key == "$defs" || key == "definitions" || key == "properties" {
                            self.stats.name_chars += name.chars().count();
                        }
                        let d = if key == "$defs" || key == "definitions" {
                            1
                        } else {
                            depth + nest
                        };
                        self.visit(sub, &format!("{ptr}/{}/{}", escape(key), escape(name)), d);
                    }
                }
            } else if SCHEMA_ARRAYS.contains(&key.as_str()) || key == "items" {
                match value {
                    Value::Array(items) => {
                        for (i, sub) in items.iter().enumerate() {
                            self.visit(sub, &format!("{ptr}/{}/{i}", escape(key)), depth + nest);
                        }
                    }
                    v @ Value::Object(_) => {
                        self.visit(v, &format!("{ptr}/{}", escape(key)), depth + nest);
                    }
                    _ => {}
                }
            } else if SCHEMA_ONE.contains(&key.as_str()) {
                self.visit(value, &format!("{ptr}/{}", escape(key)), depth + nest);
            } else if key == "dependencies" {
                if let Some(map) = value.as_object() {
                    for (name, sub) in map {
                        self.visit(sub, &format!("{ptr}/dependencies/{}", escape(name)), depth);
                    }
                }
            }
        }
    }

    fn object(&mut self, obj: &Map<String, Value>, ptr: &str) {
        let props = obj.get("properties").and_then(Value::as_object);
        let required = required_of(obj);
        if let Some(props) = props {
            self.stats.properties += props.len();
            for name in props.keys() {
                if required.contains(name.as_str()) {
                    continue;
                }
                self.stats.optional += 1;
                if self.dialect.all_required() {
                    self.push(&format!("{ptr}/properties/{}", escape(name)), Severity::Error, "optional_property",
                        format!("`{name}` is not in `required`: strict mode needs every property required (emulate optional with a null type) ({})", self.rules.source), true);
                }
            }
        }
        if self.dialect.closed_objects()
            && obj.get("additionalProperties") != Some(&Value::Bool(false))
        {
            let what = if obj.contains_key("additionalProperties") {
                "is not `false`"
            } else {
                "is missing"
            };
            self.push(ptr, Severity::Error, "additional_properties",
                format!("`additionalProperties: false` is required on every object; here it {what} ({})", self.rules.source), true);
        }
    }

    fn keyword(&mut self, obj: &Map<String, Value>, key: &str, value: &Value, at: &str) {
        let src = self.rules.source;
        match key {
            "$ref" => {
                if let Some(r) = value.as_str() {
                    match local_target(r) {
                        Some(target) => self.stats.refs.push((at.trim_end_matches("/$ref").to_owned(), target)),
                        None => self.push(at, Severity::Error, "remote_ref",
                            format!("`$ref: {r}` is not a local reference; only `#/...` references are resolved"), false),
                    }
                }
            }
            "enum" => {
                if let Some(values) = value.as_array() {
                    self.stats.enum_values += values.len();
                    let chars: usize = values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|s| s.chars().count())
                        .sum();
                    self.stats.name_chars += chars;
                    if let Some((n, max)) = self.rules.large_enum {
                        if values.len() > n && chars > max {
                            self.push(at, Severity::Error, "enum_size",
                                format!("an enum of {} values (more than {n}) may hold at most {max} characters, this one holds {chars} ({src})", values.len()), false);
                        }
                    }
                    if self.rules.scalar_enums
                        && values.iter().any(|v| v.is_object() || v.is_array())
                    {
                        self.push(
                            at,
                            Severity::Error,
                            "complex_enum",
                            format!("enum values must be scalars ({src})"),
                            true,
                        );
                    }
                }
            }
            "const" => {
                if let Some(s) = value.as_str() {
                    self.stats.name_chars += s.chars().count();
                }
            }
            "anyOf" => self.stats.unions += 1,
            "type" if value.as_array().is_some_and(|t| t.len() > 1) => {
                self.stats.unions += 1;
            }
            "minItems" => {
                if let (Some(max), Some(n)) = (self.rules.min_items_max, value.as_u64()) {
                    if n > max {
                        self.push(
                            at,
                            Severity::Error,
                            "min_items",
                            format!("`minItems: {n}`: only 0 or 1 is supported ({src})"),
                            true,
                        );
                    }
                }
            }
            "pattern" if self.rules.simple_patterns => {
                if let Some(p) = value.as_str() {
                    if has_lookaround_or_backref(p) {
                        self.push(at, Severity::Error, "pattern",
                                format!("pattern `{p}` uses look-around or a backreference, which is not supported ({src})"), true);
                    }
                }
            }
            _ => {}
        }
        // `items` as an array is the pre-2020 tuple form.
        if key == "items" && value.is_array() {
            if let Some((sev, why)) = (self.rules.keyword)("prefixItems", value) {
                self.push(
                    at,
                    sev,
                    rule_of(sev),
                    format!("tuple `items` (an array): {why} ({src})"),
                    true,
                );
            }
            return;
        }
        if !KNOWN.contains(&key) {
            if self.dialect == Dialect::Openai {
                self.push(
                    at,
                    Severity::Error,
                    "unknown_keyword",
                    format!("`{key}` is not a JSON Schema keyword strict mode permits ({src})"),
                    true,
                );
            }
            return;
        }
        let verdict = (self.rules.keyword)(key, value)
            .or_else(|| self.rules.in_context.and_then(|rule| rule(obj, key, value)));
        if let Some((sev, why)) = verdict {
            self.push(
                at,
                sev,
                rule_of(sev),
                format!("`{key}`: {why} ({src})"),
                true,
            );
        }
    }
}

fn rule_of(sev: Severity) -> &'static str {
    match sev {
        Severity::Error => "unsupported_keyword",
        Severity::Ignored => "ignored_keyword",
    }
}

/// Whether a regex uses `(?=`, `(?!`, `(?<=`, `(?<!` or `\1`-style backreferences.
pub(crate) fn has_lookaround_or_backref(p: &str) -> bool {
    if p.contains("(?=") || p.contains("(?!") || p.contains("(?<=") || p.contains("(?<!") {
        return true;
    }
    let b = p.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            if (b'1'..=b'9').contains(&b[i + 1]) || b[i + 1] == b'k' {
                return true;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    false
}

/// Run every rule of `dialect` over `schema`.
pub(crate) fn lint(schema: &Value, dialect: Dialect) -> Vec<Finding> {
    let rules = dialect.rules();
    let mut w = Walk {
        dialect,
        rules,
        out: Vec::new(),
        stats: Stats::default(),
        depth_reported: false,
    };
    let src = rules.source;
    if rules.root_object {
        let root_ok = schema.as_object().is_some_and(|o| {
            o.get("type").and_then(Value::as_str) == Some("object")
                && !["anyOf", "oneOf", "allOf", "$ref"]
                    .iter()
                    .any(|k| o.contains_key(*k))
        });
        if !root_ok {
            w.push(
                "",
                Severity::Error,
                "root_object",
                format!(
                    "the root must be an object schema (`type: object`, no root `anyOf`) ({src})"
                ),
                true,
            );
        }
    }
    w.visit(schema, "", 1);
    let s = std::mem::take(&mut w.stats);
    let limits = [
        (
            rules.max_properties,
            s.properties,
            "properties",
            "object properties",
            false,
        ),
        (
            rules.max_enum_values,
            s.enum_values,
            "enum_values",
            "enum values",
            false,
        ),
        (
            rules.max_name_chars,
            s.name_chars,
            "name_chars",
            "characters of property names, definition names, enum and const values",
            false,
        ),
        (
            rules.max_optional,
            s.optional,
            "optional_count",
            "optional properties",
            true,
        ),
        (
            rules.max_unions,
            s.unions,
            "union_count",
            "subschemas with union types (`anyOf` or a type array)",
            false,
        ),
    ];
    for (limit, count, rule, what, fixable) in limits {
        if let Some(max) = limit {
            if count > max {
                w.push(
                    "",
                    Severity::Error,
                    rule,
                    format!("{count} {what}; the documented limit is {max} ({src})"),
                    fixable,
                );
            }
        }
    }
    if !rules.recursion {
        for at in recursive_refs(schema, &s.refs) {
            w.push(
                &at,
                Severity::Error,
                "recursion",
                format!("recursive `$ref`: recursive schemas are not supported ({src})"),
                false,
            );
        }
    }
    w.out
}

/// Pointers of `$ref`s that close a cycle of references.
///
/// A `$ref` at pointer P belongs to the innermost referenced target that
/// contains P (or to the root); it is an edge from that owner to its target.
/// A reference is recursive when its target can reach its owner.
pub(crate) fn recursive_refs(_schema: &Value, refs: &[(String, String)]) -> Vec<String> {
    let targets: BTreeSet<&str> = refs.iter().map(|(_, t)| t.as_str()).collect();
    let owner = |p: &str| -> String {
        targets
            .iter()
            .filter(|t| p == **t || p.starts_with(&format!("{t}/")) || t.is_empty())
            .max_by_key(|t| t.len())
            .map_or_else(String::new, |t| (*t).to_owned())
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (at, target) in refs {
        edges.entry(owner(at)).or_default().insert(target.clone());
    }
    let reaches = |from: &str, to: &str| -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if !seen.insert(n.clone()) {
                continue;
            }
            // A target nested inside `n` is reachable from `n` by containment.
            for t in &targets {
                if t.len() > n.len() && (n.is_empty() || t.starts_with(&format!("{n}/"))) {
                    stack.push((*t).to_owned());
                }
            }
            if let Some(next) = edges.get(&n) {
                stack.extend(next.iter().cloned());
            }
        }
        false
    };
    refs.iter()
        .filter(|(at, target)| {
            reaches(target, &owner(at))
                || at == target
                || at.starts_with(&format!("{target}/"))
                || target.is_empty()
        })
        .map(|(at, _)| format!("{at}/$ref"))
        .collect()
}
