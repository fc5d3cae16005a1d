//! `agentshape extract`: the Extract-result shape, methods, profiles, JSONL.

use serde_json::{Value, json};

use std::fmt::Write as _;

use crate::support::{agentshape, assert_exit, assert_exit_for, json_lines, temp_file};

fn extract_one(args: &[&str]) -> (i32, Value) {
    let out = agentshape()
        .arg("extract")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap(), lines[0].clone())
}

#[test]
fn result_has_the_design_shape() {
    let (code, r) = extract_one(&[
        "--profile",
        "claude-ops",
        "examples/healthy-structured.ndjson",
    ]);
    assert_eq!(code, 0);
    for key in [
        "value",
        "method",
        "repairs",
        "coercions",
        "valid",
        "errors",
        "run",
    ] {
        assert!(r.get(key).is_some(), "missing `{key}` in {r}");
    }
    assert_eq!(r["method"], "structured");
    assert_eq!(r["valid"], true);
    assert_eq!(r["run"]["format"], "claude");
}

#[test]
fn each_example_takes_the_expected_path() {
    let cases = [
        ("examples/healthy-structured.ndjson", 0, "structured"),
        ("examples/fenced-only.ndjson", 0, "fenced"),
        ("examples/legacy-markers.ndjson", 0, "markers"),
        ("examples/malformed-lines.ndjson", 0, "structured"),
        ("examples/rate-limit-429.ndjson", 3, "none"),
    ];
    for (file, want_code, want_method) in cases {
        let (code, r) = extract_one(&["--profile", "claude-ops", file]);
        assert_eq!(
            (code, r["method"].as_str().unwrap()),
            (want_code, want_method),
            "{file}: {r}"
        );
    }
}

#[test]
fn markers_become_agent_response_events_and_memories() {
    let (_, r) = extract_one(&["--profile", "claude-ops", "examples/legacy-markers.ndjson"]);
    let events = r["value"]["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["level"] == "critical" && e["service"] == "jellyfin")
    );
    let memories = r["value"]["memories"].as_array().unwrap();
    assert!(memories.iter().any(|m| m["key"] == "jellyfin:timing"));
}

