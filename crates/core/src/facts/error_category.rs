//! Why a run failed, as every stage names it.

use serde::{Deserialize, Serialize};

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
