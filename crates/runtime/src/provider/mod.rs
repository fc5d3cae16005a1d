//! Provider clients with native structured output: one module per provider,
//! one [`Provider`] trait.
//!
//! Each client threads the schema into its provider's native field
//! (Anthropic `output_config.format`, `OpenAI` `response_format` /
//! `text.format`, Gemini `responseJsonSchema`, Ollama `format`) and returns
//! the raw body decoded by core's provider decoders. Nothing here trusts the
//! answer: [`crate::retry::ask`] extracts and validates it (seed 003's belt
//! and suspenders). The Claude Code CLI (`claude -p --json-schema`) is the
//! one provider that is not HTTP: [`claude_code`] runs it through the agent
//! runner of `agentshape run` and hands the decoded stream to the same loop.
//!
//! Keys live in a [`Secret`], whose `Debug` and `Display` are redacted; they
//! are sent only in the provider's auth header and never appear in errors.
//! Every byte a provider sends back passes through one function
//! (`http::Http::post`), which masks the key wherever the server echoes it,
//! refuses redirects to another origin (Note [Same-origin redirects]) and
//! reads the body in chunks up to a cap (Note [Body cap]).

pub mod anthropic;
pub mod claude_code;
pub mod gemini;
mod http;
#[cfg(feature = "local")]
pub mod local;
pub mod ollama;
pub mod openai;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use agentshape_core::RunSummary;
use agentshape_core::decode::Format;
use agentshape_core::lint::Dialect;
use serde_json::Value;

/// An API key: redacted in `Debug` and `Display`, readable only through [`Secret::expose`].
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Self {
        Secret(key.into())
    }

    /// The key, for the auth header and nowhere else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What is shown where the key was: `sk-…6789` (its first three and
    /// last four characters) for a key of 20 characters or more, else
    /// `[REDACTED]`, so a short key never shows most of itself.
    pub fn masked(&self) -> String {
        let k = &self.0;
        match (k.len() >= 20).then(|| (k.get(..3), k.get(k.len() - 4..))) {
            Some((Some(head), Some(tail))) => format!("{head}…{tail}"),
            _ => "[REDACTED]".to_owned(),
        }
    }

    /// `text` with every occurrence of the key replaced by [`Secret::masked`].
    ///
    /// Note [Key masking]: a provider that echoes the key in an error ("invalid
    /// key sk-...") would otherwise have it printed, stored in `--json`
    /// output and fed back to the model. The key is masked in the raw body
    /// before anything decodes it, and in every error text. A key shorter than
    /// [`MIN_MASKED_KEY`] bytes is not searched for: replacing a short common
    /// string everywhere would change the answer itself, and real keys are
    /// far longer.
    pub fn mask(&self, text: &str) -> String {
        if self.0.len() < MIN_MASKED_KEY {
            return text.to_owned();
        }
        text.replace(&self.0, &self.masked())
    }

    /// [`Secret::mask`] over raw bytes (a body need not be UTF-8); `None`
    /// when the key does not occur.
    pub(crate) fn mask_bytes(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let key = self.0.as_bytes();
        if key.len() < MIN_MASKED_KEY {
            return None;
        }
        let mut hits = memchr::memmem::find_iter(bytes, key).peekable();
        hits.peek()?;
        let masked = self.masked();
        let mut out = Vec::with_capacity(bytes.len());
        let mut from = 0;
        for at in hits {
            out.extend_from_slice(&bytes[from..at]);
            out.extend_from_slice(masked.as_bytes());
            from = at + key.len();
        }
        out.extend_from_slice(&bytes[from..]);
        Some(out)
    }
}

/// Keys shorter than this are not masked in bodies (Note [Key masking]).
pub const MIN_MASKED_KEY: usize = 8;

/// The default cap on a provider's response body: 16 MiB, far above any
/// real structured-output answer (Note [Body cap]).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 << 20;

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Which provider API to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Anthropic Messages API.
    Anthropic,
    /// `OpenAI` Chat Completions.
    OpenaiChat,
    /// `OpenAI` Responses API.
    OpenaiResponses,
    /// Gemini `generateContent`.
    Gemini,
    /// Ollama `/api/chat`.
    Ollama,
    /// The Claude Code CLI (`claude -p --json-schema`), run as an agent process.
    ClaudeCode,
    /// A GGUF model run in-process under a grammar (the `local` feature).
    Local,
}

