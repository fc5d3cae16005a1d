//! The schema builder's API over a real `serve --schemas DIR` (issue 9,
//! item 4): saving stays inside the folder, never overwrites without being
//! asked, never writes through a symlink, refuses foreign origins; lint and
//! the invariant check answer as `agentshape lint` and `check` would.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::served::{Http, Server};

/// Start `serve` on a fresh store in `dir`, with `extra` arguments.
fn serve_in(dir: &Path, extra: &[&str]) -> Server {
    crate::support::served::serve(&dir.join("s.db"), extra)
}

/// Every file under `dir`, recursively, as sorted relative paths.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

const SCHEMA: &str = r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}"#;

#[test]
fn schemas_save_list_and_open_round_trip_and_never_overwrite_unasked() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("schemas");
    let server = serve_in(root.path(), &["--schemas", dir.to_str().unwrap()]);
    let http = Http::new(&server.base);

    assert_eq!(
        http.get("/api/schemas"),
        (200, json!({"schemas": [], "writable": true}))
    );
    let (status, body) = http.put("/api/schemas/review.json", SCHEMA);
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        std::fs::read_to_string(dir.join("review.json")).unwrap(),
        SCHEMA
    );
    let (status, list) = http.get("/api/schemas");
    assert_eq!(status, 200);
    assert_eq!(list["schemas"][0]["name"], "review.json");
    assert_eq!(list["schemas"][0]["size"], SCHEMA.len());
    assert!(list["schemas"][0]["modified"].is_u64(), "{list}");
    let (status, opened) = http.get("/api/schemas/review.json");
    assert_eq!(status, 200);
    assert_eq!(opened, serde_json::from_str::<Value>(SCHEMA).unwrap());
    assert_eq!(http.get("/api/schemas/nothing.json").0, 404);
    // Served as written, key order included: the form lists fields in file order.
    let ordered =
        r#"{"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "string"}}}"#;
    assert_eq!(http.put("/api/schemas/ordered.json", ordered).0, 201);
    let text = http.rt.block_on(async {
        let r = http
            .client
            .get(format!("{}/api/schemas/ordered.json", http.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["content-type"], "application/json");
        r.text().await.unwrap()
    });
    assert_eq!(text, ordered);
    std::fs::write(dir.join("broken.json"), "{not json").unwrap();
    assert_eq!(http.get("/api/schemas/broken.json").0, 422);
    std::fs::remove_file(dir.join("broken.json")).unwrap();
    std::fs::remove_file(dir.join("ordered.json")).unwrap();

    // Exists: 409 with the question the page asks, and the file is unchanged.
    let other = r#"{"type": "object"}"#;
    let (status, body) = http.put("/api/schemas/review.json", other);
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["exists"], true);
    assert_eq!(body["error"], "schema `review.json` exists: overwrite?");
    assert_eq!(
        std::fs::read_to_string(dir.join("review.json")).unwrap(),
        SCHEMA
    );
    assert_eq!(
        http.put("/api/schemas/review.json?overwrite=false", other)
            .0,
        409
    );
    assert_eq!(
        http.put("/api/schemas/review.json?overwrite=maybe", other)
            .0,
        400
    );
    let (status, body) = http.put("/api/schemas/review.json?overwrite=true", other);
    assert_eq!((status, &body["replaced"]), (200, &json!(true)), "{body}");
    assert_eq!(
        std::fs::read_to_string(dir.join("review.json")).unwrap(),
        other
    );

    // Not JSON: 400; not a schema (or a rule that does not compile): 422; nothing written.
    assert_eq!(http.put("/api/schemas/bad.json", "{nope").0, 400);
    let (status, body) = http.put("/api/schemas/bad.json", r#"{"type": "nope"}"#);
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid schema")
    );
    let broken = r#"{"type": "object", "x-invariants": [{"rule": "self.a ==="}]}"#;
    assert_eq!(http.put("/api/schemas/bad.json", broken).0, 422);
    // Over 1 MiB: 413.
    let big = format!(r#"{{"description": "{}"}}"#, "x".repeat(1 << 20));
    assert_eq!(http.put("/api/schemas/big.json", big).0, 413);
    assert_eq!(tree(&dir), ["review.json"]);
}

