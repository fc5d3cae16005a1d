//! Issue 28 item 3 through the binary: `agentshape import` of the agents'
//! own session files (the standard folders under a temporary
//! `CLAUDE_CONFIG_DIR`, `CODEX_HOME` and `HOME`, the fixtures in
//! `tests/fixtures/native/`, and the real files of
//! `../shared/corpus/native` copied at test time), incrementally; and
//! `serve --watch` streaming a line appended to a watched file to an SSE
//! client.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::served::serve;
use crate::support::{agentshape, assert_exit, json_lines, repo_root};

/// A hang guard for every command here (never a speed assertion).
const GUARD: Duration = Duration::from_secs(120);

const MAIN: &str = "5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70";
const CODEX: &str = "0199aa00-1111-7222-8333-444455556666";
const GEMINI: &str = "7c1d2e3f-aaaa-4bbb-8ccc-1234567890ab";

fn fixtures() -> PathBuf {
    repo_root().join("crates/cli/tests/fixtures/native")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A user's machine: the fixtures in the agents' standard folders.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let f = fixtures();
        copy_tree(&f.join("claude"), &dir.path().join("claude-config"));
        copy_tree(&f.join("codex"), &dir.path().join("codex-home"));
        copy_tree(&f.join("gemini"), &dir.path().join("home/.gemini"));
        Home { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("agentshape.db")
    }

    fn main_file(&self) -> PathBuf {
        self.dir
            .path()
            .join(format!("claude-config/projects/-srv-app/{MAIN}.jsonl"))
    }

    /// `agentshape import ARGS` with this home's variables, into its store.
    fn import(&self, args: &[&str]) -> Output {
        self.import_to(self.db().to_str().unwrap(), args)
    }

    /// `agentshape import ARGS --store STORE` with this home's variables.
    fn import_to(&self, store: &str, args: &[&str]) -> Output {
        agentshape()
            .arg("import")
            .args(args)
            .args(["--store", store])
            .env("HOME", self.dir.path().join("home"))
            .env("CLAUDE_CONFIG_DIR", self.dir.path().join("claude-config"))
            .env("CODEX_HOME", self.dir.path().join("codex-home"))
            .env_remove("AGENTSHAPE_STORE")
            .env_remove("AGENTSHAPE_PRICES")
            .env_remove("XDG_CONFIG_HOME")
            .timeout(GUARD)
            .output()
            .unwrap()
    }

    fn import_json(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.import(&all);
        assert_exit(&out, 0);
        json_lines(&out.stdout)
    }

    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        rows(&self.db(), sql)
    }
}

