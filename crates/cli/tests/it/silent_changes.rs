//! Issue 27, "data that changes silently": text that became U+FFFD is
//! reported by `extract` (core's Note [Replaced text]), and `ingest` holds a
//! sidecar's session id to `run`'s rule (runtime's Note [Ingested ids]).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, json_lines, repo_root};

/// `extract --json FILE` on `bytes`: exit code and the one result line.
fn extract_bytes(bytes: &[u8]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reply.txt");
    std::fs::write(&file, bytes).unwrap();
    let out = agentshape()
        .args(["extract", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap(), lines[0].clone())
}

/// A result reporting replaced text at `/a`: repair, error of kind `text`,
/// not valid, exit 1.
#[track_caller]
fn assert_replaced(code: i32, r: &Value, value: &Value, method: &str) {
    assert_eq!(code, 1, "{r}");
    assert_eq!(&r["value"], value, "{r}");
    assert_eq!(r["method"], method, "{r}");
    let repairs = r["repairs"].as_array().unwrap();
    assert!(repairs.contains(&json!("replaced_invalid_text")), "{r}");
    assert_eq!(r["valid"], false, "{r}");
    assert_eq!(r["errors"][0]["kind"], "text", "{r}");
    assert_eq!(r["errors"][0]["instance_path"], "/a", "{r}");
}

#[test]
fn extract_reports_a_lone_surrogate_and_a_byte_that_is_not_utf8() {
    let replaced = json!({"a": "\u{fffd}x"});
    let cases: &[(&[u8], &str)] = &[
        // A lone surrogate escape: whole reply, fenced, in prose.
        (br#"{"a": "\udc00x"}"#, "repaired"),
        (b"Here:\n```json\n{\"a\": \"\\udc00x\"}\n```\n", "repaired"),
        (b"The answer is {\"a\": \"\\ud800x\"} as asked.", "repaired"),
        // A Latin-1 byte: strict bare, fenced, repaired.
        (b"{\"a\": \"\xe9x\"}", "bare"),
        (b"Here:\n```json\n{\"a\": \"\xe9x\"}\n```\n", "fenced"),
        (b"{\"a\": \"\xe9x\",}", "repaired"),
    ];
    for (input, method) in cases {
        let (code, r) = extract_bytes(input);
        assert_replaced(code, &r, &replaced, method);
        let also: &[&str] = if input.ends_with(b",}") {
            &["trailing_comma"]
        } else {
            &[]
        };
        let mut want: Vec<&str> = also.to_vec();
        want.push("replaced_invalid_text");
        assert_eq!(r["repairs"], json!(want), "{r}");
    }
    // `validate` already refused both as not JSON; the two agree on "invalid".
    let schema = repo_root().join("schemas/agent-response.json");
    for bytes in [&br#"{"a": "\udc00x"}"#[..], b"{\"a\": \"\xe9x\"}"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("i.json");
        std::fs::write(&file, bytes).unwrap();
        let out = agentshape()
            .args(["validate", "--json", "--schema"])
            .arg(&schema)
            .arg(&file)
            .output()
            .unwrap();
        assert_exit(&out, 1);
    }
    // A bad byte in the prose around the value changes nothing in it.
    let (code, r) = extract_bytes(b"Voil\xe0: {\"a\": \"x\"}");
    assert_eq!(
        (code, &r["repairs"], &r["valid"]),
        (0, &json!([]), &json!(true))
    );
}

#[test]
fn extract_reports_a_lone_surrogate_in_a_transcript_result() {
    let replaced = json!({"a": "\u{fffd}x"});
    // At the line's level (no string holds it: the text used to vanish) and
    // inside the reply's JSON (it used to become U+FFFD, valid).
    for (result, method) in [
        (r#"{\"a\": \"\udc00x\"}"#, "bare"),
        (r#"{\"a\": \"\\udc00x\"}"#, "repaired"),
    ] {
        let line = format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}}\n\
             {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":1,\"result\":\"{result}\"}}"
        );
        let (code, r) = extract_bytes(format!("{line}\n").as_bytes());
        assert_eq!(r["run"]["format"], "claude", "{r}");
        assert_replaced(code, &r, &replaced, method);
        assert_eq!(r["repairs"], json!(["replaced_invalid_text"]), "{r}");
    }
}

#[test]
fn extract_jsonl_reports_replaced_text_on_its_line() {
    let input: &[u8] = b"{\"id\": 1, \"text\": \"{\\\"a\\\": \\\"\\\\udc00x\\\"}\"}\n\
        {\"id\": 2, \"text\": \"{\\\"a\\\": \\\"ok\\\"}\"}\n\
        {\"id\": 3, \"text\": \"{\\\"a\\\": \\\"\xe9x\\\"}\"}\n\
        {\"id\": 4, \"text\": \"\\udc00 {\\\"a\\\": 1}\"}\n";
    let out = agentshape()
        .args(["extract", "--jsonl", "--json", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 4, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines[0]["id"], 1);
    assert_replaced(1, &lines[0], &json!({"a": "\u{fffd}x"}), "repaired");
    assert_eq!(
        (&lines[1]["valid"], &lines[1]["repairs"]),
        (&json!(true), &json!([]))
    );
    // A line that is not UTF-8, or holds a lone surrogate itself, is no
    // reply: an input error, never a value.
    for line in &lines[2..] {
        assert_eq!(line["method"], "none", "{line}");
        assert!(
            line["input_error"]
                .as_str()
                .unwrap()
                .starts_with("not JSON"),
            "{line}"
        );
    }
    assert_exit(&out, 2);
    // Without `--json`: the line is named invalid, with the kind's message.
    let out = agentshape()
        .args(["extract", "--jsonl", "-"])
        .write_stdin(&input[..=input.iter().position(|&b| b == b'\n').unwrap()])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("line 1: repaired but invalid: /a text held a lone surrogate"),
        "{text}"
    );
}

/// A forensic log `dir/<name>.ndjson` (a replayed Claude transcript) and,
/// when `meta` is given, its sidecar.
fn log(dir: &Path, name: &str, meta: Option<&Value>) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.ndjson"));
    std::fs::copy(
        repo_root().join("examples/healthy-structured.ndjson"),
        &path,
    )
    .unwrap();
    if let Some(meta) = meta {
        std::fs::write(dir.join(format!("{name}.meta.json")), meta.to_string()).unwrap();
    }
    path
}

fn meta(id: &str, parent: Option<&str>) -> Value {
    json!({
        "id": id,
        "parent_id": parent,
        "tier": 1,
        "profile": "claude-ops",
        "agent": "claude",
        "started_at": "2026-01-01T00:00:00.000Z",
        "ended_at": "2026-01-01T00:01:00.000Z",
        "status": "completed",
        "exit_code": 0
    })
}

#[test]
fn ingest_skips_a_log_whose_id_breaks_the_run_rule_and_ingests_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let huge = format!("../../{}", "a".repeat(200_000));
    let logs = [
        log(dir.path(), "good", Some(&meta("good-1", None))),
        log(dir.path(), "plain", None),
        log(
            dir.path(),
            "img",
            Some(&meta("<img src=x onerror=alert(1)>", None)),
        ),
        log(dir.path(), "huge", Some(&meta(&huge, None))),
        log(dir.path(), "parent", Some(&meta("child-1", Some("../x")))),
        log(dir.path(), "bad name", None),
    ];
    let out = agentshape()
        .args(["ingest", "--store"])
        .arg(&db)
        .args(&logs)
        .output()
        .unwrap();
    assert_exit(&out, 65);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("2 of 6 sessions added, 4 skipped"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let skipped: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 4, "{stderr}");
    for line in &skipped {
        // One line each, the id cut, naming the rule.
        assert!(line.len() < 600, "{line}");
        assert!(line.contains("characters of [A-Za-z0-9._-]"), "{line}");
    }
    assert!(
        stderr.contains("img.ndjson: skipped: session id \"<img src=x onerror=alert(1)>\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("it has a character outside [A-Za-z0-9._-]"),
        "{stderr}"
    );
    assert!(stderr.contains("(`id` of `"), "{stderr}");
    assert!(
        stderr.contains("200006 bytes) is refused: it is longer than 128 characters"),
        "{stderr}"
    );
    assert!(stderr.contains("(`parent_id` of `"), "{stderr}");
    assert!(
        stderr.contains("session id \"bad name\" (the log's file name"),
        "{stderr}"
    );
    let ids = crate::support::sql(&db, "SELECT id FROM sessions ORDER BY id");
    assert_eq!(ids, [["good-1"], ["plain"]]);
    // `--json`: one line per log, the skipped ones saying why; again, the
    // stored two are already there.
    let out = agentshape()
        .args(["ingest", "--json", "--store"])
        .arg(&db)
        .args(&logs)
        .output()
        .unwrap();
    assert_exit(&out, 65);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 6);
    let skipped: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("skipped").is_some())
        .collect();
    assert_eq!(skipped.len(), 4);
    assert!(skipped.iter().all(|l| l.get("report").is_none()));
    assert!(
        skipped
            .iter()
            .any(|l| l["session_id"] == format!("../../{}…", "a".repeat(34)))
    );
    assert!(
        lines
            .iter()
            .filter(|l| l.get("report").is_some())
            .all(|l| l["report"]["inserted"] == false)
    );
}
