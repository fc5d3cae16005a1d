//! # agentshape-store
//!
//! Persistence for agent sessions: what each run was, the events it reported,
//! the operational memories it taught us, the services it checked, and the
//! escalations made from it (seed 000's tables). SQLite is the default,
//! embedded backend ([`SqliteStore`]); everything goes through the [`Store`]
//! trait so a Postgres backend can be added without touching callers.
//!
//! Each session is written in one transaction: either the session and all its
//! rows are there, or none are. The forensic log written by the runtime holds
//! everything needed to rebuild a session, so a crash loses nothing.
//!
//! ```
//! use agentshape_store::{Session, SqliteStore, Store, NewEvent};
//!
//! let mut store = SqliteStore::open_in_memory().unwrap();
//! let mut rec = Session::new("s1", "2025-07-14T03:12:09.000Z", "completed");
//! rec.events.push(NewEvent { level: "critical".into(), service: Some("jellyfin".into()), message: "HTTP 502".into() });
//! let report = store.write_session(&rec).unwrap();
//! assert_eq!(report.events, 1);
//! ```

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

pub mod alerts;
mod backend;
pub mod conninfo;
pub mod copy;
pub mod error;
mod hooks;
pub mod memory;
pub mod migrate;
pub mod postgres;
pub mod query;
mod rows;
pub mod secrets;
mod session;
pub mod sqlite;
pub mod time;
pub mod tls;
mod tx;
pub mod url;
mod writes;

use agentshape_core::secrets::{MaskKey, Masker};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use copy::{CopyReport, copy};
pub use error::{Error, ErrorKind, Result};
pub use memory::{MemoryKey, parse_memory_key};
pub use postgres::PgStore;
pub use session::{Session, Status, Verdict, count};
pub use sqlite::SqliteStore;
pub use url::{STORE_ENV, StoreUrl};

/// The default database file, relative to the working directory.
pub const DEFAULT_DB: &str = "agentshape.db";

/// The event levels the store accepts (seed 000's schema enum).
pub const LEVELS: &[&str] = &["info", "warning", "critical"];

/// How often a running session refreshes its heartbeat.
pub const HEARTBEAT_INTERVAL_MS: i64 = 5_000;

/// A `running` session whose heartbeat is older than this is `lost`.
///
/// Note \[Lost sessions\]: `run` writes a `running` row when it starts and
/// refreshes `heartbeat_at` every [`HEARTBEAT_INTERVAL_MS`] while the agent
/// runs. A process that is killed with SIGKILL (or whose machine died) cannot write its
/// final row, so its row stays `running` forever; three missed heartbeats
/// (a heartbeat is cheap, but may be skipped when the store is busy) is the
/// point where we stop believing it is alive and call it `lost`. A lost
/// session is not rewritten by readers: its forensic log holds everything
/// and `agentshape ingest <log>` completes the row.
pub const LOST_AFTER_MS: i64 = 3 * HEARTBEAT_INTERVAL_MS;

/// The confidence of a newly learned memory.
pub const NEW_MEMORY_CONFIDENCE: f64 = 0.7;

/// How much one reinforcement raises a memory's confidence (capped at 1.0).
pub const REINFORCE_STEP: f64 = 0.1;

/// One event reported by an agent (`structured_output.events[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewEvent {
    /// `info`, `warning` or `critical`; anything else is rejected at insertion.
    pub level: String,
    /// The service it concerns, if any.
    pub service: Option<String>,
    /// What happened.
    pub message: String,
}

/// One memory reported by an agent (`structured_output.memories[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMemory {
    /// `service:category` or `category`.
    pub key: String,
    /// The observation.
    pub value: String,
}

/// One checked service (`structured_output.services_checked[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceCheck {
    /// Service name.
    pub name: String,
    /// `healthy`, `degraded`, `down` or `unreachable`.
    pub status: String,
    /// Extra detail.
    pub detail: Option<String>,
}

/// One model call of a session, as stored (`usage_calls`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    /// `msg:<message id>:<request id>` (named across files) or
    /// `<session id>#<n>` (only its file names it).
    pub key: String,
    /// When the call was made, ms since the epoch.
    pub at_ms: i64,
    /// The model (empty when not said).
    pub model: String,
    /// Made by an inline sub-agent.
    pub sidechain: bool,
    /// Its tokens.
    pub tokens: agentshape_core::usage::UsageTokens,
}

