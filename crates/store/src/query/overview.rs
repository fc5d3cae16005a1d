//! The overview page: the store's counts, days, tools and costliest sessions.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

/// One day of the overview's chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayTotals {
    /// The day, `YYYY-MM-DD` (UTC), of the sessions' start.
    pub day: String,
    /// Sessions started that day.
    pub sessions: i64,
    /// Their summed cost (sessions without a cost count 0).
    pub cost_usd: f64,
    /// Their input tokens.
    pub input_tokens: i64,
    /// Their output tokens.
    pub output_tokens: i64,
}

/// One escalation, newest first in [`Dashboard::escalations`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EscalationRow {
    /// Row id.
    pub id: i64,
    /// The session that escalated.
    pub parent_id: String,
    /// The session it started.
    pub child_id: String,
    /// The service escalated for.
    pub service: String,
    /// The child's tier.
    pub tier: i64,
    /// When.
    pub created_at: String,
    /// The child's shown status (`lost` for a lost one); `None` when the
    /// child row is missing.
    pub child_status: Option<String>,
}

/// What the overview page shows (`GET /api/overview`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Dashboard {
    /// Sessions by shown status (lost ones counted as `lost`, not
    /// `running`), by status name.
    pub sessions_by_status: Vec<(String, i64)>,
    /// Events by level, by level name.
    pub events_by_level: Vec<(String, i64)>,
    /// Sessions running now (heartbeat fresh).
    pub running: i64,
    /// Days with sessions among the last [`OVERVIEW_DAYS`], oldest first
    /// (days without any are left out).
    pub days: Vec<DayTotals>,
    /// The latest [`OVERVIEW_ESCALATIONS`] escalations, newest first.
    pub escalations: Vec<EscalationRow>,
    /// Per day of the window and agent (a session without one under
    /// `""`), oldest day first, then by agent (byte-wise).
    pub days_by_agent: Vec<KeyDay>,
    /// The same per project.
    pub days_by_project: Vec<KeyDay>,
    /// Tools whose calls failed, the most failures first (then by name,
    /// byte-wise), at most [`OVERVIEW_TOOLS`].
    pub tool_errors: Vec<ToolTotal>,
    /// The [`OVERVIEW_COSTLIEST`] sessions of highest cost, highest first.
    pub costliest: Vec<Session>,
}

/// One day of one agent or project in the overview's charts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyDay {
    /// `YYYY-MM-DD` (UTC) of the sessions' start.
    pub day: String,
    /// The agent or project (`""`: none recorded).
    pub key: String,
    /// Sessions started that day.
    pub sessions: i64,
    /// Their summed cost.
    pub cost_usd: f64,
    /// Their input tokens.
    pub input_tokens: i64,
    /// Their output tokens.
    pub output_tokens: i64,
}

/// Calls and failures of one tool over every session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolTotal {
    /// The tool's name, as the agent called it.
    pub tool: String,
    /// Calls.
    pub calls: i64,
    /// Calls whose result was an error.
    pub errors: i64,
}

/// How many tools the overview's "tool errors" lists.
pub const OVERVIEW_TOOLS: usize = 20;

/// How many sessions the overview's "most expensive" lists.
pub const OVERVIEW_COSTLIEST: i64 = 10;

/// How many days the overview's chart covers, today included.
pub const OVERVIEW_DAYS: i64 = 30;

/// How many escalations the overview lists.
pub const OVERVIEW_ESCALATIONS: i64 = 20;

pub(super) const DAY_MS: i64 = 86_400_000;

/// The first day of the overview's window ending on the day of `now_ms`.
pub fn overview_first_day(now_ms: i64) -> String {
    let start = now_ms.div_euclid(DAY_MS) * DAY_MS - (OVERVIEW_DAYS - 1) * DAY_MS;
    time::format_ms(start)[..10].to_owned()
}

