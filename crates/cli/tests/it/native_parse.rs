//! `agentshape parse` on native session files: the format is detected by
//! content and reported as `--format` spells it, with the `session` object.

use crate::support::{agentshape, json_lines};

const FIXTURES: &str = "crates/core/tests/fixtures/native";

#[test]
fn parse_json_reports_claude_session_and_its_session_object() {
    let file = format!("{FIXTURES}/claude-1.0-session.jsonl");
    let out = agentshape()
        .args(["parse", "--json", &file])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    let s = &lines[0];
    assert_eq!(s["format"], "claude-session");
    assert_eq!(s["session_id"], "sess-1");
    assert_eq!(s["output"], "The final answer.");
    assert_eq!(s["result"]["usage"]["output_tokens"], 66);
    let session = &s["session"];
    assert_eq!(session["agent"], "claude-code");
    assert_eq!(session["agent_version"], "1.0.51");
    assert_eq!(session["project"], "/home/u/proj");
    assert_eq!(session["turns"], 2);
    assert_eq!(
        session["tokens"],
        serde_json::json!({"input": 19, "output": 66, "cache_read": 600, "cache_write": 60})
    );
    assert_eq!(
        session["tool_errors"],
        serde_json::json!({"Bash": 1, "Read": 1})
    );
    // Priced from the built-in table, per model, each message counted once.
    let price = |model: &str| match model {
        m if m.starts_with("claude-opus-4") => [15.0, 75.0, 1.50, 18.75],
        m if m.starts_with("claude-3-5-haiku") => [0.80, 4.0, 0.08, 1.0],
        m if m.starts_with("claude-sonnet-4") => [3.0, 15.0, 0.30, 3.75],
        m => panic!("unexpected model {m}"),
    };
    let mut want = 0.0;
    for (model, t) in session["tokens_by_model"].as_object().expect("per model") {
        let p = price(model);
        let n = |k: &str| t[k].as_u64().expect("count") as f64;
        want += (n("input") * p[0]
            + n("output") * p[1]
            + n("cache_read") * p[2]
            + n("cache_write") * p[3])
            / 1e6;
    }
    let got = session["cost_usd"].as_f64().expect("a cost");
    assert!(want > 0.0 && (got - want).abs() < 1e-12, "{got} vs {want}");
    assert_eq!(session["cost_estimated"], true);
    assert_eq!(session["unpriced_models"], serde_json::json!([]));
}

#[test]
fn a_model_without_a_price_is_named_and_a_user_price_file_adds_it() {
    // The fixture's model, renamed to one no price list knows (LiteLLM's
    // prices know claude-opus-4-6).
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(
        crate::support::repo_root().join(format!("{FIXTURES}/claude-2.1-api-errors.jsonl")),
    )
    .expect("fixture")
    .replace("claude-opus-4-6", "house-model-9");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, text).expect("write");
    let file = path.to_string_lossy().into_owned();
    let parse = |prices: Option<&std::path::Path>| {
        let mut cmd = agentshape();
        cmd.env_remove("AGENTSHAPE_PRICES").env("HOME", dir.path());
        if let Some(p) = prices {
            cmd.env("AGENTSHAPE_PRICES", p);
        }
        let out = cmd.args(["parse", "--json", &file]).output().expect("runs");
        json_lines(&out.stdout).remove(0)
    };
    let before = parse(None);
    assert_eq!(
        before["session"]["unpriced_models"],
        serde_json::json!(["house-model-9"])
    );
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[[model]]\nmatch = [\"house-model-9\"]\ninput = 5.0\noutput = 25.0\n",
    )
    .expect("write");
    let after = parse(Some(&prices));
    assert_eq!(after["session"]["unpriced_models"], serde_json::json!([]));
    assert!(after["session"]["cost_usd"].as_f64().expect("priced") > 0.0);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[model]]\nmatch = []\n").expect("write");
    agentshape()
        .env("AGENTSHAPE_PRICES", &bad)
        .args(["parse", "--json", &file])
        .assert()
        .code(64);
}

#[test]
fn parse_detects_each_native_format_and_accepts_it_by_name() {
    for (file, format) in [
        ("codex-rollout.jsonl", "codex-rollout"),
        ("codex-rollout-legacy.jsonl", "codex-rollout"),
        ("gemini-chat.json", "gemini-chat"),
    ] {
        let path = format!("{FIXTURES}/{file}");
        for args in [
            vec!["parse", "--json", &path],
            vec!["parse", "--json", "--format", format, &path],
        ] {
            let out = agentshape()
                .args(&args)
                .assert()
                .code(0)
                .get_output()
                .clone();
            let s = &json_lines(&out.stdout)[0];
            assert_eq!(s["format"], format, "{args:?}");
            assert!(s["session"].is_object(), "{args:?}");
        }
    }
}

#[test]
fn a_session_ending_in_an_api_error_exits_3_and_says_so() {
    let file = format!("{FIXTURES}/claude-2.1-api-errors.jsonl");
    let out = agentshape()
        .args(["parse", &file])
        .env("NO_COLOR", "1")
        .assert()
        .code(3)
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("claude-session"), "{text}");
    assert!(text.contains("session: claude-code 2.1.231"), "{text}");
    assert!(text.contains("error (api)"), "{text}");
}

#[test]
fn stream_json_output_has_no_session_key() {
    let out = agentshape()
        .args(["parse", "--json", "examples/max-turns.ndjson"])
        .assert()
        .get_output()
        .clone();
    let s = &json_lines(&out.stdout)[0];
    assert_eq!(s["format"], "claude");
    assert!(s.get("session").is_none());
}
