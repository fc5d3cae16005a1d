//! The rules file: its TOML shape, read by hand so every error names the
//! rule and the field it is about, in one line.
//!
//! ```toml
//! [settings]            # all optional
//! interval = "5s"       # how often the rules are evaluated
//! attempts = 5          # delivery attempts per destination
//! backoff = "2s"        # the delay before the second attempt, doubled after each
//! max_backoff = "5m"    # the longest delay between two attempts
//! timeout = "10s"       # one webhook request or command run
//! lookback = "1h"       # events older than this when first seen are not alerted
//!
//! [[rule]]
//! name = "review-rejections"
//! when = "rejection_rate"
//! profile = "code-review"
//! window = "1h"
//! above = 0.2
//! min_runs = 10
//! cooldown = "30m"
//! webhook = { url = "https://hooks.example.com/x", format = "slack" }
//! ```

use std::fmt;
use std::fmt::Write as _;

use toml::{Table, Value};

use super::webhook_url::{redact_url, url_problem};

/// A rules file that cannot be used: one line, naming the rule (by name,
/// else by position) and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RulesError {
    /// Not TOML.
    #[error("not valid TOML at line {line}: {message}")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// The parser's message, on one line.
        message: String,
    },
    /// A `[settings]` field is wrong.
    #[error("[settings] `{field}`: {message}")]
    Settings {
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A rule's field is wrong (or missing).
    #[error("rule {rule}: `{field}`: {message}")]
    Rule {
        /// `` `name` `` or `#3` (1-based) when it has no usable name.
        rule: String,
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Something else about the file as a whole.
    #[error("{0}")]
    File(String),
}

/// How a webhook's body is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The firing as JSON ([`crate::alerts::Payload`]).
    Json,
    /// `{"text": "…"}`, what Slack's (and Mattermost's, Discord's `/slack`)
    /// incoming webhooks take.
    Slack,
}

/// A webhook destination.
#[derive(Clone, PartialEq, Eq)]
pub struct Webhook {
    /// The URL (`http` or `https`); it may hold credentials, so it is never
    /// printed whole ([`crate::alerts::redact_url`]).
    pub url: String,
    /// Body shape.
    pub format: Format,
    /// Extra request headers (their values are credentials too: never printed).
    pub headers: Vec<(String, String)>,
}

impl fmt::Debug for Webhook {
    // Never the URL's credentials nor the header values, even in a debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &redact_url(&self.url))
            .field("format", &self.format)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Where a firing is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// POST to a URL.
    Webhook(Webhook),
    /// Run a program (no shell) with the firing as JSON on stdin and in the
    /// environment.
    Command(Vec<String>),
    /// One line on stderr (the `ops` log).
    Log,
}

impl Destination {
    /// Its kind: `webhook`, `command` or `log`.
    pub fn kind(&self) -> &'static str {
        match self {
            Destination::Webhook(_) => "webhook",
            Destination::Command(_) => "command",
            Destination::Log => "log",
        }
    }

    /// What it is, as it may be printed and stored: a webhook's
    /// `scheme://host/path`, a command's program, `stderr`.
    pub fn target(&self) -> String {
        match self {
            Destination::Webhook(w) => redact_url(&w.url),
            Destination::Command(argv) => argv.first().cloned().unwrap_or_default(),
            Destination::Log => "stderr".to_owned(),
        }
    }
}

/// What a rule watches.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// More than `above` (a fraction) of a profile's runs with a verdict
    /// were rejected (invalid, or nothing structured) within `window`,
    /// counted once there are at least `min_runs`.
    RejectionRate {
        /// The profile (or schema path) as stored.
        profile: String,
        /// The window, ending now.
        window_ms: i64,
        /// The rate it must exceed, 0..1.
        above: f64,
        /// Runs the window must hold before the rate counts.
        min_runs: u64,
    },
    /// A session ended with an error category (any, or one of these),
    /// optionally one that checked a service.
    SessionFailed {
        /// Categories that count; empty: any.
        categories: Vec<String>,
        /// Only sessions that checked (or reported an event about) it.
        service: Option<String>,
    },
    /// The cost of the sessions started today (UTC) is above `above` USD.
    CostPerDay {
        /// Dollars.
        above: f64,
        /// Only this profile's sessions.
        profile: Option<String>,
        /// Only this agent's sessions.
        agent: Option<String>,
    },
    /// A `running` session stopped beating (the store's Note \[Lost sessions\]).
    SessionLost,
    /// Secrets were masked in a session's rows.
    SecretsFound,
    /// No session checked `service` for `quiet_ms`.
    NoSession {
        /// The service (as `ops` sessions report them in `services_checked`).
        service: String,
        /// How long without one.
        quiet_ms: i64,
    },
}

