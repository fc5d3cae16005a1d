//! `OpenAI` Structured Outputs (`strict: true`), Chat Completions
//! `response_format.json_schema` and Responses `text.format`.
//!
//! From the "Supported schemas" section of
//! <https://platform.openai.com/docs/guides/structured-outputs>:
//!
//! - supported: `string`, `number`, `boolean`, `integer`, `object`, `array`,
//!   `enum`, `anyOf`, `$ref`/`$defs` (recursion allowed); string `pattern` and
//!   `format` (`date-time`, `time`, `date`, `duration`, `email`, `hostname`,
//!   `ipv4`, `ipv6`, `uuid`); number `minimum`, `maximum`,
//!   `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`; array `minItems`,
//!   `maxItems`;
//! - every property must be in `required` (optional ones are emulated with a
//!   union with `null`), and every object must set `additionalProperties: false`;
//! - the root must be an object, not `anyOf`;
//! - `allOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
//!   `dependentSchemas`, `patternProperties`, `oneOf` and other keywords are
//!   rejected (so are annotations such as `default`: "'default' is not permitted");
//! - limits: at most 5000 object properties in total and 10 levels of
//!   nesting; at most 1000 enum values in total; property names, definition
//!   names, enum and const values together at most 120,000 characters; an
//!   enum of more than 250 string values at most 15,000 characters.

use serde_json::Value;

use super::Severity;
use super::walk::Rules;

const SOURCE: &str = "OpenAI structured outputs, supported schemas";

/// The formats strict mode accepts.
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
];

/// Keywords strict mode permits (anything else is rejected).
pub const SUPPORTED: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "$comment",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "title",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

fn keyword(key: &str, value: &Value) -> Option<(Severity, &'static str)> {
    if key == "format" {
        return match value.as_str() {
            Some(f) if FORMATS.contains(&f) => None,
            _ => Some((
                Severity::Error,
                "this format is not one strict mode supports",
            )),
        };
    }
    if matches!(key, "exclusiveMinimum" | "exclusiveMaximum") && value.is_boolean() {
        return Some((
            Severity::Error,
            "the draft-04 boolean form is not supported",
        ));
    }
    if SUPPORTED.contains(&key) {
        None
    } else {
        Some((Severity::Error, "not supported in strict mode"))
    }
}

pub(crate) static RULES: Rules = Rules {
    keyword,
    in_context: None,
    max_depth: Some(10),
    max_properties: Some(5000),
    max_enum_values: Some(1000),
    max_name_chars: Some(120_000),
    large_enum: Some((250, 15_000)),
    max_optional: None,
    max_unions: None,
    recursion: true,
    root_object: true,
    scalar_enums: false,
    min_items_max: None,
    simple_patterns: false,
    source: SOURCE,
};
