//! Validate-and-retry: one structured-output call, extracted and validated,
//! retried with the validation errors fed back; HTTP failures retried with
//! bounded, jittered exponential backoff.
//!
//! Note [Two retry budgets]: a 429, a 5xx, a connection failure or a body cut
//! short (Note [Body cap]) is retried
//! up to `http_retries` times after a delay (the server's `retry-after` when
//! given, else `base * 2^n`, jittered to between half and all of it, capped at
//! `max`); the conversation is not changed. An answer that is missing or
//! invalid is retried up to `retries` times by appending the model's reply and
//! a user turn listing the validation errors. 401/403, other 4xx, a refusal
//! and a cut at the token limit end the call at once: repeating the same
//! request cannot fix them; so do a redirect to another origin and a body
//! over the cap or not JSON (`bad_response`). Neither are an agent process's failures (a
//! missing executable, a timeout, a crash before its result, an `is_error`
//! result): the agent CLI retries its own API calls, and it already had its
//! whole turn.

use std::fmt::Write as _;
use std::time::Duration;

use agentshape_core::extract::{ExtractOptions, extract_run};
use agentshape_core::lint::Fixed;
use agentshape_core::summary::Usage;
use agentshape_core::validate::Validator;
use agentshape_core::{ErrorCategory, Extraction, Method, RunSummary, Violation};
use serde::Serialize;
use serde_json::Value;

use crate::provider::{Message, Provider, ProviderError, Request, Role};

/// Bounded exponential backoff for HTTP retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Delay before the first retry (before jitter).
    pub base: Duration,
    /// Longest delay, `retry-after` included.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(500),
            max: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The delay before retry number `n` (0-based). `retry_after` wins when
    /// given; `jitter` in `[0, 1]` scales the computed delay to between half
    /// and all of it. Both are capped at `max`.
    pub fn delay(&self, n: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        if let Some(after) = retry_after {
            return after.min(self.max);
        }
        let exp = self.base.saturating_mul(1u32 << n.min(16));
        exp.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
            .min(self.max)
    }
}

/// The settings of one [`ask`].
#[derive(Debug, Clone, Copy)]
pub struct AskOptions<'a> {
    /// The ORIGINAL schema: the final judge.
    pub validator: &'a Validator,
    /// The schema sent, when it was fixed for the provider's dialect; answers
    /// are mapped back before validation.
    pub fixed: Option<&'a Fixed>,
    /// Validator of the fixed schema (picks the candidate in the fixed shape).
    pub fixed_validator: Option<&'a Validator>,
    /// Validation retries (default 2).
    pub retries: u32,
    /// HTTP retries for 429, 5xx, connection failures and bodies cut short (default 3).
    pub http_retries: u32,
    /// Backoff of the HTTP retries.
    pub backoff: Backoff,
}

/// One call of an [`ask`].
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    /// 1-based call number.
    pub attempt: u32,
    /// HTTP status (`null` when the connection failed).
    pub status: Option<u16>,
    /// Which extraction step found the value (`none` when nothing was).
    pub method: Method,
    /// Whether this answer was valid.
    pub valid: bool,
    /// Validation errors of this answer, against the original schema.
    pub errors: Vec<Violation>,
    /// The error of this call, if any.
    pub error: Option<String>,
    /// Its category.
    pub error_category: Option<ErrorCategory>,
    /// Token usage of this call.
    pub usage: Usage,
    /// Cost of this call, when the provider reports one (Claude Code's result line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How long we waited before the next call, when we did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
}

/// The outcome of an [`ask`].
#[derive(Debug, Clone)]
pub struct AskOutcome {
    /// The last extraction (value mapped back to the original shape), with
    /// the last run summary in `run`.
    pub extraction: Extraction,
    /// Every call made.
    pub attempts: Vec<Attempt>,
    /// Usage summed over every call.
    pub usage: Usage,
    /// Cost summed over every call that reported one (`None` when none did).
    pub cost_usd: Option<f64>,
    /// The agent executable that does not exist, when that ended the ask.
    pub not_found: Option<String>,
    /// Why the ask failed, when it did.
    pub error: Option<String>,
    /// The category (DESIGN.md's list): provider errors, `refusal`,
    /// `max_tokens`, or `structured_output_retries` when retries ran out.
    pub error_category: Option<ErrorCategory>,
}

/// How an ask ended, for exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A valid value.
    Valid,
    /// A value that is still invalid after the retries.
    Invalid,
    /// No value after the retries.
    Nothing,
    /// The provider (or the model's refusal or token limit) ended it.
    ProviderError,
}

impl AskOutcome {
    /// How it ended.
    pub fn verdict(&self) -> Verdict {
        match self.error_category {
            Some(ErrorCategory::StructuredOutputRetries) | None => {}
            Some(_) => return Verdict::ProviderError,
        }
        if self.extraction.valid {
            Verdict::Valid
        } else if self.extraction.method == Method::None {
            Verdict::Nothing
        } else {
            Verdict::Invalid
        }
    }
}

