//! Profiles: a schema and a legacy marker grammar bundled under one name.
//!
//! Built in: `claude-ops` (seed 000), `claude-loop` (seed 001), `code-review`
//! (seed 002). The schemas are compiled into the binary so a profile works
//! with no files beside it.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::extract::MarkerGrammar;

const AGENT_RESPONSE: &str = include_str!("../../../../schemas/agent-response.json");
const LOOP_ACTION: &str = include_str!("../../../../schemas/loop-action.json");
const CODE_REVIEW: &str = include_str!("../../../../schemas/code-review.json");

/// The names of the built-in profiles.
pub const BUILTIN: &[&str] = &["claude-ops", "claude-loop", "code-review"];

/// A schema plus the legacy marker grammar to fall back on.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// The JSON Schema of the structured output.
    pub schema: Value,
    /// The legacy marker grammar, if the profile has one.
    pub markers: Option<MarkerGrammar>,
}

impl Profile {
    /// A built-in profile by name.
    ///
    /// # Errors
    /// [`Error::UnknownProfile`] when no built-in profile has that name.
    pub fn builtin(name: &str) -> Result<Profile> {
        let (text, markers) = match name {
            "claude-ops" => (AGENT_RESPONSE, Some(MarkerGrammar::ClaudeOps)),
            "claude-loop" => (LOOP_ACTION, Some(MarkerGrammar::ClaudeLoop)),
            "code-review" => (CODE_REVIEW, None),
            _ => {
                return Err(Error::UnknownProfile {
                    name: name.to_owned(),
                    known: BUILTIN.join(", "),
                });
            }
        };
        let schema = serde_json::from_str(text).map_err(|e| Error::InvalidProfile {
            name: name.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Profile {
            name: name.to_owned(),
            schema,
            markers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_loads_with_an_object_schema() {
        for name in BUILTIN {
            let p = Profile::builtin(name).unwrap();
            assert_eq!(p.schema["type"], "object", "{name}");
        }
    }

    #[test]
    fn unknown_profile_names_the_known_ones() {
        let err = Profile::builtin("nope").unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown profile `nope` (known: claude-ops, claude-loop, code-review)"
        );
    }
}
