//! The names we emit, in one place.
//!
//! Note \[Which conventions\]: the generative-AI semantic conventions are in
//! *Development* status. We follow their spans in semantic conventions
//! v1.41.0 (the last release before those conventions moved to their
//! own repository), which is what instrumentations emit when a user opts
//! in with `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`; we
//! have no older shape to stay compatible with, so we emit only this one.
//! Where the conventions name nothing for what agentshape knows (its
//! validation verdict, the extraction method, the failing JSON paths) the
//! attributes sit in our own `agentshape.` namespace rather than invent
//! `gen_ai.` names a later release might define differently.

/// The conventions' version we follow (Note \[Which conventions\]).
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

/// The guardrail span's operation.
pub const APPLY_GUARDRAIL: &str = "apply_guardrail";
/// The event a guardrail span carries its verdict in.
pub const GUARDRAIL_RESULT: &str = "gen_ai.guardrail.result";
/// The guardrail's name (profile or schema).
pub const GUARDRAIL_NAME: &str = "gen_ai.guardrail.name";
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
/// The cost the agent reported (or that was estimated).
pub const COST_USD: &str = "agentshape.cost_usd";
/// A user prompt, as a span event (opt-in content).
pub const USER_MESSAGE: &str = "gen_ai.user.message";
/// An assistant text, as a span event (opt-in content).
pub const ASSISTANT_MESSAGE: &str = "gen_ai.assistant.message";

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
