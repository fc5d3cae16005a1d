//! Issue 11 through the binary: `--store postgres://…` (and
//! `AGENTSHAPE_STORE`) on `run`, `ingest`, `sessions`, `memories`, `ops` and
//! `serve`'s live feed, `store copy` between the backends, and an
//! unreachable server (a one-line error naming the URL, 75, no hang). The
//! server is the throwaway one of `agentshape_testkit::pg`: a machine
//! without Postgres fails these tests, naming `./scripts/setup.sh --only
//! postgres`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use agentshape_testkit::pg;
use serde_json::Value;

use crate::support::{agentshape, assert_exit, assert_exit_for, example, json_lines};

/// A hang guard for every command here (never a speed assertion).
const GUARD: Duration = Duration::from_secs(120);

fn replay(store: &str, logs: &Path, example_name: &str, id: &str) -> std::process::Output {
    agentshape()
        .args(["run", "--profile", "claude-ops", "--json", "--replay"])
        .arg(example(example_name))
        .args(["--session-id", id, "--store", store, "--log-dir"])
        .arg(logs)
        .timeout(GUARD)
        .output()
        .unwrap()
}

fn sessions_json(store: &str) -> Value {
    let out = agentshape()
        .args(["sessions", "--json", "--store", store])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    json_lines(&out.stdout).remove(0)
}

#[test]
fn run_ingest_sessions_and_memories_on_postgres() {
    let url = pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let out = replay(&url, &logs, "healthy-structured.ndjson", "pg-1");
    assert_exit(&out, 0);
    let run = &json_lines(&out.stdout)[0];
    assert_eq!(run["session"]["store"]["inserted"], true, "{run}");
    let o = sessions_json(&url);
    assert_eq!(o["sessions_by_status"]["completed"], 1, "{o}");
    assert_eq!(o["services_checked"], 12, "{o}");
    assert_eq!(o["sessions"][0]["id"], "pg-1");

    // A run that did not store, then `ingest` of its log, twice: once added.
    let out = agentshape()
        .args(["run", "--profile", "claude-ops", "--no-store", "--replay"])
        .arg(example("rate-limit-429.ndjson"))
        .args(["--session-id", "pg-2", "--log-dir"])
        .arg(&logs)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 3);
    for want in ["1 of 1 sessions added", "0 of 1 sessions added"] {
        let out = agentshape()
            .args(["ingest", "--store", &url])
            .arg(logs.join("pg-2.ndjson"))
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(want),
            "{out:?}"
        );
    }
    let o = sessions_json(&url);
    assert_eq!(o["sessions_by_status"]["error"], 1, "{o}");

    let out = agentshape()
        .args(["memories", "list", "--json", "--store", &url])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let n = json_lines(&out.stdout).len();
    assert_eq!(
        u64::try_from(n).unwrap(),
        o["active_memories"].as_u64().unwrap()
    );
    let out = agentshape()
        .args([
            "memories",
            "prune",
            "--older-than",
            "1d",
            "--json",
            "--store",
            &url,
        ])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(json_lines(&out.stdout)[0]["pruned"].is_u64());
}

