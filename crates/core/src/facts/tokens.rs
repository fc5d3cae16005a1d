//! Token counts: as each agent reports them ([`TokenCounts`], [`Usage`]),
//! and in the one vocabulary a bill prices ([`UsageTokens`], Note \[Usage
//! vocabulary\]), per model call ([`MessageUsage`]).

use serde::{Deserialize, Serialize};

use super::is_zero;

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

/// The tokens of one model call (or a sum of calls), in the kinds a bill
/// prices.
///
/// Note \[Usage vocabulary\]: every agent's counts are brought to the same
/// meaning here, whatever its own fields mean:
///
/// | figure | Claude Code | Codex | Gemini CLI |
/// |---|---|---|---|
/// | `input` (not cached) | `input_tokens` | `input_tokens − cached_input_tokens` | `input − cached` |
/// | `cache_read` | `cache_read_input_tokens` | `cached_input_tokens` | `cached` |
/// | `cache_write_5m` | `cache_creation_input_tokens − ephemeral_1h` | 0 | 0 |
/// | `cache_write_1h` | `cache_creation.ephemeral_1h_input_tokens` | 0 | 0 |
/// | `output` (reasoning inside) | `output_tokens` | `output_tokens` | `output + thoughts` |
/// | `reasoning` (part of `output`) | — | `reasoning_output_tokens` | `thoughts` |
///
/// `output` always holds the reasoning tokens (they are billed as output);
/// `reasoning` says how many of them there were, where the agent reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTokens {
    /// Prompt tokens not read from or written to the cache.
    pub input: u64,
    /// Completion tokens, reasoning included.
    pub output: u64,
    /// Of `output`, the reasoning (thinking) tokens, where reported.
    pub reasoning: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache for 5 minutes (the default).
    pub cache_write_5m: u64,
    /// Prompt tokens written to the cache for 1 hour.
    pub cache_write_1h: u64,
}

impl UsageTokens {
    /// Add `other` (saturating).
    pub fn add(&mut self, other: &UsageTokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write_5m = self.cache_write_5m.saturating_add(other.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
    }

    /// Cache writes of both durations.
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m.saturating_add(self.cache_write_1h)
    }

    /// The prompt: uncached input, cache reads and cache writes (what a
    /// long-context tier is decided on).
    pub fn prompt(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write())
    }

    /// Every token: the prompt and the output (reasoning is inside output).
    pub fn total(&self) -> u64 {
        self.prompt().saturating_add(self.output)
    }

    /// Whether every count is 0.
    pub fn is_zero(&self) -> bool {
        *self == UsageTokens::default()
    }

    /// The counts of a native line, as its agent reported them, in this
    /// vocabulary. `input_includes_cache`: Codex and Gemini report input
    /// with the cached tokens inside; Claude does not.
    pub fn from_counts(t: &TokenCounts, input_includes_cache: bool) -> UsageTokens {
        let input = if input_includes_cache {
            t.input.saturating_sub(t.cache_read)
        } else {
            t.input
        };
        let one_hour = t.cache_write_1h.min(t.cache_write);
        UsageTokens {
            input,
            output: t.output,
            reasoning: t.reasoning.min(t.output),
            cache_read: t.cache_read,
            cache_write_5m: t.cache_write - one_hour,
            cache_write_1h: one_hour,
        }
    }
}

/// One model call of a native session (Note \[Message usage\] in
/// `summary::native`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageUsage {
    /// A key that names the call across files: Claude's
    /// `message id:request id`, which a resumed session repeats in its new
    /// file (so the call is counted once). `None` for calls only the file
    /// itself can name (Codex totals, Gemini messages): the store keys
    /// those by session and position.
    pub key: Option<String>,
    /// When the call was made: its (first) line's timestamp, as written.
    pub at: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Made by a sub-agent whose lines sit in its parent's file (Claude
    /// Code's inline `isSidechain` lines).
    pub sidechain: bool,
    /// Its tokens.
    pub tokens: UsageTokens,
}
