//! Alerts in the store (issue 31): the facts each condition needs, the
//! firings (`alert_firings`) and their deliveries (`alert_deliveries`).
//!
//! Written once for both backends over the copy's row interface ([`Rows`]:
//! `?` placeholders, cells), as the dashboard's queries are (Note \[Queries
//! on both backends\] in `query`); the dashboard reads the firings through
//! [`SourceRows`].
//!
//! Note \[Alert state in the store\]: everything an evaluator or a
//! delivery loop knows lives in these two tables, so a restart, or a second
//! process on the same store, picks up where the last one stopped:
//! - a firing is inserted with `ON CONFLICT (rule, dedup_key) DO NOTHING`
//!   (core's Note \[Firing keys\]): inserted twice, stored once; its
//!   deliveries (one per destination, `pending`) are inserted in the same
//!   transaction, and only for a firing that has none, so a rules file that
//!   gained a destination does not resend old firings;
//! - the cooldown's mark is the rule's latest `event_at` ([`last_event_ms`]);
//! - a delivery is claimed before it is tried ([`claim`]): its `next_at`
//!   is moved past the attempt's deadline with a compare-and-set on the old
//!   value, and its `attempts` counted, so two loops never try the same
//!   one at once and a process killed mid-attempt leaves it to be tried
//!   again once the claim lapses (at least once: a webhook that answered
//!   just before the kill is sent again; a delivered one never is);
//! - `attempts` reaching the limit makes it `failed`, with its last error.

use serde::Serialize;
use serde_json::Value;

use agentshape_core::alerts::{Condition, Fact, Firing, Payload};

use crate::error::{Error, Result};
use crate::query::Source;
use crate::rows::{Cell, Copyable, Rows};
use crate::time;

/// `pending`: not yet delivered, more attempts to come.
pub const PENDING: &str = "pending";
/// `delivered`: the destination took it.
pub const DELIVERED: &str = "delivered";
/// `failed`: every attempt failed.
pub const FAILED: &str = "failed";

/// The longest error text a delivery keeps.
pub const MAX_ERROR_CHARS: usize = 300;

/// The most failed sessions (lost sessions, sessions with secrets) one
/// condition reads per evaluation.
pub const MAX_FACTS: i64 = 500;

/// Sessions before a quiet window read newest first for a service's last
/// check, before its own checks are (Note \[Quiet services\]).
pub const QUIET_SCAN: i64 = 10_000;

/// The dashboard's queries as [`Rows`] (reads only).
pub struct SourceRows<'a>(pub &'a dyn Source);

impl Rows for SourceRows<'_> {
    fn read(&self, sql: &str, params: &[Cell]) -> Result<Vec<Vec<Cell>>> {
        // `?` as `?N`, which both backends' dashboard readers take.
        let mut numbered = String::with_capacity(sql.len() + 8);
        let mut n = 0;
        for ch in sql.chars() {
            numbered.push(ch);
            if ch == '?' {
                n += 1;
                numbered.push_str(&n.to_string());
            }
        }
        self.0
            .cells(&numbered, params, &|| "reading the alerts".to_owned())
    }

    fn write_all(&mut self, _: &[(String, Vec<Cell>)]) -> Result<Vec<u64>> {
        Err(Error::Unsupported {
            what: "writing through a dashboard reader".to_owned(),
        })
    }
}

fn bad(what: &str, c: &Cell) -> Error {
    Error::Unexpected {
        what: format!("{what}: unexpected value {c:?}"),
    }
}

fn at(r: &[Cell], i: usize) -> &Cell {
    r.get(i).unwrap_or(&Cell::Null)
}

fn text(c: &Cell) -> Result<String> {
    match c {
        Cell::Text(s) => Ok(s.clone()),
        other => Err(bad("a text column", other)),
    }
}

fn opt_text(c: &Cell) -> Result<Option<String>> {
    match c {
        Cell::Null => Ok(None),
        other => text(other).map(Some),
    }
}

