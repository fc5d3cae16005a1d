//! Normalized events: what every decoder produces, whatever the wire format.
//!
//! Claude stream-json, Codex JSONL, provider bodies and plain text all decode to
//! this one vocabulary, so everything downstream (the run summary, the live hub,
//! the store) is written once.

use serde::Serialize;
use serde_json::Value;

use crate::summary::ResultInfo;

/// Why a line produced no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Empty or whitespace-only.
    Blank,
    /// Not valid JSON (or not valid UTF-8).
    Malformed,
    /// Valid JSON, but not an object.
    NonObject,
    /// Longer than the configured limit; skipped without being held in memory.
    TooLong,
}

/// One normalized event of an agent run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Session start (`system/init`, Codex `thread.started`).
    Init {
        /// Session or thread id.
        session_id: Option<String>,
        /// Model name.
        model: Option<String>,
        /// Claude's `apiKeySource` label, when a string.
        api_key_source: Option<String>,
        /// Working directory.
        cwd: Option<String>,
    },
    /// An assistant message begins; its blocks follow as separate events.
    Message {
        /// Message id (several lines may share one).
        id: Option<String>,
        /// Stop reason, when the line carries one.
        stop_reason: Option<String>,
        /// Set for sub-agent messages.
        parent_tool_use_id: Option<String>,
    },
    /// An assistant text block.
    Text {
        /// The text (empty when the block had none).
        text: String,
    },
    /// A thinking / reasoning block.
    Thinking {
        /// The reasoning text.
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// Tool-use id.
        id: Option<String>,
        /// Tool name (`Bash`, `Task`, `StructuredOutput`, ...).
        name: String,
        /// The tool's input.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_use_id: Option<String>,
        /// Whether the tool reported an error.
        is_error: bool,
        /// The result content as text, only when the decoder keeps it.
        content: Option<String>,
    },
    /// A partial-message delta (`stream_event`, `--include-partial-messages`).
    Partial {
        /// Content block index.
        index: Option<u64>,
        /// A text delta.
        text: Option<String>,
        /// A tool-input JSON fragment (`input_json_delta.partial_json`).
        partial_json: Option<String>,
    },
    /// The terminal result of the run.
    Result(Box<ResultEvent>),
    /// A line that produced nothing (counted, never fatal).
    Skipped {
        /// 1-based physical line number.
        line: u64,
        /// Why.
        reason: SkipReason,
    },
    /// A recognized object of a type we do not interpret (`system/hook`,
    /// `rate_limit_event`, `keep_alive`, `control_*`, unknown types).
    Other {
        /// Its `type` (and `subtype`, as `type/subtype`).
        kind: String,
    },
}

/// The terminal result of a run, as an event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultEvent {
    /// The result fields.
    pub info: ResultInfo,
    /// Native structured output, when present.
    pub structured_output: Option<Value>,
    /// Session id as the result line reports it.
    pub session_id: Option<String>,
}
