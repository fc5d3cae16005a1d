//! Claude Code session files (`~/.claude/projects/<encoded-cwd>/<uuid>.jsonl`,
//! and 2.x sub-agent files `agent-<id>.jsonl`) into events.
//!
//! Every line is one JSON object with a `type`. Observed from 1.0.17 to
//! 2.1.237: `user` / `assistant` / `system` / `progress` / `attachment`
//! lines carry `uuid`, `parentUuid`, `sessionId`, `timestamp`, `cwd`,
//! `version`, `gitBranch`, `isSidechain` (and in 2.1.x `agentId` for
//! sub-agents); `assistant` lines wrap an API message, one line per content
//! block (Note \[Native tokens\] in `summary`); bookkeeping types (`summary`,
//! `file-history-snapshot`, `last-prompt`, `mode`, `permission-mode`, ...)
//! come and go with releases and are [`Event::Other`], counted by type.
//!
//! Each line emits an [`Event::Line`] first, then:
//! - `assistant`: [`Event::Message`], [`Event::Usage`], then its text,
//!   thinking and tool-use blocks; a `<synthetic>` message with
//!   `isApiErrorMessage` is an [`Event::ApiError`] instead;
//! - `user`: a typed prompt is [`Event::UserText`] (not `isMeta` context,
//!   not the interrupt marker, not tool results); `tool_result` blocks are
//!   [`Event::ToolResult`]s, with an [`Event::ToolError`] when the block has
//!   `is_error: true` or the line's `toolUseResult` is a bare `"Error: ..."`
//!   string; an `isCompactSummary` line is [`Event::CompactSummary`];
//! - `system`: `api_error` is [`Event::ApiError`], `compact_boundary` and
//!   `microcompact_boundary` are [`Event::Compaction`];
//! - `progress` with `data.type: "agent_progress"` is [`Event::SubAgent`];
//! - anything else is [`Event::Other`] with kind `type` or `type:subtype`.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::DecodeOptions;
use super::claude::{Block, assistant_block, tool_result_text};
use super::native::{NativeLines, api_error_category, status_in_text};
use super::raw;
use crate::event::{Event, LineInfo};
use crate::facts::TokenCounts;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    subtype: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uuid: Option<&'a RawValue>,
    #[serde(rename = "parentUuid", borrow, default)]
    parent_uuid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "isSidechain", borrow, default)]
    is_sidechain: Option<&'a RawValue>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    version: Option<&'a RawValue>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: Option<&'a RawValue>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: raw::Lenient<Message<'a>>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<&'a RawValue>,
    #[serde(rename = "isCompactSummary", borrow, default)]
    is_compact_summary: Option<&'a RawValue>,
    #[serde(rename = "isApiErrorMessage", borrow, default)]
    is_api_error_message: Option<&'a RawValue>,
    #[serde(rename = "isMeta", borrow, default)]
    is_meta: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(rename = "compactMetadata", borrow, default)]
    compact_metadata: Option<&'a RawValue>,
    #[serde(rename = "microcompactMetadata", borrow, default)]
    microcompact_metadata: Option<&'a RawValue>,
    #[serde(borrow, default)]
    trigger: Option<&'a RawValue>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(rename = "parentToolUseID", borrow, default)]
    parent_tool_use_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stop_reason: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

#[allow(clippy::struct_field_names)] // the wire names
#[derive(Deserialize)]
struct UsageFields<'a> {
    #[serde(borrow, default)]
    input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cache_read_input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cache_creation_input_tokens: Option<&'a RawValue>,
    /// `{"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}`: the
    /// cache writes by duration (1.0.8x and later).
    #[serde(borrow, default)]
    cache_creation: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CacheCreation<'a> {
    #[serde(borrow, default)]
    ephemeral_1h_input_tokens: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CompactMeta<'a> {
    #[serde(borrow, default)]
    trigger: Option<&'a RawValue>,
    #[serde(rename = "preTokens", borrow, default)]
    pre_tokens: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Progress<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<&'a RawValue>,
}

/// The model name Claude Code gives messages it makes itself.
const SYNTHETIC: &str = "<synthetic>";
/// What Claude Code writes as a user text block when the user interrupts.
const INTERRUPT_MARKER: &str = "[Request interrupted by user";

