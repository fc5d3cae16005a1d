//! The plain description of one session's trace: what happened and when,
//! in milliseconds since the Unix epoch (the times the transcript or the
//! store recorded, never the time of export).
//!
//! The CLI fills it from what the runtime holds in memory, [`crate::stored`]
//! from a store, [`crate::live`] from a stream of events; [`mod@crate::spans`]
//! turns it into spans.

/// Token counts, as agentshape stores them: `input` is the prompt tokens
/// that were neither read from nor written to the provider's cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens outside the cache.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// Of `output`, the reasoning tokens, where the agent reports them.
    pub reasoning: u64,
}

impl Usage {
    /// Every prompt token, cache reads and writes included, as
    /// `gen_ai.usage.input_tokens` counts them.
    pub fn prompt_total(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// The counts of one model call in core's vocabulary (Note \[Usage
    /// vocabulary\] in `agentshape_core::usage`).
    pub fn from_tokens(t: &agentshape_core::usage::UsageTokens) -> Usage {
        Usage {
            input: t.input,
            output: t.output,
            cache_read: t.cache_read,
            cache_write: t.cache_write(),
            reasoning: t.reasoning,
        }
    }
}

/// Whether agent `agent` counts cached prompt tokens inside its input
/// tokens (Codex and Gemini CLI do, Claude does not: core's Note \[Usage
/// vocabulary\]); the store keeps each agent's own counts.
pub fn input_includes_cache(agent: &str) -> bool {
    matches!(agent, "codex" | "gemini" | "gemini-cli" | "openai")
}

impl Usage {
    /// A session's stored counts (the agent's own meaning of `input`) in
    /// this vocabulary.
    pub fn stored(
        agent: &str,
        input: u64,
        output: u64,
        cache_read: u64,
        cache_write: u64,
    ) -> Usage {
        Usage {
            input: if input_includes_cache(agent) {
                input.saturating_sub(cache_read)
            } else {
                input
            },
            output,
            cache_read,
            cache_write,
            reasoning: 0,
        }
    }
}

/// Where a sub-agent's session hangs (Note \[Sub-agent traces\] in `spans`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parent {
    /// The parent session's id.
    pub session_id: String,
    /// The session whose trace the parent is in: the parent itself, or its
    /// own top ancestor when the parent is a sub-agent too.
    pub trace_session: String,
    /// The parent's `Task` tool call that started this session; `None`
    /// while it is not known (the session gets a trace of its own, linked
    /// to the parent's).
    pub tool_use_id: Option<String>,
}

/// One session (or one `ask`): the root span and what sits under it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionTrace {
    /// agentshape's session id: the conversation id, and the seed of every id
    /// (Note \[Derived ids\] in `ids`).
    pub session_id: String,
    /// The agent (`claude`, `codex`, `claude-code`, `replay`, `ask`).
    pub agent: String,
    /// The provider, when known (`anthropic`, `openai`, …); else derived
    /// from the agent.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The agent's own version (`gen_ai.agent.version`), when recorded.
    pub agent_version: Option<String>,
    /// The session that started this one (a sub-agent's).
    pub parent: Option<Parent>,
    /// When the session started.
    pub started_ms: i64,
    /// When it ended; `None` while it runs (no root span is made then).
    pub ended_ms: Option<i64>,
    /// The stored status (`completed`, `error`, `failed`, `timeout`, …).
    pub status: String,
    /// The error text, when it failed.
    pub error: Option<String>,
    /// The error category (`rate_limit`, `auth`, `timeout`, …).
    pub error_category: Option<String>,
    /// Tokens of the whole session.
    pub usage: Usage,
    /// Cost.
    pub cost_usd: Option<f64>,
    /// The profile or schema.
    pub profile: Option<String>,
    /// Tier.
    pub tier: Option<u32>,
    /// Tool calls, in call order.
    pub tools: Vec<ToolCall>,
    /// Model calls: `ask`'s attempts, or a native session's calls (one
    /// per message id; Codex: one per growth of its running total), in order.
    pub chats: Vec<ChatCall>,
    /// Validations, in order.
    pub checks: Vec<Check>,
    /// Prompts and assistant texts (only exported with content on).
    pub messages: Vec<Message>,
}

