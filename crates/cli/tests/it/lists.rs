//! `agentshape serve`'s lists (issue 9, item 3): the overview, sessions,
//! events and memories pages and their JSON, on a store filled by real
//! `run --replay` of the bundled examples; every filter's answer checked
//! against SQL on the same file; bad parameters are 4xx, never 5xx.

use std::path::Path;

use serde_json::Value;

use crate::support::served::{Server, serve};
use crate::support::{example, sql};

/// A store holding one session per replayable example (and the healthy
/// one twice, so its memories are reinforced), written by `run`.
fn filled_store(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("lists.db");
    let examples = [
        "healthy-structured",
        "fenced-only",
        "legacy-markers",
        "malformed-lines",
        "max-turns",
        "rate-limit-429",
        "healthy-structured",
    ];
    for (i, name) in examples.iter().enumerate() {
        crate::support::agentshape()
            .args(["run", "--profile", "claude-ops", "--replay"])
            .arg(example(&format!("{name}.ndjson")))
            .args(["--session-id", &format!("ex{i}-{name}"), "--store"])
            .arg(&db)
            .arg("--log-dir")
            .arg(dir.join("logs"))
            .output()
            .unwrap();
    }
    db
}

struct Client {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    base: String,
}

impl Client {
    fn get(&self, path: &str) -> (u16, String, String) {
        self.rt.block_on(async {
            let r = self
                .http
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let ty = r
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            (status, ty, r.text().await.unwrap())
        })
    }

