//! Issue 13, the pure core: error results keep their error, over-long input
//! is skipped (not cut into a "valid" value), numbers are never changed
//! silently, contradictions group without chaining.

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit_for, json_lines, temp_file};

/// Run `agentshape ARGS --json`; exit code and the JSON lines of stdout.
fn run_json(args: &[&str]) -> (i32, Vec<Value>) {
    let out = agentshape().args(args).arg("--json").output().unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code != 101,
        "panic: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, json_lines(&out.stdout))
}

// ---- item 5: error results with an empty `result` ---------------------------

#[test]
fn parse_keeps_the_error_of_a_result_with_an_empty_result() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"type":"result","subtype":"success","is_error":true,"result":"","error":"Rate limit exceeded for your organization"}"#,
            "Rate limit exceeded for your organization",
            "rate_limit",
        ),
        (
            r#"{"type":"result","subtype":"success","is_error":true,"result":"","permission_denials":[{"tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"rm -rf build"}}]}"#,
            "permission denied: Bash (rm -rf build)",
            "api",
        ),
        (
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"result":""}"#,
            "error_max_turns: the maximum number of turns was reached (no detail)",
            "max_turns",
        ),
    ];
    for (line, error, category) in cases {
        let f = temp_file(&format!("{line}\n"));
        let (code, lines) = run_json(&["parse", f.path().to_str().unwrap()]);
        assert_eq!(code, 3, "{line}");
        assert_eq!(lines[0]["error"], *error, "{line}");
        assert_eq!(lines[0]["error_category"], *category, "{line}");
    }
}

// ---- item 12: over-long input and big numbers -------------------------------

#[test]
fn extract_skips_an_over_long_reply_instead_of_cutting_it() {
    let reply = json!({"summary": "x".repeat(200), "n": 1}).to_string();
    let f = temp_file(&reply);
    let (code, lines) = run_json(&[
        "extract",
        "--max-line-bytes",
        "50",
        f.path().to_str().unwrap(),
    ]);
    let r = &lines[0];
    assert_eq!(code, 2, "{r}");
    assert_eq!(r["value"], Value::Null, "{r}");
    assert_eq!(r["method"], "none");
    assert_eq!(r["valid"], false);
    assert_eq!(r["run"]["too_long_lines"], 1, "{r}");
    assert!(
        r["run"]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("skipped"),
        "{r}"
    );
}

#[test]
fn extract_jsonl_reports_an_over_long_line_as_an_input_error() {
    let long = json!({"text": json!({"summary": "y".repeat(300)}).to_string()}).to_string();
    let f = temp_file(&format!("\"{{\\\"ok\\\": 1}}\"\n{long}\n"));
    let (code, lines) = run_json(&[
        "extract",
        "--jsonl",
        "--max-line-bytes",
        "100",
        f.path().to_str().unwrap(),
    ]);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[1]["value"], Value::Null);
    assert!(
        lines[1]["input_error"]
            .as_str()
            .unwrap()
            .contains("skipped")
    );
    assert_ne!(code, 0);
}

/// The three numbers of issue 13, as text a reply could hold.
fn big_numbers() -> Vec<(&'static str, String)> {
    vec![
        ("1e400", "1e400".to_owned()),
        ("100,000 digits", "9".repeat(100_000)),
        ("23 digits", "12345678901234567890123".to_owned()),
    ]
}

#[test]
fn extract_never_changes_a_big_number_silently() {
    for (name, n) in big_numbers() {
        for reply in [
            format!(r#"{{"summary": "s", "n": {n}}}"#),
            format!("Here:\n```json\n{{\"summary\": \"s\", \"n\": {n}}}\n```"),
            format!("{{summary: 's', n: {n},}}"),
        ] {
            let f = temp_file(&reply);
            let (code, lines) = run_json(&["extract", f.path().to_str().unwrap()]);
            let r = &lines[0];
            assert_eq!(code, 1, "{name}: {reply:.80}: {r:.300}");
            assert_eq!(r["valid"], false, "{name}");
            let repairs = r["repairs"].as_array().unwrap();
            assert!(
                repairs.contains(&json!("inexact_number")),
                "{name}: {r:.300}"
            );
            let e = &r["errors"][0];
            assert_eq!(e["kind"], "number", "{name}: {r:.300}");
            assert_eq!(e["instance_path"], "/n");
            assert!(
                e["message"]
                    .as_str()
                    .unwrap()
                    .contains("cannot be represented exactly"),
                "{name}"
            );
        }
    }
}

#[test]
fn validate_never_passes_a_big_number_silently() {
    let schema =
        temp_file(&json!({"type": "object", "properties": {"n": {"type": "number"}}}).to_string());
    for (name, n) in big_numbers() {
        let f = temp_file(&format!(r#"{{"n": {n}}}"#));
        let (code, lines) = run_json(&[
            "validate",
            "--schema",
            schema.path().to_str().unwrap(),
            f.path().to_str().unwrap(),
        ]);
        let r = &lines[0];
        assert_eq!(code, 1, "{name}: {r:.300}");
        assert_eq!(r["valid"], false);
        assert_eq!(r["errors"][0]["kind"], "number", "{name}: {r:.300}");
        assert_eq!(r["errors"][0]["instance_path"], "/n");
    }
}

#[test]
fn validate_coerce_does_not_turn_a_long_digit_string_into_a_float() {
    let schema =
        temp_file(&json!({"type": "object", "properties": {"n": {"type": "integer"}}}).to_string());
    let f = temp_file(r#"{"n": "12345678901234567890123"}"#);
    let out = agentshape()
        .args(["validate", "--json", "--coerce", "--schema"])
        .arg(schema.path())
        .arg(f.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("e+22") && !stdout.contains("e22"),
        "{stdout}"
    );
    let r = &json_lines(&out.stdout)[0];
    assert_exit_for(&out, 1, format_args!("{r}"));
    assert_eq!(r["coercions"], json!([]));
    assert_eq!(r["valid"], false);
}

// ---- item 13: contradictions group without chaining --------------------------

#[test]
fn check_near_lines_does_not_chain_findings() {
    let finding = |line: u64, severity: &str| {
        json!({"findings": [{"file": "f.rs", "line": line, "severity": severity,
                             "description": "unchecked input"}]})
        .to_string()
    };
    let files = [
        temp_file(&finding(10, "blocker")),
        temp_file(&finding(13, "minor")),
        temp_file(&finding(16, "nit")),
    ];
    let mut args = vec!["check", "--contradictions", "--near-lines", "3"];
    let paths: Vec<String> = files
        .iter()
        .map(|f| f.path().to_str().unwrap().to_owned())
        .collect();
    args.extend(paths.iter().map(String::as_str));
    let (code, lines) = run_json(&args);
    assert_eq!(code, 1);
    let found: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "contradiction")
        .collect();
    assert_eq!(found.len(), 1, "{lines:#?}");
    assert_eq!(found[0]["lines"], json!([10, 13]));
}
