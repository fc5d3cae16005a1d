//! `agentshape validate`: verdicts, JSONL order, malformed lines.

use serde_json::json;

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

#[test]
fn one_verdict_per_jsonl_line_in_order() {
    let input = "{\"action\": \"complete\"}\n{\"action\": 5}\n\nnot json\n{\"action\": \"skip\", \"confidence\": 101}\n";
    let (v, got) = loop_action_verdicts(input);
    assert_eq!(got, [(1, true), (2, false), (4, false), (5, false)]);
    assert_eq!(v[1]["errors"][0]["instance_path"], "/action");
    assert!(
        v[2]["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("not valid JSON")
    );
    assert_eq!(
        v[3]["errors"][0]["schema_path"],
        "/properties/confidence/maximum"
    );
}

#[test]
fn single_document_verdict() {
    let doc = temp_file(
        r#"{"findings": [], "counts": {"blocker": 0, "major": 0, "minor": 0, "nit": 0}}"#,
    );
    let out = agentshape()
        .args(["validate", "--json", "--schema", "schemas/code-review.json"])
        .arg(doc.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        json_lines(&out.stdout),
        [json!({"valid": true, "errors": []})]
    );
}

#[test]
fn human_summary_counts_instances() {
    let out = agentshape()
        .args([
            "validate",
            "--schema",
            "schemas/loop-action.json",
            "--jsonl",
            "-",
        ])
        .write_stdin("{\"action\": \"complete\"}\n{}\n")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("line 2: invalid"), "{text}");
    assert!(text.contains("2 instances: 1 valid, 1 invalid"), "{text}");
}

/// Lines read in place (escapes left raw, errors collected from the text)
/// and lines core declines (bytes that are not UTF-8, inside or outside a
/// string) get the verdicts and messages of the `Value` path.
#[test]
fn escaped_invalid_and_non_utf8_lines() {
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(
        b"{\"action\": \"complete\", \"reason\": \"a\\nb \\\"q\\\" \\u00e9\"}\n",
    );
    input.extend_from_slice(b"{\"action\": \"compl\\u0065te\"}\n");
    input.extend_from_slice(b"{\"action\": \"compl\\tete\"}\n");
    input.extend_from_slice(b"{\"action\": \"complete\", \"reason\": \"caf\xe9\"}\n");
    input.extend_from_slice(b"{\"action\": \"complete\"} \xff\n");
    let (v, got) = loop_action_verdicts(input);
    assert_eq!(
        got,
        [(1, true), (2, true), (3, false), (4, false), (5, false)]
    );
    assert_eq!(v[2]["errors"][0]["instance_path"], "/action");
    assert_eq!(v[2]["errors"][0]["schema_path"], "/properties/action/enum");
    assert!(
        v[2]["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("\"compl\\tete\" is not one of"),
        "{}",
        v[2]
    );
    for bad in &v[3..] {
        let message = bad["errors"][0]["message"].as_str().unwrap();
        assert!(message.starts_with("not valid JSON"), "{message}");
    }
}

/// `validate --jsonl --json` of `input` against the loop-action schema, which
/// some line fails (exit 1): every verdict line, and each one's line number
/// and validity.
fn loop_action_verdicts(input: impl Into<Vec<u8>>) -> (Vec<serde_json::Value>, Vec<(u64, bool)>) {
    let out = agentshape()
        .args([
            "validate",
            "--schema",
            "schemas/loop-action.json",
            "--jsonl",
            "--json",
            "-",
        ])
        .write_stdin(input.into())
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let v = json_lines(&out.stdout);
    let got = v
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["valid"].as_bool().unwrap()))
        .collect();
    (v, got)
}
