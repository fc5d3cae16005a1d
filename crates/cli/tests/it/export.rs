//! Issue 41 §3 through the binary: `agentshape export html|markdown|json
//! SESSION [-o FILE] [--redact-paths]` of an imported Claude Code session
//! (the fixture of `tests/fixtures/native` with planted secrets, its
//! sub-agent file beside it), of a `run` session (which has a forensic
//! log), and of a long real file of `../shared/corpus/native` (skipped
//! with a message when absent): the session's texts and its sub-agent's
//! are in every format, and no planted secret, no store path, no forensic
//! log path, no source file path and no home folder of this machine.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::planted::{Case, GH, planted};
use crate::support::{agentshape, assert_exit, repo_root};

/// A hang guard (never a speed assertion).
const GUARD: Duration = Duration::from_secs(120);

const MAIN: &str = "5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70";
const SUB: &str = "agent-f00dcafe01";

/// A Claude Code line of the fixture's session (its `cwd`, id and version).
fn line(uuid: &str, kind: &str, message: &Value) -> String {
    json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/srv/app",
           "sessionId": MAIN, "version": "2.1.231", "gitBranch": "fix-deploy", "type": kind,
           "uuid": uuid, "timestamp": "2026-01-05T09:00:13.000Z", "message": message})
    .to_string()
}

