//! Issue 31 §1 through the binary: sessions, `ask`s and hook calls sent as
//! OpenTelemetry traces to a stand-in collector (testkit's `otlp`) that
//! decodes the gzipped protobuf with the published OTLP definitions.

use std::path::Path;

use agentshape_testkit::otlp::{Collector, Span};
use agentshape_testkit::{Api, StandIn, Stop, text_reply};
use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

/// `run --replay FILE --json` into `dir`'s store, with `extra` flags.
fn replay(dir: &Path, file: &str, extra: &[&str]) -> (std::process::Output, Value) {
    let out = agentshape()
        .args(["run", "--json", "--profile", "claude-ops", "--replay", file])
        .arg("--store")
        .arg(dir.join("agentshape.db"))
        .arg("--log-dir")
        .arg(dir.join("logs"))
        .args(extra)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .output()
        .unwrap();
    let v = json_lines(&out.stdout).pop().unwrap_or(Value::Null);
    (out, v)
}

fn named<'a>(spans: &'a [Span], prefix: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.name.starts_with(prefix))
        .collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_replayed_run_is_one_trace_of_its_agent_span_tools_and_verdict() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = replay(
        dir.path(),
        "examples/fenced-only.ndjson",
        &[
            "--otlp-endpoint",
            &c.url(),
            "--otlp-header",
            "Authorization=Bearer s3cr3t-t0ken",
        ],
    );
    let id = v["session"]["id"].as_str().unwrap().to_owned();
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    assert!(!stderr(&out).contains("s3cr3t"), "{}", stderr(&out));
    let spans = c.spans();
    assert_eq!(v["otlp"]["exported"], json!(spans.len()), "{v}");
    assert_eq!(v["otlp"]["dropped"], 0);
    for e in c.exports() {
        assert_eq!(e.header("authorization"), Some("Bearer s3cr3t-t0ken"));
        assert_eq!(e.path, "/v1/traces");
    }
    let roots = named(&spans, "invoke_agent ");
    assert_eq!(roots.len(), 1, "{spans:#?}");
    let root = roots[0];
    assert_eq!(root.parent_span_id, "");
    assert_eq!(root.attr("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(root.attr("gen_ai.conversation.id"), Some(id.as_str()));
    assert_eq!(root.attr("gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(
        root.attr("gen_ai.request.model"),
        Some("claude-sonnet-4-5-20250929")
    );
    assert_eq!(root.status.0, 0, "{root:?}");
    assert!(root.attr("gen_ai.usage.input_tokens").is_some(), "{root:?}");
    assert!(
        root.attr("gen_ai.usage.output_tokens").is_some(),
        "{root:?}"
    );
    let tools = named(&spans, "execute_tool ");
    assert!(tools.len() >= 3, "{spans:#?}");
    for t in &tools {
        assert_eq!(t.parent_span_id, root.span_id);
        assert_eq!(t.trace_id, root.trace_id);
        assert_eq!(t.attr("gen_ai.tool.name"), Some("Bash"));
        assert!(t.attr("gen_ai.tool.call.id").unwrap().starts_with("toolu_"));
        assert!(
            t.start_ns >= root.start_ns && t.end_ns <= root.end_ns && t.start_ns <= t.end_ns,
            "{t:?} {root:?}"
        );
        // No content unless asked.
        assert_eq!(t.attr("gen_ai.tool.call.arguments"), None);
    }
    // A replay's verdict blocks nothing: an evaluation event on the root,
    // no guardrail span; the agent is the one whose transcript it is.
    assert!(named(&spans, "apply_guardrail ").is_empty(), "{spans:#?}");
    assert_eq!(root.name, "invoke_agent claude-code");
    assert_eq!(root.attr("gen_ai.agent.name"), Some("claude-code"));
    let (name, _, result) = &root.events[0];
    assert_eq!(name, "gen_ai.evaluation.result");
    assert_eq!(
        result.get("gen_ai.evaluation.name").map(String::as_str),
        Some("claude-ops")
    );
    assert_eq!(
        result
            .get("agentshape.extraction.method")
            .map(String::as_str),
        Some("fenced")
    );
    assert_eq!(
        result
            .get("gen_ai.evaluation.score.label")
            .map(String::as_str),
        Some(if v["valid"] == true {
            "valid"
        } else {
            "invalid"
        })
    );
    assert_eq!(
        root.resource.get("service.name").map(String::as_str),
        Some("agentshape")
    );

    // The same session exported later from the store: the same trace and span ids.
    let later = Collector::start();
    let out = agentshape()
        .args(["export", "otlp", "--json", "--session", &id, "--store"])
        .arg(dir.path().join("agentshape.db"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", later.url())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(
        (r["sessions"].clone(), r["dropped"].clone()),
        (json!(1), json!(0)),
        "{r}"
    );
    let ids = |s: &[Span]| {
        let mut v: Vec<(String, String, String)> = s
            .iter()
            .map(|s| (s.trace_id.clone(), s.span_id.clone(), s.name.clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&later.spans()), ids(&spans));
}

#[test]
fn a_failed_run_has_its_error_type_and_an_error_status() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let (_, v) = replay(
        dir.path(),
        "examples/rate-limit-429.ndjson",
        &["--otlp-endpoint", &c.url()],
    );
    assert_eq!(v["session"]["error_category"], "rate_limit", "{v}");
    let spans = c.spans();
    let root = named(&spans, "invoke_agent ")[0];
    assert_eq!(root.attr("error.type"), Some("rate_limit"));
    assert_eq!(root.status.0, 2, "{root:?}");
    assert!(!root.status.1.is_empty());
}

#[test]
fn a_retried_ask_is_two_chat_spans_and_two_guardrail_spans() {
    let c = Collector::start();
    let server = StandIn::start(
        Api::Anthropic,
        vec![
            text_reply(Api::Anthropic, r#"{"ok": "yes"}"#, Stop::Done, 100, 10),
            text_reply(Api::Anthropic, r#"{"ok": true}"#, Stop::Done, 150, 12),
        ],
    );
    let schema = temp_file(
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}"#,
    );
    let out = agentshape()
        .args([
            "ask",
            "--json",
            "--provider",
            "anthropic",
            "--model",
            "m-1",
            "--schema",
        ])
        .arg(schema.path())
        .args([
            "--base-url",
            &server.url(),
            "--backoff-ms",
            "1",
            "--max-backoff-ms",
            "20",
        ])
        .arg("Did the check pass?")
        .env("ANTHROPIC_API_KEY", "sk-standin-secret-0123456789")
        // The standard variables, not flags.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", c.url())
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=abc%20def")
        .env("OTEL_SERVICE_NAME", "checker")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["otlp"]["exported"], 5, "{r}");
    assert_eq!(c.exports()[0].header("x-api-key"), Some("abc def"));
    let spans = c.spans();
    let root = named(&spans, "invoke_agent ")[0];
    assert_eq!(root.name, "invoke_agent ask");
    assert_eq!(
        root.resource.get("service.name").map(String::as_str),
        Some("checker")
    );
    assert_eq!(root.attr("gen_ai.usage.input_tokens"), Some("250"));
    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for (n, chat) in chats.iter().enumerate() {
        assert_eq!(chat.name, "chat m-1");
        assert_eq!(chat.kind, 3, "a client span");
        assert_eq!(chat.parent_span_id, root.span_id);
        assert_eq!(
            chat.attr("agentshape.attempt"),
            Some((n + 1).to_string().as_str())
        );
        assert_eq!(chat.attr("gen_ai.provider.name"), Some("anthropic"));
    }
    assert!(chats[0].end_ns <= chats[1].start_ns);
    let checks = named(&spans, "apply_guardrail ");
    assert_eq!(checks.len(), 2);
    let verdict = |s: &Span| s.events[0].2.get("agentshape.guardrail.verdict").cloned();
    assert_eq!(verdict(checks[0]).as_deref(), Some("invalid"));
    assert_eq!(verdict(checks[1]).as_deref(), Some("valid"));
    assert_eq!(
        checks[0].events[0]
            .2
            .get("agentshape.guardrail.failing_paths")
            .map(String::as_str),
        Some(r#"["/ok"]"#)
    );
    assert_eq!(
        checks[0].events[0]
            .2
            .get("agentshape.guardrail.error_count")
            .map(String::as_str),
        Some("1")
    );
}

#[test]
fn a_stop_hook_call_is_a_guardrail_span_in_its_session_trace() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agentshape.db");
    let input = json!({"session_id": "hook-sess-1", "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "```json\n{\"action\": 7}\n```"});
    let out = agentshape()
        .args([
            "hook",
            "stop",
            "--schema",
            "schemas/loop-action.json",
            "--store",
        ])
        .arg(&db)
        .args(["--otlp-endpoint", &c.url()])
        .env("AGENTSHAPE_STATE_DIR", dir.path().join("state"))
        .env_remove("AGENTSHAPE_STORE")
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block");
    let spans = c.spans();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let g = &spans[0];
    assert_eq!(g.name, "apply_guardrail agentshape");
    assert_eq!(
        g.attr("gen_ai.guardrail.policy.id"),
        Some("schemas/loop-action.json")
    );
    assert_eq!(g.attr("gen_ai.guardrail.result.value"), Some("blocked"));
    assert_eq!(g.attr("agentshape.hook.event"), Some("Stop"));
    let result = &g.events[0].2;
    assert_eq!(
        result
            .get("agentshape.guardrail.verdict")
            .map(String::as_str),
        Some("blocked")
    );
    assert_eq!(
        result
            .get("agentshape.extraction.method")
            .map(String::as_str),
        Some("fenced")
    );
    // `export otlp` of that session later: the same trace, the root it points at.
    let later = Collector::start();
    let out = agentshape()
        .args([
            "export",
            "otlp",
            "--session",
            "hook-sess-1",
            "--otlp-endpoint",
            &later.url(),
            "--store",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let again = later.spans();
    let root = named(&again, "invoke_agent ")[0];
    assert_eq!(root.trace_id, g.trace_id);
    assert_eq!(g.parent_span_id, root.span_id);
    assert!(again.iter().any(|s| s.span_id == g.span_id));
}

#[test]
fn export_otlp_picks_sessions_by_since_and_by_id() {
    let dir = tempfile::tempdir().unwrap();
    for id in ["old-one", "new-one"] {
        let (out, _) = replay(
            dir.path(),
            "examples/fenced-only.ndjson",
            &["--session-id", id],
        );
        assert!(out.status.code().unwrap() < 64, "{}", stderr(&out));
    }
    let db = dir.path().join("agentshape.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE sessions SET started_at = '2020-01-01T00:00:00.000Z', ended_at = '2020-01-01T00:01:00.000Z', \
             input_tokens = 5, cache_read_tokens = 1000, cache_write_tokens = 20 WHERE id = 'old-one'",
            [],
        )
        .unwrap();
    let export = |args: &[&str]| {
        let c = Collector::start();
        let out = agentshape()
            .args(["export", "otlp", "--otlp-endpoint", &c.url(), "--store"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let mut convs: Vec<String> = named(&c.spans(), "invoke_agent ")
            .iter()
            .map(|s| s.attr("gen_ai.conversation.id").unwrap().to_owned())
            .collect();
        convs.sort();
        (convs, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert_eq!(export(&[]).0, ["new-one", "old-one"]);
    let (convs, text) = export(&["--since", "7d"]);
    assert_eq!(convs, ["new-one"]);
    assert!(text.starts_with("exported 1 session(s): "), "{text}");
    assert_eq!(export(&["--session", "old-one"]).0, ["old-one"]);
    // An old root keeps its stored times.
    let c = Collector::start();
    let out = agentshape()
        .args([
            "export",
            "otlp",
            "--session",
            "old-one",
            "--otlp-endpoint",
            &c.url(),
            "--store",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let root = named(&c.spans(), "invoke_agent ")[0].clone();
    assert_eq!(root.start_ns, 1_577_836_800_000_000_000);
    assert_eq!(root.end_ns, 1_577_836_860_000_000_000);
    // Cache reads and writes are counted inside the input tokens.
    assert_eq!(root.attr("gen_ai.usage.input_tokens"), Some("1025"));
    assert_eq!(
        root.attr("gen_ai.usage.cache_read.input_tokens"),
        Some("1000")
    );
    assert_eq!(
        root.attr("gen_ai.usage.cache_creation.input_tokens"),
        Some("20")
    );
}

#[test]
fn contents_only_when_asked_and_then_masked() {
    let key = "AKIAIOSFODNN7EXAMPLQ";
    let planted =
        std::fs::read_to_string(crate::support::repo_root().join("examples/fenced-only.ndjson"))
            .unwrap()
            .replace("sonarr 200", &format!("sonarr 200 aws_access_key_id={key}"));
    let file = temp_file(&planted);
    let path = file.path().to_str().unwrap().to_owned();
    for content in [false, true] {
        let c = Collector::start();
        let dir = tempfile::tempdir().unwrap();
        let mut extra = vec!["--otlp-endpoint", c.url().leak() as &str];
        if content {
            extra.push("--otlp-content");
        }
        let (out, _) = replay(dir.path(), &path, &extra);
        assert!(out.status.code().unwrap() < 64, "{}", stderr(&out));
        let spans = c.spans();
        let all = format!("{spans:?}");
        assert!(!all.contains(key), "the secret left unmasked");
        let results: Vec<&str> = spans
            .iter()
            .filter_map(|s| s.attr("gen_ai.tool.call.result"))
            .collect();
        // The answer as the conventions' output messages on the root (not
        // the deprecated gen_ai.assistant.message events).
        let root = named(&spans, "invoke_agent ")[0];
        let prompts = root
            .attr("gen_ai.output.messages")
            .map(|m| serde_json::from_str::<Value>(m).unwrap())
            .map_or(0, |m| {
                assert_eq!(m[0]["role"], "assistant", "{m}");
                assert_eq!(m[0]["parts"][0]["type"], "text", "{m}");
                m.as_array().unwrap().len()
            });
        assert!(
            root.events
                .iter()
                .all(|e| !e.0.starts_with("gen_ai.assistant"))
        );
        if content {
            assert!(
                results
                    .iter()
                    .any(|r| r.contains("sonarr 200 aws_access_key_id=[REDACTED:")),
                "{results:?}"
            );
            assert!(prompts > 0);
            assert!(spans.iter().any(|s| {
                s.attr("gen_ai.tool.call.arguments")
                    .is_some_and(|a| a.contains("curl"))
            }));
        } else {
            assert!(results.is_empty(), "{results:?}");
            assert_eq!(prompts, 0);
            assert!(
                !all.contains("sonarr 200"),
                "content left without --otlp-content"
            );
        }
    }
}

#[test]
fn an_unreachable_collector_is_one_warning_and_a_count_never_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, base) = replay(dir.path(), "examples/fenced-only.ndjson", &[]);
    let url = format!("http://otel:pw-9f8e@127.0.0.1:{}", closed_port());
    let (out, v) = replay(
        dir.path(),
        "examples/fenced-only.ndjson",
        &["--otlp-endpoint", &url],
    );
    assert_eq!(out.status.code(), plain.status.code(), "{}", stderr(&out));
    assert_eq!(v["valid"], base["valid"]);
    let err = stderr(&out);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("OpenTelemetry"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with(
            "agentshape: warning: OpenTelemetry collector at http://otel:***@127.0.0.1:"
        ),
        "{err}"
    );
    assert!(!err.contains("pw-9f8e"), "{err}");
    assert_eq!(v["otlp"]["exported"], 0);
    assert!(v["otlp"]["dropped"].as_u64().unwrap() >= 4, "{v}");
    // `export otlp` is about nothing else: the same collector is exit 74.
    let out = agentshape()
        .args(["export", "otlp", "--otlp-endpoint", &url, "--store"])
        .arg(dir.path().join("agentshape.db"))
        .output()
        .unwrap();
    assert_exit(&out, 74);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "agentshape: export otlp: OpenTelemetry collector at http://otel:***@127.0.0.1:"
        ),
        "{err}"
    );
    assert!(!err.contains("pw-9f8e"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(": 0 of "),
        "nothing pretended"
    );
}

#[test]
fn bad_otlp_settings_are_usage_errors_that_show_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value, line) in [
        (
            "--otlp-header",
            "Bearer-tok3n-only",
            "agentshape: --otlp-header: expected KEY=VALUE (no `=` given)",
        ),
        (
            "--otlp-endpoint",
            "ftp://u:tok3n@h/x",
            "agentshape: --otlp-endpoint: not an http(s) URL with a host: ftp://h",
        ),
    ] {
        let (out, _) = replay(dir.path(), "examples/fenced-only.ndjson", &[flag, value]);
        assert_exit(&out, 64);
        assert_eq!(stderr(&out).trim_end(), line);
        assert!(
            !dir.path().join("agentshape.db").exists(),
            "nothing is run before the check"
        );
    }
    let out = agentshape()
        .args(["export", "otlp", "--store"])
        .arg(dir.path().join("none.db"))
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .unwrap();
    assert_exit(&out, 64);
}

const NATIVE: &str = "crates/cli/tests/fixtures/native/claude/projects/-srv-app/5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70.jsonl";

#[test]
fn an_imported_native_session_has_its_tool_spans_at_the_transcripts_times() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(crate::support::repo_root().join(NATIVE), &file).unwrap();
    let out = agentshape()
        .arg("import")
        .arg(&file)
        .arg("--store")
        .arg(dir.path().join("agentshape.db"))
        .args(["--otlp-endpoint", &c.url()])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let spans = c.spans();
    assert!(
        text.contains(&format!("otlp: {} spans exported, 0 dropped", spans.len())),
        "{text}"
    );
    let root = named(&spans, "invoke_agent ")
        .into_iter()
        .find(|s| s.name == "invoke_agent claude-code")
        .unwrap()
        .clone();
    let tools: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == root.span_id && s.name.starts_with("execute_tool "))
        .collect();
    assert!(!tools.is_empty(), "{spans:#?}");
    // The transcript's own timestamps (2025/2026), not the time of import.
    let now_ns = u64::try_from(agentshape_store::time::now_ms()).unwrap() * 1_000_000;
    for t in &tools {
        assert!(
            t.start_ns >= root.start_ns && t.end_ns <= root.end_ns,
            "{t:?} {root:?}"
        );
        assert!(t.start_ns + 3_600_000_000_000 < now_ns, "{t:?}");
    }
}

#[test]
fn watch_sends_each_new_tool_call_once_as_the_session_grows() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(crate::support::repo_root().join(NATIVE))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // Everything up to the last tool result; the rest is appended later.
    let cut = lines
        .iter()
        .rposition(|l| l.contains("\"tool_result\""))
        .unwrap();
    let first_tool = lines
        .iter()
        .position(|l| l.contains("\"tool_result\""))
        .unwrap();
    assert!(first_tool < cut, "the fixture needs two tool calls");
    std::fs::write(&file, lines[..cut].join("\n") + "\n").unwrap();
    let mut child = crate::support::agentshape_std()
        .arg("watch")
        .arg(&file)
        .arg("--store")
        .arg(dir.path().join("agentshape.db"))
        .args(["--otlp-endpoint", &c.url()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let guard = std::time::Duration::from_secs(60);
    let tool_ids = |c: &Collector| -> Vec<String> {
        c.spans()
            .iter()
            .filter(|s| s.name.starts_with("execute_tool "))
            .map(|s| s.span_id.clone())
            .collect()
    };
    crate::support::wait_until("the first tool span", guard, || !tool_ids(&c).is_empty());
    let before = tool_ids(&c);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    use std::io::Write as _;
    f.write_all((lines[cut..].join("\n") + "\n").as_bytes())
        .unwrap();
    drop(f);
    crate::support::wait_until("the new tool span", guard, || {
        tool_ids(&c).len() > before.len()
    });
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = child.wait();
    let after = tool_ids(&c);
    let mut unique = after.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        after.len(),
        "a tool span was sent twice: {after:?}"
    );
    assert!(after.starts_with(&before));
}

#[test]
fn a_post_tool_use_hook_call_is_a_tool_span() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let input = json!({"session_id": "hook-sess-2", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "toolu_hook_1", "tool_input": {"command": "false"},
        "tool_response": {"is_error": true, "stdout": ""}});
    let out = agentshape()
        .args(["hook", "post-tool-use", "--store"])
        .arg(dir.path().join("agentshape.db"))
        .args(["--otlp-endpoint", &c.url()])
        .env("AGENTSHAPE_STATE_DIR", dir.path().join("state"))
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(out.stdout.is_empty());
    let spans = c.spans();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert_eq!(spans[0].name, "execute_tool Bash");
    assert_eq!(spans[0].attr("gen_ai.tool.call.id"), Some("toolu_hook_1"));
    assert_eq!(spans[0].status.0, 2);
}

#[test]
fn a_run_without_a_store_is_exported_from_its_events() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let out = agentshape()
        .args([
            "run",
            "--json",
            "--no-store",
            "--profile",
            "claude-ops",
            "--replay",
            "examples/fenced-only.ndjson",
        ])
        .arg("--log-dir")
        .arg(dir.path())
        .args(["--otlp-endpoint", &c.url()])
        .output()
        .unwrap();
    let v = json_lines(&out.stdout).pop().unwrap();
    let spans = c.spans();
    assert_eq!(v["otlp"]["exported"], json!(spans.len()));
    let root = named(&spans, "invoke_agent ")[0];
    let tools = named(&spans, "execute_tool ");
    assert!(tools.len() >= 3);
    for t in tools {
        assert_eq!(t.parent_span_id, root.span_id);
        assert!(
            t.end_ns <= root.end_ns && t.start_ns >= root.start_ns,
            "{t:?} {root:?}"
        );
    }
    assert!(named(&spans, "apply_guardrail ").is_empty());
    assert_eq!(root.events[0].0, "gen_ai.evaluation.result");
}

#[test]
fn an_ops_cycle_exports_each_session_and_says_so_last() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("agents")).unwrap();
    let calm = std::fs::read_to_string(crate::support::example("healthy-structured.ndjson"))
        .unwrap()
        .replace("\"needed\":true", "\"needed\":false");
    std::fs::write(d.join("agents/t1.ndjson"), calm).unwrap();
    std::fs::write(d.join("p1.md"), "tier 1 prompt").unwrap();
    let config = format!(
        "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\nstate_dir = {:?}\n\n[policy]\nmax_tier = 1\n\n[[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = \"p1.md\"\n",
        crate::support::fake_agent(),
        d.join("agentshape.db").display().to_string(),
        d.join("logs").display().to_string(),
        d.join("state").display().to_string(),
    );
    std::fs::write(d.join("ops.toml"), config).unwrap();
    let out = agentshape()
        .args(["ops", "--once", "--json", "--config"])
        .arg(d.join("ops.toml"))
        .args(["--otlp-endpoint", &c.url()])
        .env("FAKE_DIR", d.join("agents"))
        .env("FAKE_ARGV_DIR", d.join("argv"))
        .env("FAKE_STDIN_DIR", d.join("stdin"))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let lines = json_lines(&out.stdout);
    let last = lines.last().unwrap();
    let spans = c.spans();
    assert_eq!(last["otlp"]["exported"], json!(spans.len()), "{lines:?}");
    let roots = named(&spans, "invoke_agent ");
    assert_eq!(roots.len(), 1, "{spans:#?}");
    assert_eq!(roots[0].attr("agentshape.session.tier"), Some("1"));
    assert!(!named(&spans, "execute_tool ").is_empty());
    assert_eq!(roots[0].events[0].0, "gen_ai.evaluation.result");
}

#[test]
fn help_names_the_flags_ends_with_examples_and_shows_no_header_value() {
    for args in [
        &["export", "otlp", "--help"][..],
        &["run", "--help"],
        &["hook", "stop", "--help"],
    ] {
        let out = agentshape()
            .args(args)
            .env(
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer h3lp-s3cret",
            )
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("--otlp-endpoint <URL>") && text.contains("--otlp-header <KEY=VALUE>"),
            "{text}"
        );
        assert!(!text.contains("h3lp-s3cret"), "{text}");
        if args[0] == "export" {
            assert!(
                text.contains("Examples:\n  agentshape export otlp"),
                "{text}"
            );
        }
    }
}

#[test]
fn a_hook_never_waits_on_a_silent_collector_past_its_budget() {
    // Accepts connections (the backlog) but never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = json!({"session_id": "hook-sess-3", "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "{\"action\": 7}"});
    let t = std::time::Instant::now();
    let out = agentshape()
        .args([
            "hook",
            "stop",
            "--schema",
            "schemas/loop-action.json",
            "--store",
        ])
        .arg(dir.path().join("agentshape.db"))
        .args([
            "--otlp-endpoint",
            &format!("http://{}", silent.local_addr().unwrap()),
        ])
        .env("AGENTSHAPE_STATE_DIR", dir.path().join("state"))
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    let took = t.elapsed();
    assert_exit(&out, 0);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("no answer within")
            && lines[0].contains("OpenTelemetry collector at http://127.0.0.1:"),
        "{err}"
    );
    // A hang guard, not a speed claim: the budget is 1.7 s from the start.
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}

