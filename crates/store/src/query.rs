//! Read-only queries for `serve` (issue 9): sessions newest first with keyset
//! pagination, one session with its rows, recent events, memories.
//!
//! They live here, not in the web crate, so SQL stays behind the store (a
//! Postgres backend will answer the same questions) and the web crate only
//! shapes HTTP. They take a [`SqliteStore`], normally one opened with
//! [`SqliteStore::open_read_only`], and never write.
//!
//! Note \[Keyset pages\]: sessions are ordered by `(started_at, id)`
//! descending and a page starts strictly before the last session of the
//! previous one, named by its id. Unlike `OFFSET`, the cost of a page does not
//! grow with its depth (index `sessions_started`), and sessions written while
//! a reader pages do not shift later pages.

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Context, Result};
use crate::{FeedRow, LOST_AFTER_MS, SqliteStore, time};

/// The most rows one call returns: bounds the memory and time of a request.
pub const MAX_LIMIT: usize = 500;

/// Which sessions [`sessions`] lists.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// A stored status (`running`, `completed`, ...) or `lost` (a `running`
    /// session whose heartbeat is stale). `running` excludes the lost ones.
    pub status: Option<String>,
    /// At most this many (clamped to 1..=[`MAX_LIMIT`]).
    pub limit: usize,
    /// Only sessions strictly before this one in the order (Note \[Keyset pages\]).
    /// An id that is not stored gives an empty page.
    pub before: Option<String>,
}

/// One session row, as stored, plus whether it is lost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// The session it escalated from.
    pub parent_id: Option<String>,
    /// Tier.
    pub tier: i64,
    /// Profile.
    pub profile: Option<String>,
    /// Agent.
    pub agent: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Stored status; a lost session stays `running` here (see `lost`).
    pub status: String,
    /// Exit code of the agent.
    pub exit_code: Option<i64>,
    /// Start (RFC 3339 UTC).
    pub started_at: String,
    /// End.
    pub ended_at: Option<String>,
    /// Cost.
    pub cost_usd: Option<f64>,
    /// Duration.
    pub duration_ms: Option<i64>,
    /// Turns.
    pub num_turns: Option<i64>,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// How the structured output was found.
    pub extraction_method: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Error category.
    pub error_category: Option<String>,
    /// Summary.
    pub summary: Option<String>,
    /// Escalation (JSON text).
    pub escalation: Option<String>,
    /// The forensic log.
    pub raw_log_path: Option<String>,
    /// Last heartbeat of a running session.
    pub heartbeat_at: Option<String>,
    /// A `running` session whose heartbeat is stale (Note \[Lost sessions\]).
    pub lost: bool,
    /// What a reader should show: `lost` for a lost session, else `status`.
    pub shown_status: String,
}

/// One event row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    /// Row id (newest is highest).
    pub id: i64,
    /// Its session.
    pub session_id: String,
    /// `info`, `warning` or `critical`.
    pub level: String,
    /// Service.
    pub service: Option<String>,
    /// Message.
    pub message: String,
    /// When it was stored.
    pub created_at: String,
}

/// One `services_checked` row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceRow {
    /// Service name.
    pub name: String,
    /// Status the agent reported.
    pub status: String,
    /// Detail.
    pub detail: Option<String>,
}

/// One memory row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryRow {
    /// Row id.
    pub id: i64,
    /// Service.
    pub service: Option<String>,
    /// Category.
    pub category: String,
    /// Observation.
    pub observation: String,
    /// Confidence 0..=1.
    pub confidence: f64,
    /// Still active (not pruned).
    pub active: bool,
    /// First learned.
    pub created_at: String,
    /// Last reinforced: how stale it is.
    pub updated_at: String,
    /// The session that last wrote it.
    pub session_id: Option<String>,
    /// Tier of that session.
    pub tier: Option<i64>,
}

/// One session with the rows it wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDetail {
    /// The session.
    pub session: SessionRow,
    /// Its events, oldest first.
    pub events: Vec<EventRow>,
    /// The services it checked.
    pub services: Vec<ServiceRow>,
    /// The memories it last wrote or reinforced.
    pub memories: Vec<MemoryRow>,
    /// The extracted value (`None` while running, when nothing was found,
    /// or for a session stored before schema version 3).
    pub output: Option<Value>,
    /// `{"valid", "errors", "repairs", "coercions"}` (`None` as for `output`).
    pub verdict: Option<Value>,
    /// The sessions it escalated to (`parent_id` = this one), oldest first:
    /// the escalation chain downwards; upwards is `session.parent_id`.
    pub children: Vec<SessionRow>,
}

