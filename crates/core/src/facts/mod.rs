//! Facts: the nouns every stage of a run shares (why it failed, the tokens
//! it used, what its result and its session said, the format it was
//! decoded from, its summary), as plain data.
//!
//! Note [Facts below stages]: a decoder writes these, the summary builder
//! folds them, pricing and usage reports read them, the outcome carries
//! them. When they lived with the summary builder, every decoder imported
//! `summary`, which imported `decode` back, and sixteen files of core were
//! one circle of imports. Here they sit below every stage: this module
//! holds data types and their trivial impls only (serde, `Display`-like
//! names, small accessors and sums) and imports no stage of core; the one
//! import outside it is [`crate::json::InexactNumber`], a number that JSON
//! parsing reports, and `json` imports nothing of core's stages either. The
//! old paths (`summary::RunSummary`, `decode::Format`,
//! `usage::UsageTokens`, ...) re-export them.

mod error_category;
mod format;
mod run;
mod session;
mod tokens;

pub use error_category::ErrorCategory;
pub use format::Format;
pub use run::{ResultInfo, RunSummary};
pub use session::{ApiErrorInfo, SessionInfo, SubAgentInfo};
pub use tokens::{MessageUsage, TokenCounts, Usage, UsageTokens};

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}
