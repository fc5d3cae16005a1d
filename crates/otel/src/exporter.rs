//! The OTLP/HTTP exporter on a background thread: spans go in through a
//! bounded queue that never blocks, are sent in batches as protobuf with
//! gzip, and what could not be sent is counted.
//!
//! Note \[Own batching\]: the spans we export are built after the fact, with
//! the times the session recorded and ids derived from the session
//! (`ids`), so they are [`SpanData`] made by [`mod@crate::spans`], not spans
//! recorded through a tracer. They go straight to the SDK's
//! [`SpanExporter`] (the `opentelemetry-otlp` one) from a thread of ours
//! instead of through the SDK's batch processor, because a command must
//! know what happened to its spans: how many were sent and how many
//! dropped (the processor only logs that), the first failure (warned once),
//! and it must be able to stop waiting at a deadline (the hook's budget)
//! and count what was still queued as dropped. The queue is bounded
//! ([`ExportOptions::queue`]): when the collector is slower than the agent,
//! new spans are dropped and counted, and the agent never waits.
//!
//! Note \[One reqwest\]: `opentelemetry-otlp` would bring its own reqwest
//! (0.13, with a TLS stack of its own); the exporter takes any
//! [`HttpClient`] instead, and ours is the workspace's reqwest 0.12 on
//! rustls, driven by a current-thread tokio runtime on the export thread,
//! built and used under agentshape-egress's Note \[Outbound policy\]: no
//! redirect followed (a collector answering 307 elsewhere would get the
//! headers), no Referer, and the answer read up to [`MAX_RESPONSE_BYTES`].
//! The client also sets the configured headers on every request, so a
//! `--otlp-header` wins over a header of the same name that the exporter
//! reads from `OTEL_EXPORTER_OTLP_HEADERS` itself.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use opentelemetry::KeyValue;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Compression, Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use serde::Serialize;

use agentshape_egress::Policy;

use crate::config::OtlpConfig;
use crate::error::Error;

/// The most bytes of a collector's answer read (Note \[Outbound policy\]
/// in agentshape-egress): an OTLP answer is a few bytes of protobuf, or an
/// error status with a message; a collector sending more is cut there.
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// How the export thread batches and waits.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The most spans waiting to be sent; later ones are dropped and counted.
    pub queue: usize,
    /// The most spans in one request.
    pub batch: usize,
    /// How long the first span of a batch waits for others.
    pub linger: Duration,
    /// Retries of a failed request, with backoff from 100 ms (within the
    /// request timeout); 0: one try.
    pub retries: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            queue: 8_192,
            batch: 512,
            linger: Duration::from_millis(200),
            retries: 3,
        }
    }
}

/// What an exporter did, for the command's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportReport {
    /// The collector's traces URL, without credentials.
    pub endpoint: String,
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans not sent: the collector failed or was not reached, the queue
    /// was full, or the deadline came first.
    pub dropped: u64,
    /// The first failure, one line, without credentials.
    pub error: Option<String>,
}

/// Called once, with the first failure's line, from the export thread.
pub type OnFirstError = Box<dyn Fn(&str) + Send + Sync>;

struct Shared {
    exported: AtomicU64,
    dropped: AtomicU64,
    warned: AtomicBool,
    error: Mutex<Option<String>>,
    on_error: Option<OnFirstError>,
    endpoint: String,
}

impl Shared {
    fn fail(&self, n: u64, why: &str) {
        self.dropped.fetch_add(n, Ordering::SeqCst);
        if !self.warned.swap(true, Ordering::SeqCst) {
            let line = format!(
                "OpenTelemetry collector at {} failed: {why}; its spans are dropped and counted",
                self.endpoint
            );
            *self.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(line.clone());
            if let Some(f) = &self.on_error {
                f(&line);
            }
        }
    }
}

enum Msg {
    Spans(Vec<SpanData>),
    Flush(mpsc::Sender<()>),
}

/// The export pipeline of one command (Note \[Own batching\]).
pub struct Exporter {
    tx: Option<SyncSender<Msg>>,
    queued: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    done: Receiver<()>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("endpoint", &self.shared.endpoint)
            .finish_non_exhaustive()
    }
}

/// The workspace's reqwest behind the exporter (Note \[One reqwest\]).
#[derive(Debug)]
struct Client {
    inner: reqwest::Client,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// The last transport failure, one line without the URL: the exporter
    /// reports only "network error", which tells a user nothing.
    last_error: Arc<Mutex<Option<String>>>,
    /// The request timeout: a request it ends is reported as `finish`
    /// reports one still waiting at its deadline ("no answer within …"),
    /// whichever of the two clocks runs out first.
    timeout: Duration,
}

