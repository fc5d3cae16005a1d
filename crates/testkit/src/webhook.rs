//! A webhook receiver for the alert tests: a real HTTP/1.1 server (hyper)
//! on 127.0.0.1 with a random port that records every request (path and
//! query, headers, body) and answers with a status the test sets (200 by
//! default), so a test can make it fail, then succeed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use crate::Recorded;

/// A running receiver; stops when dropped.
pub struct Receiver {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    status: Arc<AtomicU16>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    /// Start one answering 200.
    pub fn start() -> Receiver {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let status = Arc::new(AtomicU16::new(200));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (reqs, st) = (requests.clone(), status.clone());
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
                            let (reqs, st) = (reqs.clone(), st.clone());
                            tokio::spawn(async move {
                                let svc = service_fn(move |req| record(reqs.clone(), st.clone(), req));
                                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                            });
                        }
                    }
                }
            });
        });
        Receiver {
            addr,
            requests,
            status,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Answer every request from now on with `status`.
    pub fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    /// Every request so far, in order (the body parsed as JSON, `null` if it is not).
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn record(
    requests: Arc<Mutex<Vec<Recorded>>>,
    status: Arc<AtomicU16>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req
        .uri()
        .path_and_query()
        .map(ToString::to_string)
        .unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    requests.lock().unwrap().push(Recorded {
        path,
        headers,
        body,
    });
    let code = status.load(Ordering::SeqCst);
    Ok(Response::builder()
        .status(code)
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap())
}
