//! Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`)
//! into events.
//!
//! Every line is `{"timestamp", "type", "payload"}` with `type`:
//! `session_meta` (id, cwd, `cli_version`, git), `turn_context` (model,
//! policies), `response_item` (`message`, `reasoning`, `function_call`
//! whose `arguments` is a JSON string, `function_call_output`,
//! `custom_tool_call` such as `apply_patch`, `web_search_call`, ...),
//! `event_msg` (`user_message`, `agent_message`, `token_count` with
//! cumulative totals, `error`, ...) and `compacted`. The older layout has
//! a bare header line (`id`, `timestamp`, `instructions`, `git`),
//! `{"record_type": "state"}` lines, and bare response items without an
//! envelope or timestamp.
//!
//! Events: each line emits an [`Event::Line`] (kind `type` or
//! `type:payload.type`) first, then:
//! - the assistant's `response_item` messages are [`Event::Message`] and
//!   [`Event::Text`] (`event_msg/agent_message` repeats them and adds
//!   nothing); prompts are `event_msg/user_message` ([`Event::UserText`]),
//!   or in the older layout, which has no `event_msg`, the user messages
//!   that are not injected context (`<environment_context>`, ...);
//! - tool calls are [`Event::ToolUse`]; their outputs [`Event::ToolResult`],
//!   failed (with an [`Event::ToolError`] for the call's name) when the
//!   output shows a non-zero exit code (Note \[Codex exit codes\]);
//! - `token_count` with totals is a cumulative [`Event::Usage`]
//!   (`cached_input_tokens` is `cache_read`, already included in `input`);
//! - `compacted` is [`Event::Compaction`] (kind `codex_compacted`) and its
//!   message an [`Event::CompactSummary`]; an `error` event an
//!   [`Event::ApiError`];
//! - other types are [`Event::Other`].

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::DecodeOptions;
use super::native::{NativeLines, api_error_category};
use super::raw;
use crate::event::{Event, LineInfo, RawJson};
use crate::facts::TokenCounts;

pub use super::native::RolloutState;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(borrow, default)]
    record_type: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    action: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cli_version: Option<&'a RawValue>,
    #[serde(borrow, default)]
    git: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Git<'a> {
    #[serde(borrow, default)]
    branch: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct TokenInfo<'a> {
    #[serde(borrow, default)]
    total_token_usage: Option<&'a RawValue>,
}

#[allow(clippy::struct_field_names)] // the wire names
#[derive(Deserialize)]
struct TokenUsage<'a> {
    #[serde(borrow, default)]
    input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cached_input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reasoning_output_tokens: Option<&'a RawValue>,
}

/// Response item types a bare (older layout) line may have.
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// Whether a parsed first line is a Codex rollout line (Note \[Format
/// detection\] in `decode`): the `{timestamp, type, payload}` envelope
/// (any type), or the older layout's header (`id` + `timestamp`, no
/// `type`), `record_type`, or a bare response item. A bare `message` must
/// carry Responses-style parts (`input_text`, `output_text`) and no
/// `model`, so an Anthropic Messages body (`type: "message"` with `id`,
/// `model`, `content`) is not taken.
pub fn is_rollout_line(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    let kind = obj.get("type").and_then(Value::as_str);
    if kind.is_some() && obj.contains_key("payload") && obj.contains_key("timestamp") {
        return true;
    }
    if obj.get("record_type").is_some_and(Value::is_string) {
        return true;
    }
    let Some(kind) = kind else {
        return obj.get("id").is_some_and(Value::is_string)
            && obj.get("timestamp").is_some_and(Value::is_string)
            && !["object", "choices", "candidates", "message", "model"]
                .iter()
                .any(|k| obj.contains_key(*k));
    };
    if kind == "message" {
        let parts = obj.get("content").and_then(Value::as_array);
        return !obj.contains_key("model")
            && obj.contains_key("role")
            && parts.is_some_and(|p| {
                p.iter().any(|part| {
                    matches!(
                        part.get("type").and_then(Value::as_str),
                        Some("input_text" | "output_text")
                    )
                })
            });
    }
    ITEM_TYPES.contains(&kind) && kind != "message"
}

