//! Gemini CLI chat files (one pretty-printed JSON document per session)
//! into events.
//!
//! The document: `sessionId`, `projectHash`, `startTime`, `lastUpdated`
//! and `messages`, each with `id`, `timestamp`, `type` (`user`, `gemini`,
//! `info`, `error`, ...), `content` (a string or a list of parts), and
//! for the model's messages `model`, `thoughts`, `toolCalls` (with their
//! `result` and `status`) and `tokens` (`input`, `output`, `cached`,
//! `thoughts`, `tool`, `total`).
//!
//! Events: an [`Event::Line`] for the document (kind `session`, the start
//! time) and one per message (kind = its `type`), then: a user message is
//! [`Event::UserText`]; a model message is [`Event::Message`], an
//! [`Event::Usage`] (`input` + `tool` as input, since `tool` counts the
//! tool results sent as prompt; `output` + `thoughts` as output, billed
//! alike; `cached` as `cache_read`, included in `input`), its thoughts,
//! text and tool calls, each call's result failed (with an
//! [`Event::ToolError`]) when its `status` is `error`; an `error` message is
//! an [`Event::ApiError`]; other types are [`Event::Other`].

use serde_json::Value;

use super::DecodeOptions;
use super::native::{NativeLines, api_error_category};
use crate::event::{Event, LineInfo, RawJson};
use crate::facts::TokenCounts;

/// Whether a document is a Gemini CLI chat (Note \[Format detection\] in
/// `decode`): an object with `sessionId` or `projectHash` and a `messages`
/// list.
pub fn is_chat(value: &Value) -> bool {
    value.get("messages").is_some_and(Value::is_array)
        && (value.get("sessionId").is_some() || value.get("projectHash").is_some())
}

fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A message's `content`: a string, or the texts of a list of parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Decode a whole chat document.
pub fn decode(
    doc: &Value,
    state: &mut NativeLines,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) {
    let session_id = string(doc, "sessionId");
    sink(Event::Line(Box::new(LineInfo {
        timestamp: string(doc, "startTime"),
        kind: "session".to_owned(),
        session_id: session_id.clone(),
        ..LineInfo::default()
    })));
    let messages = doc.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        let kind = string(message, "type").unwrap_or_default();
        let id = string(message, "id");
        let model = string(message, "model");
        sink(Event::Line(Box::new(LineInfo {
            uuid: id.clone(),
            timestamp: string(message, "timestamp"),
            kind: kind.clone(),
            session_id: session_id.clone(),
            model: model.clone(),
            ..LineInfo::default()
        })));
        let text = content_text(message.get("content"));
        match kind.as_str() {
            "user" => sink(Event::UserText { text }),
            "gemini" | "model" | "assistant" => {
                model_message(message, id, model, text, state, opts, sink);
            }
            "error" => sink(Event::ApiError {
                category: api_error_category(None, &text),
                message: text,
                status: None,
            }),
            _ => sink(Event::Other { kind }),
        }
    }
}

fn model_message(
    message: &Value,
    id: Option<String>,
    model: Option<String>,
    text: String,
    state: &mut NativeLines,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) {
    sink(Event::Message {
        id: id.clone(),
        stop_reason: None,
        parent_tool_use_id: None,
    });
    if let Some(t) = message.get("tokens").filter(|t| t.is_object()) {
        sink(Event::Usage {
            message_id: id,
            request_id: None,
            model,
            tokens: TokenCounts {
                input: count(t, "input").saturating_add(count(t, "tool")),
                output: count(t, "output").saturating_add(count(t, "thoughts")),
                cache_read: count(t, "cached"),
                reasoning: count(t, "thoughts"),
                ..TokenCounts::default()
            },
            cumulative: false,
        });
    }
    for thought in message
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let subject = string(thought, "subject").unwrap_or_default();
        let description = string(thought, "description").unwrap_or_default();
        let text = match (subject.is_empty(), description.is_empty()) {
            (false, false) => format!("{subject}: {description}"),
            (true, _) => description,
            (false, true) => subject,
        };
        sink(Event::Thinking { text });
    }
    if !text.is_empty() {
        sink(Event::Text { text });
    }
    for call in message
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = string(call, "id");
        let name = string(call, "name").unwrap_or_default();
        state.tools.insert(id.as_deref(), &name);
        sink(Event::ToolUse {
            id: id.clone(),
            name,
            input: call
                .get("args")
                .map_or_else(RawJson::null, RawJson::from_value),
        });
        let is_error = call.get("status").and_then(Value::as_str) == Some("error");
        let name = state.tools.take(id.as_deref());
        sink(Event::ToolResult {
            tool_use_id: id.clone(),
            is_error,
            content: opts
                .keep_tool_results
                .then(|| call.get("result").map(Value::to_string).unwrap_or_default()),
        });
        if is_error {
            sink(Event::ToolError {
                tool_use_id: id,
                name,
            });
        }
    }
}
