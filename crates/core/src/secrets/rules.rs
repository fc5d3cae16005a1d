//! Secret rules as data: the built-in `rules.toml` and user files in the same format.
//!
//! Note \[Secret rules are data\]: the rules are gitleaks' (MIT; the header of
//! `rules.toml` carries the licence and the commit they were taken from) plus
//! a few of agentshape's own, in gitleaks' own TOML format so that a user can
//! paste a gitleaks rule into their file unchanged. The text is parsed here;
//! compiling the regexes is [`Detector::new`](super::Detector::new)'s job.

use serde::Deserialize;

use super::{SecretsError, one_line};

/// The built-in rules: gitleaks' default rules (MIT) and agentshape's own.
const BUILTIN: &str = include_str!("rules.toml");

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

/// One named rule.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The rule's id, shown in the mask (`[REDACTED:<id>:..]`).
    pub id: String,
    /// What the rule finds, for people.
    #[serde(default)]
    pub description: String,
    /// The pattern, in Go RE2 syntax (as gitleaks).
    pub regex: String,
    /// The capture group that holds the secret; default: the first non-empty
    /// group, else the whole match.
    #[serde(default, rename = "secretGroup")]
    pub secret_group: Option<usize>,
    /// Minimum Shannon entropy (bits per char) the secret must exceed.
    #[serde(default)]
    pub entropy: Option<f64>,
    /// The rule runs only when one of these occurs in the text (ASCII
    /// case-insensitive); empty: always.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Findings these match are not secrets.
    #[serde(default)]
    pub allowlists: Vec<Allowlist>,
    /// gitleaks' tags: accepted, unused.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Findings an allowlist matches are dropped.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// For people.
    #[serde(default)]
    pub description: String,
    /// `OR` (default): a regex or a stopword allows; `AND`: both must (when both are given).
    #[serde(default)]
    pub condition: Option<String>,
    /// What the regexes run on: `secret` (default), `match` or `line`.
    #[serde(default, rename = "regexTarget")]
    pub regex_target: Option<String>,
    /// Go RE2 patterns; any match allows.
    #[serde(default)]
    pub regexes: Vec<String>,
    /// A secret containing one of these (case-insensitive) is allowed.
    #[serde(default)]
    pub stopwords: Vec<String>,
}

/// The file's top level.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    allowlist: Option<Allowlist>,
    #[serde(default)]
    allowlists: Vec<Allowlist>,
    #[serde(default)]
    disabled: Vec<String>,
    // gitleaks' file carries these; accepted so its rules paste unchanged.
    #[serde(default)]
    #[allow(dead_code)]
    title: Option<String>,
    #[serde(default, rename = "minVersion")]
    #[allow(dead_code)]
    min_version: Option<String>,
}

impl RuleSet {
    /// The built-in rules (`rules.toml`, compiled in).
    ///
    /// # Panics
    /// Never in a released build: a test parses the built-in file.
    pub fn builtin() -> RuleSet {
        // A test parses and compiles the built-in file; failing here is a build defect.
        #[allow(clippy::expect_used)]
        RuleSet::from_toml(BUILTIN).expect("built-in secret rules parse (tested)")
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
