//! The Claude Code CLI as a provider: `claude -p --output-format stream-json
//! --verbose --json-schema <schema> --model <M>` with the prompt on standard
//! input, run through the
//! agent runner of `agentshape run` ([`crate::runner::run_session`]: spawned
//! without a shell in its own process group, forensic log, core's Claude
//! decoder, timeout on the whole group).
//!
//! The CLI validates its own `structured_output` against `--json-schema`, and
//! [`crate::retry::ask`] validates it again (seed 003's belt and suspenders).
//!
//! Note \[Stateless retries\]: every call is a fresh `claude -p`. A retry does
//! not `--resume` the previous session: resuming depends on the session file
//! the CLI left on this machine (absent with `--no-session-persistence`, with
//! a wrapper given as `--claude-bin`, or on another host), and its usage would
//! be reported against a growing context. Instead the conversation the retry
//! loop built ([`Request::messages`]: prompt, reply, feedback, ...) is
//! rendered into ONE new prompt by [`render_prompt`]: the original prompt,
//! then each previous reply and the validation errors it got, in order. Each
//! attempt's forensic log therefore holds everything the model was told.
//!
//! Note \[Prompt on stdin\]: the prompt goes to the CLI's standard input, not
//! its argument vector: `claude -p` with no prompt argument reads the prompt
//! from stdin. Linux caps ONE argument at 128 KiB (`MAX_ARG_STRLEN`), and a
//! prompt plus its retry history (Note \[Stateless retries\]) easily passes
//! that; as an argument it failed to spawn at all. On stdin a prompt has no
//! size limit and cannot be read as an option (a prompt starting with `-`
//! needs no escaping). The schema, model and system prompt stay arguments
//! (`claude` takes them only so); each argument is checked against the cap
//! before spawning, and one over it ends the call with an error naming the
//! flag and its size instead of a failed spawn.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use agentshape_core::ErrorCategory;
use serde_json::Value;

use super::{BoxFuture, Kind, Message, Provider, ProviderError, Reply, Request, Role};
use crate::hub::Hub;
use crate::process::{AgentCommand, ProcessOptions, Source};
use crate::runner::{AgentKind, SessionSpec, agent_args, new_session_id, run_session};

/// The Claude Code CLI client.
#[derive(Debug, Clone)]
pub struct ClaudeCode {
    program: String,
    timeout: Option<Duration>,
    log_dir: Option<PathBuf>,
}

impl ClaudeCode {
    /// A client running `program` (looked up on `PATH` when it has no slash),
    /// killing each attempt after `timeout`, keeping each attempt's forensic
    /// log in `log_dir` (`None`: a temporary directory removed after the call).
    pub fn new(
        program: impl Into<String>,
        timeout: Option<Duration>,
        log_dir: Option<PathBuf>,
    ) -> Self {
        ClaudeCode {
            program: program.into(),
            timeout,
            log_dir,
        }
    }

    /// The argument vector (without the program) for `req`.
    pub fn argv(&self, req: &Request) -> Vec<String> {
        argv(req)
    }
}

/// Linux's cap on one argument (`MAX_ARG_STRLEN`, 32 pages), counting its
/// closing NUL byte.
pub const MAX_ARG_BYTES: usize = 128 << 10;

/// The argument vector (without the program) for `req`: `-p --output-format
/// stream-json --verbose --json-schema <schema as compact JSON> --model
/// <model>`, and `--append-system-prompt <system>` when a system prompt is
/// given. The prompt is not in it: it goes on stdin ([`render_prompt`],
/// Note \[Prompt on stdin\]).
pub fn argv(req: &Request) -> Vec<String> {
    let mut args = agent_args(
        AgentKind::Claude,
        &["-p".to_owned()],
        Some(&req.schema),
        false,
    );
    args.extend(["--model".to_owned(), req.model.clone()]);
    if let Some(system) = &req.system {
        args.extend(["--append-system-prompt".to_owned(), system.clone()]);
    }
    args
}

/// The one prompt a stateless CLI call gets for a conversation (Note
/// \[Stateless retries\]): the first user turn as written; each later turn
/// under a heading saying whose it is.
pub fn render_prompt(messages: &[Message]) -> String {
    let mut out = String::new();
    let mut reply = 0;
    for (i, m) in messages.iter().enumerate() {
        if i == 0 {
            out.push_str(&m.content);
            continue;
        }
        match m.role {
            Role::Assistant => {
                reply += 1;
                let _ = write!(out, "\n\n--- Your previous reply (attempt {reply}) ---\n");
                out.push_str(&m.content);
            }
            Role::User => {
                out.push_str("\n\n--- Feedback on that reply ---\n");
                out.push_str(&m.content);
            }
        }
    }
    out
}

impl Provider for ClaudeCode {
    fn kind(&self) -> Kind {
        Kind::ClaudeCode
    }

    /// The argument vector, as a JSON array of strings (the prompt goes on
    /// stdin, Note \[Prompt on stdin\]).
    fn body(&self, req: &Request) -> Value {
        Value::from(argv(req))
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(self.run(req))
    }
}

/// The first argument over [`MAX_ARG_BYTES`], as the flag it follows and its
/// size (Note \[Prompt on stdin\]).
fn over_limit(args: &[String]) -> Option<(&str, usize)> {
    args.iter().enumerate().find_map(|(i, a)| {
        (a.len() >= MAX_ARG_BYTES).then(|| {
            let flag = i
                .checked_sub(1)
                .and_then(|p| args.get(p))
                .map_or("an argument", String::as_str);
            (flag, a.len())
        })
    })
}

