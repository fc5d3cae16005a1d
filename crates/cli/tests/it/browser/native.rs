//! The dashboard over imported (native) sessions in a real browser (issue
//! 28, item 4): the sessions list's agent and project filters, the session
//! page's sub-agent tree, compaction marker and highlighted tool error,
//! the overview's charts per agent, and a transcript search hit that leads
//! to its line.
//!
//! The store is filled through the store's own `save_native` with rows
//! shaped exactly as the importer writes them (runtime's Note [Native feed
//! rows]: `{"kind":"event","event":{…},"line":N,"model":…}`, `created_at`
//! the line's time), so these tests depend on the dashboard only.

// Small fixture arithmetic: counts, days and dollars far inside every range.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::path::Path;

use agentshape_store::{FeedEntry, NativeMark, Session, SqliteStore, Store, ToolCount, time};
use serde_json::{Value, json};

use super::{Browser, serve};

/// The Claude Code session with a sub-agent, a compaction and a tool error.
pub(crate) const CLAUDE: &str = "9f1c2d4e-claude-session";
/// Its sub-agent.
pub(crate) const SUB: &str = "agent-a17f";
/// The Codex session whose transcript says `healthz`.
pub(crate) const CODEX: &str = "rollout-2025-codex-7c1e";
/// Its project.
pub(crate) const API_PROJECT: &str = "/home/ana/src/payments-api";

const DAY_MS: i64 = 86_400_000;

fn at(ms: i64) -> String {
    time::format_ms(ms)
}

fn mark(id: &str, agent: &str) -> NativeMark {
    NativeMark {
        path: format!("/home/ana/.agents/{id}.jsonl"),
        session_id: id.to_owned(),
        agent: agent.to_owned(),
        dev: 1,
        inode: 1,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: time::now(),
        reset: false,
        expect_offset: None,
    }
}

fn tool(name: &str, calls: u64, errors: u64) -> ToolCount {
    ToolCount {
        tool: name.to_owned(),
        calls,
        errors,
    }
}

/// Rows for `(line, model, event)`s, one second apart from `start_ms`.
fn rows(id: &str, start_ms: i64, events: &[(u64, Option<&str>, Value)]) -> Vec<FeedEntry> {
    events
        .iter()
        .enumerate()
        .map(|(i, (line, model, event))| {
            let mut body = json!({"kind": "event", "event": event, "line": line});
            if let Some(m) = model {
                body["model"] = json!(m);
            }
            FeedEntry {
                seq: None,
                session_id: id.to_owned(),
                kind: "event".to_owned(),
                body: body.to_string(),
                created_at: at(start_ms + 1000 * (i as i64 + 1)),
            }
        })
        .collect()
}

fn usage(id: &str, model: &str, input: u64, output: u64, cache_read: u64) -> Value {
    json!({"type": "usage", "message_id": id, "model": model, "cumulative": false,
           "tokens": {"input": input, "output": output, "cache_read": cache_read, "cache_write": 0}})
}

