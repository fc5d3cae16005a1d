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

use crate::error::{Context, Error, Result};
#[doc(hidden)]
pub use crate::rows::Cell;
use crate::{FeedRow, LOST_AFTER_MS, PgStore, SqliteStore, time};

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
    /// A row the store made for a parent whose own file was never imported
    /// (Note \[Parents not imported\]); never `lost`.
    pub not_imported: bool,
    /// What a reader should show: `lost` for a lost session, `not_imported`
    /// for a parent not imported, else `status`.
    pub shown_status: String,
    /// The project the session worked in (a native session's `cwd`).
    pub project: Option<String>,
    /// The git branch the agent reported.
    pub git_branch: Option<String>,
    /// The agent's own version.
    pub agent_version: Option<String>,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: i64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: i64,
    /// `cost_usd` was computed from usage and a price table (shown `est.`).
    pub cost_estimated: bool,
    /// The agent's own session file it was imported from.
    pub source_path: Option<String>,
    /// Secrets masked in its rows; `None`: stored before masking (or with
    /// `--no-mask`), so not counted.
    pub secrets_masked: Option<i64>,
    /// Its final verdict's `valid`; `None`: no verdict (an imported
    /// session, or a run that was not checked), so a list shows no
    /// validation cells for it.
    pub verdict_valid: Option<bool>,
    /// The first error's place in the output (a JSON Pointer) in its
    /// final verdict.
    pub failing_path: Option<String>,
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
    pub session: SessionRow,
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
        use rusqlite::types::ValueRef;
        let mut stmt = self.connection().prepare_cached(sql).context(what)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map(
                rusqlite::params_from_iter(args.iter().map(crate::tx::Arg::from)),
                |r| {
                    (0..n)
                        .map(|i| {
                            Ok(match r.get_ref(i)? {
                                ValueRef::Null => Cell::Null,
                                ValueRef::Integer(v) => Cell::Int(v),
                                ValueRef::Real(v) => Cell::Real(v),
                                ValueRef::Text(t) | ValueRef::Blob(t) => {
                                    Cell::Text(String::from_utf8_lossy(t).into_owned())
                                }
                            })
                        })
                        .collect::<rusqlite::Result<Vec<Cell>>>()
                },
            )
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

/// A cell that does not hold what its column should: a damaged row.
fn bad(what: &str, c: &Cell) -> Error {
    Error::Unexpected {
        what: format!("{what}: unexpected value {c:?}"),
    }
}

pub(crate) fn text(c: &Cell) -> Result<String> {
    match c {
        Cell::Text(s) => Ok(s.clone()),
        other => Err(bad("a text column", other)),
    }
}

pub(crate) fn opt_text(c: &Cell) -> Result<Option<String>> {
    match c {
        Cell::Null => Ok(None),
        other => text(other).map(Some),
    }
}

