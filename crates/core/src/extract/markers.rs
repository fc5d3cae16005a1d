//! Legacy text markers: Claude Ops `[EVENT:..]`/`[MEMORY:..]` and claude-loop sigils.

use serde_json::Value;

/// Which legacy grammar a profile speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerGrammar {
    /// `[EVENT:level:service] message`, `[MEMORY:category:service] text` (seed 000).
    ClaudeOps,
    /// `<loop>COMPLETE</loop>`, `WORKER_SUCCESS: id`, `WORKER_FAILURE: id: reason` (seed 001).
    ClaudeLoop,
}

/// Parse markers in `text` into the profile's shape, `None` when there are none.
pub fn parse_markers(text: &str, grammar: MarkerGrammar) -> Option<Value> {
    let _ = (text, grammar);
    None
}