/// Write the native sessions into the SQLite store `db` (created if
/// needed): Claude Code, Codex and Gemini CLI sessions over the last days,
/// in three projects.
pub(crate) fn fill_native(db: &Path) {
    let mut store = SqliteStore::open(db).unwrap();
    let now = time::now_ms();
    let today = now - 2 * 3_600_000;
    let sonnet = "claude-sonnet-4-5-20250929";

    let mut c = Session::new(CLAUDE, &at(today), "completed");
    c.agent = Some("claude-code".into());
    c.agent_version = Some("2.1.23".into());
    c.model = Some(sonnet.into());
    c.project = Some("/home/ana/src/jellyfin-ops".into());
    c.git_branch = Some("fix/transcode".into());
    c.ended_at = Some(at(today + 1_500_000));
    c.duration_ms = Some(1_500_000);
    c.num_turns = Some(14);
    c.cost_usd = Some(1.8432);
    c.cost_estimated = true;
    c.input_tokens = 48_210;
    c.output_tokens = 9_877;
    c.cache_read_tokens = 1_204_330;
    c.cache_write_tokens = 88_120;
    c.summary = Some("Jellyfin transcoding fails with HTTP 502 after the upgrade".into());
    c.tools = vec![
        tool("Bash", 9, 2),
        tool("Read", 6, 0),
        tool("Edit", 3, 1),
        tool("Task", 1, 0),
    ];
    let feed = rows(
        CLAUDE,
        today,
        &[
            (
                1,
                None,
                json!({"type": "user_text", "text": "Jellyfin transcoding fails with HTTP 502 after the upgrade. Find out why and fix it."}),
            ),
            (2, Some(sonnet), json!({"type": "message", "id": "msg_01"})),
            (
                2,
                Some(sonnet),
                json!({"type": "text", "text": "I'll start with the service logs."}),
            ),
            (2, Some(sonnet), usage("msg_01", sonnet, 12_003, 41, 18_220)),
            (
                3,
                Some(sonnet),
                json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "journalctl -u jellyfin --since -1h"}}),
            ),
            (
                3,
                Some(sonnet),
                usage("msg_01", sonnet, 12_003, 187, 18_220),
            ),
            (
                4,
                None,
                json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": "Error: Failed to add match 'jellyfin': permission denied"}),
            ),
            (
                4,
                None,
                json!({"type": "tool_error", "tool_use_id": "toolu_1", "name": "Bash"}),
            ),
            (
                5,
                Some(sonnet),
                json!({"type": "tool_use", "id": "toolu_2", "name": "Task", "input": {"description": "Explore the transcoder logs", "subagent_type": "Explore"}}),
            ),
            (
                6,
                None,
                json!({"type": "sub_agent", "agent_id": "a17f", "tool_use_id": "toolu_2"}),
            ),
            (
                7,
                None,
                json!({"type": "tool_result", "tool_use_id": "toolu_2", "is_error": false, "content": "ffmpeg exits with code 1: unknown encoder 'h264_qsv'"}),
            ),
            (
                8,
                Some(sonnet),
                json!({"type": "text", "text": "The transcoder asks for Intel QSV, which this host lacks. Switching hardware acceleration off."}),
            ),
            (
                9,
                None,
                json!({"type": "compaction", "kind": "compact_boundary", "trigger": "auto", "pre_tokens": 155_120}),
            ),
            (
                10,
                None,
                json!({"type": "compact_summary", "text": "This session is being continued from a previous conversation that ran out of context.\nThe transcoder config asks for QSV; the host has no iGPU."}),
            ),
            (
                11,
                Some("claude-opus-4-1-20250805"),
                json!({"type": "text", "text": "Set hardwareAccelerationType to none in encoding.xml and restarted jellyfin; transcoding works."}),
            ),
            (
                11,
                Some("claude-opus-4-1-20250805"),
                usage("msg_09", "claude-opus-4-1-20250805", 3_210, 402, 90_112),
            ),
        ],
    );
    store
        .save_native(&c, &feed, &mark(CLAUDE, "claude-code"))
        .unwrap();

    let mut s = Session::new(SUB, &at(today + 60_000), "completed");
    s.parent_id = Some(CLAUDE.into());
    s.agent = Some("claude-code".into());
    s.model = Some("claude-haiku-4-5".into());
    s.project.clone_from(&c.project);
    s.cost_usd = Some(0.0912);
    s.cost_estimated = true;
    s.input_tokens = 8_400;
    s.output_tokens = 1_210;
    s.summary = Some("sub-agent a17f: Explore the transcoder logs".into());
    s.tools = vec![tool("Grep", 4, 0), tool("Read", 3, 0)];
    let feed = rows(
        SUB,
        today + 60_000,
        &[
            (
                1,
                None,
                json!({"type": "user_text", "text": "Explore the transcoder logs"}),
            ),
            (
                2,
                Some("claude-haiku-4-5"),
                json!({"type": "text", "text": "ffmpeg exits with code 1: unknown encoder 'h264_qsv'"}),
            ),
        ],
    );
    store
        .save_native(&s, &feed, &mark(SUB, "claude-code"))
        .unwrap();

    let mut x = Session::new(CODEX, &at(today - 3_600_000), "completed");
    x.agent = Some("codex".into());
    x.agent_version = Some("0.104.0".into());
    x.model = Some("gpt-5-codex".into());
    x.project = Some(API_PROJECT.into());
    x.git_branch = Some("main".into());
    x.cost_usd = Some(0.9215);
    x.cost_estimated = true;
    x.input_tokens = 210_400;
    x.output_tokens = 12_030;
    x.summary = Some("Add a health endpoint".into());
    x.tools = vec![tool("shell", 7, 1), tool("apply_patch", 2, 0)];
    let feed = rows(
        CODEX,
        today - 3_600_000,
        &[
            (
                3,
                Some("gpt-5-codex"),
                json!({"type": "user_text", "text": "Add a health endpoint for the load balancer"}),
            ),
            (
                5,
                Some("gpt-5-codex"),
                json!({"type": "tool_use", "id": "call_1", "name": "shell", "input": {"command": ["bash", "-lc", "rg -n 'Router::new' src"]}}),
            ),
            (
                6,
                None,
                json!({"type": "tool_result", "tool_use_id": "call_1", "is_error": false, "content": "src/main.rs:42:    let app = Router::new()"}),
            ),
            (
                8,
                Some("gpt-5-codex"),
                json!({"type": "tool_use", "id": "call_2", "name": "apply_patch", "input": {"patch": "*** Add route /healthz"}}),
            ),
            (
                9,
                Some("gpt-5-codex"),
                json!({"type": "text", "text": "Added GET /healthz returning 200 with the build version; cargo test passes."}),
            ),
            (
                9,
                None,
                json!({"type": "usage", "message_id": null, "model": "gpt-5-codex", "cumulative": true, "tokens": {"input": 210_400, "output": 12_030, "cache_read": 180_000, "cache_write": 0}}),
            ),
        ],
    );
    store.save_native(&x, &feed, &mark(CODEX, "codex")).unwrap();

    // Earlier days, so the charts have a shape.
    let history: &[(&str, &str, &str, f64, u64)] = &[
        (
            "claude-code",
            "/home/ana/src/jellyfin-ops",
            "claude-sonnet-4-5",
            2.41,
            61_000,
        ),
        ("codex", API_PROJECT, "gpt-5-codex", 0.64, 150_000),
        (
            "gemini-cli",
            "/home/ana/src/site",
            "gemini-2.5-pro",
            0.18,
            40_000,
        ),
        (
            "claude-code",
            API_PROJECT,
            "claude-sonnet-4-5",
            1.12,
            35_000,
        ),
    ];
    for day in 1..12_i64 {
        for (k, (agent, project, model, cost, tokens)) in history.iter().enumerate() {
            if (day + k as i64) % 3 == 0 {
                continue;
            }
            let id = format!("{agent}-{day:02}-{k}");
            let start = today - day * DAY_MS + k as i64 * 600_000;
            let mut r = Session::new(
                &id,
                &at(start),
                if (day + k as i64) % 7 == 0 {
                    "error"
                } else {
                    "completed"
                },
            );
            r.agent = Some((*agent).into());
            r.model = Some((*model).into());
            r.project = Some((*project).into());
            let scale = 0.5 + ((day * 7 + k as i64 * 3) % 10) as f64 / 10.0;
            r.cost_usd = Some(cost * scale);
            r.cost_estimated = true;
            r.input_tokens = (*tokens as f64 * scale) as i64;
            r.output_tokens = r.input_tokens / 12;
            r.summary = Some(format!("{agent} session in {project}"));
            r.tools = vec![tool(
                if *agent == "codex" { "shell" } else { "Bash" },
                5,
                u64::from(day % 4 == 0),
            )];
            let feed = rows(
                &id,
                start,
                &[(
                    1,
                    None,
                    json!({"type": "user_text", "text": format!("Task {day} for {project}")}),
                )],
            );
            store.save_native(&r, &feed, &mark(&id, agent)).unwrap();
        }
    }
}

