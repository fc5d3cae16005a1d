//! Alert rules: what to watch in the store, when it fires, where it goes.
//!
//! A rules file (TOML, [`parse_rules`]) names rules; each has a
//! [`Condition`], a cooldown and one or more [`Destination`]s. The edges
//! measure what a condition needs from the store ([`Fact`]s) and ask
//! [`evaluate`] which firings that makes, given the rule's last firing and
//! the time now; this module reads no clock and no store.
//!
//! - [`rules`]: the file's shape and its errors (one line each, naming the
//!   rule and the field);
//! - [`decide`]: facts to firings, the cooldown, the dedup key;
//! - [`deliver`]: what a destination is sent (JSON, Slack) and the retry
//!   delays;
//! - `webhook_url`: a webhook URL as it may be printed ([`redact_url`]),
//!   and whether a URL can be a webhook.
//!
//! ```
//! use agentshape_core::alerts::{Fact, evaluate, parse_rules};
//!
//! let set = parse_rules(r#"
//! [[rule]]
//! name = "lost"
//! when = "session_lost"
//! log = true
//! "#).unwrap();
//! let fact = Fact::Lost { session_id: "s1".into(), lost_at_ms: 1_000, heartbeat_at: "…".into() };
//! let fired = evaluate(&set.rules[0], &[fact], None, 2_000);
//! assert_eq!(fired[0].key, "lost:s1");
//! ```

pub mod decide;
pub mod deliver;
pub mod rules;
#[cfg(test)]
mod tests;
mod webhook_url;

pub use decide::{Fact, Firing, LastFiring, evaluate};
pub use deliver::{Payload, redact_url, retry_delay_ms, slack_body};
pub use rules::{
    Condition, Destination, Format, Rule, RuleSet, RulesError, Settings, Webhook, parse_rules,
};
