//! `agentshape ask` against stand-in provider servers on 127.0.0.1: the exact
//! request body carries the schema in each provider's field, every failure
//! mode ends in its category and exit code, and the retry feeds errors back.

use agentshape_testkit::{Api, Scripted, StandIn, Stop, error_reply, rate_limited, text_reply};
use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

const KEY: &str = "sk-standin-secret-0123456789";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["ok"],
        "additionalProperties": false
    })
}

const APIS: [(Api, &str, &str); 5] = [
    (Api::Anthropic, "anthropic", "/output_config/format/schema"),
    (
        Api::OpenaiChat,
        "openai",
        "/response_format/json_schema/schema",
    ),
    (
        Api::OpenaiResponses,
        "openai-responses",
        "/text/format/schema",
    ),
    (
        Api::Gemini,
        "gemini",
        "/generationConfig/responseJsonSchema",
    ),
    (Api::Ollama, "ollama", "/format"),
];

/// Run `ask --json` against a stand-in answering with `script`.
fn run(
    api: Api,
    provider: &str,
    script: Vec<Scripted>,
    extra: &[&str],
) -> (i32, Value, StandIn, String) {
    let server = StandIn::start(api, script);
    let schema_file = temp_file(&schema().to_string());
    let out = agentshape()
        .args([
            "ask",
            "--json",
            "--provider",
            provider,
            "--model",
            "m-1",
            "--schema",
        ])
        .arg(schema_file.path())
        .args([
            "--base-url",
            &server.url(),
            "--backoff-ms",
            "1",
            "--max-backoff-ms",
            "20",
        ])
        .args(extra)
        .arg("Did the check pass?")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("OPENAI_API_KEY", KEY)
        .env("GEMINI_API_KEY", KEY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "the key leaked"
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "stderr: {stderr}");
    (out.status.code().unwrap(), lines[0].clone(), server, stderr)
}

