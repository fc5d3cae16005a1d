//! The run summary: what one agent run said and how it ended.
//!
//! Built by folding decoded [`Event`]s through a
//! [`SummaryBuilder`]; its JSON form is DESIGN.md's "Run summary", plus line
//! counters and per-tool counts that batch users and benchmarks need.

mod native;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decode::Format;
use crate::decode::classify::{self, NO_DETAIL};
use crate::event::{Event, ResultEvent, SkipReason};

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
    /// The provider's body could not be used: over the size cap, cut short,
    /// or not JSON.
    BadResponse,
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
            ErrorCategory::BadResponse => "bad_response",
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

/// Token counts of a native session, per message or summed.
///
/// What `input` means differs by agent, and is kept as each reports it
/// (a price table must know): Claude's `input_tokens` excludes the cached
/// tokens (`cache_read` and `cache_write` are addends); Codex's
/// `input_tokens` includes `cached_input_tokens` (here `cache_read`, a
/// breakdown, not an addend; Codex reports no cache writes); Gemini's
/// `input` includes `cached` likewise, and its `output` here adds the
/// `thoughts` tokens (billed as output) to the reply's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCounts {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache (both durations).
    pub cache_write: u64,
    /// Of `cache_write`, the tokens written for 1 hour (Claude's
    /// `usage.cache_creation.ephemeral_1h_input_tokens`), billed higher.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_1h: u64,
    /// Of `output`, the reasoning tokens, where the agent reports them
    /// (Codex `reasoning_output_tokens`, Gemini `thoughts`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning: u64,
}

impl TokenCounts {
    /// Add `other` to these counts (saturating).
    pub fn add(&mut self, other: &TokenCounts) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
    }

    /// `self - earlier`, each count floored at 0 (a running total's growth).
    #[must_use]
    pub fn since(&self, earlier: &TokenCounts) -> TokenCounts {
        TokenCounts {
            input: self.input.saturating_sub(earlier.input),
            output: self.output.saturating_sub(earlier.output),
            cache_read: self.cache_read.saturating_sub(earlier.cache_read),
            cache_write: self.cache_write.saturating_sub(earlier.cache_write),
            cache_write_1h: self.cache_write_1h.saturating_sub(earlier.cache_write_1h),
            reasoning: self.reasoning.saturating_sub(earlier.reasoning),
        }
    }

    /// Whether every count is 0.
    pub fn is_zero(&self) -> bool {
        *self == TokenCounts::default()
    }
}

/// A sub-agent of a native session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentInfo {
    /// The agent id (2.1.x `agentId`); for a 1.0.x inline sidechain, which
    /// has none, the `uuid` of its first line.
    pub id: String,
    /// The `Task` tool call that started it, when known.
    pub tool_use_id: Option<String>,
    /// Lines seen: its inline sidechain lines (1.0.x), or the parent's
    /// `progress` lines about it (2.1.x).
    pub lines: u64,
    /// The model of its last call, for one inline in the parent's file
    /// (1.0.x); one with a file of its own reports it from that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tokens of its calls, for one inline in the parent's file
    /// (1.0.x), counted once per message as the session's are; they are
    /// part of the session's `tokens` too.
    #[serde(default, skip_serializing_if = "TokenCounts::is_zero")]
    pub tokens: TokenCounts,
}

/// One API error a native session recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorInfo {
    /// Its category.
    pub category: ErrorCategory,
    /// The error text (truncated like `error`).
    pub message: String,
    /// The HTTP status, when recorded.
    pub status: Option<u64>,
    /// The timestamp of its line, as written.
    pub at: Option<String>,
}

