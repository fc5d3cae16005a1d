//! Every `gen_ai.*` name agentshape emits is one the conventions define,
//! spelled as they spell it (semconv's Note \[Which conventions\]): the list
//! below is copied from `open-telemetry/semantic-conventions-genai`, the
//! attribute registry `docs/registry/attributes/gen-ai.md` (commit
//! `002c8a6ea1c8a42b14a4527db83b3cabcded610a`) and the guardrail page
//! `docs/gen-ai/gen-ai-guardrails.md` (commit
//! `f5e3733b19bdb5cb9074c2ec26da9e375d52a40a`), plus the event names and the
//! general attributes we use.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeSet;

use agentshape_otel::content::Content;
use agentshape_otel::semconv as sc;
use agentshape_otel::session::{ChatCall, Check, Message, Parent, SessionTrace, ToolCall, Usage};
use agentshape_otel::spans::{SpanOptions, spans};

/// The conventions' names (attributes and events) we may use.
const CONVENTIONS: &[&str] = &[
    // Registry attributes (gen-ai.md).
    "gen_ai.agent.description",
    "gen_ai.agent.id",
    "gen_ai.agent.name",
    "gen_ai.agent.version",
    "gen_ai.conversation.id",
    "gen_ai.data_source.id",
    "gen_ai.embeddings.dimension.count",
    "gen_ai.evaluation.explanation",
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.score.value",
    "gen_ai.input.messages",
    "gen_ai.operation.name",
    "gen_ai.output.messages",
    "gen_ai.output.type",
    "gen_ai.prompt.name",
    "gen_ai.provider.name",
    "gen_ai.request.choice.count",
    "gen_ai.request.max_tokens",
    "gen_ai.request.model",
    "gen_ai.request.seed",
    "gen_ai.request.stream",
    "gen_ai.request.temperature",
    "gen_ai.request.top_p",
    "gen_ai.response.finish_reasons",
    "gen_ai.response.id",
    "gen_ai.response.model",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.result",
    "gen_ai.tool.definitions",
    "gen_ai.tool.description",
    "gen_ai.tool.name",
    "gen_ai.tool.type",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.workflow.name",
    // Guardrail attributes (gen-ai-guardrails.md).
    "gen_ai.guardrail.component.name",
    "gen_ai.guardrail.policy.id",
    "gen_ai.guardrail.policy.version",
    "gen_ai.guardrail.policy.rule.id",
    "gen_ai.guardrail.result.type",
    "gen_ai.guardrail.result.value",
    "gen_ai.guardrail.result.reason",
    "gen_ai.guardrail.source",
    "gen_ai.guardrail.risk.category",
    "gen_ai.guardrail.risk.score",
    // Events.
    "gen_ai.guardrail.result",
    "gen_ai.evaluation.result",
    // General attributes.
    "error.type",
    "http.response.status_code",
];

/// A session that makes every kind of span and event, contents on.
fn everything() -> Vec<opentelemetry_sdk::trace::SpanData> {
    let mut s = SessionTrace::new("names-1", "claude-code", 0);
    s.ended_ms = Some(100);
    s.model = Some("claude-sonnet-4-5".into());
    s.agent_version = Some("2.1.231".into());
    s.status = "error".into();
    s.error_category = Some("rate_limit".into());
    s.usage = Usage {
        input: 1,
        output: 2,
        cache_read: 3,
        cache_write: 4,
        reasoning: 1,
    };
    s.parent = Some(Parent {
        session_id: "p".into(),
        trace_session: "p".into(),
        tool_use_id: None,
    });
    let mut t = ToolCall::new(Some("t1"), "Bash", 10);
    t.ended_ms = Some(20);
    t.is_error = true;
    t.arguments = Some("{}".into());
    t.result = Some("ok".into());
    s.tools.push(t);
    s.chats.push(ChatCall {
        attempt: 1,
        key: Some("msg_1:req_1".into()),
        model: "claude-sonnet-4-5".into(),
        response_model: Some("claude-sonnet-4-5".into()),
        response_id: Some("msg_1".into()),
        started_ms: 11,
        ended_ms: 12,
        usage: s.usage,
        http_status: Some(429),
        error_category: Some("rate_limit".into()),
        input: Some("q".into()),
        output: Some("a".into()),
        sidechain: true,
        ..ChatCall::default()
    });
    for blocking in [false, true] {
        s.checks.push(Check {
            key: format!("k{blocking}"),
            name: "claude-ops".into(),
            started_ms: 90,
            ended_ms: 90,
            verdict: "blocked".into(),
            failing_paths: vec!["/a".into()],
            method: Some("fenced".into()),
            hook_event: Some("Stop".into()),
            agent_id: Some("a1".into()),
            blocks: Some(1),
            reason: Some("fix /a".into()),
            blocking,
        });
    }
    for role in ["user", "assistant"] {
        s.messages.push(Message {
            role: role.into(),
            text: "hi".into(),
            at_ms: 1,
        });
    }
    let opts = SpanOptions {
        content: Content {
            enabled: true,
            masker: None,
            max_chars: 0,
        },
        skip_open_tools: false,
        prices: None,
    };
    spans(&s, &opts)
}

#[test]
fn every_gen_ai_name_we_emit_is_the_conventions_own() {
    let known: BTreeSet<&str> = CONVENTIONS.iter().copied().collect();
    for name in sc::EMITTED {
        assert!(known.contains(name), "`{name}` is not in the conventions");
    }
    let mut used = BTreeSet::new();
    for span in everything() {
        for kv in &span.attributes {
            used.insert(kv.key.as_str().to_owned());
        }
        for e in span.events.iter() {
            used.insert(e.name.to_string());
            for kv in &e.attributes {
                used.insert(kv.key.as_str().to_owned());
            }
        }
    }
    for name in &used {
        if name.starts_with("agentshape.") {
            continue;
        }
        assert!(
            known.contains(name.as_str()),
            "`{name}` is emitted but is no name of the conventions"
        );
    }
    // The deprecated shapes are gone.
    for gone in [
        "gen_ai.guardrail.name",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.system",
    ] {
        assert!(!used.contains(gone), "`{gone}` is still emitted");
    }
    // And the ones this issue is about are there.
    for want in [
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.response.id",
        "gen_ai.agent.version",
        "gen_ai.guardrail.result",
        "gen_ai.evaluation.result",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
    ] {
        assert!(used.contains(want), "`{want}` is not emitted: {used:?}");
    }
}

#[test]
fn every_invoke_agent_span_names_its_provider() {
    for (agent, provider) in [
        ("claude-code", "anthropic"),
        ("claude", "anthropic"),
        ("codex", "openai"),
        ("gemini-cli", "gcp.gemini"),
    ] {
        let mut s = SessionTrace::new("p-1", agent, 0);
        s.ended_ms = Some(1);
        let root = &spans(&s, &SpanOptions::default())[0];
        let got = root
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == sc::PROVIDER)
            .map(|kv| kv.value.to_string());
        assert_eq!(got.as_deref(), Some(provider), "{agent}");
    }
}
