//! The result of the extract stage, shared by every edge (CLI, store, hub).
//!
//! Its JSON form is DESIGN.md's "Extract result":
//! `{"value", "method", "repairs", "coercions", "valid", "errors", "run"}`,
//! and `warnings` when there are some.
//!
//! Note [Result types]: every type a stage reports (`Repair` from extract,
//! `Coercion`/`CoercionKind` and `Violation` from validate, `Method`) is
//! defined here, and this module imports neither `extract` nor `validate`.
//! So data flows one way, decode → extract → validate → check, and the stages
//! import this module, never each other's results. `extract::Repair` and
//! `validate::{Coercion, CoercionKind}` are re-exports.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::facts::RunSummary;
use crate::json::InexactNumber;
pub use agentshape_json::Repair;

/// Which extraction step produced the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Native structured output (`result.structured_output`, a `StructuredOutput`
    /// tool call, or a provider's native JSON output).
    Structured,
    /// A fenced code block (```` ```json ````, or untagged holding `{`/`[`).
    Fenced,
    /// A balanced JSON value found in prose.
    Bare,
    /// A candidate that parsed only after repairs (listed in `repairs`).
    Repaired,
    /// The legacy text markers of the profile.
    Markers,
    /// Nothing structured was found.
    None,
}

impl Method {
    /// The `snake_case` name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Structured => "structured",
            Method::Fenced => "fenced",
            Method::Bare => "bare",
            Method::Repaired => "repaired",
            Method::Markers => "markers",
            Method::None => "none",
        }
    }
}

/// What kind of check produced a [`Violation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A JSON Schema keyword failed.
    Schema,
    /// An `x-invariants` rule failed.
    Invariant,
    /// A number cannot be held exactly (Note [Big numbers] in [`crate::json`]).
    Number,
    /// Text held a lone surrogate escape or bytes that are not UTF-8, now
    /// U+FFFD (Note [Replaced text] in `extract::replaced`).
    Text,
}

/// One reason an instance is invalid, in the error shape used everywhere:
/// `{"instance_path": "/events/0/level", "schema_path": "/properties/...", "message": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// JSON Pointer to the offending part of the instance (`""` for the root).
    pub instance_path: String,
    /// JSON Pointer to the failing keyword in the schema.
    pub schema_path: String,
    /// A human-readable message.
    pub message: String,
    /// Set only for non-schema checks (invariants), so plain schema errors keep
    /// DESIGN.md's three-field shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ViolationKind>,
    /// The CEL source of the failed `x-invariants` rule (invariants only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Violation {
    /// The error reported for an inexact number: kind `number`, at its path.
    ///
    /// Defined here, not in agentshape-json, so that the JSON layer imports
    /// no stage's types (Note [Result types], Note [One JSON family]).
    pub fn of_inexact(n: &InexactNumber) -> Violation {
        Violation {
            instance_path: n.instance_path.clone(),
            schema_path: String::new(),
            message: format!(
                "number {} cannot be represented exactly (it would become {}); refused rather \
                 than changed",
                n.literal, n.held
            ),
            kind: Some(ViolationKind::Number),
            rule: None,
        }
    }
}

/// The outcome of extracting (and, given a schema, validating) one reply or run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    /// The extracted value, `null` when nothing was found.
    pub value: Option<Value>,
    /// Which step produced `value`.
    pub method: Method,
    /// Every repair applied to the winning candidate, in order of first use.
    pub repairs: Vec<Repair>,
    /// Every schema-aligned coercion applied (only with coercion enabled).
    pub coercions: Vec<Coercion>,
    /// `true` when a value was found and (given a schema) it validates.
    pub valid: bool,
    /// Why the value is invalid (empty when valid or when no schema was given).
    pub errors: Vec<Violation>,
    /// What the reader should know about the choice that is neither a
    /// repair nor an error: the reply held several top-level values and
    /// which one was taken, and why (Note \[Several values\] in
    /// `extract::several`). Absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The run summary, when the input was a transcript rather than a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Box<RunSummary>>,
}

impl Extraction {
    /// An extraction that found nothing.
    pub fn none() -> Self {
        Extraction {
            value: None,
            method: Method::None,
            repairs: Vec::new(),
            coercions: Vec::new(),
            valid: false,
            errors: Vec::new(),
            warnings: Vec::new(),
            run: None,
        }
    }
}

/// What a coercion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoercionKind {
    /// A numeric string became a number (`"42"` → `42`, `"3.5"` → `3.5`).
    StringToNumber,
    /// A percentage string became its number (`"90%"` → `90`).
    PercentToNumber,
    /// `"true"`/`"false"` (any case) became a boolean.
    StringToBoolean,
    /// A string matched exactly one enum member ignoring case and became it
    /// (`"Critical"` → `"critical"`).
    EnumCase,
    /// A single value became a one-element array (`x` → `[x]`).
    SingleToArray,
    /// A `null` optional property whose schema rejects `null` was removed.
    NullRemoved,
    /// `{"output": x}` or `{"result": x}` became `x`.
    Unwrapped,
    /// A string holding a JSON object or array (`"{\"a\": 1}"`, maybe
    /// fenced) became that document, where the schema asks for an object or
    /// an array and not a string (Note [Embedded JSON] in
    /// `extract::embedded`); listed with [`Repair::DecodedEmbeddedJson`].
    EmbeddedJson,
}

impl CoercionKind {
    /// The `snake_case` name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            CoercionKind::StringToNumber => "string_to_number",
            CoercionKind::PercentToNumber => "percent_to_number",
            CoercionKind::StringToBoolean => "string_to_boolean",
            CoercionKind::EnumCase => "enum_case",
            CoercionKind::SingleToArray => "single_to_array",
            CoercionKind::NullRemoved => "null_removed",
            CoercionKind::Unwrapped => "unwrapped",
            CoercionKind::EmbeddedJson => "embedded_json",
        }
    }
}

impl std::fmt::Display for CoercionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One schema-aligned coercion, reported so nothing is changed silently.
///
/// Serialized as `{"kind": "string_to_number", "instance_path": "/confidence",
/// "from": "90", "to": 90}`; `to` is absent when the value was removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coercion {
    /// What was done.
    pub kind: CoercionKind,
    /// Where, as a JSON Pointer into the instance as it was at that step
    /// (after an [`CoercionKind::Unwrapped`], paths are into the inner value).
    pub instance_path: String,
    /// The value before.
    pub from: Value,
    /// The value after; `None` when the value was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inexact_number_is_a_number_violation_at_its_path() {
        let p = crate::json::parse(r#"{"b": [1, 12345678901234567890123]}"#).unwrap();
        let v = Violation::of_inexact(&p.inexact[0]);
        assert_eq!(v.kind, Some(ViolationKind::Number));
        assert_eq!(v.instance_path, "/b/1");
        assert!(
            v.message.contains("cannot be represented exactly"),
            "{}",
            v.message
        );
    }
}
