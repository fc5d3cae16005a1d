//! A session as spans: the pure mapping from [`SessionTrace`] to the SDK's
//! [`SpanData`], which the exporter sends as it is.
//!
//! The tree (Note \[Span tree\]):
//!
//! ```text
//! invoke_agent {agent}            the session: conversation id, provider, model, tokens,
//! │                               error; its final verdict as a gen_ai.evaluation.result event
//! ├── chat {model}                one per model call (ask's attempts; a native session's
//! │                               messages), with that call's tokens, at its time
//! ├── execute_tool {tool}         one per tool call, tool_use → tool_result
//! │   └── invoke_agent {agent}    a sub-agent's session, under the Task call that started it
//! └── apply_guardrail agentshape  one per verdict that could block (a hook call, an ask
//!                                 attempt), event gen_ai.guardrail.result
//! ```
//!
//! Note \[Span tree\]: every span of a session is a direct child of the
//! session's root: model calls, tools and validations are what the agent
//! (or `ask`) did in the session, one after another, and a flat tree reads
//! in time order in every backend's waterfall. Times are those the session
//! recorded (a tool span runs from its `tool_use` to its `tool_result`, a
//! model call from its first line to its last), so a trace exported a week
//! later looks the same as one exported live. A tool call whose result
//! never came ends with the session; a running session has no root span
//! yet (it is sent when the session ends) and its open tool calls wait.
//!
//! Note \[Model-call spans\]: backends (Phoenix, Langfuse) add up tokens and
//! cost from `chat` spans, not from the agent's span, so each model call a
//! session recorded is one `chat` span carrying that call's usage: a
//! Claude message (its id repeated over several lines with growing usage:
//! one span, the last usage), each growth of a Codex running total, each
//! Gemini message. `gen_ai.usage.input_tokens` counts every prompt token,
//! cache reads and writes included, as the conventions define it. The root
//! keeps the session's sums too, for backends that read the agent span.
//!
//! Note \[Sub-agent traces\]: a sub-agent's session (a stored session with a
//! parent) belongs in its parent's trace, under the parent's `execute_tool
//! Task` span that started it: its trace id is the parent's (the top
//! ancestor's) and its root's parent is that tool span, whose id is derived
//! (Note \[Derived ids\] in `ids`), so the link holds whichever is exported
//! first. While the `Task` call is not known (the parent not imported yet,
//! or its file never names the call), the session keeps a trace of its own
//! and its root carries a span link to the parent's root.
//!
//! Note \[Repeated tool ids\]: a transcript may repeat a tool call id (a
//! resumed session's copy, an agent reusing ids): the n-th call with one
//! id (n ≥ 2) is keyed `{id} #{n}`, so every span id stays unique while
//! the first call keeps the id a sub-agent's parent link names.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use serde_json::json;

use crate::content::Content;
use crate::ids;
use crate::semconv as sc;
use crate::session::{ChatCall, Check, SessionTrace, ToolCall, Usage};

/// The most prompts an `invoke_agent` span's `gen_ai.input.messages` holds
/// (the latest): each is cut to the content limit, and a long session's
/// every prompt would make one attribute backends refuse.
pub const MAX_PROMPTS: usize = 16;

/// How spans are made.
#[derive(Debug, Clone, Default)]
pub struct SpanOptions {
    /// Contents and masking (Note \[Contents are opt-in\] in `content`).
    pub content: Content,
    /// Leave out tool calls without a result even when the session has
    /// ended: a session that is still growing (`watch`) may get the result
    /// later, and the call's span then leaves once, with its real end
    /// (live's Note \[Sent once\]).
    pub skip_open_tools: bool,
    /// The prices model calls are priced at (`agentshape.cost_usd` on each
    /// `chat` span, their sum on the session's); `None`: no cost is added.
    pub prices: Option<std::sync::Arc<agentshape_core::pricing::PriceTable>>,
}

/// Milliseconds since the epoch as a [`SystemTime`] (negative: the epoch).
pub fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The instrumentation scope of every span we make.
pub fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("agentshape")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(sc::SCHEMA_URL)
        .build()
}

fn int(v: u64) -> Value {
    Value::I64(i64::try_from(v).unwrap_or(i64::MAX))
}

fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

