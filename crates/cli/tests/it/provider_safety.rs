//! `agentshape ask` against hostile servers: a base URL that redirects to
//! another origin gets neither the key nor the request, a key echoed in an
//! error body is masked everywhere, and bodies that are endless, huge,
//! truncated or not JSON are cut at the cap and classified `bad_response`
//! with exit 3, each attempt saying why.

use agentshape_testkit::{Answer, Api, Hostile, StandIn, Stop, error_reply, text_reply};
use serde_json::{Value, json};

use crate::support::{agentshape, json_lines, temp_file};

const KEY: &str = "sk-standin-secret-0123456789";

const APIS: [(Api, &str); 5] = [
    (Api::Anthropic, "anthropic"),
    (Api::OpenaiChat, "openai"),
    (Api::OpenaiResponses, "openai-responses"),
    (Api::Gemini, "gemini"),
    (Api::Ollama, "ollama"),
];

/// Run `ask` (with `--json` when `json`) against `base`, every provider's key
/// variable set to [`KEY`] (Ollama's optional `OLLAMA_API_KEY` too). Returns
/// the exit code, stdout and stderr; fails if the key shows in either.
fn ask(provider: &str, base: &str, json: bool, extra: &[&str]) -> (i32, String, String) {
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let schema_file = temp_file(&schema.to_string());
    let mut cmd = agentshape();
    cmd.args(["ask", "--provider", provider, "--model", "m-1", "--schema"])
        .arg(schema_file.path())
        .args([
            "--base-url",
            base,
            "--backoff-ms",
            "1",
            "--max-backoff-ms",
            "5",
        ])
        .args(extra)
        .arg("Did the check pass?")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("OPENAI_API_KEY", KEY)
        .env("GEMINI_API_KEY", KEY)
        .env("OLLAMA_API_KEY", KEY)
        // A hang guard only: every case here ends in well under a second.
        .timeout(std::time::Duration::from_secs(120));
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{provider}: the key leaked:\n{stdout}\n{stderr}"
    );
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn ask_json(provider: &str, base: &str, extra: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = ask(provider, base, true, extra);
    let lines = json_lines(stdout.as_bytes());
    assert_eq!(lines.len(), 1, "{provider}: stderr: {stderr}");
    (code, lines[0].clone())
}

