//! `agentshape serve` (issue 9, first slice): a real server on a temporary
//! store and a free port, a real `run` in another process writing to the same
//! store, read over HTTP the way a dashboard will.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::example;
use crate::support::served::serve;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One SSE event: (id, event, data).
type Sse = (i64, String, Value);

/// Read SSE events from `resp` until one of kind `until` (included) or the deadline.
async fn read_events(resp: &mut reqwest::Response, until: &str) -> Vec<Sse> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut buf = String::new();
    let mut out = Vec::new();
    loop {
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let (mut id, mut kind, mut data) = (None, String::new(), String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().parse::<i64>().unwrap());
                } else if let Some(v) = line.strip_prefix("event:") {
                    v.trim().clone_into(&mut kind);
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            if let Some(id) = id {
                let done = kind == until;
                out.push((id, kind, serde_json::from_str(&data).unwrap()));
                if done {
                    return out;
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no `{until}` event in time; got {out:?}");
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(bytes))) => buf.push_str(&String::from_utf8_lossy(&bytes)),
            other => panic!("feed ended before `{until}`: {other:?}; got {out:?}"),
        }
    }
}

#[test]
fn a_run_streams_live_in_order_and_a_reconnect_gets_exactly_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("serve.db");
    let server = serve(&db, &[]);
    let base = server.base.clone();
    let rt = rt();
    let client = reqwest::Client::new();
    let mut feed = rt
        .block_on(client.get(format!("{base}/api/feed?after=0")).send())
        .unwrap();
    assert_eq!(feed.status(), 200);
    assert!(
        feed.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut run = crate::support::agentshape_std()
        .args(["run", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args(["--pace", "50", "--session-id", "live-1", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A second client drops after the `started` row, while the run runs,
    // and resumes from the last id it saw.
    let mut early = rt
        .block_on(client.get(format!("{base}/api/feed?after=0")).send())
        .unwrap();
    let first = rt.block_on(read_events(&mut early, "started"));
    drop(early);
    let mut again = rt
        .block_on(
            client
                .get(format!("{base}/api/feed"))
                .header("Last-Event-ID", first.last().unwrap().0.to_string())
                .send(),
        )
        .unwrap();
    let second = rt.block_on(read_events(&mut again, "ended"));
    let events = rt.block_on(read_events(&mut feed, "ended"));
    assert!(run.wait().unwrap().success());
    let ids = |evs: &[Sse]| evs.iter().map(|e| e.0).collect::<Vec<_>>();
    assert_eq!(
        [ids(&first), ids(&second)].concat(),
        ids(&events),
        "a reconnect mid-run gets exactly the rest"
    );
    assert!(
        second.len() > 1,
        "the reconnect came before the end: {second:?}"
    );
    let kinds: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"ended"), "{kinds:?}");
    assert!(kinds.contains(&"event"), "{kinds:?}");
    assert!(events.windows(2).all(|w| w[0].0 < w[1].0), "ids increase");
    for (id, kind, data) in &events {
        assert_eq!(data["id"], *id);
        assert_eq!(data["kind"], *kind);
        assert_eq!(data["session_id"], "live-1");
    }
    // The first client goes away mid-stream; the server keeps serving.
    drop(feed);

    // Resume from the middle: exactly the rest, by header and by `?after=`.
    let mid = events.len() / 2;
    let rest: Vec<i64> = events[mid + 1..].iter().map(|e| e.0).collect();
    for url in [
        format!("{base}/api/feed"),
        format!("{base}/api/feed?after=0"),
    ] {
        let mut resumed = rt
            .block_on(
                client
                    .get(&url)
                    .header("Last-Event-ID", events[mid].0.to_string())
                    .send(),
            )
            .unwrap();
        assert_eq!(resumed.status(), 200);
        let got: Vec<i64> = rt
            .block_on(read_events(&mut resumed, "ended"))
            .iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(got, rest, "{url}");
    }
    let mut resumed = rt
        .block_on(
            client
                .get(format!("{base}/api/feed?after={}", events[mid].0))
                .send(),
        )
        .unwrap();
    let got: Vec<i64> = rt
        .block_on(read_events(&mut resumed, "ended"))
        .iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(got, rest);

    let get = |path: &str| {
        rt.block_on(async {
            let r = client.get(format!("{base}{path}")).send().await.unwrap();
            let status = r.status().as_u16();
            (
                status,
                serde_json::from_slice::<Value>(&r.bytes().await.unwrap()).unwrap(),
            )
        })
    };
    let (status, list) = get("/api/sessions");
    assert_eq!(status, 200);
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{list}");
    assert_eq!(sessions[0]["id"], "live-1");
    assert_eq!(sessions[0]["shown_status"], sessions[0]["status"]);
    assert_ne!(sessions[0]["status"], "running");
    let (status, one) = get("/api/sessions/live-1");
    assert_eq!(status, 200);
    assert_eq!(one["session"]["id"], "live-1");
    assert!(one["events"].is_array() && one["services"].is_array());
    let (status, body) = get("/api/sessions/no-such-session");
    assert_eq!(status, 404);
    assert!(body["error"].as_str().unwrap().contains("no-such-session"));
    let (status, _) = get("/api/sessions?status=running&limit=500");
    assert_eq!(status, 200);
    let (status, _) = get("/api/sessions?limit=-1");
    assert_eq!(status, 400);
    let (status, events) = get("/api/events?level=info&limit=5");
    assert_eq!(status, 200);
    assert!(events["events"].is_array());
    let (status, mems) = get("/api/memories");
    assert_eq!(status, 200);
    assert!(mems["memories"].is_array());
    let (status, _) = get("/nowhere");
    assert_eq!(status, 404);

    // A bad Last-Event-ID is the client's mistake: 400, and the server goes on.
    for bad in ["abc", "-3", "1.5", ""] {
        let status = rt
            .block_on(
                client
                    .get(format!("{base}/api/feed"))
                    .header("Last-Event-ID", bad)
                    .send(),
            )
            .unwrap()
            .status();
        assert_eq!(status, 400, "Last-Event-ID {bad:?}");
    }
    // Oversized headers are refused by hyper, not by a crash.
    let huge = "x".repeat(1 << 20);
    let refused = rt.block_on(
        client
            .get(format!("{base}/api/sessions"))
            .header("X-Huge", huge)
            .send(),
    );
    if let Ok(r) = refused {
        assert!(r.status().is_client_error(), "{}", r.status());
    }
    assert_eq!(get("/api/sessions").0, 200);
}

#[test]
fn a_non_loopback_address_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    crate::support::agentshape()
        .args(["serve", "--addr", "0.0.0.0:0", "--store"])
        .arg(&db)
        .assert()
        .code(64)
        .stderr(predicates::str::contains("--token"));
    crate::support::agentshape()
        .args(["serve", "--token", "", "--store"])
        .arg(&db)
        .assert()
        .code(64);
}

#[test]
fn with_a_token_every_request_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let server = serve(&db, &["--token", "s3cret-token"]);
    let base = server.base.clone();
    let rt = rt();
    let client = reqwest::Client::new();
    let status = |req: reqwest::RequestBuilder| rt.block_on(req.send()).unwrap().status().as_u16();
    assert_eq!(status(client.get(format!("{base}/api/sessions"))), 401);
    assert_eq!(status(client.get(format!("{base}/api/feed"))), 401);
    assert_eq!(
        status(
            client
                .get(format!("{base}/api/sessions"))
                .bearer_auth("s3cret-tokeN")
        ),
        401
    );
    assert_eq!(
        status(
            client
                .get(format!("{base}/api/sessions?token=s3cret"))
                .bearer_auth("")
        ),
        401
    );
    assert_eq!(
        status(
            client
                .get(format!("{base}/api/sessions"))
                .bearer_auth("s3cret-token")
        ),
        200
    );
    assert_eq!(
        status(client.get(format!("{base}/api/feed?token=s3cret-token"))),
        200
    );
    assert_eq!(
        status(
            client
                .get(format!("{base}/api/feed"))
                .bearer_auth("s3cret-token")
        ),
        200
    );
}

#[test]
fn serve_answers_while_a_writer_holds_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let server = serve(&db, &[]);
    let base = server.base.clone();
    // A writer in the middle of a long transaction: WAL readers do not wait on it.
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    writer
        .execute(
            "INSERT INTO feed (session_id, kind, body, created_at) VALUES ('w', 'line', '{}', 't')",
            [],
        )
        .unwrap();
    let rt = rt();
    let client = reqwest::Client::new();
    let status = |path: &str| {
        let url = format!("{base}{path}");
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(3), client.get(url).send()).await
        })
        .unwrap()
        .unwrap()
        .status()
        .as_u16()
    };
    assert_eq!(status("/api/sessions"), 200);
    assert_eq!(status("/api/sessions/w"), 404);
    assert_eq!(status("/api/memories"), 200);
    // Once committed, the row reaches a feed opened from the start.
    writer.execute_batch("COMMIT").unwrap();
    let mut feed = rt
        .block_on(client.get(format!("{base}/api/feed?after=0")).send())
        .unwrap();
    let got = rt.block_on(read_events(&mut feed, "line"));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].2["session_id"], "w");
}