/// The overview's numbers, as of `now_ms` (the day window and the lost cutoff).
///
/// Note \[Overview cost\]: the counts and sums come from two small tables
/// that migration 0004's triggers keep in step with every write
/// (`list_counts`: sessions by stored status, events by level;
/// `session_days`: sessions, cost and tokens per day of start), so the
/// overview reads a few dozen rows whether the store holds a hundred
/// sessions or a million. Only the few `running` rows are read, to tell
/// lost from running. An old read-only store without those tables is
/// counted the slow way, with `GROUP BY`. Since migration 7 two more:
/// `session_days_by` (the same per day and agent, and per day and project)
/// and `tool_totals` (calls and errors per tool over every session, kept by
/// triggers on `session_tools`); the most expensive sessions are the first
/// rows of index `sessions_cost`. Postgres counts these with `GROUP BY`
/// over the window's sessions (through `sessions_order`) and over
/// `session_tools`.
///
/// # Errors
/// When the database cannot be read.
pub fn overview(store: &dyn Source, now_ms: i64) -> Result<Dashboard> {
    let ctx = || "reading the overview".to_owned();
    let cutoff = time::format_ms(now_ms.saturating_sub(LOST_AFTER_MS));
    let grouped = |sql: &str| -> Result<Vec<(String, i64)>> {
        store
            .cells(sql, &[], &ctx)?
            .iter()
            .map(|r| Ok((text(at(r, 0))?, int(at(r, 1))?)))
            .collect()
    };
    let counted = has_table(store, "list_counts")?;
    let mut by_status = grouped(if counted {
        "SELECT key, n FROM list_counts WHERE what = 'status' AND n > 0"
    } else {
        "SELECT status, COUNT(*) FROM sessions GROUP BY status"
    })?;
    let lost = store
        .cells(
            &format!("SELECT COUNT(*) FROM sessions s WHERE {}", lost_sql(store)),
            &[Cell::Text(cutoff.clone())],
            &ctx,
        )?
        .first()
        .map_or(Ok(0), |r| int(at(r, 0)))?;
    let mut running = 0;
    if let Some(r) = by_status.iter_mut().find(|(s, _)| s == "running") {
        r.1 -= lost;
        running = r.1;
    }
    by_status.retain(|(_, n)| *n > 0);
    if lost > 0 {
        by_status.push(("lost".to_owned(), lost));
    }
    by_status.sort();
    let mut events_by_level = grouped(if counted {
        "SELECT key, n FROM list_counts WHERE what = 'level' AND n > 0"
    } else {
        "SELECT level, COUNT(*) FROM events GROUP BY level"
    })?;
    events_by_level.sort();
    let first = overview_first_day(now_ms);
    let days = shaped(
        store,
        if counted {
            "SELECT day, sessions, cost_usd, input_tokens, output_tokens
             FROM session_days WHERE day >= ?1 AND sessions > 0 ORDER BY day"
        } else {
            // Casts: Postgres sums integers as numeric; token sums are
            // summed as floats (Note [Sums that cannot overflow]).
            "SELECT substr(started_at, 1, 10) AS day, COUNT(*),
                    CAST(COALESCE(SUM(cost_usd), 0.0) AS DOUBLE PRECISION),
                    SUM(CAST(input_tokens AS DOUBLE PRECISION)), SUM(CAST(output_tokens AS DOUBLE PRECISION))
             FROM sessions WHERE started_at >= ?1 GROUP BY day ORDER BY day"
        },
        &[Cell::Text(first)],
        &ctx,
        |r| {
            Ok(DayTotals {
                day: text(at(r, 0))?,
                sessions: int(at(r, 1))?,
                cost_usd: real(at(r, 2))?,
                input_tokens: total(at(r, 3))?,
                output_tokens: total(at(r, 4))?,
            })
        },
    )?;
    let hb = if has_live(store) {
        "s.heartbeat_at"
    } else {
        "NULL"
    };
    let escalations = shaped(
        store,
        &format!(
            "SELECT e.id, e.parent_id, e.child_id, e.service, e.tier, e.created_at,
                    CASE WHEN s.id IS NULL THEN NULL
                         WHEN s.status = 'running' AND COALESCE({hb}, s.started_at) < ?1
                         THEN 'lost' ELSE s.status END
             FROM escalations e LEFT JOIN sessions s ON s.id = e.child_id
             ORDER BY e.id DESC LIMIT ?2"
        ),
        &[Cell::Text(cutoff), Cell::Int(OVERVIEW_ESCALATIONS)],
        &ctx,
        |r| {
            Ok(EscalationRow {
                id: int(at(r, 0))?,
                parent_id: text(at(r, 1))?,
                child_id: text(at(r, 2))?,
                service: text(at(r, 3))?,
                tier: int(at(r, 4))?,
                created_at: text(at(r, 5))?,
                child_status: opt_text(at(r, 6))?,
            })
        },
    )?;
    let first = overview_first_day(now_ms);
    let (days_by_agent, days_by_project) = if is_pg(store) {
        pg_days_by(store, &first)?
    } else {
        (
            days_by(store, "agent", &first)?,
            days_by(store, "project", &first)?,
        )
    };
    Ok(Dashboard {
        sessions_by_status: by_status,
        events_by_level,
        running,
        days,
        escalations,
        days_by_agent,
        days_by_project,
        tool_errors: tool_errors(store)?,
        costliest: costliest(store)?,
    })
}