pub(crate) fn int(c: &Cell) -> Result<i64> {
    match c {
        Cell::Int(v) => Ok(*v),
        other => Err(bad("an integer column", other)),
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

pub(crate) fn opt_int(c: &Cell) -> Result<Option<i64>> {
    match c {
        Cell::Null => Ok(None),
        other => int(other).map(Some),
    }
}

pub(crate) fn real(c: &Cell) -> Result<f64> {
    match c {
        Cell::Real(v) => Ok(*v),
        // SQLite keeps a whole REAL as an integer.
        #[allow(clippy::cast_precision_loss)] // what SQLite itself does
        Cell::Int(v) => Ok(*v as f64),
        other => Err(bad("a real column", other)),
    }
}

fn opt_real(c: &Cell) -> Result<Option<f64>> {
    match c {
        Cell::Null => Ok(None),
        other => real(other).map(Some),
    }
}

pub(crate) fn flag(c: &Cell) -> Result<bool> {
    Ok(int(c)? != 0)
}

/// Cell `i` of a row (a short row is a damaged query, not a panic).
pub(crate) fn at(r: &[Cell], i: usize) -> &Cell {
    r.get(i).unwrap_or(&Cell::Null)
}

/// The select list of [`SessionRow`]; `?1` is the lost cutoff.
fn session_columns(store: &dyn Source) -> String {
    // A read-only store of version 1 has no heartbeat column.
    let hb = if has_live(store) {
        "s.heartbeat_at"
    } else {
        "NULL"
    };
    // A read-only store before version 6 has no native columns.
    let native = if has_native(store) {
        "s.project, s.git_branch, s.agent_version, s.cache_read_tokens, s.cache_write_tokens,
         CASE WHEN s.cost_estimated THEN 1 ELSE 0 END, s.source_path"
    } else {
        "NULL, NULL, NULL, 0, 0, 0, NULL"
    };
    let secrets = if has_secrets(store) {
        "s.secrets_masked"
    } else {
        "NULL"
    };
    let verdict = stats::verdict_columns(store);
    let placeholder = placeholder_sql(store);
    format!(
        "s.id, s.parent_id, s.tier, s.profile, s.agent, s.model, s.status, s.exit_code,
         s.started_at, s.ended_at, s.cost_usd, s.duration_ms, s.num_turns, s.input_tokens,
         s.output_tokens, s.extraction_method, s.error, s.error_category, s.summary,
         s.escalation, s.raw_log_path, {hb},
         s.status = 'running' AND COALESCE({hb}, s.started_at) < ?1, {native}, {secrets},
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

fn session_row(r: &[Cell]) -> Result<SessionRow> {
    let status = text(at(r, 6))?;
    let not_imported = flag(at(r, 33))?;
    let lost = flag(at(r, 22))? && !not_imported;
    Ok(SessionRow {
        id: text(at(r, 0))?,
        parent_id: opt_text(at(r, 1))?,
        tier: int(at(r, 2))?,
        profile: opt_text(at(r, 3))?,
        agent: opt_text(at(r, 4))?,
        model: opt_text(at(r, 5))?,
        shown_status: if lost {
            "lost".to_owned()
        } else if not_imported {
            "not_imported".to_owned()
        } else {
            status.clone()
        },
        status,
        exit_code: opt_int(at(r, 7))?,
        started_at: text(at(r, 8))?,
        ended_at: opt_text(at(r, 9))?,
        cost_usd: opt_real(at(r, 10))?,
        duration_ms: opt_int(at(r, 11))?,
        num_turns: opt_int(at(r, 12))?,
        input_tokens: int(at(r, 13))?,
        output_tokens: int(at(r, 14))?,
        extraction_method: opt_text(at(r, 15))?,
        error: opt_text(at(r, 16))?,
        error_category: opt_text(at(r, 17))?,
        summary: opt_text(at(r, 18))?,
        escalation: opt_text(at(r, 19))?,
        raw_log_path: opt_text(at(r, 20))?,
        heartbeat_at: opt_text(at(r, 21))?,
        lost,
        not_imported,
        project: opt_text(at(r, 23))?,
        git_branch: opt_text(at(r, 24))?,
        agent_version: opt_text(at(r, 25))?,
        cache_read_tokens: int(at(r, 26))?,
        cache_write_tokens: int(at(r, 27))?,
        cost_estimated: flag(at(r, 28))?,
        source_path: opt_text(at(r, 29))?,
        secrets_masked: opt_int(at(r, 30))?,
        verdict_valid: opt_int(at(r, 31))?.map(|v| v != 0),
        failing_path: opt_text(at(r, 32))?,
    })
}

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

/// How many full-text matches the text search takes as "few" (Note
/// \[Text search\]).
pub const FTS_PROBE: i64 = 2_000;

/// Whether a SQLite table (or virtual table) exists: a read-only store of
/// an older version has none of migration 0004's. Postgres has none of
/// them (Note \[One logical schema\]).
fn has_table(store: &dyn Source, name: &str) -> Result<bool> {
    if is_pg(store) {
        return Ok(false);
    }
    let rows = store.cells(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?1)",
        &[Cell::Text(name.to_owned())],
        &|| format!("looking for table `{name}`"),
    )?;
    rows.first().map_or(Ok(false), |r| flag(at(r, 0)))
}

/// `text` as one FTS5 phrase: quoted, inner quotes doubled, so no
/// character of it is FTS5 syntax.
fn fts_phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Whether `q` goes through the trigram index: long enough, the index
/// exists, and it matches fewer than [`FTS_PROBE`] sessions.
fn few_text_matches(store: &dyn Source, q: &str) -> Result<bool> {
    if q.chars().count() < 3 || !has_table(store, "sessions_fts")? {
        return Ok(false);
    }
    let rows = store.cells(
        "SELECT COUNT(*) < ?2 FROM
           (SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?1 LIMIT ?2)",
        &[Cell::Text(fts_phrase(q)), Cell::Int(FTS_PROBE)],
        &|| "searching the sessions' text".to_owned(),
    )?;
    rows.first().map_or(Ok(false), |r| flag(at(r, 0)))
}

/// Note \[One agent, two names\]: runs store the agent as the program
/// they ran (`claude`, `gemini`), imports as the agent's own name
/// (`claude-code`, `gemini-cli`; `usage::agent_name`). A filter by either
/// name finds both, so `?agent=claude` lists the Claude Code sessions.
pub fn agent_names(name: &str) -> Vec<String> {
    let stored = agent_name(name);
    let short = match stored {
        "claude-code" => "claude",
        "gemini-cli" => "gemini",
        other => other,
    };
    let mut out = vec![stored.to_owned()];
    if short != stored {
        out.push(short.to_owned());
    }
    out
}

/// The conditions over `sessions s` that `filter` sets (all but the page:
/// `before` and `limit`), binding their values after `args` (whose `?1`
/// is the lost cutoff).
fn session_conds(
    store: &dyn Source,
    filter: &SessionFilter,
    args: &mut Vec<Cell>,
) -> Result<Vec<String>> {
    let mut bind = |v: Cell| {
        args.push(v);
        format!("?{}", args.len())
    };
    let mut conds: Vec<String> = Vec::new();
    let lost = lost_sql(store);
    match filter.status.as_deref() {
        None => {}
        Some("lost") => conds.push(format!("({lost})")),
        Some("running") => conds.push(format!(
            "s.status = 'running' AND NOT ({lost}) AND NOT {}",
            placeholder_sql(store)
        )),
        Some("not_imported") => conds.push(placeholder_sql(store)),
        Some(st) => conds.push(format!("s.status = {}", bind(Cell::Text(st.to_owned())))),
    }
    if let Some(tier) = filter.tier {
        conds.push(format!("s.tier = {}", bind(Cell::Int(tier))));
    }
    for (col, v) in [
        ("profile", &filter.profile),
        ("error_category", &filter.error_category),
        ("extraction_method", &filter.method),
    ] {
        if let Some(v) = v {
            conds.push(format!("s.{col} = {}", bind(Cell::Text(v.clone()))));
        }
    }
    if let Some(v) = &filter.agent {
        let names: Vec<String> = agent_names(v)
            .into_iter()
            .map(|n| bind(Cell::Text(n)))
            .collect();
        conds.push(format!("s.agent IN ({})", names.join(", ")));
    }
    if let Some(v) = &filter.from {
        conds.push(format!("s.started_at >= {}", bind(Cell::Text(v.clone()))));
    }
    if let Some(v) = &filter.to {
        conds.push(format!("s.started_at < {}", bind(Cell::Text(v.clone()))));
    }
    if let Some(v) = &filter.project {
        if has_native(store) {
            conds.push(format!("s.project = {}", bind(Cell::Text(v.clone()))));
        } else {
            // An old read-only file has no project: nothing matches.
            conds.push("1 = 0".to_owned());
        }
    }
    if let Some(v) = filter.verdict.as_deref() {
        conds.push(stats::verdict_sql(store, v));
    }
    if let Some(p) = &filter.failing_path {
        let p = bind(Cell::Text(p.clone()));
        conds.push(stats::failing_path_sql(store, &p));
    }
    if let Some(q) = filter.q.as_deref() {
        if few_text_matches(store, q)? {
            let m = bind(Cell::Text(fts_phrase(q)));
            conds.push(format!(
                "s.rowid IN (SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH {m})"
            ));
        } else {
            let p = bind(Cell::Text(like_anywhere(q)));
            let like = if is_pg(store) { "ILIKE" } else { "LIKE" };
            conds.push(format!(
                "(s.id {like} {p} ESCAPE '\\' OR s.summary {like} {p} ESCAPE '\\' \
                 OR s.error {like} {p} ESCAPE '\\' OR s.agent {like} {p} ESCAPE '\\' \
                 OR s.model {like} {p} ESCAPE '\\')"
            ));
        }
    }
    Ok(conds)
}

/// Sessions newest first (Note \[Keyset pages\]), filtered.
///
/// Note \[List indexes\]: every equality filter has an index whose
/// columns after it are the list order, `(x, started_at, id)` (migration
/// 0004), so a filtered page is a walk down one index from the keyset
/// bound that stops after `limit` rows: first and deep pages cost the same.
/// With several filters SQLite walks the index of one and checks the
/// others on the rows it meets. The SQL is built for the filters given
/// (never `?n IS NULL OR ...`, which hides the index from the planner); the
/// values are always bound, never spliced. The agent and project filters
/// (migration 0006, Postgres 3) have theirs on both backends. (On
/// Postgres only the list order, status, agent and project have such
/// indexes; Note \[One logical schema\].)
///
/// Note \[Text search\]: `q` is a case-insensitive substring of the id,
/// summary, error, agent or model. Two ways to find it, chosen per query:
/// - a trigram full-text index (`sessions_fts`, migration 0004) answers
///   "which sessions hold this text" without reading them, for text of 3
///   characters or more. It is asked first for at most [`FTS_PROBE`]
///   matches; when there are fewer, the page is those rows, sorted: a
///   search that matches little costs next to nothing at any size.
/// - when the text is common (the probe fills up), shorter than a
///   trigram, or the store has no index (an old read-only file), the list
///   is walked in order with `LIKE` (`%` and `_` escaped) and the walk
///   stops at the page's end: common text is met early. This is the only
///   scan left; a 1-2 character text that matches almost nothing reads
///   the whole table (measured in `benches/lists.rs`).
/// - on Postgres, always the walk, with `ILIKE` and the same escaping.
///
/// All ignore ASCII case; the trigram index (and `ILIKE` in a database
/// whose character type is not `C`) also folds the case of other scripts,
/// `LIKE` does not.
///
/// # Errors
/// When the database cannot be read.
pub fn sessions(store: &dyn Source, filter: &SessionFilter) -> Result<Vec<SessionRow>> {
    let ctx = || "listing sessions".to_owned();
    let mut args: Vec<Cell> = vec![Cell::Text(lost_cutoff())];
    let mut conds = session_conds(store, filter, &mut args)?;
    if filter.top_level {
        conds.push(nested::top_level_sql(&conds));
    }
    let mut bind = |v: Cell| {
        args.push(v);
        format!("?{}", args.len())
    };
    let id = id_col(store);
    if let Some(before) = filter.before.as_deref() {
        let found = store.cells(
            "SELECT started_at FROM sessions WHERE id = ?1",
            &[Cell::Text(before.to_owned())],
            &ctx,
        )?;
        let Some(at_) = found.first().map(|r| text(at(r, 0))).transpose()? else {
            return Ok(Vec::new());
        };
        let a = bind(Cell::Text(at_));
        let b = bind(Cell::Text(before.to_owned()));
        if is_pg(store) {
            conds.push(format!(
                "s.started_at <= {a} AND (s.started_at, {id}) < ({a}, {b})"
            ));
        } else {
            conds.push(format!("(s.started_at, s.id) < ({a}, {b})"));
        }
    }
    let limit = bind(Cell::Int(clamp(filter.limit)));
    let where_sql = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    let sql = format!(
        "SELECT {} FROM sessions s {where_sql}
         ORDER BY s.started_at DESC, {id} DESC LIMIT {limit}",
        session_columns(store)
    );
    shaped(store, &sql, &args, &ctx, session_row)
}

/// What the sessions a [`SessionFilter`] names add up to (all of them,
/// not one page), besides their model calls.
///
/// Note \[Totals of a list\]: a session with rows in `usage_calls` (an
/// import) is counted from its calls ([`session_usage_calls`], priced
/// per call in core, so a partial cost shows as partial); one without
/// (a run, or a session imported before calls were kept) from the
/// tokens and cost stored on its row. The two parts never overlap.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionTotals {
    /// Sessions matched.
    pub sessions: i64,
    /// Of them, those counted from their calls: those with calls stored,
    /// and any import when the store keeps calls at all.
    pub with_calls: i64,
    /// The others' stored tokens: input, output, cache reads and writes.
    pub other_tokens: i64,
    /// The others' stored cost.
    pub other_cost_usd: f64,
    /// Of the others, those with tokens but no cost: their cost is not
    /// known, so a sum including them is partial.
    pub other_unpriced: i64,
}

/// The `WHERE` of a query over `sessions s` with `conds`. `?1` (the lost
/// cutoff, bound first for the status filter) is named even when no
/// condition uses it: both backends refuse an argument the SQL lacks.
fn where_with_cutoff(conds: &[String]) -> String {
    let mut all = vec!["CAST(?1 AS TEXT) IS NOT NULL".to_owned()];
    all.extend(conds.iter().cloned());
    format!("WHERE {}", all.join(" AND "))
}

/// The totals of the sessions `filter` names (its `before` and `limit`
/// ignored; Note \[Totals of a list\]).
///
/// # Errors
/// When the database cannot be read.
pub fn session_totals(store: &dyn Source, filter: &SessionFilter) -> Result<SessionTotals> {
    let mut args: Vec<Cell> = vec![Cell::Text(lost_cutoff())];
    let conds = session_conds(store, filter, &mut args)?;
    // An imported session without calls of its own (a resumed session's
    // copy, whose calls the first file stored) is counted from calls too:
    // its stored cost would count them twice. Only a store with no calls
    // at all (imported before they were kept) counts imports by their rows.
    let has = if usage::has_usage(store) {
        "(EXISTS (SELECT 1 FROM usage_calls u WHERE u.session_id = s.id)
          OR (s.source_path IS NOT NULL AND EXISTS (SELECT 1 FROM usage_calls)))"
    } else {
        "1 = 0"
    };
    let cache = if has_native(store) {
        "s.cache_read_tokens + s.cache_write_tokens"
    } else {
        "0"
    };
    // Postgres sums integers as numeric: cast back to what the reader takes.
    let (big, dbl) = if is_pg(store) {
        ("BIGINT", "DOUBLE PRECISION")
    } else {
        ("INTEGER", "REAL")
    };
    let sql = format!(
        "SELECT COUNT(*),
                CAST(COALESCE(SUM(CASE WHEN {has} THEN 1 ELSE 0 END), 0) AS {big}),
                COALESCE(SUM(CASE WHEN {has} THEN 0
                     ELSE CAST(s.input_tokens AS {dbl}) + s.output_tokens + {cache} END), 0),
                CAST(COALESCE(SUM(CASE WHEN {has} THEN 0 ELSE COALESCE(s.cost_usd, 0) END), 0)
                     AS {dbl}),
                CAST(COALESCE(SUM(CASE WHEN NOT {has} AND s.cost_usd IS NULL
                     AND (s.input_tokens > 0 OR s.output_tokens > 0) THEN 1 ELSE 0 END), 0) AS {big})
         FROM sessions s {}",
        where_with_cutoff(&conds)
    );
    let rows = store.cells(&sql, &args, &|| "totalling sessions".to_owned())?;
    let Some(r) = rows.first() else {
        return Ok(SessionTotals::default());
    };
    Ok(SessionTotals {
        sessions: int(at(r, 0))?,
        with_calls: int(at(r, 1))?,
        other_tokens: total(at(r, 2))?,
        other_cost_usd: real(at(r, 3))?,
        other_unpriced: int(at(r, 4))?,
    })
}

/// The model calls of the sessions `filter` names (its `before` and
/// `limit` ignored), in time order: each session's own calls, for the
/// list's per-row figures and its total (Note \[Totals of a list\]).
///
/// # Errors
/// When the database cannot be read.
pub fn session_usage_calls(
    store: &dyn Source,
    filter: &SessionFilter,
) -> Result<Vec<agentshape_core::usage::UsageCall>> {
    if !usage::has_usage(store) {
        return Ok(Vec::new());
    }
    let mut args: Vec<Cell> = vec![Cell::Text(lost_cutoff())];
    let conds = session_conds(store, filter, &mut args)?;
    let sql = format!(
        "{} WHERE u.session_id IN (SELECT s.id FROM sessions s {})
         ORDER BY u.at_ms, u.key",
        usage::CALLS,
        where_with_cutoff(&conds)
    );
    usage::read_calls(store, &sql, &args)
}

/// The values stored in the filterable columns, for the filter form's
/// selects: a handful each, read by skipping through each column's index
/// (one index seek per distinct value, not a scan).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FilterValues {
    /// Stored statuses (plus `lost`, always offered).
    pub statuses: Vec<String>,
    /// Stored tiers.
    pub tiers: Vec<i64>,
    /// Stored profiles.
    pub profiles: Vec<String>,
    /// Stored error categories.
    pub error_categories: Vec<String>,
    /// Stored extraction methods.
    pub methods: Vec<String>,
    /// Stored agents.
    pub agents: Vec<String>,
    /// Stored projects.
    pub projects: Vec<String>,
}

