//! A session's trace built from its events as they come (live from `run`,
//! or replayed from the store's feed), and the memory of which spans were
//! already sent.
//!
//! Note \[Sent once\]: a live session (and a session `watch` sees grow) is
//! mapped to spans again and again as it changes; [`Sent`] keeps the ids
//! of the spans already handed to the exporter, so each tool call, each
//! validation and the root leave once (ids are derived, Note \[Derived
//! ids\] in `ids`, so the same span always has the same id); a span whose
//! end moved (the root of a native session that grew, its verdict checked
//! again) leaves again, with the same id, and backends keep the latest. It lives in
//! memory: a restarted `watch` sends a session's spans again, with the same
//! ids, which backends that de-duplicate by span id show once.

use std::collections::HashMap;
use std::time::SystemTime;

use agentshape_core::Event;
use agentshape_store::time;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::SpanData;
use serde_json::Value;

use crate::session::{Message, SessionTrace, ToolCall};

/// Folds events into a [`SessionTrace`].
#[derive(Debug, Clone)]
pub struct Folder {
    /// The trace so far.
    pub trace: SessionTrace,
    /// Tool calls waiting for their result, by tool-use id.
    open: HashMap<String, usize>,
    /// Keep prompts and texts (only when contents are exported).
    keep_content: bool,
    /// A native transcript's line time, which wins over the time seen.
    line_ms: Option<i64>,
}

impl Folder {
    /// A folder for `trace`; `keep_content` keeps texts, tool inputs and results.
    pub fn new(trace: SessionTrace, keep_content: bool) -> Folder {
        Folder {
            trace,
            open: HashMap::new(),
            keep_content,
            line_ms: None,
        }
    }

    fn tool_use(&mut self, at: i64, id: Option<&str>, name: &str, input: impl FnOnce() -> String) {
        let mut call = ToolCall::new(id, name, at);
        if self.keep_content {
            call.arguments = Some(input());
        }
        if let Some(id) = id {
            self.open.insert(id.to_owned(), self.trace.tools.len());
        }
        self.trace.tools.push(call);
    }

    fn tool_result(&mut self, at: i64, id: Option<&str>, is_error: bool, content: Option<&str>) {
        let index = match id {
            Some(id) => self.open.remove(id),
            // No id: the latest call still waiting.
            None => self.trace.tools.iter().rposition(|t| t.ended_ms.is_none()),
        };
        let Some(t) = index.and_then(|i| self.trace.tools.get_mut(i)) else {
            return;
        };
        t.ended_ms = Some(at.max(t.started_ms));
        t.is_error = is_error;
        if self.keep_content {
            t.result = content.map(str::to_owned);
        }
    }

    fn message(&mut self, at: i64, role: &str, text: &str) {
        if self.keep_content && !text.trim().is_empty() {
            self.trace.messages.push(Message {
                role: role.to_owned(),
                text: text.to_owned(),
                at_ms: at,
            });
        }
    }

    /// Take in one event seen at `at_ms` (a native line's own timestamp,
    /// when the event stream has one, wins).
    pub fn event(&mut self, at_ms: i64, e: &Event) {
        let at = self.line_ms.unwrap_or(at_ms);
        match e {
            Event::Line(info) => {
                self.line_ms = info.timestamp.as_deref().and_then(time::parse_ms);
            }
            Event::Init { model: Some(m), .. } if self.trace.model.is_none() => {
                self.trace.model = Some(m.clone());
            }
            Event::ToolUse { id, name, input } => {
                self.tool_use(at, id.as_deref(), name, || input.get().to_owned());
            }
            Event::ToolResult {
                tool_use_id,
                is_error,
                content,
            } => self.tool_result(at, tool_use_id.as_deref(), *is_error, content.as_deref()),
            Event::Text { text } => self.message(at, "assistant", text),
            Event::UserText { text } => self.message(at, "user", text),
            _ => {}
        }
    }

    /// Take in one stored feed body's `event` (the JSON of an [`Event`]),
    /// stored at `at_ms`.
    pub fn json(&mut self, at_ms: i64, e: &Value) {
        let s = |k: &str| e.get(k).and_then(Value::as_str);
        match s("type") {
            Some("tool_use") => {
                let name = s("name").unwrap_or("tool").to_owned();
                self.tool_use(at_ms, s("id"), &name, || {
                    e.get("input").map(Value::to_string).unwrap_or_default()
                });
            }
            Some("tool_result") => self.tool_result(
                at_ms,
                s("tool_use_id"),
                e.get("is_error").and_then(Value::as_bool) == Some(true),
                s("content"),
            ),
            Some("text") => self.message(at_ms, "assistant", s("text").unwrap_or_default()),
            Some("user_text") => self.message(at_ms, "user", s("text").unwrap_or_default()),
            Some("init") if self.trace.model.is_none() => {
                self.trace.model = s("model").map(str::to_owned);
            }
            _ => {}
        }
    }
}

/// The spans already sent, per trace, with the end each was sent with
/// (Note \[Sent once\]).
#[derive(Debug, Default)]
pub struct Sent {
    ids: HashMap<(TraceId, SpanId), SystemTime>,
}

impl Sent {
    /// The spans of `spans` not sent before, or sent with another end (the
    /// root of a session that grew, its verdict checked again); they count
    /// as sent from now on.
    pub fn fresh(&mut self, spans: Vec<SpanData>) -> Vec<SpanData> {
        spans
            .into_iter()
            .filter(|s| {
                let key = (s.span_context.trace_id(), s.span_context.span_id());
                self.ids.insert(key, s.end_time) != Some(s.end_time)
            })
            .collect()
    }

    /// How many spans were sent.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::{SpanOptions, spans};
    use serde_json::json;

    #[test]
    fn feed_events_make_tool_calls_with_their_times_and_each_span_leaves_once() {
        let mut f = Folder::new(SessionTrace::new("s", "claude", 0), false);
        f.json(
            10,
            &json!({"type": "tool_use", "id": "a", "name": "Bash", "input": {"c": 1}}),
        );
        f.json(
            20,
            &json!({"type": "tool_use", "id": "b", "name": "Read", "input": {}}),
        );
        f.json(
            30,
            &json!({"type": "tool_result", "tool_use_id": "b", "is_error": true}),
        );
        let mut sent = Sent::default();
        let first = sent.fresh(spans(&f.trace, &SpanOptions::default()));
        let names: Vec<&str> = first.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, ["execute_tool Read"]);
        assert_eq!(f.trace.tools[0].arguments, None);
        f.json(
            40,
            &json!({"type": "tool_result", "tool_use_id": "a", "is_error": false}),
        );
        f.trace.ended_ms = Some(50);
        let second = sent.fresh(spans(&f.trace, &SpanOptions::default()));
        let names: Vec<&str> = second.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, ["invoke_agent claude", "execute_tool Bash"]);
        assert_eq!(f.trace.tools[0].ended_ms, Some(40));
        assert!(
            sent.fresh(spans(&f.trace, &SpanOptions::default()))
                .is_empty()
        );
        assert_eq!(sent.len(), 3);
        // The session grew: only the root (its end moved) and the new call leave.
        f.json(
            60,
            &json!({"type": "tool_use", "id": "c", "name": "Grep", "input": {}}),
        );
        f.json(
            70,
            &json!({"type": "tool_result", "tool_use_id": "c", "is_error": false}),
        );
        f.trace.ended_ms = Some(80);
        let third = sent.fresh(spans(&f.trace, &SpanOptions::default()));
        let names: Vec<&str> = third.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, ["invoke_agent claude", "execute_tool Grep"]);
    }
}
