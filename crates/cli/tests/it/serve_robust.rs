//! `serve` keeps going (issue 9, "Tests and numbers"): clients that drop,
//! clients that never read, malformed and hostile requests, a missing store
//! and SIGTERM, each against a real `serve` and, where it matters, a real
//! `run` writing the same store. Timeouts here are hang guards only.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::served::serve;

/// A hang guard, never a speed assertion.
const GUARD: Duration = Duration::from_secs(60);

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A Claude transcript of `n` assistant lines of about `size` bytes each, then a result.
fn padded_transcript(dir: &Path, n: usize, size: usize) -> PathBuf {
    let pad = "x".repeat(size);
    let mut text = String::new();
    for i in 0..n {
        writeln!(
            text,
            r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"line {i} {pad}"}}]}}}}"#
        )
        .unwrap();
    }
    text.push_str(r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#);
    text.push('\n');
    let path = dir.join(format!("t-{n}-{size}.ndjson"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Start `run --replay` of `file` into `db`, `pace` ms between lines.
fn replay(db: &Path, file: &Path, id: &str, pace: u64) -> Child {
    crate::support::agentshape_std()
        .args(["run", "--replay"])
        .arg(file)
        .args(["--pace", &pace.to_string(), "--session-id", id, "--store"])
        .arg(db)
        .arg("--log-dir")
        .arg(db.with_extension("logs"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The feed ids the store holds for `session`, in order.
fn stored_ids(db: &Path, session: &str) -> Vec<i64> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut stmt = c
        .prepare("SELECT id FROM feed WHERE session_id = ?1 ORDER BY id")
        .unwrap();
    stmt.query_map([session], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<Vec<i64>>>()
        .unwrap()
}

/// Read an SSE response until an `ended` row (or the guard); (id, kind) per row.
async fn read_until_ended(resp: &mut reqwest::Response) -> Vec<(i64, String)> {
    let deadline = Instant::now() + GUARD;
    let mut buf = String::new();
    let mut out = Vec::new();
    loop {
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let (mut id, mut kind) = (None, String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().parse::<i64>().unwrap());
                } else if let Some(v) = line.strip_prefix("event:") {
                    v.trim().clone_into(&mut kind);
                }
            }
            if let Some(id) = id {
                let done = kind == "ended";
                out.push((id, kind));
                if done {
                    return out;
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no `ended` row in time; got {out:?}");
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(bytes))) => buf.push_str(&String::from_utf8_lossy(&bytes)),
            other => panic!("feed ended before `ended`: {other:?}; got {out:?}"),
        }
    }
}

fn ids(rows: &[(i64, String)]) -> Vec<i64> {
    rows.iter().map(|r| r.0).collect()
}

/// Send raw bytes, return the response's status, or `None` when the server
/// closed the connection without one (also a fine answer to garbage).
fn raw(addr: &str, request: &[u8]) -> Option<u16> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(GUARD)).unwrap();
    // The server may answer and close before reading everything: a failed
    // write is not a failure, what comes back is the answer.
    let _ = s.write_all(request);
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                got.extend_from_slice(&chunk[..n]);
                if got.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
        }
    }
    let head = String::from_utf8_lossy(&got);
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some(status)
}

