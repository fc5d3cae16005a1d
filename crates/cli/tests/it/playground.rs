//! `agentshape serve`'s playground (issue 9, item 5): `POST /api/extract`
//! and `GET /api/profiles` on a real server, checked against what
//! `agentshape extract --json` prints for the same input.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::example;

/// A running `serve` on a fresh store of its own, with a client for the
/// playground API; killed when dropped.
struct Playground {
    _served: crate::support::served::Server,
    base: String,
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// Start the playground: `serve` on port 0 on a fresh store, with `extra` arguments.
fn playground(extra: &[&str]) -> Playground {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::support::served::serve(&dir.path().join("pg.db"), extra);
    let base = server.base.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Playground {
        _served: server,
        base,
        rt,
        client: reqwest::Client::new(),
        _dir: dir,
    }
}

impl Playground {
    /// POST raw bytes to `/api/extract` as this server's own page would
    /// (same `Origin`); returns the status and the body as JSON.
    fn post_raw(&self, body: Vec<u8>, origin: Option<&str>) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}/api/extract", self.base))
            .header("content-type", "application/json")
            .body(body);
        req = req.header("origin", origin.unwrap_or(&self.base));
        let resp = self.rt.block_on(req.send()).unwrap();
        let status = resp.status().as_u16();
        let text = self.rt.block_on(resp.text()).unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    fn post(&self, body: &Value) -> (u16, Value) {
        self.post_raw(serde_json::to_vec(body).unwrap(), None)
    }

    fn get(&self, path: &str) -> (u16, String) {
        let resp = self
            .rt
            .block_on(self.client.get(format!("{}{path}", self.base)).send())
            .unwrap();
        let status = resp.status().as_u16();
        (status, self.rt.block_on(resp.text()).unwrap())
    }
}

/// What `agentshape extract --json` prints for `input` with `args`.
fn cli_extract(input: &Path, args: &[&str]) -> Value {
    let out = crate::support::agentshape()
        .args(["extract", "--json"])
        .args(args)
        .arg(input)
        .output()
        .unwrap();
    let lines = crate::support::json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    lines.into_iter().next().unwrap()
}

/// The API and the CLI agree on everything the CLI judges.
fn assert_agrees(api: &Value, cli: &Value) {
    for key in ["value", "method", "valid", "errors", "repairs", "coercions"] {
        assert_eq!(api[key], cli[key], "`{key}` differs from the CLI");
    }
}

