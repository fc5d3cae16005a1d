//! Issue 11 item 5: Postgres stopped while a `run` is in progress (Note
//! \[Store outage\] in the store's `postgres`). A server of the test's own
//! (`pg::private`) is stopped after the agent has printed its first lines
//! and before it prints the rest, then:
//! - (a) started again while `run` waits to write the session: the session
//!   is stored, every event once;
//! - (b) left down past the outage deadline: the result is still printed,
//!   `run` exits 75 with one line naming the forensic log and the exact
//!   `agentshape ingest` command; that command, once the server is back,
//!   stores the session, and running it again adds nothing (checked by SQL).
//!
//! The agent waits for a file the test creates, so nothing depends on speed.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use agentshape_store::PgStore;
use agentshape_testkit::pg;
use serde_json::Value;

use crate::support::{agentshape, agentshape_std, assert_exit, example, json_lines, wait_until};

/// A hang guard (never a speed assertion).
const GUARD: Duration = Duration::from_secs(120);

/// `run` of an agent that prints the first 3 lines of a transcript, waits
/// for `go` to exist, then prints the rest.
fn start_run(url: &str, dir: &Path, id: &str, outage_ms: &str) -> Child {
    let transcript = example("healthy-structured.ndjson");
    let go = dir.join(format!("{id}.go"));
    let script = format!(
        "head -n 3 '{t}'; while [ ! -e '{go}' ]; do sleep 0.02; done; tail -n +4 '{t}'",
        t = transcript,
        go = go.display()
    );
    agentshape_std()
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--json",
            "--session-id",
            id,
        ])
        .args(["--store", url, "--log-dir"])
        .arg(dir.join("logs"))
        .args(["--", "sh", "-c", &script])
        .env("AGENTSHAPE_STORE_OUTAGE_MS", outage_ms)
        .env("AGENTSHAPE_STORE_CONNECT_MS", "2000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn log_lines(dir: &Path, id: &str) -> usize {
    std::fs::read_to_string(dir.join("logs").join(format!("{id}.ndjson")))
        .map_or(0, |t| t.lines().count())
}

/// The sidecar says the agent ended: `run` is at (or past) its store write.
fn ended(dir: &Path, id: &str) -> bool {
    std::fs::read_to_string(dir.join("logs").join(format!("{id}.meta.json")))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|m| m["status"] != "running")
}

fn wait_output(child: Child) -> std::process::Output {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(GUARD).expect("run ended").unwrap()
}

fn sql(url: &str, q: &str) -> Vec<Vec<String>> {
    PgStore::open(url).unwrap().query_text(q).unwrap()
}

/// What the stored session holds: its status, and its events, services
/// and `ended` feed rows counted.
fn stored(url: &str, id: &str) -> Vec<Vec<String>> {
    sql(
        url,
        &format!(
            "SELECT (SELECT COUNT(*) FROM sessions WHERE id = '{id}'),
                    (SELECT status FROM sessions WHERE id = '{id}'),
                    (SELECT COUNT(*) FROM events WHERE session_id = '{id}'),
                    (SELECT COUNT(*) FROM services_checked WHERE session_id = '{id}'),
                    (SELECT COUNT(*) FROM feed WHERE session_id = '{id}' AND kind = 'ended')"
        ),
    )
}