impl Condition {
    /// The `when` it is written as.
    pub fn name(&self) -> &'static str {
        match self {
            Condition::RejectionRate { .. } => "rejection_rate",
            Condition::SessionFailed { .. } => "session_failed",
            Condition::CostPerDay { .. } => "cost_per_day",
            Condition::SessionLost => "session_lost",
            Condition::SecretsFound => "secrets_found",
            Condition::NoSession { .. } => "no_session",
        }
    }
}

/// One rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Unique within the file; the firings are stored under it.
    pub name: String,
    /// What it watches.
    pub condition: Condition,
    /// After a firing, events within this long do not fire (0: every distinct event fires).
    pub cooldown_ms: i64,
    /// Events older than this when first seen are not alerted.
    pub lookback_ms: i64,
    /// Where firings go, in order; at least one.
    pub destinations: Vec<Destination>,
}

impl Rule {
    /// Each destination's id within the rule, as deliveries are stored
    /// under it: its kind, with `#n` (1-based) after the first of a kind.
    pub fn destination_ids(&self) -> Vec<String> {
        let mut seen: Vec<&str> = Vec::new();
        self.destinations
            .iter()
            .map(|d| {
                let k = d.kind();
                let n = seen.iter().filter(|s| **s == k).count() + 1;
                seen.push(k);
                if n == 1 {
                    k.to_owned()
                } else {
                    format!("{k}#{n}")
                }
            })
            .collect()
    }

    /// The destination stored under `id` ([`Rule::destination_ids`]).
    pub fn destination(&self, id: &str) -> Option<&Destination> {
        self.destination_ids()
            .iter()
            .position(|d| d == id)
            .and_then(|i| self.destinations.get(i))
    }

    /// One line saying what the rule does (`alerts check`).
    pub fn describe(&self) -> String {
        let what = match &self.condition {
            Condition::RejectionRate {
                profile,
                window_ms,
                above,
                min_runs,
            } => format!(
                "rejection rate of profile `{profile}` above {}% over {} (at least {min_runs} runs)",
                pct(*above),
                duration(*window_ms)
            ),
            Condition::SessionFailed {
                categories,
                service,
            } => {
                let cat = if categories.is_empty() {
                    "any category".to_owned()
                } else {
                    categories.join(" or ")
                };
                match service {
                    Some(s) => format!("a session of service `{s}` failing with {cat}"),
                    None => format!("a session failing with {cat}"),
                }
            }
            Condition::CostPerDay {
                above,
                profile,
                agent,
            } => {
                let mut s = format!("cost per day above ${above:.2}");
                if let Some(p) = profile {
                    let _ = write!(s, " for profile `{p}`");
                }
                if let Some(a) = agent {
                    let _ = write!(s, " for agent `{a}`");
                }
                s
            }
            Condition::SessionLost => "a session lost (no heartbeat)".to_owned(),
            Condition::SecretsFound => "secrets masked in a session".to_owned(),
            Condition::NoSession { service, quiet_ms } => {
                format!(
                    "no session for service `{service}` in {}",
                    duration(*quiet_ms)
                )
            }
        };
        let to: Vec<String> = self
            .destinations
            .iter()
            .map(|d| match d {
                Destination::Log => "log".to_owned(),
                other => format!("{} {}", other.kind(), other.target()),
            })
            .collect();
        format!(
            "{}: {what}; cooldown {}; to {}",
            self.name,
            duration(self.cooldown_ms),
            to.join(", ")
        )
    }
}

