//! `agentshape run` with real subprocesses (the fake agent in
//! `tests/fixtures/fake-agent`) and the store checked with SQL.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::{
    agentshape, assert_exit, assert_exit_for, example, fake_agent, json_lines, sql,
};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("agentshape.db")
    }
    fn logs(&self) -> PathBuf {
        self.dir.path().join("logs")
    }
    fn run(&self) -> assert_cmd::Command {
        let mut cmd = agentshape();
        cmd.arg("run")
            .arg("--store")
            .arg(self.db())
            .arg("--log-dir")
            .arg(self.logs());
        cmd
    }
}

fn lines_of(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn replay_healthy_inserts_rows_and_twice_reinforces_memories() {
    let env = Env::new();
    let healthy = example("healthy-structured.ndjson");
    let out = env
        .run()
        .args(["--replay", &healthy, "--profile", "claude-ops", "--json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["method"], "structured");
    assert_eq!(v["session"]["status"], "completed");
    let id = v["session"]["id"].as_str().unwrap().to_owned();
    let db = env.db();
    assert_eq!(
        sql(
            &db,
            "SELECT tier, profile, agent, model, status, extraction_method, cost_usd, num_turns, parent_id FROM sessions"
        ),
        vec![vec![
            "1",
            "claude-ops",
            "replay",
            "claude-sonnet-4-5-20250929",
            "completed",
            "structured",
            "0.0841",
            "7",
            "NULL"
        ]]
    );
    assert_eq!(
        sql(&db, "SELECT level, service FROM events ORDER BY id"),
        vec![
            vec!["critical", "jellyfin"],
            vec!["warning", "postgres"],
            vec!["info", "nginx"]
        ]
    );
    assert_eq!(
        sql(
            &db,
            "SELECT service, category, confidence FROM memories ORDER BY id"
        ),
        vec![
            vec!["jellyfin", "timing", "0.7"],
            vec!["postgres", "replication", "0.7"]
        ]
    );
    assert_eq!(
        sql(
            &db,
            "SELECT COUNT(*), SUM(status = 'down') FROM services_checked"
        ),
        vec![vec!["12", "1"]]
    );
    // The forensic log is the transcript, line for line.
    let log = v["session"]["raw_log_path"].as_str().unwrap();
    assert!(log.ends_with(&format!("{id}.ndjson")));
    assert_eq!(lines_of(log), lines_of(&healthy));

    // Twice: memories reinforced, not duplicated.
    let out = env
        .run()
        .args(["--replay", &healthy, "--profile", "claude-ops"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        sql(
            &db,
            "SELECT service, category, confidence, active FROM memories ORDER BY id"
        ),
        vec![
            vec!["jellyfin", "timing", "0.8", "1"],
            vec!["postgres", "replication", "0.8", "1"]
        ]
    );
    assert_eq!(sql(&db, "SELECT COUNT(*) FROM sessions"), vec![vec!["2"]]);
    assert_eq!(sql(&db, "SELECT COUNT(*) FROM events"), vec![vec!["6"]]);
}

#[test]
fn claude_agent_gets_stream_flags_and_schema_without_a_shell() {
    let env = Env::new();
    let argv = env.dir.path().join("argv");
    let prompt = "check $HOME; `rm -rf /` && echo 'quoted'";
    let out = env
        .run()
        .args([
            "--profile",
            "claude-ops",
            "--",
            &fake_agent(),
            "--model",
            "m",
            "-p",
            prompt,
        ])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_ARGV_DIR", &argv)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let file = std::fs::read_dir(&argv)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let args: Vec<String> = std::fs::read_to_string(file)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    assert_eq!(
        &args[..7],
        [
            "--model",
            "m",
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose"
        ]
    );
    assert_eq!(args[7], "--json-schema");
    let schema: serde_json::Value = serde_json::from_str(&args[8]).unwrap();
    assert_eq!(schema["title"], "Claude Ops Agent Response");
    assert_eq!(args.len(), 9);
    // Stderr is captured beside the log.
    let stderr_log = std::fs::read_dir(env.logs())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".stderr.log"))
        .unwrap();
    assert!(
        std::fs::read_to_string(stderr_log)
            .unwrap()
            .starts_with("fake-agent: model=m")
    );
}

#[test]
fn flags_already_given_are_not_repeated() {
    let env = Env::new();
    let argv = env.dir.path().join("argv");
    env.run()
        .args([
            "--profile",
            "claude-ops",
            "--",
            &fake_agent(),
            "--output-format=stream-json",
            "--verbose",
            "--json-schema",
            "{}",
        ])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_ARGV_DIR", &argv)
        .assert()
        .code(0);
    let file = std::fs::read_dir(&argv)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(
        text,
        "--output-format=stream-json\0--verbose\0--json-schema\0{}\0"
    );
}

#[test]
fn missing_agent_exits_127_with_status_not_found() {
    let env = Env::new();
    let out = env
        .run()
        .args([
            "--profile",
            "claude-ops",
            "--json",
            "--",
            "no-such-agent-xyz",
            "-p",
            "hi",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 127);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("agent executable not found: no-such-agent-xyz")
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "not_found");
    assert_eq!(
        sql(
            &env.db(),
            "SELECT status, exit_code, error, error_category FROM sessions"
        ),
        vec![vec![
            "not_found",
            "127",
            "agent executable not found: no-such-agent-xyz",
            "not_found"
        ]]
    );
    // The forensic log exists (empty) with its sidecar.
    let log = v["session"]["raw_log_path"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(log).unwrap(), "");
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.replace(".ndjson", ".meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["status"], "not_found");
}

#[test]
fn hung_agent_times_out_its_whole_group_and_keeps_what_it_wrote() {
    let env = Env::new();
    let pidfile = env.dir.path().join("pid");
    let started = Instant::now();
    let out = env
        .run()
        .args([
            "--profile",
            "claude-ops",
            "--timeout",
            "1",
            "--json",
            "--",
            &fake_agent(),
        ])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_MODE", "hang")
        .env("FAKE_LINES", "5")
        .env("FAKE_PIDFILE", &pidfile)
        .output()
        .unwrap();
    assert_exit(&out, 3);
    assert!(started.elapsed() < Duration::from_secs(10));
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "timeout");
    assert_eq!(v["session"]["error_category"], "timeout");
    let log = v["session"]["raw_log_path"].as_str().unwrap();
    assert_eq!(
        lines_of(log),
        lines_of(&example("healthy-structured.ndjson"))[..5]
    );
    // The grandchild (`sleep`) died with the group.
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_owned();
    std::thread::sleep(Duration::from_millis(200));
    // Gone, or a zombie waiting for its new parent to reap it: not running.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
    assert!(
        matches!(state, None | Some('Z' | 'X')),
        "sleep {pid} survived the timeout: {stat}"
    );
    assert_eq!(
        sql(
            &env.db(),
            "SELECT status, error, error_category FROM sessions"
        ),
        vec![vec!["timeout", "timeout", "timeout"]]
    );
    assert_eq!(
        sql(&env.db(), "SELECT COUNT(*) FROM events"),
        vec![vec!["0"]]
    );
}

#[test]
fn agent_dying_mid_line_is_failed_with_the_partial_transcript_kept() {
    let env = Env::new();
    let out = env
        .run()
        .args(["--profile", "claude-ops", "--json", "--", &fake_agent()])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_MODE", "die-mid-line")
        .env("FAKE_LINES", "4")
        .env("FAKE_DELAY", "0.01")
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "failed");
    let log = v["session"]["raw_log_path"].as_str().unwrap();
    let mut want = lines_of(&example("healthy-structured.ndjson"))[..4].to_vec();
    want.push(
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"cut he"#.to_owned(),
    );
    assert_eq!(lines_of(log), want);
    assert_eq!(
        sql(&env.db(), "SELECT status, error FROM sessions"),
        vec![vec!["failed", "agent killed by signal 9 before a result"]]
    );
}