/// The most rows [`feed_for_session`] returns in one call.
pub const MAX_FEED_LIMIT: usize = 10_000;

/// The select list of [`SessionRow`]; `?1` is the lost cutoff.
fn session_columns(store: &SqliteStore) -> String {
    // A read-only store of version 1 has no heartbeat column.
    let hb = if store.version >= 2 {
        "s.heartbeat_at"
    } else {
        "NULL"
    };
    format!(
        "s.id, s.parent_id, s.tier, s.profile, s.agent, s.model, s.status, s.exit_code,
         s.started_at, s.ended_at, s.cost_usd, s.duration_ms, s.num_turns, s.input_tokens,
         s.output_tokens, s.extraction_method, s.error, s.error_category, s.summary,
         s.escalation, s.raw_log_path, {hb},
         s.status = 'running' AND COALESCE({hb}, s.started_at) < ?1"
    )
}

fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    let status: String = r.get(6)?;
    let lost: bool = r.get(22)?;
    Ok(SessionRow {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        tier: r.get(2)?,
        profile: r.get(3)?,
        agent: r.get(4)?,
        model: r.get(5)?,
        shown_status: if lost {
            "lost".to_owned()
        } else {
            status.clone()
        },
        status,
        exit_code: r.get(7)?,
        started_at: r.get(8)?,
        ended_at: r.get(9)?,
        cost_usd: r.get(10)?,
        duration_ms: r.get(11)?,
        num_turns: r.get(12)?,
        input_tokens: r.get(13)?,
        output_tokens: r.get(14)?,
        extraction_method: r.get(15)?,
        error: r.get(16)?,
        error_category: r.get(17)?,
        summary: r.get(18)?,
        escalation: r.get(19)?,
        raw_log_path: r.get(20)?,
        heartbeat_at: r.get(21)?,
        lost,
    })
}

fn memory_row(r: &Row<'_>) -> rusqlite::Result<MemoryRow> {
    Ok(MemoryRow {
        id: r.get(0)?,
        service: r.get(1)?,
        category: r.get(2)?,
        observation: r.get(3)?,
        confidence: r.get(4)?,
        active: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        session_id: r.get(8)?,
        tier: r.get(9)?,
    })
}

const MEMORY_COLUMNS: &str = "id, service, category, observation, confidence, active, created_at, updated_at, session_id, tier";

/// The heartbeat before which a `running` session is lost.
fn lost_cutoff() -> String {
    time::format_ms(time::now_ms().saturating_sub(LOST_AFTER_MS))
}

fn clamp(limit: usize) -> i64 {
    i64::try_from(limit.clamp(1, MAX_LIMIT)).unwrap_or(1)
}

/// Sessions newest first (Note \[Keyset pages\]).
///
/// # Errors
/// When the database cannot be read.
pub fn sessions(store: &SqliteStore, filter: &SessionFilter) -> Result<Vec<SessionRow>> {
    let ctx = || "listing sessions".to_owned();
    let lost_sql = "s.status = 'running' AND COALESCE(HB, s.started_at) < ?1";
    let lost_sql = lost_sql.replace(
        "HB",
        if store.version >= 2 {
            "s.heartbeat_at"
        } else {
            "NULL"
        },
    );
    // ?2 status, ?3 before id, ?4 limit; a NULL parameter disables its filter.
    let status_sql = match filter.status.as_deref() {
        None => "1".to_owned(),
        Some("lost") => lost_sql,
        Some("running") => format!("s.status = 'running' AND NOT ({lost_sql})"),
        Some(_) => "s.status = ?2".to_owned(),
    };
    let sql = format!(
        "SELECT {} FROM sessions s
         WHERE ({status_sql})
           AND (?3 IS NULL OR (s.started_at, s.id) <
                (SELECT b.started_at, b.id FROM sessions b WHERE b.id = ?3))
         ORDER BY s.started_at DESC, s.id DESC LIMIT ?4",
        session_columns(store)
    );
    let mut stmt = store.connection().prepare_cached(&sql).context(ctx)?;
    let rows = stmt
        .query_map(
            params![
                lost_cutoff(),
                filter.status,
                filter.before,
                clamp(filter.limit)
            ],
            session_row,
        )
        .context(ctx)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
}

