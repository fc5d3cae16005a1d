//! `agentshape ask`: one provider call with native structured output,
//! extraction, validation against the original schema, and bounded retry.
//! `--provider claude-code` runs the Claude Code CLI through the agent runner
//! instead of an HTTP call; the retry loop is the same.

use std::io::{Read, Write};
use std::time::Duration;

use agentshape_core::Method;
use agentshape_core::lint::{Severity, fix, lint};
use agentshape_core::validate::Validator;
use agentshape_runtime::provider::claude_code::ClaudeCode;
use agentshape_runtime::provider::{self, Config, Kind, Message, Provider, Request, Role, Secret};
use agentshape_runtime::retry::{AskOptions, Backoff, Verdict, ask};
use serde_json::{Value, json};

use crate::args::{AskArgs, ProviderArg};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style, clean};

fn kind_of(p: ProviderArg) -> Kind {
    match p {
        ProviderArg::Anthropic => Kind::Anthropic,
        ProviderArg::Openai => Kind::OpenaiChat,
        ProviderArg::OpenaiResponses => Kind::OpenaiResponses,
        ProviderArg::Gemini => Kind::Gemini,
        ProviderArg::Ollama => Kind::Ollama,
        ProviderArg::ClaudeCode => Kind::ClaudeCode,
        ProviderArg::Local => Kind::Local,
    }
}

/// Why `--provider local` is refused by a build without the engine.
#[cfg(not(feature = "local"))]
const NO_LOCAL: &str = "--provider local: this agentshape was built without the `local` feature (rebuild with default features)";

