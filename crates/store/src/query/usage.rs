//! The stored model calls a usage report is made of (`usage_calls`, issue
//! 39), filtered by time, agent, project and model, with each call's
//! session, parent, agent and project.
//!
//! Note \[Usage rows\]: a report reads one row per model call in its window
//! and sums them in core (`agentshape_core::usage`), not in SQL: a call is
//! priced on its own (a long-context tier depends on that call's prompt),
//! and the day it falls on depends on the reader's time zone. A year of
//! heavy use is a few hundred thousand calls; reading them is a fraction of
//! a second on both backends (measured in the README).

use agentshape_core::usage::{UsageCall, UsageTokens};

use super::{Backend, Cell, Source, at, flag, int, opt_text, text};
use crate::error::Result;

/// Which calls [`usage_calls`] reads. Every `None` disables its filter.
#[derive(Debug, Clone, Default)]
pub struct UsageFilter {
    /// Calls at or after this instant (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Calls before this instant.
    pub until_ms: Option<i64>,
    /// Sessions of this agent (`claude-code`, `codex`, `gemini-cli`; the
    /// short names `claude` and `gemini` are accepted too).
    pub agent: Option<String>,
    /// Sessions whose project is this path, or ends with it after a `/`
    /// (`--project myrepo` finds `/home/me/src/myrepo`).
    pub project: Option<String>,
    /// Models whose name holds this text, any case (`opus`).
    pub model: Option<String>,
    /// Calls of these sessions only, or of their sub-agents.
    pub sessions: Vec<String>,
}

/// The stored agent name of what a user typed: `claude` is `claude-code`,
/// `gemini` is `gemini-cli` (the names `import --agent` takes), any other
/// name as it is.
pub fn agent_name(name: &str) -> &str {
    match name {
        "claude" => "claude-code",
        "gemini" => "gemini-cli",
        other => other,
    }
}

/// Whether the store has the usage table (SQLite 12+, Postgres 9+).
pub fn has_usage(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 12,
        Backend::Postgres { version } => version >= 9,
    }
}

/// The calls `filter` names, in time order (Note \[Usage rows\]). A store
/// without the usage table has none.
///
/// # Errors
/// When the database cannot be read, or a row is not of the table's shape.
pub fn usage_calls(store: &dyn Source, filter: &UsageFilter) -> Result<Vec<UsageCall>> {
    if !has_usage(store) {
        return Ok(Vec::new());
    }
    let mut sql = format!("{CALLS} WHERE 1 = 1");
    let mut args: Vec<Cell> = Vec::new();
    let mut arg = |sql: &mut String, clause: &str, value: Cell| {
        args.push(value);
        sql.push_str(&clause.replace("?N", &format!("?{}", args.len())));
    };
    if let Some(t) = filter.since_ms {
        arg(&mut sql, " AND u.at_ms >= ?N", Cell::Int(t));
    }
    if let Some(t) = filter.until_ms {
        arg(&mut sql, " AND u.at_ms < ?N", Cell::Int(t));
    }
    if let Some(a) = &filter.agent {
        arg(
            &mut sql,
            " AND s.agent = ?N",
            Cell::Text(agent_name(a).to_owned()),
        );
    }
    if let Some(p) = &filter.project {
        let p = p.trim_end_matches('/');
        arg(&mut sql, " AND (s.project = ?N", Cell::Text(p.to_owned()));
        let tail = format!("%/{}", like_escape(p));
        arg(
            &mut sql,
            " OR s.project LIKE ?N ESCAPE '\\')",
            Cell::Text(tail),
        );
    }
    if let Some(m) = &filter.model {
        let pattern = format!("%{}%", like_escape(&m.to_lowercase()));
        arg(
            &mut sql,
            " AND LOWER(u.model) LIKE ?N ESCAPE '\\'",
            Cell::Text(pattern),
        );
    }
    if !filter.sessions.is_empty() {
        sql.push_str(" AND (");
        for (i, id) in filter.sessions.iter().enumerate() {
            if i > 0 {
                sql.push_str(" OR ");
            }
            arg(&mut sql, "u.session_id = ?N", Cell::Text(id.clone()));
            arg(&mut sql, " OR s.parent_id = ?N", Cell::Text(id.clone()));
        }
        sql.push(')');
    }
    sql.push_str(" ORDER BY u.at_ms, u.key");
    read_calls(store, &sql, &args)
}

/// The columns [`read_calls`] shapes, over `usage_calls u` and its
/// session `s`; a caller adds its `WHERE` and `ORDER BY`.
pub(super) const CALLS: &str =
    "SELECT u.session_id, s.parent_id, s.agent, s.project, u.at_ms, u.model, u.sidechain,
            u.input_tokens, u.output_tokens, u.reasoning_tokens, u.cache_read_tokens,
            u.cache_write_5m_tokens, u.cache_write_1h_tokens
     FROM usage_calls u LEFT JOIN sessions s ON s.id = u.session_id";

