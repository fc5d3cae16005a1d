//! The `sessions` row: what a write puts in it ([`SessionRecord`]) and
//! what a read gets from it ([`SessionRow`]), beside the one list of its
//! columns (`columns`) that both are written and read through.
//!
//! Note \[One session row\]: besides its migrations (and their entries
//! in `migrate`), a session column is declared here and in `columns`
//! only: the record's field, the row's field, the column's entry (how a
//! native import fills it, the schema version that added it), its write
//! argument and its read. The write statements, the `store copy` column
//! list and the SELECT list of every session read are generated from that
//! entry. A column of free text also goes through the store door
//! (`secrets::mask_record`), a decision about secrets, not about the
//! shape of the row. The status and the verdict are typed ([`Status`],
//! [`Verdict`]) and become text only at the SQL edge (`columns`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{NewEvent, NewMemory, ServiceCheck, ToolCount, UsageRecord};

pub(crate) mod columns;
mod status;
mod verdict;

pub use status::Status;
pub use verdict::Verdict;

/// Everything one session writes, applied in one transaction by
/// [`Store::write_session`](crate::Store::write_session): the session's
/// columns (Note \[One session row\]) and the rows it adds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Session id (ours, not the agent's: several runs may replay one transcript).
    pub id: String,
    /// The session that escalated to this one.
    pub parent_id: Option<String>,
    /// Tier (1 observe, 2 investigate, 3 remediate).
    pub tier: u32,
    /// Profile used to extract.
    pub profile: Option<String>,
    /// Agent kind (`claude`, `codex`, `raw`, `replay`).
    pub agent: Option<String>,
    /// Model, as the agent reported it (or as configured).
    pub model: Option<String>,
    /// What became of it.
    pub status: Status,
    /// The agent's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Start time (RFC 3339 UTC).
    pub started_at: String,
    /// End time (RFC 3339 UTC); also the `created_at` of the session's rows.
    pub ended_at: Option<String>,
    /// Cost the agent reported.
    pub cost_usd: Option<f64>,
    /// Duration the agent reported.
    pub duration_ms: Option<u64>,
    /// Turns the agent reported.
    pub num_turns: Option<u64>,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Which extraction path won (`structured`, `fenced`, `markers`, `markers+handoff`, ...).
    pub extraction_method: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Error category.
    pub error_category: Option<String>,
    /// The agent's summary.
    pub summary: Option<String>,
    /// The escalation object, as JSON.
    pub escalation: Option<Value>,
    /// Path of the forensic log.
    pub raw_log_path: Option<String>,
    /// The extracted value (stored as compact JSON), for the session page.
    #[serde(default)]
    pub output: Option<Value>,
    /// The validation verdict.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// Events to insert.
    pub events: Vec<NewEvent>,
    /// Memories to insert or reinforce.
    pub memories: Vec<NewMemory>,
    /// Services checked.
    pub services: Vec<ServiceCheck>,
    /// For a child session: the services its parent escalated for (one
    /// `escalations` row each, which the cooldown policy counts).
    #[serde(default)]
    pub escalated_for: Vec<String>,
    /// The project the session worked in (a native session's `cwd`).
    #[serde(default)]
    pub project: Option<String>,
    /// The git branch the agent reported.
    #[serde(default)]
    pub git_branch: Option<String>,
    /// The agent's own version (`2.1.23`, `0.104.0`).
    #[serde(default)]
    pub agent_version: Option<String>,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// `cost_usd` was computed from usage and a price table, not reported
    /// by the agent.
    #[serde(default)]
    pub cost_estimated: bool,
    /// The agent's own session file this session was imported from.
    #[serde(default)]
    pub source_path: Option<String>,
    /// Tool calls and errors per tool (`session_tools` rows).
    #[serde(default)]
    pub tools: Vec<ToolCount>,
    /// The session's model calls (`usage_calls` rows), written by
    /// [`Store::save_native`](crate::Store::save_native) when not empty: each upserted by its key,
    /// a key another session stored first left to it (counted once).
    #[serde(default)]
    pub usage: Vec<UsageRecord>,
}

impl SessionRecord {
    /// A record with only the required fields set (tier 1).
    pub fn new(id: &str, started_at: &str, status: impl Into<Status>) -> Self {
        SessionRecord {
            id: id.to_owned(),
            tier: 1,
            status: status.into(),
            started_at: started_at.to_owned(),
            ..SessionRecord::default()
        }
    }
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
    pub status: Status,
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
