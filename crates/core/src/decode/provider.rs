//! Provider response bodies (one JSON document) into events.
//!
//! Anthropic Messages, `OpenAI` Chat Completions, `OpenAI` Responses, Ollama
//! `/api/chat` and Gemini `generateContent`, plus their error bodies. A body
//! is small and read whole, so it is parsed into a [`Value`].
//!
//! Note [Provider stop reasons]: a body that stopped at the token limit
//! (`max_tokens`, `length`, `MAX_TOKENS`, `incomplete_details.reason =
//! max_output_tokens`) gets `error_category = max_tokens`; a refusal
//! (`stop_reason = refusal`, a `refusal` field or content part,
//! `content_filter`, Gemini `SAFETY` / `RECITATION` / blocked prompts) gets
//! `refusal`. Both set `error` with a one-line reason but leave
//! `result.is_error` false: the API call itself succeeded, and the text (cut
//! or not) is still handed to the extract stage. An error body (`{"type":
//! "error", "error": {..}}`, `{"error": {..}}`, Ollama's `{"error": ".."}`)
//! is an `is_error` result whose category comes from the text's keywords,
//! then from the HTTP status, `type`, `code` or `status` fields, else `api`.

use serde_json::{Map, Value};

use super::Format;
use crate::event::{Event, RawJson, ResultEvent};
use crate::facts::{ErrorCategory, ResultInfo, Usage};

/// Which provider wrote this body, judged by its keys.
pub fn detect(value: &Value) -> Option<Format> {
    let obj = value.as_object()?;
    let kind = obj.get("type").and_then(Value::as_str);
    let object = obj.get("object").and_then(Value::as_str);
    if kind == Some("message")
        || (kind == Some("error") && obj.get("error").is_some_and(Value::is_object))
    {
        return Some(Format::Anthropic);
    }
    if obj.contains_key("choices") || object.is_some_and(|o| o.starts_with("chat.completion")) {
        return Some(Format::OpenaiChat);
    }
    if object == Some("response") || (obj.contains_key("output") && obj.contains_key("status")) {
        return Some(Format::OpenaiResponses);
    }
    if obj.contains_key("candidates")
        || obj.contains_key("promptFeedback")
        || obj.contains_key("usageMetadata")
    {
        return Some(Format::Gemini);
    }
    if obj.contains_key("message")
        && (obj.contains_key("done")
            || obj.contains_key("done_reason")
            || obj.contains_key("eval_count"))
    {
        return Some(Format::Ollama);
    }
    match obj.get("error") {
        Some(Value::String(_)) => Some(Format::Ollama),
        Some(Value::Object(e)) if e.get("status").is_some_and(Value::is_string) => {
            Some(Format::Gemini)
        }
        Some(Value::Object(_)) => Some(Format::OpenaiChat),
        _ => None,
    }
}

/// Decode a parsed body as `format` (a provider format; others decode nothing).
pub fn decode(value: &Value, format: Format, sink: &mut dyn FnMut(Event)) {
    let Some(obj) = value.as_object() else {
        return;
    };
    if let Some(err) = error_result(obj) {
        sink(Event::Init {
            session_id: None,
            model: str_at(obj, "model"),
            api_key_source: None,
            cwd: None,
        });
        sink(err);
        return;
    }
    let mut state = Body::default();
    match format {
        Format::Anthropic => anthropic(obj, &mut state),
        Format::OpenaiChat => openai_chat(obj, &mut state),
        Format::OpenaiResponses => openai_responses(obj, &mut state),
        Format::Ollama => ollama(obj, &mut state),
        Format::Gemini => gemini(obj, &mut state),
        Format::Auto
        | Format::Claude
        | Format::Codex
        | Format::Text
        | Format::ClaudeSession
        | Format::CodexRollout
        | Format::GeminiChat => return,
    }
    state.emit(sink);
}

/// What one body says, gathered before emitting.
#[derive(Default)]
struct Body {
    id: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    blocks: Vec<Event>,
    text: String,
    usage: Usage,
    refusal: Option<String>,
    category: Option<ErrorCategory>,
    error: Option<String>,
}

impl Body {
    fn text(&mut self, text: &str) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(text);
        self.blocks.push(Event::Text {
            text: text.to_owned(),
        });
    }

    fn tool(&mut self, id: Option<String>, name: String, input: &Value) {
        self.blocks.push(Event::ToolUse {
            id,
            name,
            input: RawJson::from_value(input),
        });
    }

    fn refused(&mut self, why: &str) {
        self.category = Some(ErrorCategory::Refusal);
        let detail = self.refusal.clone().unwrap_or_else(|| why.to_owned());
        self.error = Some(format!("refusal: {detail}"));
    }

    fn max_tokens(&mut self, why: &str) {
        self.category = Some(ErrorCategory::MaxTokens);
        self.error = Some(format!("max_tokens: output cut at the token limit ({why})"));
    }

    fn emit(self, sink: &mut dyn FnMut(Event)) {
        sink(Event::Init {
            session_id: None,
            model: self.model,
            api_key_source: None,
            cwd: None,
        });
        sink(Event::Message {
            id: self.id,
            stop_reason: self.stop_reason.clone(),
            parent_tool_use_id: None,
        });
        for block in self.blocks {
            sink(block);
        }
        let text = if self.text.is_empty() {
            self.refusal
        } else {
            Some(self.text)
        };
        sink(Event::Result(Box::new(ResultEvent {
            info: ResultInfo {
                is_error: false,
                usage: self.usage,
                text,
                stop_reason: self.stop_reason,
                ..ResultInfo::default()
            },
            structured_output: None,
            structured_inexact: Vec::new(),
            session_id: None,
            error: self.error,
            category: self.category,
        })));
    }
}

