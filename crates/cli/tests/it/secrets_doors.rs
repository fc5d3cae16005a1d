//! Issue 29's doors: the planted secrets of core's corpus, put into a
//! transcript's tool outputs, user text and structured output, are absent
//! (their masks present) wherever data leaves the forensic log: the store
//! (every byte of the file), `sessions --json`, `parse --json`,
//! `extract --json`, a `store copy`, and `serve`'s API, pages and SSE feed,
//! including for rows written with `--no-mask` (the page door masks them).
//! `--no-mask` shows raw text and says so; the forensic log stays byte-exact.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::planted::{Case, GH, leaky_transcript, planted};
use crate::support::served::{Http, serve};
use crate::support::{agentshape, assert_exit, json_lines, repo_root};

/// Every byte of a SQLite store (database and WAL), as text.
fn store_bytes(db: &Path) -> String {
    let mut all = Vec::new();
    for suffix in ["", "-wal"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(b) = std::fs::read(&p) {
            all.extend(b);
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

fn assert_masked(place: &str, text: &str, cases: &[Case]) {
    for c in cases {
        assert!(
            !text.contains(&c.secret),
            "{place}: secret shown: {}",
            c.secret
        );
    }
    assert!(!text.contains(GH), "{place}: GitHub token shown");
    assert!(text.contains("[REDACTED:"), "{place}: no mask in it");
}

pub(crate) fn run(dir: &Path, db: &Path, t: &Path, extra: &[&str]) -> std::process::Output {
    agentshape()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(t)
        .args(["--session-id", "leaky", "--store"])
        .arg(db)
        .arg("--log-dir")
        .arg(dir.join("logs"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_replayed_run_is_stored_and_printed_masked_and_its_log_stays_raw() {
    let cases = planted();
    assert!(cases.len() >= 40);
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("a.db");
    let out = run(dir.path(), &db, &t, &[]);
    assert_exit(&out, 0);
    assert_masked("the store", &store_bytes(&db), &cases);
    // The forensic log is the evidence: byte-exact.
    let mut log = String::new();
    for e in std::fs::read_dir(dir.path().join("logs")).unwrap() {
        let mut f = std::fs::File::open(e.unwrap().path()).unwrap();
        f.read_to_string(&mut log).unwrap();
    }
    assert!(log.contains(GH) && log.contains(&cases[0].secret));

    // A valid output holding a secret stays valid, and is stored masked in
    // the same shape.
    let s = agentshape()
        .args(["sessions", "--json", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(!text.contains(GH), "{text}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let (output, verdict, masked): (String, String, i64) = c
        .query_row(
            "SELECT output, verdict, secrets_masked FROM sessions WHERE id = 'leaky'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let verdict: Value = serde_json::from_str(&verdict).unwrap();
    assert_eq!(verdict["valid"], true, "{verdict}");
    let output: Value = serde_json::from_str(&output).unwrap();
    assert!(
        output["summary"]
            .as_str()
            .unwrap()
            .contains("GITHUB_TOKEN=[REDACTED:github-pat:")
    );
    assert_eq!(output["events"].as_array().unwrap().len(), 3);
    assert!(
        usize::try_from(masked).unwrap() >= cases.len(),
        "{masked} secrets counted"
    );
    let found: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM secrets_found WHERE session_id = 'leaky'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, masked);

    // `ingest` of the log into a fresh store masks what it reads.
    let log_path = std::fs::read_dir(dir.path().join("logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let db2 = dir.path().join("ingested.db");
    let out = agentshape()
        .arg("ingest")
        .arg(&log_path)
        .arg("--store")
        .arg(&db2)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_masked("an ingested store", &store_bytes(&db2), &cases);
}

#[test]
fn parse_and_extract_print_masked_json_of_the_same_shape_and_no_mask_prints_raw_loudly() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    for cmd in [
        &["parse", "--json"][..],
        &["extract", "--json", "--profile", "claude-ops"][..],
    ] {
        let out = agentshape()
            .args(cmd)
            .arg(&t)
            .env("AGENTSHAPE_STORE", dir.path().join("none.db"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for c in &cases {
            assert!(!text.contains(&c.secret), "{cmd:?}: {}", c.secret);
        }
        assert!(!text.contains(GH), "{cmd:?}: {text}");
        // Still JSON lines.
        let lines = json_lines(&out.stdout);
        assert!(!lines.is_empty());
        assert!(
            !dir.path().join("none.db").exists(),
            "a printing command created a store"
        );
        let raw = agentshape()
            .args(cmd)
            .arg("--no-mask")
            .arg(&t)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&raw.stderr);
        assert!(
            stderr.contains("secret masking is OFF: raw credentials will be written/shown"),
            "{stderr}"
        );
        assert!(
            String::from_utf8_lossy(&raw.stdout).contains(GH),
            "{cmd:?} --no-mask"
        );
    }
    // extract's value keeps its shape.
    let out = agentshape()
        .args(["extract", "--json", "--profile", "claude-ops"])
        .arg(&t)
        .output()
        .unwrap();
    let v = &json_lines(&out.stdout)[0];
    let text = v.to_string();
    assert!(text.contains("[REDACTED:github-pat:"), "{text}");
}

/// `extract --jsonl --json` masks each printed line where it is made
/// (core's Note [Line facts in one pass] decides which lines are read
/// closely): every planted context, percent-encoded, base64 and wrapped
/// JWTs included, as a reply's JSON value, comes out masked, one result
/// line per reply, each still JSON; `--no-mask` prints them raw.
#[test]
fn extract_jsonl_masks_every_planted_secret_in_the_values_it_prints() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let replies = dir.path().join("replies.jsonl");
    let lines: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let reply = format!(
                "Here it is:\n```json\n{}\n```",
                json!({"step": i, "note": c.context})
            );
            json!({"id": i, "text": reply}).to_string()
        })
        .collect();
    std::fs::write(&replies, lines.join("\n") + "\n").unwrap();
    let out = agentshape()
        .args(["extract", "--jsonl", "--json"])
        .arg(&replies)
        .env("AGENTSHAPE_STORE", dir.path().join("none.db"))
        .output()
        .unwrap();
    // A secret as a JSON string writes it (a private key's line breaks as
    // `\n`), without its quotes.
    let written = |secret: &str| {
        let quoted = serde_json::to_string(secret).unwrap();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), cases.len());
    assert_eq!(json_lines(&out.stdout).len(), cases.len());
    for (line, c) in lines.iter().zip(&cases) {
        assert!(!line.contains(&written(&c.secret)), "{}: {line}", c.secret);
        assert!(line.contains("[REDACTED:"), "{line}");
    }
    let raw = agentshape()
        .args(["extract", "--jsonl", "--json", "--no-mask"])
        .arg(&replies)
        .output()
        .unwrap();
    let raw = String::from_utf8_lossy(&raw.stdout);
    for c in &cases {
        assert!(raw.contains(&written(&c.secret)), "--no-mask: {}", c.secret);
    }
}

/// The SSE feed from the start until `ended`, as text.
fn feed_text(base: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut resp = reqwest::Client::new()
            .get(format!("{base}/api/feed?after=0"))
            .send()
            .await
            .unwrap();
        let mut text = String::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !text.contains("event: ended") && std::time::Instant::now() < deadline {
            match tokio::time::timeout(std::time::Duration::from_secs(5), resp.chunk()).await {
                Ok(Ok(Some(c))) => text.push_str(&String::from_utf8_lossy(&c)),
                _ => break,
            }
        }
        text
    })
}

#[test]
fn serve_masks_rows_stored_raw_in_api_pages_and_feed_and_no_mask_shows_a_banner() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("raw.db");
    // Stored raw (as before masking existed).
    let out = run(dir.path(), &db, &t, &["--no-mask"]);
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("secret masking is OFF"));
    assert!(store_bytes(&db).contains(GH));

    let server = serve(&db, &[]);
    let http = Http::new(&server.base);
    for path in [
        "/api/sessions/leaky",
        "/api/sessions",
        "/api/events",
        "/api/memories",
        "/sessions/leaky",
        "/sessions?q=deploy",
        "/sessions?q=env",
        "/events",
        "/memories",
        "/",
    ] {
        let (status, body) = http.get(path);
        assert_eq!(status, 200, "{path}");
        let text = match &body {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        for c in &cases {
            assert!(!text.contains(&c.secret), "{path}: {}", c.secret);
        }
        assert!(!text.contains(GH), "{path}");
    }
    let (_, detail) = http.get("/api/sessions/leaky");
    assert!(detail.to_string().contains("[REDACTED:github-pat:"));
    assert_masked("the SSE feed", &feed_text(&server.base), &cases);
    drop(server);

    let server = serve(&db, &["--no-mask"]);
    let http = Http::new(&server.base);
    let (_, page) = http.get("/sessions/leaky");
    let page = page.as_str().unwrap().to_owned();
    assert!(page.contains("secret masking is OFF: raw credentials are shown"));
    assert!(page.contains(GH));
}

#[test]
fn store_copy_masks_an_unmasked_source_with_the_targets_key() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("raw.db");
    assert_exit(&run(dir.path(), &db, &t, &["--no-mask"]), 0);
    let to = dir.path().join("copy.db");
    let out = agentshape()
        .args(["store", "copy", "--from"])
        .arg(&db)
        .arg("--to")
        .arg(&to)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_masked("a store copy", &store_bytes(&to), &cases);
}

#[test]
fn secrets_scan_lists_where_never_what_and_exits_1_when_found() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let out = agentshape()
        .args(["secrets", "scan", "--json"])
        .arg(&t)
        .env("AGENTSHAPE_STORE", dir.path().join("none.db"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    for c in &cases {
        assert!(!text.contains(&c.secret), "{}", c.secret);
    }
    let lines = json_lines(&out.stdout);
    assert!(lines.len() >= 2 * cases.len(), "{} found", lines.len());
    assert!(
        lines
            .iter()
            .all(|l| l["rule"].is_string() && l["line"].is_u64() && l["fingerprint"].is_string())
    );
    // The table, too, never shows the secret.
    let human = agentshape()
        .args(["secrets", "scan"])
        .arg(&t)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(!text.contains(GH) && text.contains("github-pat"), "{text}");
    // Nothing found: 0.
    let clean = agentshape()
        .args(["secrets", "scan", "examples/healthy-structured.ndjson"])
        .output()
        .unwrap();
    assert_exit(&clean, 0);
    // A store: what was masked in it.
    let db = dir.path().join("a.db");
    assert_exit(&run(dir.path(), &db, &t, &[]), 0);
    let out = agentshape()
        .args(["secrets", "scan", "--json", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains(GH));
    let rows = json_lines(&out.stdout);
    assert!(
        rows.iter()
            .any(|r| r["session_id"] == "leaky" && r["place"] == "feed")
    );
}

#[test]
fn secrets_mask_masks_an_existing_store_once() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("old.db");
    assert_exit(&run(dir.path(), &db, &t, &["--no-mask"]), 0);
    assert!(store_bytes(&db).contains(GH));
    let out = agentshape()
        .args(["secrets", "mask", "--json", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let report = &json_lines(&out.stdout)[0];
    assert!(
        report["secrets"].as_u64().unwrap() >= cases.len() as u64,
        "{report}"
    );
    assert_masked("a masked old store", &store_bytes(&db), &cases);
    // Idempotent.
    let again = agentshape()
        .args(["secrets", "mask", "--json", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(json_lines(&again.stdout)[0]["secrets"], 0);
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT secrets_masked FROM sessions WHERE id = 'leaky'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        u64::try_from(n).unwrap(),
        report["secrets"].as_u64().unwrap()
    );
}

#[test]
fn mask_false_in_a_profile_and_a_user_rule_file_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let shown = agentshape()
        .args(["profile", "show", "claude-ops"])
        .output()
        .unwrap();
    // A top-level key goes before the first table.
    let schema = repo_root().join("schemas/agent-response.json");
    let toml = format!("mask = false\n{}", String::from_utf8(shown.stdout).unwrap()).replace(
        "../schemas/agent-response.json",
        &schema.display().to_string(),
    );
    let profile = dir.path().join("raw.toml");
    std::fs::write(&profile, &toml).unwrap();
    let t = leaky_transcript(dir.path(), &planted());
    let out = agentshape()
        .args(["extract", "--json", "--profile"])
        .arg(&profile)
        .arg(&t)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("secret masking is OFF"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(GH));

    // A user's rule: masked by it; a bad rule file: 64.
    let rules = dir.path().join("secrets.toml");
    std::fs::write(
        &rules,
        "[[rules]]\nid = \"acme-token\"\ndescription = \"ACME\"\nregex = '''acme_[a-z0-9]{24}'''\nkeywords = [\"acme_\"]\n",
    )
    .unwrap();
    let f = dir.path().join("acme.txt");
    std::fs::write(&f, "ACME=acme_abcdefghijklmnopqrstuvwx\n").unwrap();
    let out = agentshape()
        .args(["secrets", "scan"])
        .arg(&f)
        .env("AGENTSHAPE_SECRETS_RULES", &rules)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("acme-token"));
    std::fs::write(&rules, "[[rules]]\nid = \"x\"\nregex = '''(unclosed'''\n").unwrap();
    let out = agentshape()
        .args(["parse", "--secrets-rules"])
        .arg(&rules)
        .arg(&f)
        .output()
        .unwrap();
    assert_exit(&out, 64);
}

#[test]
fn an_imported_claude_session_file_is_stored_masked() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("claude/projects/-srv-app");
    std::fs::create_dir_all(&project).unwrap();
    let sid = "7a1e0c2a-7b3d-4c8e-9a10-2b3c4d5e6f71";
    let base = |kind: &str, uuid: String, parent: Option<String>, message: Value| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/srv/app",
            "sessionId": sid, "version": "2.1.231", "gitBranch": "main", "type": kind, "uuid": uuid,
            "timestamp": "2026-01-05T09:00:00.000Z", "message": message})
    };
    let mut lines = vec![base(
        "user",
        "u0".into(),
        None,
        json!({"role": "user",
        "content": format!("deploy with GITHUB_TOKEN={GH}")}),
    )];
    let mut parent = "u0".to_owned();
    for (i, c) in cases.iter().enumerate() {
        let a = format!("a{i}");
        lines.push(base("assistant", a.clone(), Some(parent.clone()), json!({"id": format!("msg_{i}"),
            "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash", "input": {"command": "cat .env"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}})));
        let u = format!("r{i}");
        let mut line = base(
            "user",
            u.clone(),
            Some(a),
            json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": c.context}]}),
        );
        line["toolUseResult"] = json!({"stdout": c.context, "stderr": ""});
        lines.push(line);
        parent = u;
    }
    let file = project.join(format!("{sid}.jsonl"));
    std::fs::write(
        &file,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let db = dir.path().join("imported.db");
    let out = agentshape()
        .args(["import", "--quiet", "--store"])
        .arg(&db)
        .arg(dir.path().join("claude"))
        .env("HOME", dir.path())
        .env_remove("AGENTSHAPE_STORE")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_masked("an imported store", &store_bytes(&db), &cases);
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM secrets_found WHERE place = 'feed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(usize::try_from(n).unwrap() >= cases.len(), "{n}");
}

#[test]
fn parse_fingerprints_match_the_stores_when_run_s_store_exists() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("a.db");
    assert_exit(&run(dir.path(), &db, &t, &[]), 0);
    let c = rusqlite::Connection::open(&db).unwrap();
    let stored: String = c
        .query_row(
            "SELECT fingerprint FROM secrets_found WHERE rule = 'github-pat' AND place = 'summary'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let fp = |store: &Path| {
        let out = agentshape()
            .args(["extract", "--json", "--profile", "claude-ops"])
            .arg(&t)
            .env("AGENTSHAPE_STORE", store)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let at = text.find("GITHUB_TOKEN=[REDACTED:github-pat:").unwrap()
            + "GITHUB_TOKEN=[REDACTED:github-pat:".len();
        text[at..at + 8].to_owned()
    };
    assert_eq!(fp(&db), stored);
    // No store: a random key, so (almost surely) another fingerprint.
    assert_ne!(fp(&dir.path().join("none.db")), stored);
}

/// Issue 40 §6, core's Note [A key read when first needed]: output with no
/// secret in it needs no key, so a short `parse` or `extract` never opens
/// the store `run` would use (opening it, ~2 ms, was most of what masking
/// added to a short command). SQLite leaves a read-only opening's `-wal`
/// and `-shm` files behind, which is what this looks for; the output with
/// a secret still carries the store's fingerprint.
#[test]
fn output_without_a_secret_never_opens_runs_store_for_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let clean = repo_root().join("examples/healthy-structured.ndjson");
    let db = dir.path().join("a.db");
    assert_exit(&run(dir.path(), &db, &clean, &[]), 0);
    let opened = || {
        ["-wal", "-shm"]
            .iter()
            .any(|s| PathBuf::from(format!("{}{s}", db.display())).exists())
    };
    assert!(!opened(), "the run closed its store");
    for args in [&["parse", "--json"][..], &["extract", "--json"]] {
        let out = agentshape()
            .args(args)
            .arg(&clean)
            .env("AGENTSHAPE_STORE", &db)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        assert!(!String::from_utf8_lossy(&out.stdout).contains("[REDACTED:"));
        assert!(
            !opened(),
            "`{}` of a clean transcript opened the store",
            args[0]
        );
    }
    let cases = planted();
    let leaky = leaky_transcript(dir.path(), &cases);
    let out = agentshape()
        .args(["parse", "--json"])
        .arg(&leaky)
        .env("AGENTSHAPE_STORE", &db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("[REDACTED:github-pat:"));
}

