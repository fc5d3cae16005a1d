//! Which JSON Schema draft a schema is written in.
//!
//! The draft decides the meaning of keywords (`items` is a tuple in draft-07 and
//! "the rest" in 2020-12, `$ref` ignores its siblings before 2019-09, `format`
//! asserts before 2019-09). It comes from `$schema`, defaults to 2020-12, and
//! can be forced by the caller (the conformance suite does so per directory).
//! An unrecognized `$schema` is a caller mistake, never a silent fallback.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON Schema draft agentshape can validate against.
///
/// Draft-04 and draft-06 are accepted too because the underlying crate supports
/// them and many real-world schemas still declare them; DESIGN.md only promises
/// draft-07, 2019-09 and 2020-12.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Draft {
    /// Draft-04 (`http://json-schema.org/draft-04/schema#`).
    Draft4,
    /// Draft-06 (`http://json-schema.org/draft-06/schema#`).
    Draft6,
    /// Draft-07 (`http://json-schema.org/draft-07/schema#`).
    Draft7,
    /// 2019-09 (`https://json-schema.org/draft/2019-09/schema`).
    Draft201909,
    /// 2020-12 (`https://json-schema.org/draft/2020-12/schema`), the default.
    #[default]
    Draft202012,
}

impl Draft {
    /// The draft named by a `$schema` URI (`http` or `https`, with or without a
    /// trailing `#`), or `None` for a URI we do not know.
    pub fn from_uri(uri: &str) -> Option<Self> {
        let uri = uri.trim().trim_end_matches('#');
        let rest = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"))?;
        match rest {
            "json-schema.org/draft/2020-12/schema" | "json-schema.org/schema" => {
                Some(Draft::Draft202012)
            }
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
            "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
            _ => None,
        }
    }

    /// The draft declared by `schema`'s `$schema`.
    ///
    /// `Ok(None)` when there is no `$schema` (the caller picks the default),
    /// `Err(uri)` when `$schema` names something we do not know.
    pub(crate) fn declared(schema: &Value) -> Result<Option<Self>, String> {
        match schema.get("$schema") {
            Some(Value::String(uri)) => Draft::from_uri(uri).map(Some).ok_or_else(|| uri.clone()),
            // A non-string `$schema` is left to the meta-schema check, which
            // reports it with the crate's own wording.
            _ => Ok(None),
        }
    }

    /// Whether `format` is an assertion by default in this draft: yes before
    /// 2019-09, an annotation from 2019-09 on.
    pub fn asserts_formats_by_default(self) -> bool {
        matches!(self, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
    }

    pub(crate) fn to_jsonschema(self) -> jsonschema::Draft {
        match self {
            Draft::Draft4 => jsonschema::Draft::Draft4,
            Draft::Draft6 => jsonschema::Draft::Draft6,
            Draft::Draft7 => jsonschema::Draft::Draft7,
            Draft::Draft201909 => jsonschema::Draft::Draft201909,
            Draft::Draft202012 => jsonschema::Draft::Draft202012,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detects_known_uris() {
        let rows = [
            (
                "http://json-schema.org/draft-07/schema#",
                Some(Draft::Draft7),
            ),
            (
                "https://json-schema.org/draft-07/schema",
                Some(Draft::Draft7),
            ),
            (
                "https://json-schema.org/draft/2019-09/schema",
                Some(Draft::Draft201909),
            ),
            (
                "https://json-schema.org/draft/2020-12/schema",
                Some(Draft::Draft202012),
            ),
            (
                "http://json-schema.org/draft-04/schema#",
                Some(Draft::Draft4),
            ),
            ("https://example.com/my-meta", None),
            ("draft-07", None),
        ];
        for (uri, want) in rows {
            assert_eq!(Draft::from_uri(uri), want, "{uri}");
        }
    }

    #[test]
    fn declared_distinguishes_absent_and_unknown() {
        assert_eq!(Draft::declared(&json!({"type": "string"})), Ok(None));
        assert_eq!(
            Draft::declared(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
            Ok(Some(Draft::Draft7))
        );
        assert_eq!(
            Draft::declared(&json!({"$schema": "urn:nope"})),
            Err("urn:nope".to_owned())
        );
    }
}