/// How evaluation and delivery run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Between two evaluations.
    pub interval_ms: i64,
    /// Delivery attempts per destination before it is recorded as failed.
    pub attempts: u32,
    /// The delay before the second attempt; doubled after each.
    pub backoff_ms: i64,
    /// The longest delay between two attempts.
    pub max_backoff_ms: i64,
    /// One webhook request or command run.
    pub timeout_ms: i64,
    /// The default lookback of the rules.
    pub lookback_ms: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            interval_ms: 5_000,
            attempts: 5,
            backoff_ms: 2_000,
            max_backoff_ms: 300_000,
            timeout_ms: 10_000,
            lookback_ms: 3_600_000,
        }
    }
}

/// A parsed, checked rules file.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// How to run them.
    pub settings: Settings,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// The rule named `name`.
    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }
}

/// The most rules a file may hold (each costs queries on every tick).
pub const MAX_RULES: usize = 200;

/// The longest duration any field takes: a year.
pub const MAX_DURATION_MS: i64 = 366 * 86_400_000;

/// `30s`, `5m`, `2h`, `1d`, `1w`, `500ms`: milliseconds (the spellings
/// every duration flag takes).
pub use crate::duration::parse_ms as parse_duration;

/// Milliseconds as the shortest exact unit (`90m`, `2h`, `500ms`).
pub fn duration(ms: i64) -> String {
    for (per, unit) in [
        (7 * 86_400_000, "w"),
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ] {
        if ms != 0 && ms % per == 0 {
            return format!("{}{unit}", ms / per);
        }
    }
    if ms == 0 {
        "0s".to_owned()
    } else {
        format!("{ms}ms")
    }
}

/// A fraction as a percentage without needless decimals.
pub(crate) fn pct(f: f64) -> String {
    let p = (f * 1000.0).round() / 10.0;
    if (p - p.round()).abs() < f64::EPSILON {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// Parse and check a rules file's text.
///
/// # Errors
/// The first thing wrong, in one line ([`RulesError`]).
pub fn parse_rules(text: &str) -> Result<RuleSet, RulesError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        RulesError::Syntax {
            line,
            message: one_line(e.message()),
        }
    })?;
    let mut settings = Settings::default();
    for (k, v) in &table {
        match k.as_str() {
            "settings" => settings = read_settings(v)?,
            "rule" => {}
            other => {
                return Err(RulesError::File(format!(
                    "unknown top-level key `{other}` (expected `[settings]` and `[[rule]]` tables)"
                )));
            }
        }
    }
    let Some(list) = table.get("rule") else {
        return Err(RulesError::File(
            "no rules: add at least one `[[rule]]` table".to_owned(),
        ));
    };
    let Value::Array(list) = list else {
        return Err(RulesError::File(
            "`rule` must be an array of tables (`[[rule]]`)".to_owned(),
        ));
    };
    if list.is_empty() {
        return Err(RulesError::File(
            "no rules: add at least one `[[rule]]` table".to_owned(),
        ));
    }
    if list.len() > MAX_RULES {
        return Err(RulesError::File(format!(
            "{} rules, more than the {MAX_RULES} a file may hold",
            list.len()
        )));
    }
    let mut rules: Vec<Rule> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let rule = read_rule(i, v, &settings)?;
        if rules.iter().any(|r| r.name == rule.name) {
            return Err(RulesError::Rule {
                rule: format!("`{}`", rule.name),
                field: "name".to_owned(),
                message: "another rule has this name".to_owned(),
            });
        }
        rules.push(rule);
    }
    Ok(RuleSet { settings, rules })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn read_settings(v: &Value) -> Result<Settings, RulesError> {
    let bad = |field: &str, message: String| RulesError::Settings {
        field: field.to_owned(),
        message,
    };
    let Value::Table(t) = v else {
        return Err(RulesError::File("`settings` must be a table".to_owned()));
    };
    let mut s = Settings::default();
    for (k, v) in t {
        let dur =
            |min: i64| -> Result<i64, RulesError> { read_duration(v, min).map_err(|m| bad(k, m)) };
        match k.as_str() {
            "interval" => s.interval_ms = dur(10)?,
            "backoff" => s.backoff_ms = dur(1)?,
            "max_backoff" => s.max_backoff_ms = dur(1)?,
            "timeout" => s.timeout_ms = dur(1)?,
            "lookback" => s.lookback_ms = dur(0)?,
            "attempts" => {
                s.attempts = match v.as_integer() {
                    Some(n) if (1..=100).contains(&n) => u32::try_from(n).unwrap_or(1),
                    _ => return Err(bad(k, "must be a whole number from 1 to 100".to_owned())),
                }
            }
            other => {
                return Err(bad(
                    other,
                    "unknown field (expected interval, attempts, backoff, max_backoff, timeout, lookback)"
                        .to_owned(),
                ));
            }
        }
    }
    if s.max_backoff_ms < s.backoff_ms {
        return Err(bad(
            "max_backoff",
            "must not be shorter than `backoff`".to_owned(),
        ));
    }
    Ok(s)
}

