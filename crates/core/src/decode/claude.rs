//! Claude Code `--output-format stream-json` lines into events.
//!
//! The contract is seed 004 (clauditor's parser), extended with the fields of
//! Claude Code 2.1.x: `structured_output`, the `error_*` result subtypes with
//! their `errors` list, `terminal_reason`, `api_error_status`, partial
//! messages (`stream_event`), and the control / keep-alive / rate-limit lines
//! the CLI interleaves, which are tolerated as [`Event::Other`].
//!
//! Each line is deserialized once into `Line`, a struct of borrowed raw
//! values: `serde_json` validates the whole line (a malformed line is caught
//! even in parts nobody reads), but nothing is built for `user` tool results,
//! which dominate the bytes of real transcripts. Fields are parsed on demand
//! and leniently: a field of an unexpected type reads as absent.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::DecodeOptions;
use super::raw;
use super::skim::{Skim, skim};
use crate::event::{Event, RawJson, ResultEvent};
use crate::facts::{ErrorCategory, ResultInfo, Usage};
use crate::json::InexactNumber;

/// The top-level fields of one stream-json line that any decoder reads.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    subtype: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: raw::Lenient<Message<'a>>,
    #[serde(borrow, default)]
    parent_tool_use_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(rename = "apiKeySource", borrow, default)]
    api_key_source: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    is_error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    num_turns: Option<&'a RawValue>,
    #[serde(borrow, default)]
    duration_ms: Option<&'a RawValue>,
    #[serde(borrow, default)]
    total_cost_usd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    structured_output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    errors: Option<&'a RawValue>,
    #[serde(borrow, default)]
    terminal_reason: Option<&'a RawValue>,
    #[serde(borrow, default)]
    api_error_status: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stop_reason: Option<&'a RawValue>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    permission_denials: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: raw::LenientList<Block<'a>>,
    #[serde(borrow, default)]
    stop_reason: Option<&'a RawValue>,
}

/// One content block of a message, as Claude writes it in stream-json and
/// in its session files alike (`claude_session` reads the same shape).
#[derive(Deserialize)]
pub(super) struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) thinking: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) tool_use_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) is_error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    index: Option<&'a RawValue>,
    #[serde(borrow, default)]
    delta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    partial_json: Option<&'a RawValue>,
}

/// The stream-json `type`s Claude Code writes, for format detection.
pub const CLAUDE_TYPES: &[&str] = &[
    "system",
    "assistant",
    "user",
    "result",
    "stream_event",
    "rate_limit_event",
    "keep_alive",
    "control_request",
    "control_response",
    "control_cancel_request",
    "tool_progress",
    "auth_status",
];

/// Decode one object line (the caller has checked it starts with `{`).
///
/// Returns `false` when the line is not valid JSON (the caller counts it).
pub fn decode_line(line: &[u8], opts: &DecodeOptions, sink: &mut dyn FnMut(Event)) -> bool {
    // Note [Skimming tool results] (skim.rs): a `user` line whose content
    // nobody reads is validated by the fast skimmer and not parsed at all.
    // Claude Code writes `type` first, so most lines are sorted by a prefix
    // check; other lines are skimmed to find their `type`. Lines that will be
    // parsed anyway are not skimmed: `serde_json` validates them.
    if !opts.keep_tool_results {
        let skim_it = match leading_type(line) {
            Some(kind) => kind == b"user",
            None => true,
        };
        if skim_it {
            match skim(line) {
                Skim::Invalid | Skim::NonObject => return false,
                Skim::Object(Some(b"user")) => {
                    sink(Event::Other {
                        kind: "user".to_owned(),
                    });
                    return true;
                }
                Skim::Object(_) => {}
            }
        }
    }
    // One UTF-8 check for the whole line; parsing from `&str` then borrows
    // raw values without checking them again.
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(parsed) = serde_json::from_str::<Line<'_>>(text) else {
        return false;
    };
    let kind = raw::str_of(parsed.kind);
    match kind.as_deref() {
        Some("assistant") => assistant(&parsed, sink),
        Some("result") => result(&parsed, sink),
        Some("system") => system(&parsed, sink),
        Some("user") => user(&parsed, opts, sink),
        Some("stream_event") => stream_event(&parsed, sink),
        other => sink(Event::Other {
            kind: other_kind(other, &parsed),
        }),
    }
    true
}

