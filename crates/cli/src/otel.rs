//! OpenTelemetry export for the commands (issue 31): the flags and the
//! environment resolved into a configuration, the live exporter of a
//! command, and what the runtime holds turned into `agentshape-otel`'s
//! plain types (the otel crate does not know the runtime).
//!
//! Note \[Live export never fails a run\]: `run`, `ops`, `watch`, `ask` and
//! `hook` send their spans from a background thread through a bounded queue
//! (otel's Note \[Own batching\]); at its end the command waits for them a
//! bounded time ([`FINISH`], the hook less: [`HOOK_FINISH`]). A collector that
//! is down, slow or refuses is one warning line on stderr (the first
//! failure, naming the endpoint without credentials), and the spans are
//! dropped and counted in the command's summary (`otlp` in `--json`): the
//! run's own exit code and output stay what they would have been.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentshape_otel::content::Content;
use agentshape_otel::exporter::{ExportOptions, ExportReport, Exporter};
use agentshape_otel::live::{Folder, Sent};
use agentshape_otel::session::SessionTrace;
use agentshape_otel::spans::{SpanOptions, spans};
use agentshape_otel::{OtlpConfig, OtlpFlags};
use agentshape_runtime::hub::{Hub, HubBody};
use agentshape_runtime::runner::SessionOutcome;

use crate::args::OtlpArgs;
use crate::exit::CliError;
use crate::output::eprint;

/// How long a live command waits for its last spans at its end.
pub const FINISH: Duration = Duration::from_secs(3);

/// How long the hook waits for its spans, after its answer is written
/// (within the hook's own budget).
pub const HOOK_FINISH: Duration = Duration::from_millis(300);

/// The export configuration of `args` and the environment; `None`: off.
///
/// # Errors
/// A bad endpoint, header or resource attribute: a usage error (64), one
/// line without credentials.
pub fn config(args: &OtlpArgs) -> anyhow::Result<Option<OtlpConfig>> {
    let flags = OtlpFlags {
        endpoint: args.endpoint.clone(),
        headers: args.header.clone(),
        content: args.content,
    };
    OtlpConfig::resolve(&flags, &|name| std::env::var(name).ok())
        .map_err(|e| CliError::Usage(e.to_string()).into())
}

/// How spans are made under `config`: contents when asked, masked by the
/// process's masker (none under `--no-mask`).
pub fn span_options(config: &OtlpConfig) -> SpanOptions {
    SpanOptions {
        content: Content {
            enabled: config.content,
            masker: crate::mask::masker().cloned(),
            max_chars: 0,
        },
        skip_open_tools: false,
        // A price file that does not read is said by the commands that
        // price (`import`, `usage`); spans then carry no cost of ours.
        prices: crate::prices::load_prices().ok().map(std::sync::Arc::new),
    }
}

/// A command's live export (Note \[Live export never fails a run\]).
pub struct Live {
    exporter: Exporter,
    /// How spans are made.
    pub opts: SpanOptions,
    /// Contents are exported (keep texts when folding events).
    pub content: bool,
    sent: Mutex<Sent>,
}

impl Live {
    /// Start exporting for `args`; `None` when export is off. `timeout`
    /// bounds one request; `retries` are tried within it (a live command
    /// tries once more after 100 ms: a collector that is down must not hold
    /// the command's exit for the whole backoff).
    ///
    /// # Errors
    /// A bad configuration (64).
    pub fn start(
        args: &OtlpArgs,
        timeout: Duration,
        retries: usize,
    ) -> anyhow::Result<Option<Live>> {
        let Some(mut config) = config(args)? else {
            return Ok(None);
        };
        config.timeout = timeout;
        let opts = ExportOptions {
            retries,
            ..ExportOptions::default()
        };
        let warn: agentshape_otel::exporter::OnFirstError =
            Box::new(|line: &str| eprint(&format!("agentshape: warning: {line}")));
        let exporter = Exporter::start(&config, &opts, Some(warn))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        Ok(Some(Live {
            exporter,
            opts: span_options(&config),
            content: config.content,
            sent: Mutex::new(Sent::default()),
        }))
    }

    /// Send the spans of `trace` not sent before (otel's Note \[Sent once\]).
    pub fn send(&self, trace: &SessionTrace) {
        let fresh = self
            .sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .fresh(spans(trace, &self.opts));
        self.exporter.send(fresh);
    }

    /// Wait for what is queued, at most `deadline`, and say what happened.
    pub fn finish(self, deadline: Duration) -> ExportReport {
        self.exporter.finish(deadline)
    }
}

/// The events of every session on `hub`, folded as they come (with the
/// time they are seen), for the spans of each session at its end.
#[derive(Clone, Default)]
pub struct Folds {
    map: Arc<Mutex<HashMap<String, Folder>>>,
}

impl Folds {
    /// Fold what `hub` publishes until it closes (a task on the current runtime).
    pub fn spawn(hub: &Hub, keep_content: bool) -> (Folds, tokio::task::JoinHandle<()>) {
        let folds = Folds::default();
        let map = Arc::clone(&folds.map);
        let mut rx = hub.subscribe();
        let task = tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(msg) => {
                        let HubBody::Event { event } = &msg.body else {
                            continue;
                        };
                        let now = agentshape_store::time::now_ms();
                        let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
                        map.entry(msg.session_id.clone())
                            .or_insert_with(|| {
                                Folder::new(
                                    SessionTrace::new(&msg.session_id, "agent", now),
                                    keep_content,
                                )
                            })
                            .event(now, event);
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        (folds, task)
    }

    /// The trace of a finished session: its folded events and its record.
    pub fn take(&self, outcome: &SessionOutcome) -> SessionTrace {
        let base = self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&outcome.record.id)
            .map(|f| f.trace);
        agentshape_otel::stored::from_record(&outcome.record, base)
    }
}

