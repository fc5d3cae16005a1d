// The shape of a secret rule file (gitleaks' TOML format), included both by
// `rules.rs` and by the crate's build script, which parses the built-in
// `rules.toml` once at build time (Note \[Rules parsed at build time\] in
// `rules.rs`). Items only: the including file brings `serde::Deserialize`.

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