fn get_raw(addr: &str, target: &str) -> Option<u16> {
    raw(
        addr,
        format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

/// What a malformed request may get back.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Exactly this status.
    Is(u16),
    /// Some 4xx.
    ClientError,
    /// A 4xx, or the connection closed without an answer.
    ClientErrorOrClosed,
    /// Any answer but a 5xx.
    NotServerError,
}

impl Want {
    fn accepts(self, got: Option<u16>) -> bool {
        match (self, got) {
            (Want::Is(w), Some(s)) => w == s,
            (Want::ClientError | Want::ClientErrorOrClosed, Some(s)) => (400..500).contains(&s),
            (Want::ClientErrorOrClosed, None) => true,
            (Want::NotServerError, Some(s)) => s < 500,
            _ => false,
        }
    }
}

#[test]
fn malformed_and_hostile_requests_get_a_4xx_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let mut server = serve(&db, &[]);
    let addr = server.addr().to_owned();
    let get = |target: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").into_bytes()
    };
    let with_header = |name: &str, value: &str| {
        format!(
            "GET /api/sessions HTTP/1.1\r\nHost: {addr}\r\n{name}: {value}\r\nConnection: close\r\n\r\n"
        )
        .into_bytes()
    };
    let cases: Vec<(&str, Vec<u8>, Want)> = vec![
        ("unknown session (API)", get("/api/sessions/no-such"), Want::Is(404)),
        ("unknown session (page)", get("/sessions/no-such"), Want::Is(404)),
        ("invalid UTF-8 (page)", get("/sessions/%FF"), Want::ClientError),
        ("invalid UTF-8 (API)", get("/api/sessions/%FF%FE"), Want::ClientError),
        ("NUL (page)", get("/sessions/%00"), Want::ClientError),
        ("NUL (API)", get("/api/sessions/%00"), Want::ClientError),
        ("NUL in a query", get("/api/sessions?status=%00"), Want::ClientError),
        ("invalid UTF-8 in a query", get("/api/sessions?status=%FF"), Want::ClientError),
        ("asset outside the folder", get("/assets/../Cargo.toml"), Want::Is(404)),
        ("asset, encoded dots", get("/assets/%2e%2e%2fCargo.toml"), Want::Is(404)),
        ("asset, encoded slash", get("/assets/..%2FCargo.toml"), Want::Is(404)),
        ("unknown asset", get("/assets/nope.js"), Want::Is(404)),
        ("bad limit", get("/api/sessions?limit=abc"), Want::Is(400)),
        ("negative limit", get("/api/events?limit=-1"), Want::Is(400)),
        ("bad after", get("/api/feed?after=x"), Want::Is(400)),
        ("negative after", get("/api/feed?after=-5"), Want::Is(400)),
        (
            "bad Last-Event-ID",
            format!(
                "GET /api/feed HTTP/1.1\r\nHost: {addr}\r\nLast-Event-ID: nope\r\nConnection: close\r\n\r\n"
            )
            .into_bytes(),
            Want::Is(400),
        ),
        (
            "100 KiB header",
            with_header("X-Big", &"a".repeat(100 * 1024)),
            Want::ClientErrorOrClosed,
        ),
        (
            "64 KiB request line",
            get(&format!("/api/sessions?status={}", "a".repeat(64 * 1024))),
            Want::ClientErrorOrClosed,
        ),
        (
            "HTTP/1.0 without Host",
            b"GET /api/sessions HTTP/1.0\r\n\r\n".to_vec(),
            Want::NotServerError,
        ),
        ("not HTTP", b"\x00\x01\x02 hello\r\n\r\n".to_vec(), Want::ClientErrorOrClosed),
        (
            "a header with a bare CR",
            with_header("X-Evil", "a\rb"),
            Want::ClientErrorOrClosed,
        ),
        (
            "Content-Length that lies",
            format!("POST /api/sessions HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 99999999\r\n\r\nshort")
                .into_bytes(),
            Want::ClientErrorOrClosed,
        ),
    ];
    let mut failed = Vec::new();
    for (name, request, want) in &cases {
        let got = raw(&addr, request);
        eprintln!("{name}: {got:?}");
        if !want.accepts(got) {
            failed.push(format!("{name}: got {got:?}, want {want:?}"));
        }
        // After each one, the server still answers.
        assert_eq!(get_raw(&addr, "/api/sessions"), Some(200), "after {name}");
    }
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(server.alive());
}