/// Issue 40 §1: secrets in what a session is called (its id, working
/// folder, branch, a tool's and the model's name) never reach the store
/// raw, nor `import --json`, nor `usage`; the fingerprints printed equal
/// the store's, run after run (one key per store).
#[test]
fn secrets_in_names_and_ids_are_masked_at_the_door_and_fingerprints_are_stable() {
    const AWS: &str = "AKIAZ3MHQ4N7LWXTY2PB";
    const PG_PASS: &str = "S3cr3tPassw0rdXyz";
    const SLACK: &str = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
    const GH2: &str = "ghp_Pw4Kd8Hs2Lq6Zt1Vn9Bx3Cm7Fj5Gr0Ye8Ua4";
    let dir = tempfile::tempdir().unwrap();
    let sid = format!("sess-{GH}");
    let cwd = format!("/home/me/{AWS}/postgres://admin:{PG_PASS}@db.internal:5432/app");
    // Claude Code names the folder after the cwd, `/` and `.` as `-`: the
    // AWS key survives that, the URL's password no longer reads as one.
    let project = dir
        .path()
        .join("claude/projects")
        .join(format!("-home-me-{AWS}"));
    std::fs::create_dir_all(&project).unwrap();
    let line = |kind: &str, uuid: &str, message: Value| {
        json!({"parentUuid": null, "isSidechain": false, "cwd": cwd, "sessionId": sid,
            "version": "2.1.0", "gitBranch": format!("feature/{GH2}"), "type": kind, "uuid": uuid,
            "timestamp": "2026-01-05T09:00:00.000Z", "requestId": format!("req-{uuid}"), "message": message})
        .to_string()
            + "\n"
    };
    let text = line(
        "user",
        "u0",
        json!({"role": "user", "content": "list the files"}),
    ) + &line(
        "assistant",
        "a1",
        json!({"id": "msg_1", "type": "message", "role": "assistant",
            "model": format!("claude-sonnet-4-5-{GH2}"),
            "content": [{"type": "tool_use", "id": "toolu_1", "name": SLACK, "input": {}}],
            "usage": {"input_tokens": 10, "output_tokens": 2}}),
    );
    std::fs::write(project.join(format!("{sid}.jsonl")), text).unwrap();
    let db = dir.path().join("names.db");
    let import = || {
        let out = agentshape()
            .args(["import", "--json", "--store"])
            .arg(&db)
            .arg(dir.path().join("claude"))
            .env("HOME", dir.path())
            .env_remove("AGENTSHAPE_STORE")
            .output()
            .unwrap();
        assert_exit(&out, 0);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let printed = import();
    let raw = [GH, GH2, AWS, PG_PASS, SLACK];
    // A store written raw (`--no-mask`), then `secrets mask --store`: the
    // names and the id are masked in every table, the old bytes gone.
    let old = dir.path().join("old.db");
    let out = agentshape()
        .args(["import", "--quiet", "--no-mask", "--store"])
        .arg(&old)
        .arg(dir.path().join("claude"))
        .env("HOME", dir.path())
        .env_remove("AGENTSHAPE_STORE")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(store_bytes(&old).contains(SLACK));
    let out = agentshape()
        .args(["secrets", "mask", "--json", "--store"])
        .arg(&old)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let after = store_bytes(&old);
    for secret in raw {
        assert!(!after.contains(secret), "after secrets mask: {secret} kept");
    }
    {
        let c = rusqlite::Connection::open(&old).unwrap();
        let ids: Vec<String> = c
            .prepare("SELECT id FROM sessions UNION ALL SELECT DISTINCT session_id FROM feed")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            ids.len() == 2 && ids[0] == ids[1] && ids[0].starts_with("masked-"),
            "{ids:?}"
        );
    }
    for (place, text) in [
        ("import --json", &printed),
        ("the store", &store_bytes(&db)),
    ] {
        for secret in raw {
            assert!(!text.contains(secret), "{place}: {secret} shown");
        }
    }
    let c = rusqlite::Connection::open(&db).unwrap();
    let one = |sql: &str| -> String { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    // The id replaced whole, the same way in every table.
    let id = one("SELECT id FROM sessions");
    assert!(id.starts_with("masked-"), "{id}");
    assert_eq!(one("SELECT DISTINCT session_id FROM feed"), id);
    assert_eq!(one("SELECT session_id FROM native_files"), id);
    assert_eq!(one("SELECT DISTINCT session_id FROM usage_calls"), id);
    // Names and paths masked as text.
    for col in ["project", "git_branch", "model"] {
        let v = one(&format!("SELECT {col} FROM sessions"));
        assert!(v.contains("[REDACTED:"), "{col}: {v}");
    }
    assert!(one("SELECT tool FROM session_tools").contains("[REDACTED:"));
    // One key per store: the fingerprints `import --json` prints are the
    // store's (each secret counted in `secrets_found`), and the same on
    // every run.
    let fps = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .split("[REDACTED:")
            .skip(1)
            .filter_map(|x| x.split(']').next())
            .map(str::to_owned)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let stored: Vec<String> = {
        let mut st = c
            .prepare("SELECT DISTINCT rule || ':' || fingerprint FROM secrets_found")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let shown = fps(&printed);
    assert!(!shown.is_empty(), "{printed}");
    for f in &shown {
        assert!(stored.contains(f), "{f} not among {stored:?}");
    }
    std::fs::write(
        project.join(format!("{sid}.jsonl")),
        std::fs::read_to_string(project.join(format!("{sid}.jsonl"))).unwrap() + "\n",
    )
    .unwrap();
    let again = import();
    assert_eq!(fps(&again), shown, "{again}");
    // Incremental still: the mark is found by its masked path.
    assert!(
        again.contains("\"grown\"") || again.contains("\"unchanged\""),
        "{again}"
    );
    assert_eq!(
        c.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get::<_, i64>(0))
            .unwrap(),
        1
    );
}
