//! `agentshape ask --provider local`: the in-process engine through the real
//! binary. The `tiny` model has random weights, so a valid answer proves the
//! grammar, and `--unconstrained` proves its absence. A missing model fails
//! with `model::resolve`'s message (never skipped).

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

fn ask_local(schema: &Value, extra: &[&str], prompt: &str) -> (i32, Value, String) {
    let f = temp_file(&schema.to_string());
    let out = agentshape()
        // One thread: llama.cpp's threads spin at each barrier, and on a
        // shared 2-core CI box two of them ran 60 times slower than one.
        .args([
            "ask",
            "--provider",
            "local",
            "--threads",
            "1",
            "--json",
            "--schema",
        ])
        .arg(f.path())
        .args(extra)
        .arg(prompt)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = json_lines(&out.stdout);
    let v = lines.first().cloned().unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stderr)
}

#[test]
fn tiny_model_answers_valid_objects_with_timing() {
    let schemas = [
        json!({"type": "object", "properties": {"level": {"enum": ["low", "high"]}, "n": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["level", "n"], "additionalProperties": false}),
        json!({"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}),
        json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 6}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 2}}, "required": ["name"], "additionalProperties": false}),
    ];
    for s in &schemas {
        let (code, v, err) = ask_local(s, &["--model", "tiny"], "hi");
        assert_eq!(code, 0, "{s}: {v} {err}");
        assert_eq!(v["valid"], json!(true), "{v}");
        assert_eq!(v["provider"], "local");
        assert_eq!(v["attempts"].as_array().map(Vec::len), Some(1), "{v}");
        for key in [
            "load_ms",
            "prompt_ms",
            "sample_ms",
            "grammar_ms",
            "tokens",
            "tokens_per_second",
            "closing_tokens",
            "rewound_tokens",
        ] {
            assert!(v["timing"][key].is_number(), "timing.{key} in {v}");
        }
        let validator = agentshape_core::validate::Validator::new(s).unwrap();
        assert!(validator.errors(&v["value"]).is_empty(), "{v}");
    }
}

/// Note [Closing under the budget], from the CLI: the random-weight model
/// never ends an unbounded string by itself, so without the closing reserve
/// this is exit 3 `max_tokens`.
#[test]
fn an_unbounded_answer_is_closed_before_the_token_limit() {
    let s = json!({"type": "object", "properties": {"summary": {"type": "string"}, "steps": {"type": "array", "items": {"type": "string"}}}, "required": ["summary", "steps"]});
    let (code, v, err) = ask_local(&s, &["--model", "tiny", "--max-tokens", "48"], "hi");
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(v["valid"], json!(true), "{v}");
    assert!(
        v["timing"]["closing_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{v}"
    );
    assert!(
        v["timing"]["tokens"].as_u64().is_some_and(|n| n <= 48),
        "{v}"
    );
}

#[test]
fn unconstrained_tiny_model_fails_after_the_retries() {
    let s = json!({"type": "object", "properties": {"level": {"enum": ["low", "high"]}}, "required": ["level"], "additionalProperties": false});
    let (code, v, err) = ask_local(
        &s,
        &[
            "--model",
            "tiny",
            "--unconstrained",
            "--retries",
            "1",
            "--max-tokens",
            "40",
        ],
        "hi",
    );
    // Random weights, free text: nothing valid. An attempt that runs to the
    // token limit ends the ask (exit 3, `max_tokens`, as for every provider);
    // otherwise the retries run out (1 or 2).
    assert_ne!(v["valid"], json!(true), "{v}");
    let attempts = v["attempts"].as_array().map_or(0, Vec::len);
    match code {
        3 => assert_eq!(v["error_category"], "max_tokens", "{v}"),
        1 | 2 => assert_eq!(attempts, 2, "{v}"),
        _ => panic!("{code} {v} {err}"),
    }
    assert!(attempts >= 1, "{v}");
}

#[test]
fn a_schema_llguidance_rejects_is_a_usage_error_before_loading() {
    let s = json!({"type": "integer", "minimum": 5, "maximum": 1});
    // A model that does not exist: the schema error must come first.
    let (code, _, err) = ask_local(&s, &["--model", "/nonexistent/model.gguf"], "hi");
    assert_eq!(code, 64, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("grammar"), "{err}");
}

#[test]
fn a_missing_model_names_model_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(r#"{"type": "boolean"}"#);
    let out = agentshape()
        .env("AGENTSHAPE_MODEL_DIR", dir.path())
        .args(["ask", "--provider", "local", "--model", "tiny", "--schema"])
        .arg(f.path())
        .arg("hi")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 64);
    assert!(err.contains("agentshape model fetch tiny"), "{err}");
}

#[test]
fn remote_providers_still_need_a_model() {
    let f = temp_file("{\"type\":\"boolean\"}");
    let out = agentshape()
        .args(["ask", "--provider", "ollama", "--schema"])
        .arg(f.path())
        .arg("hi")
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model"));
}

