//! # agentshape-otel
//!
//! agentshape's sessions as OpenTelemetry traces (issue 31), for the
//! observability stacks teams already run (Langfuse, Phoenix, Tempo,
//! Jaeger, Honeycomb, Datadog …): one `invoke_agent` span per session, a
//! `chat` span per model call (what backends add tokens and cost up from),
//! an `execute_tool` span per tool call (a sub-agent's session under its
//! `Task` call), an `apply_guardrail` span for every verdict that could
//! block and a `gen_ai.evaluation.result` event for the session's final
//! verdict, named and shaped after the generative-AI semantic conventions
//! ([`semconv`]).
//!
//! It sits at the edge like the web crate: it reads [`agentshape_core`]
//! and [`agentshape_store`] and nothing else of ours, and only the CLI
//! uses it. The CLI turns what the runtime holds in memory into the plain
//! types of [`session`]; [`stored`] reads the same types from a store.
//!
//! The pieces:
//! - [`config`]: where to send (the standard `OTEL_*` variables and the
//!   flags), parsed once, credentials never shown;
//! - [`session`]: the plain description of one session's trace;
//! - [`ids`]: trace and span ids derived from the session id, so every
//!   exporter of the same session lands in the same trace;
//! - [`mod@spans`]: the mapping session → spans (pure);
//! - [`content`]: message contents, only when asked, masked;
//! - [`live`]: a session's trace built as its events arrive;
//! - [`exporter`]: the OTLP/HTTP exporter on a background thread, its
//!   batching, and its count of what was dropped.
//!
//! ```
//! use agentshape_otel::session::{SessionTrace, ToolCall};
//! use agentshape_otel::spans::{SpanOptions, spans};
//!
//! let mut s = SessionTrace::new("s1", "claude", 1_700_000_000_000);
//! s.ended_ms = Some(1_700_000_005_000);
//! s.tools.push(ToolCall::new(Some("t1"), "Bash", 1_700_000_001_000));
//! let out = spans(&s, &SpanOptions::default());
//! assert_eq!(out[0].name, "invoke_agent claude");
//! assert_eq!(out[1].name, "execute_tool Bash");
//! assert_eq!(out[1].parent_span_id, out[0].span_context.span_id());
//! ```

#![forbid(unsafe_code)]

pub mod config;
pub mod content;
pub mod error;
pub mod exporter;
pub mod ids;
pub mod live;
pub mod semconv;
pub mod session;
pub mod spans;
pub mod stored;

pub use config::{OtlpConfig, OtlpFlags};
pub use error::Error;
pub use exporter::{ExportReport, Exporter};
pub use session::SessionTrace;
pub use spans::{SpanOptions, spans};