/// Calls of one tool in one session, and how many of them failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCount {
    /// Tool name as the agent called it (`Bash`, `shell`, `apply_patch`).
    pub tool: String,
    /// Calls.
    pub calls: u64,
    /// Calls whose result was an error.
    pub errors: u64,
}

/// How far one native session file has been imported (a `native_files`
/// row).
///
/// Note \[Import marks\]: a mark names the file by path and by what it
/// was when read (device, inode, size, modification time), and says how
/// far it was read: `offset` is always just after a newline, so a line the
/// agent is still writing is read whole on a later pass. An importer that
/// finds the same device, inode, size and mtime reads nothing; the same
/// file grown reads from `offset`; another inode, or a size below `offset`
/// (replaced or truncated) is re-read whole, once, with
/// [`NativeMark::reset`] set so [`Store::save_native`] first drops the feed
/// and tool rows the previous reading stored. The mark is saved in the
/// transaction that stores the lines it covers, so a crash between the two
/// cannot append a line twice or lose one.
///
/// Note \[Two importers\]: `serve --watch` and an `import` (or two
/// machines) may read the same grown file from the same mark. Each save
/// says which stored offset it continues ([`NativeMark::expect_offset`]);
/// the store compares it with the stored mark under the write lock and
/// writes nothing when they differ ([`NativeReport::conflict`]): the
/// importer then reads the stored mark and goes on from there, so no line
/// is stored twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeMark {
    /// The file, as the importer names it (absolute).
    pub path: String,
    /// The stored session its lines belong to.
    pub session_id: String,
    /// `claude-code`, `codex` or `gemini-cli`.
    pub agent: String,
    /// Device of the file when read.
    pub dev: u64,
    /// Inode of the file when read.
    pub inode: u64,
    /// Size of the file when read.
    pub size: u64,
    /// Bytes read: the end of the last complete line.
    pub offset: u64,
    /// Modification time when read, in milliseconds since the epoch.
    pub mtime_ms: i64,
    /// Complete lines read so far.
    pub lines: u64,
    /// When the mark was saved (RFC 3339).
    pub updated_at: String,
    /// Not stored: this save re-read the file whole, so the session's
    /// earlier feed and tool rows are dropped first (Note \[Import
    /// marks\]).
    #[serde(default, skip_serializing)]
    pub reset: bool,
    /// Not stored: the offset of the stored mark this save continues
    /// (`None`: the file had no mark). When the stored mark says otherwise
    /// another importer got there first, and nothing is written (Note
    /// \[Two importers\]). Not checked on a reset.
    #[serde(default, skip_serializing)]
    pub expect_offset: Option<u64>,
}

/// What [`Store::save_native`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NativeReport {
    /// The session row was new (false: its aggregate columns were updated).
    pub inserted: bool,
    /// Feed rows appended.
    pub feed: usize,
    /// Feed rows dropped first (a reset).
    pub feed_dropped: usize,
    /// A placeholder row was made for a parent not imported yet.
    pub placeholder_parent: bool,
    /// Nothing was written: the stored mark is not the one this save
    /// continues (Note \[Two importers\]).
    pub conflict: bool,
}

/// What writing one session did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WriteReport {
    /// False when a session with that id already existed (nothing was written).
    pub inserted: bool,
    /// Events inserted.
    pub events: usize,
    /// Events rejected (bad level).
    pub events_rejected: usize,
    /// Memories inserted new.
    pub memories_new: usize,
    /// Existing memories reinforced.
    pub memories_reinforced: usize,
    /// Memories skipped because their key could not be mapped.
    pub memories_rejected: usize,
    /// Services rows inserted.
    pub services: usize,
    /// Why rows were rejected, one line each.
    pub warnings: Vec<String>,
}

