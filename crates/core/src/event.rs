//! Normalized events: what every decoder produces, whatever the wire format.
//!
//! Claude stream-json, Codex JSONL, provider bodies and plain text all decode to
//! this one vocabulary, so everything downstream (the run summary, the live hub,
//! the store) is written once.

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::facts::{ErrorCategory, ResultInfo, TokenCounts};

/// A JSON value kept as its raw text, parsed only when someone asks.
///
/// Tool inputs can be large (whole files for `Write`) and are rarely needed,
/// so decoders copy the bytes instead of building a [`Value`] tree per call.
#[derive(Debug, Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// Wrap an already validated raw value.
    pub fn new(raw: Box<RawValue>) -> Self {
        RawJson(raw)
    }

    /// Copy a borrowed raw value.
    pub fn from_raw(raw: &RawValue) -> Self {
        RawJson(raw.to_owned())
    }

    /// The JSON `null`, for calls that carried no input.
    pub fn null() -> Self {
        Self::from_value(&Value::Null)
    }

    /// Serialize a value (used by decoders that synthesize an input).
    pub fn from_value(value: &Value) -> Self {
        let text = value.to_string();
        match RawValue::from_string(text) {
            Ok(raw) => RawJson(raw),
            // A `Value` always serializes to valid JSON; keep a null otherwise.
            Err(_) => RawJson(Box::<RawValue>::default()),
        }
    }

    /// The raw JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Parse into a [`Value`] (`Value::Null` if that fails, which valid raw text never does).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

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
        /// The tool's input, as raw JSON (parse on demand with [`RawJson::to_value`]).
        input: RawJson,
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
    /// Something the summary should warn about that is not a line skip
    /// (a body over the size limit, plain text cut at the limit, a Codex
    /// `error` item).
    Warning {
        /// The warning text.
        message: String,
    },
    /// Text that no string holds (bytes of a plain-text input that are not
    /// UTF-8, a lone surrogate escape in a transcript's text) was replaced
    /// by U+FFFD (Note [Replaced text] in `extract::replaced`); emitted before the
    /// text.
    ReplacedText {
        /// How many invalid sequences were replaced.
        sequences: u64,
    },
    /// End of input: how many physical lines were read and how many decoded
    /// to a JSON object. Always the last event a decoder emits.
    End {
        /// Physical lines read (blank and skipped ones included).
        lines: u64,
        /// Lines (or bodies) that decoded to a JSON object.
        objects: u64,
    },
    /// A recognized object of a type we do not interpret (`system/hook`,
    /// `rate_limit_event`, `keep_alive`, `control_*`, unknown types).
    Other {
        /// Its `type` (and `subtype`, as `type/subtype`).
        kind: String,
    },
    /// Native session files (Claude Code session, Codex rollout, Gemini
    /// chat): the context of one line (one message of a Gemini chat),
    /// emitted before the line's other events.
    Line(Box<LineInfo>),
    /// A real user prompt (not a tool result, not a compact summary, not
    /// injected context).
    UserText {
        /// The prompt text.
        text: String,
    },
    /// Token usage a native line reports (Note \[Native tokens\] in
    /// `summary`).
    Usage {
        /// The API message id (Claude writes one line per content block,
        /// so several lines repeat it).
        message_id: Option<String>,
        /// The API request id (Claude `requestId`).
        request_id: Option<String>,
        /// The model that produced it.
        model: Option<String>,
        /// The counts.
        tokens: TokenCounts,
        /// Whether the counts are the session's running totals (Codex
        /// `token_count`) rather than one message's.
        cumulative: bool,
    },
    /// The conversation was compacted.
    Compaction {
        /// `compact_boundary`, `microcompact_boundary` or `codex_compacted`.
        kind: String,
        /// `auto` or `manual`, when recorded.
        trigger: Option<String>,
        /// Tokens in context before compaction, when recorded.
        pre_tokens: Option<u64>,
    },
    /// The summary a compaction left in place of the conversation (Claude's
    /// `isCompactSummary` user line, Codex `compacted.message`).
    CompactSummary {
        /// The summary text.
        text: String,
    },
    /// An API error the agent recorded (Claude `system/api_error`, a
    /// `<synthetic>` assistant message with `isApiErrorMessage`, a Codex
    /// `error` event, a Gemini `error` message).
    ApiError {
        /// The error text.
        message: String,
        /// Its category (from the HTTP status, else the text's keywords).
        category: ErrorCategory,
        /// The HTTP status, when recorded.
        status: Option<u64>,
    },
    /// A sub-agent reported progress to its parent (Claude 2.1.x `progress`
    /// lines with `data.type: "agent_progress"`).
    SubAgent {
        /// The sub-agent's id (its `subagents/agent-<id>.jsonl` file).
        agent_id: String,
        /// The `Task` tool call that started it.
        tool_use_id: Option<String>,
    },
    /// A tool result that reports an error, attributed to the tool that
    /// was called (emitted after its [`Event::ToolResult`]).
    ToolError {
        /// The call it answers.
        tool_use_id: Option<String>,
        /// The tool's name (`unknown` when the call was not seen).
        name: String,
    },
    /// One physical line held several JSON objects glued together; each was
    /// decoded.
    Glued {
        /// 1-based physical line number.
        line: u64,
        /// How many complete objects it held.
        objects: u64,
    },
}

/// The context of one line of a native session file ([`Event::Line`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LineInfo {
    /// The line's own id (Claude `uuid`, a Gemini message id).
    pub uuid: Option<String>,
    /// The line it follows (Claude `parentUuid`).
    pub parent_uuid: Option<String>,
    /// The timestamp, as written.
    pub timestamp: Option<String>,
    /// The line's type: `assistant`, `system:api_error`,
    /// `event_msg:token_count`, ...
    pub kind: String,
    /// Whether the line belongs to a sub-agent (Claude `isSidechain`).
    pub sidechain: bool,
    /// The sub-agent id (Claude 2.1.x `agentId`).
    pub agent_id: Option<String>,
    /// Working directory, when the line records one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The agent's version, when the line records one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The git branch, when the line records one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The agent's session id, when the line records one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The model that wrote the line (or that the turn uses), when named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The terminal result of a run, as an event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultEvent {
    /// The result fields.
    pub info: ResultInfo,
    /// Native structured output, when present.
    pub structured_output: Option<Value>,
    /// The numbers `structured_output` cannot hold exactly (Note [Big
    /// numbers] in [`crate::json`]).
    pub structured_inexact: Vec<crate::json::InexactNumber>,
    /// Session id as the result line reports it.
    pub session_id: Option<String>,
    /// An error the decoder derived from the result's shape when the agent did
    /// not flag `is_error` (a provider refusal, output cut at the token limit).
    pub error: Option<String>,
    /// The category the result's shape implies (subtype, provider stop
    /// reason, error type). For an `is_error` result the error text's
    /// keywords win over it, except for `refusal` and `max_tokens`, which a
    /// decoder sets only from unambiguous fields.
    pub category: Option<ErrorCategory>,
}
