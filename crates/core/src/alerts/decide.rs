//! Facts to firings: whether a rule fires now, under which dedup key, and
//! what its cooldown lets through.
//!
//! Note \[Firing keys\]: every firing has a key, unique per rule in the
//! store, so the same firing is never stored (nor sent) twice, whoever
//! evaluates and however often: two processes watching one store, or one
//! restarted. A key names the event itself where there is one (`session:`
//! and the session id for a failure, `lost:`, `secrets:`; `quiet:` and the
//! time of the service's last session; `cost:` and the UTC day), and for
//! the rejection rate, which has no event, the bucket of time the
//! evaluation falls in (the cooldown's length, at least a minute), so two
//! evaluators in the same bucket make one firing.
//!
//! Note \[Cooldown\]: each firing has the time of its event (`event_at`: a
//! session's end, the moment its heartbeat went stale, the evaluation for
//! a rate or a cost). A candidate fires when the rule has not fired yet or
//! its event is at least `cooldown` after the last firing's event;
//! candidates are taken oldest first, each firing moving the mark. So a
//! burst of failures within the cooldown makes one firing, and the next
//! after it makes the next one. The mark is read from the store, so a
//! restart keeps it. With no cooldown every distinct event fires once (its
//! key). Events older than the rule's `lookback` when seen are not
//! alerted: a rule added to a store with history does not replay it.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::rules::{Condition, Rule, duration, pct};

/// What the store measured for a condition (the edges query it; see
/// `agentshape_store::alerts`).
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    /// `rejection_rate`: the runs with a verdict in the window ending now.
    Rate {
        /// Runs with a verdict.
        runs: u64,
        /// Of which invalid or with nothing structured.
        rejected: u64,
        /// The newest of the rejected sessions, for a link.
        example: Option<String>,
    },
    /// `session_failed`: one failed session.
    Failed {
        /// Its id.
        session_id: String,
        /// Its error category.
        category: String,
        /// When it ended (ms since the epoch).
        ended_at_ms: i64,
        /// Its profile.
        profile: Option<String>,
        /// Its error text (cut by the store).
        error: Option<String>,
    },
    /// `cost_per_day`: today's sessions.
    Cost {
        /// The UTC day, `2026-01-31`.
        day: String,
        /// Their summed cost.
        total: f64,
        /// How many had a cost.
        sessions: u64,
    },
    /// `session_lost`: one lost session.
    Lost {
        /// Its id.
        session_id: String,
        /// When it became lost: its last heartbeat plus the store's
        /// `LOST_AFTER_MS` (ms since the epoch).
        lost_at_ms: i64,
        /// Its last heartbeat (RFC 3339), for the message.
        heartbeat_at: String,
    },
    /// `secrets_found`: a session's masked secrets.
    Secrets {
        /// The session.
        session_id: String,
        /// How many were masked.
        count: u64,
        /// Which rules found them, sorted.
        rules: Vec<String>,
        /// When the newest was recorded (ms since the epoch).
        last_ms: i64,
    },
    /// `no_session`: the service's newest session.
    Quiet {
        /// Its start (ms since the epoch); `None`: the service has none.
        last_ms: Option<i64>,
        /// That session.
        last_session: Option<String>,
        /// When the service has none: the start of the store's first
        /// session (the quiet began when the store did); `None`: the store
        /// has none, so nothing is quiet yet.
        first_ms: Option<i64>,
    },
}

/// The rule's latest stored firing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastFiring {
    /// Its event time (ms since the epoch).
    pub event_at_ms: i64,
}

/// A firing to store and send.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The rule's name.
    pub rule: String,
    /// The condition (`when`).
    pub condition: &'static str,
    /// Unique per rule (Note \[Firing keys\]).
    pub key: String,
    /// When its event happened (ms since the epoch; Note \[Cooldown\]).
    pub event_at_ms: i64,
    /// The session it is about, if one.
    pub session_id: Option<String>,
    /// One line saying what happened.
    pub summary: String,
    /// The measured facts, as JSON.
    pub details: Value,
}

/// The most firings one rule makes in one evaluation.
pub const MAX_FIRINGS_PER_TICK: usize = 100;

/// The firings `rule` makes from `facts` at `now_ms`, oldest event first,
/// after its cooldown and lookback (Note \[Cooldown\]). Facts of another
/// condition are ignored.
pub fn evaluate(rule: &Rule, facts: &[Fact], last: Option<LastFiring>, now_ms: i64) -> Vec<Firing> {
    let mut candidates: Vec<Firing> = facts
        .iter()
        .filter_map(|f| candidate(rule, f, now_ms))
        .filter(|c| {
            !is_event(&rule.condition) || c.event_at_ms >= now_ms.saturating_sub(rule.lookback_ms)
        })
        .collect();
    candidates.sort_by(|a, b| (a.event_at_ms, &a.key).cmp(&(b.event_at_ms, &b.key)));
    let mut mark = last.map(|l| l.event_at_ms);
    let cooldown = cooldown_ms(rule);
    let mut out = Vec::new();
    for c in candidates {
        let ok = match mark {
            None => true,
            Some(_) if cooldown == 0 => true,
            Some(m) => c.event_at_ms >= m.saturating_add(cooldown),
        };
        if ok {
            mark = Some(c.event_at_ms.max(mark.unwrap_or(i64::MIN)));
            out.push(c);
            if out.len() == MAX_FIRINGS_PER_TICK {
                break;
            }
        }
    }
    out
}

/// The cooldown in force: the rule's; for a rejection rate without one,
/// its window (a rate has no event of its own: it would otherwise fire
/// again every minute while it holds).
fn cooldown_ms(rule: &Rule) -> i64 {
    match &rule.condition {
        Condition::RejectionRate { window_ms, .. } if rule.cooldown_ms == 0 => *window_ms,
        _ => rule.cooldown_ms,
    }
}

