//! Sub-agents under their parent in a list of sessions (issue 41 §2): which
//! sessions a page lists at its top level, and the sessions below those.
//!
//! Note \[Sub-agents in a list\]: an agent that starts sub-agents (Claude
//! Code's `Task`, a sub-agent's own) stores each as a session whose
//! `parent_id` names the session that started it, as an escalated run
//! names the run it escalated from (Note \[Session tree\]). A list shows
//! the sessions its filters match, each once:
//! - at the top level, those whose parent is not among the matches (none,
//!   not imported, or filtered out): a sub-agent found by a search is
//!   listed even when its parent is not;
//! - below their parent, the others, read for the page's top-level rows
//!   one level at a time ([`sub_sessions`]), at most [`MAX_NESTED`] per
//!   page and [`MAX_TREE_DEPTH`] levels deep (a cycle in a hand-edited
//!   store cannot loop).
//!
//! A page is [`SessionFilter::limit`] top-level sessions: the keyset
//! cursor (Note \[Keyset pages\]) names the last of them. The totals
//! (Note \[Totals of a list\]) count every match once, nested or not.
//!
//! "Its parent is among the matches" is an uncorrelated `NOT IN` over the
//! matching ids, read once per page (the filters' own indexes; with no
//! filter a primary-key probe per row instead): a page costs a pass over
//! the matches' ids, as the list's totals already do.

use std::collections::HashSet;

use super::{
    Cell, MAX_TREE_DEPTH, Session, SessionFilter, Source, id_col, lost_cutoff, session_columns,
    session_conds, session_row, shaped, where_with_cutoff,
};
use crate::error::Result;

/// The most sessions [`sub_sessions`] reads for one page.
pub const MAX_NESTED: usize = 500;

/// Parents asked about in one query (bounds its placeholders).
const PARENTS_PER_QUERY: usize = 100;

/// The condition over `sessions s` that keeps, of the sessions `conds`
/// match, those listed at the top level (Note \[Sub-agents in a list\]).
/// `conds` reuse their bound values: the same `?N` in the subquery.
pub(super) fn top_level_sql(conds: &[String]) -> String {
    if conds.is_empty() {
        "(s.parent_id IS NULL OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_id))"
            .to_owned()
    } else {
        // The subquery's `s` is the parent: every condition is about it.
        format!(
            "(s.parent_id IS NULL OR s.parent_id NOT IN (SELECT s.id FROM sessions s WHERE {}))",
            conds.join(" AND ")
        )
    }
}

/// The sessions below `parents` that `filter` matches (its page, `before`
/// and `limit`, ignored): children, their children, ..., one level after
/// the other, oldest first within a level; each names its parent in
/// `parent_id`. At most [`MAX_NESTED`] (Note \[Sub-agents in a list\]).
///
/// # Errors
/// When the database cannot be read.
pub fn sub_sessions(
    store: &dyn Source,
    filter: &SessionFilter,
    parents: &[String],
) -> Result<Vec<Session>> {
    let ctx = || "reading the sub-agents of a page of sessions".to_owned();
    let plain = SessionFilter {
        before: None,
        top_level: false,
        ..filter.clone()
    };
    let mut out: Vec<Session> = Vec::new();
    let mut seen: HashSet<String> = parents.iter().cloned().collect();
    let mut level: Vec<String> = parents.to_vec();
    for _ in 0..MAX_TREE_DEPTH {
        let mut next = Vec::new();
        for chunk in level.chunks(PARENTS_PER_QUERY) {
            let room = MAX_NESTED.saturating_sub(out.len());
            if room == 0 {
                return Ok(out);
            }
            let mut args: Vec<Cell> = vec![Cell::Text(lost_cutoff())];
            let mut conds = session_conds(store, &plain, &mut args)?;
            let ids: Vec<String> = chunk
                .iter()
                .map(|id| {
                    args.push(Cell::Text(id.clone()));
                    format!("?{}", args.len())
                })
                .collect();
            conds.push(format!("s.parent_id IN ({})", ids.join(", ")));
            args.push(Cell::Int(i64::try_from(room).unwrap_or(i64::MAX)));
            let sql = format!(
                "SELECT {} FROM sessions s {} ORDER BY s.started_at, {} LIMIT ?{}",
                session_columns(store),
                where_with_cutoff(&conds),
                id_col(store),
                args.len()
            );
            for r in shaped(store, &sql, &args, &ctx, session_row)? {
                if seen.insert(r.id.clone()) {
                    next.push(r.id.clone());
                    out.push(r);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(out)
}