impl ClaudeCode {
    async fn run(&self, req: &Request) -> Result<Reply, ProviderError> {
        let args = argv(req);
        if let Some((flag, len)) = over_limit(&args) {
            return Err(ProviderError::Agent {
                provider: Kind::ClaudeCode.as_str(),
                message: format!(
                    "the value of `{flag}` is {len} bytes: Linux caps one argument at {} KiB and `claude` takes it only as an argument; not started",
                    MAX_ARG_BYTES >> 10
                ),
                category: ErrorCategory::Api,
            });
        }
        let id = new_session_id();
        let (log_dir, temporary) = match &self.log_dir {
            Some(d) => (d.clone(), false),
            None => (
                std::env::temp_dir().join(format!("agentshape-ask-{id}")),
                true,
            ),
        };
        let spec = SessionSpec {
            id,
            parent_id: None,
            tier: 1,
            profile: None,
            // The retry loop judges the answer against the original schema.
            validator: None,
            markers: None,
            methods: agentshape_core::extract::Methods::default(),
            coerce: false,
            agent: AgentKind::Claude,
            model: Some(req.model.clone()),
            source: Source::Spawn(AgentCommand {
                program: self.program.clone(),
                args,
                env: Vec::new(),
                pass_env: Vec::new(),
                stdin: Some(render_prompt(&req.messages)),
            }),
            log_dir: log_dir.clone(),
            timeout: self.timeout,
            partial: false,
            handoff: Vec::new(),
            escalated_for: Vec::new(),
            process: ProcessOptions::default(),
            feed: crate::feed::FeedOptions::default(),
        };
        let outcome = run_session(&spec, None, &Hub::default()).await;
        if temporary {
            let _ = std::fs::remove_dir_all(&log_dir);
        }
        let outcome = outcome.map_err(|e| ProviderError::Agent {
            provider: Kind::ClaudeCode.as_str(),
            message: e.to_string(),
            category: ErrorCategory::Api,
        })?;
        if let Some(program) = outcome.not_found {
            return Err(ProviderError::NotFound { program });
        }
        let record = &outcome.record;
        let agent_error = |category: ErrorCategory, fallback: String| ProviderError::Agent {
            provider: Kind::ClaudeCode.as_str(),
            message: record.error.clone().unwrap_or(fallback),
            category,
        };
        // Runtime's Note [Session status].
        match record.status.as_str() {
            "timeout" => {
                let secs = self.timeout.map_or(0.0, |t| t.as_secs_f64());
                Err(ProviderError::Agent {
                    provider: Kind::ClaudeCode.as_str(),
                    message: format!("timeout: the agent was killed after {secs}s"),
                    category: ErrorCategory::Timeout,
                })
            }
            "failed" => Err(agent_error(
                ErrorCategory::Api,
                "stream ended before a result".to_owned(),
            )),
            // `completed`, and `error`: an `is_error` result is an answer whose
            // category the retry loop reports (with its usage and cost).
            _ => {
                let summary = outcome.extraction.run.map(|b| *b).unwrap_or_default();
                Ok(Reply {
                    status: None,
                    retry_after: None,
                    summary,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(role: Role, content: &str) -> Message {
        Message {
            role,
            content: content.to_owned(),
        }
    }

    fn req(messages: Vec<Message>, system: Option<&str>) -> Request {
        Request {
            model: "sonnet".to_owned(),
            system: system.map(str::to_owned),
            messages,
            schema: json!({"type": "object", "required": ["ok"]}),
            schema_name: "s".to_owned(),
            max_tokens: 10,
            tools: Vec::new(),
        }
    }

    #[test]
    fn argv_carries_prompt_schema_model_and_system() {
        let cases = [
            (
                req(vec![msg(Role::User, "Is it green?")], None),
                vec![
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--json-schema",
                    r#"{"type":"object","required":["ok"]}"#,
                    "--model",
                    "sonnet",
                ],
            ),
            (
                req(vec![msg(Role::User, "--help me")], Some("Be terse.")),
                vec![
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--json-schema",
                    r#"{"type":"object","required":["ok"]}"#,
                    "--model",
                    "sonnet",
                    "--append-system-prompt",
                    "Be terse.",
                ],
            ),
        ];
        for (r, want) in cases {
            assert_eq!(argv(&r), want);
        }
    }

    #[test]
    fn the_argument_over_the_cap_is_named() {
        let big = "x".repeat(MAX_ARG_BYTES);
        let args = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let cases = [
            (args(&["-p", "--model", "sonnet"]), None),
            (
                args(&["-p", "--json-schema", &big]),
                Some(("--json-schema", big.len())),
            ),
            (args(&[&big]), Some(("an argument", big.len()))),
            (args(&["-p", "--x", &big[1..]]), None),
        ];
        for (a, want) in cases {
            assert_eq!(over_limit(&a), want);
        }
    }

    #[test]
    fn a_conversation_renders_into_one_prompt() {
        let messages = vec![
            msg(Role::User, "Q"),
            msg(Role::Assistant, "{\"ok\":1}"),
            msg(Role::User, "- /ok: 1 is not of type \"boolean\""),
            msg(Role::Assistant, "nope"),
            msg(Role::User, "no JSON"),
        ];
        assert_eq!(
            render_prompt(&messages),
            "Q\n\n--- Your previous reply (attempt 1) ---\n{\"ok\":1}\
             \n\n--- Feedback on that reply ---\n- /ok: 1 is not of type \"boolean\"\
             \n\n--- Your previous reply (attempt 2) ---\nnope\
             \n\n--- Feedback on that reply ---\nno JSON"
        );
        assert_eq!(render_prompt(&messages[..1]), "Q");
    }
}
