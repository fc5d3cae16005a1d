//! A session's validation verdict, typed in Rust and JSON text only at the
//! SQL edge.

use std::fmt;

use agentshape_core::outcome::{Coercion, Extraction, Repair, Violation};
use serde::{Deserialize, Serialize};

/// What validating the session's output found, stored as the `verdict`
/// column: `{"valid", "errors", "repairs", "coercions"}` in that order,
/// each as core serialises it. `run`, `ingest` and `import` write it from
/// an [`Extraction`]; the session page, the `ended` feed row and the
/// list's validation cells read it back, and `ingest` compares its text
/// with what `run` wrote, so the field order is part of the format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The value was found and (given a schema) validates.
    pub valid: bool,
    /// Why it is invalid.
    #[serde(default)]
    pub errors: Vec<Violation>,
    /// Repairs the tolerant parser applied.
    #[serde(default)]
    pub repairs: Vec<Repair>,
    /// Schema-aligned coercions applied.
    #[serde(default)]
    pub coercions: Vec<Coercion>,
}

impl Verdict {
    /// The verdict of an extraction.
    pub fn of(extraction: &Extraction) -> Self {
        Verdict {
            valid: extraction.valid,
            errors: extraction.errors.clone(),
            repairs: extraction.repairs.clone(),
            coercions: extraction.coercions.clone(),
        }
    }

    /// The stored text: compact JSON.
    pub(crate) fn text(&self) -> String {
        self.to_string()
    }
}

/// The stored text: compact JSON, as `serde_json::Value`'s `Display`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only strings, bools, numbers and `Value`s: serialising cannot fail.
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use agentshape_core::outcome::{CoercionKind, Method, ViolationKind};
    use serde_json::json;

    use super::*;

    /// The text is byte for byte what `json!` over the extraction wrote
    /// before the verdict was typed (stores hold that text).
    #[test]
    fn the_text_is_what_json_over_the_extraction_wrote() {
        let mut x = Extraction::none();
        x.method = Method::Repaired;
        x.valid = false;
        x.repairs = vec![Repair::TrailingComma, Repair::SingleQuotes];
        x.errors = vec![Violation {
            instance_path: "/a".to_owned(),
            schema_path: "/properties/a/type".to_owned(),
            message: "\"x\" is not a number ✓".to_owned(),
            kind: Some(ViolationKind::Invariant),
            rule: Some("a > 0.1".to_owned()),
        }];
        x.coercions = vec![Coercion {
            kind: CoercionKind::StringToNumber,
            instance_path: "/c".to_owned(),
            from: json!("0.30000000000000004"),
            to: Some(json!(0.300_000_000_000_000_04)),
        }];
        let old = json!({
            "valid": x.valid,
            "errors": x.errors,
            "repairs": x.repairs,
            "coercions": x.coercions,
        })
        .to_string();
        assert_eq!(Verdict::of(&x).text(), old);
        let back: Verdict = serde_json::from_str(&old).unwrap();
        assert_eq!(back, Verdict::of(&x));
    }
}
