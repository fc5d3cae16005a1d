//! The hook calls of a session, as its page shows them.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

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
pub(super) fn has_hooks(store: &dyn Source) -> bool {
    match store.backend() {
        Backend::Sqlite { version } => version >= 9,
        Backend::Postgres { version } => version >= 6,
    }
}

pub(super) const HOOK_COLUMNS: &str = "id, session_id, agent_id, agent_type, event, verdict, method, errors, \
    blocks, CASE WHEN stop_hook_active THEN 1 ELSE 0 END, profile, reason, warning, created_at";

pub(super) fn hook_row(r: &[Cell]) -> Result<HookCallRow> {
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
pub(super) fn hook_calls_sql(agent: bool) -> String {
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