fn int(c: &Cell) -> Result<i64> {
    match c {
        Cell::Int(v) => Ok(*v),
        Cell::Null => Ok(0),
        other => Err(bad("an integer column", other)),
    }
}

fn real(c: &Cell) -> Result<f64> {
    match c {
        Cell::Real(v) => Ok(*v),
        Cell::Int(v) => Ok(*v as f64),
        Cell::Null => Ok(0.0),
        other @ Cell::Text(_) => Err(bad("a real column", other)),
    }
}

fn count(c: &Cell) -> Result<u64> {
    Ok(u64::try_from(int(c)?).unwrap_or(0))
}

fn ms(c: &Cell) -> Result<Option<i64>> {
    Ok(opt_text(c)?.as_deref().and_then(time::parse_ms))
}

fn t(s: &str) -> Cell {
    Cell::Text(s.to_owned())
}

/// Whether the store has the alert tables (a read-only store from an
/// older build may not).
pub fn has_alerts(rows: &dyn Rows) -> bool {
    rows.read("SELECT id FROM alert_firings LIMIT 1", &[])
        .is_ok()
}

/// What an evaluator remembers between ticks (Note \[Quiet services\]).
#[derive(Debug, Default, Clone)]
pub struct Memo {
    /// Per quiet service: its last session (start, id), or none ever.
    quiet: std::collections::HashMap<String, Option<(i64, String)>>,
}

/// The facts `condition` needs at `now_ms`, from events at or after
/// `since_ms` (the rule's lookback; core filters again).
///
/// # Errors
/// When the store cannot be read.
pub fn facts(
    rows: &dyn Rows,
    condition: &Condition,
    now_ms: i64,
    since_ms: i64,
) -> Result<Vec<Fact>> {
    facts_with(rows, condition, now_ms, since_ms, &mut Memo::default())
}