#[test]
fn a_database_back_within_the_deadline_gets_the_session() {
    let server = pg::private();
    let url = server.fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let child = start_run(&url, dir.path(), "out-a", "120000");
    wait_until("the first lines logged", GUARD, || {
        log_lines(dir.path(), "out-a") >= 3
    });
    server.stop();
    std::fs::write(dir.path().join("out-a.go"), "").unwrap();
    // The agent ended and `run` now waits for the store: bring it back.
    wait_until("the agent ended", GUARD, || ended(dir.path(), "out-a"));
    server.start();
    let out = wait_output(child);
    assert_exit(&out, 0);
    let run = &json_lines(&out.stdout)[0];
    assert_eq!(run["valid"], true, "{run}");
    assert_eq!(run["session"]["store"]["inserted"], true, "{run}");
    assert_eq!(log_lines(dir.path(), "out-a"), 14, "no line lost");
    // Every event and service once, the session completed.
    let want_events = run["value"]["events"].as_array().unwrap().len();
    assert_eq!(
        stored(&url, "out-a"),
        [vec![
            "1".to_owned(),
            "completed".to_owned(),
            want_events.to_string(),
            "12".to_owned(),
            "1".to_owned()
        ]]
    );
    // The live feed got every line the outage held back, before `ended`:
    // the same rows as the same run into SQLite with no outage.
    let feed = |rows: Vec<Vec<String>>| -> Vec<(String, String)> {
        rows.into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect()
    };
    let on_pg = feed(sql(
        &url,
        "SELECT kind, COUNT(*) FROM feed WHERE session_id = 'out-a'
         GROUP BY kind ORDER BY kind",
    ));
    let db = dir.path().join("ref.db");
    std::fs::write(dir.path().join("ref.go"), "").unwrap();
    let reference = wait_output(start_run(
        &format!("sqlite:{}", db.display()),
        dir.path(),
        "ref",
        "0",
    ));
    assert_exit(&reference, 0);
    let c = rusqlite::Connection::open(&db).unwrap();
    let on_sqlite: Vec<(String, String)> = c
        .prepare(
            "SELECT kind, CAST(COUNT(*) AS TEXT) FROM feed WHERE session_id = 'ref'
             GROUP BY kind ORDER BY kind",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(on_pg, on_sqlite);
    let last_two = sql(
        &url,
        "SELECT kind FROM feed WHERE session_id = 'out-a' ORDER BY id DESC LIMIT 2",
    );
    assert_eq!(
        last_two,
        [vec!["ended".to_owned()], vec!["event".to_owned()]]
    );
}

#[test]
fn a_database_down_past_the_deadline_leaves_the_session_for_ingest() {
    let server = pg::private();
    let url = server.fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let child = start_run(&url, dir.path(), "out-b", "300");
    wait_until("the first lines logged", GUARD, || {
        log_lines(dir.path(), "out-b") >= 3
    });
    server.stop();
    std::fs::write(dir.path().join("out-b.go"), "").unwrap();
    let out = wait_output(child);
    let err = String::from_utf8_lossy(&out.stderr);
    // The documented status: the result printed, then 75 and one line.
    assert_exit(&out, 75);
    let run = &json_lines(&out.stdout)[0];
    assert_eq!(run["valid"], true, "{run}");
    assert_eq!(run["session"]["status"], "completed", "{run}");
    assert!(run["session"]["store_error"].is_string(), "{run}");
    let log = dir.path().join("logs").join("out-b.ndjson");
    let hint = format!("`agentshape ingest --store {url} {}`", log.display());
    assert!(err.contains(&hint), "{err}\nwants {hint}");
    assert!(err.contains("session `out-b` was not stored"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(log_lines(dir.path(), "out-b"), 14, "no line lost");

    // Back up: the exact command from the hint, twice.
    server.start();
    for inserted in [true, false] {
        let out = agentshape()
            .args(["ingest", "--json", "--store", &url])
            .arg(&log)
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let report = &json_lines(&out.stdout)[0];
        assert_eq!(report["report"]["inserted"], inserted, "{report}");
    }
    let want_events = run["value"]["events"].as_array().unwrap().len();
    assert_eq!(
        stored(&url, "out-b"),
        [vec![
            "1".to_owned(),
            "completed".to_owned(),
            want_events.to_string(),
            "12".to_owned(),
            "1".to_owned()
        ]]
    );
    // Nothing twice anywhere: no event (session, message) appears twice.
    assert_eq!(
        sql(
            &url,
            "SELECT COUNT(*) FROM (SELECT session_id, message FROM events
             GROUP BY session_id, message HAVING COUNT(*) > 1) d"
        ),
        [vec!["0".to_owned()]]
    );
}
