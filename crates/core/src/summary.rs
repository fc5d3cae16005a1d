//! The run summary: what one agent run said and how it ended.
//!
//! Built by folding decoded [`Event`](crate::Event)s through a
//! [`SummaryBuilder`]; its JSON form is DESIGN.md's "Run summary", plus line
//! counters and per-tool counts that batch users and benchmarks need.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decode::Format;

/// Why a run failed, or (for heuristics) why it looks unfinished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// HTTP 429 or a rate-limit message.
    RateLimit,
    /// 401/403, bad or missing credentials.
    Auth,
    /// Any other API or execution error.
    Api,
    /// Heuristic: the agent asked the user a question and stalled.
    Interactive,
    /// Heuristic: the agent launched background tasks and exited before they finished.
    #[serde(rename = "background-task")]
    BackgroundTask,
    /// The CLI gave up producing schema-valid structured output.
    StructuredOutputRetries,
    /// The turn limit was reached.
    MaxTurns,
    /// The budget limit was reached.
    Budget,
    /// The model refused.
    Refusal,
    /// Output was cut by the token limit.
    MaxTokens,
    /// The run timed out.
    Timeout,
    /// The agent executable or model was not found.
    NotFound,
}

impl ErrorCategory {
    /// The name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCategory::RateLimit => "rate_limit",
            ErrorCategory::Auth => "auth",
            ErrorCategory::Api => "api",
            ErrorCategory::Interactive => "interactive",
            ErrorCategory::BackgroundTask => "background-task",
            ErrorCategory::StructuredOutputRetries => "structured_output_retries",
            ErrorCategory::MaxTurns => "max_turns",
            ErrorCategory::Budget => "budget",
            ErrorCategory::Refusal => "refusal",
            ErrorCategory::MaxTokens => "max_tokens",
            ErrorCategory::Timeout => "timeout",
            ErrorCategory::NotFound => "not_found",
        }
    }

    /// Whether this category is an advisory heuristic (a warning, not an error).
    pub fn is_heuristic(self) -> bool {
        matches!(
            self,
            ErrorCategory::Interactive | ErrorCategory::BackgroundTask
        )
    }
}

/// Token usage, summed where a format reports it per turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// What the terminal `result` line (or a provider's final state) said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultInfo {
    /// `success`, `error_max_turns`, ... as the agent wrote it.
    pub subtype: Option<String>,
    /// Strictly the boolean `is_error` (anything else reads as `false`).
    pub is_error: bool,
    /// Wall time the agent reported.
    pub duration_ms: Option<u64>,
    /// Turns the agent reported.
    pub num_turns: Option<u64>,
    /// Cost the agent reported.
    pub total_cost_usd: Option<f64>,
    /// Token usage (0 when missing or malformed).
    pub usage: Usage,
    /// The result text (`result` on the wire): the final answer, or the error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The `errors: [string]` list of error subtypes, kept verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Why the agent loop stopped (`terminal_reason`), when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_reason: Option<String>,
    /// The HTTP status of the API error behind an error result, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<Value>,
    /// The model's stop reason, for formats that report one (`end_turn`, `max_tokens`, `refusal`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// The summary of one agent run (DESIGN.md, "Run summary").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The input file, as the caller named it (set by the caller).
    pub file: Option<String>,
    /// The decoded format.
    pub format: Format,
    /// The session id (first `system/init`, else the result line).
    pub session_id: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// Assistant text blocks joined with `\n`.
    pub output: String,
    /// The native structured output (`result.structured_output`), when present.
    pub structured_output: Option<Value>,
    /// The terminal result, `null` when the stream ended without one.
    pub result: Option<ResultInfo>,
    /// Whether a terminal result was seen.
    pub saw_result: bool,
    /// `apiKeySource` of the first `system/init` (a label, not a secret).
    pub api_key_source: Option<String>,
    /// The error text (truncated at 4 KB), `null` on success.
    pub error: Option<String>,
    /// The error category, or a heuristic category (with a warning, no `error`).
    pub error_category: Option<ErrorCategory>,
    /// Advisory warnings (`interactive-hang: ...`, `background-task: ...`, no result, ...).
    pub warnings: Vec<String>,
    /// Lines skipped as malformed, non-object or over the length limit.
    pub skipped_lines: u64,
    /// Number of tool calls.
    pub tool_uses: u64,
    /// Physical lines read (including blank and skipped ones).
    pub lines: u64,
    /// Lines that decoded to a JSON object.
    pub events: u64,
    /// Blank or whitespace-only lines.
    pub blank_lines: u64,
    /// Lines that were not valid JSON.
    pub malformed_lines: u64,
    /// Lines that were valid JSON but not an object.
    pub non_object_lines: u64,
    /// Lines over the configured length limit (skipped without being loaded).
    pub too_long_lines: u64,
    /// Number of assistant text blocks joined into `output`.
    pub text_chunks: u64,
    /// Tool calls by tool name.
    pub tool_use_counts: BTreeMap<String, u64>,
    /// The input of the last `StructuredOutput` tool call (how `--json-schema`
    /// is implemented in the Claude CLI): the next candidate when
    /// `structured_output` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_tool_input: Option<Value>,
}