impl Kind {
    /// Parse a `--provider` name (`openai` means Chat Completions).
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "anthropic" => Some(Kind::Anthropic),
            "openai" | "openai-chat" => Some(Kind::OpenaiChat),
            "openai-responses" => Some(Kind::OpenaiResponses),
            "gemini" => Some(Kind::Gemini),
            "ollama" => Some(Kind::Ollama),
            "claude-code" => Some(Kind::ClaudeCode),
            "local" => Some(Kind::Local),
            _ => None,
        }
    }

    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Anthropic => "anthropic",
            Kind::OpenaiChat => "openai-chat",
            Kind::OpenaiResponses => "openai-responses",
            Kind::Gemini => "gemini",
            Kind::Ollama => "ollama",
            Kind::ClaudeCode => "claude-code",
            Kind::Local => "local",
        }
    }

    /// The schema dialect the provider accepts (Claude Code's is taken to
    /// be Anthropic's: the schema reaches the same models through it).
    pub fn dialect(self) -> Dialect {
        match self {
            Kind::Anthropic | Kind::ClaudeCode => Dialect::Anthropic,
            Kind::OpenaiChat | Kind::OpenaiResponses => Dialect::Openai,
            Kind::Gemini => Dialect::Gemini,
            Kind::Ollama => Dialect::Ollama,
            // What llguidance refuses to compile (core's `lint::local`); `ask`
            // sends no rewritten schema to the engine, which compiles it as written.
            Kind::Local => Dialect::Local,
        }
    }

    /// How core decodes the response body.
    pub fn format(self) -> Format {
        match self {
            Kind::Anthropic => Format::Anthropic,
            Kind::OpenaiChat => Format::OpenaiChat,
            Kind::OpenaiResponses => Format::OpenaiResponses,
            Kind::Gemini => Format::Gemini,
            Kind::Ollama => Format::Ollama,
            Kind::ClaudeCode => Format::Claude,
            Kind::Local => Format::Text,
        }
    }

    /// The environment variable naming the base URL (Claude Code reads
    /// `ANTHROPIC_BASE_URL` itself).
    pub fn base_url_var(self) -> &'static str {
        match self {
            Kind::Anthropic | Kind::ClaudeCode => "ANTHROPIC_BASE_URL",
            Kind::OpenaiChat | Kind::OpenaiResponses => "OPENAI_BASE_URL",
            Kind::Gemini => "GEMINI_BASE_URL",
            Kind::Ollama => "OLLAMA_HOST",
            Kind::Local => "AGENTSHAPE_MODEL_DIR",
        }
    }

    /// The environment variable of a key sent when set but not required:
    /// Ollama's `OLLAMA_API_KEY` (a bearer token for ollama.com or a proxy
    /// in front of a local server).
    pub fn optional_key_var(self) -> Option<&'static str> {
        match self {
            Kind::Ollama => Some("OLLAMA_API_KEY"),
            _ => None,
        }
    }

    /// The environment variable holding the key (`None`: no key needed, or,
    /// for Claude Code, the CLI's own login).
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            Kind::Anthropic => Some("ANTHROPIC_API_KEY"),
            Kind::OpenaiChat | Kind::OpenaiResponses => Some("OPENAI_API_KEY"),
            Kind::Gemini => Some("GEMINI_API_KEY"),
            Kind::Ollama | Kind::ClaudeCode | Kind::Local => None,
        }
    }

    /// The public endpoint used when no base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Kind::Anthropic | Kind::ClaudeCode => "https://api.anthropic.com",
            Kind::OpenaiChat | Kind::OpenaiResponses => "https://api.openai.com/v1",
            Kind::Gemini => "https://generativelanguage.googleapis.com",
            Kind::Ollama => "http://localhost:11434",
            Kind::Local => "",
        }
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The caller (the prompt, and the validation feedback of a retry).
    User,
    /// The model (its previous reply, on a retry).
    Assistant,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
}

/// A tool offered to the model; sent with strict schema enforcement where the
/// provider has it (Anthropic and `OpenAI` `strict: true`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
}

/// One structured-output request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Model name.
    pub model: String,
    /// System prompt.
    pub system: Option<String>,
    /// The conversation so far (the prompt first).
    pub messages: Vec<Message>,
    /// The schema to put in the provider's native structured-output field
    /// (already fixed for the provider's dialect by the caller when needed).
    pub schema: Value,
    /// Schema name, where the provider wants one (`OpenAI`).
    pub schema_name: String,
    /// Output token limit.
    pub max_tokens: u32,
    /// Tools, sent strict.
    pub tools: Vec<Tool>,
}

/// What one call returned.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status (`None` for an in-process model or an agent process).
    pub status: Option<u16>,
    /// The server's `retry-after` (or `retry-after-ms`), when sent.
    pub retry_after: Option<Duration>,
    /// The body decoded by core (text, usage, stop reason, error category).
    pub summary: RunSummary,
}