/// Sessions, cost and tokens per day from `first` and `what` (`agent` or
/// `project`), oldest day first, keys byte-wise (Note \[Overview cost\]).
pub(super) fn days_by(store: &dyn Source, what: &'static str, first: &str) -> Result<Vec<KeyDay>> {
    let ctx = || format!("reading the overview's days by {what}");
    if what == "project" && !has_native(store) {
        return Ok(Vec::new());
    }
    let shape = |r: &[Cell]| -> Result<KeyDay> {
        Ok(KeyDay {
            day: text(at(r, 0))?,
            key: text(at(r, 1))?,
            sessions: int(at(r, 2))?,
            cost_usd: real(at(r, 3))?,
            input_tokens: total(at(r, 4))?,
            output_tokens: total(at(r, 5))?,
        })
    };
    let mut rows = if has_table(store, "session_days_by")? {
        shaped(
            store,
            "SELECT day, key, sessions, cost_usd, input_tokens, output_tokens
             FROM session_days_by WHERE day >= ?1 AND what = ?2 AND sessions > 0",
            &[Cell::Text(first.to_owned()), Cell::Text(what.to_owned())],
            &ctx,
            shape,
        )?
    } else {
        // `what` is one of two column names, never input.
        shaped(
            store,
            &format!(
                "SELECT substr(started_at, 1, 10) AS day, COALESCE({what}, '') AS k, COUNT(*),
                        CAST(COALESCE(SUM(cost_usd), 0.0) AS DOUBLE PRECISION),
                        SUM(CAST(input_tokens AS DOUBLE PRECISION)), SUM(CAST(output_tokens AS DOUBLE PRECISION))
                 FROM sessions WHERE started_at >= ?1 GROUP BY day, k"
            ),
            &[Cell::Text(first.to_owned())],
            &ctx,
            shape,
        )?
    };
    rows.sort_by(|a, b| {
        (a.day.as_bytes(), a.key.as_bytes()).cmp(&(b.day.as_bytes(), b.key.as_bytes()))
    });
    Ok(rows)
}

/// On Postgres, the days by agent and by project in one pass over the
/// window's sessions (`GROUPING SETS`), sorted as [`days_by`] sorts.
pub(super) fn pg_days_by(store: &dyn Source, first: &str) -> Result<(Vec<KeyDay>, Vec<KeyDay>)> {
    let rows = store.cells(
        "SELECT day, CAST(GROUPING(agent) AS BIGINT),
                COALESCE(CASE WHEN GROUPING(agent) = 0 THEN agent ELSE project END, ''),
                COUNT(*), CAST(COALESCE(SUM(cost_usd), 0.0) AS DOUBLE PRECISION),
                SUM(CAST(input_tokens AS DOUBLE PRECISION)), SUM(CAST(output_tokens AS DOUBLE PRECISION))
         FROM (SELECT substr(started_at, 1, 10) AS day, agent, project, cost_usd,
                      input_tokens, output_tokens
               FROM sessions WHERE started_at >= ?1) w
         GROUP BY GROUPING SETS ((day, agent), (day, project))",
        &[Cell::Text(first.to_owned())],
        &|| "reading the overview's days by agent and project".to_owned(),
    )?;
    let (mut agents, mut projects) = (Vec::new(), Vec::new());
    for r in &rows {
        let d = KeyDay {
            day: text(at(r, 0))?,
            key: text(at(r, 2))?,
            sessions: int(at(r, 3))?,
            cost_usd: real(at(r, 4))?,
            input_tokens: total(at(r, 5))?,
            output_tokens: total(at(r, 6))?,
        };
        if int(at(r, 1))? == 0 {
            agents.push(d);
        } else {
            projects.push(d);
        }
    }
    for v in [&mut agents, &mut projects] {
        v.sort_by(|a, b| {
            (a.day.as_bytes(), a.key.as_bytes()).cmp(&(b.day.as_bytes(), b.key.as_bytes()))
        });
    }
    Ok((agents, projects))
}

/// Tools with failed calls, most failures first (Note \[Overview cost\]).
pub(super) fn tool_errors(store: &dyn Source) -> Result<Vec<ToolTotal>> {
    if !has_native(store) {
        return Ok(Vec::new());
    }
    let sql = if has_table(store, "tool_totals")? {
        "SELECT tool, calls, errors FROM tool_totals WHERE errors > 0"
    } else {
        "SELECT tool, CAST(SUM(calls) AS BIGINT), CAST(SUM(errors) AS BIGINT)
         FROM session_tools GROUP BY tool HAVING SUM(errors) > 0"
    };
    let mut rows = shaped(
        store,
        sql,
        &[],
        &|| "reading the tool errors".to_owned(),
        |r| {
            Ok(ToolTotal {
                tool: text(at(r, 0))?,
                calls: int(at(r, 1))?,
                errors: int(at(r, 2))?,
            })
        },
    )?;
    rows.sort_by(|a, b| {
        b.errors
            .cmp(&a.errors)
            .then_with(|| a.tool.as_bytes().cmp(b.tool.as_bytes()))
    });
    rows.truncate(OVERVIEW_TOOLS);
    Ok(rows)
}

/// The sessions of highest cost, down index `sessions_cost`.
pub(super) fn costliest(store: &dyn Source) -> Result<Vec<Session>> {
    let sql = format!(
        "SELECT {} FROM sessions s WHERE s.cost_usd IS NOT NULL
         ORDER BY s.cost_usd DESC, s.id DESC LIMIT ?2",
        session_columns(store)
    );
    shaped(
        store,
        &sql,
        &[Cell::Text(lost_cutoff()), Cell::Int(OVERVIEW_COSTLIEST)],
        &|| "reading the most expensive sessions".to_owned(),
        session_row,
    )
}