impl SessionTrace {
    /// A session with only its id, agent and start set (status `completed`).
    pub fn new(session_id: &str, agent: &str, started_ms: i64) -> SessionTrace {
        SessionTrace {
            session_id: session_id.to_owned(),
            agent: agent.to_owned(),
            started_ms,
            status: "completed".to_owned(),
            ..SessionTrace::default()
        }
    }

    /// Whether the session failed (the root span's status is then an error).
    pub fn failed(&self) -> bool {
        !matches!(self.status.as_str(), "completed" | "running")
            || self.error.is_some()
            || self.error_category.is_some()
    }
}

/// One tool call: from its `tool_use` to its `tool_result`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    /// The agent's tool-use id (the span's key; `None`: the call's ordinal).
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// When the call was made.
    pub started_ms: i64,
    /// When its result came; `None`: never (the span ends with the session).
    pub ended_ms: Option<i64>,
    /// The result was an error.
    pub is_error: bool,
    /// The input, as JSON text (content).
    pub arguments: Option<String>,
    /// The result, as text (content).
    pub result: Option<String>,
}

impl ToolCall {
    /// A call with only its id, name and start.
    pub fn new(id: Option<&str>, name: &str, started_ms: i64) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            started_ms,
            ..ToolCall::default()
        }
    }
}

/// One model call: an attempt of `ask`, or a call a native session recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatCall {
    /// 1-based (`ask`); 0 for a native session's call.
    pub attempt: u32,
    /// What makes the span's id unique in the session (`None`: the
    /// attempt): a Claude message's `message id:request id`, a Codex or
    /// Gemini call's position.
    pub key: Option<String>,
    /// The model asked for.
    pub model: String,
    /// The model that answered, when recorded (`gen_ai.response.model`).
    pub response_model: Option<String>,
    /// The provider's id of the answer (a Claude message id).
    pub response_id: Option<String>,
    /// Made by a sub-agent whose lines sit in its parent's file.
    pub sidechain: bool,
    /// When the request was sent.
    pub started_ms: i64,
    /// When the answer (or the failure) came.
    pub ended_ms: i64,
    /// Tokens of this call.
    pub usage: Usage,
    /// The same in core's vocabulary (1-hour cache writes apart), for its
    /// price; zero when the call's tokens are not known per kind.
    pub tokens: agentshape_core::usage::UsageTokens,
    /// The HTTP status, when there was one.
    pub http_status: Option<u16>,
    /// The call's error.
    pub error: Option<String>,
    /// Its category.
    pub error_category: Option<String>,
    /// The messages sent (content).
    pub input: Option<String>,
    /// The answer's text (content).
    pub output: Option<String>,
}

/// One validation: the final verdict of a run, one `ask` attempt's answer,
/// or one hook call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Check {
    /// What makes its span id unique in the session (`verdict`,
    /// `attempt-2`, a hook call's time and event).
    pub key: String,
    /// The profile or schema (the span is `apply_guardrail {name}`).
    pub name: String,
    /// When it ran.
    pub started_ms: i64,
    /// When it was done.
    pub ended_ms: i64,
    /// `valid`, `invalid`, `none` (nothing structured found); a hook's
    /// `blocked`, `gave_up`, `allowed`.
    pub verdict: String,
    /// The failing JSON Pointers, one per violation.
    pub failing_paths: Vec<String>,
    /// How the value was found.
    pub method: Option<String>,
    /// A hook call's event (`Stop`, `SubagentStop`).
    pub hook_event: Option<String>,
    /// A sub-agent's id.
    pub agent_id: Option<String>,
    /// Blocks in a row (hook).
    pub blocks: Option<u32>,
    /// The block reason (content).
    pub reason: Option<String>,
    /// The verdict could stop something when it was made (a hook's block,
    /// `ask`'s retry): a guardrail; else an evaluation (semconv's Note
    /// \[Guardrail or evaluation\]).
    pub blocking: bool,
}

/// A prompt or an assistant text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    /// `user` or `assistant`.
    pub role: String,
    /// The text.
    pub text: String,
    /// When it was seen.
    pub at_ms: i64,
}