/// [`facts`], remembering in `memo` what stays true between ticks.
///
/// # Errors
/// When the store cannot be read.
pub fn facts_with(
    rows: &dyn Rows,
    condition: &Condition,
    now_ms: i64,
    since_ms: i64,
    memo: &mut Memo,
) -> Result<Vec<Fact>> {
    let since = time::format_ms(since_ms);
    match condition {
        Condition::RejectionRate {
            profile, window_ms, ..
        } => {
            let from = time::format_ms(now_ms.saturating_sub(*window_ms));
            let r = rows.read(
                "SELECT COUNT(*),
                        SUM(CASE WHEN outcome IN ('invalid', 'none') THEN 1 ELSE 0 END),
                        MAX(CASE WHEN outcome IN ('invalid', 'none') THEN id END)
                 FROM sessions
                 WHERE profile = ? AND started_at >= ? AND outcome IS NOT NULL",
                &[t(profile), Cell::Text(from)],
            )?;
            let Some(r) = r.first() else {
                return Ok(Vec::new());
            };
            Ok(vec![Fact::Rate {
                runs: count(at(r, 0))?,
                rejected: count(at(r, 1))?,
                example: opt_text(at(r, 2))?,
            }])
        }
        Condition::SessionFailed { service, .. } => {
            let (filter, mut args) = match service {
                Some(s) => (
                    " AND (EXISTS (SELECT 1 FROM services_checked c
                                   WHERE c.session_id = s.id AND c.name = ?)
                        OR EXISTS (SELECT 1 FROM events e
                                   WHERE e.session_id = s.id AND e.service = ?))",
                    vec![t(s), t(s)],
                ),
                None => ("", Vec::new()),
            };
            let mut all = vec![Cell::Text(since)];
            all.append(&mut args);
            all.push(Cell::Int(MAX_FACTS));
            let found = rows.read(
                &format!(
                    "SELECT s.id, s.error_category, s.ended_at, s.profile, substr(s.error, 1, 300)
                     FROM sessions s
                     WHERE s.error_category IS NOT NULL AND s.ended_at >= ?{filter}
                     ORDER BY s.ended_at LIMIT ?"
                ),
                &all,
            )?;
            found
                .iter()
                .filter_map(|r| match ms(at(r, 2)) {
                    Ok(Some(ended)) => Some((r, ended)),
                    _ => None,
                })
                .map(|(r, ended_at_ms)| {
                    Ok(Fact::Failed {
                        session_id: text(at(r, 0))?,
                        category: text(at(r, 1))?,
                        ended_at_ms,
                        profile: opt_text(at(r, 3))?,
                        error: opt_text(at(r, 4))?,
                    })
                })
                .collect()
        }
        Condition::CostPerDay { profile, agent, .. } => {
            let day = time::format_ms(now_ms)
                .get(..10)
                .unwrap_or_default()
                .to_owned();
            let next = time::format_ms(
                time::parse_ms(&format!("{day}T00:00:00Z")).unwrap_or(now_ms) + 86_400_000,
            );
            let mut sql = "SELECT COALESCE(SUM(cost_usd), 0.0), COUNT(cost_usd) FROM sessions
                           WHERE started_at >= ? AND started_at < ?"
                .to_owned();
            let mut args = vec![Cell::Text(format!("{day}T00:00:00.000Z")), Cell::Text(next)];
            if let Some(p) = profile {
                sql.push_str(" AND profile = ?");
                args.push(t(p));
            }
            if let Some(a) = agent {
                sql.push_str(" AND agent = ?");
                args.push(t(a));
            }
            let r = rows.read(&sql, &args)?;
            let Some(r) = r.first() else {
                return Ok(Vec::new());
            };
            Ok(vec![Fact::Cost {
                day,
                total: real(at(r, 0))?,
                sessions: count(at(r, 1))?,
            }])
        }
        Condition::SessionLost => {
            // Only sessions that were beating (a `run`'s): a placeholder
            // row (a sub-agent's parent not imported yet) never beat.
            let cutoff = time::format_ms(now_ms.saturating_sub(crate::LOST_AFTER_MS));
            let from = time::format_ms(since_ms.saturating_sub(crate::LOST_AFTER_MS));
            let found = rows.read(
                "SELECT id, heartbeat_at FROM sessions
                 WHERE status = 'running' AND heartbeat_at IS NOT NULL
                   AND heartbeat_at < ? AND heartbeat_at >= ?
                 ORDER BY heartbeat_at LIMIT ?",
                &[Cell::Text(cutoff), Cell::Text(from), Cell::Int(MAX_FACTS)],
            )?;
            found
                .iter()
                .filter_map(|r| {
                    let hb = opt_text(at(r, 1)).ok()??;
                    let ms = time::parse_ms(&hb)?;
                    Some((r, hb, ms))
                })
                .map(|(r, heartbeat_at, hb)| {
                    Ok(Fact::Lost {
                        session_id: text(at(r, 0))?,
                        lost_at_ms: hb.saturating_add(crate::LOST_AFTER_MS),
                        heartbeat_at,
                    })
                })
                .collect()
        }
        Condition::SecretsFound => {
            let found = rows.read(
                "SELECT session_id, rule, COUNT(*), MAX(created_at) FROM secrets_found
                 WHERE created_at >= ? GROUP BY session_id, rule ORDER BY session_id, rule
                 LIMIT ?",
                &[Cell::Text(since), Cell::Int(MAX_FACTS)],
            )?;
            let mut out: Vec<Fact> = Vec::new();
            for r in &found {
                let id = text(at(r, 0))?;
                let rule = text(at(r, 1))?;
                let n = count(at(r, 2))?;
                let last = ms(at(r, 3))?.unwrap_or(now_ms);
                match out.last_mut() {
                    Some(Fact::Secrets {
                        session_id,
                        count,
                        rules,
                        last_ms,
                    }) if *session_id == id => {
                        *count += n;
                        rules.push(rule);
                        *last_ms = (*last_ms).max(last);
                    }
                    _ => out.push(Fact::Secrets {
                        session_id: id,
                        count: n,
                        rules: vec![rule],
                        last_ms: last,
                    }),
                }
            }
            Ok(out)
        }
        Condition::NoSession { service, quiet_ms } => {
            // Note [Quiet services]: most evaluations find a recent
            // session: the sessions of the quiet window are read newest
            // first, stopping at the first that checked the service
            // (bounded by the window). A quiet service needs its last
            // session (the firing's key), read through the service's
            // checks (`services_checked_name`), and it stays the same
            // while the service stays quiet (a newer one would be in the
            // window), so it is remembered until the window finds one.
            let window = time::format_ms(now_ms.saturating_sub(*quiet_ms));
            let recent = rows.read(
                "SELECT s.id, s.started_at FROM sessions s
                 WHERE s.started_at >= ? AND EXISTS (SELECT 1 FROM services_checked c
                                                     WHERE c.session_id = s.id AND c.name = ?)
                 ORDER BY s.started_at DESC LIMIT 1",
                &[Cell::Text(window.clone()), t(service)],
            )?;
            let last = if let Some(r) = recent.first() {
                memo.quiet.remove(service);
                Some((
                    time::parse_ms(&text(at(r, 1))?).unwrap_or(now_ms),
                    text(at(r, 0))?,
                ))
            } else if let Some(known) = memo.quiet.get(service) {
                known.clone()
            } else {
                // The sessions just before the window first (a service that
                // went quiet lately), then the service's own checks (one
                // rarely checked): each bounded, whichever finds it.
                let mut r = rows.read(
                    "SELECT s.id, s.started_at
                     FROM (SELECT id, started_at FROM sessions WHERE started_at < ?
                           ORDER BY started_at DESC LIMIT ?) s
                     WHERE EXISTS (SELECT 1 FROM services_checked c
                                   WHERE c.session_id = s.id AND c.name = ?)
                     ORDER BY s.started_at DESC LIMIT 1",
                    &[
                        Cell::Text(window.clone()),
                        Cell::Int(QUIET_SCAN),
                        t(service),
                    ],
                )?;
                if r.is_empty() {
                    r = rows.read(
                        "SELECT s.id, s.started_at FROM services_checked c
                         JOIN sessions s ON s.id = c.session_id
                         WHERE c.name = ? ORDER BY s.started_at DESC LIMIT 1",
                        &[t(service)],
                    )?;
                }
                let found = match r.first() {
                    Some(r) => Some((
                        time::parse_ms(&text(at(r, 1))?).unwrap_or(now_ms),
                        text(at(r, 0))?,
                    )),
                    None => None,
                };
                memo.quiet.insert(service.clone(), found.clone());
                found
            };
            // Never checked: quiet since the store's first session.
            let first_ms = if last.is_none() {
                let r = rows.read("SELECT MIN(started_at) FROM sessions", &[])?;
                r.first().map(|r| ms(at(r, 0))).transpose()?.flatten()
            } else {
                None
            };
            Ok(vec![Fact::Quiet {
                last_ms: last.as_ref().map(|(ms, _)| *ms),
                last_session: last.map(|(_, id)| id),
                first_ms,
            }])
        }
    }
}

