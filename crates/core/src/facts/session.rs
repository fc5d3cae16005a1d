//! What a native session file says beyond the run summary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ErrorCategory, MessageUsage, TokenCounts};

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
    pub usage: Vec<MessageUsage>,
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
