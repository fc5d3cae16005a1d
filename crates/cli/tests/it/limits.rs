//! Issue 40 §4 and §5 through the binary: inputs at or past a limit are
//! said, in one line naming the input and the limit, and what is printed
//! stays one line per row.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::{agentshape, assert_exit};

/// A hang guard, never a speed assertion.
const GUARD: Duration = Duration::from_secs(120);

/// One Claude Code session line (`kind` user or assistant).
fn line(session: &str, uuid: &str, model: &str, input_tokens: u64) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"{session}","version":"2.1.231","type":"assistant","message":{{"id":"m-{uuid}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"hi"}}],"usage":{{"input_tokens":{input_tokens},"output_tokens":1}}}},"requestId":"r-{uuid}","uuid":"{uuid}","timestamp":"2026-01-01T00:00:02.000Z"}}"#
    )
}

fn user(session: &str) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"{session}","version":"2.1.231","type":"user","message":{{"role":"user","content":"go"}},"uuid":"u0","timestamp":"2026-01-01T00:00:01.000Z"}}"#
    )
}

fn import(db: &Path, paths: &[&Path], json: bool) -> std::process::Output {
    let mut cmd = agentshape();
    cmd.arg("import");
    for p in paths {
        cmd.arg(p);
    }
    if json {
        cmd.arg("--json");
    }
    cmd.arg("--store")
        .arg(db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap()
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// §5: a device or a FIFO named on the command line is said skipped, and
/// a FIFO is never opened (it would wait for a writer).
#[test]
fn a_device_or_fifo_named_is_skipped_not_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let fifo = dir.path().join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let zero = Path::new("/dev/zero");
    let out = import(&db, &[zero, &fifo], false);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("/dev/zero: skipped: not a regular file"),
        "{text}"
    );
    assert!(
        text.contains("pipe.jsonl: skipped: not a regular file"),
        "{text}"
    );
    assert!(text.contains("2 skipped"), "{text}");
    let lines = json_lines(&import(&db, &[&fifo], true));
    assert_eq!(lines[0]["change"], "skipped", "{lines:?}");
    assert_eq!(lines[0]["skipped"], "not a regular file");
}

/// §5: a file whose `sessionId` is 1 MB says which limit it broke.
#[test]
fn a_session_id_of_one_mb_is_skipped_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = dir.path().join("big-id.jsonl");
    std::fs::write(&file, format!("{}\n", user(&"s".repeat(1 << 20)))).unwrap();
    let out = import(&db, &[&file], false);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "big-id.jsonl: skipped: its first line is longer than the 262144 bytes read to \
             tell a session file (its field `sessionId` alone runs past them)"
        ),
        "{text}"
    );
    // Under the probe but over `run`'s rule: imported under a derived id,
    // said with the rule it broke.
    let file = dir.path().join("long-id.jsonl");
    std::fs::write(&file, format!("{}\n", user(&"s".repeat(200)))).unwrap();
    let out = import(&db, &[&file], false);
    assert_exit(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "long-id.jsonl: its sessionId of 200 bytes cannot name a session (it is longer \
             than 128 characters); stored as native-"
        ),
        "{err}"
    );
}

/// §5: a line over the decoder's limit (64 MiB) is counted and kept as a
/// `skipped` feed row, not dropped without a trace.
#[test]
fn a_line_over_the_limit_is_counted_and_stored_as_a_skipped_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let file = dir.path().join("long.jsonl");
    let long = format!("{{\"x\":\"{}\"}}", "z".repeat(65 << 20));
    let text = format!(
        "{}\n{long}\n{}\n",
        user("sess-long"),
        line("sess-long", "u1", "claude-sonnet-4-5", 5)
    );
    std::fs::write(&file, text).unwrap();
    drop(long);
    let lines = json_lines(&import(&db, &[&file], true));
    assert_eq!(lines[0]["lines_added"], 3, "{lines:?}");
    assert_eq!(lines[0]["lines_skipped"], 1, "{lines:?}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let body: String = c
        .query_row(
            "SELECT body FROM feed WHERE session_id = 'sess-long' AND body LIKE '%skipped%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["event"]["reason"], "too_long");
    assert_eq!(body["line"], 2);
}

/// §4: absurd usage (5e18 tokens a call) is clamped at import with a
/// warning naming the file and line, so two such sessions on one day sum
/// to what any store can hold (the store's own test reads the overview
/// of a store written before the clamp).
#[test]
fn absurd_usage_is_clamped_at_import_with_a_warning_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut files = Vec::new();
    for s in ["sess-a", "sess-b"] {
        let f = dir.path().join(format!("{s}.jsonl"));
        std::fs::write(
            &f,
            format!(
                "{}\n{}\n",
                user(s),
                line(s, "u1", "claude-sonnet-4-5", 5_000_000_000_000_000_000)
            ),
        )
        .unwrap();
        files.push(f);
    }
    let paths: Vec<&Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    let out = import(&db, &paths, false);
    assert_exit(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "agentshape: warning: {}:2: a usage count of 5000000000000000000 tokens, over the \
             1000000000000 a model call may use; counted as 1000000000000",
            std::fs::canonicalize(&files[0]).unwrap().display()
        )),
        "{err}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let total: i64 = c
        .query_row("SELECT SUM(input_tokens) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(total, 2_000_000_000_000);
}

/// §5: a model name holding a newline stays in its row of `stats --by
/// model`.
#[test]
fn a_model_name_with_a_newline_stays_in_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let f = dir.path().join("m.jsonl");
    std::fs::write(
        &f,
        format!(
            "{}\n{}\n",
            user("sess-m"),
            line("sess-m", "u1", "evil\\nmodel", 5)
        ),
    )
    .unwrap();
    assert_exit(&import(&db, &[&f], false), 0);
    let out = agentshape()
        .args(["stats", "--by", "model", "--store"])
        .arg(&db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("evil\\nmodel ")),
        "{text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("model")), "{text}");
}

/// §5: two imported ids that agree on their first 8 characters
/// (`native-4…`) are told apart in `sessions`.
#[test]
fn sessions_shows_ids_by_their_shortest_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // Files with no usable session id get `native-<hex of the path>`:
    // find two whose ids agree on 8 characters.
    let mut seen: std::collections::HashMap<String, std::path::PathBuf> =
        std::collections::HashMap::new();
    let pair = (0..100)
        .find_map(|i| {
            let f = dir.path().join(format!("f{i}.jsonl"));
            std::fs::write(&f, format!("{}\n", user("bad id"))).unwrap();
            let id = agentshape_runtime::native::import::derived_id(
                &std::fs::canonicalize(&f).unwrap().display().to_string(),
            );
            let short: String = id.chars().take(8).collect();
            seen.insert(short, f.clone()).map(|other| (other, f, id))
        })
        .unwrap();
    let (a, b, id_b) = pair;
    assert_exit(&import(&db, &[&a, &b], false), 0);
    let out = agentshape()
        .args(["sessions", "--store"])
        .arg(&db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    let shown: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  native-"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(shown.len(), 2, "{text}");
    assert_ne!(shown[0], shown[1], "{text}");
    assert!(shown.iter().all(|s| s.len() > 8), "{text}");
    assert!(shown.iter().any(|s| id_b.starts_with(s)), "{text}");
}