#[test]
fn names_outside_the_folder_symlinks_and_foreign_origins_write_nothing() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("schemas");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("target.json");
    std::fs::write(&target, "{}").unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&target, dir.join("link.json")).unwrap();
    let server = serve_in(root.path(), &["--schemas", dir.to_str().unwrap()]);
    let http = Http::new(&server.base);

    // Names the server sees (percent-decoded by the router): each one a 400.
    for name in [
        "%2E%2E%2Fx.json",
        "..%2Foutside%2Fx.json",
        "%2Fetc%2Fx.json",
        ".hidden.json",
        "a%2Fb.json",
        "x.txt",
        "a%00b.json",
        "%2E%2E%2F%2E%2E%2Fx.json",
        "x%5C..%5Cy.json",
    ] {
        let (status, body) = http.put(&format!("/api/schemas/{name}"), SCHEMA);
        assert_eq!(status, 400, "{name}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("bad schema name"),
            "{body}"
        );
        assert_eq!(http.get(&format!("/api/schemas/{name}")).0, 400, "{name}");
    }
    // Paths that never reach the handler (another route, or none): refused too.
    for path in [
        "/api/schemas/a/b.json",
        "/api/schemas//etc/x.json",
        "/api/schemas/",
    ] {
        let status = http.put(path, SCHEMA).0;
        assert!((400..500).contains(&status), "{path}: {status}");
    }
    // A symlink in the folder is neither written through nor read through.
    for q in ["", "?overwrite=true"] {
        let (status, body) = http.put(&format!("/api/schemas/link.json{q}"), SCHEMA);
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("symlink"),
            "{body}"
        );
    }
    assert_eq!(http.get("/api/schemas/link.json").0, 400);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
    assert!(
        std::fs::symlink_metadata(dir.join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(http.get("/api/schemas").1["schemas"], json!([]));

    // Another site's page (or no origin proof at all) cannot save.
    let foreign = http.send(
        http.client
            .put(format!("{}/api/schemas/evil.json", http.base))
            .header("Origin", "http://evil.example")
            .body(SCHEMA),
    );
    assert_eq!(foreign.0, 403, "{}", foreign.1);
    let bare = http.send(
        http.client
            .put(format!("{}/api/schemas/evil.json", http.base))
            .body(SCHEMA),
    );
    assert_eq!(bare.0, 403);
    let cross = http.send(
        http.client
            .post(format!("{}/api/lint", http.base))
            .header("Sec-Fetch-Site", "cross-site")
            .body(r#"{"schema": {}}"#),
    );
    assert_eq!(cross.0, 403);

    assert_eq!(tree(&dir), ["link.json"]);
    assert_eq!(tree(&outside), ["target.json"]);
    assert_eq!(
        tree(root.path())
            .into_iter()
            .filter(|p| !p.starts_with("s.db"))
            .collect::<Vec<_>>(),
        [
            "outside",
            "outside/target.json",
            "schemas",
            "schemas/link.json"
        ]
    );
}

#[test]
fn lint_and_invariants_answer_as_the_cli_does() {
    let root = tempfile::tempdir().unwrap();
    let server = serve_in(root.path(), &[]);
    let http = Http::new(&server.base);

    // No additionalProperties: false, an optional property: OpenAI strict mode rejects it.
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 2}, "n": {"type": "integer"}},
        "required": ["name"],
    });
    let (status, out) = http.post("/api/lint", &json!({ "schema": schema }));
    assert_eq!(status, 200, "{out}");
    let openai = &out["providers"]["openai"];
    assert_eq!(openai["accepted"], false, "{out}");
    let cli = crate::support::agentshape()
        .args(["lint", "--json", "--provider", "openai", "--schema"])
        .arg(crate::support::temp_file(&schema.to_string()).path())
        .output()
        .unwrap();
    let cli = &crate::support::json_lines(&cli.stdout)[0];
    assert_eq!(openai["accepted"], cli["accepted"]);
    let strip = |f: &Value| {
        let mut f = f.clone();
        f.as_object_mut().unwrap().remove("fix");
        f
    };
    let web: Vec<Value> = openai["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(strip)
        .collect();
    assert_eq!(
        &Value::Array(web),
        &cli["findings"],
        "same findings as `lint --json`"
    );
    assert!(
        openai["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["pointer"] == "/properties/n" && f["severity"] == "error"),
        "{openai}"
    );
    for p in ["anthropic", "gemini", "ollama"] {
        assert!(out["providers"][p]["accepted"].is_boolean(), "{p}");
    }

    let rules = json!({"type": "object", "x-invariants": [
        {"rule": "size(self) >= 0"},
        {"rule": "self.a.filter(x, x >", "message": "broken"},
    ]});
    let (status, out) = http.post("/api/invariants", &json!({ "schema": rules }));
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["ok"], false);
    assert_eq!(out["rules"][0]["ok"], true);
    assert_eq!(out["rules"][1]["ok"], false);
    assert_eq!(out["rules"][1]["name"], "broken");
    assert!(
        out["rules"][1]["error"]
            .as_str()
            .unwrap()
            .contains("does not compile"),
        "{out}"
    );
    let (_, fine) = http.post(
        "/api/invariants",
        &json!({"schema": {"x-invariants": [{"rule": "true"}]}}),
    );
    assert_eq!(fine["ok"], true, "{fine}");

    // Bad bodies are 400s, never 500s.
    for body in ["", "{", "[]", r#"{"schema": 3}"#, r#"{"other": {}}"#] {
        for path in ["/api/lint", "/api/invariants"] {
            let status = http.write(reqwest::Method::POST, path, body).0;
            assert_eq!(status, 400, "{path} {body:?}");
        }
    }
}

