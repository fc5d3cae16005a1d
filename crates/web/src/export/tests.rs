//! Exports of sessions in a real (in-memory) store.

use agentshape_store::{FeedEntry, Session, SqliteStore, Store};
use serde_json::{Value, json};

use super::*;
use crate::pages::session::transcript::PAGE_ROWS;

const PARENT: &str = "5e1f-parent";
const CHILD: &str = "agent-f00d";
const LOST: &str = "agent-elsewhere";
const LOG: &str = "/var/lib/agentshape/logs/5e1f-parent.ndjson";
const SOURCE: &str = "/home/ana/.claude/projects/-home-ana-src-app/5e1f-parent.jsonl";
const PROJECT: &str = "/home/ana/src/app";

fn ev(event: &Value) -> (String, Value) {
    ("event".to_owned(), json!({"kind": "event", "event": event}))
}

fn feed(store: &mut SqliteStore, id: &str, rows: &[(String, Value)]) {
    let entries: Vec<FeedEntry> = rows
        .iter()
        .map(|(kind, body)| FeedEntry {
            seq: None,
            session_id: id.to_owned(),
            kind: kind.clone(),
            body: body.to_string(),
            created_at: "2026-01-05T09:00:01.000Z".to_owned(),
        })
        .collect();
    store.append_feed(&entries).unwrap();
}

/// A parent whose `Task` call spawned `CHILD`, a child with rows of its
/// own, and a second child the parent's rows never name.
fn store() -> SqliteStore {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut p = Session::new(PARENT, "2026-01-05T09:00:00.000Z", "completed");
    p.agent = Some("claude-code".into());
    p.agent_version = Some("2.1.231".into());
    p.project = Some(PROJECT.into());
    p.raw_log_path = Some(LOG.into());
    p.source_path = Some(SOURCE.into());
    p.duration_ms = Some(2_508_000);
    p.input_tokens = 48_210;
    p.output_tokens = 9_877;
    p.cost_usd = Some(1.8432);
    p.cost_estimated = true;
    p.summary = Some("Fix the deploy script".into());
    store.write_session(&p).unwrap();
    let mut rows = vec![
        ev(&json!({"type": "user_text", "text": "Fix /home/ana/src/app/deploy.sh please"})),
        ev(&json!({"type": "text", "text": "Looking at ~ and /home/ana/.ssh/config"})),
        ev(
            &json!({"type": "tool_use", "id": "toolu_02", "name": "Task", "input": {"prompt": "find callers"}}),
        ),
        ev(&json!({"type": "sub_agent", "agent_id": "f00d", "tool_use_id": "toolu_02"})),
        ev(&json!({"type": "sub_agent", "agent_id": "f00d", "tool_use_id": "toolu_02"})),
        ev(
            &json!({"type": "tool_result", "tool_use_id": "toolu_02", "is_error": false, "content": "TASK-RESULT-TEXT"}),
        ),
    ];
    rows[1].1["model"] = json!("claude-sonnet-4-5");
    // As `run` writes its first row: it names the forensic log.
    rows.insert(
        0,
        (
            "started".to_owned(),
            json!({"tier": 1, "raw_log_path": LOG}),
        ),
    );
    feed(&mut store, PARENT, &rows);
    for (id, text) in [(CHILD, "CHILD-SAYS-MAKEFILE"), (LOST, "ORPHAN-CHILD-TEXT")] {
        let mut c = Session::new(id, "2026-01-05T09:00:06.000Z", "completed");
        c.parent_id = Some(PARENT.into());
        c.agent = Some("claude-code".into());
        c.model = Some("claude-haiku-4-5".into());
        c.project = Some(PROJECT.into());
        c.source_path = Some(format!("{SOURCE}.{id}"));
        store.write_session(&c).unwrap();
        feed(
            &mut store,
            id,
            &[
                ev(&json!({"type": "user_text", "text": "find callers"})),
                ev(&json!({"type": "text", "text": text})),
            ],
        );
    }
    store
}

fn export_of(store: &SqliteStore, format: Format, opts: &Options) -> String {
    export(store, PARENT, format, opts).unwrap().unwrap()
}