/// A user's machine in `dir`: the fixture's session and its sub-agent
/// file under `dir/tree`, every planted context appended to the session
/// as a tool result and as a prompt, a GitHub token in the sub-agent's
/// answer; imported into `dir/a.db` with `HOME` = `dir/home`.
fn imported(dir: &Path) -> PathBuf {
    let from = repo_root().join("crates/cli/tests/fixtures/native/claude/projects/-srv-app");
    let to = dir.join("tree/-srv-app");
    std::fs::create_dir_all(to.join(format!("{MAIN}/subagents"))).unwrap();
    let mut main = std::fs::read_to_string(from.join(format!("{MAIN}.jsonl"))).unwrap();
    for (i, Case { context, .. }) in planted().iter().enumerate() {
        main.push_str(&line(
            &format!("leak-r{i}"),
            "user",
            &json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_leak{i}"), "content": context}]}),
        ));
        main.push('\n');
        main.push_str(&line(
            &format!("leak-u{i}"),
            "user",
            &json!({"role": "user", "content": format!("please use this: {context}")}),
        ));
        main.push('\n');
    }
    std::fs::write(to.join(format!("{MAIN}.jsonl")), main).unwrap();
    let sub = format!("{MAIN}/subagents/{SUB}.jsonl");
    let text = std::fs::read_to_string(from.join(&sub)).unwrap().replace(
        "Called from Makefile and ci.yml",
        &format!("Called from Makefile and ci.yml; GITHUB_TOKEN={GH}"),
    );
    std::fs::write(to.join(&sub), text).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let db = dir.join("a.db");
    let out = agentshape()
        .args(["import", "--store"])
        .arg(&db)
        .arg(dir.join("tree"))
        .env("HOME", dir.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("XDG_CONFIG_HOME")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    db
}

/// `agentshape export FORMAT SESSION --store DB EXTRA..` with `HOME` in `dir`.
fn export(dir: &Path, db: &Path, format: &str, id: &str, extra: &[&str]) -> Output {
    agentshape()
        .args(["export", format, id, "--store"])
        .arg(db)
        .args(extra)
        .env("HOME", dir.join("home"))
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// No planted secret, and none of the paths of `dir` (the store, the
/// imported files, the logs, `HOME`).
fn assert_clean(place: &str, text: &str, dir: &Path) {
    for Case { secret, .. } in planted() {
        assert!(!text.contains(&secret), "{place}: secret shown: {secret}");
    }
    assert!(!text.contains(GH), "{place}: GitHub token shown");
    let d = dir.display().to_string();
    assert!(!text.contains(&d), "{place}: a path of this machine ({d})");
    // `dir` as JSON escapes it would be the same: a temp dir has no `"` or `\`.
}

#[test]
fn an_imported_session_exports_its_texts_and_its_sub_agent_masked_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported(dir.path());
    for format in ["html", "markdown", "json"] {
        let out = export(dir.path(), &db, format, MAIN, &[]);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert_clean(format, &text, dir.path());
        assert!(text.contains("[REDACTED:"), "{format}: no mask");
        for said in [
            "Fix the deploy script and tell me how many files changed",
            "Let me look at the script.",
            "missing DEPLOY_TARGET",
            "Fixed: DEPLOY_TARGET now defaults to staging.",
            // The sub-agent's own tool result: only in its file.
            "Makefile:12",
            "please use this:",
        ] {
            assert!(text.contains(said), "{format}: missing {said}");
        }
        assert!(text.contains("/srv/app"), "{format}: the project is shown");
        assert!(
            out.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The sub-agent sits inside the HTML, before the result of the Task
    // call that spawned it; in the JSON it is a sub-agent of the session.
    let html = stdout(&export(dir.path(), &db, "html", MAIN, &[]));
    let sub = html.find(&format!("data-session-id=\"{SUB}\"")).unwrap();
    assert!(sub < html.find("Called from Makefile and ci.yml</").unwrap());
    assert!(html.contains("<details class=\"sub-agent\""));
    let doc: Value =
        serde_json::from_str(&stdout(&export(dir.path(), &db, "json", MAIN, &[]))).unwrap();
    assert_eq!(doc["session"]["id"], MAIN);
    assert!(doc["session"].get("source_path").is_none());
    assert_eq!(doc["sub_agents"][0]["session"]["id"], SUB);
    assert_eq!(doc["sub_agents"][0]["session"]["parent_id"], MAIN);
    assert!(doc["events"].as_array().unwrap().len() > 2 * planted().len());
}

#[test]
fn redact_paths_drops_the_project_path_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported(dir.path());
    for format in ["html", "markdown", "json"] {
        let out = export(dir.path(), &db, format, MAIN, &["--redact-paths"]);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert_clean(format, &text, dir.path());
        assert!(!text.contains("/srv/app"), "{format}: the project is shown");
        assert!(
            text.contains("project&gt;") || text.contains("<project>"),
            "{format}"
        );
    }
}

#[test]
fn a_run_session_exports_without_its_forensic_log_or_store_path() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run.db");
    let t = dir.path().join("t.ndjson");
    let mut lines: Vec<String> =
        std::fs::read_to_string(repo_root().join("examples/healthy-structured.ndjson"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
    let last = lines.pop().unwrap();
    for (i, Case { context, .. }) in planted().iter().enumerate() {
        lines.push(
            json!({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": format!("toolu_s{i}"), "type": "tool_result", "content": context}]}})
            .to_string(),
        );
    }
    lines.push(last);
    std::fs::write(&t, lines.join("\n") + "\n").unwrap();
    let out = agentshape()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(&t)
        .args(["--session-id", "leaky", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0..=3)), "{out:?}");
    let logs = dir.path().join("logs");
    assert!(
        std::fs::read_dir(&logs).unwrap().next().is_some(),
        "a forensic log"
    );
    for format in ["html", "markdown", "json"] {
        let out = export(dir.path(), &db, format, "leaky", &[]);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert_clean(format, &text, dir.path());
        assert!(text.contains("[REDACTED:"), "{format}: no mask");
        assert!(!text.contains("logs/leaky"), "{format}: the forensic log");
    }
}

#[test]
fn an_unknown_session_is_one_line_and_66_a_missing_store_66() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported(dir.path());
    for format in ["html", "markdown", "json"] {
        let out = export(dir.path(), &db, format, "no-such-session", &[]);
        assert_exit(&out, 66);
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err,
            format!("agentshape: export {format}: no session `no-such-session` in the store\n")
        );
    }
    let out = export(dir.path(), &dir.path().join("none.db"), "html", MAIN, &[]);
    assert_exit(&out, 66);
    assert!(!dir.path().join("none.db").exists(), "never created");
    let out = agentshape().args(["export", "html"]).output().unwrap();
    assert_exit(&out, 64);
}

#[test]
fn out_writes_the_file_atomically_and_replaces_an_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported(dir.path());
    let outdir = dir.path().join("out");
    std::fs::create_dir_all(&outdir).unwrap();
    let file = outdir.join("s.html");
    std::fs::write(&file, "old").unwrap();
    let out = export(
        dir.path(),
        &db,
        "html",
        MAIN,
        &["-o", file.to_str().unwrap()],
    );
    assert_exit(&out, 0);
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, stdout(&export(dir.path(), &db, "html", MAIN, &[])));
    // Nothing left beside it.
    let names: Vec<_> = std::fs::read_dir(&outdir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s.html")]);
    let out = export(
        dir.path(),
        &db,
        "markdown",
        MAIN,
        &[
            "--out",
            dir.path().join("missing/dir/s.md").to_str().unwrap(),
        ],
    );
    assert_exit(&out, 64);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.lines().count() == 1,
        "{err}"
    );
}