/// The event time of `rule`'s latest firing (the cooldown's mark).
///
/// # Errors
/// When the store cannot be read.
pub fn last_event_ms(rows: &dyn Rows, rule: &str) -> Result<Option<i64>> {
    let r = rows.read(
        "SELECT event_at FROM alert_firings WHERE rule = ? ORDER BY event_at DESC LIMIT 1",
        &[t(rule)],
    )?;
    match r.first() {
        Some(r) => ms(at(r, 0)),
        None => Ok(None),
    }
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

/// Text through the store's masker (Note \[Store door\] in `secrets`).
fn masked(store: &dyn Copyable, text: &str) -> String {
    match store.masker() {
        Some(m) => m.mask_json_text(text).text.into_owned(),
        None => text.to_owned(),
    }
}

/// Store a firing and its deliveries (`(destination id, target)`, each
/// `pending`, due at once), in one transaction (Note \[Alert state in the
/// store\]). `Some(id)` when it is new; `None` when the rule already has a
/// firing with its key.
///
/// # Errors
/// When the store cannot be written.
pub fn record(
    store: &mut dyn Copyable,
    firing: &Firing,
    fired_at_ms: i64,
    destinations: &[(String, String)],
) -> Result<Option<i64>> {
    let fired_at = time::format_ms(fired_at_ms);
    let summary = masked(store, &firing.summary);
    let details = masked(store, &firing.details.to_string());
    let mut stmts = vec![(
        "INSERT INTO alert_firings (rule, dedup_key, condition, session_id, summary, details,
             event_at, fired_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (rule, dedup_key) DO NOTHING"
            .to_owned(),
        vec![
            t(&firing.rule),
            t(&firing.key),
            t(firing.condition),
            firing.session_id.as_deref().map_or(Cell::Null, t),
            Cell::Text(summary),
            Cell::Text(details),
            Cell::Text(time::format_ms(firing.event_at_ms)),
            Cell::Text(fired_at.clone()),
        ],
    )];
    for (id, target) in destinations {
        stmts.push((
            "INSERT INTO alert_deliveries (firing_id, destination, target, state, attempts, next_at)
             SELECT f.id, ?, ?, 'pending', 0, ? FROM alert_firings f
             WHERE f.rule = ? AND f.dedup_key = ? AND f.fired_at = ?
             ON CONFLICT (firing_id, destination) DO NOTHING"
                .to_owned(),
            vec![
                t(id),
                t(target),
                Cell::Text(fired_at.clone()),
                t(&firing.rule),
                t(&firing.key),
                Cell::Text(fired_at.clone()),
            ],
        ));
    }
    let changed = store.copy_rows_mut().write_all(&stmts)?;
    if changed.first().copied().unwrap_or(0) == 0 {
        return Ok(None);
    }
    let r = store.copy_rows().read(
        "SELECT id FROM alert_firings WHERE rule = ? AND dedup_key = ?",
        &[t(&firing.rule), t(&firing.key)],
    )?;
    r.first().map(|r| int(at(r, 0))).transpose()
}

/// A delivery that is due, with what it delivers.
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    /// The firing, as sent.
    pub payload: Payload,
    /// The destination's id within its rule.
    pub destination: String,
    /// Attempts made before this one.
    pub attempts: u32,
    /// Its `next_at` as stored (the claim compares it).
    pub next_at: String,
}