/// One session with its events, services and memories; `None` when unknown.
///
/// # Errors
/// When the database cannot be read.
pub fn session(store: &SqliteStore, id: &str) -> Result<Option<SessionDetail>> {
    let ctx = || format!("reading session `{id}`");
    let c = store.connection();
    let sql = format!(
        "SELECT {} FROM sessions s WHERE s.id = ?2",
        session_columns(store)
    );
    let Some(session) = c
        .query_row(&sql, params![lost_cutoff(), id], session_row)
        .optional()
        .context(ctx)?
    else {
        return Ok(None);
    };
    let mut stmt = c
        .prepare_cached(
            "SELECT id, session_id, level, service, message, created_at FROM events
             WHERE session_id = ?1 ORDER BY id",
        )
        .context(ctx)?;
    let events = stmt
        .query_map([id], event_row)
        .context(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .context(ctx)?;
    let mut stmt = c
        .prepare_cached(
            "SELECT name, status, detail FROM services_checked WHERE session_id = ?1 ORDER BY id",
        )
        .context(ctx)?;
    let services = stmt
        .query_map([id], |r| {
            Ok(ServiceRow {
                name: r.get(0)?,
                status: r.get(1)?,
                detail: r.get(2)?,
            })
        })
        .context(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .context(ctx)?;
    let mut stmt = c
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE session_id = ?1 ORDER BY id"
        ))
        .context(ctx)?;
    let memories = stmt
        .query_map([id], memory_row)
        .context(ctx)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .context(ctx)?;
    let (output, verdict) = output_and_verdict(store, id)?;
    let children = children(store, id)?;
    Ok(Some(SessionDetail {
        session,
        events,
        services,
        memories,
        output,
        verdict,
        children,
    }))
}

/// The stored `output` and `verdict` of a session. A read-only store older
/// than version 3 has no such columns: both `None`. Text that is not JSON
/// (written by hand, or damaged) is `None` too: a reader shows "no output"
/// rather than failing the whole page.
fn output_and_verdict(store: &SqliteStore, id: &str) -> Result<(Option<Value>, Option<Value>)> {
    if store.version < 3 {
        return Ok((None, None));
    }
    let ctx = || format!("reading the output of session `{id}`");
    let texts: Option<(Option<String>, Option<String>)> = store
        .connection()
        .query_row(
            "SELECT output, verdict FROM sessions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .context(ctx)?;
    let parse = |t: Option<String>| t.and_then(|t| serde_json::from_str::<Value>(&t).ok());
    Ok(texts.map_or((None, None), |(o, v)| (parse(o), parse(v))))
}

/// The sessions whose parent is `id`, oldest first (index `sessions_parent`).
fn children(store: &SqliteStore, id: &str) -> Result<Vec<SessionRow>> {
    let ctx = || format!("reading the children of session `{id}`");
    let sql = format!(
        "SELECT {} FROM sessions s WHERE s.parent_id = ?2 ORDER BY s.started_at, s.id LIMIT ?3",
        session_columns(store)
    );
    let mut stmt = store.connection().prepare_cached(&sql).context(ctx)?;
    let rows = stmt
        .query_map(params![lost_cutoff(), id, clamp(MAX_LIMIT)], session_row)
        .context(ctx)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
}

/// One session's feed rows with an id greater than `after`, in id order, at
/// most `limit` (clamped to 1..=[`MAX_FEED_LIMIT`]); index `feed_session`.
/// Empty for a store without a feed (version 1) or an unknown session.
///
/// # Errors
/// When the database cannot be read.
pub fn feed_for_session(
    store: &SqliteStore,
    id: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<FeedRow>> {
    if store.version < 2 {
        return Ok(Vec::new());
    }
    let ctx = || format!("reading the feed of session `{id}`");
    let limit = i64::try_from(limit.clamp(1, MAX_FEED_LIMIT)).unwrap_or(1);
    let mut stmt = store
        .connection()
        .prepare_cached(
            "SELECT id, session_id, kind, body, created_at FROM feed
             WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        )
        .context(ctx)?;
    let rows = stmt
        .query_map(params![id, after, limit], |r| {
            Ok(FeedRow {
                id: r.get(0)?,
                session_id: r.get(1)?,
                kind: r.get(2)?,
                body: r.get(3)?,
                created_at: r.get(4)?,
            })
        })
        .context(ctx)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
}

fn event_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        level: r.get(2)?,
        service: r.get(3)?,
        message: r.get(4)?,
        created_at: r.get(5)?,
    })
}