fn rows(db: &Path, sql: &str) -> Vec<Vec<String>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut stmt = c.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..n)
            .map(|i| match r.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Null => "NULL".to_owned(),
                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                rusqlite::types::ValueRef::Real(v) => format!("{v:.6}"),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Blob(_) => "BLOB".to_owned(),
            })
            .collect())
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn change_of(lines: &[Value], suffix: &str) -> String {
    let line = lines
        .iter()
        .find(|l| l["path"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no line for {suffix}: {lines:?}"));
    line["change"].as_str().unwrap().to_owned()
}

fn feed_count(home: &Home, id: &str) -> usize {
    home.rows(&format!(
        "SELECT COUNT(*) FROM feed WHERE kind = 'event' AND session_id = '{id}'"
    ))[0][0]
        .parse()
        .unwrap()
}

#[test]
fn import_of_the_standard_folders_stores_every_agent_with_children_tools_and_feed() {
    let home = Home::new();
    let lines = home.import_json(&[]);
    assert_eq!(lines.len(), 4, "{lines:?}");
    for l in &lines {
        assert_eq!(l["change"], "new", "{l}");
        assert!(l["lines_added"].as_u64().unwrap() > 0, "{l}");
    }
    let by_agent = |agent: &str| lines.iter().find(|l| l["agent"] == agent).unwrap().clone();
    assert_eq!(by_agent("codex")["format"], "codex-rollout");
    assert_eq!(by_agent("gemini-cli")["format"], "gemini-chat");
    assert_eq!(by_agent("gemini-cli")["session_id"], GEMINI);

    // The main session: what its lines say, tokens counted once per message.
    assert_eq!(
        home.rows(&format!(
            "SELECT status, agent, agent_version, model, project, git_branch, input_tokens, \
             output_tokens, cache_read_tokens, cache_write_tokens, cost_estimated, cost_usd > 0, \
             num_turns, started_at, ended_at, extraction_method, summary, source_path LIKE '%{MAIN}.jsonl' \
             FROM sessions WHERE id = '{MAIN}'"
        )),
        vec![vec![
            "completed",
            "claude-code",
            "2.1.231",
            "claude-sonnet-4-5",
            "/srv/app",
            "fix-deploy",
            "36",
            "125",
            "9000",
            "600",
            "1",
            "1",
            "1",
            "2026-01-05T09:00:00.000Z",
            "2026-01-05T09:00:12.000Z",
            "fenced",
            "Fix the deploy script and tell me how many files changed",
            "1"
        ]]
    );
    // The sub-agent's own file is a child session of it.
    assert_eq!(
        home.rows("SELECT id, parent_id, model FROM sessions WHERE id = 'agent-f00dcafe01'"),
        vec![vec!["agent-f00dcafe01", MAIN, "claude-haiku-4-5"]]
    );
    assert_eq!(
        home.rows(&format!(
            "SELECT tool, calls, errors FROM session_tools WHERE session_id = '{MAIN}' ORDER BY tool"
        )),
        vec![vec!["Bash", "1", "1"], vec!["Task", "1", "0"]]
    );
    assert_eq!(
        home.rows(&format!(
            "SELECT agent, model, project, git_branch, agent_version, input_tokens, cache_read_tokens \
             FROM sessions WHERE id = '{CODEX}'"
        )),
        vec![vec!["codex", "gpt-5-codex", "/home/dev/api", "main", "0.104.0", "1200", "1000"]]
    );
    // Feed rows carry the line, and the line's own time.
    let feed = home.rows(&format!(
        "SELECT body, created_at FROM feed WHERE kind = 'event' AND session_id = '{MAIN}' ORDER BY id"
    ));
    let bodies: Vec<Value> = feed
        .iter()
        .map(|r| serde_json::from_str(&r[0]).unwrap())
        .collect();
    assert!(
        bodies
            .iter()
            .all(|b| b["kind"] == "event" && b["line"].as_u64().is_some())
    );
    let compaction = bodies
        .iter()
        .position(|b| b["event"]["type"] == "compaction")
        .expect("a compaction row");
    assert_eq!(bodies[compaction]["line"], 9);
    assert_eq!(feed[compaction][1], "2026-01-05T09:00:10.000Z");
    let tool_error = bodies
        .iter()
        .find(|b| b["event"]["type"] == "tool_result")
        .unwrap();
    assert_eq!(tool_error["event"]["is_error"], true);
    assert!(
        tool_error["event"]["content"]
            .as_str()
            .unwrap()
            .contains("missing DEPLOY_TARGET"),
        "tool results are kept: {tool_error}"
    );
    // The invented line type did not stop the lines after it.
    assert!(bodies.iter().any(|b| b["line"] == 13));
}

#[test]
fn reimport_adds_nothing_and_an_append_adds_only_the_new_lines() {
    let home = Home::new();
    home.import_json(&[]);
    let before = home.rows("SELECT COUNT(*) FROM feed")[0][0].clone();
    let sessions = home.rows("SELECT COUNT(*) FROM sessions")[0][0].clone();
    let again = home.import_json(&[]);
    assert!(
        again.iter().all(|l| l["change"] == "unchanged"),
        "{again:?}"
    );
    assert_eq!(home.rows("SELECT COUNT(*) FROM feed")[0][0], before);
    assert_eq!(home.rows("SELECT COUNT(*) FROM sessions")[0][0], sessions);

    let main_rows = feed_count(&home, MAIN);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(home.main_file())
        .unwrap();
    writeln!(
        f,
        r#"{{"parentUuid":"a4","isSidechain":false,"userType":"external","cwd":"/srv/app","sessionId":"{MAIN}","version":"2.1.231","gitBranch":"fix-deploy","type":"user","message":{{"role":"user","content":"and the changelog?"}},"uuid":"u5","timestamp":"2026-01-05T09:01:00.000Z"}}"#
    )
    .unwrap();
    drop(f);
    let grown = home.import_json(&[]);
    assert_eq!(change_of(&grown, &format!("{MAIN}.jsonl")), "grown");
    let line = grown
        .iter()
        .find(|l| l["change"] == "grown")
        .unwrap()
        .clone();
    assert_eq!(line["lines_added"], 1, "{line}");
    assert_eq!(
        grown.iter().filter(|l| l["change"] == "unchanged").count(),
        3
    );
    assert_eq!(feed_count(&home, MAIN), main_rows + 1);
    let last = home.rows(&format!(
        "SELECT body FROM feed WHERE session_id = '{MAIN}' ORDER BY id DESC LIMIT 1"
    ));
    let body: Value = serde_json::from_str(&last[0][0]).unwrap();
    assert_eq!(body["line"], 14);
    assert_eq!(body["event"]["text"], "and the changelog?");
    assert_eq!(
        home.rows(&format!(
            "SELECT num_turns, ended_at FROM sessions WHERE id = '{MAIN}'"
        )),
        vec![vec!["2", "2026-01-05T09:01:00.000Z"]]
    );
}

#[test]
fn a_truncated_or_replaced_file_is_read_again_whole_once() {
    let home = Home::new();
    home.import_json(&[]);
    let path = home.main_file();
    let text = std::fs::read_to_string(&path).unwrap();
    let first3: String = text.split_inclusive('\n').take(3).collect();
    std::fs::write(&path, &first3).unwrap();
    let lines = home.import_json(&[]);
    assert_eq!(change_of(&lines, &format!("{MAIN}.jsonl")), "replaced");
    let lines_of = |home: &Home| -> Vec<u64> {
        home.rows(&format!(
            "SELECT body FROM feed WHERE kind = 'event' AND session_id = '{MAIN}'"
        ))
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(&r[0]).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect()
    };
    let after = lines_of(&home);
    assert!(
        !after.is_empty() && after.iter().all(|l| *l <= 3),
        "{after:?}"
    );
    let again = home.import_json(&[]);
    assert_eq!(change_of(&again, &format!("{MAIN}.jsonl")), "unchanged");

    // Replaced by another file (a new inode) holding the whole session.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &text).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let lines = home.import_json(&[]);
    assert_eq!(change_of(&lines, &format!("{MAIN}.jsonl")), "replaced");
    let whole = lines_of(&home);
    assert_eq!(whole.iter().max(), Some(&13));
    let mut sorted = whole.clone();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        whole.len() - count_repeats(&whole),
        "no line twice"
    );
    assert_eq!(
        home.rows(&format!(
            "SELECT output_tokens FROM sessions WHERE id = '{MAIN}'"
        )),
        vec![vec!["125"]]
    );
}

/// Rows of one line come together (one line gives several events): how
/// many entries repeat the one before.
fn count_repeats(lines: &[u64]) -> usize {
    lines.windows(2).filter(|w| w[0] == w[1]).count()
}

#[test]
fn a_profile_validates_the_final_message_and_its_verdict_is_stored() {
    let home = Home::new();
    let profile = fixtures().join("verdict.toml");
    let lines = home.import_json(&["--profile", profile.to_str().unwrap()]);
    let main = lines.iter().find(|l| l["session_id"] == MAIN).unwrap();
    assert_eq!(main["valid"], true, "{main}");
    let codex = lines.iter().find(|l| l["session_id"] == CODEX).unwrap();
    assert_eq!(codex["valid"], false, "{codex}");
    let row = home.rows(&format!(
        "SELECT extraction_method, output, verdict, profile FROM sessions WHERE id = '{MAIN}'"
    ));
    assert_eq!(row[0][0], "fenced");
    assert_eq!(
        serde_json::from_str::<Value>(&row[0][1]).unwrap(),
        serde_json::json!({"status": "done", "files": 3})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&row[0][2]).unwrap()["valid"],
        true
    );
    assert!(row[0][3].ends_with("verdict.toml"), "{row:?}");

    // Without a profile the message is still extracted, with no verdict.
    let plain = Home::new();
    plain.import_json(&[]);
    assert_eq!(
        plain.rows(&format!(
            "SELECT extraction_method, verdict FROM sessions WHERE id = '{MAIN}'"
        )),
        vec![vec!["fenced", "NULL"]]
    );
}

