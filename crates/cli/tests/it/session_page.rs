//! The session page (issue 9, item 3): a real `run` of a replayed transcript
//! with hostile agent text and an invalid output, a real `serve`, and the
//! page and its JSON read over HTTP.

use serde_json::{Value, json};

use crate::support::assert_exit_for;
use crate::support::served::serve;

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "\"><svg onload=alert(1)>",
];

/// A Claude stream-json transcript: each hostile string as assistant text,
/// one tool call and result, and a result whose structured output has an
/// event level outside the schema's enum.
fn hostile_transcript() -> String {
    let mut lines = vec![
        json!({"type": "system", "subtype": "init", "session_id": "t", "model": "claude-test"}),
    ];
    for h in HOSTILE {
        lines.push(
            json!({"type": "assistant", "message": {"id": "m", "role": "assistant",
            "content": [{"type": "text", "text": h}]}}),
        );
    }
    lines.push(json!({"type": "assistant", "message": {"id": "m2", "role": "assistant",
        "content": [{"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": HOSTILE[1]}}]}}));
    lines.push(json!({"type": "user", "message": {"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": HOSTILE[0]}]}}));
    lines.push(
        json!({"type": "result", "subtype": "success", "is_error": false, "duration_ms": 1234,
        "num_turns": 2, "total_cost_usd": 0.01, "usage": {"input_tokens": 10, "output_tokens": 20},
        "session_id": "t",
        "structured_output": {
            "summary": HOSTILE[0],
            "events": [{"level": "loud", "service": "web", "message": HOSTILE[1]}],
            "escalation": {"needed": false},
            "services_checked": []
        }}),
    );
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn get(url: &str) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let resp = reqwest::get(url).await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    })
}

/// The hostile strings are in `html` only as escaped text.
fn assert_inert(html: &str) {
    assert!(!html.contains("<script>alert"), "raw <script> in the page");
    assert!(!html.contains("<img src=x"), "raw <img> in the page");
    assert!(!html.contains("<svg"), "raw <svg> in the page");
    assert!(
        !html.contains("href=\"javascript:"),
        "javascript: link in the page"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn the_session_page_shows_the_verdict_and_escapes_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let logs = dir.path().join("logs");
    let replay = dir.path().join("hostile.ndjson");
    std::fs::write(&replay, hostile_transcript()).unwrap();
    let out = crate::support::agentshape()
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--session-id",
            "hostile-1",
            "--replay",
        ])
        .arg(&replay)
        .arg("--store")
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .output()
        .unwrap();
    assert_exit_for(&out, 1, "invalid output: exit 1");

    let server = serve(&db, &[]);
    let (status, html) = get(&format!("{}/sessions/hostile-1", server.base));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains(r#"id="session" data-session-id="hostile-1" data-status="completed""#));
    assert!(html.contains(r#"data-valid="false""#), "{html}");
    assert!(
        html.contains(r#"<li data-path="/events/0/level" data-kind="schema">"#),
        "{html}"
    );
    assert!(
        html.contains(r#"data-path="/events/0/level">&quot;loud&quot;</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<script type="module" src="/assets/session.js">"#));
    assert_inert(&html);
    // The transcript's text lines, in order, are the agent's text as
    // Markdown: raw HTML reads as written (an HTML block as code), a
    // `javascript:` link keeps its text and loses its target (Note [Safe
    // Markdown] in the web crate).
    let positions: Vec<usize> = [
        r#"<pre class="code"><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>"#,
        r#"<pre class="code"><code>&lt;img src=x onerror=alert(1)&gt;</code></pre>"#,
        r#"<p><a rel="noopener noreferrer nofollow">x</a></p>"#,
        r#"<p>"&gt;&lt;svg onload=alert(1)&gt;</p>"#,
    ]
    .iter()
    .map(|md| {
        let line = format!(r#"data-type="text"><div class="md">{md}</div></div>"#);
        html.find(&line)
            .unwrap_or_else(|| panic!("{line} in {html}"))
    })
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));

    let (status, body) = get(&format!("{}/api/sessions/hostile-1", server.base));
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["session"]["status"], "completed");
    assert_eq!(v["output"]["events"][0]["level"], "loud");
    assert_eq!(v["verdict"]["valid"], false);
    let errors = v["verdict"]["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e["instance_path"] == "/events/0/level"),
        "{errors:?}"
    );
    assert_eq!(v["verdict"]["repairs"], json!([]));
    assert_eq!(v["children"], json!([]));
    assert_eq!(v["transcript_source"], "feed");
    assert_eq!(v["transcript_truncated"], false);
    let rows = v["transcript"].as_array().unwrap();
    assert_eq!(rows.first().unwrap()["kind"], "started");
    assert_eq!(rows.last().unwrap()["kind"], "ended");
    assert_eq!(rows.last().unwrap()["body"]["valid"], false);
    assert!(
        rows.windows(2)
            .all(|w| w[0]["id"].as_i64() < w[1]["id"].as_i64())
    );
    let texts: Vec<&str> = rows
        .iter()
        .filter(|r| r["body"]["event"]["type"] == "text")
        .map(|r| r["body"]["event"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, HOSTILE);
    let tool_result = |rows: &[Value]| {
        rows.iter().any(|r| {
            r["body"]["event"]["type"] == "tool_result"
                && r["body"]["event"]["content"] == HOSTILE[0]
        })
    };
    assert!(tool_result(rows), "the tool result's text is on the feed");
    // The call is drawn with its result; the result's own line stays, hidden.
    assert!(
        html.contains(
            r#"<code class="cmd">&lt;img src=x onerror=alert(1)&gt;</code> <span class="exit""#
        ),
        "{html}"
    );
    assert!(
        html.contains(r#"<pre class="out">&lt;script&gt;alert(1)&lt;/script&gt;</pre>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"class="line k-event t-tool_result folded" hidden"#),
        "{html}"
    );

    // Unknown ids and ids that are not text: 4xx, never 5xx.
    for (path, want) in [
        ("/sessions/nope", 404),
        ("/api/sessions/nope", 404),
        ("/sessions/%00", 404),
        ("/api/sessions/%00", 404),
        ("/sessions/%FF", 400),
        ("/api/sessions/%FF", 400),
        ("/sessions/a%2Fb%3Cscript%3E", 404),
    ] {
        let (status, body) = get(&format!("{}{path}", server.base));
        assert_eq!(status, want, "{path}: {body}");
        assert!(!body.contains("<script>"), "{path}: {body}");
    }
    drop(server);

    // Rebuilt by `ingest`, the session's feed is its `ended` row only: the
    // transcript is decoded from its forensic log, and the verdict is the same.
    let rebuilt = dir.path().join("b.db");
    crate::support::agentshape()
        .args(["ingest", "--store"])
        .arg(&rebuilt)
        .arg(logs.join("hostile-1.ndjson"))
        .assert()
        .code(0);
    let server = serve(&rebuilt, &[]);
    let (status, body) = get(&format!("{}/api/sessions/hostile-1", server.base));
    assert_eq!(status, 200, "{body}");
    let w: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(w["transcript_source"], "log");
    assert_eq!(w["verdict"], v["verdict"]);
    assert_eq!(w["output"], v["output"]);
    let texts: Vec<&str> = w["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["body"]["event"]["type"] == "text")
        .map(|r| r["body"]["event"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, HOSTILE);
    assert!(tool_result(w["transcript"].as_array().unwrap()));
    let (status, html) = get(&format!("{}/sessions/hostile-1", server.base));
    assert_eq!(status, 200);
    assert_inert(&html);
}
