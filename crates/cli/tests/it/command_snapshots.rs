//! Exit code, stdout and stderr of the main commands on fixed inputs, as
//! `insta` snapshots (`snapshots/`): a change to what a user sees shows up
//! as a diff to review. One snapshot per exit code of DESIGN.md's table
//! that a fixed input reaches (0, 1, 2, 3, 64, 65, 66). The exact
//! assertions stay in the command's own module; these catch the rest.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::support::agentshape;
use crate::support::snapshot::assert_run_snapshot;

/// A hang guard, never a speed assertion.
const GUARD: Duration = Duration::from_secs(120);

/// `agentshape ARGS` with `stdin`, from the repository root, on a machine
/// with nothing in its home (`home`): no agent transcripts, no config, no
/// store from the environment.
fn run_at(home: &Path, args: &[&str], stdin: &str) -> Output {
    agentshape()
        .args(args)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("AGENTSHAPE_PRICES")
        .env_remove("AGENTSHAPE_TOKEN")
        .write_stdin(stdin)
        .timeout(GUARD)
        .output()
        .unwrap()
}

/// [`run_at`] in a fresh empty home.
fn run(args: &[&str], stdin: &str) -> Output {
    let home = tempfile::tempdir().unwrap();
    run_at(home.path(), args, stdin)
}

const INVALID_REPLY: &str = "```json\n{\"action\": \"celebrate\"}\n```\n";
const PROSE_REPLY: &str = "I looked at everything and it all seems fine to me.\n";

#[test]
fn extract_healthy() {
    let out = run(
        &[
            "extract",
            "--profile",
            "claude-ops",
            "examples/healthy-structured.ndjson",
        ],
        "",
    );
    assert_run_snapshot!("extract_healthy", out);
}

#[test]
fn extract_healthy_json() {
    let out = run(
        &[
            "extract",
            "--json",
            "--profile",
            "claude-ops",
            "examples/healthy-structured.ndjson",
        ],
        "",
    );
    assert_run_snapshot!("extract_healthy_json", out);
}

#[test]
fn extract_invalid_is_1() {
    let out = run(&["extract", "--profile", "claude-loop", "-"], INVALID_REPLY);
    assert_run_snapshot!("extract_invalid_is_1", out);
}

#[test]
fn extract_nothing_found_is_2() {
    let out = run(&["extract", "--profile", "claude-loop", "-"], PROSE_REPLY);
    assert_run_snapshot!("extract_nothing_found_is_2", out);
}

#[test]
fn extract_agent_error_is_3() {
    let out = run(
        &[
            "extract",
            "--profile",
            "claude-ops",
            "examples/rate-limit-429.ndjson",
        ],
        "",
    );
    assert_run_snapshot!("extract_agent_error_is_3", out);
}

#[test]
fn validate_valid() {
    let out = run(
        &["validate", "--schema", "schemas/loop-action.json", "-"],
        r#"{"action": "complete", "reasoning": "all tests pass", "confidence": 90}"#,
    );
    assert_run_snapshot!("validate_valid", out);
}

#[test]
fn validate_invalid_json() {
    let out = run(
        &[
            "validate",
            "--json",
            "--schema",
            "schemas/loop-action.json",
            "-",
        ],
        r#"{"action": "celebrate", "confidence": "high"}"#,
    );
    assert_run_snapshot!("validate_invalid_json", out);
}

#[test]
fn validate_not_json() {
    let out = run(
        &[
            "validate",
            "--schema",
            "schemas/loop-action.json",
            "examples/reply.txt",
        ],
        "",
    );
    assert_run_snapshot!("validate_not_json", out);
}

#[test]
fn parse_healthy() {
    let out = run(&["parse", "examples/healthy-structured.ndjson"], "");
    assert_run_snapshot!("parse_healthy", out);
}

#[test]
fn parse_json_of_every_example() {
    let out = run(
        &[
            "parse",
            "--json",
            "examples/healthy-structured.ndjson",
            "examples/fenced-only.ndjson",
            "examples/malformed-lines.ndjson",
            "examples/max-turns.ndjson",
            "examples/rate-limit-429.ndjson",
        ],
        "",
    );
    assert_run_snapshot!("parse_json_of_every_example", out);
}