impl Client {
    /// Keep `e`'s line for the report (Note \[One reqwest\]: the exporter
    /// itself says only "network error").
    fn note<E: std::error::Error + Send + Sync + 'static>(&self, e: E) -> HttpError {
        self.note_as(e, None)
    }

    /// [`Client::note`], keeping `line` (when given) instead of `e`'s own.
    fn note_as<E: std::error::Error + Send + Sync + 'static>(
        &self,
        e: E,
        line: Option<String>,
    ) -> HttpError {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            Some(line.unwrap_or_else(|| error_line(&e, "", "")));
        Box::new(e)
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let mut request = reqwest::Request::try_from(request)?;
        for (k, v) in &self.headers {
            request.headers_mut().insert(k.clone(), v.clone());
        }
        // The egress policy (its Note \[Outbound policy\]): no redirect
        // followed, no Referer, errors without the URL.
        let response = agentshape_egress::send(&self.inner, request)
            .await
            .map_err(|e| {
                let line = e
                    .is_timeout()
                    .then(|| format!("no answer within {} ms", self.timeout.as_millis()));
                self.note_as(e, line)
            })?;
        let mut out = Response::builder().status(response.status());
        for (k, v) in response.headers() {
            out = out.header(k, v);
        }
        let body = agentshape_egress::read_capped(response, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| self.note(e))?;
        let body = Bytes::from(body);
        Ok(out.body(body)?)
    }
}

/// One line for an export error: its chain of causes, the endpoint's raw
/// text replaced by the shown one.
fn error_line(e: &dyn std::error::Error, raw: &str, shown: &str) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !line.contains(&s) {
            line.push_str(": ");
            line.push_str(&s);
        }
        cause = c.source();
    }
    if !raw.is_empty() {
        line = line.replace(raw, shown);
    }
    line.replace('\n', " ")
}