#[test]
fn the_environment_gives_the_default_and_a_flag_beats_it() {
    let url = pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let out = agentshape()
        .env("AGENTSHAPE_STORE", &url)
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args(["--session-id", "from-env", "--log-dir"])
        .arg(dir.path().join("logs"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let o = sessions_json(&url);
    assert_eq!(o["sessions"][0]["id"], "from-env", "{o}");
    assert!(!dir.path().join("agentshape.db").exists());
    // `--no-store` still works when the environment names a store.
    let out = agentshape()
        .env("AGENTSHAPE_STORE", &url)
        .args(["run", "--no-store", "--profile", "claude-ops", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args(["--session-id", "not-stored", "--log-dir"])
        .arg(dir.path().join("logs"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        sessions_json(&url)["sessions"].as_array().map(Vec::len),
        Some(1)
    );
    // A flag beats the environment, even a broken one.
    let db = dir.path().join("flag.db");
    let out = agentshape()
        .env("AGENTSHAPE_STORE", "mysql://nowhere/db")
        .args(["sessions", "--json", "--store"])
        .arg(format!("sqlite:{}", db.display()))
        .output()
        .unwrap();
    assert_exit_for(&out, 66, "a missing SQLite file, not the env's URL");
    // The environment alone, broken: a usage error naming it.
    let out = agentshape()
        .env("AGENTSHAPE_STORE", "mysql://nowhere/db")
        .args(["sessions"])
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown scheme `mysql`"),
        "{out:?}"
    );
}

#[test]
fn an_unreachable_server_is_one_line_naming_the_url_exit_75_and_no_hang() {
    // Refused at once: nothing listens on port 1.
    let refused = "postgres://agent:s3cret@127.0.0.1:1/agentshape";
    // Accepts and never answers: only the connect deadline ends it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!(
        "postgresql://agent:s3cret@{}/agentshape",
        silent.local_addr().unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    for (url, says) in [
        (
            refused,
            "cannot connect to the store `postgres://agent:***@127.0.0.1:1/agentshape`",
        ),
        (silent_url.as_str(), "no answer within 500 ms"),
    ] {
        for args in [
            vec!["sessions", "--store", url],
            vec!["memories", "list", "--store", url],
            vec![
                "ingest",
                "--store",
                url,
                "examples/healthy-structured.ndjson",
            ],
        ] {
            let out = agentshape()
                .env("AGENTSHAPE_STORE_CONNECT_MS", "500")
                .args(&args)
                .current_dir(crate::support::repo_root())
                .timeout(GUARD)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_exit_for(&out, 75, format_args!("{args:?}"));
            assert!(err.contains(says), "{args:?}: {err}");
            assert!(!err.contains("s3cret"), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        }
        let out = replay(
            url,
            &dir.path().join("logs"),
            "healthy-structured.ndjson",
            "unreached",
        );
        assert_exit(&out, 75);
    }
    drop(silent);
}

#[test]
fn bad_locations_are_usage_errors_and_an_empty_database_is_missing() {
    for bad in ["mysql://h/db", "postgres://h:notaport/db", "sqlite:"] {
        let out = agentshape()
            .args(["sessions", "--store", bad])
            .output()
            .unwrap();
        assert_exit_for(&out, 64, format_args!("{bad}"));
    }
    // A database without the agentshape schema: read-only commands create nothing.
    let url = pg::fresh_db();
    let out = agentshape()
        .args(["sessions", "--store", &url])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
}

#[test]
fn store_copy_sqlite_to_postgres_and_back_idempotently() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let db = format!("sqlite:{}", dir.path().join("a.db").display());
    for (i, ex) in ["healthy-structured.ndjson", "rate-limit-429.ndjson"]
        .iter()
        .enumerate()
    {
        replay(&db, &logs, ex, &format!("s{i}"));
    }
    let url = pg::fresh_db();
    let copy = |from: &str, to: &str| {
        let out = agentshape()
            .args(["store", "copy", "--json", "--from", from, "--to", to])
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        json_lines(&out.stdout).remove(0)
    };
    let first = copy(&db, &url);
    assert_eq!(first["copied"]["sessions"], 2, "{first}");
    assert_eq!(first["copied"]["services_checked"], 12, "{first}");
    assert!(first["added"].as_u64().unwrap() > 2, "{first}");
    let again = copy(&db, &url);
    assert_eq!(again["added"], 0, "{again}");
    assert_eq!(again["copied"]["sessions_skipped"], 2, "{again}");
    let (a, b) = (sessions_json(&db), sessions_json(&url));
    for key in [
        "sessions_by_status",
        "events_by_level",
        "active_memories",
        "services_checked",
        "sessions",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // And back into a new file, human output: a line per table.
    let back = format!("sqlite:{}", dir.path().join("back.db").display());
    let out = agentshape()
        .args(["store", "copy", "--from", &url, "--to", &back])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().next().unwrap().starts_with("sessions"),
        "{text}"
    );
    assert!(
        text.contains("rows added from `postgresql://postgres@"),
        "{text}"
    );
    assert_eq!(sessions_json(&back)["sessions"], a["sessions"]);
    // Usage: a bad URL is 64; a missing source is 66; the same store twice is 64.
    for (args, code) in [
        (vec!["--from", &db, "--to", "mysql://h/db"], 64),
        (vec!["--from", "sqlite:/no/such.db", "--to", &back], 66),
        (vec!["--from", &db, "--to", &db], 64),
    ] {
        let out = agentshape()
            .args(["store", "copy"])
            .args(&args)
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit_for(&out, code, format_args!("{args:?}"));
    }
}

/// `ops --store` beats the config's `store` (which is never created).
#[test]
fn ops_takes_the_store_flag() {
    let url = pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let healthy = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
    std::fs::create_dir_all(d.join("agents")).unwrap();
    std::fs::write(
        d.join("agents/t1.ndjson"),
        healthy.replace("\"needed\":true", "\"needed\":false"),
    )
    .unwrap();
    std::fs::write(d.join("p1.md"), "tier 1 prompt").unwrap();
    let config = format!(
        "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\n\n[policy]\nmax_tier = 1\n\n\
         [[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = \"p1.md\"\n",
        crate::support::fake_agent(),
        d.join("config.db").display().to_string(),
        d.join("logs").display().to_string(),
    );
    std::fs::write(d.join("ops.toml"), config).unwrap();
    let out = agentshape()
        .args(["ops", "--once", "--json", "--store", &url, "--config"])
        .arg(d.join("ops.toml"))
        .env("FAKE_DIR", d.join("agents"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let o = sessions_json(&url);
    assert_eq!(o["sessions"].as_array().map(Vec::len), Some(1), "{o}");
    assert!(!d.join("config.db").exists());
}

/// `serve`'s live feed follows a Postgres store (Note [Feed on Postgres]):
/// a run writing to it is seen started → events → ended, in id order; the
/// pages answer too (`serve_pg` compares them with SQLite's).
#[test]
fn serve_follows_a_postgres_feed() {
    let url = pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let server = crate::support::served::serve(Path::new(&url), &[]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let mut feed = rt
        .block_on(client.get(server.url("/api/feed?after=0")).send())
        .unwrap();
    assert_eq!(feed.status(), 200);
    let mut run = crate::support::agentshape_std()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args([
            "--pace",
            "10",
            "--session-id",
            "live-pg",
            "--store",
            &url,
            "--log-dir",
        ])
        .arg(dir.path().join("logs"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = String::new();
    let mut kinds = Vec::new();
    let mut ids = Vec::new();
    rt.block_on(async {
        let deadline = tokio::time::Instant::now() + GUARD;
        while !kinds.iter().any(|k| k == "ended") {
            let chunk = tokio::time::timeout_at(deadline, feed.chunk()).await;
            let Ok(Ok(Some(bytes))) = chunk else {
                panic!("feed ended before `ended`: {kinds:?}");
            };
            buf.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        ids.push(v.trim().parse::<i64>().unwrap());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        kinds.push(v.trim().to_owned());
                    }
                }
            }
        }
    });
    assert!(run.wait().unwrap().success());
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("started"),
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|k| k == "event"), "{kinds:?}");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let page = rt
        .block_on(client.get(server.url("/api/sessions")).send())
        .unwrap();
    assert_eq!(page.status(), 200);
}