#[test]
fn agent_and_since_filter_and_human_output_summarises() {
    let home = Home::new();
    let lines = home.import_json(&["--agent", "codex"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["session_id"], CODEX);
    assert_eq!(home.rows("SELECT COUNT(*) FROM sessions")[0][0], "1");
    let none = home.import_json(&["--since", "2999-01-01"]);
    assert!(none.is_empty(), "{none:?}");
    let out = home.import(&["--agent", "claude"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2 files: 2 new, 0 grown, 0 replaced, 0 unchanged, 0 skipped"),
        "{text}"
    );
}

#[test]
fn missing_folders_are_said_once_a_missing_path_is_66_and_bad_options_64() {
    let empty = tempfile::tempdir().unwrap();
    let out = agentshape()
        .args(["import", "--store"])
        .arg(empty.path().join("a.db"))
        .env("HOME", empty.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("(skipped)").count(), 3, "{err}");
    assert!(err.contains(".claude/projects"), "{err}");

    let home = Home::new();
    let out = home.import(&["/definitely/not/here"]);
    assert_exit(&out, 66);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/definitely/not/here"));
    assert_exit(&home.import(&["--agent", "copilot"]), 64);
    assert_exit(&home.import(&["--since", "last tuesday"]), 64);
    assert!(!home.db().exists(), "nothing written on a refused command");

    let help = agentshape()
        .args(["import", "--help"])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&help, 0);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.trim_end().ends_with("~/.claude/projects/-srv-app"),
        "{help}"
    );
}