/// The newest events, newest first, of one level or all.
///
/// # Errors
/// When the database cannot be read.
pub fn events(store: &SqliteStore, level: Option<&str>, limit: usize) -> Result<Vec<EventRow>> {
    let ctx = || "listing events".to_owned();
    let mut stmt = store
        .connection()
        .prepare_cached(
            "SELECT id, session_id, level, service, message, created_at FROM events
             WHERE ?1 IS NULL OR level = ?1 ORDER BY id DESC LIMIT ?2",
        )
        .context(ctx)?;
    let rows = stmt
        .query_map(params![level, clamp(limit)], event_row)
        .context(ctx)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
}

/// Every memory, active first, then most confident.
///
/// # Errors
/// When the database cannot be read.
pub fn memories(store: &SqliteStore) -> Result<Vec<MemoryRow>> {
    let ctx = || "listing memories".to_owned();
    let mut stmt = store
        .connection()
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories ORDER BY active DESC, confidence DESC, id"
        ))
        .context(ctx)?;
    let rows = stmt.query_map([], memory_row).context(ctx)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
}

/// The highest feed id stored (0 when empty): where a tailer that only
/// wants new rows starts.
///
/// # Errors
/// When the database cannot be read.
pub fn feed_max_id(store: &SqliteStore) -> Result<i64> {
    if store.version < 2 {
        return Ok(0);
    }
    store
        .connection()
        .query_row("SELECT COALESCE(MAX(id), 0) FROM feed", [], |r| r.get(0))
        .context(|| "reading the feed's last id".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{NewEvent, SessionRecord, Store};

    #[test]
    fn sessions_page_newest_first_and_detail_has_rows() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        for i in 0..5 {
            let mut rec = SessionRecord::new(
                &format!("s{i}"),
                &format!("2025-07-14T03:12:0{i}.000Z"),
                "completed",
            );
            rec.events.push(NewEvent {
                level: "info".into(),
                service: None,
                message: format!("m{i}"),
            });
            store.write_session(&rec).unwrap();
        }
        let page = |before: Option<&str>| {
            sessions(
                &store,
                &SessionFilter {
                    status: None,
                    limit: 2,
                    before: before.map(str::to_owned),
                },
            )
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>()
        };
        assert_eq!(page(None), ["s4", "s3"]);
        assert_eq!(page(Some("s3")), ["s2", "s1"]);
        assert_eq!(page(Some("s1")), ["s0"]);
        assert!(page(Some("nope")).is_empty());
        let d = session(&store, "s2").unwrap().unwrap();
        assert_eq!(d.events.len(), 1);
        assert!(session(&store, "nope").unwrap().is_none());
        assert_eq!(events(&store, Some("info"), 3).unwrap().len(), 3);
        assert!(events(&store, Some("critical"), 3).unwrap().is_empty());
    }

    #[test]
    fn a_running_session_with_a_stale_heartbeat_is_lost() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        // Its heartbeat is its start, long ago.
        let old = SessionRecord::new("old", "2025-07-14T03:12:00.000Z", "running");
        store.start_session(&old).unwrap();
        let fresh = SessionRecord::new("fresh", &time::now(), "running");
        store.start_session(&fresh).unwrap();
        let ids = |status: &str| {
            sessions(
                &store,
                &SessionFilter {
                    status: Some(status.to_owned()),
                    limit: 10,
                    before: None,
                },
            )
            .unwrap()
            .into_iter()
            .map(|s| (s.id, s.shown_status))
            .collect::<Vec<_>>()
        };
        assert_eq!(ids("lost"), [("old".to_owned(), "lost".to_owned())]);
        assert_eq!(ids("running"), [("fresh".to_owned(), "running".to_owned())]);
        assert!(session(&store, "old").unwrap().unwrap().session.lost);
        assert!(feed_max_id(&store).unwrap() >= 2);
    }
}
