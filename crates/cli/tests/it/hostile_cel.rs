//! Issue 27, item 1: `x-invariants` rules too deep for a stack are schema
//! errors (exit 64, one line), and rules that build gigabytes end with the
//! cost-limit finding.

use serde_json::{Value, json};

use crate::support::served::Http;
use crate::support::{agentshape, assert_exit, json_lines, temp_file};

fn schema_with(rule: &str) -> tempfile::NamedTempFile {
    temp_file(
        &json!({"type": "object", "x-invariants": [{"rule": rule, "message": "m"}]}).to_string(),
    )
}

/// The issue's probes: before the limits, the first three aborted the
/// process (exit 134, stack overflow) and the fourth exited 70.
fn too_deep() -> Vec<(&'static str, String)> {
    vec![
        ("3,000 `+` terms", vec!["1"; 3000].join("+")),
        ("5,000 links", format!("self{}", ".a".repeat(5000))),
        (
            "3,000 parentheses",
            format!("{}1{}", "(".repeat(3000), ")".repeat(3000)),
        ),
        (
            "100,000 parentheses",
            format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        (
            "20,000 size( calls",
            format!("{}self{}", "size(".repeat(20_000), ")".repeat(20_000)),
        ),
        ("1,000 `+` terms (6 KB)", vec!["self.n"; 1000].join("+")),
    ]
}

#[test]
fn rules_too_deep_for_a_stack_exit_64_with_one_line() {
    let data = temp_file(r#"{"n": 1}"#);
    for (what, rule) in too_deep() {
        let schema = schema_with(&rule);
        for cmd in ["extract", "validate", "check"] {
            let out = agentshape()
                .args([cmd, "--schema"])
                .arg(schema.path())
                .arg(data.path())
                .output()
                .unwrap();
            assert_exit(&out, 64);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.trim_end().lines().count(), 1, "{cmd}, {what}: {err}");
            assert!(
                err.contains("at `/x-invariants/0` is too"),
                "{cmd}, {what}: {err}"
            );
            assert!(err.contains("at most"), "{cmd}, {what}: {err}");
            assert!(out.stdout.is_empty(), "{cmd}, {what}: nothing half-written");
        }
    }
}

/// The issue's memory probes end with the cost-limit finding (exit 1)
/// instead of growing to gigabytes.
#[test]
fn rules_that_build_gigabytes_give_the_cost_limit_finding() {
    let a: Vec<usize> = (0..2000).collect();
    let cases: [(&str, Value); 2] = [
        (
            "self.a.map(x, self.a.map(y, self.a)).size() > 0",
            json!({ "a": a }),
        ),
        (
            "self.a.map(x, self.s + self.s + self.s + self.s).size() > 0",
            json!({ "a": a, "s": "x".repeat(1 << 20) }),
        ),
    ];
    for (rule, instance) in cases {
        let schema = schema_with(rule);
        let data = temp_file(&instance.to_string());
        for cmd in ["validate", "check", "extract"] {
            let out = agentshape()
                .args([cmd, "--json", "--schema"])
                .arg(schema.path())
                .arg(data.path())
                .output()
                .unwrap();
            assert_exit(&out, 1);
            let lines = json_lines(&out.stdout);
            let errors = &lines[0]["errors"];
            assert_eq!(errors.as_array().map(Vec::len), Some(1), "{cmd}: {errors}");
            assert_eq!(errors[0]["kind"], "invariant");
            let message = errors[0]["message"].as_str().unwrap();
            assert!(
                message.contains("exceeded the cost limit"),
                "{cmd}: {message}"
            );
        }
    }
}

/// One request per hostile rule to every endpoint that compiles a schema,
/// and to the builder reading it from `--schemas`: each gets a 4xx JSON
/// error naming the limit (or the builder's report of the rule), and the
/// server still answers the next request. Before the limits, the first
/// such request killed the server.
#[test]
fn serve_refuses_rules_too_deep_and_keeps_serving() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("schemas");
    std::fs::create_dir_all(&dir).unwrap();
    let (_, deep) = &too_deep()[0];
    let deep_schema = json!({"type": "object", "x-invariants": [{"rule": deep}]});
    std::fs::write(dir.join("deep.json"), deep_schema.to_string()).unwrap();
    let mut server = crate::support::served::serve(
        &root.path().join("s.db"),
        &["--schemas", dir.to_str().unwrap()],
    );
    let http = Http::new(&server.base);
    let fine = || {
        let (status, got) = http.post("/api/extract", &json!({"text": "{\"n\": 1}"}));
        assert_eq!(status, 200, "{got}");
    };
    for (what, rule) in too_deep() {
        let schema = json!({"type": "object", "x-invariants": [{"rule": rule}]});
        let (status, got) = http.post("/api/extract", &json!({"text": "{}", "schema": schema}));
        assert_eq!(status, 422, "{what}: {got}");
        let error = got["error"].as_str().unwrap();
        assert!(
            error.contains("is too") && error.contains("at most"),
            "{what}: {error}"
        );
        assert!(!error.contains('\n'), "{error}");
        fine();

        let (status, got) = http.put("/api/schemas/saved.json", schema.to_string());
        assert_eq!(status, 422, "{what}: {got}");
        assert!(
            got["error"].as_str().unwrap().contains("is too"),
            "{what}: {got}"
        );
        assert!(!dir.join("saved.json").exists(), "nothing written");
        fine();

        let (status, got) = http.post("/api/invariants", &json!({ "schema": schema }));
        assert_eq!(status, 200, "{what}: {got}");
        assert_eq!(got["ok"], false, "{got}");
        let error = got["rules"][0]["error"].as_str().unwrap();
        assert!(
            error.contains("is too") && error.contains("at most"),
            "{what}: {error}"
        );
        fine();
    }
    // The builder opens the schema from `--schemas`, and its page checks it.
    let (status, _) = http.get("/builder");
    assert_eq!(status, 200);
    let (status, opened) = http.get("/api/schemas/deep.json");
    assert_eq!(status, 200, "{opened}");
    let (status, got) = http.post("/api/invariants", &json!({ "schema": deep_schema }));
    assert_eq!((status, &got["ok"]), (200, &json!(false)), "{got}");
    fine();
    assert!(server.alive());
}

/// The issue's 11 KB `/api/extract` that killed `serve` in 6 s: the
/// cost-limit finding, and the server's memory stays bounded.
#[test]
fn serve_stops_rules_that_build_gigabytes() {
    let root = tempfile::tempdir().unwrap();
    let mut server = crate::support::served::serve(&root.path().join("s.db"), &[]);
    let http = Http::new(&server.base);
    let a: Vec<usize> = (0..2000).collect();
    let text = json!({ "a": a }).to_string();
    let schema = json!({"type": "object", "x-invariants": [
        {"rule": "self.a.map(x, self.a.map(y, self.a)).size() > 0", "message": "m"}]});
    for _ in 0..3 {
        let (status, got) = http.post("/api/extract", &json!({"text": text, "schema": schema}));
        assert_eq!(status, 200, "{got}");
        assert_eq!(got["valid"], false);
        let message = got["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("exceeded the cost limit"), "{message}");
    }
    assert!(server.alive());
    // A guard against the gigabytes, not a measurement (the README has those).
    let rss = server.rss_kib();
    assert!(rss < 512 << 10, "{rss} KiB");
}
