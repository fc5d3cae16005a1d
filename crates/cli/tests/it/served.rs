//! `agentshape serve` for the tests: a real server on a free port, on the
//! store given, killed when dropped. One copy for every module that serves.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::Value;

/// A running `serve`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub(crate) base: String,
}

impl Server {
    /// The absolute URL of `path` (which starts with `/`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `127.0.0.1:PORT`, for raw TCP clients.
    pub(crate) fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// Still running?
    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Resident memory in KiB, from `/proc`.
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `serve --addr 127.0.0.1:0 --store DB EXTRA..` and wait for its
/// `listening on` line.
pub(crate) fn serve(db: &Path, extra: &[&str]) -> Server {
    let mut child = crate::agentshape_std()
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(db)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("serve ended before listening").unwrap();
        if let Some(url) = line.split("listening on ").nth(1) {
            break url.trim().trim_end_matches('/').to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server { child, base }
}

/// A small blocking HTTP client over reqwest (status, parsed JSON body).
pub(crate) struct Http {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) client: reqwest::Client,
    pub(crate) base: String,
}

impl Http {
    pub(crate) fn new(base: &str) -> Self {
        Http {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            client: reqwest::Client::new(),
            base: base.to_owned(),
        }
    }

    pub(crate) fn send(&self, req: reqwest::RequestBuilder) -> (u16, Value) {
        self.rt.block_on(async {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let bytes = r.bytes().await.unwrap();
            (
                status,
                serde_json::from_slice(&bytes)
                    .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned())),
            )
        })
    }

    pub(crate) fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.client.get(format!("{}{path}", self.base)))
    }

    /// A write as the builder page sends it: same origin.
    pub(crate) fn write(
        &self,
        method: reqwest::Method,
        path: &str,
        body: impl Into<String>,
    ) -> (u16, Value) {
        self.send(
            self.client
                .request(method, format!("{}{path}", self.base))
                .header("Origin", &self.base)
                .header("Content-Type", "application/json")
                .body(body.into()),
        )
    }

    pub(crate) fn put(&self, path: &str, body: impl Into<String>) -> (u16, Value) {
        self.write(reqwest::Method::PUT, path, body)
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.write(reqwest::Method::POST, path, body.to_string())
    }
}