/// The user turn that feeds validation errors back.
pub fn feedback(extraction: &Extraction, empty: bool) -> String {
    if empty {
        return "Your previous reply was empty. Reply with only a JSON value that matches the schema.".to_owned();
    }
    if extraction.method == Method::None {
        return "Your previous reply contained no JSON value. Reply with only a JSON value that matches the schema.".to_owned();
    }
    let mut text = String::from("Your previous reply did not validate against the JSON Schema:\n");
    for e in extraction.errors.iter().take(20) {
        let at = if e.instance_path.is_empty() {
            "(root)"
        } else {
            &e.instance_path
        };
        let _ = writeln!(text, "- {at}: {}", e.message);
    }
    text.push_str("Reply again with only the corrected JSON value.");
    text
}

fn cost_of(s: &RunSummary) -> Option<f64> {
    s.result.as_ref().and_then(|r| r.total_cost_usd)
}

fn usage_of(s: &RunSummary) -> Usage {
    s.result
        .as_ref()
        .map(|r| r.usage.clone())
        .unwrap_or_default()
}

/// Extract and validate one decoded answer.
fn judge(summary: &RunSummary, opts: &AskOptions<'_>) -> Extraction {
    let mut summary = summary.clone();
    // The provider's native structured output: the whole text is the JSON.
    if summary.structured_output.is_none() {
        if let Ok(v) = serde_json::from_str::<Value>(summary.output.trim()) {
            if v.is_object() || v.is_array() {
                summary.structured_output = Some(v);
            }
        }
    }
    match (opts.fixed, opts.fixed_validator) {
        (Some(fixed), Some(fv)) => {
            let mut e = extract_run(
                &summary,
                &ExtractOptions {
                    validator: Some(fv),
                    ..ExtractOptions::default()
                },
            );
            if let Some(v) = e.value.take() {
                let back = fixed.map_back(v);
                e.errors = opts.validator.errors(&back);
                e.valid = e.errors.is_empty();
                e.value = Some(back);
            }
            e
        }
        _ => extract_run(
            &summary,
            &ExtractOptions {
                validator: Some(opts.validator),
                ..ExtractOptions::default()
            },
        ),
    }
}

fn status_category(status: u16) -> ErrorCategory {
    match status {
        401 | 403 => ErrorCategory::Auth,
        404 => ErrorCategory::NotFound,
        408 => ErrorCategory::Timeout,
        429 => ErrorCategory::RateLimit,
        _ => ErrorCategory::Api,
    }
}