#[test]
fn html_is_one_self_contained_page_with_the_child_where_it_was_spawned() {
    let store = store();
    let html = export_of(&store, Format::Html, &Options::default());
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(
        html.contains(&format!(
            r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
            html::CSP.replace('\'', "&#39;")
        )) || html.contains(&format!(
            r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
            html::CSP
        ))
    );
    // The dashboard's stylesheet, inline; nothing to fetch, nothing to run.
    assert!(html.contains("--accent: #2f5fd0"), "app.css inline");
    let page = html.replace(r#"<link rel="icon" href="data:,">"#, "");
    for bad in [
        "<script", "<link", " src=", "<iframe", "@import", "url(", "http:", "https:",
    ] {
        assert!(!page.contains(bad), "`{bad}` in the file");
    }
    for text in [
        "Fix the deploy script",
        "claude-code 2.1.231",
        PROJECT,
        "41 m 48 s",
        "48,210 in / 9,877 out",
        "$1.8432 (estimated)",
        "claude-sonnet-4-5",
        "CHILD-SAYS-MAKEFILE",
        "TASK-RESULT-TEXT",
        "ORPHAN-CHILD-TEXT",
    ] {
        assert!(html.contains(text), "missing {text}");
    }
    // The spawned child sits before its Task call's result; the other in
    // the "Sub-agents" section after the transcript.
    let child = html.find("CHILD-SAYS-MAKEFILE").unwrap();
    let result = html.find("TASK-RESULT-TEXT").unwrap();
    let section = html.find("<h2>Sub-agents</h2>").unwrap();
    let orphan = html.find("ORPHAN-CHILD-TEXT").unwrap();
    assert!(child < result && result < section && section < orphan);
    assert_eq!(html.matches("<details class=\"sub-agent\"").count(), 2);
    // No path of the machine that stored it.
    assert!(!html.contains(LOG) && !html.contains(SOURCE));
}

#[test]
fn markdown_quotes_prompts_fences_tools_and_folds_results() {
    let store = store();
    let md = export_of(&store, Format::Markdown, &Options::default());
    assert!(md.starts_with("# Session `5e1f-parent`\n"), "{md}");
    assert!(md.contains("- **Project:** /home/ana/src/app\n"), "{md}");
    assert!(
        md.contains("**User** · 09:00:01\n\n> Fix /home/ana/src/app/deploy.sh please\n"),
        "{md}"
    );
    assert!(
        md.contains("**Assistant** (claude-sonnet-4-5) · 09:00:01\n\nLooking at ~"),
        "{md}"
    );
    assert!(
        md.contains(
            "**Tool call** `Task` · 09:00:01\n\n```json\n{\n  \"prompt\": \"find callers\"\n}\n```"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "<details><summary>Result</summary>\n\n```\nTASK-RESULT-TEXT\n```\n\n</details>"
        ),
        "{md}"
    );
    let child = md.find("### Sub-agent `agent-f00d`").unwrap();
    assert!(child < md.find("TASK-RESULT-TEXT").unwrap(), "{md}");
    assert!(
        md.contains("## Sub-agents\n\n### Sub-agent `agent-elsewhere`"),
        "{md}"
    );
    assert!(!md.contains("sub_agent") && !md.contains(LOG) && !md.contains(SOURCE));
}

#[test]
fn json_is_the_rows_bodies_and_sessions_without_machine_paths() {
    let store = store();
    let text = export_of(&store, Format::Json, &Options::default());
    assert!(text.ends_with("}\n") && text.matches('\n').count() == 1);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["session"]["id"], PARENT);
    assert_eq!(doc["session"]["project"], PROJECT);
    assert!(doc["session"].get("raw_log_path").is_none());
    assert!(doc["session"].get("source_path").is_none());
    // The rows' bodies in order (the store adds its own bookends).
    let events: Vec<&Value> = doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "event")
        .collect();
    assert_eq!(events.len(), 6);
    assert_eq!(events[0]["event"]["type"], "user_text");
    assert_eq!(events[5]["event"]["content"], "TASK-RESULT-TEXT");
    let subs = doc["sub_agents"].as_array().unwrap();
    assert_eq!(subs.len(), 2);
    for s in subs {
        assert_eq!(s["session"]["parent_id"], PARENT);
        let n = s["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "event")
            .count();
        assert_eq!(n, 2);
        assert!(s["session"].get("source_path").is_none());
    }
    assert!(!text.contains(LOG) && !text.contains(".claude/projects"));
}