#[test]
fn without_a_folder_the_builder_builds_but_cannot_save() {
    let root = tempfile::tempdir().unwrap();
    let server = serve_in(root.path(), &[]);
    let http = Http::new(&server.base);
    assert_eq!(
        http.get("/api/schemas"),
        (200, json!({"schemas": [], "writable": false}))
    );
    let (status, body) = http.put("/api/schemas/a.json", SCHEMA);
    assert_eq!(status, 409);
    assert!(
        body["error"].as_str().unwrap().contains("--schemas DIR"),
        "{body}"
    );
    assert_eq!(http.get("/api/schemas/a.json").0, 404);

    // The page: every id of the DOM contract, its module, the strict CSP.
    let resp = http
        .rt
        .block_on(http.client.get(format!("{}/builder", http.base)).send())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let html = http.rt.block_on(resp.text()).unwrap();
    for id in [
        "mode",
        "add-field",
        "preview",
        "lint",
        "invariants",
        "invariants-status",
        "schema-name",
        "save",
        "save-status",
        "download",
        "open",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "#{id}");
    }
    assert!(html.contains("/assets/builder.js"));
    let (status, js) = http.get("/assets/builder.js");
    assert_eq!(status, 200);
    assert!(js.as_str().unwrap().contains("agentshape.builder.schema"));
}

#[test]
fn the_open_list_is_rendered_from_the_folder() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("schemas");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("code-review.json"), SCHEMA).unwrap();
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let server = serve_in(root.path(), &["--schemas", dir.to_str().unwrap()]);
    let http = Http::new(&server.base);
    let html = http
        .rt
        .block_on(async {
            http.client
                .get(format!("{}/builder", http.base))
                .send()
                .await
                .unwrap()
                .text()
                .await
        })
        .unwrap();
    assert!(
        html.contains("<option value=\"code-review.json\">"),
        "{html}"
    );
    assert!(!html.contains("notes.txt"));
}