#[test]
fn serve_exports_only_what_its_watcher_imports() {
    let dir = tempfile::tempdir().unwrap();
    let out = agentshape()
        .args(["serve", "--otlp-endpoint", "http://127.0.0.1:1", "--store"])
        .arg(dir.path().join("agentshape.db"))
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert_eq!(
        stderr(&out).trim_end(),
        "agentshape: --otlp-* exports what --watch imports: give --watch"
    );
}

#[test]
fn serve_watch_exports_the_sessions_it_imports() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("sessions");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::copy(
        crate::support::repo_root().join(NATIVE),
        tree.join("s.jsonl"),
    )
    .unwrap();
    let url = c.url();
    let _server = crate::support::served::serve(
        &dir.path().join("agentshape.db"),
        &["--watch", tree.to_str().unwrap(), "--otlp-endpoint", &url],
    );
    crate::support::wait_until(
        "the session's root span",
        std::time::Duration::from_secs(60),
        || {
            c.spans()
                .iter()
                .any(|s| s.name == "invoke_agent claude-code")
        },
    );
    assert!(!named(&c.spans(), "execute_tool ").is_empty());
}

/// `export otlp` from a Postgres store sends exactly what it sends from
/// SQLite for the same sessions (a replayed run, and hook calls on it),
/// copied across with `store copy`: same span names, ids, parents, times,
/// attributes, events and statuses.
#[test]
fn export_otlp_from_postgres_sends_what_sqlite_sends() {
    let dir = tempfile::tempdir().unwrap();
    for (file, id) in [
        ("examples/fenced-only.ndjson", "pg-one"),
        ("examples/healthy-structured.ndjson", "pg-two"),
    ] {
        let (out, _) = replay(dir.path(), file, &["--session-id", id]);
        assert!(out.status.code().unwrap() < 64, "{}", stderr(&out));
    }
    let db = dir.path().join("agentshape.db");
    let url = agentshape_testkit::pg::fresh_db();
    let copied = agentshape()
        .args(["store", "copy", "--to", &url, "--from"])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&copied, 0);
    let export = |store: &std::ffi::OsStr| {
        let c = Collector::start();
        let out = agentshape()
            .args(["export", "otlp", "--otlp-endpoint", &c.url(), "--store"])
            .arg(store)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        assert!(c.problems().is_empty(), "{:?}", c.problems());
        let mut spans = c.spans();
        spans.sort_by(|a, b| a.span_id.cmp(&b.span_id));
        spans
    };
    let from_sqlite = export(db.as_os_str());
    let from_pg = export(std::ffi::OsStr::new(&url));
    assert_eq!(named(&from_sqlite, "invoke_agent ").len(), 2);
    assert!(!named(&from_sqlite, "execute_tool ").is_empty());
    assert!(
        named(&from_sqlite, "invoke_agent ")
            .iter()
            .all(|r| r.events.iter().any(|e| e.0 == "gen_ai.evaluation.result"))
    );
    assert_eq!(from_pg, from_sqlite);
}