#[test]
fn a_client_that_drops_mid_stream_leaves_the_others_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let server = serve(&db, &[]);
    let file = padded_transcript(dir.path(), 60, 20);
    let rt = rt();
    let client = reqwest::Client::new();
    let open = || {
        rt.block_on(client.get(server.url("/api/feed?after=0")).send())
            .unwrap()
    };
    let mut dropper = open();
    let mut stayer = open();
    let mut run = replay(&db, &file, "drop-1", 10);
    // The dropper reads a first chunk, then goes away mid-stream.
    let first = rt
        .block_on(async { tokio::time::timeout(GUARD, dropper.chunk()).await })
        .unwrap()
        .unwrap();
    assert!(first.is_some());
    drop(dropper);
    let got = rt.block_on(read_until_ended(&mut stayer));
    // Its exit code is the transcript's verdict, not the server's business.
    run.wait().unwrap();
    assert_eq!(
        ids(&got),
        stored_ids(&db, "drop-1"),
        "every row, once, in order"
    );
    assert_eq!(got.first().map(|r| r.1.as_str()), Some("started"));
    // And a client that comes afterwards gets the same from the store.
    let mut later = open();
    assert_eq!(ids(&rt.block_on(read_until_ended(&mut later))), ids(&got));
}

#[test]
fn fifty_clients_connect_and_drop_in_a_loop_while_a_run_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("churn.db");
    let mut server = serve(&db, &[]);
    let file = padded_transcript(dir.path(), 150, 200);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let mut watcher = rt
        .block_on(client.get(server.url("/api/feed?after=0")).send())
        .unwrap();
    let mut run = replay(&db, &file, "churn-1", 10);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut churn = Vec::new();
    for i in 0..50 {
        let client = client.clone();
        let url = server.url(&format!("/api/feed?after={i}"));
        let stop = std::sync::Arc::clone(&stop);
        churn.push(rt.spawn(async move {
            let mut rounds = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(mut r) = client.get(&url).send().await {
                    // Read a little (or nothing), then drop mid-stream.
                    if rounds % 2 == 0 {
                        let _ = tokio::time::timeout(Duration::from_millis(50), r.chunk()).await;
                    }
                }
                rounds += 1;
            }
            rounds
        }));
    }
    let got = rt.block_on(read_until_ended(&mut watcher));
    // Its exit code is the transcript's verdict, not the server's business.
    run.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds: u32 = rt.block_on(async {
        let mut total = 0;
        for c in churn {
            total += c.await.unwrap();
        }
        total
    });
    assert!(rounds >= 50, "the clients churned: {rounds} rounds");
    assert_eq!(
        ids(&got),
        stored_ids(&db, "churn-1"),
        "every row, once, in order"
    );
    assert!(server.alive());
    let status = rt
        .block_on(client.get(server.url("/api/sessions")).send())
        .unwrap()
        .status();
    assert_eq!(status, 200);
}

/// A client that opens the feed and never reads: its rows stop at its
/// socket buffers and one batch; the others get every row and the server's
/// memory stays bounded.
#[test]
fn a_client_that_never_reads_stalls_no_one_and_memory_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("slow.db");
    let server = serve(&db, &[]);
    // 6,000 rows of about 4 KiB: 24 MiB through the feed.
    let file = padded_transcript(dir.path(), 6_000, 4_000);
    let mut sleeper = TcpStream::connect(server.addr()).unwrap();
    sleeper
        .write_all(
            format!(
                "GET /api/feed?after=0 HTTP/1.1\r\nHost: {}\r\n\r\n",
                server.addr()
            )
            .as_bytes(),
        )
        .unwrap();
    let rt = rt();
    let client = reqwest::Client::new();
    let mut reader = rt
        .block_on(client.get(server.url("/api/feed?after=0")).send())
        .unwrap();
    let before = server.rss_kib();
    let mut run = replay(&db, &file, "slow-1", 0);
    let got = rt.block_on(read_until_ended(&mut reader));
    // Its exit code is the transcript's verdict, not the server's business.
    run.wait().unwrap();
    assert_eq!(
        ids(&got),
        stored_ids(&db, "slow-1"),
        "every row, once, in order"
    );
    assert!(got.len() > 6_000, "{}", got.len());
    let after = server.rss_kib();
    eprintln!("serve RSS {before} KiB -> {after} KiB");
    // The sleeper holds at most one catch-up batch (Note [Pull, not push]
    // in the web crate) and the shared broadcast ring; an unbounded queue
    // for it would hold all 24 MiB.
    assert!(
        after < before + 20 * 1024,
        "serve grew from {before} KiB to {after} KiB"
    );
    drop(sleeper);
}

