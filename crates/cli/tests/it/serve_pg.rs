//! `serve --store postgres://…` answers the dashboard's API and pages with
//! the same JSON as over SQLite (Note [Queries on both backends] in the
//! store's `query`). The same forensic logs are ingested into a SQLite file
//! and into a fresh Postgres database (ingest rebuilds identical records),
//! then both servers are asked the same questions.

use std::path::Path;
use std::time::Duration;

use agentshape_testkit::pg;
use serde_json::Value;

use crate::support::served::{Server, serve};
use crate::support::{agentshape, assert_exit, example};

const GUARD: Duration = Duration::from_secs(120);

const RUNS: &[(&str, &str)] = &[
    ("healthy-structured.ndjson", "sv-1"),
    ("rate-limit-429.ndjson", "sv-2"),
    ("legacy-markers.ndjson", "sv-3"),
    ("fenced-only.ndjson", "sv-4"),
];

struct Client {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
}

impl Client {
    fn new() -> Self {
        Client {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            http: reqwest::Client::builder().timeout(GUARD).build().unwrap(),
        }
    }
}

fn get(client: &Client, server: &Server, path: &str) -> (u16, String) {
    client.rt.block_on(async {
        let r = client.http.get(server.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    })
}

/// The first `n` SSE events of `/api/feed?after=0`, as text blocks.
fn feed_blocks(client: &Client, server: &Server, n: usize) -> Vec<String> {
    let mut resp = client
        .rt
        .block_on(
            reqwest::Client::new()
                .get(server.url("/api/feed?after=0"))
                .send(),
        )
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut buf = String::new();
    let mut blocks = Vec::new();
    while blocks.len() < n {
        let chunk = client
            .rt
            .block_on(async { tokio::time::timeout(GUARD, resp.chunk()).await })
            .expect("a feed event within the guard")
            .unwrap();
        let Some(bytes) = chunk else {
            panic!("feed ended after {blocks:?}");
        };
        buf.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            // Keep-alive comments are not events.
            if block.lines().any(|l| l.starts_with("id:")) {
                blocks.push(block);
            }
        }
    }
    blocks.truncate(n);
    blocks
}

fn ingest(store: &str, logs: &Path) {
    let mut cmd = agentshape();
    cmd.args(["ingest", "--store", store]);
    for (_, id) in RUNS {
        cmd.arg(logs.join(format!("{id}.ndjson")));
    }
    let out = cmd.timeout(GUARD).output().unwrap();
    assert_exit(&out, 0);
}

/// The JSON of a body with the `id` of each memory taken out: on Postgres
/// the reinforcing upsert draws an id even when it updates, so memory ids
/// may skip numbers there (they are opaque; nothing pages by them).
fn memory_ids_out(body: &str) -> Value {
    let mut v: Value = serde_json::from_str(body).unwrap();
    if let Some(list) = v.get_mut("memories").and_then(Value::as_array_mut) {
        for m in list {
            if let Some(m) = m.as_object_mut() {
                m.remove("id");
            }
        }
    }
    v
}

#[test]
fn serve_over_postgres_answers_as_over_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    for (file, id) in RUNS {
        let out = agentshape()
            .args(["run", "--profile", "claude-ops", "--no-store", "--replay"])
            .arg(example(file))
            .args(["--session-id", id, "--log-dir"])
            .arg(&logs)
            .timeout(GUARD)
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "{out:?}");
    }
    let db = dir.path().join("agentshape.db");
    let sqlite = format!("sqlite:{}", db.display());
    let url = pg::fresh_db();
    ingest(&sqlite, &logs);
    ingest(&url, &logs);
    let on_sqlite = serve(Path::new(&sqlite), &[]);
    let on_pg = serve(Path::new(&url), &[]);
    let client = Client::new();
    for path in [
        "/api/sessions",
        "/api/sessions?limit=2",
        "/api/sessions?limit=2&before=sv-3",
        "/api/sessions?status=error",
        "/api/sessions?q=RATE",
        "/api/sessions/sv-1",
        "/api/sessions/sv-2",
        "/api/sessions/sv-4",
        "/api/sessions/no-such",
        "/api/events",
        "/api/events?level=critical",
        "/api/memories",
        "/api/overview",
    ] {
        let (a, body_a) = get(&client, &on_sqlite, path);
        let (b, body_b) = get(&client, &on_pg, path);
        assert_eq!((a, b), (a, a), "{path}: {body_b}");
        let (ja, jb) = (memory_ids_out(&body_a), memory_ids_out(&body_b));
        assert_eq!(ja, jb, "{path}: SQLite (left) and Postgres (right) differ");
    }
    let (status, list) = get(&client, &on_pg, "/api/sessions");
    assert_eq!(status, 200, "{list}");
    let list: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["sessions"].as_array().map(Vec::len), Some(4), "{list}");
    let (status, one) = get(&client, &on_pg, "/api/sessions/sv-1");
    assert_eq!(status, 200, "{one}");
    let one: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["services"].as_array().map(Vec::len), Some(12), "{one}");
    // The pages render over Postgres too (they were 501 before).
    for path in ["/", "/sessions", "/sessions/sv-1", "/events", "/memories"] {
        let (status, body) = get(&client, &on_pg, path);
        assert_eq!(status, 200, "{path}: {body}");
    }
    // The feed: the same events, ids and bodies.
    assert_eq!(
        feed_blocks(&client, &on_sqlite, 4),
        feed_blocks(&client, &on_pg, 4)
    );
}
