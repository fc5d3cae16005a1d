//! Gemini `generateContent` with `generationConfig.responseJsonSchema`.
//!
//! From <https://ai.google.dev/gemini-api/docs/structured-output> ("JSON
//! Schema support"): the supported keywords are `$id`, `$defs`, `$ref`,
//! `$anchor`, `type`, `format`, `title`, `description`, `enum`, `items`,
//! `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`,
//! `oneOf` (read as `anyOf`), `allOf`, `properties`, `additionalProperties`,
//! `required`, string `minLength`/`maxLength`/`pattern`, and the non-standard
//! `propertyOrdering`. Other keywords are not rejected but silently ignored,
//! so the answer may not honour them. Very large or deeply nested schemas may
//! be rejected, but no number is documented, so none is checked here.

use serde_json::Value;

use super::Severity;
use super::walk::Rules;

const SOURCE: &str = "Gemini structured output, JSON Schema support";

/// Keywords Gemini honours.
pub const SUPPORTED: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$ref",
    "$anchor",
    "$comment",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "const",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "allOf",
    "properties",
    "additionalProperties",
    "required",
    "minLength",
    "maxLength",
    "pattern",
    "propertyOrdering",
    "default",
    "examples",
];

fn keyword(key: &str, _value: &Value) -> Option<(Severity, &'static str)> {
    (!SUPPORTED.contains(&key)).then_some((Severity::Ignored, "silently ignored"))
}

pub(crate) static RULES: Rules = Rules {
    keyword,
    in_context: None,
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
    simple_patterns: false,
    source: SOURCE,
};
