//! `agentshape serve` for the tests: a real server on a free port, on the
//! store given, killed when dropped. One copy for every module that serves.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

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