/// The `type` of a line that starts `{"type":"<kind>"` (how Claude Code
/// writes every line), without validating the rest.
fn leading_type(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(br#"{"type":""#)?;
    let end = memchr::memchr(b'"', rest)?;
    let kind = rest.get(..end)?;
    (!kind.contains(&b'\\')).then_some(kind)
}

fn other_kind(kind: Option<&str>, parsed: &Line<'_>) -> String {
    let mut out = kind.unwrap_or("").to_owned();
    if let Some(sub) = raw::str_of(parsed.subtype) {
        out.push('/');
        out.push_str(&sub);
    }
    out
}

fn assistant(parsed: &Line<'_>, sink: &mut dyn FnMut(Event)) {
    let message = parsed.message.0.as_ref();
    let parent_tool_use_id = raw::string_of(parsed.parent_tool_use_id);
    let Some(message) = message else {
        sink(Event::Message {
            id: None,
            stop_reason: None,
            parent_tool_use_id,
        });
        return;
    };
    sink(Event::Message {
        id: raw::string_of(message.id),
        stop_reason: raw::string_of(message.stop_reason),
        parent_tool_use_id,
    });
    // Seed 004: a `content` that is missing or not a list contributes nothing.
    for block in message.content.0.iter().filter_map(|b| b.0.as_ref()) {
        if let Some(event) = assistant_block(block, sink) {
            sink(event);
        }
    }
}

/// The event of one assistant content block (text, thinking, tool call),
/// `None` for block types that carry nothing to report. Shared with the
/// session-file decoder, which writes the same blocks.
pub(super) fn assistant_block(block: &Block<'_>, sink: &mut dyn FnMut(Event)) -> Option<Event> {
    match raw::str_of(block.kind).as_deref() {
        // Seed 004: a text block without `text` contributes "".
        Some("text") => Some(Event::Text {
            text: raw::text_of(block.text, sink).unwrap_or_default(),
        }),
        Some("thinking") => Some(Event::Thinking {
            text: raw::string_of(block.thinking).unwrap_or_default(),
        }),
        Some("tool_use" | "server_tool_use") => Some(Event::ToolUse {
            id: raw::string_of(block.id),
            name: raw::string_of(block.name).unwrap_or_default(),
            input: block.input.map_or_else(RawJson::null, RawJson::from_raw),
        }),
        _ => None,
    }
}

fn user(parsed: &Line<'_>, opts: &DecodeOptions, sink: &mut dyn FnMut(Event)) {
    // Note [Tool results are not re-read]: `user` lines carry tool output and
    // make up most of a transcript's bytes. The line parse has validated them;
    // reading the blocks again costs a second pass, so it happens only when
    // the caller asked for the content.
    if !opts.keep_tool_results {
        sink(Event::Other {
            kind: "user".to_owned(),
        });
        return;
    }
    let Some(message) = parsed.message.0.as_ref() else {
        sink(Event::Other {
            kind: "user".to_owned(),
        });
        return;
    };
    for block in message.content.0.iter().filter_map(|b| b.0.as_ref()) {
        if raw::str_of(block.kind).as_deref() != Some("tool_result") {
            continue;
        }
        sink(Event::ToolResult {
            tool_use_id: raw::string_of(block.tool_use_id),
            is_error: raw::is_true(block.is_error),
            content: Some(tool_result_text(block.content)),
        });
    }
}

/// A tool result's content as text: a string as is, a list of text blocks
/// joined with `\n`, anything else as its JSON text.
pub fn tool_result_text(content: Option<&RawValue>) -> String {
    if let Some(text) = raw::string_of(content) {
        return text;
    }
    if raw::is_array(content) {
        let mut out = String::new();
        for (i, part) in raw::elements(content).into_iter().enumerate() {
            let Some(part) = raw::object_of::<Block<'_>>(Some(part)) else {
                continue;
            };
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&raw::str_of(part.text).unwrap_or_default());
        }
        return out;
    }
    content.map(|c| c.get().to_owned()).unwrap_or_default()
}