fn str_at(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn count(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Tool arguments that arrive as a JSON string are parsed; otherwise kept.
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

fn anthropic(obj: &Map<String, Value>, b: &mut Body) {
    b.id = str_at(obj, "id");
    b.model = str_at(obj, "model");
    b.stop_reason = str_at(obj, "stop_reason");
    if let Some(content) = obj.get("content").and_then(Value::as_array) {
        for block in content.iter().filter_map(Value::as_object) {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => b.text(block.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("thinking") => b.blocks.push(Event::Thinking {
                    text: str_at(block, "thinking").unwrap_or_default(),
                }),
                Some("tool_use") => b.tool(
                    str_at(block, "id"),
                    str_at(block, "name").unwrap_or_default(),
                    block.get("input").unwrap_or(&Value::Null),
                ),
                _ => {}
            }
        }
    }
    if let Some(usage) = obj.get("usage").and_then(Value::as_object) {
        b.usage = Usage {
            input_tokens: count(usage.get("input_tokens")),
            output_tokens: count(usage.get("output_tokens")),
        };
    }
    match b.stop_reason.as_deref() {
        Some("max_tokens") => b.max_tokens("stop_reason max_tokens"),
        Some("refusal") => b.refused("stop_reason refusal"),
        _ => {}
    }
}

fn openai_chat(obj: &Map<String, Value>, b: &mut Body) {
    b.id = str_at(obj, "id");
    b.model = str_at(obj, "model");
    let choice = obj
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_object);
    if let Some(choice) = choice {
        b.stop_reason = str_at(choice, "finish_reason");
        if let Some(message) = choice.get("message").and_then(Value::as_object) {
            if let Some(text) = message.get("content").and_then(Value::as_str) {
                b.text(text);
            }
            b.refusal = str_at(message, "refusal");
            for call in message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(call) = call.as_object() else {
                    continue;
                };
                let function = call.get("function").and_then(Value::as_object);
                b.tool(
                    str_at(call, "id"),
                    function.and_then(|f| str_at(f, "name")).unwrap_or_default(),
                    &arguments(function.and_then(|f| f.get("arguments"))),
                );
            }
        }
    }
    if let Some(usage) = obj.get("usage").and_then(Value::as_object) {
        b.usage = Usage {
            input_tokens: count(usage.get("prompt_tokens")),
            output_tokens: count(usage.get("completion_tokens")),
        };
    }
    match b.stop_reason.as_deref() {
        Some("length") => b.max_tokens("finish_reason length"),
        Some("content_filter") => b.refused("finish_reason content_filter"),
        _ if b.refusal.is_some() => b.refused("refusal"),
        _ => {}
    }
}