/// Whether a parsed first line is a Claude Code session line (Note \[Format
/// detection\] in `decode`): an object with a string `type` and one of the
/// camelCase session fields. Stream-json (`Format::Claude`) writes
/// `session_id` in snake case (and `uuid`, which both write), so it never
/// matches; a line type a future release invents matches by its fields.
pub fn is_session_line(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    obj.get("type").is_some_and(Value::is_string)
        && (["sessionId", "parentUuid", "leafUuid", "isSidechain"]
            .iter()
            .any(|k| obj.contains_key(*k))
            || (obj.contains_key("messageId") && obj.contains_key("snapshot")))
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
    let Ok(p) = serde_json::from_str::<Line<'_>>(text) else {
        return false;
    };
    let kind = raw::string_of(p.kind).unwrap_or_default();
    let label = match raw::str_of(p.subtype) {
        Some(sub) => format!("{kind}:{sub}"),
        None => kind.clone(),
    };
    let message = p.message.0.as_ref();
    let model = if kind == "assistant" {
        message.and_then(|m| raw::string_of(m.model))
    } else {
        None
    };
    sink(Event::Line(Box::new(LineInfo {
        uuid: raw::string_of(p.uuid),
        parent_uuid: raw::string_of(p.parent_uuid),
        timestamp: raw::string_of(p.timestamp),
        kind: label.clone(),
        sidechain: raw::is_true(p.is_sidechain),
        agent_id: raw::string_of(p.agent_id),
        cwd: raw::string_of(p.cwd),
        version: raw::string_of(p.version),
        git_branch: raw::string_of(p.git_branch),
        session_id: raw::string_of(p.session_id),
        model: model.clone(),
    })));
    match kind.as_str() {
        "assistant" => assistant(&p, message, model, state, sink),
        "user" => user(&p, message, state, opts, sink),
        "system" => system(&p, label, sink),
        "progress" => progress(&p, sink),
        _ => sink(Event::Other { kind: label }),
    }
    true
}

fn blocks(content: Option<&RawValue>) -> Vec<Block<'_>> {
    raw::elements(content)
        .into_iter()
        .filter_map(|b| raw::object_of::<Block<'_>>(Some(b)))
        .collect()
}

fn assistant(
    p: &Line<'_>,
    message: Option<&Message<'_>>,
    model: Option<String>,
    state: &mut NativeLines,
    sink: &mut dyn FnMut(Event),
) {
    let Some(message) = message else {
        sink(Event::Message {
            id: None,
            stop_reason: None,
            parent_tool_use_id: None,
        });
        return;
    };
    let blocks = blocks(message.content);
    if raw::is_true(p.is_api_error_message) {
        let text = blocks
            .iter()
            .filter_map(|b| raw::string_of(b.text))
            .collect::<Vec<_>>()
            .join("\n");
        let status = status_in_text(&text);
        sink(Event::ApiError {
            category: api_error_category(status, &text),
            message: text,
            status,
        });
        return;
    }
    let id = raw::string_of(message.id);
    sink(Event::Message {
        id: id.clone(),
        stop_reason: raw::string_of(message.stop_reason),
        parent_tool_use_id: None,
    });
    if model.as_deref() != Some(SYNTHETIC) {
        if let Some(u) = raw::object_of::<UsageFields<'_>>(message.usage) {
            sink(Event::Usage {
                message_id: id,
                request_id: raw::string_of(p.request_id),
                model,
                tokens: TokenCounts {
                    input: raw::token_count(u.input_tokens),
                    output: raw::token_count(u.output_tokens),
                    cache_read: raw::token_count(u.cache_read_input_tokens),
                    cache_write: raw::token_count(u.cache_creation_input_tokens),
                    cache_write_1h: raw::object_of::<CacheCreation<'_>>(u.cache_creation)
                        .map_or(0, |c| raw::token_count(c.ephemeral_1h_input_tokens)),
                    reasoning: 0,
                },
                cumulative: false,
            });
        }
    }
    for block in &blocks {
        if let Some(event) = assistant_block(block, sink) {
            if let Event::ToolUse { id, name, .. } = &event {
                state.tools.insert(id.as_deref(), name);
            }
            sink(event);
        }
    }
}