/// Texts as the conventions' message list (`gen_ai.input.messages`,
/// `gen_ai.output.messages`: `[{"role", "parts": [{"type": "text",
/// "content"}]}]`, output messages with their `finish_reason`), as JSON text.
pub fn messages_json(role: &str, texts: &[String], output: bool) -> String {
    let list: Vec<serde_json::Value> = texts
        .iter()
        .map(|t| {
            let mut m = json!({"role": role, "parts": [{"type": "text", "content": t}]});
            if output {
                m["finish_reason"] = "stop".into();
            }
            m
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The span key of each tool call (Note \[Repeated tool ids\]).
pub fn tool_keys(tools: &[ToolCall]) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| match &t.id {
            Some(id) => {
                let n = seen.entry(id.as_str()).or_insert(0);
                *n += 1;
                if *n == 1 {
                    id.clone()
                } else {
                    format!("{id} #{n}")
                }
            }
            None => format!("#{i}"),
        })
        .collect()
}

/// A verdict's low-cardinality reason (never the model's text).
fn reason(c: &Check) -> String {
    match (c.verdict.as_str(), c.failing_paths.len()) {
        ("none", _) => "no structured value found".to_owned(),
        (_, 0) => "no violations".to_owned(),
        (_, 1) => "1 schema violation".to_owned(),
        (_, n) => format!("{n} schema violations"),
    }
}

struct Builder<'a> {
    trace: TraceId,
    root: SpanId,
    /// The root's parent: a sub-agent's `Task` span, else none.
    root_parent: SpanId,
    /// A sub-agent whose `Task` call is not known: a link to its parent.
    root_link: Option<SpanContext>,
    session: &'a SessionTrace,
    opts: &'a SpanOptions,
    scope: InstrumentationScope,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn span(
        &self,
        id: SpanId,
        parent: SpanId,
        kind: SpanKind,
        name: String,
        (start, end): (i64, i64),
        attributes: Vec<KeyValue>,
        events: Vec<Event>,
        status: Status,
    ) -> SpanData {
        let mut span_events = SpanEvents::default();
        span_events.events = events;
        SpanData {
            span_context: SpanContext::new(
                self.trace,
                id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: false,
            span_kind: kind,
            name: Cow::Owned(name),
            start_time: at(start),
            end_time: at(end.max(start)),
            attributes,
            dropped_attributes_count: 0,
            events: span_events,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }

    fn provider(&self) -> Option<String> {
        self.session
            .provider
            .clone()
            .or_else(|| sc::provider_of(&self.session.agent).map(str::to_owned))
            .or_else(|| {
                self.session
                    .model
                    .as_deref()
                    .and_then(sc::provider_of_model)
                    .map(str::to_owned)
            })
    }

    fn error_status(&self, error: Option<&str>, fallback: &str) -> Status {
        let text = error.map_or_else(|| fallback.to_owned(), |e| self.opts.content.masked(e));
        Status::error(text)
    }

    fn usage(attrs: &mut Vec<KeyValue>, u: &Usage) {
        attrs.push(kv(sc::INPUT_TOKENS, int(u.prompt_total())));
        attrs.push(kv(sc::OUTPUT_TOKENS, int(u.output)));
        if u.cache_read > 0 {
            attrs.push(kv(sc::CACHE_READ_TOKENS, int(u.cache_read)));
        }
        if u.cache_write > 0 {
            attrs.push(kv(sc::CACHE_CREATION_TOKENS, int(u.cache_write)));
        }
        if u.reasoning > 0 {
            attrs.push(kv(sc::REASONING_TOKENS, int(u.reasoning)));
        }
    }

    /// agentshape's own detail of a verdict, on its guardrail or evaluation event.
    fn verdict_detail(&self, c: &Check, out: &mut Vec<KeyValue>) {
        out.push(kv(sc::VERDICT, c.verdict.clone()));
        out.push(kv(sc::ERROR_COUNT, int(c.failing_paths.len() as u64)));
        out.push(kv(
            sc::FAILING_PATHS,
            Value::Array(Array::String(
                c.failing_paths
                    .iter()
                    .map(|p| StringValue::from(p.clone()))
                    .collect(),
            )),
        ));
        if let Some(m) = &c.method {
            out.push(kv(sc::EXTRACTION_METHOD, m.clone()));
        }
        if let Some(e) = &c.hook_event {
            out.push(kv(sc::HOOK_EVENT, e.clone()));
        }
        if let Some(b) = c.blocks {
            out.push(kv(sc::HOOK_BLOCKS, i64::from(b)));
        }
        if let Some(r) = c.reason.as_deref().and_then(|r| self.opts.content.text(r)) {
            out.push(kv(sc::HOOK_REASON, r));
        }
    }

    /// A verdict that blocks nothing, as an evaluation event (semconv's
    /// Note \[Guardrail or evaluation\]).
    fn evaluation(&self, c: &Check) -> Event {
        let mut attrs = vec![
            kv(
                sc::EVALUATION_NAME,
                if c.name.is_empty() {
                    sc::COMPONENT.to_owned()
                } else {
                    c.name.clone()
                },
            ),
            kv(sc::EVALUATION_LABEL, c.verdict.clone()),
            kv(sc::EVALUATION_EXPLANATION, reason(c)),
        ];
        self.verdict_detail(c, &mut attrs);
        Event::new(sc::EVALUATION_RESULT, at(c.ended_ms), attrs, 0)
    }

    fn root(&self, end: i64) -> SpanData {
        let s = self.session;
        let mut attrs = vec![
            kv(sc::OPERATION, "invoke_agent"),
            kv(sc::AGENT_NAME, s.agent.clone()),
            kv(sc::CONVERSATION_ID, s.session_id.clone()),
            kv(sc::STATUS, s.status.clone()),
        ];
        if let Some(p) = self.provider() {
            attrs.push(kv(sc::PROVIDER, p));
        }
        if let Some(v) = &s.agent_version {
            attrs.push(kv(sc::AGENT_VERSION, v.clone()));
        }
        if let Some(m) = &s.model {
            attrs.push(kv(sc::REQUEST_MODEL, m.clone()));
        }
        Self::usage(&mut attrs, &s.usage);
        if let Some(p) = &s.profile {
            attrs.push(kv(sc::PROFILE, p.clone()));
        }
        if let Some(t) = s.tier {
            attrs.push(kv(sc::TIER, i64::from(t)));
        }
        match self.calls_cost() {
            Some((cost, unpriced)) => {
                attrs.push(kv(sc::COST_USD, cost));
                if !unpriced.is_empty() {
                    attrs.push(kv(sc::COST_PARTIAL, true));
                    attrs.push(KeyValue::new(
                        sc::UNPRICED_MODELS,
                        Value::Array(Array::String(
                            unpriced.into_iter().map(StringValue::from).collect(),
                        )),
                    ));
                }
            }
            None => {
                if let Some(c) = s.cost_usd {
                    attrs.push(kv(sc::COST_USD, c));
                }
            }
        }
        // Contents (opt-in): the prompts in, the last answer out.
        let prompts: Vec<String> = s
            .messages
            .iter()
            .filter(|m| m.role == "user")
            .filter_map(|m| self.opts.content.text(&m.text))
            .collect();
        let skip = prompts.len().saturating_sub(MAX_PROMPTS);
        if !prompts.is_empty() {
            attrs.push(kv(
                sc::INPUT_MESSAGES,
                messages_json("user", &prompts[skip..], false),
            ));
        }
        if let Some(answer) = s
            .messages
            .iter()
            .rev()
            .find(|m| m.role != "user")
            .and_then(|m| self.opts.content.text(&m.text))
        {
            attrs.push(kv(
                sc::OUTPUT_MESSAGES,
                messages_json("assistant", &[answer], true),
            ));
        }
        let status = if s.failed() {
            let kind = s.error_category.clone().unwrap_or_else(|| s.status.clone());
            attrs.push(kv(sc::ERROR_TYPE, kind.clone()));
            self.error_status(s.error.as_deref(), &kind)
        } else {
            Status::Unset
        };
        let events = s
            .checks
            .iter()
            .filter(|c| !c.blocking)
            .map(|c| self.evaluation(c))
            .collect();
        let mut span = self.span(
            self.root,
            self.root_parent,
            SpanKind::Internal,
            format!("invoke_agent {}", s.agent),
            (s.started_ms, end),
            attrs,
            events,
            status,
        );
        if let Some(ctx) = &self.root_link {
            span.links.links.push(Link::with_context(ctx.clone()));
        }
        span
    }

    fn tool(&self, key: &str, t: &ToolCall, end: i64) -> SpanData {
        let mut attrs = vec![
            kv(sc::OPERATION, "execute_tool"),
            kv(sc::TOOL_NAME, t.name.clone()),
            kv(sc::TOOL_TYPE, "function"),
            kv(sc::CONVERSATION_ID, self.session.session_id.clone()),
        ];
        if let Some(id) = &t.id {
            attrs.push(kv(sc::TOOL_CALL_ID, id.clone()));
        }
        if let Some(a) = t
            .arguments
            .as_deref()
            .and_then(|a| self.opts.content.text(a))
        {
            attrs.push(kv(sc::TOOL_ARGUMENTS, a));
        }
        if let Some(r) = t.result.as_deref().and_then(|r| self.opts.content.text(r)) {
            attrs.push(kv(sc::TOOL_RESULT, r));
        }
        let status = if t.is_error {
            attrs.push(kv(sc::ERROR_TYPE, "tool_error"));
            Status::error("the tool's result is an error")
        } else {
            Status::Unset
        };
        self.span(
            ids::span_id(&self.session.session_id, "tool", key),
            self.root,
            SpanKind::Internal,
            format!("execute_tool {}", t.name),
            (t.started_ms, t.ended_ms.unwrap_or(end)),
            attrs,
            Vec::new(),
            status,
        )
    }

    /// The session's cost from its model calls at the prices, and the
    /// models no price names (Note \[Partial cost\] in core's usage
    /// reports); `None` without prices or calls of known tokens.
    fn calls_cost(&self) -> Option<(f64, Vec<String>)> {
        let prices = self.opts.prices.as_ref()?;
        let mut cost = None;
        let mut unpriced = std::collections::BTreeSet::new();
        for c in self.session.chats.iter().filter(|c| !c.tokens.is_zero()) {
            let model = c.response_model.as_deref().unwrap_or(&c.model);
            let sum = cost.get_or_insert(0.0);
            if let Some(x) = prices.cost_of(model, &c.tokens) {
                *sum += x;
            } else {
                unpriced.insert(model.to_owned());
            }
        }
        cost.map(|c| (c, unpriced.into_iter().collect()))
    }

    fn chat(&self, c: &ChatCall) -> SpanData {
        let mut attrs = vec![
            kv(sc::OPERATION, "chat"),
            kv(sc::REQUEST_MODEL, c.model.clone()),
            kv(sc::CONVERSATION_ID, self.session.session_id.clone()),
        ];
        if c.attempt > 0 {
            attrs.push(kv(sc::ATTEMPT, i64::from(c.attempt)));
            attrs.push(kv(sc::OUTPUT_TYPE, "json"));
        }
        if let Some(p) = self.provider() {
            attrs.push(kv(sc::PROVIDER, p));
        }
        if let Some(m) = &c.response_model {
            attrs.push(kv(sc::RESPONSE_MODEL, m.clone()));
        }
        if let Some(id) = &c.response_id {
            attrs.push(kv(sc::RESPONSE_ID, id.clone()));
        }
        if c.sidechain {
            attrs.push(kv(sc::SIDECHAIN, true));
        }
        Self::usage(&mut attrs, &c.usage);
        if let Some(prices) = &self.opts.prices
            && !c.tokens.is_zero()
        {
            let model = c.response_model.as_deref().unwrap_or(&c.model);
            match prices.cost_of(model, &c.tokens) {
                Some(cost) => attrs.push(kv(sc::COST_USD, cost)),
                None => attrs.push(kv(sc::COST_PARTIAL, true)),
            }
        }
        if let Some(s) = c.http_status {
            attrs.push(kv(sc::HTTP_STATUS, i64::from(s)));
        }
        if let Some(i) = c.input.as_deref().and_then(|t| self.opts.content.text(t)) {
            attrs.push(kv(sc::INPUT_MESSAGES, messages_json("user", &[i], false)));
        }
        if let Some(o) = c.output.as_deref().and_then(|t| self.opts.content.text(t)) {
            attrs.push(kv(
                sc::OUTPUT_MESSAGES,
                messages_json("assistant", &[o], true),
            ));
        }
        let status = if c.error.is_some() || c.error_category.is_some() {
            let kind = c.error_category.clone().unwrap_or_else(|| "error".into());
            attrs.push(kv(sc::ERROR_TYPE, kind.clone()));
            self.error_status(c.error.as_deref(), &kind)
        } else {
            Status::Unset
        };
        let key = c.key.clone().unwrap_or_else(|| c.attempt.to_string());
        let model = if c.model.is_empty() {
            c.response_model.as_deref().unwrap_or_default()
        } else {
            c.model.as_str()
        };
        self.span(
            ids::span_id(&self.session.session_id, "chat", &key),
            self.root,
            SpanKind::Client,
            format!("chat {model}").trim_end().to_owned(),
            (c.started_ms, c.ended_ms),
            attrs,
            Vec::new(),
            status,
        )
    }

    fn check(&self, c: &Check) -> SpanData {
        let mut attrs = vec![
            kv(sc::OPERATION, sc::APPLY_GUARDRAIL),
            kv(sc::GUARDRAIL_COMPONENT, sc::COMPONENT),
            kv(sc::CONVERSATION_ID, self.session.session_id.clone()),
            kv(sc::GUARDRAIL_RESULT_TYPE, "verdict"),
            kv(sc::GUARDRAIL_RESULT_VALUE, c.verdict.clone()),
            kv(sc::GUARDRAIL_RESULT_REASON, reason(c)),
            kv(sc::GUARDRAIL_SOURCE, "output"),
        ];
        if let Some(p) = self.provider() {
            attrs.push(kv(sc::PROVIDER, p));
        }
        let mut result = vec![
            kv(sc::GUARDRAIL_COMPONENT, sc::COMPONENT),
            kv(sc::GUARDRAIL_RESULT_TYPE, "verdict"),
            kv(sc::GUARDRAIL_RESULT_VALUE, c.verdict.clone()),
            kv(sc::GUARDRAIL_RESULT_REASON, reason(c)),
            kv(sc::GUARDRAIL_SOURCE, "output"),
        ];
        if !c.name.is_empty() {
            attrs.push(kv(sc::GUARDRAIL_POLICY_ID, c.name.clone()));
            result.push(kv(sc::GUARDRAIL_POLICY_ID, c.name.clone()));
        }
        if let Some(e) = &c.hook_event {
            attrs.push(kv(sc::HOOK_EVENT, e.clone()));
        }
        if let Some(a) = &c.agent_id {
            attrs.push(kv(sc::AGENT_ID, a.clone()));
        }
        self.verdict_detail(c, &mut result);
        self.span(
            ids::span_id(&self.session.session_id, "guardrail", &c.key),
            self.root,
            SpanKind::Internal,
            format!("{} {}", sc::APPLY_GUARDRAIL, sc::COMPONENT),
            (c.started_ms, c.ended_ms),
            attrs,
            vec![Event::new(sc::GUARDRAIL_RESULT, at(c.ended_ms), result, 0)],
            Status::Unset,
        )
    }
}

/// The spans of `session` (Note \[Span tree\]): the root first (when the
/// session has ended), then its tool calls, model calls and guardrails in
/// that order. Unfinished tool calls of a running session are left out.
pub fn spans(session: &SessionTrace, opts: &SpanOptions) -> Vec<SpanData> {
    let own = ids::trace_id(&session.session_id);
    // Note [Sub-agent traces].
    let (trace, root_parent, root_link) = match &session.parent {
        Some(p) => match &p.tool_use_id {
            Some(tool) => (
                ids::trace_id(&p.trace_session),
                ids::span_id(&p.session_id, "tool", tool),
                None,
            ),
            None => (
                own,
                SpanId::INVALID,
                Some(SpanContext::new(
                    ids::trace_id(&p.trace_session),
                    ids::root_span_id(&p.session_id),
                    TraceFlags::SAMPLED,
                    false,
                    TraceState::default(),
                )),
            ),
        },
        None => (own, SpanId::INVALID, None),
    };
    let b = Builder {
        trace,
        root: ids::root_span_id(&session.session_id),
        root_parent,
        root_link,
        session,
        opts,
        scope: scope(),
    };
    let mut out =
        Vec::with_capacity(1 + session.tools.len() + session.chats.len() + session.checks.len());
    if let Some(end) = session.ended_ms {
        out.push(b.root(end));
    }
    for (t, key) in session.tools.iter().zip(tool_keys(&session.tools)) {
        match (t.ended_ms, session.ended_ms) {
            (Some(end), _) => out.push(b.tool(&key, t, end)),
            (None, Some(end)) if !opts.skip_open_tools => out.push(b.tool(&key, t, end)),
            (None, _) => {}
        }
    }
    out.extend(session.chats.iter().map(|c| b.chat(c)));
    out.extend(
        session
            .checks
            .iter()
            .filter(|c| c.blocking)
            .map(|c| b.check(c)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Message, Usage};
    use agentshape_core::secrets::{MaskKey, Masker};

    fn attr<'a>(s: &'a SpanData, key: &str) -> Option<&'a Value> {
        s.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    fn sample() -> SessionTrace {
        let mut s = SessionTrace::new("sess-1", "claude", 1_000);
        s.ended_ms = Some(9_000);
        s.model = Some("claude-sonnet-4-5".into());
        s.usage = Usage {
            input: 10,
            output: 20,
            cache_read: 100,
            cache_write: 5,
            reasoning: 0,
        };
        s.profile = Some("incident".into());
        let mut t1 = ToolCall::new(Some("toolu_1"), "Bash", 2_000);
        t1.ended_ms = Some(2_500);
        t1.arguments = Some(r#"{"command":"ls"}"#.into());
        let mut t2 = ToolCall::new(Some("toolu_2"), "Read", 3_000);
        t2.ended_ms = Some(3_100);
        t2.is_error = true;
        let t3 = ToolCall::new(None, "Grep", 4_000);
        s.tools = vec![t1, t2, t3];
        s.checks.push(Check {
            key: "verdict".into(),
            name: "incident".into(),
            started_ms: 9_000,
            ended_ms: 9_000,
            verdict: "invalid".into(),
            failing_paths: vec!["/severity".into(), String::new()],
            method: Some("fenced".into()),
            ..Check::default()
        });
        s.messages.push(Message {
            role: "user".into(),
            text: "check the disks".into(),
            at_ms: 1_000,
        });
        s
    }

    #[test]
    fn a_session_is_a_root_with_its_tools_under_it_and_its_verdict_an_evaluation() {
        let s = sample();
        let out = spans(&s, &SpanOptions::default());
        let names: Vec<&str> = out.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "invoke_agent claude",
                "execute_tool Bash",
                "execute_tool Read",
                "execute_tool Grep",
            ]
        );
        let root = &out[0];
        assert_eq!(root.parent_span_id, SpanId::INVALID);
        assert_eq!(root.span_context.trace_id(), ids::trace_id("sess-1"));
        for child in &out[1..] {
            assert_eq!(child.parent_span_id, root.span_context.span_id());
            assert_eq!(child.span_context.trace_id(), root.span_context.trace_id());
        }
        assert_eq!(
            attr(root, sc::OPERATION),
            Some(&Value::from("invoke_agent"))
        );
        assert_eq!(attr(root, sc::PROVIDER), Some(&Value::from("anthropic")));
        assert_eq!(
            attr(root, sc::CONVERSATION_ID),
            Some(&Value::from("sess-1"))
        );
        // Cache reads and writes are counted inside the input tokens.
        assert_eq!(attr(root, sc::INPUT_TOKENS), Some(&Value::I64(115)));
        assert_eq!(attr(root, sc::CACHE_READ_TOKENS), Some(&Value::I64(100)));
        assert_eq!(attr(root, sc::OUTPUT_TOKENS), Some(&Value::I64(20)));
        assert_eq!(root.status, Status::Unset);
        assert_eq!(root.start_time, at(1_000));
        assert_eq!(root.end_time, at(9_000));
        // Real times: tool_use → tool_result; an unanswered call ends with the session.
        assert_eq!((out[1].start_time, out[1].end_time), (at(2_000), at(2_500)));
        assert_eq!(out[3].end_time, at(9_000));
        assert_eq!(
            attr(&out[1], sc::TOOL_CALL_ID),
            Some(&Value::from("toolu_1"))
        );
        assert_eq!(
            out[2].status,
            Status::error("the tool's result is an error")
        );
        assert_eq!(
            attr(&out[2], sc::ERROR_TYPE),
            Some(&Value::from("tool_error"))
        );
        // No content by default: no arguments, no messages.
        assert_eq!(attr(&out[1], sc::TOOL_ARGUMENTS), None);
        assert_eq!(attr(root, sc::INPUT_MESSAGES), None);
        // The final verdict blocks nothing: an evaluation event on the root.
        assert_eq!(root.events.len(), 1);
        let ev = &root.events[0];
        assert_eq!(ev.name, sc::EVALUATION_RESULT);
        let get = |k: &str| {
            ev.attributes
                .iter()
                .find(|a| a.key.as_str() == k)
                .map(|a| a.value.clone())
        };
        assert_eq!(get(sc::EVALUATION_NAME), Some(Value::from("incident")));
        assert_eq!(get(sc::EVALUATION_LABEL), Some(Value::from("invalid")));
        assert_eq!(
            get(sc::EVALUATION_EXPLANATION),
            Some(Value::from("2 schema violations"))
        );
        assert_eq!(get(sc::VERDICT), Some(Value::from("invalid")));
        assert_eq!(get(sc::ERROR_COUNT), Some(Value::I64(2)));
        assert_eq!(get(sc::EXTRACTION_METHOD), Some(Value::from("fenced")));
        assert_eq!(
            get(sc::FAILING_PATHS),
            Some(Value::Array(Array::String(vec![
                "/severity".into(),
                "".into()
            ])))
        );
    }

    #[test]
    fn a_failed_session_has_an_error_type_and_status_with_its_error_masked() {
        let mut s = sample();
        s.status = "error".into();
        s.error_category = Some("rate_limit".into());
        s.error = Some("429 for key AKIAIOSFODNN7EXAMPLQ".into());
        let opts = SpanOptions {
            content: Content {
                enabled: false,
                masker: Some(Masker::builtin(MaskKey::from_bytes([1; 32]))),
                max_chars: 0,
            },
            skip_open_tools: false,
            prices: None,
        };
        let root = &spans(&s, &opts)[0];
        assert_eq!(attr(root, sc::ERROR_TYPE), Some(&Value::from("rate_limit")));
        match &root.status {
            Status::Error { description } => {
                assert!(
                    description.starts_with("429 for key [REDACTED:"),
                    "{description}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn contents_when_asked_and_a_running_session_has_no_root_yet() {
        let mut s = sample();
        let opts = SpanOptions {
            content: Content {
                enabled: true,
                masker: None,
                max_chars: 0,
            },
            skip_open_tools: false,
            prices: None,
        };
        let out = spans(&s, &opts);
        assert_eq!(
            attr(&out[1], sc::TOOL_ARGUMENTS),
            Some(&Value::from(r#"{"command":"ls"}"#))
        );
        assert_eq!(
            attr(&out[0], sc::INPUT_MESSAGES),
            Some(&Value::from(
                r#"[{"role":"user","parts":[{"type":"text","content":"check the disks"}]}]"#
            ))
        );
        s.ended_ms = None;
        s.checks[0].blocking = true;
        let out = spans(&s, &opts);
        let names: Vec<&str> = out.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "execute_tool Bash",
                "execute_tool Read",
                "apply_guardrail agentshape"
            ]
        );
        let g = &out[2];
        assert_eq!(g.events[0].name, sc::GUARDRAIL_RESULT);
        assert_eq!(
            attr(g, sc::GUARDRAIL_POLICY_ID),
            Some(&Value::from("incident"))
        );
        assert_eq!(
            attr(g, sc::GUARDRAIL_RESULT_VALUE),
            Some(&Value::from("invalid"))
        );
    }

    #[test]
    fn ask_attempts_are_chat_spans_with_their_own_ids() {
        let mut s = SessionTrace::new("ask-1", "ask", 0);
        s.ended_ms = Some(50);
        s.provider = Some("openai".into());
        for n in 1..=2 {
            s.chats.push(ChatCall {
                attempt: n,
                model: "gpt-x".into(),
                started_ms: i64::from(n) * 10,
                ended_ms: i64::from(n) * 10 + 5,
                ..ChatCall::default()
            });
        }
        s.chats[0].error_category = Some("rate_limit".into());
        let out = spans(&s, &SpanOptions::default());
        assert_eq!(out[1].name, "chat gpt-x");
        assert_eq!(out[1].span_kind, SpanKind::Client);
        assert_ne!(out[1].span_context.span_id(), out[2].span_context.span_id());
        assert_eq!(
            attr(&out[1], sc::ERROR_TYPE),
            Some(&Value::from("rate_limit"))
        );
        assert_eq!(attr(&out[2], sc::PROVIDER), Some(&Value::from("openai")));
    }

    #[test]
    fn native_calls_are_chat_spans_and_repeated_tool_ids_keep_unique_span_ids() {
        let mut s = SessionTrace::new("n-1", "claude-code", 0);
        s.ended_ms = Some(100);
        s.agent_version = Some("2.1.231".into());
        for (i, id) in ["toolu_a", "toolu_a", "toolu_b"].iter().enumerate() {
            let mut t = ToolCall::new(Some(id), "Bash", i64::try_from(i).unwrap() * 10);
            t.ended_ms = Some(50);
            s.tools.push(t);
        }
        s.chats.push(ChatCall {
            key: Some("msg_1:req_1".into()),
            model: "claude-opus-4-1".into(),
            response_model: Some("claude-opus-4-1".into()),
            response_id: Some("msg_1".into()),
            started_ms: 5,
            ended_ms: 7,
            usage: Usage {
                input: 3,
                output: 9,
                cache_read: 100,
                cache_write: 20,
                reasoning: 0,
            },
            ..ChatCall::default()
        });
        let out = spans(&s, &SpanOptions::default());
        let mut ids: Vec<SpanId> = out.iter().map(|s| s.span_context.span_id()).collect();
        ids.sort_by_key(|i| i.to_bytes());
        ids.dedup();
        assert_eq!(ids.len(), out.len());
        // The first call with an id keeps the id's own span id (a sub-agent's parent link).
        assert_eq!(
            out[1].span_context.span_id(),
            ids::span_id("n-1", "tool", "toolu_a")
        );
        assert_eq!(
            attr(&out[0], sc::AGENT_VERSION),
            Some(&Value::from("2.1.231"))
        );
        let chat = out
            .iter()
            .find(|s| s.name == "chat claude-opus-4-1")
            .unwrap();
        assert_eq!(chat.parent_span_id, out[0].span_context.span_id());
        assert_eq!(attr(chat, sc::INPUT_TOKENS), Some(&Value::I64(123)));
        assert_eq!(attr(chat, sc::OUTPUT_TOKENS), Some(&Value::I64(9)));
        assert_eq!(attr(chat, sc::CACHE_READ_TOKENS), Some(&Value::I64(100)));
        assert_eq!(attr(chat, sc::CACHE_CREATION_TOKENS), Some(&Value::I64(20)));
        assert_eq!(attr(chat, sc::RESPONSE_ID), Some(&Value::from("msg_1")));
        assert_eq!(attr(chat, sc::PROVIDER), Some(&Value::from("anthropic")));
        assert_eq!(attr(chat, sc::ATTEMPT), None);
    }

    #[test]
    fn a_sub_agent_hangs_under_its_task_span_or_links_to_its_parent() {
        let mut s = SessionTrace::new("agent-x", "claude-code", 0);
        s.ended_ms = Some(10);
        s.parent = Some(crate::session::Parent {
            session_id: "p".into(),
            trace_session: "p".into(),
            tool_use_id: Some("toolu_task".into()),
        });
        let root = &spans(&s, &SpanOptions::default())[0];
        assert_eq!(root.span_context.trace_id(), ids::trace_id("p"));
        assert_eq!(root.parent_span_id, ids::span_id("p", "tool", "toolu_task"));
        assert!(root.links.is_empty());
        s.parent.as_mut().unwrap().tool_use_id = None;
        let root = &spans(&s, &SpanOptions::default())[0];
        assert_eq!(root.span_context.trace_id(), ids::trace_id("agent-x"));
        assert_eq!(root.parent_span_id, SpanId::INVALID);
        assert_eq!(root.links.len(), 1);
        assert_eq!(root.links[0].span_context.trace_id(), ids::trace_id("p"));
        assert_eq!(root.links[0].span_context.span_id(), ids::root_span_id("p"));
    }
}
