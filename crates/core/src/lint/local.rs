//! `--provider local`: the llguidance JSON Schema compiler (constrained
//! decoding on a local GGUF model).
//!
//! From llguidance's `docs/json_schema.md` and its compiler
//! (`parser/src/json/schema.rs`, `formats.rs`, `context_simple/draft.rs`,
//! guidance-ai/llguidance at c75b0d9): the implemented keywords are
//! `anyOf`, `oneOf`, `allOf`, `$ref` (local only), `const`, `enum`, `type`,
//! `items`, `additionalItems`, `prefixItems`, `minItems`, `maxItems`,
//! `properties`, `additionalProperties`, `patternProperties`, `required`,
//! `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//! `format`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`; annotations (`title`, `description`, `default`,
//! `examples`, `$defs`, `$id`, `$schema`, `$comment`, `readOnly`,
//! `writeOnly`, `contentMediaType`, `contentEncoding`, ...) pass.
//!
//! Note [llguidance rejects, it does not ignore]: unlike Ollama's grammar
//! converter, llguidance (in its default, non-`lenient` mode, which is what
//! agentshape uses) REFUSES to compile a schema holding a JSON Schema
//! keyword it does not implement ("Unimplemented keys: [...]") or a `format`
//! it does not know, rather than producing a weaker grammar. So every
//! finding here is an error: the grammar would not compile and `ask
//! --provider local` would stop with exit 64. Keys that are not JSON Schema
//! keywords at all (vendor extensions) are ignored by llguidance and here.
//! The fix moves the refused keyword into `description` (the model still
//! reads it) and validation against the original schema enforces it
//! afterwards (belt and suspenders).
//!
//! Partly supported, flagged as errors with the documented rate of success
//! on `MaskBench` so the user can decide: `oneOf` (compiled only when
//! llguidance can prove the branches disjoint, 68%; the fix makes it
//! `anyOf`), and `minProperties`/`maxProperties` (only when every property
//! in `properties` is `required`, 90%). Not checked (would need
//! llguidance's own reasoning): `allOf` intersections it cannot build (2%)
//! and overlapping `patternProperties` (2%).

use serde_json::{Map, Value};

use super::Severity;
use super::walk::Rules;

const SOURCE: &str = "llguidance JSON Schema support (docs/json_schema.md)";

/// JSON Schema keywords llguidance knows but does not implement: a schema
/// holding one does not compile.
pub const REJECTED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// The `format`s llguidance implements; any other fails to compile.
pub const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
    "unknown",
];

fn keyword(key: &str, value: &Value) -> Option<(Severity, &'static str)> {
    match key {
        "format" => match value.as_str() {
            Some(f) if FORMATS.contains(&f) => None,
            _ => Some((
                Severity::Error,
                "this format is not implemented: the grammar does not compile",
            )),
        },
        "oneOf" => Some((
            Severity::Error,
            "compiled only when the branches are provably disjoint (68% of MaskBench's); `anyOf` always compiles",
        )),
        _ => REJECTED.contains(&key).then_some((
            Severity::Error,
            "not implemented: the grammar does not compile",
        )),
    }
}

/// `minProperties`/`maxProperties` compile only when every property listed
/// in `properties` is also `required` (they then bound the extra keys).
fn in_context(
    node: &Map<String, Value>,
    key: &str,
    _value: &Value,
) -> Option<(Severity, &'static str)> {
    if key != "minProperties" && key != "maxProperties" {
        return None;
    }
    let required = super::walk::required_of(node);
    let all_required = node
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.keys().all(|k| required.contains(k.as_str())));
    (!all_required).then_some((
        Severity::Error,
        "compiled only when every property in `properties` is required",
    ))
}

pub(crate) static RULES: Rules = Rules {
    keyword,
    in_context: Some(in_context),
    max_depth: None,
    max_properties: None,
    max_enum_values: None,
    max_name_chars: None,
    large_enum: None,
    max_optional: None,
    max_unions: None,
    recursion: true,
    root_object: false,
    scalar_enums: false,
    min_items_max: None,
    // Look-arounds are not supported (docs: "`pattern` (99%) - lookarounds
    // not supported"); its regex engine has no backreferences either.
    simple_patterns: true,
    source: SOURCE,
};
