//! `store copy`: move a store to another backend (or another file),
//! idempotently.
//!
//! Note \[Copying a store\]: both backends hold one logical schema (Note
//! \[One logical schema\]), so a copy is the same rows with the same
//! columns. Sessions are the unit: a session the target already has is
//! skipped with all its rows; a session it lacks is copied with its events,
//! services, escalations (as the child), feed rows and hook calls, in batches of
//! [`BATCH`] sessions, each batch one transaction on the target (foreign
//! keys checked at its commit), so a copy that stops half-way leaves whole
//! sessions only and running it again finishes the job. Row ids are the
//! target's own (its feed ids must keep growing for its live tailers).
//! Sessions go in tier order, then start time, so a parent lands before its
//! escalated children.
//!
//! Memories are copied when the target has no memory with the same service,
//! category and creation time; an active memory whose key is already active
//! in the target (both stores learned it separately) is not copied, and is
//! counted as a conflict: reinforcing it would invent confidence neither
//! store had. Feed rows of no stored session (a run that never wrote its
//! start) cannot be told apart from a previous copy's, so they are counted
//! and left.

use std::collections::HashSet;

use serde::Serialize;

use crate::error::Result;
pub use crate::rows::{Cell, Copyable, Rows};
use crate::session::columns::SESSION_COLS;
use crate::writes::MARK_COLS;

/// Sessions per target transaction.
pub const BATCH: usize = 200;

/// The text cells of a row through the target's masker (Note \[Store
/// door\] in `secrets`): rows already masked are unchanged (masking masked
/// text changes nothing); an unmasked source's rows are masked with the
/// target's key. JSON columns keep their shape.
fn masked(m: Option<&agentshape_core::secrets::Masker>, row: Vec<Cell>) -> Vec<Cell> {
    let Some(m) = m else { return row };
    row.into_iter()
        .map(|c| match c {
            Cell::Text(t) => match m.mask_json_text(&t).text {
                std::borrow::Cow::Owned(o) => Cell::Text(o),
                std::borrow::Cow::Borrowed(_) => Cell::Text(t),
            },
            other => other,
        })
        .collect()
}

const TOOL_COLS: &str = "session_id, tool, calls, errors";
const EVENT_COLS: &str = "session_id, level, service, message, created_at";
const SERVICE_COLS: &str = "session_id, name, status, detail";
const ESCALATION_COLS: &str = "parent_id, child_id, service, tier, created_at";
const FEED_COLS: &str = "session_id, kind, body, created_at";
/// With the feed's entry numbers (Note \[Feed writes land once\] in `writes`).
const FEED_SEQ_COLS: &str = "session_id, kind, body, created_at, seq";
const HOOK_COLS: &str = "session_id, agent_id, agent_type, event, verdict, method, errors, \
    blocks, stop_hook_active, profile, reason, message, warning, created_at";
const MEMORY_COLS: &str =
    "service, category, observation, confidence, active, created_at, updated_at, session_id, tier";

/// Rows per table that a copy added, skipped (already there) or could not add.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CopyReport {
    /// Sessions copied.
    pub sessions: u64,
    /// Sessions the target already had (skipped with their rows).
    pub sessions_skipped: u64,
    /// Events copied.
    pub events: u64,
    /// `services_checked` rows copied.
    pub services_checked: u64,
    /// Escalations copied.
    pub escalations: u64,
    /// Feed rows copied.
    pub feed: u64,
    /// `session_tools` rows copied.
    pub session_tools: u64,
    /// Native import marks copied (`native_files`).
    pub native_files: u64,
    /// `hook_calls` rows copied (those of the sessions copied).
    pub hook_calls: u64,
    /// Alert firings copied, with their deliveries (Note \[Copying alerts\]).
    pub alert_firings: u64,
    /// Alert firings the target already had.
    pub alert_firings_skipped: u64,
    /// Feed rows of no stored session, left (Note \[Copying a store\]).
    pub feed_orphans: u64,
    /// Memories copied.
    pub memories: u64,
    /// Memories the target already had.
    pub memories_skipped: u64,
    /// Active memories whose key is already active in the target, left.
    pub memory_conflicts: u64,
}

