//! Secrets in transcripts: find credentials and mask them.
//!
//! Agent transcripts print `.env` files, `env`, config files, connection
//! strings and keys. Everything agentshape keeps or shows (the store, the
//! dashboard, exports, printed output) goes through a [`Masker`] first, which
//! replaces each secret with `[REDACTED:<rule-id>:<fingerprint>]`.
//!
//! - [`RuleSet`]: named rules as data (gitleaks' rules, MIT; see `rules.toml`),
//!   extendable and overridable by a user file in the same format;
//! - [`Detector`]: the rules compiled once; [`Detector::find`] is linear in the
//!   text's size;
//! - [`Masker`]: a detector and a [`MaskKey`]; the fingerprint is a keyed hash,
//!   so two places holding the same secret show the same fingerprint without
//!   revealing it, and a guess cannot be confirmed without the key.
//!
//! Pure: no I/O, no clock, no environment, no randomness (the caller makes
//! the key).
//!
//! ```
//! use agentshape_core::secrets::{Masker, MaskKey};
//!
//! let masker = Masker::builtin(MaskKey::from_bytes([7; 32]));
//! let text = "export GITHUB_TOKEN=ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
//! let masked = masker.mask_str(text);
//! assert!(masked.text.starts_with("export GITHUB_TOKEN=[REDACTED:github-pat:"));
//! assert_eq!(masked.found[0].rule, "github-pat");
//! // Masking masked text changes nothing.
//! assert_eq!(masker.mask_str(&masked.text).text, masked.text);
//! ```

mod clean_json;
mod detect;
mod encoded;
mod facts;
mod gate;
mod hand_gate;
mod ids;
mod keywords;
mod mask;
mod needs;
mod rules;
mod stopwords;
mod syntax;
#[cfg(target_arch = "x86_64")]
mod vectors;

pub use detect::{Detector, Finding, shannon_entropy};
pub use ids::SAFE_ID_PREFIX;
pub use mask::{Found, MaskKey, Masked, Masker};
pub use rules::{Allowlist, Rule, RuleSet};

/// An error of the secrets module: a rule file or rule that cannot be used,
/// or a mask key that cannot be read. Always one line naming what is at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretsError {
    /// The rule file is not valid TOML or has a bad key.
    #[error("secret rules: {message}")]
    RuleFile {
        /// What is wrong, in one line (with the TOML position when there is one).
        message: String,
    },
    /// A rule does not hold together: a regex that does not compile, a
    /// `secretGroup` beyond the regex's groups, an empty id.
    #[error("secret rule `{id}`: {message}")]
    Rule {
        /// The rule's id (or `allowlist` for a global allowlist).
        id: String,
        /// What is wrong, in one line.
        message: String,
    },
    /// A mask key in text form is not 64 hex digits.
    #[error("mask key: {message}")]
    Key {
        /// What is wrong, in one line.
        message: String,
    },
}

/// Collapses a multi-line message (the regex and TOML crates draw carets under
/// the fault) into one line.
pub(crate) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
