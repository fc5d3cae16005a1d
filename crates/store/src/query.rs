//! Read-only queries for `serve` (issue 9): sessions newest first with keyset
//! pagination, one session with its rows, recent events, memories.
//!
//! They live here, not in the web crate, so SQL stays behind the store and
//! the web crate only shapes HTTP. They take a [`Source`]: a
//! [`SqliteStore`], normally one opened with
//! [`SqliteStore::open_read_only`], or a [`PgStore`] (Note \[Queries on
//! both backends\]), and never write.
//!
//! Note \[Keyset pages\]: sessions are ordered by `(started_at, id)`
//! descending and a page starts strictly before the last session of the
//! previous one, named by its id. Unlike `OFFSET`, the cost of a page does not
//! grow with its depth (index `sessions_started`), and sessions written while
//! a reader pages do not shift later pages.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Context, Result};
#[doc(hidden)]
pub use crate::rows::Cell;
pub(crate) use crate::rows::{at, bad, flag, int, opt_int, opt_real, opt_text, real, text};
pub use crate::session::Session;
use crate::session::columns::session_row;
use crate::{FeedRow, LOST_AFTER_MS, PgStore, SqliteStore, time};

mod hooks;
pub use hooks::*;
mod overview;
pub use overview::*;
mod search;
pub use search::*;
mod secrets;
pub use secrets::*;
mod session;
pub use session::*;
mod sessions;
pub use sessions::*;
pub mod stats;
pub use stats::{Parts, StatsBy, StatsGroup, stats, stats_of};
pub mod usage;
pub use usage::{UsageFilter, agent_name, has_usage, usage_calls, usage_span};
pub mod nested;
pub use nested::{MAX_NESTED, sub_sessions};
pub mod hits;
pub use hits::{HIT_WINDOW, Hits, search_hits};

/// The most rows one call returns: bounds the memory and time of a request.
pub const MAX_LIMIT: usize = 500;

/// Which sessions [`sessions`] lists. Every `None` disables its filter;
/// the filters that are set must all hold.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// A stored status (`running`, `completed`, ...) or `lost` (a `running`
    /// session whose heartbeat is stale). `running` excludes the lost ones.
    pub status: Option<String>,
    /// Tier.
    pub tier: Option<i64>,
    /// Profile, as stored.
    pub profile: Option<String>,
    /// Error category (`rate_limit`, `auth`, ...).
    pub error_category: Option<String>,
    /// Extraction method (`structured`, `fenced`, `markers+handoff`, ...).
    pub method: Option<String>,
    /// Agent (`claude-code`, `codex`, ...); Note \[One agent, two names\].
    pub agent: Option<String>,
    /// Project (a native session's working directory), as stored.
    pub project: Option<String>,
    /// Text that the id, summary, error, agent or model holds, ignoring
    /// ASCII case (Note \[Text search\]).
    pub q: Option<String>,
    /// The outcome of validation (Note \[Outcomes of a run\] in `stats`):
    /// `valid`, `invalid` (a value found, invalid), `none` (nothing
    /// structured found) or `unchecked` (no verdict stored).
    pub verdict: Option<String>,
    /// A JSON Pointer into the output (`""`: the root) where the final
    /// verdict or a blocked hook call of the session had an error.
    pub failing_path: Option<String>,
    /// Sessions started at or after this instant (RFC 3339 UTC, as
    /// stored: `2025-07-14T00:00:00.000Z`).
    pub from: Option<String>,
    /// Sessions started before this instant.
    pub to: Option<String>,
    /// At most this many (clamped to 1..=[`MAX_LIMIT`]).
    pub limit: usize,
    /// Only sessions strictly before this one in the order (Note \[Keyset pages\]).
    /// An id that is not stored gives an empty page.
    pub before: Option<String>,
    /// Only the sessions whose parent is not among those the filters
    /// match: a page of a list that shows sub-agents under their parent
    /// (Note \[Sub-agents in a list\]). [`session_totals`] and
    /// [`session_usage_calls`] ignore it.
    pub top_level: bool,
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
    pub session: Session,
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
    pub children: Vec<Session>,
    /// Every session below it (children, their children, ...), depth
    /// first, each child after its parent, oldest first among siblings; at
    /// most [`MAX_TREE`] (Note \[Session tree\]).
    pub tree: Vec<TreeNode>,
    /// Only its usage is stored so far: `agentshape usage` read its file
    /// (runtime's Note \[Usage pass\]), and `agentshape import` has not
    /// added its transcript yet.
    pub usage_only: bool,
    /// Its stored model calls per model, most tokens first: the models it
    /// used as a mix (empty when no call is stored).
    pub models: Vec<usage::ModelShare>,
}