/// A duration field: a string such as `30m`, from `min` ms to a year.
fn read_duration(v: &Value, min: i64) -> Result<i64, String> {
    let expected = || {
        format!(
            "expected a duration such as \"30m\" (units ms, s, m, h, d, w) from {} to a year",
            duration(min)
        )
    };
    let Some(text) = v.as_str() else {
        return Err(expected());
    };
    match parse_duration(text) {
        Some(ms) if (min..=MAX_DURATION_MS).contains(&ms) => Ok(ms),
        _ => Err(expected()),
    }
}

/// The fields every rule may have, whatever its condition.
const COMMON: &[&str] = &[
    "name", "when", "cooldown", "lookback", "webhook", "command", "log",
];

const RULE_KEYS: &[&str] = &[
    "name", "when", "cooldown", "lookback", "webhook", "command", "log", "profile", "window",
    "above", "min_runs", "category", "service", "agent", "hours", "quiet",
];

fn read_rule(index: usize, v: &Value, settings: &Settings) -> Result<Rule, RulesError> {
    let mut label = format!("#{}", index + 1);
    let Value::Table(t) = v else {
        return Err(RulesError::File(format!("rule {label} is not a table")));
    };
    let err = |label: &str, field: &str, message: &str| RulesError::Rule {
        rule: label.to_owned(),
        field: field.to_owned(),
        message: message.to_owned(),
    };
    let name = match t.get("name") {
        Some(Value::String(s)) if valid_name(s) => s.clone(),
        Some(_) => {
            return Err(err(
                &label,
                "name",
                "must be 1 to 64 letters, digits, `-`, `_` or `.`",
            ));
        }
        None => return Err(err(&label, "name", "missing")),
    };
    label = format!("`{name}`");
    let label = label.as_str();
    if let Some(k) = t.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        return Err(err(label, k, "unknown field"));
    }
    let when = match t.get("when") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(err(label, "when", "must be a string")),
        None => {
            return Err(err(
                label,
                "when",
                "missing (rejection_rate, session_failed, cost_per_day, session_lost, secrets_found or no_session)",
            ));
        }
    };
    let text = |field: &str| -> Result<Option<String>, RulesError> {
        match t.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(err(label, field, "must be a non-empty string")),
        }
    };
    let required = |field: &str| -> Result<String, RulesError> {
        text(field)?.ok_or_else(|| err(label, field, &format!("missing (`{when}` needs it)")))
    };
    let number = |field: &str| -> Result<Option<f64>, RulesError> {
        match t.get(field) {
            None => Ok(None),
            Some(Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            #[allow(clippy::cast_precision_loss)] // a threshold, not an exact count
            Some(Value::Integer(n)) => Ok(Some(*n as f64)),
            Some(_) => Err(err(label, field, "must be a number")),
        }
    };
    let allowed: &[&str] = match when {
        "rejection_rate" => &["profile", "window", "above", "min_runs"],
        "session_failed" => &["category", "service"],
        "cost_per_day" => &["above", "profile", "agent"],
        "session_lost" | "secrets_found" => &[],
        "no_session" => &["service", "hours", "quiet"],
        other => {
            return Err(err(
                label,
                "when",
                &format!(
                    "unknown condition `{other}` (expected rejection_rate, session_failed, cost_per_day, session_lost, secrets_found or no_session)"
                ),
            ));
        }
    };
    if let Some(k) = t
        .keys()
        .find(|k| !COMMON.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
    {
        return Err(err(label, k, &format!("not a field of `{when}`")));
    }
    let condition = match when {
        "rejection_rate" => {
            let profile = required("profile")?;
            let window_ms = match t.get("window") {
                Some(v) => read_duration(v, 60_000).map_err(|m| err(label, "window", &m))?,
                None => return Err(err(label, "window", "missing (`rejection_rate` needs it)")),
            };
            let above = number("above")?
                .ok_or_else(|| err(label, "above", "missing (`rejection_rate` needs it)"))?;
            if !(0.0..1.0).contains(&above) {
                return Err(err(
                    label,
                    "above",
                    "must be a fraction from 0 to below 1 (0.2 is 20%)",
                ));
            }
            let min_runs = match t.get("min_runs") {
                None => 1,
                Some(Value::Integer(n)) if (1..=1_000_000).contains(n) => {
                    u64::try_from(*n).unwrap_or(1)
                }
                Some(_) => {
                    return Err(err(
                        label,
                        "min_runs",
                        "must be a whole number from 1 to 1000000",
                    ));
                }
            };
            Condition::RejectionRate {
                profile,
                window_ms,
                above,
                min_runs,
            }
        }
        "session_failed" => {
            let categories = match t.get("category") {
                None => Vec::new(),
                Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
                Some(Value::Array(a))
                    if !a.is_empty()
                        && a.iter()
                            .all(|v| v.as_str().is_some_and(|s| !s.trim().is_empty())) =>
                {
                    a.iter()
                        .filter_map(|v| v.as_str().map(ToOwned::to_owned))
                        .collect()
                }
                Some(_) => {
                    return Err(err(
                        label,
                        "category",
                        "must be a category or a non-empty list of them",
                    ));
                }
            };
            Condition::SessionFailed {
                categories,
                service: text("service")?,
            }
        }
        "cost_per_day" => {
            let above = number("above")?
                .ok_or_else(|| err(label, "above", "missing (`cost_per_day` needs it)"))?;
            if above < 0.0 {
                return Err(err(label, "above", "must be an amount of USD, 0 or more"));
            }
            Condition::CostPerDay {
                above,
                profile: text("profile")?,
                agent: text("agent")?,
            }
        }
        "session_lost" => Condition::SessionLost,
        "secrets_found" => Condition::SecretsFound,
        _ => {
            let service = required("service")?;
            let quiet_ms = match (t.get("hours"), t.get("quiet")) {
                (Some(_), Some(_)) => {
                    return Err(err(label, "quiet", "give `hours` or `quiet`, not both"));
                }
                (Some(Value::Integer(h)), None) if (1..=8784).contains(h) => h * 3_600_000,
                (Some(_), None) => {
                    return Err(err(
                        label,
                        "hours",
                        "must be a whole number of hours from 1 to 8784 (a year)",
                    ));
                }
                (None, Some(v)) => read_duration(v, 60_000).map_err(|m| err(label, "quiet", &m))?,
                (None, None) => {
                    return Err(err(
                        label,
                        "hours",
                        "missing (`no_session` needs `hours` or `quiet`)",
                    ));
                }
            };
            Condition::NoSession { service, quiet_ms }
        }
    };
    let cooldown_ms = match t.get("cooldown") {
        None => 0,
        Some(v) => read_duration(v, 0).map_err(|m| err(label, "cooldown", &m))?,
    };
    let lookback_ms = match t.get("lookback") {
        None => settings.lookback_ms,
        Some(v) => read_duration(v, 0).map_err(|m| err(label, "lookback", &m))?,
    };
    let mut destinations = Vec::new();
    match t.get("webhook") {
        None => {}
        Some(Value::Array(list)) if !list.is_empty() => {
            for (i, w) in list.iter().enumerate() {
                destinations.push(Destination::Webhook(read_webhook(w).map_err(
                    |(f, m)| err(label, &format!("webhook[{i}]{}", field_suffix(&f)), &m),
                )?));
            }
        }
        Some(w @ Value::Table(_)) => destinations
            .push(Destination::Webhook(read_webhook(w).map_err(
                |(f, m)| err(label, &format!("webhook{}", field_suffix(&f)), &m),
            )?)),
        Some(_) => {
            return Err(err(
                label,
                "webhook",
                "must be a table `{ url = \"https://…\" }` or a list of them",
            ));
        }
    }
    match t.get("command") {
        None => {}
        Some(Value::Array(a))
            if !a.is_empty()
                && a.iter().all(|v| v.as_str().is_some())
                && a[0].as_str().is_some_and(|s| !s.is_empty()) =>
        {
            destinations.push(Destination::Command(
                a.iter()
                    .filter_map(|v| v.as_str().map(ToOwned::to_owned))
                    .collect(),
            ));
        }
        Some(_) => {
            return Err(err(
                label,
                "command",
                "must be a list of strings, the program first: [\"notify\", \"--to\", \"ops\"] (run without a shell)",
            ));
        }
    }
    match t.get("log") {
        None | Some(Value::Boolean(false)) => {}
        Some(Value::Boolean(true)) => destinations.push(Destination::Log),
        Some(_) => return Err(err(label, "log", "must be true or false")),
    }
    if destinations.is_empty() {
        return Err(err(
            label,
            "webhook",
            "no destination: give `webhook`, `command` or `log = true`",
        ));
    }
    Ok(Rule {
        name,
        condition,
        cooldown_ms,
        lookback_ms,
        destinations,
    })
}

fn field_suffix(f: &str) -> String {
    if f.is_empty() {
        String::new()
    } else {
        format!(".{f}")
    }
}

fn valid_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A webhook table; the error is (field within it, message).
fn read_webhook(v: &Value) -> Result<Webhook, (String, String)> {
    let Value::Table(t) = v else {
        return Err((
            String::new(),
            "must be a table `{ url = \"https://…\" }`".to_owned(),
        ));
    };
    if let Some(k) = t
        .keys()
        .find(|k| !["url", "format", "headers"].contains(&k.as_str()))
    {
        return Err((
            k.clone(),
            "unknown field (expected url, format, headers)".to_owned(),
        ));
    }
    let url = match t.get("url") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(("url".to_owned(), "must be a string".to_owned())),
        None => return Err(("url".to_owned(), "missing".to_owned())),
    };
    // Checked without echoing it: it may hold credentials.
    if let Some(why) = url_problem(&url) {
        return Err(("url".to_owned(), format!("{why} ({})", redact_url(&url))));
    }
    let format = match t.get("format").map(Value::as_str) {
        None | Some(Some("json")) => Format::Json,
        Some(Some("slack")) => Format::Slack,
        Some(_) => {
            return Err((
                "format".to_owned(),
                "must be \"json\" or \"slack\"".to_owned(),
            ));
        }
    };
    let mut headers = Vec::new();
    match t.get("headers") {
        None => {}
        Some(Value::Table(h)) => {
            for (k, v) in h {
                let ok_name = !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
                let Some(value) = v.as_str().filter(|s| {
                    s.bytes()
                        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80)
                }) else {
                    return Err((
                        format!("headers.{k}"),
                        "must be a string without control characters".to_owned(),
                    ));
                };
                if !ok_name {
                    return Err((format!("headers.{k}"), "not a valid header name".to_owned()));
                }
                headers.push((k.clone(), value.to_owned()));
            }
        }
        Some(_) => {
            return Err((
                "headers".to_owned(),
                "must be a table of names to values".to_owned(),
            ));
        }
    }
    // One credential per request (the egress policy refuses two at send
    // time): said when the rules are read, not at the first firing.
    if has_userinfo(&url)
        && headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        return Err((
            "headers.Authorization".to_owned(),
            format!(
                "the URL carries credentials too ({}): give one of the two",
                redact_url(&url)
            ),
        ));
    }
    Ok(Webhook {
        url,
        format,
        headers,
    })
}

/// Whether `url`'s authority holds user info (`user:pass@host`).
fn has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    authority.contains('@')
}