/// The real files of `../shared/corpus/native`, wherever the shared folder
/// is for this checkout; `None` (the test says it skips) when absent.
fn corpus() -> Option<PathBuf> {
    [
        repo_root().join("../shared/corpus/native"),
        repo_root().join("../../shared/corpus/native"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

#[test]
fn the_real_corpus_imports_without_error_and_again_unchanged() {
    let Some(corpus) = corpus() else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&corpus, &dir.path().join("tree"));
    let db = dir.path().join("c.db");
    let run = || {
        let out = agentshape()
            .args(["import", "--json", "--store"])
            .arg(&db)
            .arg(dir.path().join("tree"))
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        json_lines(&out.stdout)
    };
    let first = run();
    let sessions: Vec<&Value> = first.iter().filter(|l| l["change"] == "new").collect();
    assert!(sessions.len() >= 29, "{first:?}");
    for agent in ["claude-code", "codex", "gemini-cli"] {
        assert!(sessions.iter().any(|l| l["agent"] == agent), "{agent}");
    }
    assert!(first.iter().all(|l| l.get("error").is_none()), "{first:?}");
    let again = run();
    assert!(
        again
            .iter()
            .all(|l| l["change"] == "unchanged" || l["change"] == "skipped"),
        "{again:?}"
    );
    // One session per file (plus inline sub-agents, which name their parent's file).
    assert_eq!(
        rows(&db, "SELECT COUNT(DISTINCT source_path) FROM sessions")[0][0],
        sessions.len().to_string()
    );
}

#[test]
fn import_into_postgres_is_incremental_too() {
    let url = agentshape_testkit::pg::fresh_db();
    let home = Home::new();
    let run = || {
        let out = agentshape()
            .args(["import", "--json", "--store", &url])
            .arg(home.dir.path().join("claude-config/projects"))
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        json_lines(&out.stdout)
    };
    let first = run();
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|l| l["change"] == "new"));
    assert!(run().iter().all(|l| l["change"] == "unchanged"));
    let out = agentshape()
        .args(["sessions", "--json", "--store", &url])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("agent-f00dcafe01") && text.contains(MAIN),
        "{text}"
    );
}

