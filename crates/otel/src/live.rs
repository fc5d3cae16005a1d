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
use agentshape_core::summary::TokenCounts;
use agentshape_core::usage::calls::{Calls, Report};
use agentshape_store::time;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::SpanData;
use serde_json::Value;

use crate::session::{ChatCall, Message, SessionTrace, ToolCall, Usage};

/// One usage report of the agent's, as the feed or the decoder gives it
/// (core's fold of reports into calls takes the same).
pub type UsageReport<'a> = Report<'a>;

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
    /// The current native line is a sub-agent's inline line.
    line_side: bool,
    /// The model calls (core's fold: the counting rules of the usage
    /// reports), by the time they were seen; `chat_of[i]` is call `i`'s
    /// index in `trace.chats`.
    calls: Calls<i64>,
    chat_of: Vec<usize>,
    /// What the events say the agent is (a replayed transcript).
    hint: Option<&'static str>,
    /// `Task` calls by tool-use id, and sub-agents seen starting, for
    /// [`Folder::task_of`].
    subagents: HashMap<String, String>,
    /// The first line uuid of each inline sidechain, with the `Task` call
    /// open when it began.
    sidechain_starts: HashMap<String, String>,
    in_sidechain: bool,
}

impl Folder {
    /// A folder for `trace`; `keep_content` keeps texts, tool inputs and results.
    pub fn new(trace: SessionTrace, keep_content: bool) -> Folder {
        Folder {
            trace,
            open: HashMap::new(),
            keep_content,
            line_ms: None,
            line_side: false,
            calls: Calls::default(),
            chat_of: Vec::new(),
            hint: None,
            subagents: HashMap::new(),
            sidechain_starts: HashMap::new(),
            in_sidechain: false,
        }
    }

    /// What the events say the agent was (`claude-code`, `codex`), for a
    /// replayed transcript stored as `replay`: a Codex rollout reports
    /// running totals, a Claude Code transcript request ids.
    pub fn agent_hint(&self) -> Option<&'static str> {
        self.hint
    }

    /// The `Task` call that started sub-agent `agent_id` (its
    /// `agent-<id>` session), when the events said: a Claude Code 2.1.x
    /// progress line, or (1.0.x inline sidechains, whose id is their first
    /// line's uuid) the `Task` call open when that line came.
    pub fn task_of(&self, agent_id: &str) -> Option<&str> {
        let id = agent_id.strip_prefix("agent-").unwrap_or(agent_id);
        self.subagents
            .get(id)
            .or_else(|| self.sidechain_starts.get(id))
            .map(String::as_str)
    }

    /// The `Task` call still waiting for its result, the latest first.
    fn open_task(&self) -> Option<String> {
        self.trace
            .tools
            .iter()
            .rev()
            .find(|t| t.ended_ms.is_none() && matches!(t.name.as_str(), "Task" | "Agent"))
            .and_then(|t| t.id.clone())
    }

    /// An inline line of a sub-agent (1.0.x) began: remember the `Task`
    /// call open at its first line.
    fn side_line(&mut self, sidechain: bool, uuid: Option<&str>) {
        if sidechain && !self.in_sidechain {
            if let (Some(uuid), Some(task)) = (uuid, self.open_task()) {
                self.sidechain_starts.insert(uuid.to_owned(), task);
            }
        }
        self.in_sidechain = sidechain;
    }

    /// Take in one usage report seen at `at` (Note \[Model-call spans\]
    /// in `spans`): a Claude message keeps one call, its last usage; a
    /// Codex total's growth is one call; anything else is one call.
    pub fn usage(&mut self, at: i64, u: &UsageReport<'_>) {
        let Some(i) = self.calls.push(u, at) else {
            return;
        };
        if self.calls.running() {
            self.hint = Some("codex");
        } else if u.request_id.is_some() && self.hint.is_none() {
            self.hint = Some("claude-code");
        }
        // Core's Note [Usage vocabulary]: Codex and Gemini count cached
        // tokens inside input, Claude does not.
        let inside =
            self.calls.running() || crate::session::input_includes_cache(&self.trace.agent);
        let call = &self.calls.calls()[i];
        let tokens = call.tokens(inside);
        let usage = Usage::from_tokens(&tokens);
        if let Some(&chat) = self.chat_of.get(i) {
            let c = &mut self.trace.chats[chat];
            c.usage = usage;
            c.tokens = tokens;
            c.ended_ms = call.last.max(c.started_ms);
            return;
        }
        let model = call
            .model
            .clone()
            .or_else(|| self.trace.model.clone())
            .unwrap_or_default();
        self.chat_of.push(self.trace.chats.len());
        self.trace.chats.push(ChatCall {
            key: Some(call.key.clone()),
            response_model: call.model.clone(),
            response_id: call.message_id.clone(),
            model,
            started_ms: call.first,
            ended_ms: call.last,
            usage,
            tokens,
            sidechain: call.sidechain,
            ..ChatCall::default()
        });
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
                self.line_side = info.sidechain;
                self.side_line(info.sidechain, info.uuid.as_deref());
                if self.trace.agent_version.is_none() {
                    self.trace.agent_version.clone_from(&info.version);
                }
            }
            Event::Usage {
                message_id,
                request_id,
                model,
                tokens,
                cumulative,
            } => {
                let side = self.line_side;
                self.usage(
                    at,
                    &UsageReport {
                        message_id: message_id.as_deref(),
                        request_id: request_id.as_deref(),
                        model: model.as_deref(),
                        tokens,
                        cumulative: *cumulative,
                        sidechain: side,
                    },
                );
            }
            Event::SubAgent {
                agent_id,
                tool_use_id: Some(tool),
            } => {
                self.subagents.insert(agent_id.clone(), tool.clone());
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

    /// Take in one stored feed row's body (`{"kind": "event", "event":
    /// {…}}`, and for a native line its `sidechain` and `uuid`), stored at
    /// `at_ms`.
    pub fn row(&mut self, at_ms: i64, body: &Value) {
        let Some(e) = body.get("event") else { return };
        let sidechain = body.get("sidechain").and_then(Value::as_bool) == Some(true);
        self.side_line(sidechain, body.get("uuid").and_then(Value::as_str));
        if e.get("type").and_then(Value::as_str) == Some("usage") {
            let Ok(tokens) = serde_json::from_value::<TokenCounts>(
                e.get("tokens").cloned().unwrap_or(Value::Null),
            ) else {
                return;
            };
            let s = |k: &str| e.get(k).and_then(Value::as_str);
            self.usage(
                at_ms,
                &UsageReport {
                    message_id: s("message_id"),
                    request_id: s("request_id"),
                    model: s("model").or_else(|| body.get("model").and_then(Value::as_str)),
                    tokens: &tokens,
                    cumulative: e.get("cumulative").and_then(Value::as_bool) == Some(true),
                    sidechain,
                },
            );
            return;
        }
        self.json(at_ms, e);
    }

    /// Take in one stored feed body's `event` (the JSON of an [`Event`]),
    /// stored at `at_ms`.
    pub fn json(&mut self, at_ms: i64, e: &Value) {
        let s = |k: &str| e.get(k).and_then(Value::as_str);
        match s("type") {
            Some("sub_agent") => {
                if let (Some(agent), Some(tool)) = (s("agent_id"), s("tool_use_id")) {
                    self.subagents.insert(agent.to_owned(), tool.to_owned());
                }
            }
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
