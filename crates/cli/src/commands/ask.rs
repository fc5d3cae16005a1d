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
        // `Local` is not reached: `run` refuses it first, until the engine lands.
        ProviderArg::Ollama | ProviderArg::Local => Kind::Ollama,
        ProviderArg::ClaudeCode => Kind::ClaudeCode,
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

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
    if args.provider == ProviderArg::Local {
        return Err(CliError::Usage(
            "`ask --provider local` needs the local engine, which this build does not have".into(),
        )
        .into());
    }
    let kind = kind_of(args.provider);
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
    // Fix the schema only when the provider would reject it as written.
    let dialect = kind.dialect();
    let rejects = lint(&schema, dialect)
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
    let default_timeout = if kind == Kind::ClaudeCode { 600 } else { 120 };
    let timeout = Duration::from_secs(args.timeout.unwrap_or(default_timeout).max(1));
    let client: Box<dyn Provider> = if kind == Kind::ClaudeCode {
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
    let req = Request {
        model: args.model.clone(),
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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(ask(client.as_ref(), req, &opts));
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
        obj.insert("model".into(), json!(args.model));
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
            args.model,
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
        if let (Some(value), true) = (&e.value, e.method != Method::None) {
            out.line(&serde_json::to_string_pretty(value)?)?;
        }
    }
    out.flush()?;
    Ok(exit)
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
