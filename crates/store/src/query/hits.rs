//! Transcript hits for a list's search (issue 41 §2): the lines holding
//! the text, newest line first, in pages, within the list's filters.
//!
//! Note \[Hits in time order\]: a hit is ordered by its line's own time
//! (`feed.created_at`: the time an imported line carries, or when a run
//! wrote it), newest first, ties by feed id; not by feed id alone, which
//! is import order (a month-old file imported today would come first). A
//! page is [`MAX_HITS`] at most; the next starts strictly after the last
//! hit shown, named by its feed id (as Note \[Keyset pages\] does for
//! sessions). The list's filters (agent, project, dates, status, ...)
//! apply to the hit's session; its `q` is the text searched, not a
//! condition on the session. Each hit carries its session's project and
//! parent, so a reader sees where a line was written.
//!
//! Ordering by time means reading every match before the first is shown,
//! and common text matches a large part of a store: on a 300,000-line
//! SQLite store, 0.5 to 2 s for `the` or a two-word phrase (the index
//! itself streams matches only in feed id order). So the hits are taken
//! from a window: the [`HIT_WINDOW`] matching lines (within the filters)
//! stored last, read off the index in feed id order and stopping there,
//! then ordered by time (measured on that store: 2,000 lines of a common
//! phrase in 50 ms, where 10,000 took 250 ms). Text with fewer matches (nearly every search
//! a person types) is ordered whole and exactly; past it the answer says
//! so ([`Hits::windowed`]) and the page asks for more words or a filter.
//! Both backends use the same window, so they answer alike.

use serde_json::Value;

use serde::Serialize;

use super::{
    Cell, MAX_HITS, SessionFilter, Source, TranscriptHit, at, fts_phrase, has_search, int, is_pg,
    lost_cutoff, opt_text, session_conds, snippet, text, ts_prefixes, where_with_cutoff,
};
use crate::error::Result;

/// The most matching lines a search orders by time (Note \[Hits in time
/// order\]).
pub const HIT_WINDOW: i64 = 2_000;

/// A page of transcript hits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Hits {
    /// The hits, newest line first.
    pub hits: Vec<TranscriptHit>,
    /// More than [`HIT_WINDOW`] lines hold the text: the hits are the
    /// newest of the [`HIT_WINDOW`] stored last (Note \[Hits in time order\]).
    pub windowed: bool,
}

/// Feed rows whose transcript text holds `q` (Note \[Transcript search\]),
/// of the sessions `filter` matches (its `q`, page and limit ignored),
/// newest line first (Note \[Hits in time order\]), after the hit whose
/// feed id is `before` when given; at most `limit` (clamped to
/// 1..=[`MAX_HITS`]). A `before` that is not stored gives none.
///
/// # Errors
/// When the database cannot be read.
pub fn search_hits(
    store: &dyn Source,
    q: &str,
    filter: &SessionFilter,
    before: Option<i64>,
    limit: usize,
) -> Result<Hits> {
    let ctx = || "searching the transcripts".to_owned();
    let q = q.trim();
    let pg = is_pg(store);
    let pattern = if pg {
        let Some(tsq) = ts_prefixes(q) else {
            return Ok(Hits::default());
        };
        tsq
    } else {
        if !has_search(store) || q.chars().count() < 3 {
            return Ok(Hits::default());
        }
        fts_phrase(q)
    };
    let sessions = SessionFilter {
        q: None,
        before: None,
        top_level: false,
        ..filter.clone()
    };
    let mut args: Vec<Cell> = vec![Cell::Text(lost_cutoff())];
    let mut conds = session_conds(store, &sessions, &mut args)?;
    let mut bind = |v: Cell| {
        args.push(v);
        format!("?{}", args.len())
    };
    let matching = bind(Cell::Text(pattern));
    let window_len = bind(Cell::Int(HIT_WINDOW));
    // The window: the matching lines stored last, within the filters.
    let window = if pg {
        conds.push(format!(
            "to_tsvector('simple', agentshape_feed_text(f.kind, f.body)) @@ to_tsquery('simple', {matching})"
        ));
        // `f.id + 0`: through the GIN index, not down the primary key
        // (Note [Transcript search]'s plan).
        format!(
            "SELECT f.id FROM feed f JOIN sessions s ON s.id = f.session_id {}
             ORDER BY f.id + 0 DESC LIMIT {window_len}",
            where_with_cutoff(&conds)
        )
    } else {
        conds.push(format!("feed_fts MATCH {matching}"));
        format!(
            "SELECT f.id FROM feed_fts JOIN feed f ON f.id = feed_fts.rowid
               JOIN sessions s ON s.id = f.session_id {}
             ORDER BY feed_fts.rowid DESC LIMIT {window_len}",
            where_with_cutoff(&conds)
        )
    };
    let ids: Vec<i64> = store
        .cells(&window, &args, &ctx)?
        .iter()
        .map(|r| int(at(r, 0)))
        .collect::<Result<_>>()?;
    if ids.is_empty() {
        return Ok(Hits::default());
    }
    let windowed = i64::try_from(ids.len()).unwrap_or(i64::MAX) >= HIT_WINDOW;
    // Then the window's lines in time order, compared byte-wise on both
    // backends (a database collation may not be).
    let mut args = vec![Cell::Text(
        serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned()),
    )];
    let (in_window, at_col) = if pg {
        (
            "f.id IN (SELECT CAST(jsonb_array_elements_text(CAST(CAST(?1 AS TEXT) AS jsonb)) AS BIGINT))",
            "f.created_at COLLATE \"C\"",
        )
    } else {
        ("f.id IN (SELECT value FROM json_each(?1))", "f.created_at")
    };
    let mut conds = vec![in_window.to_owned()];
    let mut bind = |v: Cell| {
        args.push(v);
        format!("?{}", args.len())
    };
    if let Some(id) = before {
        let found = store.cells(
            "SELECT created_at FROM feed WHERE id = ?1",
            &[Cell::Int(id)],
            &ctx,
        )?;
        let Some(when) = found.first().map(|r| text(at(r, 0))).transpose()? else {
            return Ok(Hits::default());
        };
        let at_bound = bind(Cell::Text(when));
        let id_bound = bind(Cell::Int(id));
        conds.push(format!("({at_col}, f.id) < ({at_bound}, {id_bound})"));
    }
    let n = bind(Cell::Int(
        i64::try_from(limit.clamp(1, MAX_HITS)).unwrap_or(1),
    ));
    let sql = format!(
        "SELECT f.id, f.session_id, f.body, f.created_at, s.project, s.parent_id
         FROM feed f JOIN sessions s ON s.id = f.session_id
         WHERE {}
         ORDER BY {at_col} DESC, f.id DESC LIMIT {n}",
        conds.join(" AND ")
    );
    let hits = store
        .cells(&sql, &args, &ctx)?
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_str(&text(at(r, 2))?).unwrap_or(Value::Null);
            let ev = &body["event"];
            let kind = ev["type"].as_str().unwrap_or("").to_owned();
            let said = if kind == "tool_use" {
                &ev["name"]
            } else {
                &ev["text"]
            };
            let (before, hit, after) = snippet(said.as_str().unwrap_or(""), q);
            Ok(TranscriptHit {
                feed_id: int(at(r, 0))?,
                session_id: text(at(r, 1))?,
                kind,
                line: body["line"].as_i64(),
                created_at: text(at(r, 3))?,
                project: opt_text(at(r, 4))?,
                parent_id: opt_text(at(r, 5))?,
                before,
                hit,
                after,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Hits { hits, windowed })
}