#[test]
fn redact_paths_replaces_the_project_and_homes_in_every_format() {
    let store = store();
    let opts = Options {
        redact_paths: true,
        homes: vec!["/home/ci".to_owned()],
    };
    for format in [Format::Html, Format::Markdown, Format::Json] {
        let out = export_of(&store, format, &opts);
        assert!(!out.contains("/home/ana"), "{format:?}: {out}");
        assert!(out.contains("deploy.sh"), "{format:?}");
        let project = match format {
            Format::Html => "&lt;project&gt;/deploy.sh",
            _ => "<project>/deploy.sh",
        };
        assert!(out.contains(project), "{format:?}: {out}");
        assert!(out.contains("~/.ssh/config"), "{format:?}");
    }
}

#[test]
fn every_page_of_a_long_transcript_is_in_the_file() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let rec = Session::new("long", "2026-01-05T09:00:00.000Z", "completed");
    store.write_session(&rec).unwrap();
    let n = PAGE_ROWS * 2 + 7;
    let rows: Vec<(String, Value)> = (0..n)
        .map(|i| ev(&json!({"type": "text", "text": format!("row-text-{i}.")})))
        .collect();
    feed(&mut store, "long", &rows);
    let html = export(&store, "long", Format::Html, &Options::default())
        .unwrap()
        .unwrap();
    for i in [0, PAGE_ROWS - 1, PAGE_ROWS, 2 * PAGE_ROWS, n - 1] {
        assert!(html.contains(&format!(">row-text-{i}.<")), "row {i}");
    }
    let md = export(&store, "long", Format::Markdown, &Options::default())
        .unwrap()
        .unwrap();
    assert_eq!(md.matches("row-text-").count(), n);
}

#[test]
fn hostile_text_stays_text_and_links_to_included_sessions_stay_in_the_file() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let id = "\"><img src=x onerror=alert(1)>";
    let mut rec = Session::new(id, "2026-01-05T09:00:00.000Z", "completed");
    rec.summary = Some("<script>alert(1)</script>".into());
    rec.project = Some("</style><script>alert(2)</script>".into());
    store.write_session(&rec).unwrap();
    feed(
        &mut store,
        id,
        &[ev(
            &json!({"type": "text", "text": "<img src=x onerror=alert(3)></style>"}),
        )],
    );
    let html = export(&store, id, Format::Html, &Options::default())
        .unwrap()
        .unwrap();
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "{html}"
    );
    assert_eq!(html.matches("</style>").count(), 1, "only the file's own");
    assert!(html.contains("&lt;img src=x onerror=alert(3)&gt;"));
    assert!(
        export(&store, "nope", Format::Html, &Options::default())
            .unwrap()
            .is_none()
    );
}

#[test]
fn file_names_are_safe_everywhere() {
    assert_eq!(
        file_name("5e1f-a_b.c", Format::Html),
        "agentshape-5e1f-a_b.c.html"
    );
    assert_eq!(
        file_name("../x\"; y\r\n/é", Format::Markdown),
        "agentshape-_x___y____.md"
    );
    assert_eq!(file_name("a", Format::Json), "agentshape-a.json");
    assert!(file_name(&"x".repeat(500), Format::Html).len() < 130);
}

#[test]
fn masking_the_page_masks_a_secret_and_leaves_its_stylesheet_whole() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let rec = Session::new("m", "2026-01-05T09:00:00.000Z", "completed");
    store.write_session(&rec).unwrap();
    let key = "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";
    feed(
        &mut store,
        "m",
        &[ev(
            &json!({"type": "text", "text": format!("client = OpenAI(api_key=\"{key}\")")}),
        )],
    );
    let m = Masker::builtin(agentshape_core::secrets::MaskKey::from_bytes([7; 32]));
    for format in [Format::Html, Format::Markdown, Format::Json] {
        let raw = export(&store, "m", format, &Options::default())
            .unwrap()
            .unwrap();
        let out = mask(&m, format, &raw);
        assert!(!out.contains(key), "{format:?}: {out}");
        assert!(out.contains("[REDACTED:"), "{format:?}");
        if format == Format::Html {
            let css = &raw[raw.find("<style>").unwrap()..raw.find("</style>").unwrap()];
            assert!(out.contains(css), "the stylesheet is left as it was");
        }
        if format == Format::Json {
            serde_json::from_str::<Value>(&out).unwrap();
        }
    }
}