/// One session of a [`SessionDetail::tree`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeNode {
    /// 1 for a child, 2 for a grandchild, ...
    pub depth: usize,
    /// The session.
    pub session: Session,
}

/// The most sessions a [`SessionDetail::tree`] holds.
pub const MAX_TREE: usize = 500;

/// The deepest level a [`SessionDetail::tree`] reaches.
pub const MAX_TREE_DEPTH: usize = 8;

/// The most rows [`feed_for_session`] returns in one call.
pub const MAX_FEED_LIMIT: usize = 10_000;

/// The backend a [`Source`] reads, and what its schema has.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file at this schema version (a read-only store may be old).
    Sqlite {
        /// `user_version`.
        version: i64,
    },
    /// A Postgres database at this schema version (`schema_migrations`):
    /// an open for writing migrates to the latest, a read-only one may
    /// find an older schema, which lacks the newest tables.
    Postgres {
        /// The highest applied migration.
        version: i64,
    },
}

/// A store the dashboard's queries read: [`SqliteStore`] or [`PgStore`].
///
/// Note \[Queries on both backends\]: every query here is written once,
/// with SQLite's `?N` placeholders, and its rows are read as
/// [`Cell`]s and shaped into the row types by the same code on both
/// backends. The SQL differs only where the backends do:
/// - placeholders: `?N` becomes `$N` for Postgres;
/// - order of ids: SQLite compares text byte by byte; on Postgres the
///   database's collation might not, so ids are ordered and compared
///   `COLLATE "C"` (and the keyset bound also says `started_at <= x`,
///   which the `(started_at, id)` index answers in any collation;
///   timestamps are fixed-width RFC 3339, ordered alike in every collation);
/// - text search: SQLite's trigram index or `LIKE`; on Postgres `ILIKE`
///   with the same escaping (Note \[Text search\]);
/// - the filter form's values: SQLite skips through an index; Postgres
///   reads `DISTINCT` once; both are sorted byte-wise here;
/// - the overview's counts: SQLite's trigger-kept counters when it has
///   them; Postgres (and old SQLite files) count with `GROUP BY`;
/// - what an old read-only SQLite file lacks (heartbeat, feed, output
///   columns) is answered as empty; Postgres has them all.
pub trait Source {
    /// Which backend, and its schema version.
    #[doc(hidden)]
    fn backend(&self) -> Backend;
    /// The rows of `sql` (with `?N` placeholders) as cells.
    ///
    /// # Errors
    /// When the query fails.
    #[doc(hidden)]
    fn cells(&self, sql: &str, args: &[Cell], what: &dyn Fn() -> String) -> Result<Vec<Vec<Cell>>>;
}

impl Source for SqliteStore {
    fn backend(&self) -> Backend {
        Backend::Sqlite {
            version: self.version,
        }
    }

    fn cells(&self, sql: &str, args: &[Cell], what: &dyn Fn() -> String) -> Result<Vec<Vec<Cell>>> {
        let mut stmt = self.connection().prepare_cached(sql).context(what)?;
        let n = stmt.column_count();
        let args = args.iter().map(crate::tx::Arg::from);
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |r| {
                (0..n).map(|i| r.get_ref(i).map(Cell::from)).collect()
            })
            .context(what)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().context(what)
    }
}

