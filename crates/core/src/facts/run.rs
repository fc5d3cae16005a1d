//! What one agent run said and how it ended (DESIGN.md, "Run summary").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorCategory, Format, SessionInfo, Usage, is_zero};
use crate::json::InexactNumber;

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
    /// The session id the result line reports (the run summary's
    /// `session_id` prefers the first `system/init`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The model's stop reason, for formats that report one (`end_turn`, `max_tokens`, `refusal`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The result line's own `error` field (a string, or an error object's
    /// `type: message`), when present: some error results carry their
    /// message there and leave `result` empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool calls the permission system refused (`permission_denials`),
    /// each as `Tool (what it wanted)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permission_denials: Vec<String>,
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
    /// The numbers `structured_output` cannot hold exactly (Note [Big
    /// numbers] in [`crate::json`]); extraction reports each as an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub structured_inexact: Vec<InexactNumber>,
    /// The terminal result, `null` when the stream ended without one.
    pub result: Option<ResultInfo>,
    /// Whether a terminal result was seen.
    pub saw_result: bool,
    /// `apiKeySource` of the first `system/init` (a label, not a secret).
    pub api_key_source: Option<String>,
    /// Working directory of the first `system/init`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
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
    /// The numbers `structured_tool_input` cannot hold exactly (Note [Big
    /// numbers] in [`crate::json`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub structured_tool_inexact: Vec<InexactNumber>,
    /// Invalid UTF-8 sequences of a plain-text input, and lone surrogate
    /// escapes in a transcript's text, that the decoder replaced by U+FFFD:
    /// a value holding U+FFFD is then reported, never silently `valid`
    /// (Note [Replaced text] in `extract::replaced`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replaced_text: u64,
    /// Native session files only: what the session says beyond the run
    /// (absent from every other format's JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Box<SessionInfo>>,
}