/// Decode one object line. Returns `false` when it is not valid JSON.
pub fn decode_line(
    line: &[u8],
    state: &mut NativeLines,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(text) else {
        return false;
    };
    let kind = raw::string_of(envelope.kind);
    let timestamp = raw::string_of(envelope.timestamp);
    // The older layout: no envelope.
    let (kind, payload) = match (kind, envelope.payload) {
        (Some(kind), Some(payload)) => (kind, Some(payload)),
        (kind, None) => {
            state.codex.legacy = true;
            match kind {
                _ if envelope.record_type.is_some() => {
                    let record = raw::string_of(envelope.record_type).unwrap_or_default();
                    sink(Event::Line(Box::new(LineInfo {
                        timestamp,
                        kind: format!("record_type:{record}"),
                        ..LineInfo::default()
                    })));
                    sink(Event::Other {
                        kind: format!("record_type:{record}"),
                    });
                    return true;
                }
                None if envelope.id.is_some() => ("session_meta".to_owned(), raw_of(text)),
                Some(k) if ITEM_TYPES.contains(&k.as_str()) => {
                    ("response_item".to_owned(), raw_of(text))
                }
                Some(k) => (k, None),
                None => (String::new(), None),
            }
        }
        (None, Some(_)) => (String::new(), None),
    };
    let p = raw::object_of::<Payload<'_>>(payload);
    let sub = p.as_ref().and_then(|p| raw::string_of(p.kind));
    let label = match (&sub, kind.as_str()) {
        (Some(sub), "response_item" | "event_msg") => format!("{kind}:{sub}"),
        _ => kind.clone(),
    };
    let mut info = LineInfo {
        timestamp,
        kind: label.clone(),
        ..LineInfo::default()
    };
    if let Some(p) = &p {
        match kind.as_str() {
            "session_meta" => {
                info.session_id = raw::string_of(p.id);
                info.cwd = raw::string_of(p.cwd);
                info.version = raw::string_of(p.cli_version);
                info.git_branch =
                    raw::object_of::<Git<'_>>(p.git).and_then(|g| raw::string_of(g.branch));
            }
            "turn_context" => {
                info.cwd = raw::string_of(p.cwd);
                info.model = raw::string_of(p.model);
                if info.model.is_some() {
                    state.codex.model.clone_from(&info.model);
                }
            }
            _ => {}
        }
    }
    sink(Event::Line(Box::new(info)));
    let Some(p) = p else {
        sink(Event::Other { kind: label });
        return true;
    };
    match kind.as_str() {
        "session_meta" | "turn_context" => {}
        "response_item" => response_item(&p, sub.as_deref(), state, opts, sink, label),
        "event_msg" => event_msg(&p, sub.as_deref(), state, sink, label),
        "compacted" => {
            sink(Event::Compaction {
                kind: "codex_compacted".to_owned(),
                trigger: None,
                pre_tokens: None,
            });
            if let Some(text) = raw::string_of(p.message).filter(|t| !t.is_empty()) {
                sink(Event::CompactSummary { text });
            }
        }
        _ => sink(Event::Other { kind: label }),
    }
    true
}

/// The whole line as a raw value (an older-layout line is its own payload).
fn raw_of(text: &str) -> Option<&RawValue> {
    serde_json::from_str::<&RawValue>(text).ok()
}