/// One call of `agentshape hook` (a `hook_calls` row), and the session
/// facts [`Store::save_hook`] needs when the call makes or fills in the
/// session's row.
///
/// Note \[Hook chains\]: Claude Code calls a `Stop` (or `SubagentStop`)
/// hook each time the agent (or one sub-agent) tries to end its turn; a
/// block sends the model back to work and the next try calls the hook
/// again. The tries of one turn since the last one that was let through
/// with a verdict (`valid`, `allowed`) are one chain, per session and
/// sub-agent: its length is what `--max-blocks` bounds, so a model that
/// cannot comply is let go instead of looping forever
/// ([`Store::hook_chain`]). A turn starts at a call without
/// `stop_hook_active` (Claude Code sets it only while a stop hook keeps the
/// turn going), so a new turn starts a new count; a `gave_up` does not end
/// the chain (issue 40): a later try of the same turn, sent back by another
/// hook, is let go again instead of blocked once more. The rows are kept
/// whole (not a counter) so the session page can show each attempt's
/// errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCall {
    /// Claude Code's session id (the id `agentshape import` stores the
    /// session under).
    pub session_id: String,
    /// `SubagentStop`: the sub-agent's id; `None` for the main agent.
    pub agent_id: Option<String>,
    /// `SubagentStop`: the sub-agent's type.
    pub agent_type: Option<String>,
    /// `Stop`, `SubagentStop` or `PostToolUse`.
    pub event: String,
    /// `valid`, `blocked`, `gave_up`, `allowed` or `captured`.
    pub verdict: String,
    /// The extraction method tried (`structured`, `fenced`, `bare`,
    /// `repaired`, `markers`, `none`).
    pub method: Option<String>,
    /// The violations, a JSON array of `{instance_path, schema_path, message}`.
    pub errors: Option<Value>,
    /// Blocks in a row in this chain, this call included (0 when let through).
    pub blocks: u32,
    /// Claude Code said the model is already continuing because of a stop hook.
    pub stop_hook_active: bool,
    /// The profile name or path, or the schema path, used.
    pub profile: Option<String>,
    /// The block reason given to the model.
    pub reason: Option<String>,
    /// The text that was validated (the caller cuts it).
    pub message: Option<String>,
    /// Why the hook allowed without checking (bad input, no profile, ...).
    pub warning: Option<String>,
    /// When (RFC 3339 UTC).
    pub created_at: String,
    /// The hook input's `cwd`: the session's project when the row is made.
    pub project: Option<String>,
    /// The hook input's `transcript_path`: the session's `source_path` when
    /// the row is made.
    pub transcript_path: Option<String>,
    /// The extracted value (`Stop`/`SubagentStop`), for the session's `output`.
    pub output: Option<Value>,
}

impl HookCall {
    /// A call with only the required fields set (no sub-agent, 0 blocks).
    pub fn new(session_id: &str, event: &str, verdict: &str, created_at: &str) -> Self {
        HookCall {
            session_id: session_id.to_owned(),
            agent_id: None,
            agent_type: None,
            event: event.to_owned(),
            verdict: verdict.to_owned(),
            method: None,
            errors: None,
            blocks: 0,
            stop_hook_active: false,
            profile: None,
            reason: None,
            message: None,
            warning: None,
            created_at: created_at.to_owned(),
            project: None,
            transcript_path: None,
            output: None,
        }
    }
}

/// What the store knows of the current stop chain of one session (or one
/// sub-agent): Note \[Hook chains\].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookChain {
    /// `blocked` calls in the chain.
    pub blocks: u32,
    /// Calls in the chain made with `stop_hook_active`.
    pub active: u32,
}

/// What [`Store::save_hook`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSaved {
    /// The `hook_calls` row id.
    pub id: i64,
    /// The session row did not exist and was made.
    pub session_inserted: bool,
}

/// The most violations a `hook` feed row lists (the row is for a live
/// page; the whole list is in `hook_calls`).
pub const HOOK_FEED_ERRORS: usize = 5;

/// The most characters of the block reason a `hook` feed row holds.
pub const HOOK_FEED_REASON_CHARS: usize = 500;

/// One entry to append to the live feed (DESIGN.md "Live feed contract").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedEntry {
    /// The session it belongs to.
    pub session_id: String,
    /// `started`, `line`, `event`, `ended`, `heartbeat`, ...
    pub kind: String,
    /// JSON text.
    pub body: String,
    /// When it was seen (RFC 3339 UTC).
    pub created_at: String,
    /// The writer's number for this entry: from 0 for each session, in the
    /// order written. A numbered entry is stored once however often its
    /// write is retried (Note \[Feed writes land once\] in `writes`);
    /// `None` for an entry its writer sends once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
}

/// One stored feed row: the id is the SSE event id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedRow {
    /// Strictly increasing, never reused.
    pub id: i64,
    /// The session it belongs to.
    pub session_id: String,
    /// Kind of entry.
    pub kind: String,
    /// JSON text.
    pub body: String,
    /// When it was seen.
    pub created_at: String,
}