/// The `otlp` object of a command's `--json` output.
pub fn report_json(r: &ExportReport) -> serde_json::Value {
    serde_json::to_value(r).unwrap_or_default()
}

/// The summary line of a command's human output.
pub fn report_line(r: &ExportReport) -> String {
    format!(
        "otlp: {} spans exported, {} dropped ({})",
        r.exported, r.dropped, r.endpoint
    )
}

/// Export the spans of one hook call, after its answer is written: within
/// [`HOOK_FINISH`] and what is left of the hook's budget, one request, no
/// retry; a failure or a bad setting is one warning line, never a failed
/// hook (runtime's Note \[A hook never breaks the session\]).
pub fn hook_export(
    args: &OtlpArgs,
    started: std::time::Instant,
    call: &agentshape_store::HookCall,
    input: &[u8],
) {
    let left = agentshape_runtime::hook::check::BUDGET.saturating_sub(started.elapsed());
    let deadline = HOOK_FINISH.min(left);
    let live = match Live::start(args, deadline.max(Duration::from_millis(1)), 0) {
        Ok(Some(l)) => l,
        Ok(None) => return,
        Err(e) => {
            eprint(&format!("agentshape hook: OpenTelemetry export off: {e}"));
            return;
        }
    };
    // Built only when exporting: a hook without a collector does no more.
    live.send(&hook_trace(call, input));
    let _ = live.finish(deadline);
}

/// The trace of one hook call: no root (the session's root is sent by
/// `import`/`watch`/`export otlp`, in the same trace), the call's guardrail
/// span, or for `PostToolUse` its tool call (from the hook input).
fn hook_trace(call: &agentshape_store::HookCall, input: &[u8]) -> SessionTrace {
    use agentshape_otel::stored::{HookFacts, hook_check};
    let at = agentshape_store::time::parse_ms(&call.created_at)
        .unwrap_or_else(agentshape_store::time::now_ms);
    // The id as the store's door writes it (store's Note [Names and ids]),
    // so the call lands in the trace `import` sends for the session, and a
    // secret in the id is not sent.
    let sid = match crate::mask::masker() {
        Some(m) => m.safe_id(&call.session_id),
        None => std::borrow::Cow::Borrowed(call.session_id.as_str()),
    };
    let mut t = SessionTrace::new(&sid, "claude-code", at);
    if let Some(check) = hook_check(&HookFacts {
        event: &call.event,
        verdict: &call.verdict,
        method: call.method.as_deref(),
        errors: call.errors.as_ref(),
        blocks: call.blocks,
        profile: call.profile.as_deref(),
        reason: call.reason.as_deref(),
        agent_id: call.agent_id.as_deref(),
        created_at: &call.created_at,
    }) {
        t.checks.push(check);
        return t;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(input) else {
        return t;
    };
    let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
    let mut tool = agentshape_otel::session::ToolCall::new(
        s("tool_use_id"),
        s("tool_name").unwrap_or("tool"),
        at,
    );
    tool.ended_ms = Some(at);
    let response = v.get("tool_response").cloned().unwrap_or_default();
    tool.is_error = response
        .get("is_error")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
        || response
            .get("error")
            .is_some_and(|e| !e.is_null() && e != &serde_json::Value::Bool(false));
    tool.arguments = v.get("tool_input").map(serde_json::Value::to_string);
    tool.result = Some(response.to_string());
    t.tools.push(tool);
    t
}

/// A read-only handle on a store, for the spans of what a command wrote
/// (the feed rows carry the times the lines were seen).
pub enum Reader {
    /// SQLite.
    Sqlite(agentshape_store::SqliteStore),
    /// Postgres.
    Postgres(agentshape_store::PgStore),
}

impl Reader {
    /// Open `url` read-only.
    ///
    /// # Errors
    /// Store failures.
    pub fn open(url: &agentshape_store::StoreUrl) -> anyhow::Result<Reader> {
        use agentshape_store::StoreUrl;
        Ok(match url {
            StoreUrl::Sqlite(p) => {
                Reader::Sqlite(agentshape_store::SqliteStore::open_read_only(p)?)
            }
            StoreUrl::Postgres(u) => {
                Reader::Postgres(agentshape_store::PgStore::open_read_only(u)?)
            }
        })
    }

    /// The handle as a query source.
    pub fn source(&self) -> &dyn agentshape_store::query::Source {
        match self {
            Reader::Sqlite(s) => s,
            Reader::Postgres(s) => s,
        }
    }
}

/// The trace of a session this process just ran: read back from the store
/// it was written to, so a live export is exactly what `export otlp` sends
/// later (the feed's times are those the lines were seen at); else (no
/// store, or it cannot be read) from the events folded off the hub.
pub fn finished_trace(
    url: Option<&agentshape_store::StoreUrl>,
    folds: Option<&Folds>,
    outcome: &SessionOutcome,
    content: bool,
) -> SessionTrace {
    let stored = url
        .filter(|_| outcome.report.as_ref().is_some_and(|r| r.inserted))
        .and_then(|u| Reader::open(u).ok())
        .and_then(|r| agentshape_otel::stored::load(r.source(), &outcome.record.id, content).ok())
        .flatten();
    let folded = folds.map(|f| f.take(outcome));
    stored
        .or(folded)
        .unwrap_or_else(|| agentshape_otel::stored::from_record(&outcome.record, None))
}