/// The pending deliveries due at `now_ms`, oldest first, at most `limit`.
///
/// # Errors
/// When the store cannot be read.
pub fn due(rows: &dyn Rows, now_ms: i64, limit: usize) -> Result<Vec<Due>> {
    due_except(rows, now_ms, limit, &[])
}

/// [`due`], leaving out the destinations in `busy` (each a rule's name and
/// a destination id within it): the delivery loop asks for work only for
/// destinations with no attempt under way, so a slow one's backlog never
/// fills a pass that others are waiting behind.
///
/// # Errors
/// When the store cannot be read.
pub fn due_except(
    rows: &dyn Rows,
    now_ms: i64,
    limit: usize,
    busy: &[(String, String)],
) -> Result<Vec<Due>> {
    let mut sql =
        "SELECT f.id, f.rule, f.condition, f.dedup_key, f.summary, f.session_id, f.event_at,
                f.fired_at, f.details, d.destination, d.attempts, d.next_at
         FROM alert_deliveries d JOIN alert_firings f ON f.id = d.firing_id
         WHERE d.state = 'pending' AND d.next_at <= ?"
            .to_owned();
    let mut args = vec![Cell::Text(time::format_ms(now_ms))];
    for (rule, destination) in busy {
        sql.push_str(" AND NOT (f.rule = ? AND d.destination = ?)");
        args.push(t(rule));
        args.push(t(destination));
    }
    sql.push_str(" ORDER BY d.next_at, f.id, d.destination LIMIT ?");
    args.push(Cell::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
    let found = rows.read(&sql, &args)?;
    found
        .iter()
        .map(|r| {
            Ok(Due {
                payload: Payload {
                    id: int(at(r, 0))?,
                    rule: text(at(r, 1))?,
                    condition: text(at(r, 2))?,
                    key: text(at(r, 3))?,
                    summary: text(at(r, 4))?,
                    session_id: opt_text(at(r, 5))?,
                    event_at: text(at(r, 6))?,
                    fired_at: text(at(r, 7))?,
                    details: serde_json::from_str(&text(at(r, 8))?).unwrap_or(Value::Null),
                },
                destination: text(at(r, 9))?,
                attempts: u32::try_from(int(at(r, 10))?).unwrap_or(u32::MAX),
                next_at: text(at(r, 11))?,
            })
        })
        .collect()
}

/// Claim a due delivery for one attempt lasting until `until_ms` (Note
/// \[Alert state in the store\]): counts the attempt; false when another
/// loop claimed or settled it first.
///
/// # Errors
/// When the store cannot be written.
pub fn claim(store: &mut dyn Copyable, due: &Due, until_ms: i64) -> Result<bool> {
    let changed = store.copy_rows_mut().write_all(&[(
        "UPDATE alert_deliveries SET next_at = ?, attempts = attempts + 1
         WHERE firing_id = ? AND destination = ? AND state = 'pending' AND next_at = ?"
            .to_owned(),
        vec![
            Cell::Text(time::format_ms(until_ms)),
            Cell::Int(due.payload.id),
            t(&due.destination),
            t(&due.next_at),
        ],
    )])?;
    Ok(changed.first().copied().unwrap_or(0) == 1)
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Taken.
    Delivered,
    /// Failed; try again at this time.
    Retry {
        /// Why (never a credential: the caller says it without the URL).
        error: String,
        /// When the next attempt is due (ms since the epoch).
        next_at_ms: i64,
    },
    /// Failed for the last time.
    Failed {
        /// Why.
        error: String,
    },
}

/// Record how an attempt on a claimed delivery ended.
///
/// # Errors
/// When the store cannot be written.
pub fn settle(
    store: &mut dyn Copyable,
    firing_id: i64,
    destination: &str,
    attempt: &Attempt,
    now_ms: i64,
) -> Result<()> {
    let now = time::format_ms(now_ms);
    let (sql, args) = match attempt {
        Attempt::Delivered => (
            "UPDATE alert_deliveries SET state = 'delivered', delivered_at = ?, last_error = NULL
             WHERE firing_id = ? AND destination = ?",
            vec![Cell::Text(now)],
        ),
        Attempt::Retry { error, next_at_ms } => (
            "UPDATE alert_deliveries SET last_error = ?, next_at = ?
             WHERE firing_id = ? AND destination = ? AND state = 'pending'",
            vec![
                Cell::Text(masked(store, &cut(error, MAX_ERROR_CHARS))),
                Cell::Text(time::format_ms(*next_at_ms)),
            ],
        ),
        Attempt::Failed { error } => (
            "UPDATE alert_deliveries SET state = 'failed', last_error = ?
             WHERE firing_id = ? AND destination = ? AND state = 'pending'",
            vec![Cell::Text(masked(store, &cut(error, MAX_ERROR_CHARS)))],
        ),
    };
    let mut args = args;
    args.push(Cell::Int(firing_id));
    args.push(t(destination));
    store.copy_rows_mut().write_all(&[(sql.to_owned(), args)])?;
    Ok(())
}

/// One delivery, as `alerts list` and the dashboard show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeliveryRow {
    /// The destination's id within its rule (`webhook`, `webhook#2`, `command`, `log`).
    pub destination: String,
    /// What it is (a webhook's `scheme://host/path`, a program).
    pub target: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    /// Attempts made.
    pub attempts: u32,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// When it was delivered.
    pub delivered_at: Option<String>,
}

