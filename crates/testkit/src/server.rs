//! The loopback HTTP/1.1 server every stand-in runs on (provider APIs, the
//! OTLP collector, the webhook receiver): hyper on `127.0.0.1`, a random
//! port, its own thread and runtime, so a synchronous test can start one
//! and drop it. Each stand-in supplies only its handler.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;

/// A running server; stops (and its thread ends) when dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Serve every connection with `handler`, one call per request.
    pub fn start<H, F>(handler: H) -> Server
    where
        H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static,
    {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { continue };
                            let handler = handler.clone();
                            tokio::spawn(async move {
                                let svc = service_fn(handler);
                                let _ = http1::Builder::new()
                                    .serve_connection(TokioIo::new(stream), svc)
                                    .await;
                            });
                        }
                    }
                }
            });
        });
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a handler reads of a request.
pub struct Received {
    /// The method.
    pub method: Method,
    /// Path and query.
    pub path: String,
    /// Headers, names lower-case (values that are not text are empty).
    pub headers: Vec<(String, String)>,
    /// The whole body, or why it could not be read.
    pub body: Result<Bytes, String>,
}

/// Read `req` whole: every stand-in records the same parts.
pub async fn receive(req: Request<Incoming>) -> Received {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map(ToString::to_string)
        .unwrap_or_default();
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = req
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .map_err(|e| e.to_string());
    Received {
        method,
        path,
        headers,
        body,
    }
}
