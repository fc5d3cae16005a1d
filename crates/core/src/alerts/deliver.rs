//! What a destination is sent and how long to wait before trying again. A
//! webhook URL as it may be printed is `webhook_url`'s (Note \[Webhook
//! credentials\]); [`redact_url`] is re-exported here.

use serde::Serialize;
use serde_json::Value;

use super::rules::Settings;
pub use super::webhook_url::redact_url;

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
