//! Lint: what a provider's structured-output feature will reject or silently
//! ignore in a JSON Schema, and a fix that turns the schema into one it accepts.
//!
//! Each provider compiles the schema it is sent into a decoding constraint, and
//! each accepts a different subset of JSON Schema. A schema that validates fine
//! locally can fail the request (HTTP 400) or be weakened without a word. This
//! module finds both, with a JSON Pointer to the place in the schema:
//!
//! - [`lint`] lists [`Finding`]s for one [`Dialect`] (one module per dialect:
//!   [`anthropic`], [`openai`], [`gemini`], [`ollama`], [`local`]; the shared walker is `walk`);
//! - [`fix`] returns a [`Fixed`] schema the provider accepts: unsupported
//!   constraints move into `description` (so the model still reads them),
//!   `oneOf` becomes `anyOf`, `allOf` is merged, objects are closed with
//!   `additionalProperties: false`, and, where the dialect needs every property
//!   required (`OpenAI` strict mode), optional properties become required and
//!   nullable;
//! - [`Fixed::map_back`] turns an answer in the fixed shape back into the
//!   original shape (nulls of originally optional properties removed, a wrapped
//!   root unwrapped), so it can be validated against the ORIGINAL schema.
//!   Validation against the original is what makes the moved constraints hold:
//!   belt and suspenders (seed 003).
//!
//! Note [Lint is advisory]: the rules follow each provider's documentation as
//! cited in the dialect modules; providers change their limits, so a finding
//! says what the documentation says, not what the server will do today. Limits
//! that no rewrite can meet without changing what the schema means (nesting
//! depth, total property or enum counts, recursion where unsupported, remote
//! `$ref`) are reported as errors with `fixable: false`.

pub mod anthropic;
mod fix;
pub mod gemini;
pub mod local;
pub mod ollama;
pub mod openai;
mod walk;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use fix::{Fixed, fix};

/// A provider's dialect of JSON Schema for structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Anthropic Messages `output_config.format` (and strict tool use).
    Anthropic,
    /// `OpenAI` Structured Outputs with `strict: true` (Chat Completions and Responses).
    Openai,
    /// Gemini `generateContent` with `responseJsonSchema`.
    Gemini,
    /// Ollama `/api/chat` `format` (a llama.cpp grammar built from the schema).
    Ollama,
    /// `--provider local`: llguidance's JSON Schema compiler on a local model.
    Local,
}

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; 5] = [
        Dialect::Anthropic,
        Dialect::Openai,
        Dialect::Gemini,
        Dialect::Ollama,
        Dialect::Local,
    ];

    /// The name used on the command line and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::Openai => "openai",
            Dialect::Gemini => "gemini",
            Dialect::Ollama => "ollama",
            Dialect::Local => "local",
        }
    }

    /// Parse a command-line name (`openai-chat` and `openai-responses` mean `openai`).
    pub fn from_name(name: &str) -> Option<Dialect> {
        match name {
            "anthropic" => Some(Dialect::Anthropic),
            "openai" | "openai-chat" | "openai-responses" => Some(Dialect::Openai),
            "gemini" => Some(Dialect::Gemini),
            "ollama" => Some(Dialect::Ollama),
            "local" => Some(Dialect::Local),
            _ => None,
        }
    }

    /// Whether every property must be listed in `required` (optional ones
    /// become nullable in [`fix`]).
    pub fn all_required(self) -> bool {
        matches!(self, Dialect::Openai)
    }

    /// Whether every object must say `additionalProperties: false`.
    pub fn closed_objects(self) -> bool {
        matches!(self, Dialect::Openai | Dialect::Anthropic)
    }

    pub(crate) fn rules(self) -> &'static walk::Rules {
        match self {
            Dialect::Anthropic => &anthropic::RULES,
            Dialect::Openai => &openai::RULES,
            Dialect::Gemini => &gemini::RULES,
            Dialect::Ollama => &ollama::RULES,
            Dialect::Local => &local::RULES,
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The provider silently ignores this: the answer may not honour it.
    Ignored,
    /// The provider rejects the request (HTTP 400) because of this.
    Error,
}

/// One thing a provider will reject or ignore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// JSON Pointer into the schema (`""` for the root).
    pub pointer: String,
    /// Error (request rejected) or ignored (silently not enforced).
    pub severity: Severity,
    /// A short stable rule name (`unsupported_keyword`, `optional_property`, ...).
    pub rule: &'static str,
    /// What and why, citing the documented limit where there is one.
    pub message: String,
    /// Whether [`fix`] rewrites this away.
    pub fixable: bool,
}

/// Every finding for `schema` under `dialect`, sorted by pointer then rule.
pub fn lint(schema: &Value, dialect: Dialect) -> Vec<Finding> {
    let mut findings = walk::lint(schema, dialect);
    findings
        .sort_by(|a, b| (&a.pointer, a.rule, &a.message).cmp(&(&b.pointer, b.rule, &b.message)));
    findings.dedup();
    findings
}

/// Whether the provider accepts `schema` (no [`Severity::Error`] finding).
pub fn accepts(schema: &Value, dialect: Dialect) -> bool {
    !lint(schema, dialect)
        .iter()
        .any(|f| f.severity == Severity::Error)
}

#[cfg(test)]
mod tests;