impl Source for PgStore {
    fn backend(&self) -> Backend {
        Backend::Postgres {
            version: self.version(),
        }
    }

    fn cells(&self, sql: &str, args: &[Cell], what: &dyn Fn() -> String) -> Result<Vec<Vec<Cell>>> {
        self.query_cells(&crate::tx::dollars(sql), args, what)
    }
}

fn is_pg(store: &dyn Source) -> bool {
    matches!(store.backend(), Backend::Postgres { .. })
}

/// Whether the schema has the native columns (SQLite 6+, Postgres 3+;
/// a Postgres store is always migrated to the latest).
/// Whether the schema counts masked secrets (SQLite 8+).
fn has_secrets(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 8,
        Backend::Postgres { .. } => true,
    }
}

fn has_native(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 6,
        Backend::Postgres { .. } => true,
    }
}

/// Whether the schema has the search tables and indexes (SQLite 7+).
fn has_search(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 7,
        Backend::Postgres { .. } => true,
    }
}

/// Whether the schema has the heartbeat column and the feed (SQLite 2+).
fn has_live(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 2,
        Backend::Postgres { .. } => true,
    }
}

/// `s.id` as ordered and compared (Note \[Queries on both backends\]).
fn id_col(store: &dyn Source) -> &'static str {
    if is_pg(store) {
        "s.id COLLATE \"C\""
    } else {
        "s.id"
    }
}

/// A sum of token counts, saturated to the `i64` range; `NULL` (no rows) is 0.
///
/// Note \[Sums that cannot overflow\]: token counts come from files other
/// programs wrote. Two sessions of 5e18 tokens on one day made SQLite's
/// `+` in the `session_days` trigger turn the day's integer into a REAL
/// (1e19), and the overview failed on it until the store was edited by
/// hand; `SUM` over integers fails outright past `i64::MAX`, and so does
/// Postgres's cast of its `numeric` sum to `BIGINT`. So token sums are
/// summed as `DOUBLE PRECISION` (exact below 2^53 tokens) and read here,
/// where a REAL of any size saturates. Import clamps absurd counts
/// (runtime's Note \[Absurd usage\]), so such sums only come from stores
/// written before that.
fn total(c: &Cell) -> Result<i64> {
    match c {
        Cell::Int(v) => Ok(*v),
        // `as` saturates, and NaN (never a sum) becomes 0.
        #[allow(clippy::cast_possible_truncation)]
        Cell::Real(v) => Ok(*v as i64),
        Cell::Null => Ok(0),
        other @ Cell::Text(_) => Err(bad("a sum of integers", other)),
    }
}

/// The select list of [`Session`]: its stored columns (Note \[One
/// session row\]), then what a read derives, in the order
/// `session_row` reads it; `?1` is the lost cutoff.
fn session_columns(store: &dyn Source) -> String {
    let stored = crate::session::columns::select(|since| match store.backend() {
        Backend::Sqlite { version } => version >= since,
        Backend::Postgres { .. } => true,
    });
    // A read-only store of version 1 has no heartbeat column.
    let hb = if has_live(store) {
        "s.heartbeat_at"
    } else {
        "NULL"
    };
    let secrets = if has_secrets(store) {
        "s.secrets_masked"
    } else {
        "NULL"
    };
    let verdict = stats::verdict_columns(store);
    let placeholder = placeholder_sql(store);
    format!(
        "{stored}, s.status = 'running' AND COALESCE({hb}, s.started_at) < ?1, {secrets},
         {verdict}, {placeholder}"
    )
}