/// What a native session file (Claude Code session, Codex rollout, Gemini
/// chat) says beyond the run summary; `None` for every other format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// `claude-code`, `codex` or `gemini-cli`.
    pub agent: String,
    /// The agent's version (the last one recorded: a resumed session may
    /// have been continued by a newer release).
    pub agent_version: Option<String>,
    /// The project: the first working directory recorded.
    pub project: Option<String>,
    /// The git branch (the last non-empty one recorded).
    pub git_branch: Option<String>,
    /// Models used, in first-seen order (`<synthetic>` excluded).
    pub models: Vec<String>,
    /// The first line's timestamp, as written.
    pub started_at: Option<String>,
    /// The last line's timestamp, as written.
    pub ended_at: Option<String>,
    /// Real user prompts.
    pub turns: u64,
    /// Tool calls by tool name.
    pub tool_calls: BTreeMap<String, u64>,
    /// Tool results reporting an error, by tool name.
    pub tool_errors: BTreeMap<String, u64>,
    /// Sub-agents, in first-seen order.
    pub subagents: Vec<SubAgentInfo>,
    /// Lines belonging to sub-agents (`isSidechain`).
    pub sidechain_lines: u64,
    /// Compactions.
    pub compactions: u64,
    /// Distinct assistant messages (by message id).
    pub messages: u64,
    /// Tokens, each message counted once (Note \[Native tokens\]).
    pub tokens: TokenCounts,
    /// Tokens by model.
    pub tokens_by_model: BTreeMap<String, TokenCounts>,
    /// Every model call with its own usage and time (Note \[Message usage\]
    /// in `summary::native`): what daily reports and model-call spans are
    /// made of. Not serialised (`parse --json` prints the sums).
    #[serde(skip)]
    pub usage: Vec<crate::usage::MessageUsage>,
    /// API errors, the first 100 kept.
    pub api_errors: Vec<ApiErrorInfo>,
    /// API errors, all counted.
    pub api_error_count: u64,
    /// Lines by type (`assistant`, `system:compact_boundary`, `event_msg:token_count`, ...).
    pub line_types: BTreeMap<String, u64>,
    /// Lines (or parts) of types the decoder does not interpret, by type.
    pub unknown_types: BTreeMap<String, u64>,
    /// Physical lines that held several JSON objects glued together.
    pub glued_lines: u64,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// For a sub-agent's own file: the parent session's id.
    pub parent_session_id: Option<String>,
    /// For a sub-agent's own file: its agent id.
    pub agent_id: Option<String>,
    /// Cost in USD, from the tokens and a price table (filled by the caller).
    pub cost_usd: Option<f64>,
    /// Whether `cost_usd` is an estimate from usage (filled by the caller).
    pub cost_estimated: bool,
    /// Models the price table does not know (filled by the caller).
    pub unpriced_models: Vec<String>,
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
    pub structured_inexact: Vec<crate::json::InexactNumber>,
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
    pub structured_tool_inexact: Vec<crate::json::InexactNumber>,
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

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The warning for a Claude stream without a `result` line (seed 004).
pub const NO_RESULT_WARNING: &str =
    "stream-json ended without a 'result' message; token usage unavailable";

/// The warning for a Codex stream without a completed turn.
pub const NO_TURN_WARNING: &str =
    "codex stream ended without a 'turn.completed' message; token usage unavailable";

/// The error text of an `is_error` result (Note [Error text of an error result]).
///
/// Note [Error text of an error result]: an error result never ends with an
/// empty `error`. Seed 004 uses the `result` string, and "API error (no
/// detail)" without one; but some results leave `result` empty and put the
/// message elsewhere. The text is the first of these that says something
/// (blank strings say nothing):
///
/// 1. the `result` string, followed by the result's own `error` field
///    (` · `-joined) when that differs: a rate-limit message in `error`
///    must not be hidden behind a generic `result`;
/// 2. the `error` field alone;
/// 3. the 2.1.x `errors` list, joined with `; `;
/// 4. the `permission_denials`: `permission denied: Bash (rm -rf x), Write (f)`;
/// 5. an `error_*` subtype, with what it means when known:
///    `error_max_turns: the maximum number of turns was reached (no detail)`;
/// 6. "API error (no detail)".
///
/// The category then comes from this text's keywords (seed 004), else from
/// the HTTP status of the API error (`api_error_status` 429 → `rate_limit`,
/// 401/403 → `auth`), else from the subtype, else `api`.
fn error_text(info: &ResultInfo) -> String {
    let result = said(info.text.as_deref());
    let error = said(info.error.as_deref());
    match (result, error) {
        (Some(r), Some(e)) if r != e => return format!("{r} · {e}"),
        (Some(t), _) | (None, Some(t)) => return t.to_owned(),
        (None, None) => {}
    }
    let errors: Vec<&str> = info
        .errors
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    if !errors.is_empty() {
        return errors.join("; ");
    }
    if !info.permission_denials.is_empty() {
        return format!("permission denied: {}", info.permission_denials.join(", "));
    }
    if let Some(subtype) = info
        .subtype
        .as_deref()
        .map(str::trim)
        .filter(|s| s.starts_with("error_"))
    {
        return match subtype_meaning(subtype) {
            Some(m) => format!("{subtype}: {m} (no detail)"),
            None => format!("{subtype} (no detail)"),
        };
    }
    NO_DETAIL.to_owned()
}

/// The trimmed text, unless it is blank (blank text says nothing).
fn said(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// What a Claude error subtype means, in words.
fn subtype_meaning(subtype: &str) -> Option<&'static str> {
    match subtype {
        "error_max_turns" => Some("the maximum number of turns was reached"),
        "error_max_budget_usd" => Some("the maximum budget was reached"),
        "error_max_structured_output_retries" => {
            Some("no schema-valid structured output within the allowed retries")
        }
        "error_during_execution" => Some("an error occurred during execution"),
        _ => None,
    }
}