/// Counts of every table, and the latest rows, for a readable summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Overview {
    /// Sessions by status, sorted by status.
    pub sessions_by_status: Vec<(String, u64)>,
    /// Event counts by level, sorted by level.
    pub events_by_level: Vec<(String, u64)>,
    /// Active memories.
    pub active_memories: u64,
    /// Inactive (pruned) memories.
    pub inactive_memories: u64,
    /// `services_checked` rows.
    pub services_checked: u64,
    /// Escalations made.
    pub escalations: u64,
    /// `running` sessions whose heartbeat is stale (Note \[Lost sessions\]).
    pub lost: u64,
    /// Sessions, oldest first: (id, tier, status, extraction method, summary).
    pub sessions: Vec<SessionLine>,
    /// Active memories, most confident first.
    pub memories: Vec<MemoryLine>,
}

/// One session in an [`Overview`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionLine {
    /// Session id.
    pub id: String,
    /// Parent session id.
    pub parent_id: Option<String>,
    /// Tier.
    pub tier: u32,
    /// Status.
    pub status: String,
    /// Extraction method.
    pub extraction_method: Option<String>,
    /// Error category.
    pub error_category: Option<String>,
    /// Events stored for it.
    pub events: u64,
    /// Summary.
    pub summary: Option<String>,
    /// Last heartbeat of a running session.
    pub heartbeat_at: Option<String>,
    /// A `running` session whose heartbeat is stale (Note \[Lost sessions\]).
    pub lost: bool,
    /// The forensic log, for the `ingest` hint.
    pub raw_log_path: Option<String>,
}

/// One memory in an [`Overview`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemoryLine {
    /// Service, when the key named one.
    pub service: Option<String>,
    /// Category.
    pub category: String,
    /// Observation.
    pub observation: String,
    /// Confidence 0..=1.
    pub confidence: f64,
}

/// A request to escalate, checked and recorded in one atomic step by
/// [`Store::claim_escalation`] (Note \[Escalation claims\]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRequest {
    /// The session that asked to escalate.
    pub parent_id: String,
    /// The id the child session will have (chosen before it runs).
    pub child_id: String,
    /// The tier the child runs at.
    pub tier: u32,
    /// The highest tier the policy allows; a claim above it is refused.
    pub max_tier: u32,
    /// The services the escalation is for (one claim row each).
    pub services: Vec<String>,
    /// Start of the cooldown window (RFC 3339): escalations before it do not count.
    pub since: String,
    /// Escalations per service allowed within the window.
    pub max_per_window: u64,
    /// Who claims (the supervisor's lease holder id), for forensics.
    pub holder: String,
    /// When (RFC 3339, the caller's clock, as the escalation rows it is compared with).
    pub now: String,
    /// When an unused claim stops counting (RFC 3339): a claim whose child
    /// session never started (its supervisor died first) must not block forever.
    pub expires_at: String,
}

/// What [`Store::claim_escalation`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Recorded: the child may run.
    Granted,
    /// A service is at its cooldown limit; nothing was recorded.
    Cooldown {
        /// The first service (in sorted order) at the limit.
        service: String,
        /// Escalations counted for it within the window.
        count: u64,
    },
    /// The tier is above the policy's highest; nothing was recorded.
    MaxTier,
}

/// The state of a lease after [`Store::acquire_lease`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseState {
    /// Ours until `expires_at` (the database's clock).
    Held {
        /// RFC 3339.
        expires_at: String,
    },
    /// Someone else's, unexpired.
    Busy {
        /// The other holder.
        holder: String,
        /// When it lapses unless renewed (RFC 3339, the database's clock).
        expires_at: String,
    },
}

/// A place sessions are persisted. SQLite implements it; a Postgres backend can too.
/// `Send`, so a session that writes to it is a `Send` future (the Claude Code
/// provider runs sessions behind the object-safe `Provider` trait).
pub trait Store: Send {
    /// Write a session and all its rows in one transaction. A `running` row
    /// left by [`Store::start_session`] becomes the final one (updated, with
    /// its children rows). Idempotent: when a finished session with the same
    /// id exists nothing is written and [`WriteReport::inserted`] is false.
    ///
    /// Events with a level outside [`LEVELS`] are rejected (defense in depth:
    /// the schema already says so); memories whose key is not
    /// `service:category` or `category` are rejected; an active memory with
    /// the same service and category is reinforced instead of duplicated.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn write_session(&mut self, record: &Session) -> Result<WriteReport>;