#[test]
fn live_prints_growing_partial_objects() {
    let s = json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99}, "b": {"type": "boolean"}, "c": {"type": "string", "maxLength": 4}}, "required": ["a", "b", "c"], "additionalProperties": false});
    let (code, v, err) = ask_local(&s, &["--model", "tiny", "--live"], "hi");
    assert_eq!(code, 0, "{v} {err}");
    let partials: Vec<Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["kind"] == "partial")
        .map(|m| m["value"].clone())
        .collect();
    assert!(!partials.is_empty(), "{err}");
    let mut seen: Vec<String> = Vec::new();
    for p in &partials {
        let keys: Vec<String> = p
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        for k in &seen {
            assert!(keys.contains(k), "{k} lost in {p}: {err}");
        }
        seen = keys;
    }
    assert_eq!(v["valid"], json!(true));
}

#[test]
fn smollm2_answers_an_agent_response() {
    let out = agentshape()
        .args([
            "ask",
            "--provider",
            "local",
            "--threads",
            "1",
            "--json",
            "--schema",
            "schemas/agent-response.json",
            "The disk on db-1 is 95% full",
        ])
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["valid"], json!(true), "{v}");
}

/// An ops config with one `agent = "local"` tier in a temp dir; `command`
/// when given (the fake agent), else the default (this binary).
fn local_ops(dir: &std::path::Path, command: Option<&str>, model: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("p1.md"), "Check the disks. db-1 is 95% full.").unwrap();
    let command = command.map_or(String::new(), |c| format!("command = [{c:?}]\n"));
    let config = format!(
        "agent = \"local\"\n{command}store = {:?}\nlog_dir = {:?}\nenvironment = \"test lab\"\n\n[policy]\nmax_tier = 1\n\n[[tiers]]\nname = \"observe\"\nmodel = \"{model}\"\nprompt = \"p1.md\"\n",
        dir.join("agentshape.db").display().to_string(),
        dir.join("logs").display().to_string(),
    );
    let path = dir.join("ops.toml");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn an_ops_local_tier_runs_ask_with_the_prompt_on_stdin_and_the_schema_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The fake agent stands in for `agentshape ask`: it prints a plain-text
    // reply holding the value, as `ask` does.
    let reply = json!({"summary": "db-1 disk at 95%", "events": [], "memories": [], "services_checked": [], "escalation": {"needed": false}});
    std::fs::write(d.join("reply.txt"), format!("{reply:#}\n")).unwrap();
    let config = local_ops(d, Some(&crate::support::fake_agent()), "smollm2-135m");
    let out = agentshape()
        .args(["ops", "--once", "--json", "--config"])
        .arg(&config)
        .env("FAKE_TRANSCRIPT", d.join("reply.txt"))
        .env("FAKE_ARGV_DIR", d.join("argv"))
        .env("FAKE_STDIN_DIR", d.join("stdin"))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let argv: Vec<String> = std::fs::read_dir(d.join("argv"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .flat_map(|s| s.split('\0').map(str::to_owned).collect::<Vec<_>>())
        .filter(|s| !s.is_empty())
        .collect();
    let after = |flag: &str| {
        argv.iter()
            .position(|a| a == flag)
            .map(|i| argv[i + 1].clone())
    };
    assert_eq!(&argv[..3], ["ask", "--provider", "local"], "{argv:?}");
    assert_eq!(after("--model").as_deref(), Some("smollm2-135m"));
    assert_eq!(after("--system").as_deref(), Some("Environment: test lab"));
    assert_eq!(argv.last().map(String::as_str), Some("-"));
    let stdin: Vec<String> = std::fs::read_dir(d.join("stdin"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(stdin, ["Check the disks. db-1 is 95% full."]);
    // The schema file is the profile's schema, kept beside the forensic log.
    let schema_path = std::path::PathBuf::from(after("--schema").unwrap());
    assert!(schema_path.starts_with(d.join("logs")), "{schema_path:?}");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let profile: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::repo_root().join("schemas/agent-response.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(schema, profile);
    let rows = crate::support::sql(
        &d.join("agentshape.db"),
        "SELECT agent, model, status, extraction_method, output IS NOT NULL FROM sessions",
    );
    assert_eq!(
        rows,
        vec![vec!["local", "smollm2-135m", "completed", "bare", "1"]]
    );
}

#[test]
fn an_ops_local_tier_with_smollm2_stores_a_valid_session() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = local_ops(d, None, "smollm2-135m");
    // The prompt `smollm2_answers_an_agent_response` answers: a 135M model is
    // weak, and on some prompts it repeats itself inside a string until the
    // per-reply timeout (that case is the timeout's, not this test's).
    std::fs::write(d.join("p1.md"), "The disk on db-1 is 95% full").unwrap();
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("environment = \"test lab\"\n", "");
    std::fs::write(&config, text).unwrap();
    let out = agentshape()
        .args(["ops", "--once", "--json", "--config"])
        .arg(&config)
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 0);
    let rows = crate::support::sql(
        &d.join("agentshape.db"),
        "SELECT agent, model, status, extraction_method, error FROM sessions",
    );
    assert_eq!(
        rows,
        vec![vec!["local", "smollm2-135m", "completed", "bare", "NULL"]],
        "{err}"
    );
}

#[test]
fn an_ops_config_with_an_unknown_agent_names_local_among_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let config = local_ops(dir.path(), None, "tiny");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("agent = \"local\"", "agent = \"llama\"");
    std::fs::write(&config, text).unwrap();
    let out = agentshape()
        .args(["ops", "--once", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_exit(&out, 64);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("expected claude, codex, raw or local"),
        "{err}"
    );
}