fn parts_text(content: Option<&RawValue>, kinds: &[&str]) -> Vec<String> {
    raw::elements(content)
        .into_iter()
        .filter_map(|e| raw::object_of::<Part<'_>>(Some(e)))
        .filter(|part| raw::str_of(part.kind).is_some_and(|k| kinds.contains(&k.as_ref())))
        .filter_map(|part| raw::string_of(part.text))
        .collect()
}

fn response_item(
    p: &Payload<'_>,
    sub: Option<&str>,
    state: &mut NativeLines,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
    label: String,
) {
    match sub {
        Some("message") => match raw::str_of(p.role).as_deref() {
            Some("assistant") => {
                sink(Event::Message {
                    id: raw::string_of(p.id),
                    stop_reason: None,
                    parent_tool_use_id: None,
                });
                for text in parts_text(p.content, &["output_text", "text"]) {
                    sink(Event::Text { text });
                }
            }
            // Only the older layout has no `user_message` events; there a
            // user message that is not injected context (`<environment_context>`,
            // `<user_instructions>`) is the prompt.
            Some("user") if state.codex.legacy => {
                let text = parts_text(p.content, &["input_text", "text"])
                    .into_iter()
                    .filter(|t| !t.trim_start().starts_with('<'))
                    .collect::<Vec<_>>()
                    .join("\n");
                if !text.is_empty() {
                    sink(Event::UserText { text });
                }
            }
            _ => {}
        },
        Some("reasoning") => sink(Event::Thinking {
            text: parts_text(p.summary, &["summary_text"]).join("\n"),
        }),
        Some(
            kind @ ("function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call"),
        ) => {
            let (name, input) = match kind {
                "function_call" => (
                    raw::string_of(p.name).unwrap_or_default(),
                    // `arguments` is a JSON string: the input is what it holds.
                    raw::str_of(p.arguments)
                        .and_then(|a| RawValue::from_string(a.into_owned()).ok())
                        .map(RawJson::new)
                        .or_else(|| p.arguments.map(RawJson::from_raw)),
                ),
                "custom_tool_call" => (
                    raw::string_of(p.name).unwrap_or_default(),
                    p.input.map(RawJson::from_raw),
                ),
                "local_shell_call" => ("local_shell".to_owned(), p.action.map(RawJson::from_raw)),
                _ => ("web_search".to_owned(), p.action.map(RawJson::from_raw)),
            };
            let id = raw::string_of(p.call_id).or_else(|| raw::string_of(p.id));
            state.tools.insert(id.as_deref(), &name);
            sink(Event::ToolUse {
                id,
                name,
                input: input.unwrap_or_else(RawJson::null),
            });
        }
        Some("function_call_output" | "custom_tool_call_output") => {
            let tool_use_id = raw::string_of(p.call_id);
            let text = output_text(p.output);
            let is_error = exit_code_failed(&text);
            let name = state.tools.take(tool_use_id.as_deref());
            sink(Event::ToolResult {
                tool_use_id: tool_use_id.clone(),
                is_error,
                content: opts.keep_tool_results.then_some(text),
            });
            if is_error {
                sink(Event::ToolError { tool_use_id, name });
            }
        }
        _ => sink(Event::Other { kind: label }),
    }
}

/// A tool output as text: a string, an object's `text` or `content`, a
/// list of parts' texts, else its JSON.
fn output_text(output: Option<&RawValue>) -> String {
    if let Some(text) = raw::string_of(output) {
        return text;
    }
    if raw::is_array(output) {
        return parts_text(output, &["input_text", "output_text", "text"]).join("\n");
    }
    if let Some(part) = raw::object_of::<Part<'_>>(output) {
        if let Some(text) = raw::string_of(part.text) {
            return text;
        }
    }
    output.map(|o| o.get().to_owned()).unwrap_or_default()
}

/// Note \[Codex exit codes\]: Codex records a tool failure only in the
/// output text. The older layout's output is a JSON string
/// `{"output": ..., "metadata": {"exit_code": N, ...}}`; newer outputs start
/// with a header (`Exit code: N`, or `Process exited with code N`) before
/// `Output:`. A non-zero code is a failure; only the header (the first 16
/// lines, up to `Output:`) is read, so a command's own output that happens
/// to print such a line does not count.
fn exit_code_failed(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
            if let Some(code) = value
                .pointer("/metadata/exit_code")
                .or_else(|| value.get("exit_code"))
            {
                return code.as_i64().is_some_and(|c| c != 0);
            }
        }
    }
    for line in text.lines().take(16) {
        if line.starts_with("Output:") {
            break;
        }
        let code = line
            .strip_prefix("Exit code: ")
            .or_else(|| line.strip_prefix("Process exited with code "));
        if let Some(code) = code {
            return code.trim().parse::<i64>().is_ok_and(|c| c != 0);
        }
    }
    false
}

fn event_msg(
    p: &Payload<'_>,
    sub: Option<&str>,
    state: &NativeLines,
    sink: &mut dyn FnMut(Event),
    label: String,
) {
    match sub {
        Some("user_message") => {
            if let Some(text) = raw::string_of(p.message) {
                sink(Event::UserText { text });
            }
        }
        // Repeats of the response items (which are decoded).
        Some("agent_message" | "agent_reasoning") => {}
        Some("token_count") => {
            let total = raw::object_of::<TokenInfo<'_>>(p.info)
                .and_then(|i| raw::object_of::<TokenUsage<'_>>(i.total_token_usage));
            if let Some(u) = total {
                sink(Event::Usage {
                    message_id: None,
                    request_id: None,
                    model: state.codex.model.clone(),
                    tokens: TokenCounts {
                        input: raw::token_count(u.input_tokens),
                        output: raw::token_count(u.output_tokens),
                        cache_read: raw::token_count(u.cached_input_tokens),
                        reasoning: raw::token_count(u.reasoning_output_tokens),
                        ..TokenCounts::default()
                    },
                    cumulative: true,
                });
            }
        }
        Some("error") => {
            let message =
                raw::string_of(p.message).unwrap_or_else(|| "codex error (no detail)".to_owned());
            sink(Event::ApiError {
                category: api_error_category(None, &message),
                message,
                status: None,
            });
        }
        _ => sink(Event::Other { kind: label }),
    }
}