/// The real files of `../shared/corpus/native`; `None` when absent.
fn corpus() -> Option<PathBuf> {
    [
        repo_root().join("../shared/corpus/native"),
        repo_root().join("../../shared/corpus/native"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

/// A long real 1.0.51 session (1,164 lines, inline sub-agents): every
/// stored row is in the JSON, past the page's 1,000 rows, and each inline
/// sub-agent is in the HTML.
#[test]
fn a_long_real_session_exports_every_row_and_its_inline_sub_agents() {
    let Some(corpus) = corpus() else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let name = "slopus__happy-cli__400429ba-c1e1-4ef5-a7ec-fe40608df53b.jsonl";
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree/-p");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::copy(corpus.join("claude").join(name), tree.join(name)).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let db = dir.path().join("c.db");
    let out = agentshape()
        .args(["import", "--store"])
        .arg(&db)
        .arg(dir.path().join("tree"))
        .env("HOME", dir.path().join("home"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let id = "400429ba-c1e1-4ef5-a7ec-fe40608df53b";
    let c = rusqlite::Connection::open(&db).unwrap();
    let rows: usize = c
        .query_row(
            "SELECT COUNT(*) FROM feed WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    let children: Vec<String> = c
        .prepare("SELECT id FROM sessions WHERE parent_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(rows > 1_000, "{rows} rows: more than one page");
    assert!(!children.is_empty());
    let doc: Value =
        serde_json::from_str(&stdout(&export(dir.path(), &db, "json", id, &[]))).unwrap();
    assert_eq!(doc["events"].as_array().unwrap().len(), rows);
    let html = stdout(&export(dir.path(), &db, "html", id, &[]));
    assert_clean("html", &html, dir.path());
    // The last words of the assistant, far past the first page.
    let last = doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|e| e["event"]["type"] == "text")
        .find_map(|e| plain_words(e["event"]["text"].as_str()?))
        .unwrap();
    assert!(html.contains(&last), "{last}");
    for child in &children {
        assert!(
            html.contains(&format!("data-session-id=\"{child}\"")),
            "{child}"
        );
    }
    let md = stdout(&export(dir.path(), &db, "markdown", id, &[]));
    assert_eq!(md.matches("Sub-agent `agent-").count(), children.len());
}

/// The first 24 characters of `text` that are letters and single spaces
/// only (drawn the same whatever the page makes of Markdown).
fn plain_words(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .windows(24)
        .find(|w| {
            w.iter().all(|c| c.is_ascii_alphabetic() || *c == ' ')
                && !w.windows(2).any(|p| p[0] == ' ' && p[1] == ' ')
                && w[0] != ' '
        })
        .map(|w| w.iter().collect())
}

#[test]
fn help_documents_the_shape_and_ends_with_examples() {
    for format in ["html", "markdown", "json"] {
        let out = agentshape()
            .args(["export", format, "--help"])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("Examples:\n  agentshape export {format} ")),
            "{text}"
        );
        // Words as clap wraps them, on one line.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("-o, --out <FILE>") && text.contains("--redact-paths"),
            "{text}"
        );
        assert!(
            text.contains("66 the store does not exist, or SESSION is not in it"),
            "{text}"
        );
    }
    let out = agentshape()
        .args(["export", "json", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(
            r#"{"session": {…}, "events": […], "sub_agents": [{"session": {…}, "events": […]}, …]}"#
        ),
        "{text}"
    );
}

/// The session page's Download link: behind `serve`'s token like every
/// route, the same file as `export html`, holding neither the token nor a
/// path of the serving machine; 404 for an unknown session.
#[test]
fn the_download_needs_the_token_and_gives_the_same_file_without_it() {
    const TOKEN: &str = "export-token-0123456789";
    let dir = tempfile::tempdir().unwrap();
    let db = imported(dir.path());
    let server = crate::support::served::serve(&db, &["--token", TOKEN]);
    let http = crate::support::served::Http::new(&server.base);
    let get = |path: &str, token: Option<&str>| {
        http.rt.block_on(async {
            let mut req = http.client.get(server.url(path));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let r = req.send().await.unwrap();
            let d = r
                .headers()
                .get("content-disposition")
                .map(|v| v.to_str().unwrap().to_owned());
            (r.status().as_u16(), d, r.text().await.unwrap())
        })
    };
    let path = format!("/sessions/{MAIN}/export.html");
    assert_eq!(get(&path, None).0, 401);
    let (status, disposition, body) = get(&path, Some(TOKEN));
    assert_eq!(status, 200);
    assert_eq!(
        disposition.as_deref(),
        Some(format!("attachment; filename=\"agentshape-{MAIN}.html\"").as_str())
    );
    assert_clean("download", &body, dir.path());
    assert!(!body.contains(TOKEN));
    assert!(body.contains("Makefile:12"));
    assert_eq!(body, stdout(&export(dir.path(), &db, "html", MAIN, &[])));
    assert_eq!(get("/sessions/nope/export.html", Some(TOKEN)).0, 404);
}