/// The category an API error's HTTP status implies (`429`, `401`, `403`;
/// a number or a numeric string).
fn status_category(status: Option<&Value>) -> Option<ErrorCategory> {
    let code = match status? {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    match code {
        429 => Some(ErrorCategory::RateLimit),
        401 | 403 => Some(ErrorCategory::Auth),
        _ => None,
    }
}

/// Folds decoded [`Event`]s into a [`RunSummary`].
///
/// Push every event of one run in order, then call [`SummaryBuilder::finish`]
/// with the decoded format. The rules are seed 004's (see the Notes below
/// and in [`crate::decode`]):
///
/// - assistant text blocks are joined with `\n` into `output`;
/// - the last result wins for `result`, tokens and `structured_output`, but
///   a later non-error result does not clear an earlier error (a later error
///   replaces it);
/// - the first `Init` wins for session id, model, `apiKeySource` and cwd;
/// - heuristics run at the end, for Claude runs only.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    summary: RunSummary,
    seen_init: bool,
    /// The final top-level assistant message, for the interactive-hang test.
    final_id: Option<String>,
    final_text: String,
    final_stop_reason: Option<String>,
    final_asks: bool,
    top_messages: u64,
    /// Whether the blocks being pushed belong to a top-level message.
    in_top_level: bool,
    background_launches: u64,
    /// Native session files: started by the first [`Event::Line`].
    native: Option<Box<native::NativeState>>,
}