#[test]
fn a_redirect_to_another_origin_gets_neither_the_key_nor_the_request() {
    for (api, provider) in APIS {
        // The second origin would answer a valid reply: following the
        // redirect would "succeed" with exit 0.
        let second = StandIn::start(
            api,
            vec![text_reply(api, r#"{"ok": true}"#, Stop::Done, 1, 1)],
        );
        for status in [307, 308, 302] {
            let first = Hostile::start(vec![Answer::Redirect {
                status,
                location: format!("{}{{path}}", second.url()),
            }]);
            let (code, r) = ask_json(provider, &first.url(), &[]);
            assert_eq!(
                (code, r["error_category"].as_str()),
                (3, Some("api")),
                "{provider} {status}: {r}"
            );
            let error = r["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("redirect") && error.contains(&second.url()),
                "{provider} {status}: the error names neither the redirect nor the origin: {error}"
            );
            // The key went to the base URL the user gave, and only there.
            let sent = first.requests();
            assert_eq!(sent.len(), 1, "{provider}: a redirect is not retried");
            assert!(
                sent[0].headers.iter().any(|(_, v)| v.contains(KEY)),
                "{provider}: the key was not sent to the base URL"
            );
        }
        let seen = second.requests();
        assert!(
            seen.iter()
                .all(|r| r.headers.iter().all(|(_, v)| !v.contains(KEY))),
            "{provider}: the key reached the second origin"
        );
        assert!(
            seen.is_empty(),
            "{provider}: the request reached the second origin: {seen:?}"
        );
    }
}

#[test]
fn a_same_origin_redirect_is_still_followed() {
    // One hostile server: first a redirect to its own path, then the answer.
    let body = text_reply(Api::Anthropic, r#"{"ok": true}"#, Stop::Done, 1, 1).body;
    let server = Hostile::start(vec![
        Answer::Redirect {
            status: 307,
            location: "/v1/messages?moved=1".into(),
        },
        Answer::Raw {
            status: 200,
            body: body.to_string().into_bytes(),
        },
    ]);
    let (code, r) = ask_json("anthropic", &server.url(), &[]);
    assert_eq!((code, &r["value"]), (0, &json!({"ok": true})), "{r}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].path, "/v1/messages?moved=1");
    assert_eq!(reqs[1].header("x-api-key"), Some(KEY));
}

#[test]
fn a_key_echoed_by_the_provider_is_masked_in_every_output() {
    for (api, provider) in APIS {
        let echo = format!("invalid api key {KEY} (check your settings)");
        for json in [true, false] {
            let server = StandIn::start(api, vec![error_reply(api, 401, &echo)]);
            let (code, stdout, stderr) = ask(provider, &server.url(), json, &[]);
            assert_eq!(code, 3, "{provider}: {stdout}{stderr}");
            let all = format!("{stdout}{stderr}");
            assert!(
                all.contains("invalid api key sk-…6789"),
                "{provider} json={json}: the masked key is not shown: {all}"
            );
        }
        // Echoed in a 200 answer's text, too.
        let text = format!("{{\"ok\": true, \"note\": \"{KEY}\"}}");
        let server = StandIn::start(api, vec![text_reply(api, &text, Stop::Done, 1, 1)]);
        let (code, r) = ask_json(provider, &server.url(), &[]);
        assert_eq!(code, 0, "{provider}: {r}");
        assert_eq!(r["value"]["note"], "sk-…6789", "{provider}: {r}");
    }
}

#[test]
fn an_endless_body_stops_at_the_cap() {
    for (api, provider) in APIS {
        let server = Hostile::start(vec![Answer::Endless { limit: 4 << 30 }]);
        // The default cap for one provider, a small one for the others.
        let (cap, extra): (&str, &[&str]) = if api == Api::Anthropic {
            ("16777216", &[])
        } else {
            ("1000000", &["--max-body-bytes", "1000000"])
        };
        let (code, r) = ask_json(provider, &server.url(), extra);
        assert_eq!(
            (code, r["error_category"].as_str()),
            (3, Some("bad_response")),
            "{provider}: {r}"
        );
        let error = r["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(&format!("{cap}-byte cap")),
            "{provider}: {error}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{provider}: an over-long body is not retried"
        );
        assert!(
            server.bytes_sent() < 4 << 30,
            "{provider}: the client read to the end"
        );
    }
}

#[test]
fn a_fifty_megabyte_body_is_refused_at_the_default_cap() {
    let text = "a".repeat(50 << 20);
    let body = text_reply(Api::Anthropic, &text, Stop::Done, 1, 1).body;
    let server = Hostile::start(vec![Answer::Raw {
        status: 200,
        body: body.to_string().into_bytes(),
    }]);
    let (code, r) = ask_json("anthropic", &server.url(), &[]);
    assert_eq!(
        (code, r["error_category"].as_str()),
        (3, Some("bad_response")),
        "{}",
        r["error"]
    );
    let error = r["error"].as_str().unwrap_or_default();
    assert!(error.contains("16777216-byte cap"), "{error}");
    assert!(!error.contains("aaaa"), "the body is not echoed: {error}");
}

#[test]
fn truncated_and_undecodable_bodies_say_why_on_every_attempt() {
    let cases: [(&str, Answer, &str, usize); 4] = [
        (
            "truncated",
            Answer::Truncated {
                claimed: 1000,
                body: br#"{"id": "msg_1", "content": [{"type": "te"#.to_vec(),
            },
            "truncated after 40 of 1000 bytes",
            4,
        ),
        (
            "html",
            Answer::Raw {
                status: 200,
                body: b"<html>gateway says hi</html>".to_vec(),
            },
            "not JSON (28 bytes read)",
            1,
        ),
        (
            "invalid utf-8",
            Answer::Raw {
                status: 200,
                body: b"{\"content\": [{\"type\": \"text\", \"text\": \"\xff\xfe\"}]}".to_vec(),
            },
            "not JSON (45 bytes read)",
            1,
        ),
        (
            "array",
            Answer::Raw {
                status: 200,
                body: b"[1, 2]".to_vec(),
            },
            "not a JSON object (6 bytes read)",
            1,
        ),
    ];
    for (name, answer, want, want_attempts) in cases {
        let server = Hostile::start(vec![answer]);
        let (code, r) = ask_json("anthropic", &server.url(), &[]);
        assert_eq!(
            (code, r["error_category"].as_str()),
            (3, Some("bad_response")),
            "{name}: {r}"
        );
        let attempts = r["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), want_attempts, "{name}: {r}");
        for a in attempts {
            let error = a["error"].as_str().unwrap_or_default();
            assert!(
                error.contains(want),
                "{name}: attempt error {error:?}, want {want:?}"
            );
            assert_eq!(a["error_category"], "bad_response", "{name}: {a}");
        }
        assert_eq!(server.requests().len(), want_attempts, "{name}");
    }
}

#[test]
fn a_reply_without_json_says_so_on_every_attempt() {
    let api = Api::Anthropic;
    let server = StandIn::start(
        api,
        vec![text_reply(api, "I think it passed.", Stop::Done, 1, 1); 2],
    );
    let (code, r) = ask_json("anthropic", &server.url(), &["--retries", "1"]);
    assert_eq!(code, 2, "{r}");
    let attempts = r["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    for a in attempts {
        assert_eq!(a["error"], "no JSON value in the reply", "{a}");
    }
    let server = StandIn::start(
        api,
        vec![text_reply(api, r#"{"ok": "yes"}"#, Stop::Done, 1, 1); 2],
    );
    let (code, r) = ask_json("anthropic", &server.url(), &["--retries", "1"]);
    assert_eq!(code, 1, "{r}");
    for a in r["attempts"].as_array().unwrap() {
        assert_eq!(a["error"], "not valid against the schema (1 error)", "{a}");
    }
}

#[test]
fn max_body_bytes_is_checked() {
    let (code, _, stderr) = ask(
        "anthropic",
        "http://127.0.0.1:9",
        false,
        &["--max-body-bytes", "0"],
    );
    assert_eq!(code, 64, "{stderr}");
    assert!(
        stderr.contains("--max-body-bytes") && !stderr.contains("unexpected argument"),
        "{stderr}"
    );
}

/// Issue 40 §2: a redirect the provider client follows (within the base
/// URL's origin) carries no `Referer`: it would repeat the first URL, with
/// any token in its query.
#[test]
fn a_followed_same_origin_redirect_sends_no_referer() {
    let body = text_reply(Api::Anthropic, r#"{"ok": true}"#, Stop::Done, 1, 1).body;
    let server = Hostile::start(vec![
        Answer::Redirect {
            status: 307,
            location: "/v1/messages?moved=1".into(),
        },
        Answer::Raw {
            status: 200,
            body: body.to_string().into_bytes(),
        },
    ]);
    let (code, r) = ask_json("anthropic", &server.url(), &[]);
    assert_eq!(code, 0, "{r}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].header("referer"), None, "{:?}", reqs[1].headers);
}