fn openai_responses(obj: &Map<String, Value>, b: &mut Body) {
    b.id = str_at(obj, "id");
    b.model = str_at(obj, "model");
    b.stop_reason = str_at(obj, "status");
    for item in obj
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(item) = item.as_object() else {
            continue;
        };
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(part) = part.as_object() else {
                        continue;
                    };
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            b.text(part.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                        Some("refusal") => b.refusal = str_at(part, "refusal"),
                        _ => {}
                    }
                }
            }
            Some("function_call") => b.tool(
                str_at(item, "call_id"),
                str_at(item, "name").unwrap_or_default(),
                &arguments(item.get("arguments")),
            ),
            Some("reasoning") => {
                for part in item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        b.blocks.push(Event::Thinking {
                            text: text.to_owned(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(usage) = obj.get("usage").and_then(Value::as_object) {
        b.usage = Usage {
            input_tokens: count(usage.get("input_tokens")),
            output_tokens: count(usage.get("output_tokens")),
        };
    }
    let reason = obj
        .get("incomplete_details")
        .and_then(Value::as_object)
        .and_then(|d| str_at(d, "reason"));
    match reason.as_deref() {
        Some("max_output_tokens") => {
            b.stop_reason = Some("max_output_tokens".to_owned());
            b.max_tokens("incomplete_details.reason max_output_tokens");
        }
        Some("content_filter") => {
            b.stop_reason = Some("content_filter".to_owned());
            b.refused("incomplete_details.reason content_filter");
        }
        _ if b.refusal.is_some() => b.refused("refusal"),
        _ => {}
    }
}

fn ollama(obj: &Map<String, Value>, b: &mut Body) {
    b.model = str_at(obj, "model");
    b.stop_reason = str_at(obj, "done_reason");
    if let Some(message) = obj.get("message").and_then(Value::as_object) {
        if let Some(thinking) = message.get("thinking").and_then(Value::as_str) {
            b.blocks.push(Event::Thinking {
                text: thinking.to_owned(),
            });
        }
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            b.text(text);
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let function = call.get("function").and_then(Value::as_object);
            b.tool(
                None,
                function.and_then(|f| str_at(f, "name")).unwrap_or_default(),
                &arguments(function.and_then(|f| f.get("arguments"))),
            );
        }
    }
    b.usage = Usage {
        input_tokens: count(obj.get("prompt_eval_count")),
        output_tokens: count(obj.get("eval_count")),
    };
    if b.stop_reason.as_deref() == Some("length") {
        b.max_tokens("done_reason length");
    }
}

const GEMINI_REFUSALS: &[&str] = &[
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
];

fn gemini(obj: &Map<String, Value>, b: &mut Body) {
    b.id = str_at(obj, "responseId");
    b.model = str_at(obj, "modelVersion");
    let candidate = obj
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_object);
    if let Some(candidate) = candidate {
        b.stop_reason = str_at(candidate, "finishReason");
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(part) = part.as_object() else {
                continue;
            };
            let text = part.get("text").and_then(Value::as_str);
            if part.get("thought") == Some(&Value::Bool(true)) {
                b.blocks.push(Event::Thinking {
                    text: text.unwrap_or("").to_owned(),
                });
            } else if let Some(text) = text {
                b.text(text);
            } else if let Some(call) = part.get("functionCall").and_then(Value::as_object) {
                b.tool(
                    str_at(call, "id"),
                    str_at(call, "name").unwrap_or_default(),
                    call.get("args").unwrap_or(&Value::Null),
                );
            }
        }
    }
    if let Some(usage) = obj.get("usageMetadata").and_then(Value::as_object) {
        b.usage = Usage {
            input_tokens: count(usage.get("promptTokenCount")),
            output_tokens: count(usage.get("candidatesTokenCount")),
        };
    }
    let block_reason = obj
        .get("promptFeedback")
        .and_then(Value::as_object)
        .and_then(|f| str_at(f, "blockReason"));
    if let Some(reason) = block_reason {
        b.stop_reason.get_or_insert_with(|| reason.clone());
        b.refused(&format!("promptFeedback.blockReason {reason}"));
        return;
    }
    match b.stop_reason.as_deref() {
        Some("MAX_TOKENS") => b.max_tokens("finishReason MAX_TOKENS"),
        Some(r) if GEMINI_REFUSALS.contains(&r) => {
            let why = format!("finishReason {r}");
            b.refused(&why);
        }
        _ => {}
    }
}

/// An error body as an `is_error` result, or `None` when the body is not one.
fn error_result(obj: &Map<String, Value>) -> Option<Event> {
    let error = obj.get("error")?;
    // OpenAI Responses bodies carry `"error": null` on success.
    let (text, hint) = match error {
        Value::String(message) => (message.clone(), None),
        Value::Object(e) => {
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            let kind = ["type", "status", "code"]
                .iter()
                .find_map(|k| e.get(*k).and_then(Value::as_str));
            let code = e.get("code").and_then(Value::as_u64);
            let text = match kind {
                Some(kind) if !message.is_empty() => format!("{kind}: {message}"),
                Some(kind) => kind.to_owned(),
                None => message.to_owned(),
            };
            (text, error_hint(kind, code))
        }
        _ => return None,
    };
    Some(Event::Result(Box::new(ResultEvent {
        info: ResultInfo {
            subtype: Some("error".to_owned()),
            is_error: true,
            text: if text.is_empty() { None } else { Some(text) },
            api_error_status: obj.get("status").cloned(),
            ..ResultInfo::default()
        },
        structured_output: None,
        structured_inexact: Vec::new(),
        session_id: None,
        error: None,
        category: hint,
    })))
}

fn error_hint(kind: Option<&str>, code: Option<u64>) -> Option<ErrorCategory> {
    match code {
        Some(429) => return Some(ErrorCategory::RateLimit),
        Some(401 | 403) => return Some(ErrorCategory::Auth),
        _ => {}
    }
    let kind = kind?.to_ascii_lowercase();
    if kind.contains("rate_limit") || kind == "resource_exhausted" {
        Some(ErrorCategory::RateLimit)
    } else if kind.contains("authentication")
        || kind.contains("permission")
        || kind.contains("api_key")
        || kind == "unauthenticated"
    {
        Some(ErrorCategory::Auth)
    } else {
        Some(ErrorCategory::Api)
    }
}