#[test]
fn store_copy_takes_the_import_marks_so_importing_into_the_copy_adds_nothing() {
    let home = Home::new();
    home.import_json(&[]);
    let url = agentshape_testkit::pg::fresh_db();
    let out = agentshape()
        .args(["store", "copy", "--json", "--from"])
        .arg(home.db())
        .args(["--to", &url])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let copied = &json_lines(&out.stdout)[0]["copied"];
    assert_eq!(copied["native_files"], 4, "{copied}");
    assert_eq!(copied["session_tools"], 4, "{copied}");
    let out = home.import_to(&url, &["--json"]);
    assert_exit(&out, 0);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 4);
    assert!(
        lines.iter().all(|l| l["change"] == "unchanged"),
        "{lines:?}"
    );
}

#[test]
fn serve_watch_streams_a_line_appended_to_a_watched_file() {
    let home = Home::new();
    let tree = home.dir.path().join("claude-config/projects");
    let server = serve(&home.db(), &["--watch", tree.to_str().unwrap()]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    // The first pass imports the tree; the session is there before we append.
    crate::support::wait_until("the first import", GUARD, || {
        home.db().exists() && rows(&home.db(), "SELECT COUNT(*) FROM native_files")[0][0] == "2"
    });
    let after = rows(&home.db(), "SELECT COALESCE(MAX(id), 0) FROM feed")[0][0].clone();
    let mut feed = rt
        .block_on(
            client
                .get(server.url(&format!("/api/feed?after={after}")))
                .send(),
        )
        .unwrap();
    assert_eq!(feed.status(), 200);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(home.main_file())
        .unwrap();
    writeln!(
        f,
        r#"{{"parentUuid":"a4","isSidechain":false,"userType":"external","cwd":"/srv/app","sessionId":"{MAIN}","version":"2.1.231","gitBranch":"fix-deploy","type":"user","message":{{"role":"user","content":"watched-line-7731"}},"uuid":"u6","timestamp":"2026-01-05T09:02:00.000Z"}}"#
    )
    .unwrap();
    drop(f);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    while !seen.contains("watched-line-7731") {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "the appended line did not arrive: {seen}");
        match rt.block_on(async { tokio::time::timeout(left, feed.chunk()).await }) {
            Ok(Ok(Some(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            other => panic!("feed ended: {other:?}: {seen}"),
        }
    }
    assert!(seen.contains(MAIN), "{seen}");
    // A new session file appears in the list while served.
    let other = tree.join("-srv-app/6a6a6a6a-0000-4000-8000-000000000001.jsonl");
    let text = std::fs::read_to_string(home.main_file())
        .unwrap()
        .replace(MAIN, "6a6a6a6a-0000-4000-8000-000000000001");
    std::fs::write(&other, text).unwrap();
    crate::support::wait_until("the new session", Duration::from_secs(10), || {
        rows(
            &home.db(),
            "SELECT COUNT(*) FROM sessions WHERE id = '6a6a6a6a-0000-4000-8000-000000000001'",
        )[0][0]
            == "1"
    });
}

#[test]
fn watch_prints_a_line_per_change_and_stops_on_sigterm() {
    use std::io::BufRead;
    let home = Home::new();
    let tree = home.dir.path().join("claude-config/projects");
    let mut child = crate::support::agentshape_std()
        .args(["watch", "--json", "--store"])
        .arg(home.db())
        .arg(&tree)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let next = || -> Value {
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(20)).unwrap()).unwrap()
    };
    let first = [next(), next()];
    assert!(first.iter().all(|l| l["change"] == "new"), "{first:?}");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(home.main_file())
        .unwrap();
    writeln!(
        f,
        r#"{{"parentUuid":"a4","isSidechain":false,"userType":"external","cwd":"/srv/app","sessionId":"{MAIN}","version":"2.1.231","gitBranch":"fix-deploy","type":"user","message":{{"role":"user","content":"one more"}},"uuid":"u7","timestamp":"2026-01-05T09:03:00.000Z"}}"#
    )
    .unwrap();
    drop(f);
    let grown = next();
    assert_eq!(grown["change"], "grown", "{grown}");
    assert_eq!(grown["lines_added"], 1, "{grown}");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < GUARD, "watch did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}
