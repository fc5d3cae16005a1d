//! The claude-loop flow (seed 001): a worker's action and confidence decide
//! the exit status and are appended to `actions.jsonl`.
//!
//! Note \[Loop exit status\]: `complete` and `commit` mean the story is done
//! (exit 0); `implement`, `skip` and `delegate` mean the loop goes on with
//! something else (exit 1); no action found, neither as JSON nor as a sigil,
//! is "unclear" (exit 2), seed 001's `check_completion` codes. A confidence
//! below 50 prints a warning, records a clarification request in the entry
//! and exits 1 even for `complete`, as `handle_low_confidence` returns 1 to
//! trigger clarification. Sigils (`<loop>COMPLETE</loop>`, `WORKER_SUCCESS:`,
//! `WORKER_FAILURE:`) arrive through core's marker fallback with method
//! `markers`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use agentshape_core::Extraction;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// The default actions log (seed 001).
pub const DEFAULT_ACTIONS_LOG: &str = ".claude-loop/logs/actions.jsonl";

/// Confidence below this requests clarification.
pub const LOW_CONFIDENCE: f64 = 50.0;

/// The actions a worker may report.
pub const ACTIONS: &[&str] = &["complete", "commit", "implement", "skip", "delegate"];

/// One line of `actions.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionEntry {
    /// When it was recorded (RFC 3339 UTC).
    pub timestamp: String,
    /// The story (`--story`).
    pub story_id: Option<String>,
    /// The action, `null` when none was found.
    pub action: Option<String>,
    /// The reasoning, or "No reasoning provided".
    pub reasoning: String,
    /// Confidence 0-100 (0 when not given, as seed 001's `get_json_confidence`).
    pub confidence: f64,
    /// Modified files.
    pub files: Value,
    /// Extra metadata.
    pub metadata: Value,
    /// The agentshape session.
    pub session_id: String,
    /// How the action was found (`structured`, `fenced`, `bare`, `markers`, ...).
    pub extraction_method: String,
    /// Whether clarification was requested (confidence below 50).
    pub clarification_requested: bool,
}

/// The verdict on one worker reply.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopVerdict {
    /// The entry appended.
    pub entry: ActionEntry,
    /// 0 done, 1 continue / clarify, 2 unclear (Note \[Loop exit status\]).
    pub code: u8,
    /// The warning to print, for low confidence.
    pub warning: Option<String>,
}

/// Judge an extraction (Note \[Loop exit status\]).
pub fn judge(
    extraction: &Extraction,
    story: Option<&str>,
    session_id: &str,
    timestamp: &str,
) -> LoopVerdict {
    let v = extraction.value.as_ref();
    let get = |k: &str| v.and_then(|v| v.get(k));
    let action = get("action")
        .and_then(Value::as_str)
        .filter(|a| ACTIONS.contains(a))
        .map(str::to_owned);
    let confidence = get("confidence").and_then(Value::as_f64).unwrap_or(0.0);
    let story_id = story
        .map(str::to_owned)
        .or_else(|| get("story_id").and_then(Value::as_str).map(str::to_owned));
    let has_confidence = get("confidence").is_some_and(Value::is_number);
    // Sigils carry no confidence: only a reported one can be low.
    let low = action.is_some() && has_confidence && confidence < LOW_CONFIDENCE;
    let mut code = match action.as_deref() {
        Some("complete" | "commit") => 0,
        Some(_) => 1,
        None => 2,
    };
    let warning = low.then(|| {
        code = 1;
        format!(
            "Low confidence ({confidence}%) detected for story {}\nRequesting clarification in next iteration",
            story_id.as_deref().unwrap_or("(none)")
        )
    });
    let entry = ActionEntry {
        timestamp: timestamp.to_owned(),
        story_id,
        action,
        reasoning: get("reasoning")
            .and_then(Value::as_str)
            .unwrap_or("No reasoning provided")
            .to_owned(),
        confidence,
        files: get("files").cloned().unwrap_or(Value::Array(Vec::new())),
        metadata: get("metadata")
            .cloned()
            .unwrap_or(Value::Object(serde_json::Map::new())),
        session_id: session_id.to_owned(),
        extraction_method: extraction.method.as_str().to_owned(),
        clarification_requested: low,
    };
    LoopVerdict {
        entry,
        code,
        warning,
    }
}

/// Append an entry to the actions log (creating its directory).
///
/// # Errors
/// When the log cannot be written.
pub fn append(path: &Path, entry: &ActionEntry) -> Result<()> {
    let io = |source| Error::Io {
        context: format!("writing actions log `{}`", path.display()),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let mut line = serde_json::to_vec(entry).unwrap_or_default();
    line.push(b'\n');
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(&line))
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_core::extract::{ExtractOptions, MarkerGrammar, extract_text};

    fn verdict(reply: &str) -> (Option<String>, u8, bool, String) {
        let opts = ExtractOptions {
            markers: Some(MarkerGrammar::ClaudeLoop),
            ..ExtractOptions::default()
        };
        let v = judge(&extract_text(reply, &opts), Some("US-003"), "s", "t");
        (
            v.entry.action,
            v.code,
            v.entry.clarification_requested,
            v.entry.extraction_method,
        )
    }

    #[test]
    fn action_and_confidence_decide_the_exit_code() {
        let s = |a: &str| Some(a.to_owned());
        let cases = [
            (
                r#"{"action":"complete","confidence":95}"#,
                (s("complete"), 0, false, "bare".to_owned()),
            ),
            (
                "```json\n{\"action\":\"commit\",\"confidence\":80}\n```",
                (s("commit"), 0, false, "fenced".to_owned()),
            ),
            (
                r#"{"action":"implement","confidence":35}"#,
                (s("implement"), 1, true, "bare".to_owned()),
            ),
            (
                r#"{"action":"complete","confidence":49}"#,
                (s("complete"), 1, true, "bare".to_owned()),
            ),
            (
                r#"{"action":"skip","confidence":100}"#,
                (s("skip"), 1, false, "bare".to_owned()),
            ),
            (
                "done\n<loop>COMPLETE</loop>",
                (s("complete"), 0, false, "markers".to_owned()),
            ),
            (
                "WORKER_FAILURE: US-003: tests fail",
                (s("skip"), 1, false, "markers".to_owned()),
            ),
            (
                "I am not sure what to do.",
                (None, 2, false, "none".to_owned()),
            ),
        ];
        for (reply, want) in cases {
            assert_eq!(verdict(reply), want, "{reply}");
        }
    }
}