impl CopyReport {
    /// Rows added, all tables.
    pub fn added(&self) -> u64 {
        self.sessions
            + self.events
            + self.services_checked
            + self.escalations
            + self.feed
            + self.session_tools
            + self.native_files
            + self.hook_calls
            + self.memories
            + self.alert_firings
    }
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn insert(table: &str, cols: &str, row: Vec<Cell>) -> (String, Vec<Cell>) {
    (
        format!(
            "INSERT INTO {table} ({cols}) VALUES ({})",
            placeholders(row.len())
        ),
        row,
    )
}

/// Copy every session and memory of `from` that `to` lacks (Note
/// \[Copying a store\]).
///
/// # Errors
/// Reading `from` or writing `to` failed; batches already committed stay.
pub fn copy(from: &dyn Copyable, to: &mut dyn Copyable) -> Result<CopyReport> {
    let src = from.copy_rows();
    let m = to.masker().cloned();
    let m = m.as_ref();
    let mut report = CopyReport::default();
    // A source from before hooks (read-only, so not migrated) has no
    // `hook_calls` table: nothing of it to copy.
    let has_hooks = src.read("SELECT id FROM hook_calls LIMIT 1", &[]).is_ok();
    // Nor, from before numbered feed entries, `feed.seq`.
    let feed_cols = if src.read("SELECT seq FROM feed LIMIT 1", &[]).is_ok() {
        FEED_SEQ_COLS
    } else {
        FEED_COLS
    };
    let mut offset = 0usize;
    loop {
        let batch = src.read(
            &format!(
                "SELECT {} FROM sessions ORDER BY tier, started_at, id LIMIT ? OFFSET ?",
                *SESSION_COLS
            ),
            &[
                Cell::Int(i64::try_from(BATCH).unwrap_or(i64::MAX)),
                Cell::Int(i64::try_from(offset).unwrap_or(i64::MAX)),
            ],
        )?;
        if batch.is_empty() {
            break;
        }
        offset += batch.len();
        let ids: Vec<Cell> = batch.iter().map(|r| r[0].clone()).collect();
        let in_list = placeholders(ids.len());
        let present: HashSet<String> = to
            .copy_rows()
            .read(
                &format!("SELECT id FROM sessions WHERE id IN ({in_list})"),
                &ids,
            )?
            .into_iter()
            .filter_map(|r| r[0].text().map(str::to_owned))
            .collect();
        let fresh: Vec<Cell> = ids
            .iter()
            .filter(|c| c.text().is_some_and(|id| !present.contains(id)))
            .cloned()
            .collect();
        report.sessions_skipped += (ids.len() - fresh.len()) as u64;
        if fresh.is_empty() {
            continue;
        }
        let fresh_list = placeholders(fresh.len());
        let mut stmts = Vec::new();
        let mut counts = CopyReport::default();
        for row in batch {
            if row[0].text().is_some_and(|id| !present.contains(id)) {
                stmts.push(insert("sessions", &SESSION_COLS, masked(m, row)));
                counts.sessions += 1;
            }
        }
        let children = |table: &str, cols: &str, key: &str| -> Result<Vec<Vec<Cell>>> {
            src.read(
                &format!("SELECT {cols} FROM {table} WHERE {key} IN ({fresh_list}) ORDER BY id"),
                &fresh,
            )
        };
        for row in children("events", EVENT_COLS, "session_id")? {
            stmts.push(insert("events", EVENT_COLS, masked(m, row)));
            counts.events += 1;
        }
        for row in children("services_checked", SERVICE_COLS, "session_id")? {
            stmts.push(insert("services_checked", SERVICE_COLS, masked(m, row)));
            counts.services_checked += 1;
        }
        for row in children("escalations", ESCALATION_COLS, "child_id")? {
            stmts.push(insert("escalations", ESCALATION_COLS, masked(m, row)));
            counts.escalations += 1;
        }
        for row in children("feed", feed_cols, "session_id")? {
            stmts.push(insert("feed", feed_cols, masked(m, row)));
            counts.feed += 1;
        }
        if has_hooks {
            for row in children("hook_calls", HOOK_COLS, "session_id")? {
                stmts.push(insert("hook_calls", HOOK_COLS, masked(m, row)));
                counts.hook_calls += 1;
            }
        }
        // Keyed by name, not by a row id: in key order.
        for row in src.read(
            &format!(
                "SELECT {TOOL_COLS} FROM session_tools WHERE session_id IN ({fresh_list}) \
                 ORDER BY session_id, tool"
            ),
            &fresh,
        )? {
            stmts.push(insert("session_tools", TOOL_COLS, row));
            counts.session_tools += 1;
        }
        // A copied session's import marks come along, so importing the same
        // files into the copy adds nothing (a mark the target already has
        // for another session is left alone).
        for row in src.read(
            &format!(
                "SELECT {MARK_COLS} FROM native_files WHERE session_id IN ({fresh_list}) \
                 ORDER BY path"
            ),
            &fresh,
        )? {
            let (sql, row) = insert("native_files", MARK_COLS, row);
            stmts.push((format!("{sql} ON CONFLICT (path) DO NOTHING"), row));
            counts.native_files += 1;
        }
        to.copy_rows_mut().write_all(&stmts)?;
        report.sessions += counts.sessions;
        report.events += counts.events;
        report.services_checked += counts.services_checked;
        report.escalations += counts.escalations;
        report.feed += counts.feed;
        report.session_tools += counts.session_tools;
        report.native_files += counts.native_files;
        report.hook_calls += counts.hook_calls;
    }
    report.feed_orphans = src
        .read(
            "SELECT COUNT(*) FROM feed f WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = f.session_id)",
            &[],
        )?
        .first()
        .and_then(|r| match r.first() {
            Some(Cell::Int(n)) => u64::try_from(*n).ok(),
            _ => None,
        })
        .unwrap_or(0);
    copy_memories(src, to.copy_rows_mut(), m, &mut report)?;
    if crate::alerts::has_alerts(src) && crate::alerts::has_alerts(to.copy_rows()) {
        copy_alerts(src, to.copy_rows_mut(), m, &mut report)?;
    }
    Ok(report)
}

const FIRING_COLS: &str =
    "rule, dedup_key, condition, session_id, summary, details, event_at, fired_at";
const DELIVERY_COLS: &str =
    "destination, target, state, attempts, last_error, next_at, delivered_at";

/// Note \[Copying alerts\]: a firing is known by its rule and dedup key
/// (core's Note \[Firing keys\]) in every store, so one the target has is
/// skipped, and one it lacks comes with its deliveries as they stand (a
/// pending one is then the target's to deliver: stop the source's
/// evaluator before copying, or a firing may be sent by both). In batches
/// of [`BATCH`] firings, oldest first.
fn copy_alerts(
    src: &dyn Rows,
    dst: &mut dyn Rows,
    m: Option<&agentshape_core::secrets::Masker>,
    report: &mut CopyReport,
) -> Result<()> {
    let mut after = 0i64;
    loop {
        let batch = src.read(
            &format!(
                "SELECT id, {FIRING_COLS} FROM alert_firings WHERE id > ? ORDER BY id LIMIT ?"
            ),
            &[
                Cell::Int(after),
                Cell::Int(i64::try_from(BATCH).unwrap_or(i64::MAX)),
            ],
        )?;
        let Some(last) = batch.last() else {
            return Ok(());
        };
        if let Some(Cell::Int(id)) = last.first() {
            after = *id;
        }
        let mut stmts = Vec::new();
        let mut firsts = Vec::new();
        for mut row in batch {
            let id = row.remove(0);
            let (rule, key, fired) = (row[0].clone(), row[1].clone(), row[7].clone());
            let (sql, row) = insert("alert_firings", FIRING_COLS, masked(m, row));
            firsts.push(stmts.len());
            stmts.push((
                format!("{sql} ON CONFLICT (rule, dedup_key) DO NOTHING"),
                row,
            ));
            for d in src.read(
                &format!(
                    "SELECT {DELIVERY_COLS} FROM alert_deliveries WHERE firing_id = ? \
                     ORDER BY destination"
                ),
                &[id],
            )? {
                let mut args = masked(m, d);
                args.extend([rule.clone(), key.clone(), fired.clone()]);
                stmts.push((
                    format!(
                        "INSERT INTO alert_deliveries (firing_id, {DELIVERY_COLS}) \
                         SELECT f.id, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), \
                         CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT) \
                         FROM alert_firings f \
                         WHERE f.rule = ? AND f.dedup_key = ? AND f.fired_at = ? \
                         ON CONFLICT (firing_id, destination) DO NOTHING"
                    ),
                    args,
                ));
            }
        }
        let changed = dst.write_all(&stmts)?;
        for i in firsts {
            if changed.get(i).copied().unwrap_or(0) > 0 {
                report.alert_firings += 1;
            } else {
                report.alert_firings_skipped += 1;
            }
        }
    }
}

fn copy_memories(
    src: &dyn Rows,
    dst: &mut dyn Rows,
    m: Option<&agentshape_core::secrets::Masker>,
    report: &mut CopyReport,
) -> Result<()> {
    let rows = src.read(
        &format!("SELECT {MEMORY_COLS} FROM memories ORDER BY id"),
        &[],
    )?;
    let mut stmts = Vec::new();
    for row in rows {
        // service, category, created_at
        let (service, category, active, created) = (&row[0], &row[1], &row[4], &row[5]);
        let same = dst.read(
            "SELECT COUNT(*) FROM memories WHERE category = ? AND created_at = ?
                AND service IS NOT DISTINCT FROM ?",
            &[category.clone(), created.clone(), service.clone()],
        )?;
        if matches!(same.first().and_then(|r| r.first()), Some(Cell::Int(n)) if *n > 0) {
            report.memories_skipped += 1;
            continue;
        }
        if *active == Cell::Int(1) {
            let clash = dst.read(
                "SELECT COUNT(*) FROM memories WHERE active = 1 AND category = ?
                    AND service IS NOT DISTINCT FROM ?",
                &[category.clone(), service.clone()],
            )?;
            if matches!(clash.first().and_then(|r| r.first()), Some(Cell::Int(n)) if *n > 0) {
                report.memory_conflicts += 1;
                continue;
            }
        }
        stmts.push(insert("memories", MEMORY_COLS, masked(m, row)));
        report.memories += 1;
    }
    if !stmts.is_empty() {
        dst.write_all(&stmts)?;
    }
    Ok(())
}