#[test]
fn plain_text_reply_with_repairs() {
    let reply = temp_file("Done!\n{'action': 'complete', confidence: 90, 'files': [],}\nBye");
    let (code, r) = extract_one(&["--profile", "claude-loop", reply.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(r["method"], "repaired");
    assert_eq!(
        r["value"],
        json!({"action": "complete", "confidence": 90, "files": []})
    );
    let repairs: Vec<&str> = r["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(repairs.contains(&"trailing_comma"), "{repairs:?}");
    assert!(r.get("run").is_none(), "a plain reply has no run summary");
}

#[test]
fn loop_sigils_through_the_claude_loop_profile() {
    let reply = temp_file("All done.\nWORKER_SUCCESS: US-004\n");
    let (code, r) = extract_one(&["--profile", "claude-loop", reply.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(r["method"], "markers");
    assert_eq!(r["value"]["action"], "complete");
}

#[test]
fn invalid_value_reports_errors_in_the_design_shape() {
    let reply = temp_file("```json\n{\"action\": \"celebrate\"}\n```");
    let (code, r) = extract_one(&["--profile", "claude-loop", reply.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(r["valid"], false);
    let e = &r["errors"][0];
    assert_eq!(e["instance_path"], "/action");
    assert_eq!(e["schema_path"], "/properties/action/enum");
    assert!(e["message"].as_str().unwrap().contains("celebrate"));
}

#[test]
fn coerce_reports_each_coercion() {
    let reply = temp_file(r#"{"action": "Complete", "confidence": "90%"}"#);
    let (code, r) = extract_one(&[
        "--profile",
        "claude-loop",
        "--coerce",
        reply.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["value"], json!({"action": "complete", "confidence": 90}));
    assert_eq!(r["coercions"].as_array().unwrap().len(), 2, "{r}");
}

#[test]
fn jsonl_keeps_input_order_and_echoes_ids() {
    let mut input = String::new();
    for i in 0..5000 {
        if i % 3 == 0 {
            let _ = writeln!(input, "{{\"id\": {i}, \"text\": \"no json here\"}}");
        } else {
            let _ = writeln!(
                input,
                "{{\"id\": {i}, \"text\": \"ok: {{\\\"n\\\": {i}}}\"}}"
            );
        }
    }
    input.push_str("not json at all\n\n");
    let out = agentshape()
        .args(["extract", "--jsonl", "--json", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 5001, "one result per non-blank input line");
    for (i, l) in lines.iter().take(5000).enumerate() {
        assert_eq!(l["id"], i, "order");
        if i % 3 == 0 {
            assert_eq!(l["method"], "none");
        } else {
            assert_eq!(l["value"], json!({"n": i}));
            assert_eq!(l["method"], "bare");
        }
    }
    assert_eq!(lines[5000]["line"], 5001);
    assert!(
        lines[5000]["input_error"]
            .as_str()
            .unwrap()
            .starts_with("not JSON")
    );
}

/// `--jsonl --json --schema`: a strict candidate valid against the schema
/// is written from its reading (core's Note [Writing from the tape]) with
/// its escapes as serde writes them; an invalid one is coerced and judged
/// as before; an `x-invariants` violation still makes the line invalid.
#[test]
fn jsonl_with_a_schema_writes_valid_values_and_judges_the_rest() {
    let schema = temp_file(
        &json!({
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"enum": ["complete", "retry"]},
                "confidence": {"type": "number"}
            },
            "x-invariants": [
                {"rule": "self.action != 'retry' || self.confidence < 50",
                 "message": "a retry is not confident"}
            ]
        })
        .to_string(),
    );
    let replies = [
        "Done.\n```json\n{\"action\": \"complete\", \"note\": \"a\\u00e9\\/b\\n\", \"confidence\": 1.50}\n```",
        "{\"action\": \"Complete\", \"confidence\": \"90%\"}",
        "{\"action\": \"retry\", \"confidence\": 80}",
        "{\"confidence\": 3}",
    ];
    let input: String = replies
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}\n", json!({"id": i, "text": r})))
        .collect();
    let out = agentshape()
        .args(["extract", "--jsonl", "--json", "--coerce", "--schema"])
        .arg(schema.path())
        .arg("-")
        .write_stdin(input)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_exit_for(&out, 1, "an invalid line");
    // Serde's escapes: `\u00e9` and `\/` decoded, the float as serde prints it.
    assert!(
        text.contains(
            r#"{"value":{"action":"complete","note":"aé/b\n","confidence":1.5},"method":"fenced","#
        ),
        "{text}"
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(
        lines[1]["value"],
        json!({"action": "complete", "confidence": 90})
    );
    assert_eq!(lines[1]["valid"], true);
    assert_eq!(
        lines[1]["coercions"].as_array().unwrap().len(),
        2,
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["valid"], false);
    assert_eq!(lines[2]["errors"][0]["kind"], "invariant", "{}", lines[2]);
    assert_eq!(lines[3]["valid"], false);
    assert_eq!(lines[3]["value"], json!({"confidence": 3}));
    assert_eq!(lines[3]["id"], 3);
}

#[test]
fn jsonl_accepts_plain_json_strings() {
    let out = agentshape()
        .args(["extract", "--jsonl", "--json"])
        .write_stdin("\"```json\\n[1, 2,]\\n```\"\n")
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines[0]["value"], json!([1, 2]));
    assert_eq!(lines[0]["method"], "repaired");
}

/// Issue 14: prose is never turned into structure (Note [No structure from
/// prose] in core): exit 2, no value.
#[test]
fn prose_with_brackets_is_no_structured_output() {
    for text in [
        "The answer uses the {placeholder} syntax [citation needed].\n",
        "[citation needed]\n",
        "See [1] and ${HOME}; the set {x | x > 0} is open.\n",
    ] {
        let reply = temp_file(text);
        agentshape()
            .args(["extract", "--json"])
            .arg(reply.path())
            .assert()
            .code(2);
    }
}