/// At most this many distinct values per column: a column with more is
/// offered as free text, not a select.
pub const MAX_DISTINCT: usize = 50;

/// The distinct values of one column, smallest (byte-wise) first, at most
/// [`MAX_DISTINCT`] + 1 (so a caller can tell "more").
fn distinct(store: &dyn Source, col: &str) -> Result<Vec<Cell>> {
    let ctx = || format!("reading the distinct values of `{col}`");
    let most = i64::try_from(MAX_DISTINCT).unwrap_or(50);
    if is_pg(store) {
        // No index per column on Postgres to skip through: one pass.
        let sql = format!("SELECT DISTINCT {col} FROM sessions WHERE {col} IS NOT NULL");
        let mut values: Vec<Cell> = store
            .cells(&sql, &[], &ctx)?
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect();
        values.sort_by(|a, b| match (a, b) {
            (Cell::Int(x), Cell::Int(y)) => x.cmp(y),
            (Cell::Text(x), Cell::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
            _ => std::cmp::Ordering::Equal,
        });
        values.truncate(MAX_DISTINCT + 1);
        return Ok(values);
    }
    // A skip scan written out: each step is one seek in the column's index.
    let sql = format!(
        "WITH RECURSIVE v(x, n) AS (
            SELECT (SELECT MIN({col}) FROM sessions), 0
            UNION ALL
            SELECT (SELECT MIN({col}) FROM sessions WHERE {col} > v.x), n + 1
            FROM v WHERE v.x IS NOT NULL AND n < ?1)
         SELECT x FROM v WHERE x IS NOT NULL"
    );
    Ok(store
        .cells(&sql, &[Cell::Int(most)], &ctx)?
        .into_iter()
        .filter_map(|r| r.into_iter().next())
        .collect())
}

fn texts(cells: &[Cell]) -> Result<Vec<String>> {
    cells.iter().map(text).collect()
}

/// The values the filter form offers (see [`FilterValues`]).
///
/// # Errors
/// When the database cannot be read.
pub fn filter_values(store: &dyn Source) -> Result<FilterValues> {
    let mut statuses = texts(&distinct(store, "status")?)?;
    if !statuses.iter().any(|s| s == "lost") {
        statuses.push("lost".to_owned());
        statuses.sort();
    }
    Ok(FilterValues {
        statuses,
        tiers: distinct(store, "tier")?
            .iter()
            .map(int)
            .collect::<Result<_>>()?,
        profiles: texts(&distinct(store, "profile")?)?,
        error_categories: texts(&distinct(store, "error_category")?)?,
        methods: texts(&distinct(store, "extraction_method")?)?,
        agents: texts(&distinct(store, "agent")?)?,
        projects: if has_native(store) {
            texts(&distinct(store, "project")?)?
        } else {
            Vec::new()
        },
    })
}

/// One session with its events, services and memories; `None` when unknown.
///
/// # Errors
/// When the database cannot be read.
pub fn session(store: &dyn Source, id: &str) -> Result<Option<SessionDetail>> {
    let ctx = || format!("reading session `{id}`");
    let sql = format!(
        "SELECT {} FROM sessions s WHERE s.id = ?2",
        session_columns(store)
    );
    let key = Cell::Text(id.to_owned());
    let found = shaped(
        store,
        &sql,
        &[Cell::Text(lost_cutoff()), key.clone()],
        &ctx,
        session_row,
    )?;
    let Some(session) = found.into_iter().next() else {
        return Ok(None);
    };
    let events = shaped(
        store,
        "SELECT id, session_id, level, service, message, created_at FROM events
         WHERE session_id = ?1 ORDER BY id",
        std::slice::from_ref(&key),
        &ctx,
        event_row,
    )?;
    let services = shaped(
        store,
        "SELECT name, status, detail FROM services_checked WHERE session_id = ?1 ORDER BY id",
        std::slice::from_ref(&key),
        &ctx,
        |r| {
            Ok(ServiceRow {
                name: text(at(r, 0))?,
                status: text(at(r, 1))?,
                detail: opt_text(at(r, 2))?,
            })
        },
    )?;
    let memories = shaped(
        store,
        &format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE session_id = ?1 ORDER BY id"),
        std::slice::from_ref(&key),
        &ctx,
        memory_row,
    )?;
    let (output, verdict) = output_and_verdict(store, id)?;
    let children = children(store, id)?;
    let tree = tree(store, &children)?;
    let usage_only = has_table(store, "usage_files")?
        && !shaped(
            store,
            "SELECT 1 FROM usage_files WHERE session_id = ?1 LIMIT 1",
            std::slice::from_ref(&key),
            &ctx,
            |_| Ok(()),
        )?
        .is_empty();
    let models = usage::session_models(store, id)?;
    Ok(Some(SessionDetail {
        session,
        events,
        services,
        memories,
        output,
        verdict,
        children,
        tree,
        usage_only,
        models,
    }))
}

/// Every session below one whose children are `children` (Note \[Session
/// tree\]).
///
/// Note \[Session tree\]: a session's sub-agents and escalations are
/// sessions whose `parent_id` names it (an imported sub-agent's parent is
/// the session that started it; a sub-agent may start its own). The tree
/// is read one level at a time through `sessions_parent`, one query per
/// session that has children, and stops at [`MAX_TREE`] sessions or
/// [`MAX_TREE_DEPTH`] levels: a page stays bounded whatever the store
/// holds, and a cycle (a hand-edited store) cannot loop.
fn tree(store: &dyn Source, children: &[SessionRow]) -> Result<Vec<TreeNode>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Depth-first with an explicit stack: (depth, session), last pushed first.
    let mut stack: Vec<(usize, SessionRow)> =
        children.iter().rev().map(|c| (1, c.clone())).collect();
    while let Some((depth, s)) = stack.pop() {
        if out.len() >= MAX_TREE {
            break;
        }
        if !seen.insert(s.id.clone()) {
            continue;
        }
        if depth < MAX_TREE_DEPTH {
            let below = self::children(store, &s.id)?;
            stack.extend(below.into_iter().rev().map(|c| (depth + 1, c)));
        }
        out.push(TreeNode { depth, session: s });
    }
    Ok(out)
}