/// Why a call produced no reply at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The connection failed or timed out (the key is never part of this text).
    #[error("{provider}: request failed: {message}")]
    Transport {
        /// Provider name.
        provider: &'static str,
        /// What went wrong.
        message: String,
        /// Whether it was a timeout.
        timeout: bool,
    },
    /// The key variable is not set.
    #[error("{provider}: {var} is not set")]
    MissingKey {
        /// Provider name.
        provider: &'static str,
        /// The variable.
        var: &'static str,
    },
    /// The base URL answered with a redirect to another origin (scheme, host
    /// or port): not followed, so neither the key nor the request went there
    /// (Note [Same-origin redirects]).
    #[error(
        "{provider}: refused a redirect (HTTP {status}) to another origin, {origin}: the key and the request are not sent there; give that URL as the base URL if it is right"
    )]
    Redirect {
        /// Provider name.
        provider: &'static str,
        /// The 3xx status.
        status: u16,
        /// Where it pointed: scheme, host and port only.
        origin: String,
    },
    /// The body could not be used: over the size cap, cut short, or (for a
    /// 2xx) not a JSON object (Note [Body cap]).
    #[error("{provider}: bad response body: {message}")]
    BadResponse {
        /// Provider name.
        provider: &'static str,
        /// HTTP status of the reply.
        status: u16,
        /// What was wrong, with how many bytes were read.
        message: String,
        /// Whether trying again may help (a connection cut mid-body).
        transient: bool,
    },
    /// The agent executable does not exist (exit 127, as for `agentshape run`).
    #[error("agent executable not found: {program}")]
    NotFound {
        /// The executable as given.
        program: String,
    },
    /// The agent process ended without an answer: it timed out, died before
    /// its result, or could not be run. Not retried: it already had its turn.
    #[error("{provider}: {message}")]
    Agent {
        /// Provider name.
        provider: &'static str,
        /// What happened.
        message: String,
        /// Its category (`timeout`, `api`).
        category: agentshape_core::ErrorCategory,
    },
}

impl ProviderError {
    /// The HTTP status of the reply, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProviderError::Redirect { status, .. } | ProviderError::BadResponse { status, .. } => {
                Some(*status)
            }
            _ => None,
        }
    }

    /// Whether the same request may succeed when sent again (Note [Two retry
    /// budgets]): a failed connection or a body cut short.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ProviderError::Transport { .. }
                | ProviderError::BadResponse {
                    transient: true,
                    ..
                }
        )
    }

    /// The error with `secret` masked in every text it carries.
    #[must_use]
    pub fn masked(self, secret: &Secret) -> ProviderError {
        match self {
            ProviderError::Transport {
                provider,
                message,
                timeout,
            } => ProviderError::Transport {
                provider,
                message: secret.mask(&message),
                timeout,
            },
            ProviderError::Redirect {
                provider,
                status,
                origin,
            } => ProviderError::Redirect {
                provider,
                status,
                origin: secret.mask(&origin),
            },
            ProviderError::BadResponse {
                provider,
                status,
                message,
                transient,
            } => ProviderError::BadResponse {
                provider,
                status,
                message: secret.mask(&message),
                transient,
            },
            other => other,
        }
    }
}

/// A boxed future, so [`Provider`] stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model that answers a [`Request`] with structured output.
///
/// HTTP providers send one request and decode the body with core's
/// provider decoders. The trait is shaped so an in-process local model fits
/// beside them later: `call` takes the whole conversation and the schema, so
/// such a model would compile `Request::schema` into a decoding constraint
/// (a grammar over tokens), sample under it on the CPU, stream tokens to a
/// sink it is constructed with, and return a [`Reply`] with `status: None`
/// and a summary built from the sampled text (core's `SummaryBuilder` over
/// `Event::Text`). The validate-and-retry loop needs nothing else.
pub trait Provider: Send + Sync {
    /// Which API this is.
    fn kind(&self) -> Kind;

    /// The exact request this provider would send for `req`: the JSON body
    /// of an HTTP provider; the argument vector (a JSON array of strings) of
    /// an agent CLI.
    fn body(&self, req: &Request) -> Value;

    /// Send `req` and decode the answer.
    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>>;
}

/// How to reach a provider.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base URL (`None`: the provider's public endpoint).
    pub base_url: Option<String>,
    /// API key (required except for Ollama, where it is an optional bearer).
    pub key: Option<Secret>,
    /// Whole-request timeout, the body's reading included.
    pub timeout: Duration,
    /// Largest response body read, in bytes ([`DEFAULT_MAX_BODY_BYTES`]
    /// unless configured; Note [Body cap]).
    pub max_body_bytes: u64,
}

