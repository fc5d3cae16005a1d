//! `agentshape export otlp`: stored sessions as OpenTelemetry traces.
//!
//! It reads the store (opened read-only, never created), maps each session
//! with `agentshape-otel` and sends the spans; it waits until the collector
//! has answered for every batch. Unlike a live export (Note \[Live export
//! never fails a run\] in `otel`), exporting is the whole job here: a
//! collector that cannot be reached or refuses is exit 74, one line naming
//! the endpoint (without credentials), and the summary says what was
//! accepted, nothing more.
//!
//! `export html|markdown|json SESSION` write one session as a file (`file`).

mod file;

use std::time::Duration;

use agentshape_otel::exporter::{ExportOptions, Exporter};
use agentshape_otel::spans::spans;
use agentshape_otel::stored;
use agentshape_store::query::Source;
use agentshape_store::{PgStore, SqliteStore, Store, StoreUrl};
use serde_json::json;

use crate::args::{ExportArgs, ExportOtlpArgs, ExportWhat};
use crate::exit::{CliError, Exit};
use crate::otel;
use crate::output::{Out, clean, eprint};

/// How long one request may take, retries included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the command waits for the collector at the end.
const DEADLINE: Duration = Duration::from_secs(120);

/// Run `export …`.
///
/// # Errors
/// Bad options (64), a missing store or session (66), store failures.
pub fn run(args: &ExportArgs) -> anyhow::Result<Exit> {
    match &args.what {
        ExportWhat::Otlp(a) => otlp(a),
        ExportWhat::Html(a) => file::run(agentshape_web::export::Format::Html, a),
        ExportWhat::Markdown(a) => file::run(agentshape_web::export::Format::Markdown, a),
        ExportWhat::Json(a) => file::run(agentshape_web::export::Format::Json, a),
    }
}

fn otlp(args: &ExportOtlpArgs) -> anyhow::Result<Exit> {
    let Some(mut config) = otel::config(&args.otlp)? else {
        return Err(CliError::Usage(
            "export otlp: no collector: give --otlp-endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT"
                .into(),
        )
        .into());
    };
    config.timeout = REQUEST_TIMEOUT;
    match StoreUrl::parse(&args.store.location)? {
        StoreUrl::Sqlite(p) => {
            let s = SqliteStore::open_read_only(&p)?;
            crate::mask::use_store_key(s.mask_key());
            send(args, &config, &s)
        }
        StoreUrl::Postgres(u) => {
            let s = PgStore::open_read_only(&u)?;
            crate::mask::use_store_key(s.mask_key());
            send(args, &config, &s)
        }
    }
}

fn send(
    args: &ExportOtlpArgs,
    config: &agentshape_otel::OtlpConfig,
    store: &dyn Source,
) -> anyhow::Result<Exit> {
    let since = args.since.map(agentshape_store::time::format_ms);
    let ids = if args.sessions.is_empty() {
        stored::session_ids(store, args.since)?
    } else {
        args.sessions.clone()
    };
    let opts = otel::span_options(config);
    let exporter = Exporter::start(config, &ExportOptions::default(), None)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let (mut sessions, mut total, mut missing) = (0u64, 0u64, Vec::new());
    for id in &ids {
        let Some(trace) = stored::load(store, id, config.content)? else {
            missing.push(id.clone());
            continue;
        };
        let started = agentshape_store::time::format_ms(trace.started_ms);
        if since.as_deref().is_some_and(|s| started.as_str() < s) {
            continue;
        }
        let out = spans(&trace, &opts);
        total += out.len() as u64;
        sessions += 1;
        exporter.send(out);
    }
    let report = exporter.finish(DEADLINE);
    for id in &missing {
        eprint(&format!(
            "agentshape: export otlp: session `{}` is not in the store; skipped",
            clean(id)
        ));
    }
    let mut out = Out::new(args.output);
    if out.json {
        out.json_line(&json!({
            "sessions": sessions, "spans": total, "exported": report.exported,
            "dropped": report.dropped, "endpoint": report.endpoint, "error": report.error,
            "missing": missing,
        }))?;
    } else {
        out.line(&format!(
            "exported {sessions} session(s): {} of {total} spans accepted by {}{}",
            report.exported,
            report.endpoint,
            if report.dropped > 0 {
                format!(", {} dropped", report.dropped)
            } else {
                String::new()
            }
        ))?;
    }
    out.flush()?;
    if let Some(e) = &report.error {
        eprint(&format!("agentshape: export otlp: {e}"));
        return Ok(Exit::IoErr);
    }
    if !missing.is_empty() {
        return Ok(Exit::NoInput);
    }
    Ok(Exit::Ok)
}