fn methods(got: &Value) -> Vec<(String, bool)> {
    got["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["method"].as_str().unwrap().to_owned(), c["won"] == true))
        .collect()
}

const FENCED: &str = "Done.\n\n```json\n{\"summary\": \"ok\", \"n\": 1}\n```\n";
const BROKEN: &str = "Here: {'summary': 'ok', 'n': 1,} thanks";

#[test]
fn a_fenced_reply_and_a_broken_one_agree_with_the_cli() {
    let server = playground(&[]);
    for (text, method) in [(FENCED, "fenced"), (BROKEN, "repaired")] {
        let (status, got) = server.post(&json!({"text": text}));
        assert_eq!(status, 200, "{got}");
        assert_eq!(got["method"], method);
        assert_eq!(got["value"], json!({"summary": "ok", "n": 1}));
        let cli = cli_extract(crate::support::temp_file(text).path(), &[]);
        assert_agrees(&got, &cli);
        // The winning candidate is listed, with its span of the input.
        let won: Vec<&Value> = got["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["won"] == true)
            .collect();
        assert_eq!(won.len(), 1, "{got}");
        let (a, b) = (
            won[0]["span"][0].as_u64().unwrap(),
            won[0]["span"][1].as_u64().unwrap(),
        );
        let span = &text[usize::try_from(a).unwrap()..usize::try_from(b).unwrap()];
        assert!(span.starts_with('{') && span.ends_with('}'), "{span}");
        assert_eq!(
            won[0]["source"],
            if method == "fenced" { "fenced" } else { "bare" }
        );
    }
    let (_, got) = server.post(&json!({"text": BROKEN}));
    let repairs = got["repairs"].as_array().unwrap();
    assert!(repairs.contains(&json!("single_quotes")), "{got}");
    assert!(repairs.contains(&json!("trailing_comma")), "{got}");
    assert_eq!(got["candidates"][0]["repairs"], got["repairs"]);
}

#[test]
fn schema_errors_carry_json_pointers_and_agree_with_the_cli() {
    let server = playground(&[]);
    let schema = json!({
        "type": "object",
        "required": ["summary", "n"],
        "properties": {"summary": {"type": "string"}, "n": {"type": "string"}}
    });
    let text = "{\"summary\": 5, \"n\": 1}";
    let (status, got) = server.post(&json!({"text": text, "schema": schema}));
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["valid"], false);
    let mut paths: Vec<&str> = got["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["instance_path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/n", "/summary"]);
    let schema_file = crate::support::temp_file(&schema.to_string());
    let cli = cli_extract(
        crate::support::temp_file(text).path(),
        &["--schema", schema_file.path().to_str().unwrap()],
    );
    assert_agrees(&got, &cli);
    // Coercion: `1` → `"1"` is exact, so listed and the value changes.
    let (_, got) = server
        .post(&json!({"text": "{\"summary\": \"s\", \"n\": 1}", "schema": schema, "coerce": true}));
    let cli = cli_extract(
        crate::support::temp_file("{\"summary\": \"s\", \"n\": 1}").path(),
        &["--schema", schema_file.path().to_str().unwrap(), "--coerce"],
    );
    assert_agrees(&got, &cli);
}

#[test]
fn a_failing_invariant_is_an_error_of_kind_invariant() {
    let server = playground(&[]);
    let text = json!({
        "findings": [{"severity": "blocker", "file": "a.rs", "line": 3, "description": "d", "raisedBy": "r"}],
        "counts": {"blocker": 0, "major": 0, "minor": 0, "nit": 0}
    })
    .to_string();
    let (status, got) = server.post(&json!({"text": text, "profile": "code-review"}));
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["valid"], false);
    let kinds: Vec<&Value> = got["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["kind"])
        .collect();
    assert_eq!(kinds, [&json!("invariant")], "{got}");
    let cli = cli_extract(
        crate::support::temp_file(&text).path(),
        &["--profile", "code-review"],
    );
    assert_agrees(&got, &cli);
}

#[test]
fn a_claude_transcript_is_decoded_first() {
    let server = playground(&[]);
    for (file, profile, method) in [
        ("healthy-structured.ndjson", "claude-ops", "structured"),
        ("legacy-markers.ndjson", "claude-ops", "markers"),
        ("fenced-only.ndjson", "claude-ops", "fenced"),
    ] {
        let path = example(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (status, got) =
            server.post(&json!({"text": text, "profile": profile, "format": "auto"}));
        assert_eq!(status, 200, "{file}: {got}");
        assert_eq!(got["method"], method, "{file}");
        assert_eq!(got["run"]["format"], "claude", "{file}");
        let cli = cli_extract(Path::new(&path), &["--profile", profile]);
        assert_agrees(&got, &cli);
        assert!(
            methods(&got).iter().any(|(m, won)| m == method && *won),
            "{file}: {got}"
        );
    }
}

#[test]
fn prose_only_extracts_nothing_and_lists_no_winner() {
    let server = playground(&[]);
    let (status, got) =
        server.post(&json!({"text": "All good, nothing to report.", "profile": "claude-ops"}));
    assert_eq!(status, 200);
    assert_eq!(got["method"], "none");
    assert!(methods(&got).iter().all(|(_, won)| !won));
}

#[test]
fn bad_requests_are_4xx_never_500() {
    let server = playground(&[]);
    // Over the 4 MiB cap: a clean 413 (the body is drained, so the client
    // gets the answer, not a reset connection), however often it is sent.
    for _ in 0..5 {
        let big = json!({"text": "x".repeat(5 << 20)});
        let (status, _) = server.post(&big);
        assert_eq!(status, 413);
    }
    // Declared far bigger: refused at once, before any of it is read.
    {
        use std::io::{Read, Write};
        let addr = server.base.trim_start_matches("http://");
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        write!(
            tcp,
            "POST /api/extract HTTP/1.1\r\nHost: {addr}\r\nOrigin: {}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n",
            server.base
        )
        .unwrap();
        let mut head = [0u8; 12];
        tcp.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 413");
    }
    // Under it (and over axum's 2 MB default): read whole.
    let (status, got) =
        server.post(&json!({"text": format!("{{\"a\": \"{}\"}}", "x".repeat(3 << 20))}));
    assert_eq!(status, 200);
    assert_eq!(got["method"], "bare");
    // Not JSON, or not the right shape.
    for body in [&b"{not json"[..], b"[1, 2]", b"{\"text\": 5}", b""] {
        let (status, got) = server.post_raw(body.to_vec(), None);
        assert_eq!(status, 400, "{}: {got}", String::from_utf8_lossy(body));
        assert!(got["error"].is_string());
    }
    // A schema that does not compile: 422, one line.
    let (status, got) = server.post(&json!({"text": "{}", "schema": {"type": 5}}));
    assert_eq!(status, 422, "{got}");
    assert!(!got["error"].as_str().unwrap().contains('\n'));
    let (status, got) =
        server.post(&json!({"text": "{}", "schema": {"x-invariants": [{"rule": "self.(("}]}}));
    assert_eq!(status, 422, "{got}");
    // Unknown profile, unknown format, two schemas at once.
    let (status, got) = server.post(&json!({"text": "{}", "profile": "nope"}));
    assert_eq!(status, 400);
    assert!(
        got["error"].as_str().unwrap().contains("claude-ops"),
        "{got}"
    );
    let (status, _) = server.post(&json!({"text": "{}", "format": "yaml"}));
    assert_eq!(status, 400);
    let (status, _) = server.post(&json!({"text": "{}", "profile": "claude-ops", "schema": {}}));
    assert_eq!(status, 400);
    // Another site's page cannot post.
    let (status, _) = server.post_raw(b"{\"text\": \"{}\"}".to_vec(), Some("http://evil.example"));
    assert_eq!(status, 403);
    // GET on the endpoint is not a thing.
    assert_eq!(server.get("/api/extract").0, 405);
}

#[test]
fn schema_names_come_from_the_schemas_folder_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("need-n.json"),
        json!({"type": "object", "required": ["n"]}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.json"), "{nope").unwrap();
    let server = playground(&["--schemas", dir.path().to_str().unwrap()]);
    let (status, got) = server.post(&json!({"text": "{\"m\": 1}", "schema_name": "need-n.json"}));
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["errors"][0]["message"], "\"n\" is a required property");
    for (name, want) in [
        ("../need-n.json", 400),
        ("/etc/passwd", 400),
        ("missing.json", 404),
        ("broken.json", 422),
    ] {
        let (status, got) = server.post(&json!({"text": "{}", "schema_name": name}));
        assert_eq!(status, want, "{name}: {got}");
    }
    // Without --schemas there is no folder to name a file in.
    let bare = playground(&[]);
    let (status, _) = bare.post(&json!({"text": "{}", "schema_name": "need-n.json"}));
    assert_eq!(status, 404);
}

#[test]
fn profiles_are_listed_and_the_page_escapes_what_it_is_given() {
    let server = playground(&[]);
    let (status, body) = server.get("/api/profiles");
    assert_eq!(status, 200);
    let got: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = got["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["claude-ops", "claude-loop", "code-review"]);
    assert!(
        got["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["has_schema"] == true && p["description"].is_string())
    );
    let (status, html) = server.get(
        "/playground?profile=code-review&text=%3Cscript%3Ealert(1)%3C%2Fscript%3E%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E",
    );
    assert_eq!(status, 200);
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>alert") && !html.contains("<img src=x"));
    assert!(html.contains("id=\"input\"") && html.contains("src=\"/assets/playground.js\""));
    assert!(
        html.contains("<option value=\"code-review\" selected"),
        "{html}"
    );
}
