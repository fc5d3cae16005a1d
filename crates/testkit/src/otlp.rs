//! A stand-in OpenTelemetry collector for tests: an OTLP/HTTP traces
//! endpoint (hyper on 127.0.0.1, a random port) that gunzips each request
//! and decodes it with the published protobuf definitions (the
//! `opentelemetry-proto` crate's prost messages), keeping every span with
//! its resource and the request's headers for the test to assert on.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;

use crate::server::{Received, Server, receive};

/// One span as received, flattened for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Trace id, hex.
    pub trace_id: String,
    /// Span id, hex.
    pub span_id: String,
    /// Parent span id, hex (empty for a root).
    pub parent_span_id: String,
    /// Name.
    pub name: String,
    /// The OTLP span kind number (1 internal, 3 client).
    pub kind: i32,
    /// Start, in nanoseconds since the epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the epoch.
    pub end_ns: u64,
    /// Attributes, each value rendered as text (arrays as JSON).
    pub attributes: BTreeMap<String, String>,
    /// Events: name, time and attributes.
    pub events: Vec<(String, u64, BTreeMap<String, String>)>,
    /// Links: trace id and span id, hex.
    pub links: Vec<(String, String)>,
    /// Status code (0 unset, 1 ok, 2 error) and message.
    pub status: (i32, String),
    /// The resource's attributes.
    pub resource: BTreeMap<String, String>,
    /// The instrumentation scope's name.
    pub scope: String,
}

impl Span {
    /// An attribute's text.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Export {
    /// The path the request was sent to.
    pub path: String,
    /// Every header, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The spans it held.
    pub spans: Vec<Span>,
}

impl Export {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    exports: Vec<Export>,
    problems: Vec<String>,
}

/// The stand-in collector; stops when dropped.
pub struct Collector {
    server: Server,
    state: Arc<Mutex<State>>,
}

fn text(v: Option<&AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => {
            serde_json::to_string(&a.values.iter().map(|v| text(Some(v))).collect::<Vec<_>>())
                .unwrap()
        }
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn attrs(list: &[KeyValue]) -> BTreeMap<String, String> {
    list.iter()
        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
        .collect()
}

fn hex(b: &[u8]) -> String {
    use std::fmt::Write as _;
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn decode(req: &ExportTraceServiceRequest) -> Vec<Span> {
    let mut out = Vec::new();
    for rs in &req.resource_spans {
        let resource = rs
            .resource
            .as_ref()
            .map(|r| attrs(&r.attributes))
            .unwrap_or_default();
        for ss in &rs.scope_spans {
            let scope = ss
                .scope
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            for s in &ss.spans {
                out.push(Span {
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    name: s.name.clone(),
                    kind: s.kind,
                    start_ns: s.start_time_unix_nano,
                    end_ns: s.end_time_unix_nano,
                    attributes: attrs(&s.attributes),
                    events: s
                        .events
                        .iter()
                        .map(|e| (e.name.clone(), e.time_unix_nano, attrs(&e.attributes)))
                        .collect(),
                    links: s
                        .links
                        .iter()
                        .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                        .collect(),
                    status: s
                        .status
                        .as_ref()
                        .map(|st| (st.code, st.message.clone()))
                        .unwrap_or_default(),
                    resource: resource.clone(),
                    scope: scope.clone(),
                });
            }
        }
    }
    out
}

async fn handle(
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let Received {
        path,
        headers,
        body,
        ..
    } = receive(req).await;
    // The path without its query, as the collector's routes are matched.
    let path = path.split('?').next().unwrap_or_default().to_owned();
    let mut problem = None;
    let mut spans = Vec::new();
    match body {
        Ok(bytes) => {
            let gz = headers
                .iter()
                .any(|(k, v)| k == "content-encoding" && v == "gzip");
            let raw = if gz {
                let mut out = Vec::new();
                match flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut out) {
                    Ok(_) => out,
                    Err(e) => {
                        problem = Some(format!("not gzip: {e}"));
                        Vec::new()
                    }
                }
            } else {
                problem = Some("the body is not gzip-compressed".to_owned());
                bytes.to_vec()
            };
            if !headers
                .iter()
                .any(|(k, v)| k == "content-type" && v == "application/x-protobuf")
            {
                problem = Some("content-type is not application/x-protobuf".to_owned());
            }
            match ExportTraceServiceRequest::decode(&raw[..]) {
                Ok(r) => spans = decode(&r),
                Err(e) => problem = Some(format!("not an ExportTraceServiceRequest: {e}")),
            }
        }
        Err(e) => problem = Some(format!("body: {e}")),
    }
    let mut st = state.lock().unwrap();
    if let Some(p) = problem {
        st.problems.push(p);
    }
    st.exports.push(Export {
        path,
        headers,
        spans,
    });
    Ok(Response::builder()
        .status(200)
        .header("content-type", "application/x-protobuf")
        .body(Full::new(Bytes::new()))
        .unwrap())
}

impl Collector {
    /// Start a collector.
    pub fn start() -> Collector {
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        let server = Server::start(move |req| handle(st.clone(), req));
        Collector { server, state }
    }

    /// The base URL (`http://127.0.0.1:PORT`), as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Every request received, in order.
    pub fn exports(&self) -> Vec<Export> {
        self.state.lock().unwrap().exports.clone()
    }

    /// Every span received, in order.
    pub fn spans(&self) -> Vec<Span> {
        self.exports().into_iter().flat_map(|e| e.spans).collect()
    }

    /// Requests that were not gzip-compressed protobuf of the published shape.
    pub fn problems(&self) -> Vec<String> {
        self.state.lock().unwrap().problems.clone()
    }
}