/// One stored firing with its deliveries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiringRow {
    /// Row id (newer firings have higher ids).
    pub id: i64,
    /// The rule.
    pub rule: String,
    /// Its condition.
    pub condition: String,
    /// The dedup key.
    pub key: String,
    /// The session it is about.
    pub session_id: Option<String>,
    /// What happened.
    pub summary: String,
    /// What was measured.
    pub details: Value,
    /// When the event happened.
    pub event_at: String,
    /// When it fired.
    pub fired_at: String,
    /// Its deliveries, by destination id.
    pub deliveries: Vec<DeliveryRow>,
}

/// The most firings one [`firings`] call returns.
pub const MAX_PAGE: usize = 500;

/// Firings newest first: fired at or after `since` (RFC 3339) when given,
/// with an id below `before` when given, at most `limit` (1..=[`MAX_PAGE`]).
/// Empty for a store without the alert tables.
///
/// # Errors
/// When the store cannot be read.
pub fn firings(
    rows: &dyn Rows,
    since: Option<&str>,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<FiringRow>> {
    if !has_alerts(rows) {
        return Ok(Vec::new());
    }
    let mut sql = "SELECT id, rule, condition, dedup_key, session_id, summary, details, event_at,
                          fired_at FROM alert_firings WHERE 1 = 1"
        .to_owned();
    let mut args = Vec::new();
    if let Some(s) = since {
        sql.push_str(" AND fired_at >= ?");
        args.push(t(s));
    }
    if let Some(b) = before {
        sql.push_str(" AND id < ?");
        args.push(Cell::Int(b));
    }
    sql.push_str(" ORDER BY id DESC LIMIT ?");
    args.push(Cell::Int(
        i64::try_from(limit.clamp(1, MAX_PAGE)).unwrap_or(1),
    ));
    let found = rows.read(&sql, &args)?;
    let mut out: Vec<FiringRow> = found
        .iter()
        .map(|r| {
            Ok(FiringRow {
                id: int(at(r, 0))?,
                rule: text(at(r, 1))?,
                condition: text(at(r, 2))?,
                key: text(at(r, 3))?,
                session_id: opt_text(at(r, 4))?,
                summary: text(at(r, 5))?,
                details: serde_json::from_str(&text(at(r, 6))?).unwrap_or(Value::Null),
                event_at: text(at(r, 7))?,
                fired_at: text(at(r, 8))?,
                deliveries: Vec::new(),
            })
        })
        .collect::<Result<_>>()?;
    let (Some(hi), Some(lo)) = (out.first().map(|f| f.id), out.last().map(|f| f.id)) else {
        return Ok(out);
    };
    let ds = rows.read(
        "SELECT firing_id, destination, target, state, attempts, last_error, delivered_at
         FROM alert_deliveries WHERE firing_id >= ? AND firing_id <= ?
         ORDER BY firing_id, destination",
        &[Cell::Int(lo), Cell::Int(hi)],
    )?;
    for r in &ds {
        let id = int(at(r, 0))?;
        if let Some(f) = out.iter_mut().find(|f| f.id == id) {
            f.deliveries.push(DeliveryRow {
                destination: text(at(r, 1))?,
                target: text(at(r, 2))?,
                state: text(at(r, 3))?,
                attempts: u32::try_from(int(at(r, 4))?).unwrap_or(u32::MAX),
                last_error: opt_text(at(r, 5))?,
                delivered_at: opt_text(at(r, 6))?,
            });
        }
    }
    Ok(out)
}

/// Firings stored, and deliveries that failed for good (the overview's count).
///
/// # Errors
/// When the store cannot be read.
pub fn counts(rows: &dyn Rows) -> Result<(u64, u64)> {
    if !has_alerts(rows) {
        return Ok((0, 0));
    }
    let a = rows.read("SELECT COUNT(*) FROM alert_firings", &[])?;
    let b = rows.read(
        "SELECT COUNT(*) FROM alert_deliveries WHERE state = 'failed'",
        &[],
    )?;
    Ok((
        a.first().map_or(Ok(0), |r| count(at(r, 0)))?,
        b.first().map_or(Ok(0), |r| count(at(r, 0)))?,
    ))
}
