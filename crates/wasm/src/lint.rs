//! `lint` and `fix`: what a provider's structured-output feature rejects or
//! ignores in a schema, and a schema it accepts (core's lint; the CLI's
//! `agentshape lint --json` and `lint --fix --json` shapes).

use agentshape_core::lint::{self, Dialect, Severity};
use serde_json::{Value, json};

use crate::errors::{Failure, Kind, Result, to_json};
use crate::schema::schema_value;

/// The dialect of a provider name (the CLI's `--provider` values).
pub fn dialect_of(name: &str) -> Result<Dialect> {
    match name {
        "claude-code" | "claude_code" => Ok(Dialect::Anthropic),
        other => Dialect::from_name(other).ok_or_else(|| {
            Failure::usage(format!(
                "unknown provider `{other}` (known: anthropic, claude-code, openai, \
                 openai-chat, openai-responses, gemini, ollama, local)"
            ))
        }),
    }
}

/// `lint(schema, provider)`: `{provider, accepted, findings}`.
pub fn lint(schema: &str, provider: &str) -> Result<String> {
    let schema = schema_value(schema)?;
    let dialect = dialect_of(provider)?;
    let findings = lint::lint(&schema, dialect);
    Ok(to_json(&json!({
        "provider": dialect.as_str(),
        "accepted": !findings.iter().any(|f| f.severity == Severity::Error),
        "findings": findings,
    })))
}

/// `fix(schema, provider)`: `{provider, schema, wrapped, changes,
/// findings_before, findings}` (the findings left after the fix).
pub fn fix(schema: &str, provider: &str) -> Result<String> {
    let schema = schema_value(schema)?;
    let dialect = dialect_of(provider)?;
    let before = lint::lint(&schema, dialect);
    let fixed = lint::fix(&schema, dialect);
    let left = lint::lint(&fixed.schema, dialect);
    Ok(to_json(&json!({
        "provider": dialect.as_str(), "schema": fixed.schema, "wrapped": fixed.wrapped,
        "changes": fixed.changes, "findings_before": before, "findings": left,
    })))
}

/// An answer to the fixed schema mapped back to the original's shape
/// (core's `Fixed::map_back`), as JSON text.
pub fn map_back(schema: &str, provider: &str, answer: &str) -> Result<String> {
    let schema = schema_value(schema)?;
    let dialect = dialect_of(provider)?;
    let answer: Value = serde_json::from_str(answer)
        .map_err(|e| Failure::new(Kind::NotJson, format!("answer: {e}")))?;
    Ok(to_json(&lint::fix(&schema, dialect).map_back(answer)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lint_fix_and_map_back_for_openai() {
        let schema = r#"{"type": "object", "properties": {"a": {"type": "string", "minLength": 2}, "b": {"type": "integer"}}, "required": ["a"]}"#;
        let linted: Value = serde_json::from_str(&lint(schema, "openai").unwrap()).unwrap();
        assert_eq!(linted["provider"], "openai");
        assert_eq!(linted["accepted"], false);
        let fixed: Value = serde_json::from_str(&fix(schema, "openai").unwrap()).unwrap();
        assert_eq!(fixed["findings"], json!([]));
        assert_eq!(fixed["schema"]["additionalProperties"], false);
        let back = map_back(schema, "openai", r#"{"a": "xy", "b": null}"#).unwrap();
        assert_eq!(back, r#"{"a":"xy"}"#);
        assert_eq!(
            lint(schema, "nope").err().map(|f| f.kind),
            Some(Kind::Usage)
        );
        assert_eq!(
            lint("[", "openai").err().map(|f| f.kind),
            Some(Kind::Schema)
        );
    }
}
