//! What both backends do alike for `agentshape hook`'s calls (Note \[Hook
//! chains\] in the crate root): the session row a call makes, the verdict
//! a main agent's `Stop` sets, the `hook` feed row.

use serde_json::{Value, json};

use crate::{FeedEntry, HOOK_FEED_ERRORS, HOOK_FEED_REASON_CHARS, HookCall, Session};

/// The session row a call makes when its session has none yet: the call's
/// time as start and end, Claude Code as the agent, the hook input's
/// `cwd` and transcript as project and source file.
pub(crate) fn session_record(call: &HookCall) -> Session {
    let mut r = Session::new(&call.session_id, &call.created_at, "completed");
    r.ended_at = Some(call.created_at.clone());
    r.agent = Some("claude-code".to_owned());
    r.project.clone_from(&call.project);
    r.source_path.clone_from(&call.transcript_path);
    r.profile.clone_from(&call.profile);
    r
}

/// The session verdict a call sets, as core serialises one (`valid`,
/// `errors`, `repairs`, `coercions`): only the main agent's `Stop` checked
/// against a schema does (a sub-agent's answer is not the session's; an
/// `allowed` call checked nothing).
pub(crate) fn verdict(call: &HookCall) -> Option<Value> {
    let checked = matches!(call.verdict.as_str(), "valid" | "gave_up" | "blocked");
    (call.event == "Stop" && call.agent_id.is_none() && checked).then(|| {
        json!({
            "valid": call.verdict == "valid",
            "errors": call.errors.clone().unwrap_or_else(|| json!([])),
            "repairs": [],
            "coercions": [],
        })
    })
}

/// `text` cut to at most `max` characters (on a character boundary).
fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// Whether a call gets its own `hook` feed row: a verdict does; a
/// `PostToolUse` capture does not, its call and result are the rows it
/// brings (two rows per tool call, not three).
pub(crate) fn has_feed_row(call: &HookCall) -> bool {
    call.event != "PostToolUse"
}

/// The `hook` feed row of call `id`: a compact summary a live page shows
/// (the first errors, the reason cut), built from the call as masked.
pub(crate) fn feed_entry(id: i64, call: &HookCall) -> FeedEntry {
    let errors = match &call.errors {
        Some(Value::Array(list)) => {
            Value::Array(list.iter().take(HOOK_FEED_ERRORS).cloned().collect())
        }
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let body = json!({
        "hook_id": id,
        "event": call.event,
        "verdict": call.verdict,
        "blocks": call.blocks,
        "agent_id": call.agent_id,
        "agent_type": call.agent_type,
        "method": call.method,
        "errors": errors,
        "reason": call.reason.as_deref().map(|r| cut(r, HOOK_FEED_REASON_CHARS)),
    });
    FeedEntry {
        seq: None,
        session_id: call.session_id.clone(),
        kind: "hook".to_owned(),
        body: body.to_string(),
        created_at: call.created_at.clone(),
    }
}

/// Compact JSON text of a value column (as `write_session` stores them).
pub(crate) fn json_text(v: Option<&Value>) -> Option<String> {
    v.map(ToString::to_string)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_a_checked_main_stop_sets_the_verdict() {
        let mut c = HookCall::new("s", "Stop", "blocked", "t");
        c.errors = Some(json!([{"instance_path": "/a", "schema_path": "/x", "message": "m"}]));
        let v = verdict(&c).unwrap();
        assert_eq!(v["valid"], false);
        assert_eq!(v["errors"][0]["instance_path"], "/a");
        assert_eq!(v["repairs"], json!([]));
        c.verdict = "valid".into();
        c.errors = None;
        assert_eq!(
            verdict(&c).unwrap(),
            json!({"valid": true, "errors": [], "repairs": [], "coercions": []})
        );
        c.verdict = "allowed".into();
        assert_eq!(verdict(&c), None);
        let mut sub = HookCall::new("s", "SubagentStop", "valid", "t");
        sub.agent_id = Some("a1".into());
        assert_eq!(verdict(&sub), None);
        let mut odd = HookCall::new("s", "Stop", "valid", "t");
        odd.agent_id = Some("a1".into());
        assert_eq!(verdict(&odd), None);
    }

    #[test]
    fn the_feed_row_keeps_five_errors_and_500_characters_of_reason() {
        let mut c = HookCall::new("s", "Stop", "blocked", "2026-01-01T00:00:00.000Z");
        c.errors = Some(Value::Array(
            (0..9).map(|i| json!({"message": i})).collect(),
        ));
        c.reason = Some("é".repeat(600));
        c.blocks = 2;
        let e = feed_entry(7, &c);
        assert_eq!(e.kind, "hook");
        assert!(
            !e.body.contains('\n') && !e.body.contains(": "),
            "{}",
            e.body
        );
        let v: Value = serde_json::from_str(&e.body).unwrap();
        assert_eq!(v["hook_id"], 7);
        assert_eq!(v["blocks"], 2);
        assert_eq!(v["errors"].as_array().unwrap().len(), 5);
        assert_eq!(v["reason"].as_str().unwrap().chars().count(), 500);
        assert_eq!(v["agent_id"], Value::Null);
    }
}