/// Ask `provider` for a value matching the schema of `req`, validating and
/// retrying as in Note [Two retry budgets].
pub async fn ask(provider: &dyn Provider, mut req: Request, opts: &AskOptions<'_>) -> AskOutcome {
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut usage = Usage::default();
    let mut cost: Option<f64> = None;
    let mut http_failures = 0u32;
    let mut validation_retries = 0u32;
    let mut last = Extraction::none();
    loop {
        let n = u32::try_from(attempts.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let reply = provider.call(&req).await;
        let (status, retry_after, summary) = match reply {
            Err(e) => {
                let category = match &e {
                    ProviderError::Transport { timeout: true, .. } => ErrorCategory::Timeout,
                    ProviderError::NotFound { .. } => ErrorCategory::NotFound,
                    ProviderError::Agent { category, .. } => *category,
                    ProviderError::BadResponse { .. } => ErrorCategory::BadResponse,
                    _ => ErrorCategory::Api,
                };
                let transient = e.is_transient();
                let mut a = attempt(
                    n,
                    e.status(),
                    &Extraction::none(),
                    Some(e.to_string()),
                    Some(category),
                    Usage::default(),
                );
                if transient && http_failures < opts.http_retries {
                    let d = opts.backoff.delay(http_failures, None, fastrand::f64());
                    http_failures += 1;
                    a.delay_ms = Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                    attempts.push(a);
                    tokio::time::sleep(d).await;
                    continue;
                }
                attempts.push(a);
                let mut out = done(last, attempts, usage, Some(e.to_string()), Some(category));
                out.cost_usd = cost;
                if let ProviderError::NotFound { program } = e {
                    out.not_found = Some(program);
                }
                return out;
            }
            Ok(r) => (r.status, r.retry_after, r.summary),
        };
        let this_usage = usage_of(&summary);
        usage.input_tokens += this_usage.input_tokens;
        usage.output_tokens += this_usage.output_tokens;
        let this_cost = cost_of(&summary);
        if let Some(c) = this_cost {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
        let code = status.unwrap_or(200);
        if !(200..300).contains(&code) {
            let category = match summary.error_category {
                Some(c) if !c.is_heuristic() && c != ErrorCategory::Api => c,
                _ => status_category(code),
            };
            let text = summary
                .result
                .as_ref()
                .and_then(|r| r.text.clone())
                .or_else(|| summary.error.clone());
            let error = format!(
                "HTTP {code}{}",
                text.map(|t| format!(": {t}")).unwrap_or_default()
            );
            let mut a = attempt(
                n,
                status,
                &Extraction::none(),
                Some(error.clone()),
                Some(category),
                this_usage,
            );
            let transient = code == 429 || code >= 500 || code == 408;
            if transient && http_failures < opts.http_retries {
                let d = opts
                    .backoff
                    .delay(http_failures, retry_after, fastrand::f64());
                http_failures += 1;
                a.delay_ms = Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                a.cost_usd = this_cost;
                attempts.push(a);
                tokio::time::sleep(d).await;
                continue;
            }
            a.cost_usd = this_cost;
            attempts.push(a);
            last.run = Some(Box::new(summary));
            return with_cost(
                done(last, attempts, usage, Some(error), Some(category)),
                cost,
            );
        }
        let mut extraction = judge(&summary, opts);
        // A native structured output with no text (Claude Code) is not empty.
        let empty = summary.output.trim().is_empty() && summary.structured_output.is_none();
        let stop = summary.error_category.filter(|c| !c.is_heuristic());
        let error = summary.error.clone().or_else(|| {
            stop.map(|_| {
                summary
                    .result
                    .as_ref()
                    .and_then(|r| r.text.clone())
                    .unwrap_or_default()
            })
        });
        let mut a = attempt(n, status, &extraction, error.clone(), stop, this_usage);
        a.cost_usd = this_cost;
        // The reply fed back is the value the model gave natively when it
        // gave one (Claude Code's `structured_output`; its text is prose).
        let reply_text = summary
            .structured_output
            .as_ref()
            .map_or_else(|| summary.output.clone(), Value::to_string);
        extraction.run = Some(Box::new(summary));
        if let Some(category) = stop {
            // Refusal, token limit, or an error reported in a 2xx body.
            attempts.push(a);
            return with_cost(
                done(extraction, attempts, usage, error, Some(category)),
                cost,
            );
        }
        if extraction.valid {
            attempts.push(a);
            return with_cost(done(extraction, attempts, usage, None, None), cost);
        }
        // Every failed attempt says why, in words (its `errors` list the details).
        a.error = Some(if empty {
            "empty content".to_owned()
        } else if extraction.method == Method::None {
            "no JSON value in the reply".to_owned()
        } else {
            let n = extraction.errors.len();
            format!(
                "not valid against the schema ({n} error{})",
                if n == 1 { "" } else { "s" }
            )
        });
        attempts.push(a);
        if validation_retries >= opts.retries {
            let (error, category) = if opts.retries == 0 {
                (None, None)
            } else {
                let what = if empty {
                    "empty content"
                } else if extraction.method == Method::None {
                    "no structured output"
                } else {
                    "output still invalid"
                };
                (
                    Some(format!("{what} after {} retries", opts.retries)),
                    Some(ErrorCategory::StructuredOutputRetries),
                )
            };
            return with_cost(done(extraction, attempts, usage, error, category), cost);
        }
        validation_retries += 1;
        req.messages.push(Message {
            role: Role::Assistant,
            content: if empty {
                "(empty reply)".to_owned()
            } else {
                reply_text
            },
        });
        req.messages.push(Message {
            role: Role::User,
            content: feedback(&extraction, empty),
        });
        last = extraction;
    }
}

fn attempt(
    n: u32,
    status: Option<u16>,
    e: &Extraction,
    error: Option<String>,
    error_category: Option<ErrorCategory>,
    usage: Usage,
) -> Attempt {
    Attempt {
        attempt: n,
        status,
        method: e.method,
        valid: e.valid,
        errors: e.errors.clone(),
        error,
        error_category,
        usage,
        cost_usd: None,
        delay_ms: None,
    }
}

fn with_cost(mut outcome: AskOutcome, cost: Option<f64>) -> AskOutcome {
    outcome.cost_usd = cost;
    outcome
}

fn done(
    extraction: Extraction,
    attempts: Vec<Attempt>,
    usage: Usage,
    error: Option<String>,
    error_category: Option<ErrorCategory>,
) -> AskOutcome {
    AskOutcome {
        extraction,
        attempts,
        usage,
        cost_usd: None,
        not_found: None,
        error,
        error_category,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_exponential_jittered_capped_and_honours_retry_after() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        let cases = [
            (0, None, 1.0, 100),
            (0, None, 0.0, 50),
            (2, None, 1.0, 400),
            (5, None, 1.0, 1000),
            (0, Some(Duration::from_millis(300)), 0.0, 300),
            (0, Some(Duration::from_secs(60)), 0.0, 1000),
        ];
        for (n, after, jitter, want_ms) in cases {
            assert_eq!(
                b.delay(n, after, jitter),
                Duration::from_millis(want_ms),
                "{n} {after:?} {jitter}"
            );
        }
    }
}