    /// Record that a session started: a `running` row (heartbeat = start) and
    /// a `started` feed row, in one transaction, so `sessions` shows it from
    /// its start. Starting again an id that is still `running` is a no-op.
    ///
    /// # Errors
    /// [`Error::IdTaken`] when a finished session has the id; store failures.
    fn start_session(&mut self, record: &Session) -> Result<()>;

    /// Refresh the heartbeat of a running session. Cheap, with a short busy
    /// timeout and no retry: callers may ignore a failure (the next beat
    /// tries again; see Note \[Lost sessions\]).
    ///
    /// # Errors
    /// When the database cannot be written now.
    fn heartbeat(&mut self, id: &str, at: &str) -> Result<()>;

    /// Append a batch of feed entries in one transaction.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn append_feed(&mut self, entries: &[FeedEntry]) -> Result<()>;

    /// Like [`Store::append_feed`], but with the heartbeat's short patience
    /// and no retry: a session's live lines are flushed beside the agent's
    /// stream, which must not wait on a busy store (the caller keeps the
    /// entries and tries again; runtime's Note \[Live feed\]).
    ///
    /// # Errors
    /// When the database cannot be written now.
    fn append_feed_now(&mut self, entries: &[FeedEntry]) -> Result<()> {
        self.append_feed(entries)
    }

    /// Feed rows with an id greater than `after_id`, oldest first, at most
    /// `limit`: resuming from the last id seen has no gap and no duplicate.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn feed_after(&self, after_id: i64, limit: usize) -> Result<Vec<FeedRow>>;