#[test]
fn serve_creates_a_store_that_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    assert!(!db.exists());
    let server = serve(&db, &[]);
    assert!(db.is_file());
    let rt = rt();
    let body = rt.block_on(async {
        reqwest::get(server.url("/api/sessions"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
    });
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["sessions"], serde_json::json!([]));
}

#[test]
fn sigterm_stops_serve_promptly_with_exit_0_while_clients_are_connected() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("term.db");
    let mut server = serve(&db, &[]);
    let rt = rt();
    let client = reqwest::Client::new();
    let feeds: Vec<reqwest::Response> = (0..3)
        .map(|_| {
            rt.block_on(client.get(server.url("/api/feed?after=0")).send())
                .unwrap()
        })
        .collect();
    assert!(feeds.iter().all(|f| f.status() == 200));
    let pid = server.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < GUARD, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    drop(feeds);
}

/// A Claude transcript of `n` tool calls whose results are `size` bytes each,
/// then a result (issue 40 §4's shape: one session of big tool results).
fn tool_transcript(dir: &Path, n: usize, size: usize) -> PathBuf {
    let pad = "y".repeat(size);
    let mut text = String::new();
    for i in 0..n {
        writeln!(
            text,
            r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Read","input":{{"file_path":"/f{i}"}}}}]}}}}"#
        )
        .unwrap();
        writeln!(
            text,
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{i} {pad}"}}]}}}}"#
        )
        .unwrap();
    }
    text.push_str(r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#);
    text.push('\n');
    let path = dir.join(format!("tools-{n}-{size}.ndjson"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Issue 40 §4: 300 clients open the feed of one stored session of 300
/// tool results of 64 KiB and never read. Each used to end up holding
/// about twice the whole feed (100 such clients took `serve` past 2 GB);
/// now `serve` stays under 300 MB, and a client that reads still gets
/// every row once, in order.
#[test]
fn three_hundred_clients_that_never_read_big_rows_keep_serve_under_300_mb() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.db");
    let file = tool_transcript(dir.path(), 300, 64 * 1024);
    let mut run = replay(&db, &file, "big-1", 0);
    run.wait().unwrap();
    let want = stored_ids(&db, "big-1");
    assert!(want.len() >= 300, "{} rows", want.len());
    let mut server = serve(
        &db,
        &["--max-feed-clients", "400", "--client-timeout", "120"],
    );
    let addr = server.addr().to_owned();
    let request = format!("GET /api/feed?after=0 HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut sleepers = Vec::new();
    let mut peak = 0;
    for _ in 0..300 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        sleepers.push(s);
        peak = peak.max(server.rss_kib());
    }
    // Give every connection the time to fill whatever it can fill.
    let until = Instant::now() + Duration::from_secs(8);
    while Instant::now() < until {
        peak = peak.max(server.rss_kib());
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("serve RSS peak with 300 stalled feed clients: {peak} KiB");
    assert!(server.alive(), "serve died");
    assert!(peak < 300 * 1024, "serve reached {peak} KiB");
    // A client that reads gets the whole feed meanwhile.
    let rt = rt();
    let mut reader = rt
        .block_on(
            reqwest::Client::new()
                .get(server.url("/api/feed?after=0"))
                .send(),
        )
        .unwrap();
    assert_eq!(reader.status(), 200);
    let got = rt.block_on(read_until_ended(&mut reader));
    assert_eq!(ids(&got), want, "every row, once, in order");
    drop(sleepers);
}