fn system(parsed: &Line<'_>, sink: &mut dyn FnMut(Event)) {
    if raw::str_of(parsed.subtype).as_deref() == Some("init") {
        sink(Event::Init {
            session_id: raw::string_of(parsed.session_id),
            model: raw::string_of(parsed.model),
            // Seed 004: a non-string apiKeySource is ignored.
            api_key_source: raw::string_of(parsed.api_key_source),
            cwd: raw::string_of(parsed.cwd),
        });
    } else {
        sink(Event::Other {
            kind: other_kind(Some("system"), parsed),
        });
    }
}

/// Token usage as seed 004 reads it: missing or broken counts are 0.
pub fn usage_of(raw_usage: Option<&RawValue>) -> Usage {
    match raw::object_of::<raw::UsageFields<'_>>(raw_usage) {
        Some(u) => Usage {
            input_tokens: raw::token_count(u.input_tokens),
            output_tokens: raw::token_count(u.output_tokens),
        },
        None => Usage::default(),
    }
}

/// The category a Claude result subtype implies.
pub fn subtype_category(subtype: &str) -> Option<ErrorCategory> {
    match subtype {
        "error_max_turns" => Some(ErrorCategory::MaxTurns),
        "error_max_structured_output_retries" => Some(ErrorCategory::StructuredOutputRetries),
        "error_max_budget_usd" => Some(ErrorCategory::Budget),
        "error_during_execution" => Some(ErrorCategory::Api),
        _ => None,
    }
}

fn result(parsed: &Line<'_>, sink: &mut dyn FnMut(Event)) {
    let subtype = raw::string_of(parsed.subtype);
    let is_error = raw::is_true(parsed.is_error);
    let category = if is_error {
        subtype.as_deref().and_then(subtype_category)
    } else {
        None
    };
    let errors = raw::elements(parsed.errors)
        .into_iter()
        .filter_map(|e| raw::string_of(Some(e)))
        .collect();
    let info = ResultInfo {
        subtype,
        is_error,
        duration_ms: raw::u64_of(parsed.duration_ms),
        num_turns: raw::u64_of(parsed.num_turns),
        total_cost_usd: raw::f64_of(parsed.total_cost_usd),
        usage: usage_of(parsed.usage),
        text: raw::text_of(parsed.result, sink),
        errors,
        terminal_reason: raw::string_of(parsed.terminal_reason),
        api_error_status: raw::value_of(parsed.api_error_status),
        stop_reason: raw::string_of(parsed.stop_reason),
        session_id: raw::string_of(parsed.session_id),
        error: error_text_of(parsed.error),
        permission_denials: raw::elements(parsed.permission_denials)
            .into_iter()
            .filter_map(|d| denial_of(Some(d)))
            .collect(),
    };
    let (structured_output, structured_inexact) = structured_of(parsed.structured_output);
    sink(Event::Result(Box::new(ResultEvent {
        info,
        structured_output,
        structured_inexact,
        session_id: raw::string_of(parsed.session_id),
        error: None,
        category,
    })));
}