/// The stored `output` and `verdict` of a session. A read-only store older
/// than version 3 has no such columns: both `None`. Text that is not JSON
/// (written by hand, or damaged) is `None` too: a reader shows "no output"
/// rather than failing the whole page.
fn output_and_verdict(store: &dyn Source, id: &str) -> Result<(Option<Value>, Option<Value>)> {
    if matches!(store.backend(), Backend::Sqlite { version } if version < 3) {
        return Ok((None, None));
    }
    let ctx = || format!("reading the output of session `{id}`");
    let rows = store.cells(
        "SELECT output, verdict FROM sessions WHERE id = ?1",
        &[Cell::Text(id.to_owned())],
        &ctx,
    )?;
    let parse = |c: &Cell| match c {
        Cell::Text(t) => serde_json::from_str::<Value>(t).ok(),
        _ => None,
    };
    Ok(rows
        .first()
        .map_or((None, None), |r| (parse(at(r, 0)), parse(at(r, 1)))))
}

/// The sessions whose parent is `id`, oldest first (index `sessions_parent`).
fn children(store: &dyn Source, id: &str) -> Result<Vec<SessionRow>> {
    let ctx = || format!("reading the children of session `{id}`");
    let sql = format!(
        "SELECT {} FROM sessions s WHERE s.parent_id = ?2 ORDER BY s.started_at, {} LIMIT ?3",
        session_columns(store),
        id_col(store)
    );
    shaped(
        store,
        &sql,
        &[
            Cell::Text(lost_cutoff()),
            Cell::Text(id.to_owned()),
            Cell::Int(clamp(MAX_LIMIT)),
        ],
        &ctx,
        session_row,
    )
}

