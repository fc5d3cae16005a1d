//! Claude Code stream-json transcripts built line by line: the init line
//! of `examples/healthy-structured`, the lines a test gives, a successful
//! result. Tests that need another shape name theirs after what differs.

use serde_json::{Value, json};

/// A stream-json transcript: the init line of `examples/healthy-structured`,
/// then `middle`, then a successful result carrying `structured_output`.
pub(crate) fn transcript(middle: Vec<Value>, structured_output: &Value) -> Vec<Value> {
    let session = "0c6f7a52-1b7e-4a8e-9d2b-5e4f3a2b1c0d";
    let mut lines = vec![json!({
        "type": "system", "subtype": "init", "cwd": "/srv/ops", "session_id": session,
        "tools": ["Bash", "Read"], "model": "claude-sonnet-4-5-20250929",
        "permissionMode": "bypassPermissions", "apiKeySource": "ANTHROPIC_API_KEY"
    })];
    lines.extend(middle);
    lines.push(json!({
        "type": "result", "subtype": "success", "is_error": false, "duration_ms": 4200,
        "num_turns": 3, "result": "done", "session_id": session, "total_cost_usd": 0.012,
        "usage": {"input_tokens": 120, "output_tokens": 80},
        "structured_output": structured_output
    }));
    lines
}

/// An assistant line with one text block.
pub(crate) fn assistant_text(text: &str) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": text}
    ]}})
}

/// An assistant line with one tool use.
pub(crate) fn tool_use(id: &str, command: &str) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}
    ]}})
}

/// A user line with one tool result.
pub(crate) fn tool_result(id: &str, content: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": id, "type": "tool_result", "content": content}
    ]}})
}