/// The ids of the rows `css` matches in the sessions table.
fn listed(browser: &Browser) -> Vec<String> {
    browser
        .js("return Array.from(document.querySelectorAll('table#sessions tbody tr')).map((tr) => tr.dataset.sessionId);")
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn native_sessions_filter_tree_compaction_errors_charts_and_search() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("native.db");
    fill_native(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);

    // The list: the project column, est. costs; the agent filter through the form.
    browser.goto("/sessions");
    browser.find("table#sessions tbody tr[data-session-id]");
    let all = listed(&browser);
    assert!(all.len() > 20, "{all:?}");
    let est =
        browser.js("return document.querySelectorAll('table#sessions td.cost abbr.est').length;");
    assert!(est.as_u64().unwrap() > 20, "{est}");
    let el = browser.find("select[name=agent]");
    browser.select_el(&el, "codex");
    browser.click("#filters button[type=submit]");
    browser.wait_js(
        "the codex list",
        "return location.search.includes('agent=codex');",
    );
    browser.find("table#sessions tbody tr[data-session-id]");
    let codex = listed(&browser);
    assert!(codex.contains(&CODEX.to_owned()), "{codex:?}");
    assert!(codex.len() < all.len());
    let agents = browser.js("return Array.from(document.querySelectorAll('table#sessions tbody tr td.agent')).map((td) => td.textContent);");
    assert!(
        agents
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a.as_str().unwrap().starts_with("codex")),
        "{agents}"
    );
    // The project filter (by its query parameter, as the form sends it).
    browser.goto(&format!(
        "/sessions?project={}",
        API_PROJECT.replace('/', "%2F")
    ));
    browser.find("table#sessions tbody tr[data-session-id]");
    let projects = browser.js("return Array.from(document.querySelectorAll('table#sessions td.project')).map((td) => td.title);");
    let projects = projects.as_array().unwrap();
    assert!(!projects.is_empty());
    assert!(projects.iter().all(|p| p == API_PROJECT), "{projects:?}");
    let selected = browser.js("return document.querySelector('select[name=project]').value;");
    assert_eq!(selected, API_PROJECT);

    // The session page: the tree, the compaction marker, the tool error.
    browser.goto(&format!("/sessions/{CLAUDE}"));
    browser.find("#tree");
    let sub = browser.js(&format!(
        "const li = document.querySelector('#tree li[data-session-id=\"{SUB}\"]');
         return li ? li.textContent : null;"
    ));
    let sub = sub.as_str().expect("the sub-agent in the tree");
    assert!(
        sub.contains("Explore the transcoder logs") && sub.contains("8,400 in"),
        "{sub}"
    );
    // Transcript first (issue 41): no verdict, so the validation is one
    // folded line and the transcript's first row is on the first screen.
    let top = browser.js("const v = document.querySelector('#validation');
         const r = document.querySelector('#transcript .line:not([hidden])');
         return { open: v.open, top: r.getBoundingClientRect().top + window.scrollY,
                  models: document.querySelector('#models').textContent };");
    assert_eq!(top["open"], false, "{top}");
    assert!(top["top"].as_f64().unwrap() < 1000.0, "{top}");
    assert!(!top["models"].as_str().unwrap().is_empty(), "{top}");
    let marker = browser.js(
        "const m = document.querySelector('#transcript .line.t-compaction .compaction');
         if (!m) return null;
         const r = m.getBoundingClientRect();
         return { text: m.textContent, width: r.width, border: getComputedStyle(m).borderTopStyle };",
    );
    assert!(
        marker["text"]
            .as_str()
            .unwrap()
            .contains("context compacted"),
        "{marker}"
    );
    assert!(marker["width"].as_f64().unwrap() > 100.0, "{marker}");
    assert_eq!(marker["border"], "dashed");
    let open =
        browser.js("return document.querySelector('#transcript details.compact-summary').open;");
    assert_eq!(open, false, "the compact summary is collapsed");
    let err = browser.js(
        "const e = document.querySelector('#transcript .line.t-tool_result.err');
         const ok = document.querySelector('#transcript .line.t-tool_result:not(.err)');
         if (!e || !ok) return null;
         return { error: getComputedStyle(e).borderTopColor, ok: getComputedStyle(ok).borderTopColor,
                  text: e.textContent };",
    );
    assert!(
        err["text"].as_str().unwrap().contains("permission denied"),
        "{err}"
    );
    assert_ne!(err["error"], err["ok"], "the error is highlighted: {err}");
    let models = browser.js("return Array.from(document.querySelectorAll('#transcript .line .model')).map((m) => m.textContent);");
    assert_eq!(
        models,
        json!(["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"])
    );
    let tokens = browser.js("return Array.from(document.querySelectorAll('#transcript .line.t-usage')).filter((l) => !l.hidden).map((l) => l.querySelector('.tout').textContent);");
    assert_eq!(
        tokens,
        json!(["187", "402"]),
        "the last usage of each message"
    );
    browser.assert_clean("a native session");

    // The overview: a series per agent, drawn.
    browser.goto("/");
    browser.find("#cost-by-agent svg");
    let keys = browser.js("return Array.from(document.querySelectorAll('#cost-by-agent svg g.series')).map((g) => g.dataset.key);");
    let keys: Vec<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for want in ["claude-code", "codex", "gemini-cli"] {
        assert!(keys.contains(&want), "{want} in {keys:?}");
    }
    let drawn = browser.js(
        "return Array.from(document.querySelectorAll('#cost-by-agent svg g.series rect')).filter((r) => {
           const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length;",
    );
    assert!(drawn.as_u64().unwrap() > 10, "{drawn}");
    let tools = browser.js("return Array.from(document.querySelectorAll('#tool-errors tbody tr')).map((tr) => tr.dataset.tool);");
    assert_eq!(tools[0], "Bash", "{tools}");
    let costly =
        browser.js("return document.querySelector('#costliest tbody tr').dataset.sessionId;");
    assert!(
        costly.as_str().unwrap().starts_with("claude-code-"),
        "{costly}"
    );
    browser.assert_clean("the overview");

    // Search: a transcript hit names its session and leads to its line.
    browser.goto("/sessions?q=healthz");
    let hit = browser.find("#transcript-hits li.hit a.hit-link");
    let text = browser.js("return document.querySelector('#transcript-hits li.hit').textContent;");
    assert!(text.as_str().unwrap().contains(CODEX), "{text}");
    assert!(
        text.as_str().unwrap().contains("Added GET /healthz"),
        "{text}"
    );
    let feed_id =
        browser.js("return document.querySelector('#transcript-hits li.hit').dataset.feedId;");
    let feed_id = feed_id.as_str().unwrap().to_owned();
    browser.click_el(&hit);
    browser.wait_js(
        "the session page",
        &format!("return location.pathname === '/sessions/{CODEX}';"),
    );
    let target = browser.wait_js(
        "the hit's row",
        "const t = document.querySelector('#transcript .line:target'); return t ? { id: t.dataset.feedId, text: t.textContent } : null;",
    );
    assert_eq!(target["id"], feed_id.as_str(), "{target}");
    assert!(
        target["text"].as_str().unwrap().contains("/healthz"),
        "{target}"
    );
    // The JSON twin says the same.
    let api = browser.wait_js(
        "the API",
        "return fetch('/api/sessions?agent=codex&q=healthz', { credentials: 'same-origin' }).then((r) => r.json());",
    );
    assert_eq!(api["transcript_hits"][0]["session_id"], CODEX, "{api}");
    assert_eq!(api["transcript_hits"][0]["feed_id"].to_string(), feed_id);
    assert!(
        api["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["agent"] == "codex")
    );
    browser.assert_clean("search");
}

/// `agentshape import` of the synthetic agent files in
/// `tests/fixtures/native` (Claude Code with a sub-agent file and a
/// compaction, Codex, Gemini CLI) into `db`.
pub(crate) fn import_fixtures(db: &Path) {
    let f = crate::support::repo_root().join("crates/cli/tests/fixtures/native");
    let out = crate::support::agentshape_std()
        .arg("import")
        .arg(f.join("claude"))
        .arg(f.join("codex"))
        .arg(f.join("gemini"))
        .arg("--store")
        .arg(db)
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("AGENTSHAPE_PRICES")
        .output()
        .unwrap();
    assert!(out.status.success(), "import: {out:?}");
}

/// The same pages over sessions `agentshape import` stored from agent
/// files: what the importer writes is what the pages read.
#[test]
fn imported_agent_files_show_their_tree_error_compaction_and_search_hit() {
    const MAIN: &str = "5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("imported.db");
    import_fixtures(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/sessions?agent=claude-code");
    browser.find("table#sessions tbody tr[data-session-id]");
    let mut ids = listed(&browser);
    ids.sort();
    assert_eq!(
        ids,
        ["5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70", "agent-f00dcafe01"]
    );
    let cost = browser.js(&format!(
        "return document.querySelector('tr[data-session-id=\"{MAIN}\"] td.cost').textContent;"
    ));
    // Priced from its stored calls (not the row's estimate): dollars, not zero.
    let cost = cost.as_str().unwrap();
    assert!(cost.starts_with('$') && cost != "$0.00", "{cost}");
    browser.goto(&format!("/sessions/{MAIN}"));
    browser.find("#tree li[data-session-id=\"agent-f00dcafe01\"]");
    let seen = browser.js(
        "return {
           errors: document.querySelectorAll('#transcript .line.err').length,
           compactions: document.querySelectorAll('#transcript .line.t-compaction .compaction').length,
           times: document.querySelectorAll('#transcript .line time.ts').length,
           lines: document.querySelectorAll('#transcript .line').length,
         };",
    );
    assert_eq!(
        seen["errors"], 2,
        "the failed Bash call and its tool error: {seen}"
    );
    assert_eq!(seen["compactions"], 1, "{seen}");
    assert_eq!(seen["times"], seen["lines"], "{seen}");
    browser.goto("/sessions?q=staging");
    let hit = browser.find("#transcript-hits li.hit a.hit-link");
    browser.click_el(&hit);
    let target = browser.wait_js(
        "the hit's row",
        "const t = document.querySelector('#transcript .line:target'); return t ? t.textContent : null;",
    );
    assert!(
        target.as_str().unwrap().contains("defaults to staging"),
        "{target}"
    );
    browser.assert_clean("imported sessions");
}

/// Agent-controlled names of native sessions (project, model, branch,
/// agent version, tool names, sub-agent descriptions, transcript text)
/// carrying script payloads: on the list, a search, the session page and
/// the overview nothing runs, nothing is injected, the text shows as text.
#[test]
fn hostile_native_names_run_nothing_anywhere() {
    const PAYLOADS: &[&str] = &[
        "<script>window.__pwned=1</script>",
        r#"<img src=x onerror="window.__pwned=1">"#,
        r#""><svg onload=window.__pwned=1>"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hostile.db");
    {
        let mut store = SqliteStore::open(&db).unwrap();
        let now = time::now_ms() - 3_600_000;
        for (i, p) in PAYLOADS.iter().enumerate() {
            let id = format!("hostile-{i}");
            let mut r = Session::new(&id, &at(now + i as i64 * 1000), "completed");
            r.agent = Some("claude-code".into());
            r.model = Some((*p).into());
            r.project = Some(format!("/home/{p}"));
            r.git_branch = Some((*p).into());
            r.agent_version = Some((*p).into());
            r.summary = Some(format!("pwned summary {p}"));
            r.cost_usd = Some(1.0 + i as f64);
            r.cost_estimated = true;
            r.tools = vec![tool(p, 2, 1)];
            if i > 0 {
                r.parent_id = Some("hostile-0".into());
            }
            let feed = rows(
                &id,
                now,
                &[
                    (
                        1,
                        Some(*p),
                        json!({"type": "user_text", "text": format!("pwned prompt {p}")}),
                    ),
                    (
                        2,
                        Some(*p),
                        json!({"type": "tool_use", "id": "t", "name": p, "input": {"x": p}}),
                    ),
                    (
                        3,
                        None,
                        json!({"type": "tool_error", "tool_use_id": "t", "name": p}),
                    ),
                    (4, None, json!({"type": "compact_summary", "text": p})),
                    (5, Some(*p), usage("m", p, 1, 2, 3)),
                ],
            );
            store
                .save_native(&r, &feed, &mark(&id, "claude-code"))
                .unwrap();
        }
    }
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    let check = r"
const bad = [];
if (typeof window.__pwned !== 'undefined') bad.push('window.__pwned is set');
const main = document.querySelector('main');
for (const el of main.querySelectorAll('img, script, iframe, object, embed')) bad.push('injected ' + el.outerHTML);
for (const el of main.querySelectorAll('svg')) {
  if (!el.closest('section.chart')) bad.push('an svg outside the charts: ' + el.outerHTML.slice(0, 120));
}
for (const el of main.querySelectorAll('*')) {
  for (const attr of el.attributes) if (attr.name.startsWith('on')) bad.push('handler ' + attr.name);
}
return bad.join('; ');";
    let project = format!("/home/{}", PAYLOADS[1]);
    for (path, ready, literal) in [
        (
            "/sessions".to_owned(),
            "table#sessions tbody tr",
            project.clone(),
        ),
        (
            "/sessions?q=pwned".to_owned(),
            "#transcript-hits li.hit",
            "pwned prompt <script>".to_owned(),
        ),
        (
            "/sessions/hostile-0".to_owned(),
            "#tree li",
            "<script>window.__pwned=1</script>".to_owned(),
        ),
        ("/".to_owned(), "#tool-errors", PAYLOADS[2].to_owned()),
    ] {
        browser.goto(&path);
        browser.find(ready);
        assert_eq!(browser.dialog(), None, "{path}: a dialog opened");
        assert_eq!(browser.js(check), "", "{path}");
        let shown = browser.js_with(
            "return document.querySelector('main').textContent.includes(arguments[0]);",
            vec![json!(literal)],
        );
        assert_eq!(shown, true, "{path} shows {literal:?} as text");
    }
    browser.assert_clean("hostile native names");
}