/// One session's feed rows with an id greater than `after`, in id order, at
/// most `limit` (clamped to 1..=[`MAX_FEED_LIMIT`]); index `feed_session`.
/// Empty for a store without a feed (version 1) or an unknown session.
///
/// # Errors
/// When the database cannot be read.
pub fn feed_for_session(
    store: &dyn Source,
    id: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<FeedRow>> {
    if !has_live(store) {
        return Ok(Vec::new());
    }
    let ctx = || format!("reading the feed of session `{id}`");
    let limit = i64::try_from(limit.clamp(1, MAX_FEED_LIMIT)).unwrap_or(1);
    shaped(
        store,
        "SELECT id, session_id, kind, body, created_at FROM feed
         WHERE session_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        &[
            Cell::Text(id.to_owned()),
            Cell::Int(after),
            Cell::Int(limit),
        ],
        &ctx,
        |r| {
            Ok(FeedRow {
                id: int(at(r, 0))?,
                session_id: text(at(r, 1))?,
                kind: text(at(r, 2))?,
                body: text(at(r, 3))?,
                created_at: text(at(r, 4))?,
            })
        },
    )
}

fn event_row(r: &[Cell]) -> Result<EventRow> {
    Ok(EventRow {
        id: int(at(r, 0))?,
        session_id: text(at(r, 1))?,
        level: text(at(r, 2))?,
        service: opt_text(at(r, 3))?,
        message: text(at(r, 4))?,
        created_at: text(at(r, 5))?,
    })
}

/// The newest events, newest first, of one level or all; with `after`,
/// only events stored after that event id (a live page asks for what it
/// has not shown yet).
///
/// # Errors
/// When the database cannot be read.
pub fn events(
    store: &dyn Source,
    level: Option<&str>,
    after: Option<i64>,
    limit: usize,
) -> Result<Vec<EventRow>> {
    let ctx = || "listing events".to_owned();
    let after = Cell::Int(after.unwrap_or(-1));
    let limit = Cell::Int(clamp(limit));
    // Index `events_level (level, id)` for a level, the rowid otherwise.
    match level {
        Some(l) => shaped(
            store,
            "SELECT id, session_id, level, service, message, created_at FROM events
             WHERE level = ?1 AND id > ?2 ORDER BY id DESC LIMIT ?3",
            &[Cell::Text(l.to_owned()), after, limit],
            &ctx,
            event_row,
        ),
        None => shaped(
            store,
            "SELECT id, session_id, level, service, message, created_at FROM events
             WHERE id > ?1 ORDER BY id DESC LIMIT ?2",
            &[after, limit],
            &ctx,
            event_row,
        ),
    }
}

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
    pub costliest: Vec<SessionRow>,
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

const DAY_MS: i64 = 86_400_000;

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
fn days_by(store: &dyn Source, what: &'static str, first: &str) -> Result<Vec<KeyDay>> {
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
fn pg_days_by(store: &dyn Source, first: &str) -> Result<(Vec<KeyDay>, Vec<KeyDay>)> {
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
fn tool_errors(store: &dyn Source) -> Result<Vec<ToolTotal>> {
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
fn costliest(store: &dyn Source) -> Result<Vec<SessionRow>> {
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

/// One feed row whose text holds what was searched (Note \[Transcript
/// search\]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptHit {
    /// The feed row: the session page's row `row-<feed_id>`.
    pub feed_id: i64,
    /// Its session.
    pub session_id: String,
    /// The event type: `text`, `user_text` or `tool_use`.
    pub kind: String,
    /// The line of the agent's own file it came from, for an imported
    /// session.
    pub line: Option<i64>,
    /// When it was written (the line's own time, for an import).
    pub created_at: String,
    /// Its session's project.
    pub project: Option<String>,
    /// Its session's parent (the session that started a sub-agent).
    pub parent_id: Option<String>,
    /// Up to [`SNIPPET_CHARS`] characters before the hit.
    pub before: String,
    /// The hit (the text as written; on Postgres the first word found, or
    /// empty when it cannot be placed).
    pub hit: String,
    /// Up to [`SNIPPET_CHARS`] characters after it.
    pub after: String,
}

/// Characters of context each side of a transcript hit.
pub const SNIPPET_CHARS: usize = 80;

/// The most transcript hits one search returns.
pub const MAX_HITS: usize = 100;

/// The words of `q` as a Postgres `tsquery`, each a prefix (`jelly:*`),
/// all required; only letters and digits, so nothing in it is syntax.
/// `None` when `q` has no word.
fn ts_prefixes(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("{}:*", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

/// `text` around the first place `q` is found (ignoring case), else around
/// the first word of `q` found, else its start.
fn snippet(text: &str, q: &str) -> (String, String, String) {
    let chars: Vec<char> = text.chars().collect();
    let fold = |c: &char| c.to_lowercase().next().unwrap_or(*c);
    let hay: Vec<char> = chars.iter().map(fold).collect();
    let find = |needle: &str| -> Option<(usize, usize)> {
        let n: Vec<char> = needle.chars().map(|c| fold(&c)).collect();
        if n.is_empty() || n.len() > hay.len() {
            return None;
        }
        (0..=hay.len() - n.len())
            .find(|&i| hay[i..i + n.len()] == n[..])
            .map(|i| (i, n.len()))
    };
    let found = find(q).or_else(|| {
        q.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .find_map(find)
    });
    let (start, len) = found.unwrap_or((0, 0));
    let from = start.saturating_sub(SNIPPET_CHARS);
    let to = (start + len + SNIPPET_CHARS).min(chars.len());
    let mut before: String = chars[from..start].iter().collect();
    if from > 0 {
        before.insert(0, '…');
    }
    let hit: String = chars[start..start + len].iter().collect();
    let mut after: String = chars[start + len..to].iter().collect();
    if to < chars.len() {
        after.push('…');
    }
    (before, hit, after)
}

/// Feed rows whose transcript text holds `q`, newest line first (Note
/// \[Hits in time order\]), at most `limit` (clamped to 1..=[`MAX_HITS`]);
/// [`search_hits`] with no filter.
///
/// Note \[Transcript search\]: what a person reads as the conversation
/// is searched, not only the sessions' summaries: the text of `text` and
/// `user_text` events and the names of the tools called (`tool_use`), in
/// the feed rows of every session, run or imported.
/// - SQLite (version 7): `feed_fts`, a trigram FTS5 table filled by a
///   trigger on every feed insert (and emptied by one on delete), so `q`
///   is a substring of 3 characters or more, any case; the matching
///   rows are read through it, then ordered by time (Note \[Hits in time
///   order\]). Shorter text finds nothing here (the sessions' own search
///   still runs).
/// - Postgres: its own full-text search over the same text
///   (`to_tsvector('simple', agentshape_feed_text(kind, body))`, a GIN
///   index), words lowercased: every word of `q` must begin a word of the
///   text (`jelly` finds `Jellyfin`, `fin` does not).
/// - an older read-only SQLite file has no index: nothing is found.
///
/// # Errors
/// When the database cannot be read.
pub fn search_transcripts(store: &dyn Source, q: &str, limit: usize) -> Result<Vec<TranscriptHit>> {
    Ok(search_hits(store, q, &SessionFilter::default(), None, limit)?.hits)
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
mod tests {
    #![allow(clippy::unwrap_used)]
    // Table tests read better with their helpers beside them.
    #![allow(clippy::items_after_statements, clippy::unnecessary_wraps)]
    use super::*;
    use crate::{NewEvent, SessionRecord, Store};

    mod sessions {
        use crate::SessionRecord;
        include!("../tests/support/sessions.rs");
    }

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
                    ..SessionFilter::default()
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
        assert_eq!(events(&store, Some("info"), None, 3).unwrap().len(), 3);
        assert!(
            events(&store, Some("critical"), None, 3)
                .unwrap()
                .is_empty()
        );
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
                    ..SessionFilter::default()
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

    /// A store of the shared known sessions for the filter tables, and two
    /// running ones.
    fn filter_store() -> SqliteStore {
        let mut store = SqliteStore::open_in_memory().unwrap();
        for spec in sessions::SPECS {
            store.write_session(&sessions::record(spec)).unwrap();
        }
        // A running session long stale (lost), and one fresh (running).
        let mut lost = SessionRecord::new("b-lost", "2025-07-14T03:08:00.000Z", "running");
        lost.profile = Some("claude-ops".to_owned());
        store.start_session(&lost).unwrap();
        let fresh = SessionRecord::new("b-run", &time::now(), "running");
        store.start_session(&fresh).unwrap();
        store
    }

    fn ids(store: &SqliteStore, filter: &SessionFilter) -> Vec<String> {
        sessions(store, filter)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect()
    }

    fn f() -> SessionFilter {
        SessionFilter {
            limit: 100,
            ..SessionFilter::default()
        }
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn each_filter_alone_and_combined() {
        let store = filter_store();
        let cases: Vec<(&str, SessionFilter, Vec<&str>)> = vec![
            (
                "none",
                f(),
                vec!["b-run", "b-lost", "a7", "a6", "a5", "a4", "a3", "a2", "a1"],
            ),
            (
                "status",
                SessionFilter {
                    status: some("completed"),
                    ..f()
                },
                vec!["a7", "a5", "a3", "a1"],
            ),
            (
                "lost",
                SessionFilter {
                    status: some("lost"),
                    ..f()
                },
                vec!["b-lost"],
            ),
            (
                "running",
                SessionFilter {
                    status: some("running"),
                    ..f()
                },
                vec!["b-run"],
            ),
            (
                "unknown status",
                SessionFilter {
                    status: some("nope"),
                    ..f()
                },
                vec![],
            ),
            (
                "tier",
                SessionFilter {
                    tier: Some(2),
                    ..f()
                },
                vec!["a4", "a3"],
            ),
            (
                "profile",
                SessionFilter {
                    profile: some("claude-loop"),
                    ..f()
                },
                vec!["a3"],
            ),
            (
                "category",
                SessionFilter {
                    error_category: some("rate_limit"),
                    ..f()
                },
                vec!["a6", "a2"],
            ),
            (
                "method",
                SessionFilter {
                    method: some("markers+handoff"),
                    ..f()
                },
                vec!["a4"],
            ),
            (
                "q summary any case",
                SessionFilter {
                    q: some("jellyfin"),
                    ..f()
                },
                vec!["a7", "a3"],
            ),
            (
                "q id",
                SessionFilter {
                    q: some("A5"),
                    ..f()
                },
                vec!["a5"],
            ),
            (
                "q error",
                SessionFilter {
                    q: some("too many"),
                    ..f()
                },
                vec!["a6", "a2"],
            ),
            (
                "q agent",
                SessionFilter {
                    q: some("codex"),
                    ..f()
                },
                vec!["a3"],
            ),
            (
                "q model",
                SessionFilter {
                    q: some("model-replay"),
                    ..f()
                },
                vec!["a5"],
            ),
            (
                "q percent is literal",
                SessionFilter {
                    q: some("50%"),
                    ..f()
                },
                vec!["a5"],
            ),
            (
                "q underscore is literal",
                SessionFilter {
                    q: some("e_o"),
                    ..f()
                },
                vec!["a5"],
            ),
            (
                "q one char",
                SessionFilter {
                    q: some("%"),
                    ..f()
                },
                vec!["a5"],
            ),
            (
                "q none",
                SessionFilter {
                    q: some("zzz"),
                    ..f()
                },
                vec![],
            ),
            (
                "q with FTS5 syntax is text",
                SessionFilter {
                    q: some("\"x\" OR NEAR(a*"),
                    ..f()
                },
                vec![],
            ),
            (
                "status+tier",
                SessionFilter {
                    status: some("completed"),
                    tier: Some(1),
                    ..f()
                },
                vec!["a7", "a1"],
            ),
            (
                "status+profile+method",
                SessionFilter {
                    status: some("completed"),
                    profile: some("claude-ops"),
                    method: some("structured"),
                    ..f()
                },
                vec!["a7", "a1"],
            ),
            (
                "category+tier",
                SessionFilter {
                    error_category: some("rate_limit"),
                    tier: Some(3),
                    ..f()
                },
                vec!["a6"],
            ),
            (
                "lost+profile",
                SessionFilter {
                    status: some("lost"),
                    profile: some("claude-ops"),
                    ..f()
                },
                vec!["b-lost"],
            ),
            (
                "q+status",
                SessionFilter {
                    q: some("claude"),
                    status: some("error"),
                    ..f()
                },
                vec!["a6", "a2"],
            ),
            (
                "all six",
                SessionFilter {
                    status: some("completed"),
                    tier: Some(1),
                    profile: some("claude-ops"),
                    error_category: None,
                    method: some("structured"),
                    q: some("healthy"),
                    ..f()
                },
                vec!["a1"],
            ),
        ];
        // The same answers through the trigram index and through the scan
        // (a store without the index, as an old read-only file is).
        let scan = filter_store();
        scan.connection()
            .execute_batch("DROP TABLE sessions_fts")
            .unwrap();
        for (name, filter, want) in cases {
            assert_eq!(ids(&store, &filter), want, "{name}");
            assert_eq!(ids(&scan, &filter), want, "{name}, scanned");
        }
    }

    /// The triggers keep the text index and the overview's counters equal
    /// to what the tables hold, through start, finish and delete.
    #[test]
    fn the_text_index_and_the_counters_follow_every_write() {
        let mut store = filter_store();
        let mut rec = SessionRecord::new("zz", &time::now(), "running");
        store.start_session(&rec).unwrap();
        let q = |q: &str| ids(&store, &SessionFilter { q: some(q), ..f() });
        assert!(q("zebra").is_empty());
        rec.status = "completed".into();
        rec.summary = Some("A Zebra crossing".into());
        rec.cost_usd = Some(0.25);
        rec.input_tokens = 10;
        rec.events.push(NewEvent {
            level: "warning".into(),
            service: None,
            message: "x".into(),
        });
        store.write_session(&rec).unwrap();
        let q = |q: &str| ids(&store, &SessionFilter { q: some(q), ..f() });
        assert_eq!(q("zebra"), ["zz"]);
        store
            .connection()
            .execute_batch(
                "DELETE FROM events WHERE session_id = 'a1'; DELETE FROM sessions WHERE id = 'a1'",
            )
            .unwrap();
        assert!(q("all healthy").is_empty());
        let c = store.connection();
        let check = |counted: &str, truth: &str| {
            let read = |sql: &str| -> Vec<(String, String)> {
                c.prepare(sql)
                    .unwrap()
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            };
            assert_eq!(read(counted), read(truth), "{counted}");
        };
        check(
            "SELECT key, CAST(n AS TEXT) FROM list_counts WHERE what = 'status' AND n > 0 ORDER BY key",
            "SELECT status, CAST(COUNT(*) AS TEXT) FROM sessions GROUP BY status ORDER BY status",
        );
        check(
            "SELECT key, CAST(n AS TEXT) FROM list_counts WHERE what = 'level' AND n > 0 ORDER BY key",
            "SELECT level, CAST(COUNT(*) AS TEXT) FROM events GROUP BY level ORDER BY level",
        );
        check(
            "SELECT day, sessions || ' ' || cost_usd || ' ' || input_tokens || ' ' || output_tokens
             FROM session_days WHERE sessions > 0 ORDER BY day",
            "SELECT substr(started_at, 1, 10) AS d, COUNT(*) || ' ' || COALESCE(SUM(cost_usd), 0.0)
                    || ' ' || SUM(input_tokens) || ' ' || SUM(output_tokens)
             FROM sessions GROUP BY d ORDER BY d",
        );
    }

    #[test]
    fn pages_with_filters_walk_the_filtered_list_once() {
        let store = filter_store();
        let filters = [
            f(),
            SessionFilter {
                status: some("completed"),
                ..f()
            },
            SessionFilter {
                profile: some("claude-ops"),
                ..f()
            },
            SessionFilter {
                q: some("claude"),
                ..f()
            },
            SessionFilter {
                tier: Some(1),
                status: some("completed"),
                ..f()
            },
        ];
        for filter in filters {
            let all = ids(&store, &filter);
            for size in 1..=3 {
                let mut walked = Vec::new();
                let mut before = None;
                loop {
                    let page = ids(
                        &store,
                        &SessionFilter {
                            limit: size,
                            before: before.clone(),
                            ..filter.clone()
                        },
                    );
                    walked.extend(page.iter().cloned());
                    if page.len() < size {
                        break;
                    }
                    before = page.last().cloned();
                }
                assert_eq!(walked, all, "{filter:?} by {size}");
            }
        }
        assert!(
            ids(
                &store,
                &SessionFilter {
                    before: some("nope"),
                    ..f()
                }
            )
            .is_empty()
        );
    }

    #[test]
    fn filter_values_are_the_stored_ones() {
        let store = filter_store();
        let v = filter_values(&store).unwrap();
        assert_eq!(
            v.statuses,
            ["completed", "error", "failed", "lost", "running"]
        );
        assert_eq!(v.tiers, [1, 2, 3]);
        assert_eq!(v.profiles, ["claude-loop", "claude-ops", "code-review"]);
        assert_eq!(v.error_categories, ["max_turns", "rate_limit"]);
        assert_eq!(v.methods, ["fenced", "markers+handoff", "structured"]);
    }

    #[test]
    fn events_after_an_id_are_only_the_newer_ones() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let mut rec = SessionRecord::new("s", "2025-07-14T03:12:00.000Z", "completed");
        for (i, level) in ["info", "warning", "critical", "info"].iter().enumerate() {
            rec.events.push(NewEvent {
                level: (*level).into(),
                service: None,
                message: format!("m{i}"),
            });
        }
        store.write_session(&rec).unwrap();
        let msgs = |level: Option<&str>, after: Option<i64>| {
            events(&store, level, after, 10)
                .unwrap()
                .into_iter()
                .map(|e| e.message)
                .collect::<Vec<_>>()
        };
        let all = events(&store, None, None, 10).unwrap();
        assert_eq!(msgs(None, None), ["m3", "m2", "m1", "m0"]);
        let second = all[2].id;
        assert_eq!(msgs(None, Some(second)), ["m3", "m2"]);
        assert_eq!(msgs(Some("info"), Some(second)), ["m3"]);
        assert_eq!(msgs(Some("info"), None), ["m3", "m0"]);
        assert!(msgs(None, Some(all[0].id)).is_empty());
    }

    /// Issue 40 §4: two sessions of 5e18 input tokens on one day made the
    /// day's counter a REAL (SQLite's `+` past `i64::MAX`) and the overview
    /// an error until the store was edited by hand. Every sum saturates.
    #[test]
    fn token_sums_past_i64_max_saturate_instead_of_failing() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let now = 1_753_963_200_000;
        for id in ["h1", "h2"] {
            let mut r = SessionRecord::new(id, "2025-07-31T11:00:00.000Z", "completed");
            r.input_tokens = 5_000_000_000_000_000_000;
            r.output_tokens = 5_000_000_000_000_000_000;
            store.write_session(&r).unwrap();
        }
        let check = |store: &SqliteStore| {
            let o = overview(store, now).unwrap();
            let day = o.days.last().unwrap();
            assert_eq!((day.input_tokens, day.output_tokens), (i64::MAX, i64::MAX));
            for d in o.days_by_agent.iter().chain(&o.days_by_project) {
                assert_eq!(d.input_tokens, i64::MAX);
            }
            let t = session_totals(store, &SessionFilter::default()).unwrap();
            assert_eq!((t.sessions, t.other_tokens), (2, i64::MAX));
        };
        check(&store);
        // The same through the `GROUP BY` of a store without the counters.
        store
            .connection()
            .execute_batch(
                "DROP TABLE list_counts; DROP TABLE session_days; DROP TABLE session_days_by",
            )
            .unwrap();
        check(&store);
    }

    #[test]
    fn overview_on_a_small_known_store() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        // "now" is 2025-07-31 12:00 UTC; the window starts 2025-07-02.
        let now = 1_753_963_200_000;
        assert_eq!(time::format_ms(now), "2025-07-31T12:00:00.000Z");
        assert_eq!(overview_first_day(now), "2025-07-02");
        let specs = [
            (
                "old",
                "2025-07-01T23:59:59.000Z",
                "completed",
                Some(9.0),
                900,
                900,
            ),
            (
                "d1",
                "2025-07-02T00:00:00.000Z",
                "completed",
                Some(0.5),
                100,
                10,
            ),
            ("d2", "2025-07-02T10:00:00.000Z", "error", None, 50, 5),
            (
                "d3",
                "2025-07-31T11:00:00.000Z",
                "completed",
                Some(0.25),
                7,
                3,
            ),
        ];
        for (id, at, status, cost, input, output) in specs {
            let mut r = SessionRecord::new(id, at, status);
            r.cost_usd = cost;
            r.input_tokens = input;
            r.output_tokens = output;
            if id == "d1" {
                r.events = ["critical", "info", "info"]
                    .iter()
                    .map(|l| NewEvent {
                        level: (*l).into(),
                        service: None,
                        message: "x".into(),
                    })
                    .collect();
            }
            store.write_session(&r).unwrap();
        }
        let mut child = SessionRecord::new("d4", "2025-07-31T11:30:00.000Z", "completed");
        child.parent_id = Some("d3".into());
        child.tier = 2;
        child.escalated_for = vec!["jellyfin".into(), "sonarr".into()];
        store.write_session(&child).unwrap();
        // Running: one with a fresh heartbeat (relative to now), one stale.
        let mut fresh = SessionRecord::new("r1", "2025-07-31T11:59:59.000Z", "running");
        fresh.input_tokens = 1;
        store.start_session(&fresh).unwrap();
        store
            .start_session(&SessionRecord::new(
                "r2",
                "2025-07-31T10:00:00.000Z",
                "running",
            ))
            .unwrap();
        let o = overview(&store, now).unwrap();
        fn pairs(v: &[(String, i64)]) -> Vec<(&str, i64)> {
            v.iter().map(|(k, n)| (k.as_str(), *n)).collect()
        }
        assert_eq!(
            pairs(&o.sessions_by_status),
            [("completed", 4), ("error", 1), ("lost", 1), ("running", 1)]
        );
        assert_eq!(pairs(&o.events_by_level), [("critical", 1), ("info", 2)]);
        assert_eq!(o.running, 1);
        let days: Vec<_> = o
            .days
            .iter()
            .map(|d| {
                (
                    d.day.as_str(),
                    d.sessions,
                    d.cost_usd,
                    d.input_tokens,
                    d.output_tokens,
                )
            })
            .collect();
        assert_eq!(
            days,
            [
                ("2025-07-02", 2, 0.5, 150, 15),
                ("2025-07-31", 4, 0.25, 8, 3)
            ]
        );
        let esc: Vec<_> = o
            .escalations
            .iter()
            .map(|e| {
                (
                    e.parent_id.as_str(),
                    e.child_id.as_str(),
                    e.service.as_str(),
                    e.tier,
                    e.child_status.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            esc,
            [
                ("d3", "d4", "sonarr", 2, Some("completed")),
                ("d3", "d4", "jellyfin", 2, Some("completed")),
            ]
        );
        let empty = overview(&SqliteStore::open_in_memory().unwrap(), now).unwrap();
        assert_eq!(empty, Dashboard::default());
    }

    #[test]
    fn the_lists_migration_applies_on_an_existing_v2_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(include_str!("../migrations/0001_init.sql"))
                .unwrap();
            c.execute_batch(include_str!("../migrations/0002_live.sql"))
                .unwrap();
            c.pragma_update(None, "user_version", 2).unwrap();
            c.execute(
                "INSERT INTO sessions (id, tier, status, started_at, extraction_method)
                 VALUES ('old', 2, 'completed', '2025-07-14T03:12:00.000Z', 'fenced')",
                [],
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let indexes: Vec<String> = store
            .connection()
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_order'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for want in [
            "sessions_order",
            "sessions_status_order",
            "sessions_tier_order",
            "sessions_method_order",
        ] {
            assert!(indexes.iter().any(|i| i == want), "{want} in {indexes:?}");
        }
        let filter = SessionFilter {
            tier: Some(2),
            method: some("fenced"),
            ..f()
        };
        assert_eq!(ids(&store, &filter), ["old"]);
    }

    mod native {
        use crate::{FeedEntry, NativeMark, SessionRecord, Store, ToolCount};
        include!("../tests/support/native.rs");
    }

    fn native_store() -> SqliteStore {
        let mut store = SqliteStore::open_in_memory().unwrap();
        native::fill_native(&mut store);
        store
    }

    #[test]
    fn agent_and_project_filter_and_native_columns_are_read() {
        let store = native_store();
        let agent = |a: &str| SessionFilter {
            agent: some(a),
            ..f()
        };
        assert_eq!(ids(&store, &agent("codex")), ["n-codex"]);
        assert_eq!(
            ids(&store, &agent("claude-code")),
            ["n-sub2", "n-sub", "n-main"]
        );
        let project = |p: &str| SessionFilter {
            project: some(p),
            ..f()
        };
        assert_eq!(ids(&store, &project("/srv/api")), ["n-codex"]);
        assert_eq!(
            ids(&store, &project(native::HOSTILE_PROJECT)),
            ["n-sub2", "n-sub", "n-main"]
        );
        assert!(ids(&store, &project("/nowhere")).is_empty());
        let both = SessionFilter {
            agent: some("codex"),
            project: some(native::HOSTILE_PROJECT),
            ..f()
        };
        assert!(ids(&store, &both).is_empty());
        let v = filter_values(&store).unwrap();
        assert_eq!(v.agents, ["claude-code", "codex"]);
        assert_eq!(v.projects, [native::HOSTILE_PROJECT, "/srv/api"]);
        let main = session(&store, "n-main").unwrap().unwrap().session;
        assert_eq!(main.project.as_deref(), Some(native::HOSTILE_PROJECT));
        assert_eq!(main.git_branch.as_deref(), Some("main"));
        assert_eq!(main.agent_version.as_deref(), Some("2.1.23"));
        assert_eq!(
            (main.cache_read_tokens, main.cache_write_tokens),
            (5000, 300)
        );
        assert!(main.cost_estimated);
        assert_eq!(main.source_path, None);
        let codex = session(&store, "n-codex").unwrap().unwrap().session;
        assert!(!codex.cost_estimated);
    }

    #[test]
    fn the_tree_holds_sub_agents_and_theirs() {
        let store = native_store();
        let d = session(&store, "n-main").unwrap().unwrap();
        let tree: Vec<(usize, &str)> = d
            .tree
            .iter()
            .map(|n| (n.depth, n.session.id.as_str()))
            .collect();
        assert_eq!(tree, [(1, "n-sub"), (2, "n-sub2")]);
        assert_eq!(d.children.len(), 1);
        assert!(session(&store, "n-sub2").unwrap().unwrap().tree.is_empty());
    }

    fn hits(store: &SqliteStore, q: &str) -> Vec<(String, String, String)> {
        search_transcripts(store, q, 50)
            .unwrap()
            .into_iter()
            .map(|h| {
                (
                    h.session_id,
                    h.kind,
                    format!("{}[{}]{}", h.before, h.hit, h.after),
                )
            })
            .collect()
    }

    #[test]
    fn transcript_search_finds_text_prompts_and_tool_names_newest_first() {
        let mut store = native_store();
        let found = hits(&store, "JELLYFIN");
        assert_eq!(
            found,
            [
                (
                    "n-sub".to_owned(),
                    "text".to_owned(),
                    "The [jellyfin] service restarts".to_owned()
                ),
                (
                    "n-main".to_owned(),
                    "text".to_owned(),
                    "Looking at the [jellyfin] logs now.".to_owned()
                ),
                (
                    "n-main".to_owned(),
                    "user_text".to_owned(),
                    "Fix the [Jellyfin] 502, please".to_owned()
                ),
            ]
        );
        // Tool names; not their input, not thinking, not summaries.
        assert_eq!(
            hits(&store, "bash")
                .iter()
                .map(|h| h.1.as_str())
                .collect::<Vec<_>>(),
            ["tool_use"]
        );
        assert!(hits(&store, "journalctl").is_empty());
        assert!(hits(&store, "zebra").is_empty());
        assert!(hits(&store, "lacks permission").is_empty());
        // Too short for trigrams; FTS5 syntax is text.
        assert!(hits(&store, "ja").is_empty());
        assert!(hits(&store, "\"jelly\" OR x*").is_empty());
        // The hit names its feed row and line.
        let h = &search_transcripts(&store, "Deploy the", 5).unwrap()[0];
        assert_eq!((h.session_id.as_str(), h.line), ("n-codex", Some(2)));
        let row = feed_for_session(&store, "n-codex", 0, 10).unwrap();
        assert_eq!(h.feed_id, row[0].id);
        // A long text: the snippet is cut around the hit.
        let long = format!("{} needle {}", "a".repeat(500), "b".repeat(500));
        store
            .append_feed(&[crate::FeedEntry {
                session_id: "n-codex".into(),
                kind: "event".into(),
                body: native::body(9, &serde_json::json!({"type": "text", "text": long})),
                created_at: "2025-07-14T04:00:03.000Z".into(),
            }])
            .unwrap();
        let h = &search_transcripts(&store, "needle", 5).unwrap()[0];
        assert_eq!(h.hit, "needle");
        assert_eq!(h.before.chars().count(), SNIPPET_CHARS + 1);
        assert!(h.before.starts_with('…') && h.after.ends_with('…'));
        // Deleted rows leave the index (a re-import drops a session's feed).
        store
            .connection()
            .execute("DELETE FROM feed WHERE session_id = 'n-sub'", [])
            .unwrap();
        assert_eq!(hits(&store, "jellyfin").len(), 2);
    }

    #[test]
    fn overview_has_days_by_agent_and_project_tool_errors_and_the_costliest() {
        let mut store = native_store();
        let now = time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        let o = overview(&store, now).unwrap();
        let by = |v: &[KeyDay]| -> Vec<(String, i64, f64, i64)> {
            v.iter()
                .map(|d| {
                    (
                        d.key.clone(),
                        d.sessions,
                        d.cost_usd,
                        d.input_tokens + d.output_tokens,
                    )
                })
                .collect()
        };
        assert_eq!(
            by(&o.days_by_agent),
            [
                ("claude-code".to_owned(), 3, 1.75, 1200),
                ("codex".to_owned(), 1, 3.0, 4400)
            ]
        );
        assert_eq!(
            by(&o.days_by_project),
            [
                (native::HOSTILE_PROJECT.to_owned(), 3, 1.75, 1200),
                ("/srv/api".to_owned(), 1, 3.0, 4400)
            ]
        );
        assert!(o.days_by_agent.iter().all(|d| d.day == "2025-07-14"));
        let tools: Vec<(&str, i64, i64)> = o
            .tool_errors
            .iter()
            .map(|t| (t.tool.as_str(), t.calls, t.errors))
            .collect();
        assert_eq!(tools, [("Bash", 4, 2), ("shell", 4, 2)]);
        let costly: Vec<(&str, bool)> = o
            .costliest
            .iter()
            .map(|s| (s.id.as_str(), s.cost_estimated))
            .collect();
        assert_eq!(
            costly,
            [("n-codex", false), ("n-main", true), ("n-sub", true)]
        );
        // The counters follow updates and deletes: the same as counting.
        let mut again = SessionRecord::new("n-codex", "2025-07-14T04:00:00.000Z", "completed");
        again.agent = Some("codex".into());
        again.project = Some("/srv/other".into());
        again.cost_usd = Some(2.0);
        again.tools = vec![crate::ToolCount {
            tool: "shell".into(),
            calls: 5,
            errors: 0,
        }];
        let mark = crate::NativeMark {
            path: "/p/rollout-codex.jsonl".into(),
            session_id: "n-codex".into(),
            agent: "codex".into(),
            dev: 1,
            inode: 1,
            size: 0,
            offset: 0,
            mtime_ms: 0,
            lines: 0,
            updated_at: time::now(),
            reset: false,
            // It continues the first save's mark (Note [Two importers]).
            expect_offset: Some(0),
        };
        store.save_native(&again, &[], &mark).unwrap();
        store
            .connection()
            .execute_batch(
                "DELETE FROM session_tools WHERE session_id = 'n-sub2';
                 DELETE FROM sessions WHERE id = 'n-sub2'",
            )
            .unwrap();
        let counted = overview(&store, now).unwrap();
        store
            .connection()
            .execute_batch("DROP TABLE session_days_by; DROP TABLE tool_totals")
            .unwrap();
        let truth = overview(&store, now).unwrap();
        assert_eq!(counted, truth);
        assert_eq!(
            by(&truth.days_by_project),
            [
                (native::HOSTILE_PROJECT.to_owned(), 2, 1.75, 1200),
                ("/srv/other".to_owned(), 1, 2.0, 0)
            ]
        );
        assert_eq!(
            truth.tool_errors,
            [ToolTotal {
                tool: "Bash".into(),
                calls: 4,
                errors: 2
            }]
        );
    }

    /// The plans of the new queries read an index, never a whole table
    /// (Note \[List indexes\]).
    #[test]
    fn the_native_queries_are_planned_over_indexes() {
        let store = native_store();
        let plan = |sql: &str| -> String {
            let rows: Vec<String> = store
                .connection()
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map([], |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            rows.join("; ")
        };
        for (sql, want) in [
            (
                "SELECT s.id FROM sessions s WHERE s.agent = 'x' ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
                "sessions_agent_order",
            ),
            (
                "SELECT s.id FROM sessions s WHERE s.project = 'x' AND (s.started_at, s.id) < ('2025', 'x') ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
                "sessions_project_order",
            ),
            (
                "SELECT s.id FROM sessions s WHERE s.cost_usd IS NOT NULL ORDER BY s.cost_usd DESC, s.id DESC LIMIT 10",
                "sessions_cost",
            ),
            (
                "SELECT f.id FROM feed f WHERE f.id IN (SELECT rowid FROM feed_fts WHERE feed_fts MATCH 'abc' ORDER BY rowid DESC LIMIT 5) ORDER BY f.id DESC",
                "VIRTUAL TABLE INDEX",
            ),
            (
                "SELECT day FROM session_days_by WHERE day >= '2025-07-01' AND what = 'agent' AND sessions > 0",
                "PRIMARY KEY",
            ),
        ] {
            let p = plan(sql);
            assert!(p.contains(want), "{want}: {p}");
            assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
            assert!(
                !p.contains("SCAN s") && !p.contains("SCAN sessions"),
                "{sql}: {p}"
            );
        }
    }

    /// The hook queries (a page's calls, a sub-agent page's, the chain
    /// count of every hook call) read `hook_calls` through its indexes, in
    /// id order: no full scan, no sort.
    #[test]
    fn the_hook_queries_are_planned_over_indexes() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        for i in 0..50 {
            let mut c = crate::HookCall::new(&format!("s{}", i % 5), "Stop", "blocked", "t");
            if i % 3 == 0 {
                c.agent_id = Some(format!("a{i}"));
            }
            store.save_hook(&c, &[]).unwrap();
        }
        store.connection().execute_batch("ANALYZE").unwrap();
        let plan = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> String {
            let rows: Vec<String> = store
                .connection()
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map(args, |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            rows.join("; ")
        };
        let cases: [(String, Vec<&dyn rusqlite::ToSql>, &[&str]); 3] = [
            (
                hook_calls_sql(false),
                vec![&"s1", &10],
                &["hook_calls_session"],
            ),
            (
                hook_calls_sql(true),
                vec![&"agent-a3", &"a3", &10],
                &["hook_calls_session", "hook_calls_agent"],
            ),
            (
                crate::backend::hook_chain_sql(false),
                vec![&"s1", &Option::<&str>::None],
                &["hook_calls_session"],
            ),
        ];
        for (sql, args, want) in cases {
            let p = plan(&sql, &args);
            for w in want {
                assert!(p.contains(w), "{w}: {p}");
            }
            assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
            assert!(!p.contains("SCAN hook_calls"), "{sql}: {p}");
        }
    }

    /// The plan of every filter's query walks an index in list order: no
    /// temporary b-tree for `ORDER BY`, no full scan of the table.
    #[test]
    fn every_filter_is_planned_over_an_index_in_list_order() {
        let store = filter_store();
        let plans = [
            ("none", ""),
            ("status", "s.status = 'completed' AND"),
            ("tier", "s.tier = 2 AND"),
            ("profile", "s.profile = 'x' AND"),
            ("category", "s.error_category = 'x' AND"),
            ("method", "s.extraction_method = 'x' AND"),
        ];
        for (name, cond) in plans {
            for keyset in ["", "(s.started_at, s.id) < ('2025', 'x') AND"] {
                let sql = format!(
                    "EXPLAIN QUERY PLAN SELECT s.id FROM sessions s WHERE {cond} {keyset} 1
                     ORDER BY s.started_at DESC, s.id DESC LIMIT 50"
                );
                let plan: Vec<String> = store
                    .connection()
                    .prepare(&sql)
                    .unwrap()
                    .query_map([], |r| r.get(3))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                let plan = plan.join("; ");
                assert!(
                    plan.contains("USING INDEX") || plan.contains("USING COVERING INDEX"),
                    "{name}: {plan}"
                );
                assert!(!plan.contains("TEMP B-TREE"), "{name}: {plan}");
            }
        }
    }
}

/// One `hook_calls` row as a session page shows it (not the message: a
/// page shows what was decided, the validated text is in the store).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookCallRow {
    /// Row id (later calls have higher ids).
    pub id: i64,
    /// Claude Code's session id.
    pub session_id: String,
    /// The sub-agent, for `SubagentStop`.
    pub agent_id: Option<String>,
    /// The sub-agent's type.
    pub agent_type: Option<String>,
    /// `Stop`, `SubagentStop` or `PostToolUse`.
    pub event: String,
    /// `valid`, `blocked`, `gave_up`, `allowed` or `captured`.
    pub verdict: String,
    /// The extraction method tried.
    pub method: Option<String>,
    /// The violations (a JSON array); `None` when none were stored or the
    /// text is not JSON.
    pub errors: Option<Value>,
    /// Blocks in a row in its chain, this call included.
    pub blocks: u32,
    /// Claude Code said the model was already continuing because of a stop hook.
    pub stop_hook_active: bool,
    /// Profile or schema used.
    pub profile: Option<String>,
    /// The block reason given to the model.
    pub reason: Option<String>,
    /// Why the hook allowed without checking.
    pub warning: Option<String>,
    /// When.
    pub created_at: String,
}

/// Whether the schema has `hook_calls` (SQLite 9+, Postgres 6+).
fn has_hooks(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 9,
        Backend::Postgres { version } => version >= 6,
    }
}

const HOOK_COLUMNS: &str = "id, session_id, agent_id, agent_type, event, verdict, method, errors, \
    blocks, CASE WHEN stop_hook_active THEN 1 ELSE 0 END, profile, reason, warning, created_at";

fn hook_row(r: &[Cell]) -> Result<HookCallRow> {
    Ok(HookCallRow {
        id: int(at(r, 0))?,
        session_id: text(at(r, 1))?,
        agent_id: opt_text(at(r, 2))?,
        agent_type: opt_text(at(r, 3))?,
        event: text(at(r, 4))?,
        verdict: text(at(r, 5))?,
        method: opt_text(at(r, 6))?,
        errors: opt_text(at(r, 7))?.and_then(|t| serde_json::from_str(&t).ok()),
        blocks: u32::try_from(int(at(r, 8))?).unwrap_or(u32::MAX),
        stop_hook_active: flag(at(r, 9))?,
        profile: opt_text(at(r, 10))?,
        reason: opt_text(at(r, 11))?,
        warning: opt_text(at(r, 12))?,
        created_at: text(at(r, 13))?,
    })
}

/// The hook calls of a session page, oldest first, at most `limit`
/// (clamped to 1..=[`MAX_LIMIT`]): the rows whose `session_id` is `id`
/// (a main session's, its sub-agents' included), and for a sub-agent
/// session stored as `agent-<x>` (Note \[Hook chains\] in the crate
/// root), the rows whose `agent_id` is `x`. Each side reads its own index
/// (`hook_calls_session`, `hook_calls_agent`) in id order. Empty for a
/// store from before hooks.
///
/// # Errors
/// When the store cannot be read.
pub fn hook_calls(store: &dyn Source, id: &str, limit: usize) -> Result<Vec<HookCallRow>> {
    if !has_hooks(store) {
        return Ok(Vec::new());
    }
    let ctx = || format!("reading the hook calls of session `{id}`");
    let limit = Cell::Int(clamp(limit));
    match id.strip_prefix("agent-").filter(|x| !x.is_empty()) {
        None => shaped(
            store,
            &hook_calls_sql(false),
            &[Cell::Text(id.to_owned()), limit],
            &ctx,
            hook_row,
        ),
        Some(agent) => shaped(
            store,
            &hook_calls_sql(true),
            &[
                Cell::Text(id.to_owned()),
                Cell::Text(agent.to_owned()),
                limit,
            ],
            &ctx,
            hook_row,
        ),
    }
}

/// The SQL of [`hook_calls`]: a session's (`?1`, limit `?2`), or with
/// `agent` a sub-agent page's (`?1`, its agent id `?2`, limit `?3`).
fn hook_calls_sql(agent: bool) -> String {
    if agent {
        format!(
            "SELECT {HOOK_COLUMNS} FROM hook_calls WHERE session_id = ?1
             UNION ALL
             SELECT {HOOK_COLUMNS} FROM hook_calls WHERE agent_id = ?2 AND session_id <> ?1
             ORDER BY id LIMIT ?3"
        )
    } else {
        format!("SELECT {HOOK_COLUMNS} FROM hook_calls WHERE session_id = ?1 ORDER BY id LIMIT ?2")
    }
}

/// One secret masked, for the overview's "Secrets" panel (never the secret).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecretRow {
    /// The session it was in.
    pub session_id: String,
    /// The rule that found it.
    pub rule: String,
    /// Its keyed fingerprint.
    pub fingerprint: String,
    /// Where (`summary`, `output`, `feed`, ...).
    pub place: String,
    /// When.
    pub created_at: String,
}

/// The newest secrets masked, at most `limit` (empty for a store from
/// before masking).
///
/// # Errors
/// When the store cannot be read.
pub fn secrets_found(store: &dyn Source, limit: usize) -> Result<Vec<SecretRow>> {
    if !has_secrets(store) {
        return Ok(Vec::new());
    }
    let rows = store.cells(
        "SELECT session_id, rule, fingerprint, place, created_at FROM secrets_found
         ORDER BY created_at DESC, id DESC LIMIT ?1",
        &[Cell::Int(i64::try_from(limit).unwrap_or(i64::MAX))],
        &|| "reading the secrets found".to_owned(),
    )?;
    rows.iter()
        .map(|r| {
            Ok(SecretRow {
                session_id: text(at(r, 0))?,
                rule: text(at(r, 1))?,
                fingerprint: text(at(r, 2))?,
                place: text(at(r, 3))?,
                created_at: text(at(r, 4))?,
            })
        })
        .collect()
}
