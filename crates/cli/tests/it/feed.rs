//! The live feed contract (DESIGN.md): a run that writes to a store puts
//! `started`, then every decoded event in transcript order, then `ended`
//! on the feed, while it runs; and its heartbeat really beats.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use agentshape_store::{FeedRow, SqliteStore, Store};
use serde_json::Value;

use crate::support::{assert_exit, assert_exit_for, example, sql};

fn spawn_run(db: &Path, logs: &Path, id: &str, pace: &str) -> std::process::Command {
    let mut cmd = crate::support::agentshape_std();
    cmd.args(["run", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args(["--pace", pace, "--live", "--store"])
        .arg(db)
        .arg("--log-dir")
        .arg(logs)
        .args(["--session-id", id])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Every feed row, read the way `serve` will: pages after the last id seen.
fn whole_feed(db: &Path) -> Vec<FeedRow> {
    let store = SqliteStore::open(db).unwrap();
    let mut rows: Vec<FeedRow> = Vec::new();
    let mut last = 0;
    loop {
        let page = store.feed_after(last, 7).unwrap();
        let Some(end) = page.last() else { break };
        last = end.id;
        rows.extend(page);
    }
    rows
}

/// The event types of `examples/healthy-structured.ndjson`, in order. With
/// a store, `run` keeps the tool results' text for the session page, so
/// each `user` line is a `tool_result` event.
const HEALTHY: &[&str] = &[
    "init",
    "message",
    "text",
    "message",
    "tool_use",
    "tool_result",
    "message",
    "text",
    "tool_use",
    "tool_result",
    "message",
    "tool_use",
    "tool_use",
    "tool_result",
    "tool_result",
    "message",
    "text",
    "message",
    "tool_use",
    "tool_result",
    "message",
    "text",
    "result",
    "end",
];

/// Check one session's rows; `live` is what `--live` printed on stderr.
fn check_session(rows: &[FeedRow], id: &str, live: &str) {
    let mine: Vec<&FeedRow> = rows.iter().filter(|r| r.session_id == id).collect();
    let kinds: Vec<&str> = mine.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"ended"), "{kinds:?}");
    assert!(
        mine.windows(2).all(|w| w[0].id < w[1].id),
        "ids strictly increasing"
    );
    let bodies: Vec<Value> = mine[1..mine.len() - 1]
        .iter()
        .map(|r| {
            assert_eq!(r.kind, "event", "{}", r.body);
            serde_json::from_str(&r.body).unwrap()
        })
        .collect();
    let types: Vec<&str> = bodies
        .iter()
        .map(|b| b["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types, HEALTHY,
        "{id}: one entry per decoded event, in order"
    );
    // The same JSON the hub message carries, without its envelope.
    let hub: Vec<Value> = live
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "event")
        .map(|mut v| {
            let m = v.as_object_mut().unwrap();
            m.remove("session_id");
            m.remove("seq");
            v
        })
        .collect();
    assert_eq!(bodies, hub, "{id}: feed bodies are the hub's");
}

#[test]
fn a_run_feeds_started_then_every_event_in_order_then_ended() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("feed.db");
    let logs = dir.path().join("logs");
    let out = spawn_run(&db, &logs, "one", "50").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 0);
    let rows = whole_feed(&db);
    check_session(&rows, "one", &err);
    assert_eq!(rows.len(), HEALTHY.len() + 2);
}

#[test]
fn two_parallel_runs_each_feed_their_own_entries_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("feed.db");
    let logs = dir.path().join("logs");
    // The store exists first, so neither run races the other's migration.
    SqliteStore::open(&db).unwrap();
    let children: Vec<(&str, Child)> = ["a", "b"]
        .into_iter()
        .map(|id| (id, spawn_run(&db, &logs, id, "50").spawn().unwrap()))
        .collect();
    let mut lives = Vec::new();
    for (id, child) in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_exit_for(&out, 0, format_args!("{id}"));
        lives.push((id, err));
    }
    let rows = whole_feed(&db);
    let mut ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), rows.len(), "no duplicate");
    assert_eq!(rows.len(), 2 * (HEALTHY.len() + 2));
    for (id, live) in &lives {
        check_session(&rows, id, live);
    }
}

#[test]
fn heartbeats_and_lines_reach_the_store_while_the_run_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("beat.db");
    let logs = dir.path().join("logs");
    // Migrated before the run, so the test reads tables that exist.
    SqliteStore::open(&db).unwrap();
    let mut child = spawn_run(&db, &logs, "beat", "200")
        .env("AGENTSHAPE_HEARTBEAT_MS", "50")
        .env("AGENTSHAPE_FEED_FLUSH_MS", "20")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let row = || {
        sql(
            &db,
            "SELECT status, started_at, heartbeat_at FROM sessions WHERE id = 'beat'",
        )
        .pop()
    };
    let events = || {
        sql(
            &db,
            "SELECT COUNT(*) FROM feed WHERE session_id = 'beat' AND kind = 'event'",
        )[0][0]
            .parse::<u64>()
            .unwrap()
    };
    // A hang guard only: both normally hold within a second of the start.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut beat, mut lines) = (false, false);
    while !(beat && lines) {
        assert!(Instant::now() < deadline, "timed out");
        if let Some(r) = row() {
            assert_eq!(
                r[0], "running",
                "the run ended first: beat {beat}, lines {lines}"
            );
            beat |= r[2] != "NULL" && r[2] != r[1];
            lines |= events() > 0;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let rows = sql(&db, "SELECT status, heartbeat_at FROM sessions");
    assert_eq!(rows, vec![vec!["completed", "NULL"]]);
}

#[test]
fn partial_objects_are_fed_between_the_events_as_the_hub_gets_them() {
    let lines = [
        r#"{"type":"system","subtype":"init","session_id":"p"}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"StructuredOutput","input":{}}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"summary\": \"jelly"}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"fin down\", \"events\": []}"}}}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"jellyfin down","events":[]}}"#,
    ];
    let t = crate::support::temp_file(&(lines.join("\n") + "\n"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let out = crate::support::agentshape()
        .args([
            "run",
            "--partial",
            "--live",
            "--session-id",
            "p",
            "--replay",
        ])
        .arg(t.path())
        .arg("--store")
        .arg(&db)
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 0);
    let fed: Vec<Value> = whole_feed(&db)
        .iter()
        .filter(|r| r.kind == "event" || r.kind == "partial")
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    let hub: Vec<Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "event" || v["kind"] == "partial")
        .map(|mut v| {
            let m = v.as_object_mut().unwrap();
            m.remove("session_id");
            m.remove("seq");
            v
        })
        .collect();
    assert!(fed.iter().any(|v| v["kind"] == "partial"), "{fed:?}");
    assert_eq!(fed, hub);
}