/// The native structured output, parsed so that a number it cannot hold
/// exactly is listed rather than silently changed or dropped (Note [Big
/// numbers] in [`crate::json`]).
fn structured_of(raw_value: Option<&RawValue>) -> (Option<Value>, Vec<InexactNumber>) {
    match raw_value.map(RawValue::get) {
        None | Some("null") => (None, Vec::new()),
        Some(text) => match crate::json::parse(text) {
            Ok(p) => (Some(p.value), p.inexact),
            Err(_) => (None, Vec::new()),
        },
    }
}

/// The text of a result's `error` field: a string, or an object's
/// `type: message` (`{"type": "authentication_error", "message": "..."}`).
fn error_text_of(raw_error: Option<&RawValue>) -> Option<String> {
    if let Some(text) = raw::string_of(raw_error) {
        return Some(text);
    }
    let fields = raw::object_of::<ErrorFields<'_>>(raw_error)?;
    let kind = raw::string_of(fields.kind).filter(|k| !k.trim().is_empty());
    let message = raw::string_of(fields.message).filter(|m| !m.trim().is_empty());
    match (kind, message) {
        (Some(k), Some(m)) => Some(format!("{k}: {m}")),
        (k, m) => k.or(m),
    }
}

#[derive(Deserialize)]
struct ErrorFields<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Denial<'a> {
    #[serde(borrow, default)]
    tool_name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct DenialInput<'a> {
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    file_path: Option<&'a RawValue>,
    #[serde(borrow, default)]
    path: Option<&'a RawValue>,
    #[serde(borrow, default)]
    url: Option<&'a RawValue>,
}

/// Denied tool inputs are cut to this many characters in the error text.
const DENIAL_INPUT_MAX_CHARS: usize = 80;

/// One permission denial as `Tool (what it wanted)`: the tool name and the
/// input field that says what it was about to touch (`command`,
/// `file_path`, `path`, `url`), cut short. A denial without a tool name is
/// `a tool`, so a denial is never dropped from the count.
fn denial_of(raw_denial: Option<&RawValue>) -> Option<String> {
    let denial = raw::object_of::<Denial<'_>>(raw_denial)?;
    let name = raw::string_of(denial.tool_name)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "a tool".to_owned());
    let what = raw::object_of::<DenialInput<'_>>(denial.tool_input).and_then(|i| {
        [i.command, i.file_path, i.path, i.url]
            .into_iter()
            .find_map(|f| raw::string_of(f).filter(|s| !s.trim().is_empty()))
    });
    Some(match what {
        Some(w) => {
            let one_line = w.split_whitespace().collect::<Vec<_>>().join(" ");
            let cut: String = one_line.chars().take(DENIAL_INPUT_MAX_CHARS).collect();
            let ellipsis = if cut.len() < one_line.len() {
                "…"
            } else {
                ""
            };
            format!("{name} ({cut}{ellipsis})")
        }
        None => name,
    })
}

fn stream_event(parsed: &Line<'_>, sink: &mut dyn FnMut(Event)) {
    let Some(event) = raw::object_of::<StreamEvent<'_>>(parsed.event) else {
        sink(Event::Other {
            kind: "stream_event".to_owned(),
        });
        return;
    };
    let kind = raw::str_of(event.kind);
    if kind.as_deref() == Some("content_block_delta") {
        if let Some(delta) = raw::object_of::<Delta<'_>>(event.delta) {
            match raw::str_of(delta.kind).as_deref() {
                Some("text_delta") => {
                    sink(Event::Partial {
                        index: raw::u64_of(event.index),
                        text: Some(raw::string_of(delta.text).unwrap_or_default()),
                        partial_json: None,
                    });
                    return;
                }
                Some("input_json_delta") => {
                    sink(Event::Partial {
                        index: raw::u64_of(event.index),
                        text: None,
                        partial_json: Some(raw::string_of(delta.partial_json).unwrap_or_default()),
                    });
                    return;
                }
                _ => {}
            }
        }
    }
    sink(Event::Other {
        kind: format!("stream_event/{}", kind.as_deref().unwrap_or("")),
    });
}