impl Config {
    /// A config with the default timeout (120 s) and body cap.
    pub fn new(base_url: Option<String>, key: Option<Secret>) -> Self {
        Config {
            base_url,
            key,
            timeout: Duration::from_secs(120),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Build the HTTP client for `kind`; Claude Code, an agent process, is built
/// with [`claude_code::ClaudeCode::new`] (asked for here, it runs `claude` from
/// `PATH` with the configured timeout).
///
/// # Errors
/// [`ProviderError::MissingKey`] when the provider needs a key and none was given.
pub fn build(kind: Kind, config: Config) -> Result<Box<dyn Provider>, ProviderError> {
    let Config {
        base_url,
        key,
        timeout,
        max_body_bytes,
    } = config;
    let base = normalize_base(base_url.as_deref().unwrap_or(kind.default_base_url()));
    let key = match (kind.key_var(), key) {
        (Some(var), None) => {
            return Err(ProviderError::MissingKey {
                provider: kind.as_str(),
                var,
            });
        }
        (_, key) => key,
    };
    let http = || http::Http::new(kind, timeout, max_body_bytes, key.clone());
    Ok(match kind {
        Kind::Anthropic => Box::new(anthropic::Anthropic::new(http(), base, key)),
        Kind::OpenaiChat | Kind::OpenaiResponses => Box::new(openai::OpenAi::new(
            http(),
            base,
            key,
            kind == Kind::OpenaiResponses,
        )),
        Kind::Gemini => Box::new(gemini::Gemini::new(http(), base, key)),
        Kind::Ollama => Box::new(ollama::Ollama::new(http(), base, key)),
        Kind::ClaudeCode => Box::new(claude_code::ClaudeCode::new("claude", Some(timeout), None)),
        // A model file and sampling options, not a URL and a key: built by
        // `local::Local::load` (the CLI's shared constructor picks it).
        Kind::Local => {
            return Err(ProviderError::Agent {
                provider: kind.as_str(),
                message: "the local provider is not an HTTP client; load it with provider::local::Local::load".into(),
                category: agentshape_core::ErrorCategory::Api,
            });
        }
    })
}

/// A base URL without a trailing `/`, with `http://` added to a bare
/// `host:port` (how `OLLAMA_HOST` is usually written).
pub fn normalize_base(base: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    if base.contains("://") {
        base.to_owned()
    } else {
        format!("http://{base}")
    }
}

/// A one-turn request with one tool, for the request-body tests of each provider.
#[cfg(test)]
pub(crate) fn sample_request(model: &str, tool_schema: Value) -> Request {
    Request {
        model: model.into(),
        system: None,
        messages: vec![Message {
            role: Role::User,
            content: "hi".into(),
        }],
        schema: serde_json::json!({"type": "object"}),
        schema_name: "answer".into(),
        max_tokens: 64,
        tools: vec![Tool {
            name: "lookup".into(),
            description: "Look a service up".into(),
            input_schema: tool_schema,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let s = Secret::new("sk-very-secret");
        assert_eq!(format!("{s}"), "[redacted]");
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(s.expose(), "sk-very-secret");
    }

    #[test]
    fn keys_are_masked_in_text_and_bytes() {
        let long = Secret::new("sk-standin-secret-0123456789");
        assert_eq!(long.masked(), "sk-…6789");
        assert_eq!(
            long.mask("bad key sk-standin-secret-0123456789, sk-standin-secret-0123456789"),
            "bad key sk-…6789, sk-…6789"
        );
        let want = [&[0xff_u8][..], " sk-…6789!".as_bytes()].concat();
        assert_eq!(
            long.mask_bytes(b"\xff sk-standin-secret-0123456789!"),
            Some(want)
        );
        assert_eq!(long.mask_bytes(b"nothing here"), None);
        // A mid-length key is hidden whole; a tiny one is not searched for.
        assert_eq!(Secret::new("abcdefghij").masked(), "[REDACTED]");
        assert_eq!(
            Secret::new("abcdefghij").mask("x abcdefghij"),
            "x [REDACTED]"
        );
        assert_eq!(Secret::new("abc").mask("abc abc"), "abc abc");
    }

    #[test]
    fn base_urls_are_normalized() {
        let cases = [
            ("http://127.0.0.1:9/", "http://127.0.0.1:9"),
            ("0.0.0.0:11434", "http://0.0.0.0:11434"),
            ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ];
        for (given, want) in cases {
            assert_eq!(normalize_base(given), want);
        }
    }

    #[test]
    fn a_missing_key_is_an_error_that_names_the_variable() {
        let cfg = Config::new(None, None);
        let err = build(Kind::Gemini, cfg.clone())
            .err()
            .map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("gemini: GEMINI_API_KEY is not set"));
        assert!(build(Kind::Ollama, cfg).is_ok());
    }
}
