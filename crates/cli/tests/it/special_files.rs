//! Files that are not regular files (issue 27, item 2): a FIFO, a folder, a
//! device or an oversized file given as a schema, a profile, a profile's
//! `schema = ...`, an ops config or prompt, or a FILE argument, and a
//! symlink, FIFO or device in `serve --schemas`. Each is refused with one
//! line naming the path and what it is, never waited on (a FIFO's open used
//! to block forever) or read until memory runs out (`/dev/zero`).
//!
//! Every command runs under a generous timeout: a regression hangs no
//! suite, the command is killed and the test fails on its exit status.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit};

/// Far above what any of these commands needs (milliseconds): a hang guard.
const GUARD: Duration = Duration::from_secs(30);

/// A folder with a FIFO, a folder and a small valid schema in it.
struct Specials {
    dir: tempfile::TempDir,
}

impl Specials {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        mkfifo(&d.join("fifo.json"));
        mkfifo(&d.join("fifo.toml"));
        std::fs::create_dir(d.join("dir.json")).unwrap();
        std::fs::create_dir(d.join("dir.toml")).unwrap();
        std::fs::write(d.join("ok.json"), r#"{"type": "object"}"#).unwrap();
        Specials { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The special files, with the words their refusal must use.
    fn cases(&self, ext: &str) -> Vec<(PathBuf, &'static str)> {
        vec![
            (
                self.path(&format!("fifo.{ext}")),
                "is a FIFO, not a regular file",
            ),
            (
                self.path(&format!("dir.{ext}")),
                "is a directory, not a regular file",
            ),
            (
                PathBuf::from("/dev/zero"),
                "is a character device, not a regular file",
            ),
        ]
    }
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Run `agentshape ARGS` under the hang guard.
fn run(args: &[&str]) -> std::process::Output {
    agentshape().args(args).timeout(GUARD).output().unwrap()
}

/// Assert exit `code` and one line of stderr containing every one of `want`.
#[track_caller]
fn refused(out: &std::process::Output, code: i32, want: &[&str]) {
    assert_exit(out, code);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for w in want {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_schema_that_is_not_a_regular_file_is_a_usage_error_naming_it() {
    let sp = Specials::new();
    let ok = sp.path("ok.json");
    for (schema, what) in sp.cases("json") {
        let schema = s(&schema);
        for args in [
            vec!["validate", "--schema", schema, s(&ok)],
            vec!["extract", "--schema", schema, s(&ok)],
            vec!["check", "--schema", schema, s(&ok)],
            vec!["lint", "--provider", "openai", "--schema", schema],
        ] {
            let out = run(&args);
            refused(&out, 64, &[&format!("schema `{schema}` {what}")]);
        }
    }
    // A missing schema is still "input missing".
    refused(
        &run(&["validate", "--schema", s(&sp.path("gone.json")), s(&ok)]),
        66,
        &["gone.json"],
    );
}

#[test]
fn an_oversized_schema_is_refused_naming_the_limit() {
    let sp = Specials::new();
    let big = sp.path("big.json");
    // Valid JSON, one byte over the cap: refused for its size, not its text.
    let mut text = vec![b' '; (16 << 20) - 1];
    text.extend_from_slice(b"{}");
    std::fs::write(&big, &text).unwrap();
    let out = run(&["validate", "--schema", s(&big), s(&sp.path("ok.json"))]);
    refused(
        &out,
        64,
        &[&format!(
            "schema `{}` is larger than the 16 MiB limit",
            s(&big)
        )],
    );
    // At the cap it is read (and is the schema `{}`).
    std::fs::write(&big, &text[1..]).unwrap();
    assert_exit(
        &run(&["validate", "--schema", s(&big), s(&sp.path("ok.json"))]),
        0,
    );
}

#[test]
fn a_profile_that_is_not_a_regular_file_is_named_not_missing() {
    let sp = Specials::new();
    for (profile, what) in sp.cases("toml") {
        let profile = s(&profile);
        let out = run(&["extract", "--profile", profile, s(&sp.path("ok.json"))]);
        refused(&out, 64, &[&format!("profile `{profile}` {what}")]);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("not found"));
        let out = run(&["profile", "show", profile]);
        refused(&out, 64, &[&format!("profile `{profile}` {what}")]);
    }
    let gone = sp.path("gone.toml");
    refused(
        &run(&["extract", "--profile", s(&gone), s(&sp.path("ok.json"))]),
        66,
        &["gone.toml", "No such file"],
    );
}

#[test]
fn a_profiles_schema_that_is_a_fifo_folder_or_device_is_refused() {
    let sp = Specials::new();
    for (schema, what) in sp.cases("json") {
        let p = sp.path("p.toml");
        std::fs::write(&p, format!("schema = {:?}\n", s(&schema))).unwrap();
        let out = run(&["extract", "--profile", s(&p), s(&sp.path("ok.json"))]);
        refused(&out, 64, &["p.toml", "`schema`", s(&schema), what]);
    }
}

/// An ops config in `dir` whose one tier's prompt is `prompt`.
fn ops_config(dir: &Path, prompt: &Path) -> PathBuf {
    let config = dir.join("ops.toml");
    std::fs::write(
        &config,
        format!(
            "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\nstate_dir = {:?}\n\n[[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = {:?}\n",
            crate::support::fake_agent(),
            s(&dir.join("a.db")),
            s(&dir.join("logs")),
            s(&dir.join("state")),
            s(prompt),
        ),
    )
    .unwrap();
    config
}

#[test]
fn an_ops_config_or_prompt_that_is_not_a_regular_file_is_refused() {
    let sp = Specials::new();
    for (config, what) in sp.cases("toml") {
        let out = run(&["ops", "--config", s(&config), "--once"]);
        refused(&out, 64, &[&format!("config `{}` {what}", s(&config))]);
    }
    refused(
        &run(&["ops", "--config", s(&sp.path("gone.toml")), "--once"]),
        66,
        &["gone.toml"],
    );
    // A tier's prompt, read when the cycle starts.
    for (prompt, what) in sp.cases("json") {
        let config = ops_config(sp.dir.path(), &prompt);
        let out = run(&["ops", "--config", s(&config), "--once"]);
        refused(&out, 64, &[&format!("prompt `{}` {what}", s(&prompt))]);
    }
}

#[test]
fn file_arguments_that_are_devices_or_folders_are_refused_and_the_batch_goes_on() {
    let sp = Specials::new();
    let schema = sp.path("ok.json");
    let reply = crate::support::example("reply.txt");
    for (bad, what) in [
        (PathBuf::from("/dev/zero"), "is a character device"),
        (sp.path("dir.json"), "is a directory"),
    ] {
        let bad = s(&bad);
        for args in [
            vec!["extract", bad, &reply],
            vec!["check", "--schema", s(&schema), bad, &reply],
            vec!["parse", bad, &reply],
        ] {
            let out = run(&args);
            assert_exit(&out, 66);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&format!("`{bad}`: {what}")), "{args:?}: {err}");
            // The good file of the batch was still processed.
            assert!(!out.stdout.is_empty(), "{args:?}");
        }
        refused(
            &run(&["validate", "--schema", s(&schema), bad]),
            66,
            &[bad, what],
        );
    }
    // `ingest` reads whole logs that name a session: regular files only.
    let db = sp.path("i.db");
    let out = run(&["ingest", "--store", s(&db), s(&sp.path("fifo.json"))]);
    refused(&out, 66, &["fifo.json", "is a FIFO"]);
    let out = run(&["validate", "--schema", s(&schema), s(&sp.path("fifo.json"))]);
    refused(&out, 66, &["fifo.json", "is a FIFO"]);
}

#[test]
fn a_fifo_file_argument_is_streamed_not_waited_on() {
    let sp = Specials::new();
    let fifo = sp.path("fifo.json");
    // No writer holds it open: it reads as empty, at once.
    assert_exit(&run(&["extract", s(&fifo)]), 2);
    let out = run(&["parse", "--json", s(&fifo)]);
    assert!(out.status.code().is_some(), "killed: it hung");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A pipe with its writer (bash's process substitution) is read through.
    let bin = assert_cmd::cargo::cargo_bin("agentshape");
    let example = crate::support::example("healthy-structured.ndjson");
    let out = assert_cmd::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{:?} extract --json <(cat {example:?}) {example:?}",
            s(&bin)
        ))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let lines = crate::support::json_lines(&out.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["value"], lines[1]["value"]);
    assert_eq!(lines[0]["method"], "structured");
}

/// A running `serve --schemas DIR` and a client for its playground.
struct Served {
    server: crate::support::served::Server,
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Served {
    fn new(schemas: &Path, db: &Path) -> Self {
        let server = crate::support::served::serve(db, &["--schemas", s(schemas)]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = reqwest::Client::builder().timeout(GUARD).build().unwrap();
        Served { server, rt, client }
    }

    /// `POST /api/extract` from the server's own page: status and body.
    fn extract(&self, body: &Value) -> (u16, String) {
        let req = self
            .client
            .post(self.server.url("/api/extract"))
            .header("origin", &self.server.base)
            .header("content-type", "application/json")
            .body(body.to_string());
        let resp = self
            .rt
            .block_on(async { req.send().await })
            .expect("an answer, not a hang");
        let status = resp.status().as_u16();
        (status, self.rt.block_on(resp.text()).unwrap())
    }

    fn get(&self, path: &str) -> (u16, String) {
        let resp = self
            .rt
            .block_on(async { self.client.get(self.server.url(path)).send().await })
            .expect("an answer, not a hang");
        let status = resp.status().as_u16();
        (status, self.rt.block_on(resp.text()).unwrap())
    }
}

#[test]
fn serve_reads_a_schema_name_through_no_symlink() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.json");
    std::fs::write(&secret, r#"{"const": "TOPSECRET-VALUE"}"#).unwrap();
    let sp = Specials::new();
    std::os::unix::fs::symlink(&secret, sp.path("link.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sp.path("zero.json")).unwrap();
    let served = Served::new(sp.dir.path(), &outside.path().join("s.db"));
    for name in ["link.json", "zero.json"] {
        let (status, body) = served.extract(&json!({"text": "{\"a\": 1}", "schema_name": name}));
        assert_eq!(status, 400, "{name}: {body}");
        let got: Value = serde_json::from_str(&body).unwrap();
        let error = got["error"].as_str().unwrap();
        assert!(error.contains(&format!("`{name}` is a symlink")), "{error}");
        assert!(!body.contains("TOPSECRET"), "{body}");
    }
    // The regular file next to them is read.
    let (status, body) = served.extract(&json!({"text": "[]", "schema_name": "ok.json"}));
    assert_eq!(status, 200, "{body}");
    // Names without `.json` are not schema names (the builder's rule).
    let (status, _) = served.extract(&json!({"text": "{}", "schema_name": "ok"}));
    assert_eq!(status, 400);
}

#[test]
fn serve_refuses_a_fifo_or_folder_schema_at_once_and_keeps_answering() {
    let sp = Specials::new();
    let db = tempfile::tempdir().unwrap();
    let mut served = Served::new(sp.dir.path(), &db.path().join("s.db"));
    // More requests than the blocking pool has threads: each used to park
    // one on the FIFO's open for good.
    for i in 0..600 {
        let name = if i % 2 == 0 { "fifo.json" } else { "dir.json" };
        let (status, body) = served.extract(&json!({"text": "{}", "schema_name": name}));
        assert_eq!(status, 400, "{name}: {body}");
        let want = if i % 2 == 0 {
            "is a FIFO"
        } else {
            "is a directory"
        };
        assert!(body.contains(want), "{body}");
        if i > 2 {
            continue;
        }
        // The builder's open reads by the same function.
        let (status, body) = served.get(&format!("/api/schemas/{name}"));
        assert_eq!(status, 400, "{body}");
    }
    assert_eq!(served.get("/api/profiles").0, 200);
    assert!(served.server.alive());
}