/// The local-only flags given with another provider: a usage error (they
/// would be silently ignored otherwise).
fn local_only_flags(args: &AskArgs) -> Option<&'static str> {
    [
        (args.temperature.is_some(), "--temperature"),
        (args.threads.is_some(), "--threads"),
        (args.seed.is_some(), "--seed"),
        (args.unconstrained, "--unconstrained"),
        (args.live, "--live"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// The local provider for `args`, after the checks that need no model:
/// the schema compiles into a grammar (Note [Compact JSON under the
/// grammar] in runtime), then the model resolves and loads. A pinned
/// model's file that is not the pinned one keeps its own error (exit 65,
/// runtime's Note [Pinned models are checked at load]); every other setup
/// failure is a usage error.
#[cfg(feature = "local")]
fn local_provider(
    args: &AskArgs,
    schema: &Value,
    hub: Option<&agentshape_runtime::hub::Hub>,
) -> anyhow::Result<agentshape_runtime::provider::local::Local> {
    use agentshape_runtime::model::ModelError;
    use agentshape_runtime::provider::local::engine::{
        DEFAULT_SEED, SampleOptions, default_threads,
    };
    use agentshape_runtime::provider::local::{Live, Local, SetupError, grammar};
    if !args.unconstrained {
        grammar::check(schema).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let opts = SampleOptions {
        max_tokens: args.max_tokens,
        temperature: args.temperature.unwrap_or(0.0),
        seed: args.seed.unwrap_or(DEFAULT_SEED),
        threads: args.threads.unwrap_or_else(default_threads),
        // Per reply, like an HTTP provider's request timeout.
        timeout: Some(std::time::Duration::from_secs(
            args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1),
        )),
    };
    let local =
        Local::open(args.model.as_deref(), opts, !args.unconstrained).map_err(|e| match e {
            SetupError::Model(
                m @ (ModelError::Tampered { .. } | ModelError::Unreadable { .. }),
            ) => anyhow::Error::from(m),
            e => CliError::Usage(e.to_string()).into(),
        })?;
    if !local.engine().has_chat_template() {
        let _ = writeln!(
            std::io::stderr(),
            "agentshape: warning: {} has no chat template; using a plain prompt (system, blank line, user)",
            local.engine().path().display()
        );
    }
    Ok(match hub {
        Some(hub) => local.with_live(Live {
            hub: hub.clone(),
            session_id: "ask".to_owned(),
        }),
        None => local,
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `--timeout`'s default for every provider but claude-code (600 s): one
/// HTTP request, or one reply sampled by the local engine.
const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Run `ask`.
///
/// Exit codes: 0 valid; 1 still invalid after the retries; 2 nothing found
/// after the retries; 3 the provider failed (auth, rate limit, api, timeout,
/// a redirect to another origin, a body over `--max-body-bytes`, cut short
/// or not JSON),
/// refused, or stopped at the token limit (claude-code: an `is_error` result,
/// a timeout, a crash before the result); 64 bad arguments or missing key;
/// 127 the claude-code executable does not exist.
///
/// # Errors
/// A missing or bad schema, a missing key, an unreadable prompt, or a failing stdout.
pub fn run(args: &AskArgs) -> anyhow::Result<Exit> {
    let kind = kind_of(args.provider);
    if kind != Kind::Local {
        if let Some(flag) = local_only_flags(args) {
            return Err(CliError::Usage(format!("{flag} is only for --provider local")).into());
        }
    }
    #[cfg(not(feature = "local"))]
    if kind == Kind::Local {
        return Err(CliError::Usage(NO_LOCAL.into()).into());
    }
    let model = match (&args.model, kind) {
        (Some(m), _) => m.clone(),
        (None, Kind::Local) => agentshape_runtime::model::DEFAULT_MODEL.to_owned(),
        (None, _) => {
            return Err(CliError::Usage(format!(
                "--model is required for --provider {}",
                kind.as_str()
            ))
            .into());
        }
    };
    let validator = input::load_schema(&args.schema)?;
    let schema = validator.schema().clone();
    let prompt = if args.prompt == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::Usage(format!("cannot read the prompt from stdin: {e}")))?;
        s
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err(CliError::Usage("the prompt is empty".into()).into());
    }
    // Fix the schema only when the provider would reject it as written. The
    // local engine compiles the schema as written (or refuses it, exit 64).
    let dialect = kind.dialect();
    let rejects = kind != Kind::Local
        && lint(&schema, dialect)
            .iter()
            .any(|f| f.severity == Severity::Error);
    let fixed = rejects
        .then(|| fix(&schema, dialect))
        .filter(agentshape_core::lint::Fixed::changed);
    let fixed_validator = match &fixed {
        Some(f) => Some(Validator::new(&f.schema).map_err(|e| {
            CliError::Usage(format!("the schema fixed for {}: {e}", dialect.as_str()))
        })?),
        None => None,
    };
    let default_timeout = if kind == Kind::ClaudeCode {
        600
    } else {
        DEFAULT_TIMEOUT_SECS
    };
    let timeout = Duration::from_secs(args.timeout.unwrap_or(default_timeout).max(1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let hub = args.live.then(agentshape_runtime::hub::Hub::default);
    let printer = hub.as_ref().map(|h| {
        let _guard = rt.enter();
        crate::commands::run::spawn_live_printer(h)
    });
    #[cfg(feature = "local")]
    let mut local = None;
    let client: Box<dyn Provider> = if kind == Kind::Local {
        #[cfg(feature = "local")]
        {
            let l = std::sync::Arc::new(local_provider(args, &schema, hub.as_ref())?);
            local = Some(std::sync::Arc::clone(&l));
            Box::new(Shared(l))
        }
        #[cfg(not(feature = "local"))]
        return Err(CliError::Usage(NO_LOCAL.into()).into());
    } else if kind == Kind::ClaudeCode {
        Box::new(ClaudeCode::new(
            args.claude_bin.clone(),
            Some(timeout),
            args.log_dir.clone(),
        ))
    } else {
        let config = Config {
            base_url: args.base_url.clone().or_else(|| env(kind.base_url_var())),
            key: kind
                .key_var()
                .or(kind.optional_key_var())
                .and_then(env)
                .map(Secret::new),
            timeout,
            max_body_bytes: args.max_body_bytes,
        };
        provider::build(kind, config).map_err(|e| CliError::Usage(e.to_string()))?
    };
    // Note [Live export never fails a run] in `otel`: set up before the
    // first call (a bad --otlp-* is 64), sent after the last.
    let live = crate::otel::Live::start(&args.otlp, crate::otel::FINISH, 1)?;
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let client: Box<dyn Provider> = if live.is_some() {
        Box::new(Timed {
            inner: client,
            calls: std::sync::Arc::clone(&calls),
        })
    } else {
        client
    };
    let started_ms = agentshape_store::time::now_ms();
    let prompt_text = prompt.clone();
    let req = Request {
        model: model.clone(),
        system: args.system.clone(),
        messages: vec![Message {
            role: Role::User,
            content: prompt,
        }],
        schema: fixed
            .as_ref()
            .map_or_else(|| schema.clone(), |f| f.schema.clone()),
        schema_name: schema_name(&args.schema),
        max_tokens: args.max_tokens,
        tools: Vec::new(),
    };
    let opts = AskOptions {
        validator: &validator,
        fixed: fixed.as_ref(),
        fixed_validator: fixed_validator.as_ref(),
        retries: args.retries,
        http_retries: args.http_retries,
        backoff: Backoff {
            base: Duration::from_millis(args.backoff_ms),
            max: Duration::from_millis(args.max_backoff_ms),
        },
    };
    let (outcome, timing) = rt.block_on(async move {
        let outcome = ask(client.as_ref(), req, &opts).await;
        #[cfg(feature = "local")]
        let timing = local.and_then(|l| l.timing());
        #[cfg(not(feature = "local"))]
        let timing: Option<()> = None;
        // Every clone of the hub gone, the printer drains what is left and ends.
        drop(client);
        drop(hub);
        if let Some(p) = printer {
            let _ = p.await;
        }
        (outcome, timing)
    });
    let otlp = live.map(|l| {
        let calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
        let facts = AskFacts {
            kind,
            model: &model,
            schema: &args.schema,
            prompt: &prompt_text,
            started_ms,
            calls: &calls,
        };
        l.send(&ask_trace(&facts, &outcome));
        l.finish(crate::otel::FINISH)
    });
    let exit = match outcome.verdict() {
        _ if outcome.not_found.is_some() => Exit::NotFound,
        Verdict::Valid => Exit::Ok,
        Verdict::Invalid => Exit::Invalid,
        Verdict::Nothing => Exit::NoOutput,
        Verdict::ProviderError => Exit::AgentError,
    };
    if let Some(name) = &outcome.not_found {
        let _ = writeln!(
            std::io::stderr(),
            "agentshape: agent executable not found: {name}"
        );
    }
    let mut out = Out::new(args.output);
    if out.json {
        let mut obj = match serde_json::to_value(&outcome.extraction) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        obj.insert("attempts".into(), serde_json::to_value(&outcome.attempts)?);
        obj.insert("usage".into(), serde_json::to_value(&outcome.usage)?);
        obj.insert("cost_usd".into(), json!(outcome.cost_usd));
        obj.insert("provider".into(), json!(kind.as_str()));
        obj.insert("model".into(), json!(model));
        if let Some(t) = &timing {
            obj.insert("timing".into(), serde_json::to_value(t)?);
        }
        obj.insert("error".into(), json!(outcome.error));
        obj.insert(
            "error_category".into(),
            json!(
                outcome
                    .error_category
                    .map(agentshape_core::ErrorCategory::as_str)
            ),
        );
        obj.insert("schema_fixed".into(), json!(fixed.is_some()));
        if let Some(r) = &otlp {
            obj.insert("otlp".into(), crate::otel::report_json(r));
        }
        out.json_line(&Value::Object(obj))?;
    } else {
        let e = &outcome.extraction;
        let verdict = match exit {
            Exit::Ok => out.paint(Style::Ok, "valid"),
            _ => out.paint(
                Style::Bad,
                outcome.error_category.map_or("invalid", |c| c.as_str()),
            ),
        };
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "{} {}: {verdict} via {} after {} attempt(s), {} in / {} out tokens{}{}",
            kind.as_str(),
            model,
            e.method.as_str(),
            outcome.attempts.len(),
            outcome.usage.input_tokens,
            outcome.usage.output_tokens,
            outcome
                .cost_usd
                .map(|c| format!(", ${c:.4}"))
                .unwrap_or_default(),
            outcome
                .error
                .as_ref()
                .map(|m| format!(": {}", clean(m)))
                .unwrap_or_default()
        );
        for v in e.errors.iter().take(10) {
            let _ = writeln!(err, "  {} {}", clean(&v.instance_path), clean(&v.message));
        }
        if let Some(r) = &otlp {
            let _ = writeln!(err, "  {}", crate::otel::report_line(r));
        }
        if let (Some(value), true) = (&e.value, e.method != Method::None) {
            out.line(&serde_json::to_string_pretty(value)?)?;
        }
    }
    out.flush()?;
    Ok(exit)
}

/// A shared provider behind the `Box<dyn Provider>` the loop takes, so its
/// timing can be read after the ask.
#[cfg(feature = "local")]
struct Shared<P>(std::sync::Arc<P>);

#[cfg(feature = "local")]
impl<P: Provider> Provider for Shared<P> {
    fn kind(&self) -> Kind {
        self.0.kind()
    }

    fn body(&self, req: &Request) -> Value {
        self.0.body(req)
    }

    fn call<'a>(
        &'a self,
        req: &'a Request,
    ) -> agentshape_runtime::provider::BoxFuture<
        'a,
        Result<agentshape_runtime::provider::Reply, agentshape_runtime::provider::ProviderError>,
    > {
        self.0.call(req)
    }
}

/// A schema name providers accept (`[A-Za-z0-9_-]`, at most 64 characters).
fn schema_name(path: &std::path::Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("answer");
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".to_owned()
    } else {
        name
    }
}

/// A provider that notes when each call started and ended, for the `chat`
/// spans of an exported `ask` (the attempts the retry loop reports carry
/// no times).
struct Timed {
    inner: Box<dyn Provider>,
    calls: std::sync::Arc<std::sync::Mutex<Vec<(i64, i64)>>>,
}

impl Provider for Timed {
    fn kind(&self) -> Kind {
        self.inner.kind()
    }

    fn body(&self, req: &Request) -> Value {
        self.inner.body(req)
    }

    fn call<'a>(
        &'a self,
        req: &'a Request,
    ) -> agentshape_runtime::provider::BoxFuture<
        'a,
        Result<agentshape_runtime::provider::Reply, agentshape_runtime::provider::ProviderError>,
    > {
        Box::pin(async move {
            let start = agentshape_store::time::now_ms();
            let result = self.inner.call(req).await;
            if let Ok(mut c) = self.calls.lock() {
                c.push((start, agentshape_store::time::now_ms()));
            }
            result
        })
    }
}

/// What an exported `ask` was, beside its outcome.
struct AskFacts<'a> {
    kind: Kind,
    model: &'a str,
    schema: &'a std::path::Path,
    prompt: &'a str,
    started_ms: i64,
    /// (start, end) of each provider call, in order.
    calls: &'a [(i64, i64)],
}

