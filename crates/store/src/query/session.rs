//! One session's page: its row, tree, rows, feed and events.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

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
pub(super) fn tree(store: &dyn Source, children: &[Session]) -> Result<Vec<TreeNode>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Depth-first with an explicit stack: (depth, session), last pushed first.
    let mut stack: Vec<(usize, Session)> = children.iter().rev().map(|c| (1, c.clone())).collect();
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
pub(super) fn output_and_verdict(
    store: &dyn Source,
    id: &str,
) -> Result<(Option<Value>, Option<Value>)> {
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
pub(super) fn children(store: &dyn Source, id: &str) -> Result<Vec<Session>> {
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

pub(super) fn event_row(r: &[Cell]) -> Result<EventRow> {
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