/// The calls a `SELECT` of [`CALLS`] finds.
pub(super) fn read_calls(store: &dyn Source, sql: &str, args: &[Cell]) -> Result<Vec<UsageCall>> {
    let rows = store.cells(sql, args, &|| "reading usage".to_owned())?;
    rows.iter().map(|r| call(r)).collect()
}

/// One model's part of a session's stored calls ([`session_models`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelShare {
    /// The model's name as the agent wrote it (empty when it named none).
    pub model: String,
    /// Made by sub-agents whose lines sit in the session's own file
    /// (Claude Code 1.0.x inline sidechains): their part apart.
    pub sidechain: bool,
    /// Calls.
    pub calls: i64,
    /// Input tokens (cache reads and writes apart).
    pub input_tokens: i64,
    /// Output tokens (reasoning included).
    pub output_tokens: i64,
    /// Tokens read from the prompt cache.
    pub cache_read_tokens: i64,
    /// Tokens written to the prompt cache (5-minute and 1-hour).
    pub cache_write_tokens: i64,
}

impl ModelShare {
    /// Every token this model's calls moved.
    pub fn total(&self) -> i64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

/// A session's own stored calls per model (sub-agents' own sessions
/// apart), most tokens first: what its page shows as its models, rather
/// than the last one it used.
///
/// # Errors
/// When the database cannot be read.
pub fn session_models(store: &dyn Source, session: &str) -> Result<Vec<ModelShare>> {
    if !has_usage(store) {
        return Ok(Vec::new());
    }
    // Sums in SQL are exact integers on SQLite and NUMERIC on Postgres:
    // cast back to the 64-bit integers the reader takes (each call's counts
    // are clamped at import, so a session's sums stay far inside).
    let sql = "SELECT u.model, u.sidechain, COUNT(*),
                      CAST(SUM(u.input_tokens) AS BIGINT), CAST(SUM(u.output_tokens) AS BIGINT),
                      CAST(SUM(u.cache_read_tokens) AS BIGINT),
                      CAST(SUM(u.cache_write_5m_tokens + u.cache_write_1h_tokens) AS BIGINT)
               FROM usage_calls u WHERE u.session_id = ?1
               GROUP BY u.model, u.sidechain";
    let rows = store.cells(sql, &[Cell::Text(session.to_owned())], &|| {
        format!("reading the models of session `{session}`")
    })?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(ModelShare {
                model: opt_text(at(r, 0))?.unwrap_or_default(),
                sidechain: flag(at(r, 1))?,
                calls: int(at(r, 2))?,
                input_tokens: int(at(r, 3))?,
                output_tokens: int(at(r, 4))?,
                cache_read_tokens: int(at(r, 5))?,
                cache_write_tokens: int(at(r, 6))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    out.sort_by(|a, b| {
        b.total()
            .cmp(&a.total())
            .then_with(|| a.sidechain.cmp(&b.sidechain))
            .then_with(|| a.model.cmp(&b.model))
    });
    Ok(out)
}

/// The first and last call's time (ms since the epoch), or `None` when
/// the store holds no call (or has no usage table): where the dashboard's
/// default window ends.
///
/// # Errors
/// When the database cannot be read.
pub fn usage_span(store: &dyn Source) -> Result<Option<(i64, i64)>> {
    if !has_usage(store) {
        return Ok(None);
    }
    // Two index seeks (`usage_calls_at`), not a scan.
    let rows = store.cells(
        "SELECT MIN(at_ms), MAX(at_ms) FROM usage_calls",
        &[],
        &|| "reading the span of usage".to_owned(),
    )?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    match (at(r, 0), at(r, 1)) {
        (Cell::Null, _) | (_, Cell::Null) => Ok(None),
        (a, b) => Ok(Some((int(a)?, int(b)?))),
    }
}

fn count(c: &Cell) -> Result<u64> {
    Ok(u64::try_from(int(c)?).unwrap_or(0))
}

fn call(r: &[Cell]) -> Result<UsageCall> {
    Ok(UsageCall {
        session_id: text(at(r, 0))?,
        parent_id: opt_text(at(r, 1))?,
        agent: opt_text(at(r, 2))?.unwrap_or_default(),
        project: opt_text(at(r, 3))?,
        at_ms: int(at(r, 4))?,
        model: text(at(r, 5))?,
        sidechain: flag(at(r, 6))?,
        tokens: UsageTokens {
            input: count(at(r, 7))?,
            output: count(at(r, 8))?,
            reasoning: count(at(r, 9))?,
            cache_read: count(at(r, 10))?,
            cache_write_5m: count(at(r, 11))?,
            cache_write_1h: count(at(r, 12))?,
        },
    })
}

/// `text` with LIKE's wildcards (and the escape character) escaped.
fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
