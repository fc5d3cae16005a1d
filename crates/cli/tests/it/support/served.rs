//! `agentshape serve` for the tests: a real server on a free port, on the
//! store given, its stderr kept, killed when dropped. One copy for every
//! module that serves.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// A running `serve`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub(crate) base: String,
    /// Every line the server wrote to stderr so far.
    stderr: Arc<Mutex<Vec<String>>>,
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

    /// What the server wrote to stderr so far, one line each.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
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
/// `listening on` line. The store and token of the environment are not
/// passed on: the test's arguments alone say what is served.
pub(crate) fn serve(db: &Path, extra: &[&str]) -> Server {
    let child = super::agentshape_std()
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(db)
        .args(extra)
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("AGENTSHAPE_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    attach(child)
}

/// A `serve` the test spawned itself (stderr piped): wait for its
/// `listening on` line, then keep reading its stderr so it never blocks
/// on a full pipe.
pub(crate) fn attach(mut child: Child) -> Server {
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let base = loop {
        let line = read_line(&mut reader).expect("serve ended before listening");
        stderr.lock().unwrap().push(line.clone());
        if let Some(url) = line.split("listening on ").nth(1) {
            break url.trim().trim_end_matches('/').to_owned();
        }
    };
    let keep = Arc::clone(&stderr);
    std::thread::spawn(move || {
        while let Some(line) = read_line(&mut reader) {
            keep.lock().unwrap().push(line);
        }
    });
    Server {
        child,
        base,
        stderr,
    }
}

/// The next line, read lossily (a byte that is not UTF-8 must not stop the
/// draining); `None` at the end of the stream.
fn read_line(reader: &mut impl BufRead) -> Option<String> {
    let mut buf = Vec::new();
    match reader.read_until(b'\n', &mut buf) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(
            String::from_utf8_lossy(&buf)
                .trim_end_matches('\n')
                .to_owned(),
        ),
    }
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
