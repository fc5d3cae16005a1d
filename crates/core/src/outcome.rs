//! The result of the extract stage, shared by every edge (CLI, store, hub).
//!
//! Its JSON form is DESIGN.md's "Extract result":
//! `{"value", "method", "repairs", "coercions", "valid", "errors", "run"}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::extract::Repair;
use crate::summary::RunSummary;
use crate::validate::Coercion;

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
            run: None,
        }
    }
}
