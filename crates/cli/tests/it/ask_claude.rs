//! `agentshape ask --provider claude-code` against the fake agent executable
//! (a real subprocess): the exact argument vector, native structured output,
//! validate-and-retry through a fresh prompt, agent errors and exit codes.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{agentshape, json_lines, temp_file};
use crate::support::{assert_exit, assert_exit_for, example, fake_agent};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["ok"],
        "additionalProperties": false
    })
}

/// A Claude Code stream-json transcript whose result carries `structured_output`.
fn transcript_with_usage(structured: &Value, input: u64, output: u64, cost: f64) -> String {
    let result = json!({
        "type": "result", "subtype": "success", "is_error": false, "num_turns": 1,
        "result": "Done.", "session_id": "s-1", "total_cost_usd": cost,
        "usage": {"input_tokens": input, "output_tokens": output, "cache_read_input_tokens": 900},
        "structured_output": structured,
    });
    format!(
        "{}\n{}\n{result}\n",
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"}),
        json!({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "Done."}]}}),
    )
}

/// Every call's standard input, in call order (`FAKE_STDIN_DIR`).
fn stdins(dir: &Path) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect()
}

/// Every call's argv, in call order (the fake agent writes one NUL-separated file per call).
fn argvs(dir: &Path) -> Vec<Vec<String>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).unwrap();
            String::from_utf8(bytes)
                .unwrap()
                .split_terminator('\0')
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Run `ask --json --provider claude-code` with the fake agent and `env`.
fn ask(env: &[(&str, &str)], extra: &[&str], prompt: &str) -> (i32, Value, String) {
    let schema_file = temp_file(&schema().to_string());
    let mut cmd = agentshape();
    cmd.args([
        "ask",
        "--json",
        "--provider",
        "claude-code",
        "--model",
        "sonnet",
    ])
    .arg("--schema")
    .arg(schema_file.path())
    .args(["--claude-bin", &fake_agent()])
    .args(extra)
    .arg(prompt);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "stderr: {stderr}");
    (out.status.code().unwrap(), lines[0].clone(), stderr)
}

#[test]
fn argv_is_exact_and_a_valid_structured_output_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let argv_dir = dir.path().join("argv");
    let stdin_dir = dir.path().join("stdin");
    let marker = dir.path().join("pwned");
    let t = temp_file(&transcript_with_usage(
        &json!({"ok": true, "reason": "green"}),
        12,
        4,
        0.01,
    ));
    // Shell syntax that would create `marker` if the prompt went through a shell.
    let prompt = format!(
        "Is it green? $(touch {m}) `touch {m}`; touch {m} && echo \"q\" 'q' | cat > {m}",
        m = marker.display()
    );
    let (code, v, stderr) = ask(
        &[
            ("FAKE_TRANSCRIPT", &t.path().display().to_string()),
            ("FAKE_ARGV_DIR", &argv_dir.display().to_string()),
            ("FAKE_STDIN_DIR", &stdin_dir.display().to_string()),
        ],
        &["--system", "Answer as JSON."],
        &prompt,
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["method"], "structured");
    assert_eq!(v["valid"], true);
    assert_eq!(v["value"], json!({"ok": true, "reason": "green"}));
    assert_eq!(v["provider"], "claude-code");
    assert_eq!(v["usage"], json!({"input_tokens": 12, "output_tokens": 4}));
    assert_eq!(v["cost_usd"], json!(0.01));
    assert_eq!(v["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(v["attempts"][0]["status"], Value::Null);
    assert!(!marker.exists(), "the prompt was shell-interpreted");
    let calls = argvs(&argv_dir);
    assert_eq!(calls.len(), 1);
    // Note [Prompt on stdin]: the prompt is the agent's standard input.
    assert_eq!(stdins(&stdin_dir), vec![prompt.clone()]);
    let want: Vec<String> = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--json-schema",
        &schema().to_string(),
        "--model",
        "sonnet",
        "--append-system-prompt",
        "Answer as JSON.",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_eq!(calls[0], want);
    let sent: Value = serde_json::from_str(&calls[0][5]).unwrap();
    assert_eq!(sent, schema(), "--json-schema is the schema as JSON");
}

#[test]
fn invalid_then_valid_feeds_the_reply_and_errors_into_the_next_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    let argv_dir = dir.path().join("argv");
    let stdin_dir = dir.path().join("stdin");
    std::fs::create_dir_all(&seq).unwrap();
    std::fs::write(
        seq.join("1.ndjson"),
        transcript_with_usage(&json!({"ok": "yes"}), 10, 5, 0.25),
    )
    .unwrap();
    std::fs::write(
        seq.join("2.ndjson"),
        transcript_with_usage(&json!({"ok": true}), 20, 7, 0.5),
    )
    .unwrap();
    let (code, v, stderr) = ask(
        &[
            ("FAKE_SEQ_DIR", &seq.display().to_string()),
            ("FAKE_ARGV_DIR", &argv_dir.display().to_string()),
            ("FAKE_STDIN_DIR", &stdin_dir.display().to_string()),
        ],
        &[],
        "Did the check pass?",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["value"], json!({"ok": true}));
    assert_eq!(v["method"], "structured");
    let attempts = v["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["valid"], false);
    assert_eq!(attempts[0]["errors"][0]["instance_path"], "/ok");
    assert_eq!(attempts[0]["cost_usd"], json!(0.25));
    assert_eq!(attempts[1]["valid"], true);
    assert_eq!(v["usage"], json!({"input_tokens": 30, "output_tokens": 12}));
    assert_eq!(v["cost_usd"], json!(0.75));
    let calls = argvs(&argv_dir);
    assert_eq!(calls.len(), 2);
    let prompts = stdins(&stdin_dir);
    assert_eq!(prompts.len(), 2);
    assert_eq!(prompts[0], "Did the check pass?");
    let second = &prompts[1];
    assert!(
        second.starts_with("Did the check pass?\n\n--- Your previous reply (attempt 1) ---\n{\"ok\":\"yes\"}\n\n--- Feedback on that reply ---\nYour previous reply did not validate against the JSON Schema:\n- /ok: "),
        "{second}"
    );
    assert!(
        second.contains("\"yes\" is not of type \"boolean\""),
        "{second}"
    );
    // The argv is unchanged between attempts: only the prompt grows.
    assert_eq!(calls[0], calls[1]);
}

#[test]
fn agent_errors_end_in_their_category_and_exit_code() {
    let empty = temp_file("");
    // (env, extra args, exit code, error_category, error contains, attempts)
    let rate = example("rate-limit-429.ndjson");
    let empty_path = empty.path().display().to_string();
    type Case<'a> = (
        Vec<(&'a str, &'a str)>,
        Vec<&'a str>,
        i32,
        &'a str,
        &'a str,
        usize,
    );
    let cases: [Case; 3] = [
        (
            vec![("FAKE_TRANSCRIPT", &rate)],
            vec![],
            3,
            "rate_limit",
            "Request rejected (429)",
            1,
        ),
        (
            vec![("FAKE_TRANSCRIPT", &empty_path), ("FAKE_MODE", "hang")],
            vec!["--timeout", "1"],
            3,
            "timeout",
            "timeout",
            1,
        ),
        (
            vec![("FAKE_TRANSCRIPT", &empty_path), ("FAKE_MODE", "fail")],
            vec![],
            3,
            "api",
            "agent exited with code 3 before a result",
            1,
        ),
    ];
    for (env, extra, code, category, error, n) in cases {
        let (got, v, stderr) = ask(&env, &extra, "check");
        assert_eq!(got, code, "{category}: {stderr}");
        assert_eq!(v["error_category"], category, "{v}");
        let text = v["error"].as_str().unwrap_or_default();
        assert!(text.contains(error), "{category}: {text}");
        assert_eq!(v["attempts"].as_array().unwrap().len(), n, "{category}");
    }
    // The rate-limited run's cost and usage are still reported.
    let (_, v, _) = ask(&[("FAKE_TRANSCRIPT", &rate)], &[], "check");
    assert_eq!(v["cost_usd"], json!(0.0123));
}

