//! Issue 11's load test, small: 80 sessions of 50 events each, replayed by
//! 8 concurrent `agentshape run` processes into one Postgres database (and
//! the same into one SQLite file), then counted by SQL: every session once,
//! every event once, none lost, none doubled. No timing is asserted; the
//! full-size run with its rates is `bench/store_load.sh`.

use std::path::Path;
use std::time::Duration;

use agentshape_store::{PgStore, SqliteStore};
use agentshape_testkit::pg;
use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit_for, example};

const GUARD: Duration = Duration::from_secs(300);
const PROCESSES: usize = 8;
const SESSIONS: usize = 80;
const EVENTS: usize = 50;

/// `healthy-structured.ndjson` with 50 events, their messages unique to the
/// transcript `n` (as `bench/store_load.py` generates them).
fn unique_transcript(dir: &Path, n: usize) -> std::path::PathBuf {
    let text = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.last_mut().unwrap();
    let mut result: Value = serde_json::from_str(last).unwrap();
    let levels = ["info", "warning", "critical"];
    result["structured_output"]["events"] = (0..EVENTS)
        .map(|i| {
            json!({"level": levels[i % 3], "service": format!("svc-{}", i % 7),
                   "message": format!("transcript {n} event {i}")})
        })
        .collect();
    *last = result.to_string();
    let path = dir.join(format!("t{n}.ndjson"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// 8 workers, each replaying its share of the transcripts one `run` at a time.
fn load(store: &str, dir: &Path) {
    let transcripts: Vec<_> = (0..SESSIONS).map(|n| unique_transcript(dir, n)).collect();
    let logs = dir.join(format!("logs-{}", store.len()));
    std::thread::scope(|s| {
        for w in 0..PROCESSES {
            let (transcripts, logs) = (&transcripts, &logs);
            s.spawn(move || {
                for n in (w..SESSIONS).step_by(PROCESSES) {
                    let out = agentshape()
                        .args(["run", "--profile", "claude-ops", "--replay"])
                        .arg(&transcripts[n])
                        .args(["--session-id", &format!("load-{n}"), "--store", store])
                        .arg("--log-dir")
                        .arg(logs)
                        .timeout(GUARD)
                        .output()
                        .unwrap();
                    assert_exit_for(&out, 0, format_args!("session {n}"));
                }
            });
        }
    });
}

/// The counts every backend must give: sessions, events, sessions without
/// exactly 50 events, (session, message) pairs stored more than once,
/// sessions not `completed`.
const CHECK: &str = "SELECT
    (SELECT COUNT(*) FROM sessions),
    (SELECT COUNT(*) FROM events),
    (SELECT COUNT(*) FROM sessions s
      WHERE (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id) <> 50),
    (SELECT COUNT(*) FROM (SELECT session_id, message FROM events
      GROUP BY session_id, message HAVING COUNT(*) > 1) d),
    (SELECT COUNT(*) FROM sessions WHERE status <> 'completed')";

fn want() -> Vec<Vec<String>> {
    vec![vec![
        SESSIONS.to_string(),
        (SESSIONS * EVENTS).to_string(),
        "0".to_owned(),
        "0".to_owned(),
        "0".to_owned(),
    ]]
}

#[test]
fn eighty_sessions_from_eight_processes_into_postgres_lose_and_double_nothing() {
    let url = pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    load(&url, dir.path());
    let got = PgStore::open(&url).unwrap().query_text(CHECK).unwrap();
    assert_eq!(got, want());
}

#[test]
fn eighty_sessions_from_eight_processes_into_sqlite_lose_and_double_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agentshape.db");
    load(&format!("sqlite:{}", db.display()), dir.path());
    let store = SqliteStore::open_read_only(&db).unwrap();
    let got: Vec<String> = store
        .connection()
        .query_row(CHECK, [], |r| {
            (0..5)
                .map(|i| r.get::<_, i64>(i).map(|v| v.to_string()))
                .collect()
        })
        .unwrap();
    assert_eq!(vec![got], want());
}
