//! The exporter against a stand-in collector that decodes what it gets
//! with the published OTLP protobuf definitions.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use agentshape_otel::config::{OtlpConfig, OtlpFlags};
use agentshape_otel::exporter::{ExportOptions, Exporter};
use agentshape_otel::session::{SessionTrace, ToolCall};
use agentshape_otel::spans::{SpanOptions, spans};
use agentshape_testkit::otlp::Collector;

fn config(endpoint: &str, headers: &[&str]) -> OtlpConfig {
    let flags = OtlpFlags {
        endpoint: Some(endpoint.to_owned()),
        headers: headers.iter().map(|h| (*h).to_owned()).collect(),
        content: false,
    };
    let env = |k: &str| {
        (k == "OTEL_RESOURCE_ATTRIBUTES").then(|| "deployment.environment=test".to_owned())
    };
    OtlpConfig::resolve(&flags, &env).unwrap().unwrap()
}

fn session() -> SessionTrace {
    let mut s = SessionTrace::new("exp-1", "codex", 1_700_000_000_000);
    s.ended_ms = Some(1_700_000_003_000);
    let mut t = ToolCall::new(Some("call_1"), "shell", 1_700_000_001_000);
    t.ended_ms = Some(1_700_000_001_250);
    s.tools.push(t);
    s
}

#[test]
fn spans_arrive_gzipped_protobuf_with_headers_resource_and_real_times() {
    let c = Collector::start();
    let cfg = config(&c.url(), &["Authorization=Bearer t0k3n"]);
    let e = Exporter::start(&cfg, &ExportOptions::default(), None).unwrap();
    e.send(spans(&session(), &SpanOptions::default()));
    let report = e.finish(Duration::from_secs(10));
    assert_eq!(
        (report.exported, report.dropped, report.error.clone()),
        (2, 0, None)
    );
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    let exports = c.exports();
    assert_eq!(exports[0].path, "/v1/traces");
    assert_eq!(exports[0].header("authorization"), Some("Bearer t0k3n"));
    let got = c.spans();
    assert_eq!(got[0].name, "invoke_agent codex");
    assert_eq!(got[0].parent_span_id, "");
    assert_eq!(got[1].name, "execute_tool shell");
    assert_eq!(got[1].parent_span_id, got[0].span_id);
    assert_eq!(got[1].trace_id, got[0].trace_id);
    assert_eq!(got[1].start_ns, 1_700_000_001_000_000_000);
    assert_eq!(got[1].end_ns, 1_700_000_001_250_000_000);
    assert_eq!(got[0].attr("gen_ai.provider.name"), Some("openai"));
    assert_eq!(
        got[0].resource.get("service.name").map(String::as_str),
        Some("agentshape")
    );
    assert_eq!(
        got[0]
            .resource
            .get("deployment.environment")
            .map(String::as_str),
        Some("test")
    );
    assert_eq!(got[0].scope, "agentshape");
}

#[test]
fn an_unreachable_collector_is_counted_once_and_never_waited_past_the_deadline() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = config(&format!("http://user:pa55@127.0.0.1:{port}"), &[]);
    let warned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let w = warned.clone();
    let e = Exporter::start(
        &cfg,
        &ExportOptions {
            retries: 0,
            ..ExportOptions::default()
        },
        Some(Box::new(move |line: &str| {
            w.lock().unwrap().push(line.to_owned());
        })),
    )
    .unwrap();
    e.send(spans(&session(), &SpanOptions::default()));
    e.flush(Duration::from_secs(5));
    e.send(spans(&session(), &SpanOptions::default()));
    let report = e.finish(Duration::from_secs(5));
    assert_eq!((report.exported, report.dropped), (0, 4));
    let warned = warned.lock().unwrap();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].starts_with(&format!(
        "OpenTelemetry collector at http://user:***@127.0.0.1:{port}/v1/traces failed: "
    )));
    assert!(!warned[0].contains("pa55"), "{}", warned[0]);
    assert_eq!(report.error.as_deref(), Some(warned[0].as_str()));
}

#[test]
fn a_collector_that_does_not_answer_is_given_up_at_the_deadline() {
    // Accepts connections (the backlog) but never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let cfg = config(&format!("http://{}", silent.local_addr().unwrap()), &[]);
    let e = Exporter::start(
        &cfg,
        &ExportOptions {
            retries: 0,
            linger: Duration::ZERO,
            ..ExportOptions::default()
        },
        None,
    )
    .unwrap();
    e.send(spans(&session(), &SpanOptions::default()));
    let t = Instant::now();
    let report = e.finish(Duration::from_millis(300));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!((report.exported, report.dropped), (0, 2));
    assert!(
        report
            .error
            .unwrap()
            .ends_with("no answer within 300 ms; its spans are dropped and counted")
    );
}