const NATIVE_DIR: &str = "crates/cli/tests/fixtures/native/claude/projects/-srv-app";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// `import PATH --otlp-endpoint` into a fresh store; the spans received.
fn import_spans(path: &Path, store: &Path) -> Vec<Span> {
    let c = Collector::start();
    let out = agentshape()
        .arg("import")
        .arg(path)
        .arg("--store")
        .arg(store)
        .args(["--otlp-endpoint", &c.url()])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    c.spans()
}

fn num(s: &Span, key: &str) -> u64 {
    s.attr(key).map_or(0, |v| v.parse().unwrap())
}

#[test]
fn a_native_claude_session_has_one_chat_span_per_message_and_its_sub_agent_under_task() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-srv-app");
    copy_dir(&crate::support::repo_root().join(NATIVE_DIR), &project);
    let db = dir.path().join("agentshape.db");
    let spans = import_spans(&project, &db);
    let roots = named(&spans, "invoke_agent ");
    for r in &roots {
        assert_eq!(r.name, "invoke_agent claude-code");
        assert_eq!(r.attr("gen_ai.provider.name"), Some("anthropic"), "{r:?}");
        assert_eq!(r.attr("gen_ai.agent.version"), Some("2.1.231"), "{r:?}");
    }
    let by_conv = |id: &str| {
        *roots
            .iter()
            .find(|r| r.attr("gen_ai.conversation.id") == Some(id))
            .unwrap_or_else(|| panic!("no root for {id}: {roots:#?}"))
    };
    let parent = by_conv("5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70");
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat ") && s.parent_span_id == parent.span_id)
        .collect();
    let ids: Vec<&str> = chats
        .iter()
        .map(|c| c.attr("gen_ai.response.id").unwrap())
        .collect();
    // msg_01 is written over two lines with growing usage: one span, the last usage.
    assert_eq!(ids, ["msg_01", "msg_02", "msg_03"], "{chats:#?}");
    let first = chats[0];
    assert_eq!(first.name, "chat claude-sonnet-4-5");
    assert_eq!(first.kind, 3);
    assert_eq!(first.trace_id, parent.trace_id);
    assert_eq!(first.attr("gen_ai.operation.name"), Some("chat"));
    assert_eq!(first.attr("gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(
        first.attr("gen_ai.request.model"),
        Some("claude-sonnet-4-5")
    );
    assert_eq!(
        first.attr("gen_ai.response.model"),
        Some("claude-sonnet-4-5")
    );
    // Every prompt token, cached ones included.
    assert_eq!(num(first, "gen_ai.usage.input_tokens"), 3212);
    assert_eq!(num(first, "gen_ai.usage.output_tokens"), 40);
    assert_eq!(num(first, "gen_ai.usage.cache_read.input_tokens"), 3000);
    assert_eq!(num(first, "gen_ai.usage.cache_creation.input_tokens"), 200);
    // At the call's own time: its first line to its last.
    assert_eq!(first.start_ns, 1_767_603_602_000_000_000);
    assert_eq!(first.end_ns, 1_767_603_602_500_000_000);
    // The calls add up to the session's tokens.
    let sum = |key: &str| chats.iter().map(|c| num(c, key)).sum::<u64>();
    assert_eq!(
        sum("gen_ai.usage.output_tokens"),
        num(parent, "gen_ai.usage.output_tokens")
    );
    assert_eq!(
        sum("gen_ai.usage.input_tokens"),
        num(parent, "gen_ai.usage.input_tokens")
    );
    // The sub-agent: in its parent's trace, under the Task call that started it.
    let sub = by_conv("agent-f00dcafe01");
    let task = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id") == Some("toolu_02"))
        .unwrap();
    assert_eq!(task.name, "execute_tool Task");
    assert_eq!(sub.trace_id, parent.trace_id);
    assert_eq!(sub.parent_span_id, task.span_id);
    let sub_chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat ") && s.parent_span_id == sub.span_id)
        .collect();
    assert_eq!(sub_chats.len(), 2, "{spans:#?}");
    assert!(
        sub_chats
            .iter()
            .all(|c| c.name == "chat claude-haiku-4-5" && c.trace_id == parent.trace_id)
    );
    // Span ids are unique.
    let mut all: Vec<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), spans.len());

    // `export otlp` from the store sends the same spans.
    let later = Collector::start();
    let out = agentshape()
        .args(["export", "otlp", "--otlp-endpoint", &later.url(), "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let key = |s: &[Span]| {
        let mut v: Vec<(String, String, String, String)> = s
            .iter()
            .map(|s| {
                (
                    s.trace_id.clone(),
                    s.span_id.clone(),
                    s.parent_span_id.clone(),
                    s.name.clone(),
                )
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(key(&later.spans()), key(&spans));
}

#[test]
fn a_sub_agent_whose_parent_is_not_stored_links_to_the_parents_trace() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-srv-app");
    copy_dir(&crate::support::repo_root().join(NATIVE_DIR), &project);
    let sub = project.join("5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70/subagents/agent-f00dcafe01.jsonl");
    let c = Collector::start();
    let out = agentshape()
        .arg("import")
        .arg(&sub)
        .arg("--store")
        .arg(dir.path().join("agentshape.db"))
        .args(["--otlp-endpoint", &c.url()])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let spans = c.spans();
    let root = named(&spans, "invoke_agent ")[0];
    assert_eq!(
        root.attr("gen_ai.conversation.id"),
        Some("agent-f00dcafe01")
    );
    assert_eq!(root.parent_span_id, "");
    assert_eq!(root.links.len(), 1, "{root:?}");
    assert_ne!(root.links[0].0, root.trace_id);
}

#[test]
fn codex_chat_spans_add_up_to_the_sessions_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join("rollout-2026-01-06T10-00-00-0199aa00-1111-7222-8333-444455556666.jsonl");
    let mut text = std::fs::read_to_string(crate::support::repo_root().join(
        "crates/cli/tests/fixtures/native/codex/sessions/2026/01/06/rollout-2026-01-06T10-00-00-0199aa00-1111-7222-8333-444455556666.jsonl",
    ))
    .unwrap();
    // A second turn: the running total grows once (and is repeated, as Codex does).
    let grown = r#"{"timestamp":"2026-01-06T10:00:09.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3000,"cached_input_tokens":2500,"output_tokens":120,"reasoning_output_tokens":30,"total_tokens":3120},"last_token_usage":{"input_tokens":1800,"cached_input_tokens":1500,"output_tokens":70,"reasoning_output_tokens":20,"total_tokens":1870}}}}"#;
    text.push_str(grown);
    text.push('\n');
    text.push_str(&grown.replace("10:00:09.000Z", "10:00:09.100Z"));
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    let spans = import_spans(&file, &dir.path().join("agentshape.db"));
    let root = named(&spans, "invoke_agent ")[0];
    assert_eq!(root.name, "invoke_agent codex");
    assert_eq!(root.attr("gen_ai.provider.name"), Some("openai"));
    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for c in &chats {
        assert_eq!(c.parent_span_id, root.span_id);
        assert_eq!(c.attr("gen_ai.provider.name"), Some("openai"));
    }
    let sum = |key: &str| chats.iter().map(|c| num(c, key)).sum::<u64>();
    assert_eq!(sum("gen_ai.usage.input_tokens"), 3000);
    assert_eq!(sum("gen_ai.usage.cache_read.input_tokens"), 2500);
    assert_eq!(sum("gen_ai.usage.output_tokens"), 120);
    assert_eq!(sum("gen_ai.usage.reasoning.output_tokens"), 30);
    for key in [
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.cache_read.input_tokens",
    ] {
        assert_eq!(sum(key), num(root, key), "{key}: {root:?}");
    }
}

#[test]
fn a_gemini_chat_is_one_chat_span_per_message_with_its_provider() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session-2026-01-07T08-00-7c1d2e3f.json");
    std::fs::copy(
        crate::support::repo_root().join("crates/cli/tests/fixtures/native/gemini/tmp/9f8e7d6c5b4a/chats/session-2026-01-07T08-00-7c1d2e3f.json"),
        &file,
    )
    .unwrap();
    let spans = import_spans(&file, &dir.path().join("agentshape.db"));
    let root = named(&spans, "invoke_agent ")[0];
    assert_eq!(root.attr("gen_ai.provider.name"), Some("gcp.gemini"));
    let chats = named(&spans, "chat ");
    assert!(!chats.is_empty(), "{spans:#?}");
    let sum = |key: &str| chats.iter().map(|c| num(c, key)).sum::<u64>();
    assert_eq!(
        sum("gen_ai.usage.input_tokens"),
        num(root, "gen_ai.usage.input_tokens")
    );
    assert_eq!(
        sum("gen_ai.usage.output_tokens"),
        num(root, "gen_ai.usage.output_tokens")
    );
}

