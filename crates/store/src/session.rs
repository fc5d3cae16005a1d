//! The `sessions` row: one [`Session`], what a write puts in it and what
//! a read gets from it, beside the one list of its columns (`columns`)
//! that both go through.
//!
//! Note \[One session row\]: besides its migrations (and their entries
//! in `migrate`), a session column is declared here and in `columns`
//! only: its field in [`Session`], the column's entry (how a native
//! import fills it, the schema version that added it), its write argument
//! and its read. The write statements, the `store copy` column
//! list and the SELECT list of every session read are generated from that
//! entry. A column of free text also goes through the store door
//! (`secrets::mask_record`), a decision about secrets, not about the
//! shape of the row. The status and the verdict are typed ([`Status`],
//! [`Verdict`]) and become text only at the SQL edge (`columns`).

use serde::Serialize;
use serde_json::Value;

use crate::{NewEvent, NewMemory, ServiceCheck, ToolCount, UsageRecord};

pub(crate) mod columns;
mod status;
mod verdict;

pub use status::Status;
pub use verdict::Verdict;

/// One session: its `sessions` row, written by
/// [`Store::write_session`](crate::Store::write_session) and read back by
/// every session query, and the rows a write adds with it (Note \[One
/// session row\]).
///
/// The fields are in the order the JSON API prints a session. Counts are
/// `i64`, as stored: a builder turns the summary's `u64` into them with
/// [`count`] (saturating), and a read shows what the store holds.
///
/// Some fields go one way only. A read derives `lost`, `not_imported`,
/// `shown_status`, `secrets_masked`, `verdict_valid` and `failing_path`
/// (a write ignores them), and leaves `output`, `verdict` and the added
/// rows empty: a list of sessions does not carry each one's output, and a
/// session page reads them on its own
/// ([`SessionDetail`](crate::query::SessionDetail)). A write's
/// `heartbeat_at` is the store's to set (a finished session has none).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    /// Session id (ours, not the agent's: several runs may replay one transcript).
    pub id: String,
    /// The session that escalated to this one.
    pub parent_id: Option<String>,
    /// Tier (1 observe, 2 investigate, 3 remediate).
    pub tier: i64,
    /// Profile used to extract.
    pub profile: Option<String>,
    /// Agent kind (`claude`, `codex`, `raw`, `replay`).
    pub agent: Option<String>,
    /// Model, as the agent reported it (or as configured).
    pub model: Option<String>,
    /// What became of it; a lost session stays `running` here (see `lost`).
    pub status: Status,
    /// The agent's exit code, when it exited.
    pub exit_code: Option<i64>,
    /// Start time (RFC 3339 UTC).
    pub started_at: String,
    /// End time (RFC 3339 UTC); also the `created_at` of the session's rows.
    pub ended_at: Option<String>,
    /// Cost the agent reported (or estimated: `cost_estimated`).
    pub cost_usd: Option<f64>,
    /// Duration the agent reported.
    pub duration_ms: Option<i64>,
    /// Turns the agent reported.
    pub num_turns: Option<i64>,
    /// Prompt tokens.
    pub input_tokens: i64,
    /// Completion tokens.
    pub output_tokens: i64,
    /// Which extraction path won (`structured`, `fenced`, `markers`, `markers+handoff`, ...).
    pub extraction_method: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Error category.
    pub error_category: Option<String>,
    /// The agent's summary.
    pub summary: Option<String>,
    /// The escalation object, as compact JSON text (as stored).
    pub escalation: Option<String>,
    /// Path of the forensic log.
    pub raw_log_path: Option<String>,
    /// Read: the last heartbeat of a running session.
    pub heartbeat_at: Option<String>,
    /// Read: a `running` session whose heartbeat is stale (Note \[Lost sessions\]).
    pub lost: bool,
    /// Read: a row the store made for a parent whose own file was never
    /// imported (Note \[Parents not imported\]); never `lost`.
    pub not_imported: bool,
    /// Read: what a reader should show: `lost` for a lost session,
    /// `not_imported` for a parent not imported, else `status`.
    pub shown_status: String,
    /// The project the session worked in (a native session's `cwd`).
    pub project: Option<String>,
    /// The git branch the agent reported.
    pub git_branch: Option<String>,
    /// The agent's own version (`2.1.23`, `0.104.0`).
    pub agent_version: Option<String>,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: i64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: i64,
    /// `cost_usd` was computed from usage and a price table, not reported
    /// by the agent (shown `est.`).
    pub cost_estimated: bool,
    /// The agent's own session file this session was imported from.
    pub source_path: Option<String>,
    /// Read: secrets masked in its rows; `None`: stored before masking (or
    /// with `--no-mask`), so not counted.
    pub secrets_masked: Option<i64>,
    /// Read: its final verdict's `valid`; `None`: no verdict (an imported
    /// session, or a run that was not checked), so a list shows no
    /// validation cells for it.
    pub verdict_valid: Option<bool>,
    /// Read: the first error's place in the output (a JSON Pointer) in its
    /// final verdict.
    pub failing_path: Option<String>,
    /// Written: the extracted value (stored as compact JSON), for the
    /// session page.
    #[serde(skip)]
    pub output: Option<Value>,
    /// Written: the validation verdict.
    #[serde(skip)]
    pub verdict: Option<Verdict>,
    /// Written: events to insert.
    #[serde(skip)]
    pub events: Vec<NewEvent>,
    /// Written: memories to insert or reinforce.
    #[serde(skip)]
    pub memories: Vec<NewMemory>,
    /// Written: services checked.
    #[serde(skip)]
    pub services: Vec<ServiceCheck>,
    /// Written, for a child session: the services its parent escalated for
    /// (one `escalations` row each, which the cooldown policy counts).
    #[serde(skip)]
    pub escalated_for: Vec<String>,
    /// Written: tool calls and errors per tool (`session_tools` rows).
    #[serde(skip)]
    pub tools: Vec<ToolCount>,
    /// Written: the session's model calls (`usage_calls` rows), by
    /// [`Store::save_native`](crate::Store::save_native) when not empty:
    /// each upserted by its key, a key another session stored first left
    /// to it (counted once).
    #[serde(skip)]
    pub usage: Vec<UsageRecord>,
}

impl Session {
    /// A session with only the required fields set (tier 1).
    pub fn new(id: &str, started_at: &str, status: impl Into<Status>) -> Self {
        let status = status.into();
        Session {
            id: id.to_owned(),
            tier: 1,
            shown_status: status.as_str().to_owned(),
            status,
            started_at: started_at.to_owned(),
            ..Session::default()
        }
    }
}

/// A count as stored: `n`, or `i64::MAX` when it does not fit.
#[must_use]
pub fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
