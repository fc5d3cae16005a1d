//! `agentshape sessions`: the store overview the README's main job ends with.

use crate::support::{agentshape, assert_exit, json_lines};

#[test]
fn overview_counts_what_run_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for example in ["healthy-structured", "rate-limit-429"] {
        agentshape()
            .args(["run", "--profile", "claude-ops", "--replay"])
            .arg(format!("examples/{example}.ndjson"))
            .arg("--store")
            .arg(&db)
            .arg("--log-dir")
            .arg(dir.path().join("logs"))
            .output()
            .unwrap();
    }
    let out = agentshape()
        .args(["sessions", "--json", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let o = &json_lines(&out.stdout)[0];
    assert_eq!(o["sessions_by_status"]["completed"], 1, "{o}");
    assert_eq!(o["sessions_by_status"]["error"], 1, "{o}");
    assert_eq!(o["events_by_level"]["critical"], 1, "{o}");
    assert_eq!(o["services_checked"], 12, "{o}");
    assert_eq!(o["sessions"].as_array().unwrap().len(), 2);

    let human = agentshape()
        .args(["sessions", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.starts_with("2 sessions (1 completed, 1 error)"),
        "{text}"
    );
    assert!(text.contains("error: rate_limit"), "{text}");
}

#[test]
fn missing_store_is_66() {
    agentshape()
        .args(["sessions", "--store", "no/such.db"])
        .assert()
        .code(66);
}
