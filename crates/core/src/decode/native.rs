//! What the three native session decoders share: per-file state across
//! lines, glued lines, tool names by call id, API error categories.
//!
//! Note \[Glued lines\]: a crash or a concurrent writer can leave two JSON
//! objects on one physical line (`{...}{...}`). When a line fails to parse
//! whole, it is split with `serde_json`'s stream reader: every complete
//! object on it is decoded in order, an [`Event::Glued`] counts the line,
//! and bytes after the last complete object (a cut object) are reported in a
//! warning. A line with no complete object is malformed, as before.

use std::collections::{HashMap, VecDeque};

use serde::de::IgnoredAny;

use super::{DecodeOptions, Format, claude_session, codex_rollout};
use crate::decode::classify;
use crate::event::Event;
use crate::summary::ErrorCategory;

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

/// Native decoding state kept by the [`super::Decoder`] across lines.
#[derive(Debug, Default)]
pub struct NativeLines {
    /// Tool names by call id, for attributing tool errors.
    pub tools: ToolNames,
    /// Codex: the model of the turn in effect, and the layout.
    pub codex: codex_rollout::RolloutState,
}

impl NativeLines {
    /// Decode one object line (trimmed, starting with `{`) of a native
    /// JSON Lines format. Returns `false` when it holds no complete object.
    pub fn line(
        &mut self,
        line: &[u8],
        line_no: u64,
        format: Format,
        opts: &DecodeOptions,
        sink: &mut dyn FnMut(Event),
    ) -> bool {
        if self.object(line, format, opts, sink) {
            return true;
        }
        // Note [Glued lines].
        let mut stream = serde_json::Deserializer::from_slice(line).into_iter::<IgnoredAny>();
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut cut = false;
        loop {
            match stream.next() {
                Some(Ok(_)) => {
                    let end = stream.byte_offset();
                    pieces.push(line.get(start..end).unwrap_or_default().trim_ascii());
                    start = end;
                }
                Some(Err(_)) => {
                    cut = true;
                    break;
                }
                None => break,
            }
        }
        if pieces.is_empty() || (pieces.len() == 1 && !cut) {
            return false;
        }
        sink(Event::Glued {
            line: line_no,
            objects: u64::try_from(pieces.len()).unwrap_or(u64::MAX),
        });
        let mut undecoded = 0;
        for piece in &pieces {
            if !self.object(piece, format, opts, sink) {
                undecoded += 1;
            }
        }
        if cut || undecoded > 0 {
            sink(Event::Warning {
                message: format!(
                    "line {line_no}: {} glued JSON value(s) were not objects of this format{}; skipped",
                    undecoded,
                    if cut {
                        ", and it ends in a cut object"
                    } else {
                        ""
                    }
                ),
            });
        }
        true
    }

    fn object(
        &mut self,
        line: &[u8],
        format: Format,
        opts: &DecodeOptions,
        sink: &mut dyn FnMut(Event),
    ) -> bool {
        if line.first() != Some(&b'{') {
            return false;
        }
        match format {
            Format::ClaudeSession => claude_session::decode_line(line, self, opts, sink),
            Format::CodexRollout => codex_rollout::decode_line(line, self, opts, sink),
            _ => false,
        }
    }
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
