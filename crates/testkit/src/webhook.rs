//! A webhook receiver for the alert tests: a real HTTP/1.1 server (hyper)
//! on 127.0.0.1 with a random port that records every request (path and
//! query, headers, body) and answers with a status the test sets (200 by
//! default), so a test can make it fail, then succeed.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};

use crate::Recorded;
use crate::server::{Received, Server, receive};

/// A running receiver; stops when dropped.
pub struct Receiver {
    server: Server,
    requests: Arc<Mutex<Vec<Recorded>>>,
    status: Arc<AtomicU16>,
}

impl Receiver {
    /// Start one answering 200.
    pub fn start() -> Receiver {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let status = Arc::new(AtomicU16::new(200));
        let (reqs, st) = (requests.clone(), status.clone());
        let server = Server::start(move |req| record(reqs.clone(), st.clone(), req));
        Receiver {
            server,
            requests,
            status,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.server.addr().port()
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

async fn record(
    requests: Arc<Mutex<Vec<Recorded>>>,
    status: Arc<AtomicU16>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let Received {
        path,
        headers,
        body,
        ..
    } = receive(req).await;
    let body = serde_json::from_slice(&body.unwrap_or_default()).unwrap_or(serde_json::Value::Null);
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