    /// As [`Store::feed_after`], but the page also ends at the row whose
    /// body brings it to `max_bytes` (it always holds one row when one is
    /// there): what a reader holds is bounded whatever the rows' sizes. A
    /// count alone was not: a first page of small rows sized the next at
    /// 500 rows, and 500 tool results of 64 KiB were held per feed client
    /// (issue 40). This default reads the page and cuts it; the backends
    /// stop reading there.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn feed_page(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
        let mut rows = self.feed_after(after_id, limit)?;
        let mut bytes = 0usize;
        let keep = rows
            .iter()
            .take_while(|r| {
                let more = bytes < max_bytes;
                bytes = bytes.saturating_add(r.body.len());
                more
            })
            .count();
        rows.truncate(keep.max(1));
        Ok(rows)
    }

    /// Whether a session with this id exists.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn has_session(&self, id: &str) -> Result<bool>;

    /// How many escalations were made for `service` at or after `since` (RFC 3339).
    ///
    /// # Errors
    /// When the database cannot be read.
    fn escalations_since(&self, service: &str, since: &str) -> Result<u64>;

    /// Note \[Escalation claims\]: decide "may these services escalate
    /// now?" and record the answer in one atomic step, so two supervisors
    /// sharing the store cannot both pass a cooldown check that only one
    /// escalation fits in. Counted per service within the window: the
    /// `escalations` rows, plus the claims not yet backed by one that are
    /// still live (unexpired, or whose child session has started). Granted:
    /// one `escalation_claims` row per service. Refused: nothing written.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn claim_escalation(&mut self, request: &ClaimRequest) -> Result<Claim>;

    /// Take lease `name` for `holder` for `ttl_ms` (Note \[Supervisor
    /// leases\] in the runtime's `ops`): granted when it is free, expired
    /// or already `holder`'s (then it is renewed). Expiry is judged by the
    /// database's clock, the one clock every machine sharing it agrees on.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn acquire_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState>;

    /// Give lease `name` up if `holder` has it; whether it did.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn release_lease(&mut self, name: &str, holder: &str) -> Result<bool>;

    /// Deactivate active memories not reinforced since `before` (RFC 3339);
    /// returns how many.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn prune_memories(&mut self, before: &str) -> Result<u64>;

    /// Counts and latest rows for a readable summary.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn overview(&self) -> Result<Overview>;

    /// Every native file's import mark, in one query (an importer compares
    /// thousands of files with their marks by `stat` alone; Note \[Import
    /// marks\]).
    ///
    /// # Errors
    /// When the database cannot be read.
    fn native_marks(&self) -> Result<Vec<NativeMark>>;

    /// The import mark of one file.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn native_mark(&self, path: &str) -> Result<Option<NativeMark>>;

    /// Store what one pass over a native session file read, in one
    /// transaction (Note \[Import marks\]): when `mark.reset`, first drop
    /// the session's feed and `session_tools` rows; insert the session, or
    /// update the aggregate columns of the stored one (everything but its
    /// id; no `ended` feed row: a native session has no end the store could
    /// witness); replace its `session_tools` rows with `record.tools`;
    /// append `feed`; upsert `mark`. A `parent_id` not stored yet (a
    /// sub-agent's file read before its parent's) gets a placeholder row
    /// (status `running`, the child's start) that the parent's own import
    /// later fills in. `record.events`, `memories`, `services` and
    /// `escalated_for` are not written here.
    ///
    /// # Errors
    /// When the database cannot be written; nothing is written then.
    fn save_native(
        &mut self,
        record: &Session,
        feed: &[FeedEntry],
        mark: &NativeMark,
    ) -> Result<NativeReport>;

    /// Store what a usage-only pass read of one file (issue 39): the
    /// session row (as [`Store::save_native`] writes it, through the same
    /// masking door) and its model calls, replacing the calls an earlier
    /// usage pass stored for it; no feed. `mark` goes to `usage_files`,
    /// never `native_files`, so a later import still reads the file whole
    /// and stores its transcript (dropping this mark then). The mark's
    /// `reset` and `expect_offset` are not read.
    ///
    /// # Errors
    /// When the database cannot be written; nothing is written then.
    fn save_usage(&mut self, record: &Session, mark: &NativeMark) -> Result<NativeReport>;

    /// Every file a usage-only pass read (`usage_files`), by path; none on
    /// a store older than that table.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn usage_marks(&self) -> Result<Vec<NativeMark>>;

    /// The chain of `Stop`/`SubagentStop` calls of (`session_id`,
    /// `agent_id`) that a call with `stop_hook_active` continues (Note
    /// \[Hook chains\]): the calls since the last one without
    /// `stop_hook_active` (it included) and after the last `valid` or
    /// `allowed` one; how many were blocked, and how many came with
    /// `stop_hook_active`. A call without `stop_hook_active` starts a chain
    /// of its own and needs no count. `agent_id` `None` is the main agent
    /// (rows whose `agent_id` is NULL).
    ///
    /// # Errors
    /// When the database cannot be read.
    fn hook_chain(&self, session_id: &str, agent_id: Option<&str>) -> Result<HookChain>;

    /// Record one hook call, in one transaction: make the session row when
    /// there is none (status `completed`, agent `claude-code`, started and
    /// ended at the call, its project, `source_path` = the transcript, the
    /// profile, tier 1); for the main agent's `Stop` with a verdict of
    /// `valid`, `gave_up` or `blocked`, set the session's verdict
    /// (`{"valid", "errors", "repairs": [], "coercions": []}`), extraction
    /// method, output and (when given) profile; insert the `hook_calls`
    /// row; append `feed`, then one `hook` feed row for the call itself
    /// (its id, event, verdict, blocks, sub-agent, method, the first
    /// [`HOOK_FEED_ERRORS`] errors, the reason cut to
    /// [`HOOK_FEED_REASON_CHARS`]) so the live feed shows it (not for a
    /// `PostToolUse` capture: its `feed` rows are what it brings). Everything
    /// goes through the store door first (Note \[Store door\]): secrets in
    /// the message, reason, errors and warning are recorded with place
    /// `hook`.
    ///
    /// # Errors
    /// When the database cannot be written; nothing is written then.
    fn save_hook(&mut self, call: &HookCall, feed: &[FeedEntry]) -> Result<HookSaved>;

    /// The store's mask key (Note \[Store door\] in `secrets`): made when
    /// the store was first opened for writing; `None` for a read-only
    /// store written before masking existed.
    fn mask_key(&self) -> Option<MaskKey> {
        None
    }

    /// The masker every written row goes through (Note \[Store door\]);
    /// `None` writes raw text (`--no-mask`). A store opened for writing
    /// starts with the built-in rules and its own key.
    fn set_masker(&mut self, masker: Option<Masker>) {
        let _ = masker;
    }

    /// The masker rows go through, if masking is on.
    fn masker(&self) -> Option<&Masker> {
        None
    }

    /// Where the store is, as `--store` takes it (a URL's password
    /// redacted), for messages that give a command to run later (the
    /// `ingest` hint of a session the store could not take); `None` when
    /// it has no such name (in memory).
    fn location(&self) -> Option<String> {
        None
    }

    /// How the store is reached, when a user should know: a Postgres
    /// connection that is plain TCP or TLS without the full certificate
    /// check (Note \[sslmode\] in `tls`); `None` otherwise.
    fn transport(&self) -> Option<String> {
        None
    }
}
