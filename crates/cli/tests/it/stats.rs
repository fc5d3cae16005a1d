//! Issue 31 item 2 through the binary: `agentshape stats` over a store that
//! `agentshape hook stop` filled (a retried session, one that never gave
//! structured output, one valid at once), on SQLite and Postgres; the
//! table, the JSON, and the exit codes.

use std::time::Duration;

use agentshape_testkit::pg;
use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit};

const SCHEMA: &str = "schemas/loop-action.json";
const VALID: &str = r#"{"action": "complete", "reasoning": "all tests pass", "confidence": 90}"#;

fn stop(store: &str, state: &std::path::Path, session: &str, message: &str) {
    let input = json!({"session_id": session, "transcript_path": "/nonexistent/t.jsonl",
        "cwd": "/work/project", "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": message});
    let out = agentshape()
        .args(["hook", "stop", "--schema", SCHEMA, "--store", store])
        .env("AGENTSHAPE_STATE_DIR", state)
        .env_remove("AGENTSHAPE_STORE")
        .write_stdin(input.to_string())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

/// h1: blocked (bad action), then valid; h2: prose only (blocked, no
/// output); h3: valid at once.
fn fill_by_hook(store: &str, state: &std::path::Path) {
    stop(
        store,
        state,
        "h1",
        r#"{"action": "dance", "reasoning": "r", "confidence": 5}"#,
    );
    stop(store, state, "h1", VALID);
    stop(
        store,
        state,
        "h2",
        "I looked around and everything seems fine.",
    );
    stop(store, state, "h3", &format!("Done.\n```json\n{VALID}\n```"));
}

fn stats(store: &str, args: &[&str]) -> std::process::Output {
    agentshape()
        .arg("stats")
        .args(args)
        .args(["--store", store])
        .env_remove("AGENTSHAPE_STORE")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

fn json_of(store: &str, args: &[&str]) -> Value {
    let out = stats(store, &[args, &["--json"]].concat());
    assert_exit(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON line: {text}");
    serde_json::from_str(&text).unwrap()
}

fn check_numbers(v: &Value) {
    assert_eq!(v["by"], "all");
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    let g = &groups[0];
    assert_eq!(g["runs"], 3, "{g}");
    assert_eq!(g["valid_first_try"], 1, "h3: {g}");
    assert_eq!(g["valid_after_retries"], 1, "h1: {g}");
    assert_eq!(g["retries"], 1, "{g}");
    assert_eq!(g["no_output"], 1, "h2: {g}");
    assert_eq!(g["invalid"], 0, "{g}");
    assert_eq!(g["rejected"], 1, "{g}");
    let paths = g["failing_paths"].as_array().unwrap();
    assert_eq!(
        paths[0],
        json!({"path": "/action", "kind": "enum", "count": 1, "example_session": "h1"}),
        "{g}"
    );
}

#[test]
fn stats_reports_retries_rejections_and_failing_paths_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agentshape.db");
    let store = db.to_str().unwrap();
    fill_by_hook(store, &dir.path().join("state"));
    check_numbers(&json_of(store, &[]));

    // By schema and day: one group each (all three today, one schema file).
    let by = json_of(store, &["--by", "schema", "--since", "7d"]);
    assert_eq!(by["groups"][0]["key"], "loop-action.json", "{by}");
    assert_eq!(by["groups"][0]["runs"], 3);
    let later = json_of(store, &["--since", "2999-01-01"]);
    assert_eq!(later["groups"], json!([]), "nothing that late");

    let out = stats(store, &["--by", "profile"]);
    assert_exit(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "Validation by profile",
        "after retry",
        "schemas/loop-action.json",
        "fails at /action (enum): 1×, e.g. session h1",
        "contradictions: not stored",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn stats_gives_the_same_numbers_from_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let url = pg::fresh_db();
    fill_by_hook(&url, &dir.path().join("state"));
    let db = dir.path().join("agentshape.db");
    let file = db.to_str().unwrap();
    fill_by_hook(file, &dir.path().join("state"));
    let (a, b) = (json_of(&url, &[]), json_of(file, &[]));
    check_numbers(&a);
    assert_eq!(a, b, "Postgres (left) and SQLite (right) differ");
    assert_eq!(
        json_of(&url, &["--by", "agent"]),
        json_of(file, &["--by", "agent"])
    );
}

#[test]
fn stats_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let out = stats(missing.to_str().unwrap(), &[]);
    assert_exit(&out, 66);
    assert!(!missing.exists(), "a read-only command creates nothing");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("none.db"), "{err}");
    for bad in [&["--by", "colour"][..], &["--since", "yesterday"][..]] {
        let out = stats(missing.to_str().unwrap(), bad);
        assert_exit(&out, 64);
    }
    let out = stats("mysql://h/db", &[]);
    assert_exit(&out, 64);
}
