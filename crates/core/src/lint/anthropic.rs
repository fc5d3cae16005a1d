//! Anthropic structured outputs: Messages `output_config.format` and strict
//! tool use (`strict: true`).
//!
//! From "JSON Schema limitations" in
//! <https://platform.claude.com/docs/en/build-with-claude/structured-outputs>:
//!
//! - supported: all basic types, `enum` (strings, numbers, booleans, nulls;
//!   no complex types), `const`, `anyOf`, `allOf` (limited), local
//!   `$ref`/`$defs`/`definitions`, `default`, `required`,
//!   `additionalProperties: false`, string formats `date-time`, `time`,
//!   `date`, `duration`, `email`, `hostname`, `uri`, `ipv4`, `ipv6`, `uuid`,
//!   `minItems` of 0 or 1, `pattern` without backreferences or look-around;
//! - not supported (HTTP 400, "For 'integer' type, property 'minimum' is not
//!   supported"): recursive schemas, numerical constraints (`minimum`,
//!   `maximum`, `multipleOf`, ...), string length constraints (`minLength`,
//!   `maxLength`), array constraints beyond `minItems` 0/1,
//!   `additionalProperties` other than `false`, external `$ref`;
//! - complexity limits: at most 24 optional properties and 16 parameters with
//!   union types over the strict schemas of one request.
//!
//! The official SDKs apply the same transformation as [`super::fix`]: they
//! remove unsupported constraints, describe them in `description`, close
//! objects, and validate the answer against the original schema.

use serde_json::Value;

use super::Severity;
use super::walk::Rules;

const SOURCE: &str = "Anthropic structured outputs, JSON Schema limitations";

/// The string formats Anthropic supports.
pub const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Validation keywords Anthropic rejects.
pub const UNSUPPORTED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$dynamicRef",
    "$recursiveRef",
];

fn keyword(key: &str, value: &Value) -> Option<(Severity, &'static str)> {
    if key == "format" {
        return match value.as_str() {
            Some(f) if FORMATS.contains(&f) => None,
            _ => Some((Severity::Error, "this string format is not supported")),
        };
    }
    UNSUPPORTED
        .contains(&key)
        .then_some((Severity::Error, "not supported"))
}

pub(crate) static RULES: Rules = Rules {
    keyword,
    in_context: None,
    max_depth: None,
    max_properties: None,
    max_enum_values: None,
    max_name_chars: None,
    large_enum: None,
    max_optional: Some(24),
    max_unions: Some(16),
    recursion: false,
    root_object: false,
    scalar_enums: true,
    min_items_max: Some(1),
    simple_patterns: true,
    source: SOURCE,
};