    fn json(&self, path: &str) -> Value {
        let (status, _, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    fn page(&self, path: &str) -> String {
        let (status, ty, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        assert!(ty.starts_with("text/html"), "{path}: {ty}");
        body
    }

    fn ids(&self, path: &str) -> Vec<String> {
        self.json(path)["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn client(server: &Server) -> Client {
    Client {
        rt: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        http: reqwest::Client::new(),
        base: server.base.clone(),
    }
}

fn column(db: &Path, q: &str) -> Vec<String> {
    sql(db, q).into_iter().map(|r| r[0].clone()).collect()
}

fn enc(v: &str) -> String {
    v.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn every_filter_of_the_api_and_the_page_matches_sql_and_pages_keep_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_store(dir.path());
    let server = serve(&db, &[]);
    let c = client(&server);
    let order = "ORDER BY started_at DESC, id DESC";
    let all = column(&db, &format!("SELECT id FROM sessions {order}"));
    assert_eq!(all.len(), 7);
    assert_eq!(c.ids("/api/sessions"), all);
    // Each filter alone, for each value stored, against SQL.
    for (param, col) in [
        ("status", "status"),
        ("tier", "tier"),
        ("profile", "profile"),
        ("error_category", "error_category"),
        ("method", "extraction_method"),
    ] {
        let values = column(
            &db,
            &format!("SELECT DISTINCT {col} FROM sessions WHERE {col} IS NOT NULL"),
        );
        assert!(!values.is_empty(), "{col}");
        for v in values {
            let want = column(
                &db,
                &format!(
                    "SELECT id FROM sessions WHERE {col} = '{}' {order}",
                    v.replace('\'', "''")
                ),
            );
            let path = format!("/api/sessions?{param}={}", enc(&v));
            assert_eq!(c.ids(&path), want, "{path}");
            // The page lists the same rows, each linked, its badge a `status`.
            let html = c.page(&format!("/sessions?{param}={}", enc(&v)));
            for id in &want {
                assert!(html.contains(&format!(r#"data-session-id="{id}""#)), "{id}");
                assert!(html.contains(&format!(r#"href="/sessions/{id}""#)), "{id}");
            }
            assert_eq!(html.matches("data-session-id=").count(), want.len());
        }
    }
    // Text search: a word of one summary, in another case; and an id part.
    let summary = column(
        &db,
        "SELECT summary FROM sessions WHERE summary IS NOT NULL",
    )
    .into_iter()
    .next()
    .unwrap();
    let word = summary
        .split_whitespace()
        .find(|w| w.len() >= 4 && w.chars().all(char::is_alphanumeric))
        .unwrap()
        .to_uppercase();
    let want = column(
        &db,
        &format!(
            "SELECT id FROM sessions WHERE summary LIKE '%{word}%' OR id LIKE '%{word}%'
             OR error LIKE '%{word}%' OR agent LIKE '%{word}%' OR model LIKE '%{word}%' {order}"
        ),
    );
    assert!(!want.is_empty());
    assert_eq!(c.ids(&format!("/api/sessions?q={}", enc(&word))), want);
    assert_eq!(c.ids("/api/sessions?q=rate-limit"), ["ex5-rate-limit-429"]);
    assert_eq!(
        c.ids("/api/sessions?q=no%20such%20words"),
        Vec::<String>::new()
    );
    // Combined: SQL again.
    let want = column(
        &db,
        &format!("SELECT id FROM sessions WHERE status = 'completed' AND tier = 1 {order}"),
    );
    assert_eq!(c.ids("/api/sessions?status=completed&tier=1"), want);
    // Empty form fields are no filter.
    assert_eq!(
        c.ids("/api/sessions?status=&tier=&profile=&error_category=&method=&q="),
        all
    );
    // Pages of 2 with a filter: `next` walks the filtered list once.
    let filtered = column(
        &db,
        &format!("SELECT id FROM sessions WHERE tier = 1 {order}"),
    );
    let mut walked = Vec::new();
    let mut path = "/api/sessions?tier=1&limit=2".to_owned();
    loop {
        let page = c.json(&path);
        walked.extend(
            page["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned()),
        );
        match page["next"].as_str() {
            Some(next) => path = format!("/api/sessions?tier=1&limit=2&before={}", enc(next)),
            None => break,
        }
    }
    assert_eq!(walked, filtered);
    // The HTML pager keeps the filters in "Older" and "Newest".
    let html = c.page("/sessions?tier=1");
    assert!(html.contains(r#"id="filters""#) && html.contains(r#"action="/sessions""#));
    for name in ["status", "tier", "profile", "error_category", "method", "q"] {
        assert!(html.contains(&format!(r#"name="{name}""#)), "{name}");
    }
    assert!(
        html.contains(r#"id="newest" href="/sessions?tier=1""#),
        "{html}"
    );
    assert!(
        html.contains(r#"<div class="table-scroll"><table"#) && html.contains(r#"id="sessions""#)
    );
    assert!(html.contains(r#"src="/assets/lists.js""#));
    let old = c.page("/sessions?before=nope");
    assert!(old.contains("No older sessions."));
    assert!(!old.contains("id=\"older\""));
}

#[test]
fn overview_events_and_memories_pages_and_their_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_store(dir.path());
    let server = serve(&db, &[]);
    let c = client(&server);

    let o = c.json("/api/overview");
    let by_status = o["sessions_by_status"].as_array().unwrap();
    let total: i64 = by_status.iter().map(|p| p[1].as_i64().unwrap()).sum();
    assert_eq!(total, 7, "{o}");
    let day_sessions: i64 = o["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["sessions"].as_i64().unwrap())
        .sum();
    // The replays start now, so all fall in the 30-day window.
    assert_eq!(day_sessions, 7, "{o}");
    assert_eq!(o["running"], 0);
    let html = c.page("/");
    let completed = sql(
        &db,
        "SELECT COUNT(*) FROM sessions WHERE status = 'completed'",
    );
    assert!(
        html.contains(&format!(
            r#"data-status="completed" data-count="{}""#,
            completed[0][0]
        )),
        "{html}"
    );
    assert!(html.contains(r#"id="by-level""#));
    assert!(html.contains(r#"id="escalations""#));
    let chart = html.split(r#"id="cost-chart""#).nth(1).unwrap();
    assert!(chart.contains("<svg"), "{chart}");
    assert!(chart.contains("<title>"));

    // Events: newest first, by level, and `after`.
    let events = c.json("/api/events")["events"].as_array().unwrap().clone();
    let n = column(&db, "SELECT COUNT(*) FROM events")[0]
        .parse::<usize>()
        .unwrap();
    assert_eq!(events.len(), n);
    assert!(n >= 2, "the examples report events");
    let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    let after = c.json(&format!("/api/events?after={}", ids[1]));
    assert_eq!(after["events"].as_array().unwrap().len(), 1);
    assert_eq!(after["events"][0]["id"], ids[0]);
    let html = c.page("/events");
    assert_eq!(html.matches("<tr data-level=").count(), n);
    let critical = column(&db, "SELECT COUNT(*) FROM events WHERE level = 'critical'")[0]
        .parse::<usize>()
        .unwrap();
    let html = c.page("/events?level=critical");
    assert_eq!(
        html.matches(r#"<tr data-level="critical""#).count(),
        critical
    );
    assert_eq!(html.matches("<tr data-level=").count(), critical);

    // Memories: one row each, a meter, how stale.
    let html = c.page("/memories");
    let m = column(&db, "SELECT COUNT(*) FROM memories")[0]
        .parse::<usize>()
        .unwrap();
    assert!(m >= 1);
    assert_eq!(html.matches("<tr data-memory-id=").count(), m);
    assert!(html.contains("<meter"));
    assert!(html.contains("just now") || html.contains("minute"));

    let (status, ty, js) = c.get("/assets/lists.js");
    assert_eq!(status, 200);
    assert!(ty.starts_with("text/javascript"));
    assert!(js.contains("follow("));
}

#[test]
fn bad_parameters_are_400_never_500_and_empty_stores_have_empty_states() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("empty.db"), &[]);
    let c = client(&server);
    let long = "x".repeat(300);
    for path in [
        "/api/sessions?tier=x".to_owned(),
        "/api/sessions?tier=-1".to_owned(),
        "/api/sessions?status=a%20b".to_owned(),
        "/api/sessions?method=%3Cscript%3E".to_owned(),
        format!("/api/sessions?q={long}"),
        "/api/sessions?limit=-1".to_owned(),
        "/api/events?level=Critical".to_owned(),
        "/api/events?after=x".to_owned(),
        "/api/events?after=-3".to_owned(),
        "/sessions?tier=x".to_owned(),
        "/sessions?error_category=a%0Ab".to_owned(),
        "/events?level=loud".to_owned(),
    ] {
        let (status, ty, body) = c.get(&path);
        assert_eq!(status, 400, "{path}: {body}");
        if path.starts_with("/api/") {
            assert!(ty.starts_with("application/json"), "{path}: {ty}");
        } else {
            assert!(body.contains(r#"id="error-message""#), "{path}: {body}");
        }
    }
    // Odd but valid: answers, empty.
    assert_eq!(
        c.ids("/api/sessions?q=%25%25&before=nope&status=lost"),
        Vec::<String>::new()
    );
    for (path, empty) in [
        ("/", "No sessions yet."),
        ("/", "No sessions in the last 30 days."),
        ("/", "No escalations yet."),
        ("/sessions", "No sessions match."),
        ("/events", "No events yet."),
        ("/memories", "No memories yet."),
    ] {
        assert!(c.page(path).contains(empty), "{path}: {empty}");
    }
    let o = c.json("/api/overview");
    assert_eq!(o["days"], serde_json::json!([]));
    assert_eq!(o["sessions_by_status"], serde_json::json!([]));
}
