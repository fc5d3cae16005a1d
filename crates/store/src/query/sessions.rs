//! The sessions page: the list with its filters, keyset pages and text
//! search, its totals, and the values its filter form offers.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

/// How many full-text matches the text search takes as "few" (Note
/// \[Text search\]).
pub const FTS_PROBE: i64 = 2_000;

/// Whether a SQLite table (or virtual table) exists: a read-only store of
/// an older version has none of migration 0004's. Postgres has none of
/// them (Note \[One logical schema\]).
pub(super) fn has_table(store: &dyn Source, name: &str) -> Result<bool> {
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
pub(super) fn fts_phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Whether `q` goes through the trigram index: long enough, the index
/// exists, and it matches fewer than [`FTS_PROBE`] sessions.
pub(super) fn few_text_matches(store: &dyn Source, q: &str) -> Result<bool> {
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
pub(super) fn session_conds(
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
pub fn sessions(store: &dyn Source, filter: &SessionFilter) -> Result<Vec<Session>> {
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
pub(super) fn where_with_cutoff(conds: &[String]) -> String {
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
pub(super) fn distinct(store: &dyn Source, col: &str) -> Result<Vec<Cell>> {
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

pub(super) fn texts(cells: &[Cell]) -> Result<Vec<String>> {
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
