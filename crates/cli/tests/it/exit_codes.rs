//! Every exit code of DESIGN.md that these commands can produce.

use std::fmt::Write as _;

use crate::support::{agentshape, assert_exit, temp_file};

#[test]
fn ok_is_0_for_a_healthy_run_with_structured_output() {
    agentshape()
        .args([
            "extract",
            "--profile",
            "claude-ops",
            "examples/healthy-structured.ndjson",
        ])
        .assert()
        .code(0);
}

#[test]
fn found_but_invalid_is_1() {
    let reply = temp_file("```json\n{\"action\": \"celebrate\"}\n```");
    agentshape()
        .args(["extract", "--profile", "claude-loop"])
        .arg(reply.path())
        .assert()
        .code(1);
}

#[test]
fn no_structured_output_is_2() {
    let reply = temp_file("I looked at everything and it all seems fine to me.\n");
    agentshape()
        .args(["extract", "--profile", "claude-loop"])
        .arg(reply.path())
        .assert()
        .code(2);
}

#[test]
fn agent_error_is_3() {
    agentshape()
        .args([
            "extract",
            "--profile",
            "claude-ops",
            "examples/rate-limit-429.ndjson",
        ])
        .assert()
        .code(3);
    agentshape()
        .args(["parse", "examples/max-turns.ndjson"])
        .assert()
        .code(3);
}

#[test]
fn usage_errors_are_64_not_clap_s_2() {
    agentshape()
        .args(["extract", "--no-such-flag"])
        .assert()
        .code(64);
    agentshape().args(["frobnicate"]).assert().code(64);
    agentshape().assert().code(64);
    agentshape()
        .args(["extract", "--schema", "a.json", "--profile", "claude-ops"])
        .assert()
        .code(64);
}

#[test]
fn unknown_profile_is_64_with_one_line() {
    let out = agentshape()
        .args(["extract", "--profile", "nope", "examples/reply.txt"])
        .assert()
        .code(64)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown profile `nope`"), "{err}");
}

#[test]
fn bad_schema_is_64_with_one_line() {
    let schema = temp_file(r#"{"type": "objec"}"#);
    let out = agentshape()
        .args(["validate", "--schema"])
        .arg(schema.path())
        .arg("examples/reply.txt")
        .assert()
        .code(64)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("agentshape: schema `"), "{err}");

    let not_json = temp_file("{not json");
    agentshape()
        .args(["validate", "--schema"])
        .arg(not_json.path())
        .arg("examples/reply.txt")
        .assert()
        .code(64);
}

#[test]
fn missing_input_is_66() {
    agentshape()
        .args([
            "parse",
            "examples/healthy-structured.ndjson",
            "no/such/file.ndjson",
        ])
        .assert()
        .code(66);
    agentshape()
        .args([
            "validate",
            "--schema",
            "schemas/loop-action.json",
            "missing.json",
        ])
        .assert()
        .code(66);
    agentshape()
        .args(["validate", "--schema", "no-such-schema.json", "-"])
        .write_stdin("{}")
        .assert()
        .code(66);
}

#[test]
fn help_is_0_and_ends_with_examples() {
    for cmd in [
        "parse", "extract", "validate", "check", "lint", "ask", "run", "ops", "ingest", "memories",
        "sessions", "serve", "import", "watch",
    ] {
        let out = agentshape()
            .args([cmd, "--help"])
            .assert()
            .code(0)
            .get_output()
            .clone();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Examples:\n  agentshape"), "{cmd}: {text}");
    }
    agentshape().arg("--version").assert().code(0);
}

#[test]
fn a_broken_pipe_exits_quietly() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut input = String::new();
    for i in 0..20_000 {
        let _ = writeln!(
            input,
            "{{\"id\": {i}, \"text\": \"here: {{\\\"n\\\": {i}}}\"}}"
        );
    }
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("agentshape"))
        .args(["extract", "--jsonl", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_exit(&out, 0);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_store_that_is_not_a_database_is_65() {
    // Issue 13: 65 is "not a database or damaged"; 66 stays "missing".
    let not_db = temp_file("hello, not sqlite\n");
    let out = agentshape()
        .args(["sessions", "--store"])
        .arg(not_db.path())
        .assert()
        .code(65)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a database"), "{err}");
}