#[test]
fn agent_exiting_non_zero_before_a_result_is_failed() {
    let env = Env::new();
    let out = env
        .run()
        .args(["--profile", "claude-ops", "--", &fake_agent()])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_MODE", "fail")
        .env("FAKE_LINES", "3")
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert_eq!(
        sql(&env.db(), "SELECT status, exit_code, error FROM sessions"),
        vec![vec![
            "failed",
            "3",
            "agent exited with code 3 before a result"
        ]]
    );
}

#[test]
fn rate_limited_run_is_an_agent_error() {
    let env = Env::new();
    env.run()
        .args([
            "--replay",
            &example("rate-limit-429.ndjson"),
            "--profile",
            "claude-ops",
        ])
        .assert()
        .code(3);
    assert_eq!(
        sql(&env.db(), "SELECT status, error_category FROM sessions"),
        vec![vec!["error", "rate_limit"]]
    );
}

#[test]
fn legacy_markers_are_stored_with_method_markers() {
    let env = Env::new();
    env.run()
        .args([
            "--replay",
            &example("legacy-markers.ndjson"),
            "--profile",
            "claude-ops",
        ])
        .assert()
        .code(0);
    assert_eq!(
        sql(&env.db(), "SELECT extraction_method FROM sessions"),
        vec![vec!["markers"]]
    );
    assert_eq!(
        sql(&env.db(), "SELECT COUNT(*) > 0 FROM events"),
        vec![vec!["1"]]
    );
}

#[test]
fn a_line_longer_than_the_read_piece_is_logged_whole_and_decoded() {
    // Note [Bounded lines]: a 3 MB tool-result line streams through in pieces.
    let env = Env::new();
    let transcript = example("healthy-structured.ndjson");
    let script = format!(
        "printf '{{\"type\":\"user\",\"message\":{{\"content\":\"'; \
         head -c 3000000 /dev/zero | tr '\\0' a; printf '\"}}}}\\n'; cat '{transcript}'"
    );
    let out = env
        .run()
        .args([
            "--profile",
            "claude-ops",
            "--agent",
            "raw",
            "--json",
            "--",
            "sh",
            "-c",
        ])
        .arg(&script)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["method"], "structured");
    assert_eq!(v["run"]["skipped_lines"], 0);
    let log = std::fs::read(v["session"]["raw_log_path"].as_str().unwrap()).unwrap();
    let first = log.split(|&b| b == b'\n').next().unwrap();
    let want = format!(
        "{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}",
        "a".repeat(3_000_000)
    );
    assert!(first == want.as_bytes(), "the long line is logged whole");
    assert!(log.ends_with(&std::fs::read(&transcript).unwrap()));
}

#[test]
fn failed_invariants_are_stored_as_warning_events() {
    // Seed 002's writer: "3 blockers" while the findings list none.
    let env = Env::new();
    let output = r#"{"findings":[],"counts":{"blocker":3,"major":0,"minor":0,"nit":0}}"#;
    let transcript = crate::support::temp_file(&format!(
        "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"w\"}}\n\
         {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"structured_output\":{output}}}\n"
    ));
    let out = env
        .run()
        .args(["--profile", "code-review", "--replay"])
        .arg(transcript.path())
        .output()
        .unwrap();
    assert_exit_for(&out, 1, "found but invalid");
    let rows = sql(&env.db(), "SELECT level, message FROM events");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], "warning");
    assert!(
        rows[0][1].starts_with("invariant failed at (root): "),
        "{rows:?}"
    );
}
