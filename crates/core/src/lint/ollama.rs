//! Ollama `/api/chat` with `format: <schema>`.
//!
//! Ollama (<https://ollama.com/blog/structured-outputs>) turns the schema into
//! a llama.cpp grammar (`json-schema-to-grammar`; its limits are listed in
//! llama.cpp's `grammars/README.md`, "JSON Schemas → GBNF"). That converter
//! supports types, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, `minItems`/`maxItems`, `enum`, `const`, `anyOf`/`oneOf`,
//! `allOf`, local `$ref` (recursion included), `pattern`, string
//! `minLength`/`maxLength`, `minimum`/`maximum` and a few `format`s; it
//! silently skips the rest (`uniqueItems`, `contains`, `not`,
//! `if`/`then`/`else`, `dependentRequired`, `patternProperties`, `multipleOf`,
//! ...). Nothing is rejected, and there is no constrained-decoding guarantee
//! across models and versions: agentshape always validates and retries.

use serde_json::Value;

use super::Severity;
use super::walk::Rules;

const SOURCE: &str = "llama.cpp json-schema-to-grammar, used by Ollama `format`";

/// Keywords the grammar converter silently skips.
pub const IGNORED: &[&str] = &[
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "$dynamicRef",
    "$recursiveRef",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The formats the grammar converter knows.
pub const FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];

fn keyword(key: &str, value: &Value) -> Option<(Severity, &'static str)> {
    if key == "format" {
        return match value.as_str() {
            Some(f) if FORMATS.contains(&f) => None,
            _ => Some((Severity::Ignored, "this format is silently ignored")),
        };
    }
    IGNORED
        .contains(&key)
        .then_some((Severity::Ignored, "silently ignored by the grammar"))
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