#[test]
fn hook_install_writes_the_export_flags_and_the_installed_command_exports() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let db = dir.path().join("agentshape.db");
    let secret = "Bearer s3cr3t-'quoted' t0ken";
    let out = agentshape()
        .args([
            "hook",
            "install",
            "--json",
            "--schema",
            "schemas/loop-action.json",
        ])
        .arg("--settings")
        .arg(&settings)
        .arg("--store")
        .arg(&db)
        .args(["--otlp-endpoint", &c.url()])
        .args(["--otlp-header", &format!("Authorization={secret}")])
        .env_remove("AGENTSHAPE_STORE")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let shown = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!shown.contains("s3cr3t"), "{shown}");
    let line = &json_lines(&out.stdout)[0];
    assert!(
        line["command"]
            .as_str()
            .unwrap()
            .contains("Authorization=***"),
        "{line}"
    );
    // A dry run's diff masks it too.
    let dry = agentshape()
        .args(["hook", "install", "--dry-run", "--event", "subagent-stop"])
        .arg("--settings")
        .arg(&settings)
        .args(["--otlp-endpoint", &c.url()])
        .args(["--otlp-header", &format!("Authorization={secret}")])
        .output()
        .unwrap();
    assert_exit(&dry, 0);
    assert!(
        !String::from_utf8_lossy(&dry.stdout).contains("s3cr3t"),
        "{}",
        String::from_utf8_lossy(&dry.stdout)
    );
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = installed["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.contains("--otlp-endpoint"), "{command}");
    assert!(
        command.contains("s3cr3t"),
        "the entry carries the header: {command}"
    );
    // The installed command, run as Claude Code runs it (a shell, no OTEL_* variables).
    let input = json!({"session_id": "hook-install-1", "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "```json\n{\"action\": 7}\n```"});
    let ran = assert_cmd::Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .env("AGENTSHAPE_STATE_DIR", dir.path().join("state"))
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    assert_exit(&ran, 0);
    let spans = c.spans();
    assert_eq!(spans.len(), 1, "{spans:#?} {}", stderr(&ran));
    assert_eq!(spans[0].name, "apply_guardrail agentshape");
    assert_eq!(c.exports()[0].header("authorization"), Some(secret));
}

#[test]
fn watch_json_keeps_stdout_to_json_lines() {
    let c = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(crate::support::repo_root().join(NATIVE), &file).unwrap();
    let child = crate::support::agentshape_std()
        .arg("watch")
        .arg("--json")
        .arg(&file)
        .arg("--store")
        .arg(dir.path().join("agentshape.db"))
        .args(["--otlp-endpoint", &c.url()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_until(
        "the first spans",
        std::time::Duration::from_secs(60),
        || !c.spans().is_empty(),
    );
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    );
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.trim().is_empty(), "{}", stderr(&out));
    for line in text.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "not a JSON line on stdout: {line:?}"
        );
    }
    // The export's summary is one of them.
    let last = json_lines(&out.stdout).pop().unwrap();
    assert_eq!(last["otlp"]["dropped"], 0, "{last}");
}

