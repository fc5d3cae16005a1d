//! The claude-loop flow, `--partial` on the live feed, and `ingest`.

use crate::support::{
    agentshape, assert_exit, assert_exit_for, example, fake_agent, sql, temp_file,
};

fn claude_lines(reply: &str) -> String {
    let text = serde_json::to_string(reply).unwrap();
    format!(
        "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"x\"}}\n\
         {{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":{text}}}]}}}}\n\
         {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":{text}}}\n"
    )
}

#[test]
fn claude_loop_action_and_confidence_drive_exit_and_actions_log() {
    let dir = tempfile::tempdir().unwrap();
    let actions = dir.path().join("actions.jsonl");
    let cases = [
        (
            "Done.\n```json\n{\"action\":\"complete\",\"confidence\":95,\"reasoning\":\"all green\",\"files\":[{\"path\":\"src/a.rs\"}]}\n```",
            0,
            false,
        ),
        (
            "{\"action\":\"implement\",\"confidence\":35,\"reasoning\":\"unclear provider\"}",
            1,
            true,
        ),
        ("All tests pass.\n<loop>COMPLETE</loop>", 0, false),
        ("I could not decide.", 2, false),
    ];
    for (i, (reply, code, low)) in cases.iter().enumerate() {
        let t = temp_file(&claude_lines(reply));
        let out = agentshape()
            .args([
                "run",
                "--profile",
                "claude-loop",
                "--story",
                "US-004",
                "--no-store",
            ])
            .arg("--log-dir")
            .arg(dir.path().join("logs"))
            .arg("--actions-log")
            .arg(&actions)
            .arg("--replay")
            .arg(t.path())
            .output()
            .unwrap();
        assert_exit_for(&out, *code, format_args!("case {i}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains("[WARN] Low confidence (35%) detected for story US-004"),
            *low,
            "{stderr}"
        );
    }
    let entries: Vec<serde_json::Value> = std::fs::read_to_string(&actions)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 4);
    let got: Vec<(
        serde_json::Value,
        serde_json::Value,
        serde_json::Value,
        serde_json::Value,
    )> = entries
        .iter()
        .map(|e| {
            (
                e["story_id"].clone(),
                e["action"].clone(),
                e["confidence"].clone(),
                e["clarification_requested"].clone(),
            )
        })
        .collect();
    use serde_json::json;
    assert_eq!(
        got,
        vec![
            (
                json!("US-004"),
                json!("complete"),
                json!(95.0),
                json!(false)
            ),
            (
                json!("US-004"),
                json!("implement"),
                json!(35.0),
                json!(true)
            ),
            (json!("US-004"), json!("complete"), json!(0.0), json!(false)),
            (json!("US-004"), json!(null), json!(0.0), json!(false)),
        ]
    );
    assert_eq!(entries[0]["files"], json!([{"path": "src/a.rs"}]));
    assert_eq!(entries[2]["extraction_method"], "markers");
    assert!(entries[0]["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn partial_publishes_the_growing_structured_object_on_the_live_feed() {
    let lines = [
        r#"{"type":"system","subtype":"init","session_id":"p"}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"StructuredOutput","input":{}}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"summary\": \"jelly"}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"fin down\", \"events\": [], \"escalation\": {\"needed\": tr"}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"ue}, \"services_checked\": []}"}}}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"jellyfin down","events":[],"escalation":{"needed":true},"services_checked":[]}}"#,
    ];
    let t = temp_file(&(lines.join("\n") + "\n"));
    let dir = tempfile::tempdir().unwrap();
    let argv = dir.path().join("argv");
    let out = agentshape()
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--no-store",
            "--partial",
            "--live",
        ])
        .arg("--log-dir")
        .arg(dir.path())
        .args(["--", &fake_agent()])
        .env("FAKE_TRANSCRIPT", t.path())
        .env("FAKE_DELAY", "0.02")
        .env("FAKE_ARGV_DIR", &argv)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let args = std::fs::read_to_string(
        std::fs::read_dir(&argv)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    assert!(args.contains("--include-partial-messages"));
    let partials: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "partial")
        .collect();
    use serde_json::json;
    assert_eq!(partials.len(), 3);
    assert_eq!(partials[0]["value"], json!({"summary": "jelly"}));
    assert_eq!(
        partials[0]["fields"],
        json!({"summary": "pending", "events": "pending", "escalation": "pending", "services_checked": "pending"})
    );
    // The literal cut mid-way (`tr`) is completed by the tolerant parser
    // (docs/repair-policy.md rule 9, as fixJson); the field is still pending.
    assert_eq!(
        partials[1]["value"],
        json!({"summary": "jellyfin down", "events": [], "escalation": {"needed": true}})
    );
    assert_eq!(partials[1]["fields"]["summary"], "complete");
    assert_eq!(partials[1]["fields"]["escalation"], "pending");
    assert!(
        partials[2]["fields"]
            .as_object()
            .unwrap()
            .values()
            .all(|s| s == "complete")
    );
}

#[test]
fn ingest_rebuilds_an_identical_store_and_twice_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let logs = dir.path().join("logs");
    for name in [
        "healthy-structured.ndjson",
        "legacy-markers.ndjson",
        "rate-limit-429.ndjson",
        "healthy-structured.ndjson",
        "max-turns.ndjson",
    ] {
        agentshape()
            .args(["run", "--profile", "claude-ops", "--replay", &example(name)])
            .arg("--store")
            .arg(&db)
            .arg("--log-dir")
            .arg(&logs)
            .output()
            .unwrap();
    }
    let mut files: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".ndjson"))
        .collect();
    files.sort();
    let rebuilt = dir.path().join("b.db");
    for _ in 0..2 {
        agentshape()
            .arg("ingest")
            .arg("--store")
            .arg(&rebuilt)
            .args(&files)
            .assert()
            .code(0);
    }
    for q in [
        "SELECT * FROM sessions ORDER BY id",
        "SELECT session_id, level, service, message, created_at FROM events ORDER BY session_id, id",
        "SELECT service, category, observation, confidence, active, created_at, updated_at, session_id, tier FROM memories ORDER BY id",
        "SELECT session_id, name, status, detail FROM services_checked ORDER BY session_id, id",
    ] {
        assert_eq!(sql(&db, q), sql(&rebuilt, q), "{q}");
    }
    assert_eq!(
        sql(&rebuilt, "SELECT COUNT(*) FROM sessions"),
        vec![vec!["5"]]
    );
    // The session page's columns are among those compared, and not empty.
    assert_eq!(
        sql(
            &rebuilt,
            "SELECT COUNT(*) FROM sessions WHERE verdict IS NOT NULL"
        ),
        vec![vec!["5"]]
    );
    let with_output: i64 = sql(
        &rebuilt,
        "SELECT COUNT(*) FROM sessions WHERE output IS NOT NULL",
    )[0][0]
        .parse()
        .unwrap();
    assert!(with_output >= 2, "{with_output}");
    assert_eq!(
        sql(&rebuilt, "SELECT MAX(confidence) FROM memories"),
        vec![vec!["0.9"]]
    );
}