/// Note \[Parents not imported\]: a sub-agent's own file names its parent
/// session; when the parent's file was never imported (deleted, or left
/// out of the import), `save_native` stores a placeholder row for it, as
/// `running`, so the tree holds together. Such a row has no file of its
/// own (`source_path`), no forensic log and no heartbeat, and has an
/// imported child. It is not a run that stopped answering: it is shown as
/// `not_imported`, never `lost`, and it holds no text that was stored
/// unmasked. Read from the row, not written as a status, so the stores
/// that hold such rows already show them right, and importing the parent
/// later (which overwrites the row) ends it.
pub(crate) fn placeholder_sql(store: &dyn Source) -> String {
    if !has_native(store) || !has_live(store) {
        return "1 = 0".to_owned();
    }
    PLACEHOLDER.to_owned()
}

/// [`placeholder_sql`] over `s` on a store with the native columns.
pub(crate) const PLACEHOLDER: &str = "(s.status = 'running' AND s.source_path IS NULL
     AND s.raw_log_path IS NULL AND s.heartbeat_at IS NULL
     AND EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = s.id AND c.source_path IS NOT NULL))";

fn memory_row(r: &[Cell]) -> Result<MemoryRow> {
    Ok(MemoryRow {
        id: int(at(r, 0))?,
        service: opt_text(at(r, 1))?,
        category: text(at(r, 2))?,
        observation: text(at(r, 3))?,
        confidence: real(at(r, 4))?,
        active: flag(at(r, 5))?,
        created_at: text(at(r, 6))?,
        updated_at: text(at(r, 7))?,
        session_id: opt_text(at(r, 8))?,
        tier: opt_int(at(r, 9))?,
    })
}

/// Every row of `sql` shaped by `shape`.
fn shaped<T>(
    store: &dyn Source,
    sql: &str,
    args: &[Cell],
    what: &dyn Fn() -> String,
    shape: fn(&[Cell]) -> Result<T>,
) -> Result<Vec<T>> {
    store
        .cells(sql, args, what)?
        .iter()
        .map(|r| shape(r))
        .collect()
}

const MEMORY_COLUMNS: &str = "id, service, category, observation, confidence, active, created_at, updated_at, session_id, tier";

/// The heartbeat before which a `running` session is lost.
fn lost_cutoff() -> String {
    time::format_ms(time::now_ms().saturating_sub(LOST_AFTER_MS))
}

fn clamp(limit: usize) -> i64 {
    i64::try_from(limit.clamp(1, MAX_LIMIT)).unwrap_or(1)
}

/// The SQL of "this session is lost" over `s`; `?1` is the lost cutoff.
fn lost_sql(store: &dyn Source) -> String {
    let hb = if has_live(store) {
        "s.heartbeat_at"
    } else {
        "NULL"
    };
    format!(
        "s.status = 'running' AND COALESCE({hb}, s.started_at) < ?1 AND NOT {}",
        placeholder_sql(store)
    )
}

/// `text` as a `LIKE` pattern that matches it anywhere, literally: `%`,
/// `_` and the escape character itself lose their meaning.
fn like_anywhere(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// Every memory, active first, then most confident.
///
/// # Errors
/// When the database cannot be read.
pub fn memories(store: &dyn Source) -> Result<Vec<MemoryRow>> {
    shaped(
        store,
        &format!("SELECT {MEMORY_COLUMNS} FROM memories ORDER BY active DESC, confidence DESC, id"),
        &[],
        &|| "listing memories".to_owned(),
        memory_row,
    )
}

/// The highest feed id stored (0 when empty): where a tailer that only
/// wants new rows starts.
///
/// # Errors
/// When the database cannot be read.
pub fn feed_max_id(store: &dyn Source) -> Result<i64> {
    if !has_live(store) {
        return Ok(0);
    }
    store
        .cells(
            "SELECT CAST(COALESCE(MAX(id), 0) AS BIGINT) FROM feed",
            &[],
            &|| "reading the feed's last id".to_owned(),
        )?
        .first()
        .map_or(Ok(0), |r| int(at(r, 0)))
}

#[cfg(test)]
mod tests;