#[test]
fn a_missing_executable_exits_127() {
    for bin in ["/nonexistent/dir/claude", "agentshape-no-such-claude"] {
        let schema_file = temp_file(&schema().to_string());
        let out = agentshape()
            .args(["ask", "--provider", "claude-code", "--model", "sonnet"])
            .arg("--schema")
            .arg(schema_file.path())
            .args(["--claude-bin", bin, "check"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 127, format_args!("{bin}"));
        assert!(
            stderr.contains(&format!("agent executable not found: {bin}")),
            "{stderr}"
        );
    }
}

/// Issue 14: a prompt over Linux's 128 KiB single-argument cap (here 300 KiB,
/// read by `ask` from its own stdin) reaches the agent whole, on its stdin;
/// the argv stays small.
#[test]
fn a_300_kib_prompt_goes_on_stdin_whole() {
    let dir = tempfile::tempdir().unwrap();
    let argv_dir = dir.path().join("argv");
    let stdin_dir = dir.path().join("stdin");
    let t = temp_file(&transcript_with_usage(&json!({"ok": true}), 1, 1, 0.0));
    let line = "-- the log line that makes this prompt long, with \"quotes\" and $(no shell)\n";
    let prompt = line.repeat(300 * 1024 / line.len() + 1);
    assert!(prompt.len() > 300 * 1024);
    let schema_file = temp_file(&schema().to_string());
    let out = agentshape()
        .args([
            "ask",
            "--json",
            "--provider",
            "claude-code",
            "--model",
            "sonnet",
        ])
        .arg("--schema")
        .arg(schema_file.path())
        .args(["--claude-bin", &fake_agent(), "-"])
        .env("FAKE_TRANSCRIPT", t.path())
        .env("FAKE_ARGV_DIR", &argv_dir)
        .env("FAKE_STDIN_DIR", &stdin_dir)
        .write_stdin(prompt.clone())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["value"], json!({"ok": true}));
    assert_eq!(stdins(&stdin_dir), vec![prompt]);
    let calls = argvs(&argv_dir);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].iter().all(|a| a.len() < 1024), "{:?}", calls[0]);
}

/// A schema over the cap cannot be sent (`claude` takes it only as an
/// argument): the call ends with a message naming the flag and its size,
/// without starting the agent.
#[test]
fn a_schema_over_the_argument_cap_is_refused_before_spawning() {
    let dir = tempfile::tempdir().unwrap();
    let argv_dir = dir.path().join("argv");
    let mut props = serde_json::Map::new();
    for i in 0..6000 {
        props.insert(format!("field_number_{i:05}"), json!({"type": "string"}));
    }
    let schema = json!({"type": "object", "properties": props});
    assert!(schema.to_string().len() > 128 * 1024);
    let schema_file = temp_file(&schema.to_string());
    let out = agentshape()
        .args([
            "ask",
            "--json",
            "--provider",
            "claude-code",
            "--model",
            "sonnet",
        ])
        .arg("--schema")
        .arg(schema_file.path())
        .args(["--claude-bin", &fake_agent(), "hi"])
        .env("FAKE_ARGV_DIR", &argv_dir)
        .output()
        .unwrap();
    assert_exit(&out, 3);
    let v = &json_lines(&out.stdout)[0];
    let error = v["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("`--json-schema`") && error.contains("128 KiB"),
        "{v}"
    );
    assert!(!argv_dir.exists(), "the agent was started");
}