fn resource(config: &OtlpConfig) -> Resource {
    Resource::builder_empty()
        .with_service_name(config.service_name.clone())
        .with_attributes(
            config
                .resource
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .with_attribute(KeyValue::new("telemetry.sdk.name", "opentelemetry"))
        .with_attribute(KeyValue::new("telemetry.sdk.language", "rust"))
        .build()
}

impl Exporter {
    /// Start the export thread for `config`. `on_error` is called once,
    /// with one line, at the first failure (a live command warns with it).
    ///
    /// # Errors
    /// When the HTTP client or the exporter cannot be built.
    pub fn start(
        config: &OtlpConfig,
        opts: &ExportOptions,
        on_error: Option<OnFirstError>,
    ) -> Result<Exporter, Error> {
        let endpoint = config.shown_endpoint();
        let setup = |reason: String| Error::Setup {
            endpoint: endpoint.clone(),
            reason,
        };
        // Loading the system's roots costs a short command tens of
        // milliseconds; plain HTTP needs none.
        let client = Policy::new(config.timeout)
            .system_roots(config.endpoint.scheme() != "http")
            .client()
            .map_err(|e| setup(e.to_string()))?;
        let last_error = Arc::new(Mutex::new(None));
        let retry = if opts.retries > 0 {
            RetryPolicy::recommended().with_max_retries(opts.retries)
        } else {
            RetryPolicy::disabled()
        };
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(config.endpoint.as_str())
            .with_timeout(config.timeout)
            .with_compression(Compression::Gzip)
            .with_retry_policy(retry)
            .with_http_client(Client {
                inner: client,
                headers: config.headers.clone(),
                last_error: Arc::clone(&last_error),
                timeout: config.timeout,
            })
            .build()
            .map_err(|e| setup(error_line(&e, config.endpoint.as_str(), &endpoint)))?;
        exporter.set_resource(&resource(config));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| setup(e.to_string()))?;
        let shared = Arc::new(Shared {
            exported: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            warned: AtomicBool::new(false),
            error: Mutex::new(None),
            on_error,
            endpoint: endpoint.clone(),
        });
        let (tx, rx) = mpsc::sync_channel::<Msg>(opts.queue.max(1));
        let (done_tx, done) = mpsc::channel();
        let queued = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            rx,
            exporter,
            rt,
            shared: Arc::clone(&shared),
            queued: Arc::clone(&queued),
            batch: opts.batch.max(1),
            linger: opts.linger,
            raw: config.endpoint.to_string(),
            last_error,
        };
        let thread = std::thread::Builder::new()
            .name("otlp-export".to_owned())
            .spawn(move || {
                worker.run();
                let _ = done_tx.send(());
            })
            .map_err(|e| setup(e.to_string()))?;
        Ok(Exporter {
            tx: Some(tx),
            queued,
            thread: Some(thread),
            done,
            shared,
        })
    }

    /// Queue `spans` for export; never blocks: when the queue is full they
    /// are dropped and counted.
    pub fn send(&self, spans: Vec<SpanData>) {
        if spans.is_empty() {
            return;
        }
        let n = spans.len() as u64;
        let Some(tx) = &self.tx else {
            self.shared.dropped.fetch_add(n, Ordering::SeqCst);
            return;
        };
        self.queued.fetch_add(n, Ordering::SeqCst);
        match tx.try_send(Msg::Spans(spans)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(n, Ordering::SeqCst);
                self.shared.fail(n, "the export queue is full");
            }
        }
    }

    /// Send what is queued now and wait for it, at most `wait`.
    pub fn flush(&self, wait: Duration) {
        let Some(tx) = &self.tx else { return };
        let (ack, acked) = mpsc::channel();
        if tx.send(Msg::Flush(ack)).is_ok() {
            let _ = acked.recv_timeout(wait);
        }
    }

    /// What was done so far.
    pub fn report(&self) -> ExportReport {
        ExportReport {
            endpoint: self.shared.endpoint.clone(),
            exported: self.shared.exported.load(Ordering::SeqCst),
            dropped: self.shared.dropped.load(Ordering::SeqCst),
            error: self
                .shared
                .error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Send everything queued, waiting at most `deadline`; what is still
    /// queued then is counted as dropped (and, when nothing failed before,
    /// is the first failure: "no answer within …").
    pub fn finish(mut self, deadline: Duration) -> ExportReport {
        drop(self.tx.take());
        if self.done.recv_timeout(deadline).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        } else {
            // Left to die with the process: it holds nothing of ours.
            let left = self.queued.swap(0, Ordering::SeqCst);
            self.shared.fail(
                left,
                &format!("no answer within {} ms", deadline.as_millis()),
            );
        }
        self.report()
    }
}

struct Worker {
    rx: Receiver<Msg>,
    exporter: opentelemetry_otlp::SpanExporter,
    rt: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    queued: Arc<AtomicU64>,
    batch: usize,
    linger: Duration,
    raw: String,
    last_error: Arc<Mutex<Option<String>>>,
}

impl Worker {
    fn export(&self, pending: &mut Vec<SpanData>) {
        while !pending.is_empty() {
            let rest = pending.split_off(pending.len().min(self.batch));
            let batch = std::mem::replace(pending, rest);
            let n = batch.len() as u64;
            let result = self.rt.block_on(self.exporter.export(batch));
            // Taken off the queue only now: `finish` counts what is left.
            let _ = self
                .queued
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |q| {
                    Some(q.saturating_sub(n))
                });
            match result {
                Ok(()) => {
                    self.shared.exported.fetch_add(n, Ordering::SeqCst);
                }
                Err(e) => {
                    let transport = self
                        .last_error
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    let why = error_line(&e, &self.raw, &self.shared.endpoint);
                    let why = match transport {
                        Some(t) => format!("{why} ({t})"),
                        None => why,
                    };
                    self.shared.fail(n, &why);
                }
            }
        }
    }

    fn run(self) {
        let mut pending: Vec<SpanData> = Vec::new();
        let mut since: Option<Instant> = None;
        loop {
            let wait = since.map_or(Duration::from_secs(3600), |s| {
                self.linger.saturating_sub(s.elapsed())
            });
            match self.rx.recv_timeout(wait) {
                Ok(Msg::Spans(s)) => {
                    pending.extend(s);
                    since.get_or_insert_with(Instant::now);
                    if pending.len() >= self.batch {
                        self.export(&mut pending);
                        since = None;
                    }
                }
                Ok(Msg::Flush(ack)) => {
                    self.export(&mut pending);
                    since = None;
                    let _ = ack.send(());
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.export(&mut pending);
                    since = None;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.export(&mut pending);
                    let _ = self.exporter.shutdown();
                    return;
                }
            }
        }
    }
}