#[test]
fn check_writer_counts() {
    let out = run(
        &[
            "check",
            "--profile",
            "code-review",
            "crates/cli/tests/fixtures/check/writer-counts.json",
        ],
        "",
    );
    assert_run_snapshot!("check_writer_counts", out);
}

#[test]
fn lint_for_openai() {
    let out = run(
        &[
            "lint",
            "--provider",
            "openai",
            "--schema",
            "schemas/code-review.json",
        ],
        "",
    );
    assert_run_snapshot!("lint_for_openai", out);
}

/// A home whose store holds the native fixtures (Claude Code, Codex,
/// Gemini CLI sessions), imported with `import --json`.
fn imported(home: &Path) -> (Output, String) {
    let db = home.join("agentshape.db").display().to_string();
    let out = run_at(
        home,
        &[
            "import",
            "--json",
            "--store",
            &db,
            "crates/cli/tests/fixtures/native",
        ],
        "",
    );
    (out, db)
}

#[test]
fn import_json_sessions_and_usage_of_the_native_fixtures() {
    let home = tempfile::tempdir().unwrap();
    let (out, db) = imported(home.path());
    assert_run_snapshot!("import_json_native", out);
    // Forensic logs are looked for in `--log-dir` (default `./logs`, which
    // the checkout may hold from a demo run): an empty one here.
    let logs = home.path().join("logs").display().to_string();
    let out = run_at(
        home.path(),
        &["sessions", "--store", &db, "--log-dir", &logs],
        "",
    );
    assert_run_snapshot!("sessions_native", out);
    let out = run_at(home.path(), &["usage", "daily", "--store", &db], "");
    assert_run_snapshot!("usage_daily_native", out);
}

#[test]
fn stats_of_hooked_sessions() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("hooks.db").display().to_string();
    let state = home.path().join("state");
    for (session, message) in [
        (
            "h1",
            r#"{"action": "dance", "reasoning": "r", "confidence": 5}"#,
        ),
        (
            "h1",
            r#"{"action": "complete", "reasoning": "all tests pass", "confidence": 90}"#,
        ),
        ("h2", "I looked around and everything seems fine."),
    ] {
        let input = serde_json::json!({"session_id": session, "transcript_path": "/nonexistent/t.jsonl",
            "cwd": "/work/project", "hook_event_name": "Stop", "stop_hook_active": false,
            "last_assistant_message": message});
        let out = agentshape()
            .args([
                "hook",
                "stop",
                "--schema",
                "schemas/loop-action.json",
                "--store",
                &db,
            ])
            .env("AGENTSHAPE_STATE_DIR", &state)
            .env_remove("AGENTSHAPE_STORE")
            .write_stdin(input.to_string())
            .timeout(GUARD)
            .output()
            .unwrap();
        crate::support::assert_exit(&out, 0);
    }
    let out = run_at(home.path(), &["stats", "--store", &db], "");
    assert_run_snapshot!("stats_hooked", out);
}

#[test]
fn usage_error_is_64() {
    let out = run(&["extract", "--no-such-flag"], "");
    assert_run_snapshot!("usage_error_is_64", out);
}

#[test]
fn unknown_profile_is_64() {
    let out = run(&["extract", "--profile", "nope", "examples/reply.txt"], "");
    assert_run_snapshot!("unknown_profile_is_64", out);
}

#[test]
fn bad_schema_is_64() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("bad.json");
    std::fs::write(&schema, r#"{"type": "objec"}"#).unwrap();
    let out = run(
        &[
            "validate",
            "--schema",
            schema.to_str().unwrap(),
            "examples/reply.txt",
        ],
        "",
    );
    assert_run_snapshot!("bad_schema_is_64", out);
}

#[test]
fn store_not_a_database_is_65() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("not.db");
    std::fs::write(&db, "hello, not sqlite\n").unwrap();
    let out = run(&["sessions", "--store", db.to_str().unwrap()], "");
    assert_run_snapshot!("store_not_a_database_is_65", out);
}

#[test]
fn missing_input_is_66() {
    let out = run(&["parse", "no/such/file.ndjson"], "");
    assert_run_snapshot!("missing_input_is_66", out);
}