impl SummaryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        SummaryBuilder {
            in_top_level: true,
            ..SummaryBuilder::default()
        }
    }

    /// Fold one event.
    pub fn push(&mut self, event: Event) {
        if self.native.is_none() && matches!(event, Event::Line(_)) {
            self.native = Some(Box::default());
        }
        if let Some(native) = self.native.as_mut() {
            native.push(&event);
        }
        match event {
            Event::Init {
                session_id,
                model,
                api_key_source,
                cwd,
            } => {
                // Seed 004 (DEC-015): the first init wins; later ones are ignored.
                if !self.seen_init {
                    self.seen_init = true;
                    let s = &mut self.summary;
                    s.session_id = session_id.or(s.session_id.take());
                    s.model = model.or(s.model.take());
                    s.api_key_source = api_key_source;
                    s.cwd = cwd;
                }
            }
            Event::Message {
                id,
                stop_reason,
                parent_tool_use_id,
            } => self.message(id, stop_reason, parent_tool_use_id.is_none()),
            Event::Text { text } => {
                if self.summary.text_chunks > 0 {
                    self.summary.output.push('\n');
                }
                self.summary.output.push_str(&text);
                self.summary.text_chunks += 1;
                if self.in_top_level {
                    if !self.final_text.is_empty() {
                        self.final_text.push('\n');
                    }
                    self.final_text.push_str(&text);
                }
            }
            Event::ToolUse { name, input, .. } => {
                self.summary.tool_uses += 1;
                match name.as_str() {
                    "StructuredOutput" => {
                        // Note [Big numbers] (`crate::json`): listed, not changed silently.
                        let (value, inexact) = match crate::json::parse(input.get()) {
                            Ok(p) => (p.value, p.inexact),
                            Err(_) => (input.to_value(), Vec::new()),
                        };
                        self.summary.structured_tool_input = Some(value);
                        self.summary.structured_tool_inexact = inexact;
                    }
                    // Seed 004: only `run_in_background` strictly `true` counts.
                    "Task" => {
                        let value = input.to_value();
                        if value.get("run_in_background") == Some(&Value::Bool(true)) {
                            self.background_launches += 1;
                        }
                    }
                    "AskUserQuestion" if self.in_top_level => self.final_asks = true,
                    _ => {}
                }
                *self.summary.tool_use_counts.entry(name).or_insert(0) += 1;
            }
            Event::Result(result) => self.result(*result),
            Event::Skipped { reason, .. } => {
                self.summary.skipped_lines += u64::from(reason != SkipReason::Blank);
                match reason {
                    SkipReason::Blank => self.summary.blank_lines += 1,
                    SkipReason::Malformed => self.summary.malformed_lines += 1,
                    SkipReason::NonObject => self.summary.non_object_lines += 1,
                    SkipReason::TooLong => self.summary.too_long_lines += 1,
                }
            }
            Event::Warning { message } => self.summary.warnings.push(message),
            Event::ReplacedText { sequences } => self.summary.replaced_text += sequences,
            Event::End { lines, objects } => {
                self.summary.lines = lines;
                self.summary.events = objects;
            }
            Event::Thinking { .. }
            | Event::ToolResult { .. }
            | Event::Partial { .. }
            | Event::Other { .. }
            | Event::Line(_)
            | Event::UserText { .. }
            | Event::Usage { .. }
            | Event::Compaction { .. }
            | Event::CompactSummary { .. }
            | Event::ApiError { .. }
            | Event::SubAgent { .. }
            | Event::ToolError { .. }
            | Event::Glued { .. } => {}
        }
    }

    fn message(&mut self, id: Option<String>, stop_reason: Option<String>, top_level: bool) {
        self.in_top_level = top_level;
        if !top_level {
            return;
        }
        // Lines sharing a message id continue one message.
        let same = id.is_some() && id == self.final_id;
        if !same {
            self.top_messages += 1;
            self.final_id = id;
            self.final_text.clear();
            self.final_asks = false;
            self.final_stop_reason = None;
        }
        if stop_reason.is_some() {
            self.final_stop_reason = stop_reason;
        }
    }

    fn result(&mut self, result: ResultEvent) {
        let s = &mut self.summary;
        s.saw_result = true;
        let info = result.info;
        if info.is_error {
            let text = classify::truncate_error(&error_text(&info));
            let category = match result.category {
                Some(c @ (ErrorCategory::Refusal | ErrorCategory::MaxTokens)) => c,
                hint => classify::keyword_category(&text)
                    .or_else(|| status_category(info.api_error_status.as_ref()))
                    .or(hint)
                    .unwrap_or(ErrorCategory::Api),
            };
            s.error = Some(text);
            s.error_category = Some(category);
        } else if let Some(error) = result.error {
            let error = if error.trim().is_empty() {
                NO_DETAIL.to_owned()
            } else {
                error
            };
            let text = classify::truncate_error(&error);
            s.error_category = Some(
                result
                    .category
                    .unwrap_or_else(|| classify::classify_error_text(&text)),
            );
            s.error = Some(text);
        }
        if s.session_id.is_none() {
            s.session_id = result.session_id.or_else(|| info.session_id.clone());
        }
        s.structured_output = result.structured_output;
        s.structured_inexact = result.structured_inexact;
        s.result = Some(info);
    }

    /// The summary, after the end-of-run rules (missing result, heuristics).
    pub fn finish(mut self, format: Format) -> RunSummary {
        self.summary.format = format;
        if format.is_native() {
            let native = self.native.take().unwrap_or_default();
            native.finish(&mut self.summary, format);
            return self.summary;
        }
        if !self.summary.saw_result {
            match format {
                Format::Claude => self.summary.warnings.push(NO_RESULT_WARNING.to_owned()),
                Format::Codex => self.summary.warnings.push(NO_TURN_WARNING.to_owned()),
                _ => {}
            }
        }
        if format == Format::Claude && self.summary.saw_result && self.summary.error.is_none() {
            self.heuristics();
        }
        self.summary
    }

    /// Note [Hang heuristics]: seed 004's two advisory detectors, run only
    /// for Claude streams that ended with a result and carry no error; each
    /// adds a prefixed warning and sets `error_category`, never `error`.
    ///
    /// - interactive-hang: a single-turn run (the result's `num_turns` is 1;
    ///   without `num_turns`, at most one top-level assistant message) whose
    ///   final top-level assistant message (lines sharing an id are one
    ///   message; sub-agent messages are not "final") has `stop_reason`
    ///   `end_turn` and either its text, trailing whitespace ignored, ends
    ///   with `?`, or it holds an `AskUserQuestion` tool use.
    /// - background-task, only when interactive-hang did not fire: at least
    ///   one `Task` tool use with `input.run_in_background` strictly `true`,
    ///   and either the run's text (`output`, all chunks joined) matches
    ///   seed 004's phrase regex or the result's `num_turns` is below
    ///   launches + 2 (a missing `num_turns` does not trigger).
    fn heuristics(&mut self) {
        let num_turns = self.summary.result.as_ref().and_then(|r| r.num_turns);
        let single_turn = num_turns.map_or(self.top_messages <= 1, |n| n == 1);
        let ends_with_question = self.final_text.trim_end().ends_with('?');
        if single_turn
            && self.final_stop_reason.as_deref() == Some("end_turn")
            && (ends_with_question || self.final_asks)
        {
            let why = if self.final_asks {
                "it called AskUserQuestion"
            } else {
                "its final text ends with a question"
            };
            self.summary.warnings.push(format!(
                "interactive-hang: the single-turn run ended its turn (stop_reason end_turn) and {why}; it likely stalled waiting for user input"
            ));
            self.summary.error_category = Some(ErrorCategory::Interactive);
            return;
        }
        let launches = self.background_launches;
        if launches > 0
            && (classify::has_background_phrase(&self.summary.output)
                || num_turns.is_some_and(|n| n < launches + 2))
        {
            self.summary.warnings.push(format!(
                "background-task: {launches} background Task launch(es), and the run ended before they could finish (claude -p does not poll background tasks)"
            ));
            self.summary.error_category = Some(ErrorCategory::BackgroundTask);
        }
    }
}
