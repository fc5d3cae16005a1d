//! Secret rules as data: the built-in `rules.toml` and user files in the same format.
//!
//! Note \[Secret rules are data\]: the rules are gitleaks' (MIT; the header of
//! `rules.toml` carries the licence and the commit they were taken from) plus
//! a few of agentshape's own, in gitleaks' own TOML format so that a user can
//! paste a gitleaks rule into their file unchanged. The text is parsed here;
//! compiling the regexes is [`Detector::new`](super::Detector::new)'s job.
//!
//! Note \[Rules parsed at build time\]: parsing the built-in file with the
//! `toml` crate was 18% of the instructions of a whole `hook stop` (6.8 of
//! 37.1 million, callgrind), paid by every process that masks. The crate's
//! build script parses it once with the same types (`format.rs`, included
//! by both) and writes Rust that builds the same [`RuleSet`]; a test checks
//! that it equals [`RuleSet::from_toml`] of the file. User rule files are
//! still parsed at run time.

use serde::Deserialize;

use super::{SecretsError, one_line};

/// The built-in rules: gitleaks' default rules (MIT) and agentshape's own,
/// as text for the test that compares them with what the build generated.
#[cfg(test)]
pub(crate) const BUILTIN: &str = include_str!("rules.toml");

/// A set of secret rules (data, not yet compiled).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSet {
    /// The rules, in file order (ids are unique).
    pub rules: Vec<Rule>,
    /// Allowlists applied to every rule's findings.
    pub allowlists: Vec<Allowlist>,
    /// Rule ids this set removes when it extends another (`disabled = [..]`);
    /// a detector built from this set alone skips them too.
    pub disabled: Vec<String>,
}

// `Rule`, `Allowlist` and the file's top level, shared with the build
// script (Note [Rules parsed at build time]).
include!("format.rs");

impl RuleSet {
    /// The built-in rules (`rules.toml`, compiled in).
    ///
    /// # Panics
    /// Never in a released build: a test parses the built-in file.
    pub fn builtin() -> RuleSet {
        // Note [Rules parsed at build time]: the build script's Rust for the
        // same file; a test compares it with `from_toml(BUILTIN)`.
        include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"))
    }

    /// Parses a rule file (the format of `rules.toml`).
    ///
    /// # Errors
    /// [`SecretsError::RuleFile`] for bad TOML or an unknown key,
    /// [`SecretsError::Rule`] for a duplicate or empty id or a bad
    /// `condition`/`regexTarget`. Regexes are checked by [`Detector::new`](super::Detector::new).
    pub fn from_toml(text: &str) -> Result<RuleSet, SecretsError> {
        let file: File = toml::from_str(text).map_err(|e| SecretsError::RuleFile {
            message: one_line(&e.to_string()),
        })?;
        let mut allowlists: Vec<Allowlist> = file.allowlist.into_iter().collect();
        allowlists.extend(file.allowlists);
        for a in &allowlists {
            a.check("allowlist")?;
        }
        let mut seen = std::collections::HashSet::new();
        for r in &file.rules {
            if r.id.trim().is_empty() {
                return Err(SecretsError::Rule {
                    id: r.id.clone(),
                    message: "empty id".into(),
                });
            }
            if !r
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
            {
                return Err(SecretsError::Rule {
                    id: r.id.clone(),
                    message: "id may hold only ASCII letters, digits, `-`, `_` and `.` (it is shown in masks)".into(),
                });
            }
            if !seen.insert(r.id.as_str()) {
                return Err(SecretsError::Rule {
                    id: r.id.clone(),
                    message: "duplicate id".into(),
                });
            }
            if r.keywords.iter().any(String::is_empty) {
                return Err(SecretsError::Rule {
                    id: r.id.clone(),
                    message: "empty keyword".into(),
                });
            }
            for a in &r.allowlists {
                a.check(&r.id)?;
            }
        }
        Ok(RuleSet {
            rules: file.rules,
            allowlists,
            disabled: file.disabled,
        })
    }

    /// Adds a user's rules: the same id replaces the built-in rule (in place);
    /// new ids are added; the user's `disabled` ids are removed; the user's
    /// global allowlists are added to these.
    pub fn extend(&mut self, user: RuleSet) {
        for rule in user.rules {
            match self.rules.iter_mut().find(|r| r.id == rule.id) {
                Some(slot) => *slot = rule,
                None => self.rules.push(rule),
            }
        }
        self.rules.retain(|r| !user.disabled.contains(&r.id));
        self.allowlists.extend(user.allowlists);
        for id in user.disabled {
            if !self.disabled.contains(&id) {
                self.disabled.push(id);
            }
        }
    }

    /// The ids of the rules a detector built from this set would run, in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.rules
            .iter()
            .filter(|r| !self.disabled.contains(&r.id))
            .map(|r| r.id.as_str())
    }
}

impl Allowlist {
    fn check(&self, id: &str) -> Result<(), SecretsError> {
        let bad = |message: String| {
            Err(SecretsError::Rule {
                id: id.to_owned(),
                message,
            })
        };
        match self.condition.as_deref() {
            None | Some("OR" | "AND") => {}
            Some(other) => {
                return bad(format!(
                    "allowlist condition `{other}` (expected OR or AND)"
                ));
            }
        }
        match self.regex_target.as_deref() {
            None | Some("secret" | "match" | "line") => {}
            Some(other) => {
                return bad(format!(
                    "allowlist regexTarget `{other}` (expected secret, match or line)"
                ));
            }
        }
        if self.regexes.is_empty() && self.stopwords.is_empty() {
            return bad("allowlist without regexes or stopwords".into());
        }
        Ok(())
    }
}
