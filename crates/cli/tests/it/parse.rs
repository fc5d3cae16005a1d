//! `agentshape parse`: the run-summary shape of DESIGN.md, batch order, stdin.

use crate::support::{agentshape, json_lines};

const DESIGN_KEYS: &[&str] = &[
    "file",
    "format",
    "session_id",
    "model",
    "output",
    "structured_output",
    "result",
    "saw_result",
    "api_key_source",
    "error",
    "error_category",
    "warnings",
    "skipped_lines",
    "tool_uses",
];

#[test]
fn one_summary_line_per_file_in_argument_order_with_design_keys() {
    let files = [
        "examples/max-turns.ndjson",
        "examples/healthy-structured.ndjson",
        "examples/malformed-lines.ndjson",
        "examples/rate-limit-429.ndjson",
    ];
    let out = agentshape()
        .args(["parse", "--json"])
        .args(files)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), files.len());
    for (line, file) in lines.iter().zip(files) {
        assert_eq!(line["file"], file);
        for key in DESIGN_KEYS {
            assert!(line.get(key).is_some(), "{file}: missing `{key}`");
        }
        assert_eq!(line["format"], "claude");
    }
    assert_eq!(lines[0]["error_category"], "max_turns");
    assert_eq!(lines[1]["error"], serde_json::Value::Null);
    assert!(lines[1]["structured_output"].is_object());
    assert!(lines[2]["skipped_lines"].as_u64().unwrap() > 0);
    assert_eq!(lines[3]["error_category"], "rate_limit");
    assert_eq!(lines[3]["result"]["is_error"], true);
}

#[test]
fn stdin_is_dash() {
    let text = std::fs::read_to_string(
        crate::support::repo_root().join("examples/healthy-structured.ndjson"),
    )
    .unwrap();
    let out = agentshape()
        .args(["parse", "--json", "-"])
        .write_stdin(text)
        .assert()
        .code(0)
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["file"], "-");
    assert_eq!(lines[0]["saw_result"], true);
}

#[test]
fn human_output_is_readable_and_has_no_json() {
    let out = agentshape()
        .args(["parse", "examples/rate-limit-429.ndjson"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("examples/rate-limit-429.ndjson"), "{text}");
    assert!(text.contains("error (rate_limit)"), "{text}");
    assert!(!text.contains('{'), "{text}");
    assert!(
        !text.contains("\x1b["),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn every_format_is_detected() {
    let out = agentshape()
        .args([
            "parse",
            "--json",
            "examples/codex-exec.jsonl",
            "examples/anthropic-message.json",
            "examples/reply.txt",
        ])
        .assert()
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    let formats: Vec<&str> = lines
        .iter()
        .map(|l| l["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["codex", "anthropic", "text"]);
}
