//! The names we emit, in one place.
//!
//! Note \[Which conventions\]: the generative-AI semantic conventions are in
//! *Development* status, and since semantic conventions v1.41.0 they live
//! in their own repository, `open-telemetry/semantic-conventions-genai`.
//! We follow its attribute registry (`docs/registry/attributes/gen-ai.md`
//! at commit `002c8a6ea1c8a42b14a4527db83b3cabcded610a`) and its guardrail
//! page (`docs/gen-ai/gen-ai-guardrails.md` at commit
//! `f5e3733b19bdb5cb9074c2ec26da9e375d52a40a`), which is what instrumentations
//! emit when a user opts in with
//! `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`; we have no
//! older shape to stay compatible with, so we emit only this one. Every
//! `gen_ai.*` name below is one of theirs, spelled as they spell it (a test
//! holds the list, `tests/semconv_names.rs`). Where the conventions name
//! nothing for what agentshape knows (its verdict word, the extraction
//! method, the failing JSON paths, the hook's block count) the attributes
//! sit in our own `agentshape.` namespace rather than invent `gen_ai.`
//! names a later release might define differently.
//!
//! Note \[Guardrail or evaluation\]: the conventions give a verdict two
//! shapes. A guardrail (`apply_guardrail` span, `gen_ai.guardrail.result`
//! event) is a check that can stop or change what happens; an evaluation
//! (`gen_ai.evaluation.result` event) scores something already done. So:
//! - a hook call (`hook stop`, `hook subagent-stop`) and each validated
//!   answer of `ask` are guardrails: the hook's `blocked` sends the agent
//!   back to work, `ask`'s `invalid` makes it ask again. A hook call keeps
//!   its guardrail shape when `export otlp` sends it again from the store:
//!   it did block (or could have) when it ran, and the same span id must
//!   mean the same span (Note \[Derived ids\] in `ids`);
//! - a session's final verdict (`run`, `ops`, an import, a replay, `export
//!   otlp` of a stored session) blocks nothing: the session is over. It is
//!   an evaluation event on the session's `invoke_agent` span (the
//!   operation evaluated), named after the profile or schema, with the
//!   verdict word as its label.
//!
//! Our guardrail is in-process, not a remote service: its span is
//! `INTERNAL`, named `apply_guardrail agentshape` (the component), with the
//! profile or schema as `gen_ai.guardrail.policy.id`. The result's
//! `type` is `verdict` and its `value` agentshape's own word (`valid`,
//! `invalid`, `none`, `blocked`, `gave_up`, `allowed`): the conventions ask
//! for the component's native result, not a translated allow/deny. The
//! `reason` is low-cardinality (how many violations, or that nothing
//! structured was found), never the model's text: the block reason given
//! to the model is content (`agentshape.hook.reason`, opt-in).

/// The last semantic-conventions release that held the generative-AI
/// conventions (Note \[Which conventions\]): the schema URL's version.
pub const SEMCONV_VERSION: &str = "1.41.0";

/// The instrumentation scope's schema URL.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// `gen_ai.operation.name`.
pub const OPERATION: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`.
pub const PROVIDER: &str = "gen_ai.provider.name";
/// `gen_ai.agent.name`.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.agent.id`.
pub const AGENT_ID: &str = "gen_ai.agent.id";
/// `gen_ai.conversation.id`: the session id.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.request.model`.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.usage.input_tokens`: every prompt token, cached ones included.
pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`.
pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens` (counted inside the input tokens).
pub const CACHE_READ_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.usage.cache_creation.input_tokens` (counted inside the input tokens).
pub const CACHE_CREATION_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
/// `gen_ai.tool.name`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`.
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `gen_ai.tool.call.arguments` (opt-in content).
pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (opt-in content).
pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
/// `gen_ai.input.messages` (opt-in content).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages` (opt-in content).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.output.type`.
pub const OUTPUT_TYPE: &str = "gen_ai.output.type";
/// `error.type`.
pub const ERROR_TYPE: &str = "error.type";
/// `http.response.status_code`.
pub const HTTP_STATUS: &str = "http.response.status_code";

/// `gen_ai.agent.version`: the agent's own version (Claude Code's).
pub const AGENT_VERSION: &str = "gen_ai.agent.version";
/// `gen_ai.response.id`: the provider's id of the answer (a message id).
pub const RESPONSE_ID: &str = "gen_ai.response.id";
/// `gen_ai.usage.reasoning.output_tokens` (counted inside the output tokens).
pub const REASONING_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";

