//! Extract: the structured value out of a run or a reply.
//!
//! Tries, in order, and records which step won ([`Method`]): native structured
//! output → fenced blocks → balanced JSON in prose → repaired JSON → the
//! profile's legacy markers → none. Given a schema, the first candidate that
//! validates wins, else the one with the fewest errors.

pub mod markers;
pub mod repair;

use serde::{Deserialize, Serialize};

use crate::outcome::{Extraction, Method};
use crate::summary::RunSummary;
use crate::validate::Validator;

pub use markers::MarkerGrammar;

/// One repair applied by the tolerant parser; listed, never hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Repair {
    /// `,}` or `,]`.
    TrailingComma,
}

/// Extraction settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions<'a> {
    /// Validate candidates against this schema; the first valid one wins.
    pub validator: Option<&'a Validator>,
    /// Legacy marker grammar to fall back on.
    pub markers: Option<MarkerGrammar>,
    /// Apply schema-aligned coercions before judging validity.
    pub coerce: bool,
}

/// Extract from one reply text.
pub fn extract_text(text: &str, opts: &ExtractOptions<'_>) -> Extraction {
    let _ = (text, opts);
    let mut e = Extraction::none();
    e.method = Method::None;
    e
}

/// Extract from a decoded run: native structured output first, then the
/// `StructuredOutput` tool input, then the result text and the assistant text.
pub fn extract_run(run: &RunSummary, opts: &ExtractOptions<'_>) -> Extraction {
    let _ = (run, opts);
    Extraction::none()
}