fn user(
    p: &Line<'_>,
    message: Option<&Message<'_>>,
    state: &mut NativeLines,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) {
    let content = message.and_then(|m| m.content);
    if raw::is_true(p.is_compact_summary) {
        sink(Event::CompactSummary {
            text: tool_result_text(content),
        });
        return;
    }
    let is_meta = raw::is_true(p.is_meta);
    if let Some(text) = raw::text_of(content, sink) {
        if !is_meta && !text.starts_with(INTERRUPT_MARKER) {
            sink(Event::UserText { text });
        }
        return;
    }
    // A bare "Error: ..." `toolUseResult` marks the line's result as failed
    // even when its block lacks `is_error`.
    let line_failed = raw::str_of(p.tool_use_result).is_some_and(|r| r.starts_with("Error"));
    let mut prompt = Vec::new();
    let mut has_result = false;
    for block in blocks(content) {
        match raw::str_of(block.kind).as_deref() {
            Some("tool_result") => {
                has_result = true;
                let tool_use_id = raw::string_of(block.tool_use_id);
                let is_error = raw::is_true(block.is_error) || line_failed;
                let name = state.tools.take(tool_use_id.as_deref());
                sink(Event::ToolResult {
                    tool_use_id: tool_use_id.clone(),
                    is_error,
                    content: opts
                        .keep_tool_results
                        .then(|| tool_result_text(block.content)),
                });
                if is_error {
                    sink(Event::ToolError { tool_use_id, name });
                }
            }
            Some("text") => {
                if let Some(text) = raw::string_of(block.text) {
                    if !text.starts_with(INTERRUPT_MARKER) {
                        prompt.push(text);
                    }
                }
            }
            Some("image") => prompt.push(String::new()),
            _ => {}
        }
    }
    if !has_result && !is_meta && !prompt.is_empty() {
        sink(Event::UserText {
            text: prompt.join("\n"),
        });
    }
}

fn system(p: &Line<'_>, label: String, sink: &mut dyn FnMut(Event)) {
    match raw::str_of(p.subtype).as_deref() {
        Some("api_error") => {
            let (message, status) = api_error_of(p.error);
            sink(Event::ApiError {
                category: api_error_category(status, &message),
                message,
                status,
            });
        }
        Some(kind @ ("compact_boundary" | "microcompact_boundary")) => {
            let meta =
                raw::object_of::<CompactMeta<'_>>(p.compact_metadata.or(p.microcompact_metadata));
            sink(Event::Compaction {
                kind: kind.to_owned(),
                trigger: meta
                    .as_ref()
                    .and_then(|m| raw::string_of(m.trigger))
                    .or_else(|| raw::string_of(p.trigger)),
                pre_tokens: meta.as_ref().and_then(|m| raw::u64_of(m.pre_tokens)),
            });
        }
        _ => sink(Event::Other { kind: label }),
    }
}

/// The text and HTTP status of a `system/api_error` line's `error`: a
/// string, or an object with `message` (else a nested `error.error.message`,
/// else `formatted`, else its `type`) and `status` (0 means none).
fn api_error_of(error: Option<&RawValue>) -> (String, Option<u64>) {
    if let Some(text) = raw::string_of(error) {
        let status = status_in_text(&text);
        return (text, status);
    }
    let value = raw::value_of(error).unwrap_or(Value::Null);
    let status = value
        .get("status")
        .and_then(Value::as_u64)
        .filter(|s| *s > 0);
    let text = [
        value.get("message"),
        value.pointer("/error/error/message"),
        value.pointer("/error/message"),
        value.get("formatted"),
        value.get("type"),
        value.pointer("/error/error/type"),
    ]
    .into_iter()
    .flatten()
    .find_map(|v| v.as_str().filter(|s| !s.trim().is_empty()))
    .map_or_else(|| "API error (no detail)".to_owned(), str::to_owned);
    (text, status)
}

fn progress(p: &Line<'_>, sink: &mut dyn FnMut(Event)) {
    let data = raw::object_of::<Progress<'_>>(p.data);
    let kind = data.as_ref().and_then(|d| raw::string_of(d.kind));
    let agent = data.as_ref().and_then(|d| raw::string_of(d.agent_id));
    match (kind.as_deref(), agent) {
        (Some("agent_progress"), Some(agent_id)) => sink(Event::SubAgent {
            agent_id,
            tool_use_id: raw::string_of(p.parent_tool_use_id),
        }),
        (kind, _) => sink(Event::Other {
            kind: format!("progress:{}", kind.unwrap_or("")),
        }),
    }
}