/// The guardrail span's operation (Note \[Guardrail or evaluation\]).
pub const APPLY_GUARDRAIL: &str = "apply_guardrail";
/// The event a guardrail span carries its verdict in.
pub const GUARDRAIL_RESULT: &str = "gen_ai.guardrail.result";
/// `gen_ai.guardrail.component.name`: what checked (agentshape itself).
pub const GUARDRAIL_COMPONENT: &str = "gen_ai.guardrail.component.name";
/// The component's name.
pub const COMPONENT: &str = "agentshape";
/// `gen_ai.guardrail.policy.id`: the profile or schema.
pub const GUARDRAIL_POLICY_ID: &str = "gen_ai.guardrail.policy.id";
/// `gen_ai.guardrail.policy.version`: the profile's version, when known.
pub const GUARDRAIL_POLICY_VERSION: &str = "gen_ai.guardrail.policy.version";
/// `gen_ai.guardrail.result.type`: the name of the result field (`verdict`).
pub const GUARDRAIL_RESULT_TYPE: &str = "gen_ai.guardrail.result.type";
/// `gen_ai.guardrail.result.value`: agentshape's verdict word.
pub const GUARDRAIL_RESULT_VALUE: &str = "gen_ai.guardrail.result.value";
/// `gen_ai.guardrail.result.reason`: low-cardinality, never content.
pub const GUARDRAIL_RESULT_REASON: &str = "gen_ai.guardrail.result.reason";
/// `gen_ai.guardrail.source`: what was checked (`output`).
pub const GUARDRAIL_SOURCE: &str = "gen_ai.guardrail.source";
/// The event of a verdict that blocks nothing (Note \[Guardrail or evaluation\]).
pub const EVALUATION_RESULT: &str = "gen_ai.evaluation.result";
/// `gen_ai.evaluation.name`: the profile or schema.
pub const EVALUATION_NAME: &str = "gen_ai.evaluation.name";
/// `gen_ai.evaluation.score.label`: the verdict word.
pub const EVALUATION_LABEL: &str = "gen_ai.evaluation.score.label";
/// `gen_ai.evaluation.explanation`: as the guardrail's reason.
pub const EVALUATION_EXPLANATION: &str = "gen_ai.evaluation.explanation";
/// `valid`, `invalid`, `blocked`, `gave_up`, `allowed`, `none` (Note \[Which conventions\]).
pub const VERDICT: &str = "agentshape.guardrail.verdict";
/// How many violations.
pub const ERROR_COUNT: &str = "agentshape.guardrail.error_count";
/// The failing JSON Pointers (`""` is the root).
pub const FAILING_PATHS: &str = "agentshape.guardrail.failing_paths";
/// `structured`, `fenced`, `bare`, `repaired`, `markers`, `none`.
pub const EXTRACTION_METHOD: &str = "agentshape.extraction.method";
/// The hook event of a hook call's guardrail (`Stop`, `SubagentStop`).
pub const HOOK_EVENT: &str = "agentshape.hook.event";
/// Blocks in a row in the hook's stop chain.
pub const HOOK_BLOCKS: &str = "agentshape.hook.blocks";
/// The block reason given to the model (opt-in content).
pub const HOOK_REASON: &str = "agentshape.hook.reason";
/// The attempt number of an `ask` call.
pub const ATTEMPT: &str = "agentshape.attempt";
/// The session's stored status.
pub const STATUS: &str = "agentshape.session.status";
/// The session's tier.
pub const TIER: &str = "agentshape.session.tier";
/// The profile or schema a session was validated against.
pub const PROFILE: &str = "agentshape.profile";
/// The cost the agent reported (or that was estimated); on a `chat` span,
/// that call's cost at agentshape's prices, and on a session priced from
/// its calls, their sum (Note \[Partial cost\] in core's usage reports).
pub const COST_USD: &str = "agentshape.cost_usd";
/// The cost leaves out calls of models agentshape has no price for.
pub const COST_PARTIAL: &str = "agentshape.cost.partial";
/// Those models.
pub const UNPRICED_MODELS: &str = "agentshape.cost.unpriced_models";
/// A model call made by a sub-agent whose lines sit in its parent's file.
pub const SIDECHAIN: &str = "agentshape.sidechain";

/// Every `gen_ai.*` and `error.type`/`http.*` name this crate emits, for
/// the test that holds them to the conventions' list.
pub const EMITTED: &[&str] = &[
    OPERATION,
    PROVIDER,
    AGENT_NAME,
    AGENT_ID,
    AGENT_VERSION,
    CONVERSATION_ID,
    REQUEST_MODEL,
    RESPONSE_MODEL,
    RESPONSE_ID,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    CACHE_READ_TOKENS,
    CACHE_CREATION_TOKENS,
    REASONING_TOKENS,
    TOOL_NAME,
    TOOL_CALL_ID,
    TOOL_TYPE,
    TOOL_ARGUMENTS,
    TOOL_RESULT,
    INPUT_MESSAGES,
    OUTPUT_MESSAGES,
    OUTPUT_TYPE,
    ERROR_TYPE,
    HTTP_STATUS,
    GUARDRAIL_RESULT,
    GUARDRAIL_COMPONENT,
    GUARDRAIL_POLICY_ID,
    GUARDRAIL_POLICY_VERSION,
    GUARDRAIL_RESULT_TYPE,
    GUARDRAIL_RESULT_VALUE,
    GUARDRAIL_RESULT_REASON,
    GUARDRAIL_SOURCE,
    EVALUATION_RESULT,
    EVALUATION_NAME,
    EVALUATION_LABEL,
    EVALUATION_EXPLANATION,
];

/// The provider name the conventions use for an agent or provider kind.
pub fn provider_of(agent: &str) -> Option<&'static str> {
    Some(match agent {
        "claude" | "claude-code" | "anthropic" => "anthropic",
        "codex" | "openai" | "openai-responses" => "openai",
        "gemini" | "gemini-cli" => "gcp.gemini",
        "ollama" => "ollama",
        _ => return None,
    })
}

/// The provider a model name implies, when the agent does not say (a
/// replayed transcript).
pub fn provider_of_model(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    Some(if m.starts_with("claude") {
        "anthropic"
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
        || m.starts_with("codex")
    {
        "openai"
    } else if m.starts_with("gemini") {
        "gcp.gemini"
    } else {
        return None;
    })
}