/// An `ask` as a trace: a `chat` span per attempt, an `apply_guardrail`
/// span per answer validated, under one `invoke_agent ask` root.
fn ask_trace(
    f: &AskFacts<'_>,
    outcome: &agentshape_runtime::retry::AskOutcome,
) -> agentshape_otel::SessionTrace {
    use agentshape_otel::session::{ChatCall, Check, SessionTrace, Usage};
    let now = agentshape_store::time::now_ms();
    let id = agentshape_runtime::runner::new_session_id();
    let mut t = SessionTrace::new(&id, "ask", f.started_ms);
    t.provider = agentshape_otel::semconv::provider_of(f.kind.as_str()).map(str::to_owned);
    t.model = Some(f.model.to_owned());
    t.ended_ms = Some(now);
    let name = f.schema.display().to_string();
    t.profile = Some(name.clone());
    t.usage = Usage {
        input: outcome.usage.input_tokens,
        output: outcome.usage.output_tokens,
        ..Usage::default()
    };
    t.cost_usd = outcome.cost_usd;
    match outcome.verdict() {
        Verdict::Valid => "completed",
        Verdict::Invalid | Verdict::Nothing => "failed",
        Verdict::ProviderError => "error",
    }
    .clone_into(&mut t.status);
    t.error.clone_from(&outcome.error);
    t.error_category = outcome
        .error_category
        .map(|c| agentshape_core::ErrorCategory::as_str(c).to_owned());
    t.messages.push(agentshape_otel::session::Message {
        role: "user".into(),
        text: f.prompt.to_owned(),
        at_ms: f.started_ms,
    });
    for (i, a) in outcome.attempts.iter().enumerate() {
        let (start, end) = f.calls.get(i).copied().unwrap_or((now, now));
        t.chats.push(ChatCall {
            attempt: a.attempt,
            model: f.model.to_owned(),
            started_ms: start,
            ended_ms: end,
            usage: Usage {
                input: a.usage.input_tokens,
                output: a.usage.output_tokens,
                ..Usage::default()
            },
            http_status: a.status,
            // An answer that does not validate is the guardrail's finding,
            // not a failed call.
            error: a.error_category.and(a.error.clone()),
            error_category: a.error_category.map(|c| c.as_str().to_owned()),
            input: Some(f.prompt.to_owned()),
            output: None,
            ..ChatCall::default()
        });
        if a.error_category.is_none() {
            t.checks.push(Check {
                key: format!("attempt-{}", a.attempt),
                name: name.clone(),
                started_ms: end,
                ended_ms: end,
                verdict: agentshape_otel::stored::verdict_word(a.valid, Some(a.method.as_str()))
                    .to_owned(),
                failing_paths: a.errors.iter().map(|v| v.instance_path.clone()).collect(),
                method: Some(a.method.as_str().to_owned()),
                // A failed answer is asked again: a guardrail (otel's
                // semconv Note [Guardrail or evaluation]).
                blocking: true,
                ..Check::default()
            });
        }
    }
    t
}