fn dollars(s: &Span) -> Option<f64> {
    s.attr("agentshape.cost_usd").map(|v| v.parse().unwrap())
}

/// Each `chat` span carries its call's cost at agentshape's prices, the
/// session's is their sum, and a call of a model no price names makes the
/// session's cost partial, naming the model (core's Note [Partial cost]).
#[test]
fn chat_spans_carry_their_cost_and_a_partial_session_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let line = |id: &str, at: &str, model: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"5e1f0c2a-7b3d-4c8e-9a10-00000000c057","uuid":"u-{id}","parentUuid":null,"isSidechain":false,"timestamp":"{at}","requestId":"req-{id}","cwd":"/srv/app","version":"2.1.0","message":{{"id":"{id}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":1000000,"output_tokens":100000}}}}}}"#
        )
    };
    let file = dir
        .path()
        .join("5e1f0c2a-7b3d-4c8e-9a10-00000000c057.jsonl");
    std::fs::write(
        &file,
        [
            line(
                "m1",
                "2026-03-01T10:00:00.000Z",
                "claude-sonnet-4-5-20250929",
            ),
            line("m2", "2026-03-01T10:01:00.000Z", "house-model-9"),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let spans = import_spans(&file, &dir.path().join("agentshape.db"));
    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    let sonnet = chats.iter().find(|c| c.name.contains("sonnet")).unwrap();
    // $3 per million in, $15 per million out.
    assert!((dollars(sonnet).unwrap() - 4.5).abs() < 1e-9, "{sonnet:?}");
    let house = chats.iter().find(|c| c.name.contains("house")).unwrap();
    assert_eq!(dollars(house), None);
    assert_eq!(house.attr("agentshape.cost.partial"), Some("true"));
    let root = named(&spans, "invoke_agent ")[0];
    assert!((dollars(root).unwrap() - 4.5).abs() < 1e-9, "{root:?}");
    assert_eq!(root.attr("agentshape.cost.partial"), Some("true"));
    let unpriced = root.attr("agentshape.cost.unpriced_models").unwrap();
    assert!(unpriced.contains("house-model-9"), "{unpriced}");
}

/// Issue 40 §2: a collector answering 307 to another port. The export is
/// not followed there: the second collector receives nothing (neither the
/// `x-api-key` header nor a `Referer` holding the endpoint's `?apikey=`),
/// and `export otlp` fails with exit 74 and one line naming the status and
/// where it pointed, without the credentials.
#[test]
fn export_otlp_does_not_follow_a_redirect_to_another_collector() {
    use agentshape_testkit::{Answer, Hostile};
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = replay(dir.path(), "examples/fenced-only.ndjson", &[]);
    assert!(out.status.code().unwrap() < 64, "{}", stderr(&out));
    let second = Collector::start();
    let first = Hostile::start(vec![Answer::Redirect {
        status: 307,
        location: format!("{}{{path}}", second.url()),
    }]);
    let endpoint = format!("{}/v1/traces?apikey=q-s3cret", first.url());
    let out = agentshape()
        .args(["export", "otlp", "--otlp-endpoint", &endpoint])
        .args(["--otlp-header", "x-api-key=h-s3cret", "--store"])
        .arg(dir.path().join("agentshape.db"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_exit(&out, 74);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "HTTP 307 redirect to {} not followed",
            second.url()
        )),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
    assert!(!first.requests().is_empty(), "the endpoint was asked");
    assert!(
        second.exports().is_empty(),
        "the second collector received {:?}",
        second.exports()
    );
}

/// The most a collector can write to a command before the exporter's cap
/// (1 MiB) makes it close the connection, over `attempts` requests: each
/// reads the cap and closes, and meanwhile the kernel takes what fits the
/// receiving socket's buffer (autotuned up to `tcp_rmem`'s maximum, 32 MiB
/// on the CI machine) and the sending one's (`tcp_wmem`'s), plus a chunk
/// in flight. A fixed bound of 32 MiB failed once in a loaded CI run (34.2
/// MB over `export otlp`'s four attempts).
fn most_sent(attempts: u64) -> u64 {
    let max_of = |path: &str, default: u64| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
            .unwrap_or(default)
    };
    let rmem = max_of("/proc/sys/net/ipv4/tcp_rmem", 6 << 20);
    let wmem = max_of("/proc/sys/net/ipv4/tcp_wmem", 4 << 20);
    attempts * ((1 << 20) + rmem + wmem + (1 << 20))
}