/// Whether the condition is about events that happened (and the lookback
/// applies), rather than a state measured now: a service quiet for days is
/// still quiet when the rule is first read.
fn is_event(c: &Condition) -> bool {
    matches!(
        c,
        Condition::SessionFailed { .. } | Condition::SessionLost | Condition::SecretsFound
    )
}

/// The firing one fact makes, before the cooldown, or none.
fn candidate(rule: &Rule, fact: &Fact, now_ms: i64) -> Option<Firing> {
    let firing = |key: String, at: i64, session: Option<&String>, summary: String, details| {
        Some(Firing {
            rule: rule.name.clone(),
            condition: rule.condition.name(),
            key,
            event_at_ms: at,
            session_id: session.cloned(),
            summary,
            details,
        })
    };
    match (&rule.condition, fact) {
        (
            Condition::RejectionRate {
                profile,
                window_ms,
                above,
                min_runs,
            },
            Fact::Rate {
                runs,
                rejected,
                example,
            },
        ) => {
            if *runs < *min_runs || *runs == 0 {
                return None;
            }
            let rate = *rejected as f64 / *runs as f64;
            if rate <= *above {
                return None;
            }
            let bucket = cooldown_ms(rule).max(60_000);
            firing(
                format!("rate:{}", now_ms.div_euclid(bucket)),
                now_ms,
                example.as_ref(),
                format!(
                    "profile `{profile}`: {rejected} of {runs} runs rejected ({}%) in the last {}, above {}%",
                    pct(rate),
                    duration(*window_ms),
                    pct(*above)
                ),
                json!({"profile": profile, "runs": runs, "rejected": rejected, "rate": rate,
                       "above": above, "window": duration(*window_ms)}),
            )
        }
        (
            Condition::SessionFailed {
                categories,
                service,
            },
            Fact::Failed {
                session_id,
                category,
                ended_at_ms,
                profile,
                error,
            },
        ) => {
            if !categories.is_empty() && !categories.contains(category) {
                return None;
            }
            let mut summary = format!("session `{session_id}` failed: {category}");
            if let Some(s) = service {
                let _ = write!(summary, " (service `{s}`)");
            }
            firing(
                format!("session:{session_id}"),
                *ended_at_ms,
                Some(session_id),
                summary,
                json!({"session_id": session_id, "category": category, "service": service,
                       "profile": profile, "error": error}),
            )
        }
        (
            Condition::CostPerDay {
                above,
                profile,
                agent,
            },
            Fact::Cost {
                day,
                total,
                sessions,
            },
        ) => {
            if *total <= *above {
                return None;
            }
            let mut scope = String::new();
            if let Some(p) = profile {
                let _ = write!(scope, " of profile `{p}`");
            }
            if let Some(a) = agent {
                let _ = write!(scope, " of agent `{a}`");
            }
            firing(
                format!("cost:{day}"),
                now_ms,
                None,
                format!(
                    "cost on {day}{scope}: ${total:.2} over {sessions} sessions, above ${above:.2}"
                ),
                json!({"day": day, "total_usd": total, "sessions": sessions, "above_usd": above,
                       "profile": profile, "agent": agent}),
            )
        }
        (
            Condition::SessionLost,
            Fact::Lost {
                session_id,
                lost_at_ms,
                heartbeat_at,
            },
        ) => firing(
            format!("lost:{session_id}"),
            *lost_at_ms,
            Some(session_id),
            format!("session `{session_id}` lost: no heartbeat since {heartbeat_at}"),
            json!({"session_id": session_id, "heartbeat_at": heartbeat_at}),
        ),
        (
            Condition::SecretsFound,
            Fact::Secrets {
                session_id,
                count,
                rules,
                last_ms,
            },
        ) => {
            if *count == 0 {
                return None;
            }
            firing(
                format!("secrets:{session_id}"),
                *last_ms,
                Some(session_id),
                format!(
                    "session `{session_id}`: {count} secret{} masked ({}); rotate them",
                    if *count == 1 { "" } else { "s" },
                    rules.join(", ")
                ),
                json!({"session_id": session_id, "count": count, "rules": rules}),
            )
        }
        (
            Condition::NoSession { service, quiet_ms },
            Fact::Quiet {
                last_ms,
                last_session,
                first_ms,
            },
        ) => match last_ms {
            Some(t) if now_ms.saturating_sub(*t) >= *quiet_ms => firing(
                format!("quiet:{t}"),
                t.saturating_add(*quiet_ms),
                last_session.as_ref(),
                format!(
                    "service `{service}`: no session for {} (the last one started {} ago)",
                    duration(*quiet_ms),
                    duration(round_minutes(now_ms.saturating_sub(*t)))
                ),
                json!({"service": service, "quiet": duration(*quiet_ms),
                       "last_session": last_session}),
            ),
            Some(_) => None,
            None => match first_ms {
                Some(first) if now_ms.saturating_sub(*first) >= *quiet_ms => firing(
                    "quiet:never".to_owned(),
                    first.saturating_add(*quiet_ms),
                    None,
                    format!(
                        "service `{service}`: no session has checked it (sessions have been stored for {})",
                        duration(round_minutes(now_ms.saturating_sub(*first)))
                    ),
                    json!({"service": service, "quiet": duration(*quiet_ms), "last_session": null}),
                ),
                _ => None,
            },
        },
        _ => None,
    }
}

/// Rounded down to whole minutes (at least one), for a readable age.
fn round_minutes(ms: i64) -> i64 {
    (ms / 60_000).max(1) * 60_000
}
