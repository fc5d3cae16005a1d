//! `agentshape parse` on native session files: the format is detected by
//! content and reported as `--format` spells it, with the `session` object.

use crate::{agentshape, json_lines};

const FIXTURES: &str = "crates/core/tests/fixtures/native";

#[test]
fn parse_json_reports_claude_session_and_its_session_object() {
    let file = format!("{FIXTURES}/claude-1.0-session.jsonl");
    let out = agentshape()
        .args(["parse", "--json", &file])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    let s = &lines[0];
    assert_eq!(s["format"], "claude-session");
    assert_eq!(s["session_id"], "sess-1");
    assert_eq!(s["output"], "The final answer.");
    assert_eq!(s["result"]["usage"]["output_tokens"], 66);
    let session = &s["session"];
    assert_eq!(session["agent"], "claude-code");
    assert_eq!(session["agent_version"], "1.0.51");
    assert_eq!(session["project"], "/home/u/proj");
    assert_eq!(session["turns"], 2);
    assert_eq!(
        session["tokens"],
        serde_json::json!({"input": 19, "output": 66, "cache_read": 600, "cache_write": 60})
    );
    assert_eq!(
        session["tool_errors"],
        serde_json::json!({"Bash": 1, "Read": 1})
    );
    assert_eq!(session["cost_usd"], serde_json::Value::Null);
}

#[test]
fn parse_detects_each_native_format_and_accepts_it_by_name() {
    for (file, format) in [
        ("codex-rollout.jsonl", "codex-rollout"),
        ("codex-rollout-legacy.jsonl", "codex-rollout"),
        ("gemini-chat.json", "gemini-chat"),
    ] {
        let path = format!("{FIXTURES}/{file}");
        for args in [
            vec!["parse", "--json", &path],
            vec!["parse", "--json", "--format", format, &path],
        ] {
            let out = agentshape()
                .args(&args)
                .assert()
                .code(0)
                .get_output()
                .clone();
            let s = &json_lines(&out.stdout)[0];
            assert_eq!(s["format"], format, "{args:?}");
            assert!(s["session"].is_object(), "{args:?}");
        }
    }
}

#[test]
fn a_session_ending_in_an_api_error_exits_3_and_says_so() {
    let file = format!("{FIXTURES}/claude-2.1-api-errors.jsonl");
    let out = agentshape()
        .args(["parse", &file])
        .env("NO_COLOR", "1")
        .assert()
        .code(3)
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("claude-session"), "{text}");
    assert!(text.contains("session: claude-code 2.1.231"), "{text}");
    assert!(text.contains("error (api)"), "{text}");
}

#[test]
fn stream_json_output_has_no_session_key() {
    let out = agentshape()
        .args(["parse", "--json", "examples/max-turns.ndjson"])
        .assert()
        .get_output()
        .clone();
    let s = &json_lines(&out.stdout)[0];
    assert_eq!(s["format"], "claude");
    assert!(s.get("session").is_none());
}