/// Issue 40 §2: a collector answering with an endless body. Every command
/// that exports (`export otlp`, a hook, `import --otlp-endpoint`) reads at
/// most the exporter's cap of the answer (1 MiB) and says so in one line;
/// the server manages to send only a few megabytes (socket buffers and the
/// retries), never the 256 MiB it has ready.
#[test]
fn an_endless_collector_answer_is_cut_at_the_cap_by_every_exporting_command() {
    use agentshape_testkit::{Answer, Hostile};
    // The exporter's four attempts (three retries); the server has twice
    // what they can take ready, so a command that read past the cap would
    // take all of it.
    let most = most_sent(4);
    let ready: u64 = (256 << 20).max(2 * most);
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = replay(dir.path(), "examples/fenced-only.ndjson", &[]);
    assert!(out.status.code().unwrap() < 64, "{}", stderr(&out));
    let guard = std::time::Duration::from_secs(120);
    // `export otlp`: exit 74, one line.
    let server = Hostile::start(vec![Answer::Endless { limit: ready }]);
    let out = agentshape()
        .args([
            "export",
            "otlp",
            "--otlp-endpoint",
            &server.url(),
            "--store",
        ])
        .arg(dir.path().join("agentshape.db"))
        .timeout(guard)
        .output()
        .unwrap();
    assert_exit(&out, 74);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("1048576-byte cap"), "{err}");
    assert!(
        server.bytes_sent() < most,
        "{} of {most}",
        server.bytes_sent()
    );
    // A hook: its answer is given, one warning, within its budget.
    let server = Hostile::start(vec![Answer::Endless { limit: ready }]);
    let input = json!({"session_id": "hook-sess-40", "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "{\"action\": 7}"});
    let out = agentshape()
        .args([
            "hook",
            "stop",
            "--schema",
            "schemas/loop-action.json",
            "--store",
        ])
        .arg(dir.path().join("hook.db"))
        .args(["--otlp-endpoint", &server.url()])
        .env("AGENTSHAPE_STATE_DIR", dir.path().join("state"))
        .write_stdin(input.to_string())
        .timeout(guard)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("OpenTelemetry collector at"), "{err}");
    assert!(
        server.bytes_sent() < most,
        "{} of {most}",
        server.bytes_sent()
    );
    // `import --otlp-endpoint`: the import itself succeeds.
    let server = Hostile::start(vec![Answer::Endless { limit: ready }]);
    let out = agentshape()
        .arg("import")
        .arg(crate::support::repo_root().join(NATIVE))
        .arg("--store")
        .arg(dir.path().join("import.db"))
        .args(["--otlp-endpoint", &server.url()])
        .timeout(guard)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("1048576-byte cap"), "{err}");
    assert!(
        server.bytes_sent() < most,
        "{} of {most}",
        server.bytes_sent()
    );
}