#[test]
fn each_provider_sends_the_schema_in_its_native_field_and_validates_the_answer() {
    for (api, provider, field) in APIS {
        let reply = text_reply(api, r#"{"ok": true, "reason": null}"#, Stop::Done, 11, 7);
        let (code, r, server, _) = run(api, provider, vec![reply], &["--retries", "0"]);
        assert_eq!(server.violations(), Vec::<String>::new(), "{provider}");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        let sent = reqs[0]
            .body
            .pointer(field)
            .unwrap_or_else(|| panic!("{provider}: no {field}"));
        if provider.starts_with("openai") {
            // OpenAI strict mode: `reason` made required and nullable.
            assert_eq!(sent["required"], json!(["ok", "reason"]), "{provider}");
            assert_eq!(
                sent["properties"]["reason"]["type"],
                json!(["string", "null"])
            );
            assert_eq!(r["schema_fixed"], true);
            assert_eq!(
                (code, &r["value"]),
                (0, &json!({"ok": true})),
                "{provider}: {r}"
            );
        } else {
            assert_eq!(sent, &schema(), "{provider}");
            // Never trusted: `reason: null` is invalid against the original schema.
            assert_eq!(r["schema_fixed"], false);
            assert_eq!(
                (code, &r["valid"], &r["errors"][0]["instance_path"]),
                (1, &json!(false), &json!("/reason")),
                "{provider}: {r}"
            );
        }
        assert_eq!(
            r["provider"].as_str().unwrap().split('-').next(),
            provider.split('-').next()
        );
        assert_eq!(r["model"], "m-1");
    }
    for (api, provider, _) in APIS {
        let (code, r, _, _) = run(
            api,
            provider,
            vec![text_reply(api, r#"{"ok": false}"#, Stop::Done, 5, 3)],
            &[],
        );
        assert_eq!(
            (code, r["valid"].as_bool(), r["method"].as_str()),
            (0, Some(true), Some("structured")),
            "{provider}: {r}"
        );
        assert_eq!(
            r["usage"],
            json!({"input_tokens": 5, "output_tokens": 3}),
            "{provider}"
        );
        assert_eq!(r["attempts"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn json_wrapped_in_prose_is_extracted() {
    for (api, provider, _) in APIS {
        let text = "Sure, here it is:\n```json\n{\"ok\": true}\n```\nAnything else?";
        let (code, r, _, _) = run(
            api,
            provider,
            vec![text_reply(api, text, Stop::Done, 1, 1)],
            &[],
        );
        assert_eq!(
            (code, r["method"].as_str(), &r["value"]),
            (0, Some("fenced"), &json!({"ok": true})),
            "{provider}: {r}"
        );
    }
}

#[test]
fn invalid_then_valid_feeds_the_errors_back_and_sums_usage() {
    for (api, provider, _) in APIS {
        let script = vec![
            text_reply(api, r#"{"ok": "yes"}"#, Stop::Done, 100, 10),
            text_reply(api, r#"{"ok": true}"#, Stop::Done, 150, 12),
        ];
        let (code, r, server, _) = run(api, provider, script, &[]);
        assert_eq!(code, 0, "{provider}: {r}");
        assert_eq!(
            r["usage"],
            json!({"input_tokens": 250, "output_tokens": 22}),
            "{provider}"
        );
        let attempts = r["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 2);
        assert_eq!(attempts[0]["valid"], false);
        assert_eq!(attempts[0]["errors"][0]["instance_path"], "/ok");
        let second = server.requests()[1].body.to_string();
        assert!(
            second.contains(r#"{\"ok\": \"yes\"}"#),
            "{provider}: the first reply is not in the retry: {second}"
        );
        assert!(
            second.contains("did not validate") && second.contains("/ok: "),
            "{provider}: no errors fed back: {second}"
        );
        assert_eq!(server.violations(), Vec::<String>::new(), "{provider}");
    }
}

#[test]
fn failure_modes_end_in_their_category_and_exit_code() {
    for (api, provider, _) in APIS {
        let mut cases: Vec<(&str, Vec<Scripted>, i32, Value, usize)> = vec![
            (
                "max_tokens",
                vec![text_reply(api, r#"{"ok": tr"#, Stop::MaxTokens, 5, 4096)],
                3,
                json!("max_tokens"),
                1,
            ),
            (
                "401",
                vec![error_reply(api, 401, "invalid x-api-key")],
                3,
                json!("auth"),
                1,
            ),
            (
                "500",
                vec![error_reply(api, 500, "internal"); 4],
                3,
                json!("api"),
                4,
            ),
            (
                "429 then ok",
                vec![
                    rate_limited(api, 1),
                    text_reply(api, r#"{"ok": true}"#, Stop::Done, 1, 1),
                ],
                0,
                Value::Null,
                2,
            ),
            (
                "429 always",
                vec![rate_limited(api, 1); 4],
                3,
                json!("rate_limit"),
                4,
            ),
            (
                "empty",
                vec![text_reply(api, "", Stop::Done, 1, 0); 3],
                2,
                json!("structured_output_retries"),
                3,
            ),
            (
                "still invalid",
                vec![text_reply(api, r#"{"ok": 1}"#, Stop::Done, 1, 1); 3],
                1,
                json!("structured_output_retries"),
                3,
            ),
        ];
        if api != Api::Ollama {
            cases.push((
                "refusal",
                vec![text_reply(
                    api,
                    "I can't help with that.",
                    Stop::Refusal,
                    3,
                    5,
                )],
                3,
                json!("refusal"),
                1,
            ));
        }
        for (name, script, want_code, want_category, want_requests) in cases {
            let (code, r, server, _) = run(api, provider, script, &[]);
            assert_eq!(
                (code, &r["error_category"]),
                (want_code, &want_category),
                "{provider} {name}: {r}"
            );
            assert_eq!(server.requests().len(), want_requests, "{provider} {name}");
            assert_eq!(
                server.violations(),
                Vec::<String>::new(),
                "{provider} {name}"
            );
            if name == "429 then ok" {
                // retry-after: 1 s, capped by --max-backoff-ms 20.
                assert_eq!(r["attempts"][0]["status"], 429);
                assert_eq!(r["attempts"][0]["delay_ms"], 20, "{provider}: {r}");
            }
        }
    }
}

#[test]
fn a_missing_key_is_a_usage_error_without_a_request() {
    let server = StandIn::start(Api::Anthropic, vec![]);
    let schema_file = temp_file(&schema().to_string());
    let out = agentshape()
        .args(["ask", "--provider", "anthropic", "--model", "m", "--schema"])
        .arg(schema_file.path())
        .args(["--base-url", &server.url(), "hi"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert!(String::from_utf8_lossy(&out.stderr).contains("ANTHROPIC_API_KEY is not set"));
    assert!(server.requests().is_empty());
}
