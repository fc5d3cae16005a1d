//! What a destination is sent, how long to wait before trying again, and
//! a webhook URL as it may be printed.
//!
//! Note \[Webhook credentials\]: a webhook URL often is a credential
//! (Slack's `hooks.slack.com/services/T…/B…/x…`, a `?token=`, a
//! `user:pass@`), and so are header values. Nothing agentshape prints,
//! stores or serves holds them: messages, `alerts list`, the dashboard and
//! the stored delivery rows name a webhook by [`redact_url`]'s
//! `scheme://host[:port]/path` only, with the path's token-like segments
//! hidden, and the HTTP client's errors are formatted without their URL.

use serde::Serialize;
use serde_json::Value;

use super::rules::Settings;

/// The JSON body of a webhook (format `json`) and a command's stdin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Payload {
    /// The stored firing's id.
    pub id: i64,
    /// The rule's name.
    pub rule: String,
    /// Its condition (`when`).
    pub condition: String,
    /// The dedup key (Note \[Firing keys\]).
    pub key: String,
    /// One line saying what happened.
    pub summary: String,
    /// The session it is about.
    pub session_id: Option<String>,
    /// When its event happened (RFC 3339).
    pub event_at: String,
    /// When it fired (RFC 3339).
    pub fired_at: String,
    /// The measured facts.
    pub details: Value,
}

/// The Slack-compatible body: `{"text": "…"}` (a one-line message: the
/// rule, then what happened).
pub fn slack_body(p: &Payload) -> Value {
    serde_json::json!({ "text": format!("agentshape alert `{}`: {}", p.rule, p.summary) })
}

/// The wait before attempt `attempt + 1`, after `attempt` failed ones
/// (1-based): `backoff`, doubled each time, at most `max_backoff`.
pub fn retry_delay_ms(settings: &Settings, attempt: u32) -> i64 {
    let shift = attempt.saturating_sub(1).min(40);
    settings
        .backoff_ms
        .saturating_mul(1_i64 << shift)
        .min(settings.max_backoff_ms)
}

/// `url` without what may be secret (Note \[Webhook credentials\]):
/// `scheme://host[:port]/path`, no userinfo, query or fragment, and a path
/// segment that looks like a token as `***`. Anything that is not such a
/// URL is shown as `(unparsable URL)`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(unparsable URL)".to_owned();
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return "(unparsable URL)".to_owned();
    }
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let path: Vec<&str> = path
        .split('/')
        .map(|seg| if token_like(seg) { "***" } else { seg })
        .collect();
    format!("{}://{host}{}", scheme.to_ascii_lowercase(), path.join("/"))
}

/// A path segment that looks like a secret rather than a name: some
/// services put the token in the path (Slack's
/// `/services/T…/B…/<24 characters>`, Discord's `/api/webhooks/<id>/<68
/// characters>`). Long (24 characters or more), or 16 or more mixing
/// letters and digits.
fn token_like(seg: &str) -> bool {
    let n = seg.chars().count();
    let mixed =
        seg.chars().any(|c| c.is_ascii_digit()) && seg.chars().any(|c| c.is_ascii_alphabetic());
    n >= 24 || (n >= 16 && mixed)
}

/// Why `url` cannot be a webhook, or `None`: it must be `http` or `https`
/// with a host. Never says the URL itself.
pub(crate) fn url_problem(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("must be an http:// or https:// URL");
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some("must be an http:// or https:// URL");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return Some("has no host");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("holds a space or a control character");
    }
    None
}
