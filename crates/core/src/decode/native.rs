//! What the three native session decoders share: per-file state across
//! lines, tool names by call id, API error categories. Which decoder a line
//! goes to, and glued lines, are [`super::native_line`]'s.

use std::collections::{HashMap, VecDeque};

use crate::classify;
use crate::facts::ErrorCategory;

/// Tool calls remembered (by call id) until their result arrives.
const MAX_PENDING_TOOLS: usize = 4096;

/// Tool names by call id, bounded: a result takes its call's entry out, and
/// the oldest entries go first when calls never answered pile up.
#[derive(Debug, Default)]
pub struct ToolNames {
    names: HashMap<String, String>,
    order: VecDeque<String>,
}

impl ToolNames {
    /// Remember a call.
    pub fn insert(&mut self, id: Option<&str>, name: &str) {
        let Some(id) = id else { return };
        if self.names.len() >= MAX_PENDING_TOOLS {
            while let Some(old) = self.order.pop_front() {
                if self.names.remove(&old).is_some() {
                    break;
                }
            }
        }
        if self.names.insert(id.to_owned(), name.to_owned()).is_none() {
            self.order.push_back(id.to_owned());
        }
        // Stale ids of answered calls stay in `order`; trim them when it
        // grows well past the map.
        if self.order.len() > 2 * MAX_PENDING_TOOLS {
            let names = &self.names;
            self.order.retain(|i| names.contains_key(i));
        }
    }

    /// The name of the call `id` answers (`unknown` when the call was not seen).
    pub fn take(&mut self, id: Option<&str>) -> String {
        id.and_then(|i| self.names.remove(i))
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

/// Codex rollouts' state across lines: the model of the turn in effect,
/// and whether the file uses the older layout (no envelope).
#[derive(Debug, Default)]
pub struct RolloutState {
    pub(super) model: Option<String>,
    pub(super) legacy: bool,
}

/// Native decoding state kept by the [`super::Decoder`] across lines.
#[derive(Debug, Default)]
pub struct NativeLines {
    /// Tool names by call id, for attributing tool errors.
    pub tools: ToolNames,
    /// Codex: the model of the turn in effect, and the layout.
    pub codex: RolloutState,
}

/// The category of an API error: from its HTTP status (429 rate limit,
/// 401/403 auth), else from the text's keywords, else `api`.
pub fn api_error_category(status: Option<u64>, message: &str) -> ErrorCategory {
    match status {
        Some(429) => ErrorCategory::RateLimit,
        Some(401 | 403) => ErrorCategory::Auth,
        _ => classify::classify_error_text(message),
    }
}

/// The status a Claude API error text starts with (`API Error: 529 {...}`).
pub fn status_in_text(text: &str) -> Option<u64> {
    let rest = text.trim_start().strip_prefix("API Error: ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|s| (100..600).contains(s))
}
