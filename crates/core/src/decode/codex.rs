//! Codex CLI `exec --json` JSONL lines into events.
//!
//! Shapes (codex 0.4x and later): `thread.started {thread_id}`,
//! `turn.started`, `item.started|updated|completed {item}`,
//! `turn.completed {usage}`, `turn.failed {error: {message}}` and a top-level
//! `error {message}`. Items carry `type` (older builds: `item_type`):
//! `agent_message` (also `assistant_message`), `reasoning`,
//! `command_execution`, `file_change`, `mcp_tool_call`, `web_search`,
//! `todo_list`, `error`.
//!
//! Note [Codex results]: Codex has no single terminal line. Each
//! `turn.completed` becomes a [`Event::Result`] whose usage is the running
//! sum over turns (so "the last result wins" yields the total) and whose
//! `num_turns` counts completed turns; a run therefore `saw_result` once any
//! turn completed. `input_tokens` already includes `cached_input_tokens`
//! (a breakdown, not an addend), so the cached count is not added.
//! `turn.failed` and `error` become `is_error` results carrying the message,
//! classified by keyword like Claude's. Items become events when they
//! complete (`item.completed`), so a tool call is counted once;
//! `item.started` / `item.updated` are [`Event::Other`].

use serde::Deserialize;
use serde_json::value::RawValue;

use super::DecodeOptions;
use super::raw;
use crate::event::{Event, RawJson, ResultEvent};
use crate::facts::{ResultInfo, Usage};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thread_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    item: Option<&'a RawValue>,
}

// `item_type` is the wire name older Codex builds used for `type`.
#[allow(clippy::struct_field_names)]
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    item_type: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    aggregated_output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    exit_code: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorFields<'a> {
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// Whether a `type` is one Codex writes (for format detection; `error` is
/// checked separately, by shape).
pub fn is_codex_type(kind: &str) -> bool {
    kind == "thread.started" || kind.starts_with("turn.") || kind.starts_with("item.")
}

/// Running state across lines: the summed usage and the turn count.
#[derive(Debug, Default)]
pub struct CodexState {
    usage: Usage,
    turns: u64,
}

/// Decode one object line. Returns `false` when it is not valid JSON.
pub fn decode_line(
    line: &[u8],
    state: &mut CodexState,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) -> bool {
    let Ok(parsed) = serde_json::from_slice::<Line<'_>>(line) else {
        return false;
    };
    let kind = raw::str_of(parsed.kind);
    match kind.as_deref() {
        Some("thread.started") => sink(Event::Init {
            session_id: raw::string_of(parsed.thread_id),
            model: None,
            api_key_source: None,
            cwd: None,
        }),
        Some("item.completed") => item(parsed.item, opts, sink),
        Some("turn.completed") => {
            state.turns += 1;
            if let Some(u) = raw::object_of::<raw::UsageFields<'_>>(parsed.usage) {
                state.usage.input_tokens = state
                    .usage
                    .input_tokens
                    .saturating_add(raw::token_count(u.input_tokens));
                state.usage.output_tokens = state
                    .usage
                    .output_tokens
                    .saturating_add(raw::token_count(u.output_tokens));
            }
            sink(result(state, false, None, "turn.completed"));
        }
        Some("turn.failed") => {
            let message = raw::object_of::<ErrorFields<'_>>(parsed.error)
                .and_then(|e| raw::string_of(e.message));
            sink(result(state, true, message, "turn.failed"));
        }
        Some("error") => {
            let message = raw::string_of(parsed.message).or_else(|| {
                raw::object_of::<ErrorFields<'_>>(parsed.error)
                    .and_then(|e| raw::string_of(e.message))
            });
            sink(result(state, true, message, "error"));
        }
        Some(k) if k.starts_with("item.") => {
            let item_kind = raw::object_of::<Item<'_>>(parsed.item)
                .and_then(|i| raw::string_of(i.kind.or(i.item_type)))
                .unwrap_or_default();
            sink(Event::Other {
                kind: format!("{k}/{item_kind}"),
            });
        }
        other => sink(Event::Other {
            kind: other.unwrap_or("").to_owned(),
        }),
    }
    true
}

fn result(state: &CodexState, is_error: bool, text: Option<String>, subtype: &str) -> Event {
    Event::Result(Box::new(ResultEvent {
        info: ResultInfo {
            subtype: Some(subtype.to_owned()),
            is_error,
            num_turns: Some(state.turns),
            usage: state.usage.clone(),
            text,
            ..ResultInfo::default()
        },
        structured_output: None,
        structured_inexact: Vec::new(),
        session_id: None,
        error: None,
        category: None,
    }))
}

fn item(raw_item: Option<&RawValue>, opts: &DecodeOptions, sink: &mut dyn FnMut(Event)) {
    let Some(item) = raw::object_of::<Item<'_>>(raw_item) else {
        sink(Event::Other {
            kind: "item.completed".to_owned(),
        });
        return;
    };
    let kind = raw::string_of(item.kind.or(item.item_type)).unwrap_or_default();
    let id = raw::string_of(item.id);
    match kind.as_str() {
        "agent_message" | "assistant_message" => {
            let text = raw::text_of(item.text, sink).unwrap_or_default();
            sink(Event::Text { text });
        }
        "reasoning" => sink(Event::Thinking {
            text: raw::string_of(item.text).unwrap_or_default(),
        }),
        "error" => sink(Event::Warning {
            message: format!(
                "codex error item: {}",
                raw::string_of(item.message.or(item.text)).unwrap_or_default()
            ),
        }),
        "command_execution" | "file_change" | "mcp_tool_call" | "web_search" | "todo_list" => {
            // The tool input is the whole item: it carries the command, the
            // changed paths, the MCP server and tool, the query or the list.
            sink(Event::ToolUse {
                id: id.clone(),
                name: kind.clone(),
                input: raw_item.map_or_else(RawJson::null, RawJson::from_raw),
            });
            if kind == "command_execution" {
                let exit_code = item.exit_code.map(RawValue::get);
                let failed = raw::str_of(item.status).as_deref() == Some("failed")
                    || exit_code.is_some_and(|c| c != "0" && c != "null");
                sink(Event::ToolResult {
                    tool_use_id: id,
                    is_error: failed,
                    content: if opts.keep_tool_results {
                        raw::string_of(item.aggregated_output)
                    } else {
                        None
                    },
                });
            }
        }
        _ => sink(Event::Other {
            kind: format!("item.completed/{kind}"),
        }),
    }
}
