//! The session page rendered from a real (in-memory) store.

use agentshape_store::{FeedEntry, NewEvent, NewMemory, ServiceCheck, Session, SqliteStore, Store};
use serde_json::{Value, json};

use super::*;

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "\"><svg onload=alert(1)>",
];

fn feed(store: &mut SqliteStore, id: &str, rows: &[(&str, Value)]) {
    let entries: Vec<FeedEntry> = rows
        .iter()
        .map(|(kind, body)| FeedEntry {
            seq: None,
            session_id: id.to_owned(),
            kind: (*kind).to_owned(),
            body: body.to_string(),
            created_at: "2025-07-14T03:00:01.000Z".to_owned(),
        })
        .collect();
    store.append_feed(&entries).unwrap();
}

fn page(store: &SqliteStore, id: &str) -> String {
    render(&load(store, id, 0).unwrap().unwrap()).into_string()
}

/// Every tag of `html`, from `<` to `>` (attribute values included).
fn tags(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else {
            break;
        };
        out.push(&rest[start..=start + len]);
        rest = &rest[start + len + 1..];
    }
    out
}

/// No hostile text became markup: no script/img/svg tag, no event handler
/// or `javascript:` inside any tag; each hostile string is there as text.
fn assert_inert(html: &str) {
    for tag in tags(html) {
        // Attribute values are quoted by maud (with `"` escaped inside), so
        // what is left outside quotes is the tag name and attribute names.
        let outside: String = tag.split('"').step_by(2).collect();
        let t = outside.to_ascii_lowercase();
        for bad in [
            "<script",
            "<img",
            "<svg",
            "onerror",
            "onload",
            "javascript:",
        ] {
            assert!(!t.contains(bad), "`{bad}` inside the tag {tag}");
        }
    }
    for href in html.split("href=\"").skip(1) {
        assert!(href.starts_with('/') || href.starts_with('#'), "{href}");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("[x](javascript:alert(1))"));
    assert!(html.contains("&quot;&gt;&lt;svg onload=alert(1)&gt;"));
}

#[test]
fn hostile_agent_text_renders_as_text_everywhere() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let id = "\"><svg onload=alert(1)>";
    let mut rec = Session::new(id, "2025-07-14T03:00:00.000Z", "running");
    store.start_session(&rec).unwrap();
    let mut rows = Vec::new();
    for h in HOSTILE {
        rows.push((
            "event",
            json!({"kind": "event", "event": {"type": "text", "text": h}}),
        ));
        rows.push((
            "event",
            json!({"kind": "event", "event": {"type": "thinking", "text": h}}),
        ));
        rows.push((
            "event",
            json!({"kind": "event", "event": {"type": "tool_use", "id": h, "name": h, "input": {"cmd": h}}}),
        ));
        rows.push((
            "event",
            json!({"kind": "event", "event": {"type": "tool_result", "is_error": true, "content": h}}),
        ));
        rows.push(("partial", json!({"kind": "partial", "value": {"s": h}})));
        rows.push((h, json!({ "x": h })));
    }
    feed(&mut store, id, &rows);
    rec.status = "completed".into();
    rec.summary = Some(HOSTILE.join(" "));
    rec.error = Some(HOSTILE.join(" "));
    rec.error_category = Some(HOSTILE[3].to_owned());
    rec.model = Some(HOSTILE[1].to_owned());
    rec.extraction_method = Some(HOSTILE[0].to_owned());
    rec.parent_id = None;
    rec.escalation = Some(json!({"reason": HOSTILE[1]}).to_string());
    rec.output = Some(json!({ HOSTILE[0]: HOSTILE[1], "list": HOSTILE }));
    // Hostile where a typed verdict has no room for it (a kind, a repair):
    // written as a store edited by hand (or by another build) holds it.
    let verdict = json!({
        "valid": false,
        "errors": [{"instance_path": format!("/{}", HOSTILE[0]), "schema_path": HOSTILE[2], "message": HOSTILE[3], "kind": HOSTILE[1], "rule": HOSTILE[0]}],
        "repairs": [HOSTILE[1]],
        "coercions": [{"kind": HOSTILE[0], "instance_path": HOSTILE[3], "from": HOSTILE[1], "to": HOSTILE[2]}],
    });
    store.write_session(&rec).unwrap();
    let updated = store
        .connection()
        .execute(
            "UPDATE sessions SET verdict = ?1 WHERE id = ?2",
            (verdict.to_string(), id),
        )
        .unwrap();
    assert_eq!(updated, 1);
    let html = page(&store, id);
    assert_inert(&html);
    // The one link out of the page for this id is percent-encoded.
    assert_eq!(
        session_href(id),
        "/sessions/%22%3E%3Csvg%20onload%3Dalert%281%29%3E"
    );
}

#[test]
fn errors_point_at_their_values_and_invariants_are_told_apart() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("s", "2025-07-14T03:00:00.000Z", "completed");
    rec.output = Some(json!({"events": [{"level": "loud"}], "counts": {"a": 2}}));
    rec.verdict = serde_json::from_value(json!({
        "valid": false,
        "errors": [
            {"instance_path": "/events/0/level", "schema_path": "/properties/events/items/properties/level/enum", "message": "not one of"},
            {"instance_path": "/counts", "schema_path": "/x-invariants/0", "message": "count mismatch", "kind": "invariant", "rule": "self.counts.a == 1"},
            {"instance_path": "/missing/deep", "schema_path": "/required", "message": "missing"},
        ],
        "repairs": ["trailing_comma"],
        "coercions": [{"kind": "enum_case", "instance_path": "/events/0/level", "from": "Loud", "to": "loud"}],
    }))
    .unwrap();
    store.write_session(&rec).unwrap();
    let html = page(&store, "s");
    // Each error's li: its pointer and kind, linked to the value's anchor.
    for (path, kind, anchor) in [
        ("/events/0/level", "schema", "at-0"),
        ("/counts", "invariant", "at-1"),
        ("/missing/deep", "schema", "at-2"),
    ] {
        let li = format!(r#"<li data-path="{path}" data-kind="{kind}">"#);
        let at = html.find(&li).unwrap_or_else(|| panic!("{li} in {html}"));
        let rest = &html[at..];
        assert!(
            rest[..rest.find("</li>").unwrap()].contains(&format!(r##"href="#{anchor}""##)),
            "{rest}"
        );
    }
    // The anchored spans are the values (the missing one: the nearest, the root).
    for (anchor, path) in [
        ("at-0", "/events/0/level"),
        ("at-1", "/counts"),
        ("at-2", ""),
    ] {
        let want = format!(r#"id="{anchor}" data-path="{path}""#);
        assert!(html.contains(&want), "{want} in {html}");
    }
    assert_eq!(html.matches("class=\"jv hl ").count(), 3, "{html}");
    assert!(html.contains(r#"data-valid="false""#));
    assert!(html.contains(">3 errors</span>"), "{html}");
    assert!(html.contains("self.counts.a == 1"));
    assert!(html.contains("<li>trailing_comma</li>"), "{html}");
    assert!(html.contains(r#"<ul id="coercions"><li data-path="/events/0/level">"#));
}

#[test]
fn verdict_and_status_per_state() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut ok = Session::new("ok", "2025-07-14T03:00:00.000Z", "completed");
    ok.output = Some(json!({"a": 1}));
    ok.verdict = serde_json::from_value(
        json!({"valid": true, "errors": [], "repairs": [], "coercions": []}),
    )
    .unwrap();
    store.write_session(&ok).unwrap();
    let html = page(&store, "ok");
    assert!(html.contains(r#"data-valid="true">valid</span>"#), "{html}");
    assert!(html.contains(r#"<section id="session" data-session-id="ok" data-status="completed""#));
    assert!(
        html.contains(r#"<span id="session-status" class="badge s-completed">completed</span>"#)
    );
    // Running and alive: no data-valid, live from the last feed id.
    let run = Session::new("run", &agentshape_store::time::now(), "running");
    store.start_session(&run).unwrap();
    let html = page(&store, "run");
    assert!(!html.contains("data-valid"), "{html}");
    let after = agentshape_store::query::feed_max_id(&store).unwrap();
    assert!(html.contains(&format!(r#"data-status="running" data-after="{after}""#)));
    // Lost: says so, with the ingest command.
    let mut lost = Session::new("lost", "2025-07-14T03:00:00.000Z", "running");
    lost.raw_log_path = Some("/var/log/agentshape/lost.ndjson".to_owned());
    store.start_session(&lost).unwrap();
    let html = page(&store, "lost");
    assert!(html.contains(r#"data-status="lost""#));
    assert!(html.contains("lost: no heartbeat since 2025-07-14T03:00:00.000Z"));
    assert!(html.contains("agentshape ingest /var/log/agentshape/lost.ndjson"));
    assert!(load(&store, "nope", 0).unwrap().is_none());
}

#[test]
fn the_chain_links_parent_and_children_with_their_status() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    store
        .write_session(&Session::new(
            "p/1",
            "2025-07-14T03:00:00.000Z",
            "completed",
        ))
        .unwrap();
    let mut c = Session::new("c?1", "2025-07-14T03:00:01.000Z", "error");
    c.parent_id = Some("p/1".to_owned());
    c.tier = 2;
    store.write_session(&c).unwrap();
    let html = page(&store, "p/1");
    assert!(html.contains(r#"<a class="child" href="/sessions/c%3F1">c?1</a> <span class="badge s-error">error</span>"#), "{html}");
    let html = page(&store, "c?1");
    assert!(
        html.contains(r#"<a class="parent" href="/sessions/p%2F1">p/1</a>"#),
        "{html}"
    );
}

#[test]
fn a_session_without_feed_rows_is_read_from_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.ndjson");
    std::fs::write(
        &log,
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"from the log\"}]}}\n",
    )
    .unwrap();
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("s", "2025-07-14T03:00:00.000Z", "completed");
    rec.agent = Some("claude".to_owned());
    rec.raw_log_path = Some(log.display().to_string());
    // As `ingest` writes it: the session row and its `ended` feed row only.
    store.write_session(&rec).unwrap();
    let l = load(&store, "s", 0).unwrap().unwrap();
    assert_eq!(l.transcript_source, Source::Log);
    let html = render(&l).into_string();
    assert!(
        html.contains(r#"data-type="text"><div class="md"><p>from the log</p></div></div>"#),
        "{html}"
    );
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["transcript_source"], "log");
    assert_eq!(v["transcript_truncated"], false);
    assert_eq!(v["session"]["id"], "s");
    // An unreadable log: the feed's bookends.
    std::fs::remove_file(&log).unwrap();
    let l = load(&store, "s", 0).unwrap().unwrap();
    assert_eq!(l.transcript_source, Source::Feed);
    assert_eq!(l.transcript.len(), 1);
    assert_eq!(l.transcript[0].kind, "ended");
    // No feed rows at all (a build before the feed) and no log: none.
    store
        .connection()
        .execute("DELETE FROM feed WHERE session_id = 's'", [])
        .unwrap();
    let l = load(&store, "s", 0).unwrap().unwrap();
    assert_eq!((l.transcript_source, l.transcript.len()), (Source::None, 0));
    // A session whose feed has what the agent did is read from the feed,
    // log or not.
    std::fs::write(&log, "{}\n").unwrap();
    feed(
        &mut store,
        "s",
        &[(
            "event",
            json!({"kind": "event", "event": {"type": "text", "text": "live"}}),
        )],
    );
    let l = load(&store, "s", 0).unwrap().unwrap();
    assert_eq!(l.transcript_source, Source::Feed);
    assert_eq!(l.transcript[0].body["event"]["text"], "live");
}

#[test]
fn the_rows_it_wrote_are_tables() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("s", "2025-07-14T03:00:00.000Z", "completed");
    rec.events.push(NewEvent {
        level: "critical".to_owned(),
        service: Some("jellyfin".to_owned()),
        message: "HTTP 502 <b>".to_owned(),
    });
    rec.services.push(ServiceCheck {
        name: "jellyfin".to_owned(),
        status: "down".to_owned(),
        detail: Some("502".to_owned()),
    });
    rec.memories.push(NewMemory {
        key: "jellyfin:timing".to_owned(),
        value: "takes 60s".to_owned(),
    });
    store.write_session(&rec).unwrap();
    let html = page(&store, "s");
    for want in [
        r#"<table id="events">"#,
        "<td>HTTP 502 &lt;b&gt;</td>",
        r#"<table id="services">"#,
        "<td>down</td>",
        r#"<table id="memories">"#,
        "<td>takes 60s</td>",
        r#"<td class="num">0.70</td>"#,
    ] {
        assert!(html.contains(want), "{want} in {html}");
    }
}

/// Note [Transcript pages]: a 12 MB transcript is served a page of about
/// 1 MiB at a time (it was one 12 MB answer per request), each page
/// linking the next, and walking the pages gives every row once, in order.
#[test]
fn a_long_transcript_is_paged_by_size_and_every_row_comes_once() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let rec = Session::new("big", "2025-07-14T03:00:00.000Z", "completed");
    store.write_session(&rec).unwrap();
    let text = "z".repeat(4000);
    let rows: Vec<(&str, Value)> = (0..3000)
        .map(|_| {
            (
                "event",
                json!({"kind": "event", "event": {"type": "text", "text": text}}),
            )
        })
        .collect();
    feed(&mut store, "big", &rows);
    let all: Vec<i64> = agentshape_store::query::feed_for_session(&store, "big", 0, 10_000)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    let mut seen = Vec::new();
    let mut after = 0;
    let mut pages = 0;
    loop {
        let l = load(&store, "big", after).unwrap().unwrap();
        let html = render(&l).into_string();
        assert!(html.len() < 2 << 20, "a page of {} bytes", html.len());
        let json = serde_json::to_string(&l).unwrap();
        assert!(json.len() < 2 << 20, "an answer of {} bytes", json.len());
        seen.extend(l.transcript.iter().map(|r| r.id));
        pages += 1;
        match l.transcript_next {
            Some(next) => {
                assert!(l.transcript_truncated);
                assert!(
                    html.contains(&format!(r#"href="/sessions/big?after={next}""#)),
                    "links the next page"
                );
                assert!(html.contains(r#"data-follow="false""#));
                after = next;
            }
            None => break,
        }
    }
    assert_eq!(seen, all);
    assert!(pages >= 12, "{pages} pages");
}

/// A native (imported) row as the importer writes it (runtime's Note
/// [Native feed rows]): the event, its line, and the line's model.
fn native_row(line: u64, model: Option<&str>, event: Value) -> (String, Value) {
    let mut body = json!({"kind": "event", "line": line});
    body["event"] = event;
    if let Some(m) = model {
        body["model"] = json!(m);
    }
    ("event".to_owned(), body)
}

fn save_native(store: &mut SqliteStore, rec: &Session, rows: &[(String, Value)], at: &str) {
    let entries: Vec<FeedEntry> = rows
        .iter()
        .map(|(kind, body)| FeedEntry {
            seq: None,
            session_id: rec.id.clone(),
            kind: kind.clone(),
            body: body.to_string(),
            created_at: at.to_owned(),
        })
        .collect();
    let mark = agentshape_store::NativeMark {
        path: format!("/p/{}.jsonl", rec.id),
        session_id: rec.id.clone(),
        agent: "claude-code".to_owned(),
        dev: 0,
        inode: 0,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: at.to_owned(),
        reset: false,
        expect_offset: None,
    };
    store.save_native(rec, &entries, &mark).unwrap();
}

/// The part of `html` from the element with `id="row-<id>"` to its end.
fn row_html(html: &str, id: i64) -> &str {
    let at = html
        .find(&format!(r#"id="row-{id}""#))
        .unwrap_or_else(|| panic!("no row-{id} in {html}"));
    let start = html[..at].rfind('<').unwrap();
    let end = html[at..].find("</div>").unwrap() + at;
    &html[start..end]
}

#[test]
fn a_native_session_shows_its_tree_compactions_tool_errors_models_and_tokens() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut main = Session::new("n-main", "2025-07-14T05:00:00.000Z", "completed");
    main.agent = Some("claude-code".to_owned());
    main.agent_version = Some("2.1.23".to_owned());
    main.model = Some("claude-sonnet-4-5".to_owned());
    main.project = Some(HOSTILE[0].to_owned());
    main.git_branch = Some(HOSTILE[1].to_owned());
    main.cost_usd = Some(1.5);
    main.cost_estimated = true;
    main.cache_read_tokens = 5000;
    main.cache_write_tokens = 300;
    main.source_path = Some("/home/u/.claude/projects/x/n-main.jsonl".to_owned());
    let usage = |out: u64| {
        json!({"type": "usage", "message_id": "msg_1", "model": HOSTILE[3], "cumulative": false,
               "tokens": {"input": 1200, "output": out, "cache_read": 5000, "cache_write": 300}})
    };
    let rows = vec![
        native_row(
            1,
            None,
            json!({"type": "user_text", "text": "Fix <b>it</b>"}),
        ),
        native_row(
            2,
            Some("claude-sonnet-4-5"),
            json!({"type": "message", "id": "msg_1"}),
        ),
        native_row(
            2,
            Some("claude-sonnet-4-5"),
            json!({"type": "text", "text": "Looking"}),
        ),
        native_row(2, Some("claude-sonnet-4-5"), usage(10)),
        native_row(
            3,
            Some("claude-sonnet-4-5"),
            json!({"type": "tool_use", "id": "t1", "name": HOSTILE[2], "input": {"command": "ls"}}),
        ),
        native_row(3, Some("claude-sonnet-4-5"), usage(42)),
        native_row(
            4,
            None,
            json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "Error: denied"}),
        ),
        native_row(
            4,
            None,
            json!({"type": "tool_error", "tool_use_id": "t1", "name": HOSTILE[2]}),
        ),
        native_row(
            5,
            None,
            json!({"type": "compaction", "kind": "compact_boundary", "trigger": "auto", "pre_tokens": 155_000}),
        ),
        native_row(
            6,
            None,
            json!({"type": "compact_summary", "text": "This session is being continued.\nDetails <i>"}),
        ),
        native_row(
            7,
            Some(HOSTILE[0]),
            json!({"type": "text", "text": "after"}),
        ),
        native_row(
            8,
            None,
            json!({"type": "api_error", "message": "Overloaded", "category": "rate_limit", "status": 529}),
        ),
    ];
    save_native(&mut store, &main, &rows, "2025-07-14T05:00:01.000Z");
    let mut sub = Session::new("agent-a1b2", "2025-07-14T05:01:00.000Z", "completed");
    sub.parent_id = Some("n-main".to_owned());
    sub.agent = Some("claude-code".to_owned());
    sub.summary = Some(format!("sub-agent a1b2: {}", HOSTILE[0]));
    sub.input_tokens = 321;
    sub.output_tokens = 12;
    sub.cost_usd = Some(0.25);
    sub.cost_estimated = true;
    save_native(&mut store, &sub, &[], "2025-07-14T05:01:00.000Z");
    let mut subsub = Session::new("agent-c3", "2025-07-14T05:02:00.000Z", "error");
    subsub.parent_id = Some("agent-a1b2".to_owned());
    save_native(&mut store, &subsub, &[], "2025-07-14T05:02:00.000Z");

    let l = load(&store, "n-main", 0).unwrap().unwrap();
    let ids: Vec<i64> = l.transcript.iter().map(|r| r.id).collect();
    let html = render(&l).into_string();
    assert_inert(&html);
    // The tree: the sub-agent and its own, with id, description, status, tokens.
    let tree = &html[html
        .find(r#"id="tree""#)
        .unwrap_or_else(|| panic!("a tree in {html}"))..];
    let tree = &tree[..tree.find("</ul>").unwrap()];
    assert!(
        tree.contains(r#"data-depth="1" data-session-id="agent-a1b2""#),
        "{tree}"
    );
    assert!(
        tree.contains(r#"data-depth="2" data-session-id="agent-c3""#),
        "{tree}"
    );
    assert!(tree.contains("321 in / 12 out"), "{tree}");
    assert!(tree.contains(r#"$0.2500 <abbr class="est""#), "{tree}");
    assert!(tree.contains("sub-agent a1b2: &lt;script&gt;"), "{tree}");
    assert!(
        tree.contains(r#"<span class="badge s-error">error</span>"#),
        "{tree}"
    );
    // Facts: project, branch, version, estimated cost, cache, source.
    assert!(
        html.contains(r#"<dd class="mono" id="project" title="&lt;script&gt;alert(1)&lt;/script&gt;">&lt;script&gt;"#),
        "{html}"
    );
    assert!(html.contains(r#"$1.5000 <abbr class="est""#));
    assert!(html.contains("cache 5,000 read, 300 written"));
    // Transcript first (Note [Transcript first]): no verdict, so the
    // validation is one folded line, and the run-only facts are not shown.
    assert!(
        html.contains(r#"<details class="validation" id="validation"><summary>"#),
        "{html}"
    );
    assert!(!html.contains("<dt>Exit code</dt>"), "{html}");
    assert!(html.contains("(sessions below: 321 in · 12 out)"), "{html}");
    assert!(html.contains("2.1.23"));
    assert!(html.contains("n-main.jsonl"));
    // Every row has its anchor and its line's time.
    for id in &ids {
        assert!(
            row_html(&html, *id)
                .contains(r#"<time class="ts" datetime="2025-07-14T05:00:01.000Z""#)
        );
    }
    let row = |i: usize| row_html(&html, ids[i]);
    assert!(
        row(0).contains(r#"<span class="tag user">user</span>"#),
        "{}",
        row(0)
    );
    // The model where the turn's model changes, not on every row.
    assert!(
        !row(1).contains(r#"class="model""#),
        "not on the hidden message row"
    );
    assert!(
        row(2)
            .contains(r#"<span class="model" title="model of this turn">claude-sonnet-4-5</span>"#),
        "{}",
        row(2)
    );
    assert!(!row(4).contains(r#"class="model""#), "{}", row(4));
    assert!(
        row(10).contains("&lt;script&gt;alert(1)&lt;/script&gt;</span>"),
        "{}",
        row(10)
    );
    // The message's tokens: the last usage row of msg_1 shows, the first is hidden.
    assert!(row(3).contains("hidden"), "{}", row(3));
    assert!(!row(5).contains("hidden"), "{}", row(5));
    assert!(
        row(5).contains(r#"<span class="tout">42</span> out"#),
        "{}",
        row(5)
    );
    assert!(row(5).contains("1,200"), "{}", row(5));
    // Tool errors are highlighted; the hostile tool name is text.
    assert!(
        row(6).contains("line k-event t-tool_result err"),
        "{}",
        row(6)
    );
    assert!(row(7).contains("t-tool_error err"), "{}", row(7));
    assert!(!row(4).contains(" err"), "{}", row(4));
    // The compaction is a divider; its summary collapsed.
    assert!(row(8).contains(r#"role="separator""#), "{}", row(8));
    assert!(
        row(8).contains("context compacted · auto · 155,000 tokens before"),
        "{}",
        row(8)
    );
    let summary = &html[html.find(&format!(r#"id="row-{}""#, ids[9])).unwrap()..];
    assert!(
        summary.contains(r#"<details class="compact-summary">"#),
        "{summary}"
    );
    assert!(!summary[..200].contains("<details class=\"compact-summary\" open"));
    assert!(
        row(11).contains("API error (rate_limit, 529): Overloaded"),
        "{}",
        row(11)
    );
    assert!(row(11).contains(" err"));
}

fn hook_row(id: i64, agent: Option<&str>, verdict: &str, blocks: u32) -> query::HookCallRow {
    query::HookCallRow {
        id,
        session_id: "s1".to_owned(),
        agent_id: agent.map(str::to_owned),
        agent_type: agent.map(|_| "reviewer".to_owned()),
        event: if agent.is_some() {
            "SubagentStop"
        } else {
            "Stop"
        }
        .to_owned(),
        verdict: verdict.to_owned(),
        method: Some("bare".to_owned()),
        errors: Some(
            serde_json::json!([{"instance_path": "/action", "schema_path": "/properties/action/enum", "message": "\"x\" is not one of \"complete\""}]),
        ),
        blocks,
        stop_hook_active: blocks > 1,
        profile: Some("claude-loop".to_owned()),
        reason: Some("agentshape: fix it".to_owned()),
        warning: None,
        created_at: "2026-11-26T10:00:00Z".to_owned(),
    }
}

#[test]
fn hook_summaries_per_chain_and_agent() {
    let calls = [
        hook_row(1, None, "blocked", 1),
        hook_row(2, Some("a1"), "blocked", 1),
        hook_row(3, None, "blocked", 2),
        hook_row(4, None, "valid", 0),
        hook_row(5, Some("a1"), "valid", 0),
        hook_row(6, None, "blocked", 1),
        hook_row(7, None, "blocked", 2),
        hook_row(8, None, "blocked", 3),
        hook_row(9, None, "gave_up", 3),
        hook_row(10, None, "blocked", 1),
    ];
    assert_eq!(
        hook_summary(&calls),
        "blocked 2×, then valid; blocked 3×, then let through invalid; blocked 1×, waiting for the next answer \
         · sub-agent reviewer a1: blocked 1×, then valid"
    );
    assert_eq!(hook_summary(&calls[3..4]), "valid");
    let page = hook_calls(&calls[..4]).into_string();
    assert!(page.contains("id=\"hook-summary\""), "{page}");
    assert_eq!(page.matches("data-verdict=").count(), 4);
    assert!(page.contains("the reason the model was given"));
}

/// A session only `agentshape usage` read (runtime's Note [Usage pass])
/// says its transcript is not imported yet; once imported, it no longer
/// does.
#[test]
fn a_usage_only_session_says_how_to_import_its_transcript() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("u-1", "2025-07-14T05:00:00.000Z", "completed");
    rec.agent = Some("claude-code".to_owned());
    rec.source_path = Some("/p/u-1.jsonl".to_owned());
    let mark = agentshape_store::NativeMark {
        path: "/p/u-1.jsonl".to_owned(),
        session_id: "u-1".to_owned(),
        agent: "claude-code".to_owned(),
        dev: 1,
        inode: 2,
        size: 3,
        offset: 3,
        mtime_ms: 4,
        lines: 1,
        updated_at: "2025-07-14T05:00:00.000Z".to_owned(),
        reset: false,
        expect_offset: None,
    };
    store.save_usage(&rec, &mark).unwrap();
    let html = page(&store, "u-1");
    assert!(html.contains(r#"id="usage-only""#), "{html}");
    assert!(html.contains("agentshape import"));
    // The import of the same path drops the usage mark.
    save_native(
        &mut store,
        &rec,
        &[native_row(1, None, json!({"type": "text", "text": "hi"}))],
        "2025-07-14T05:00:01.000Z",
    );
    let html = page(&store, "u-1");
    assert!(!html.contains(r#"id="usage-only""#), "{html}");
}

fn call(
    key: &str,
    model: &str,
    sidechain: bool,
    input: u64,
    output: u64,
) -> agentshape_store::UsageRecord {
    agentshape_store::UsageRecord {
        key: key.to_owned(),
        at_ms: 1_752_469_200_000,
        model: model.to_owned(),
        sidechain,
        tokens: agentshape_core::usage::UsageTokens {
            input,
            output,
            ..Default::default()
        },
    }
}

#[test]
fn the_header_shows_the_models_as_a_mix_with_readable_numbers() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("mix", "2025-07-14T05:00:00.000Z", "completed");
    rec.agent = Some("claude-code".to_owned());
    rec.agent_version = Some("1.0.51".to_owned());
    rec.model = Some("claude-3-5-haiku".to_owned());
    rec.project = Some("/home/ana/src/a-very-long/path/to/the/project".to_owned());
    rec.source_path = Some("/p/mix.jsonl".to_owned());
    rec.input_tokens = 1_234_567;
    rec.duration_ms = Some(2_508_000);
    rec.usage = vec![
        call("msg:a", "claude-opus-4", false, 900_000, 1_000),
        call("msg:b", "claude-opus-4", false, 300_000, 1_000),
        call("msg:c", "claude-3-5-haiku", false, 30_000, 500),
        call("msg:d", "claude-sonnet-4", true, 100_000, 2_000),
    ];
    save_native(&mut store, &rec, &[], "2025-07-14T05:00:01.000Z");
    let l = load(&store, "mix", 0).unwrap().unwrap();
    let models: Vec<(&str, bool)> = l
        .detail
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.sidechain))
        .collect();
    assert_eq!(
        models,
        [
            ("claude-opus-4", false),
            ("claude-sonnet-4", true),
            ("claude-3-5-haiku", false)
        ],
        "most tokens first, the inline sub-agents' part apart"
    );
    assert_eq!(l.detail.models[0].calls, 2);
    assert_eq!(l.detail.models[0].total(), 1_202_000);
    let html = render(&l).into_string();
    let facts = &html[html.find(r#"id="facts""#).unwrap()..];
    let facts = &facts[..facts.find("</dl>").unwrap()];
    assert!(
        facts.contains(r#"<li data-model="claude-opus-4"><span class="model">claude-opus-4</span> <span class="muted">90% · 1,202,000 tokens · 2 calls</span></li>"#),
        "{facts}"
    );
    assert!(
        facts.contains(r#"data-sidechain="true""#) && facts.contains("· inline sub-agents"),
        "{facts}"
    );
    assert!(facts.contains("1,234,567 in"), "{facts}");
    assert!(facts.contains(">41 m 48 s</dd>"), "{facts}");
    assert!(
        facts.contains(">/home/ana/src/a-very-long/path/to/the/project</dd>"),
        "{facts}"
    );
    assert!(facts.contains("1.0.51"), "{facts}");
    // A session with no stored calls names its row's model.
    let mut bare = Session::new("bare", "2025-07-14T05:00:00.000Z", "completed");
    bare.model = Some("gpt-5-codex".to_owned());
    bare.source_path = Some("/p/bare.jsonl".to_owned());
    save_native(&mut store, &bare, &[], "2025-07-14T05:00:01.000Z");
    let html = page(&store, "bare");
    assert!(
        html.contains(r#"<dd class="wide" id="models">gpt-5-codex</dd>"#),
        "{html}"
    );
}

#[test]
fn a_parent_only_its_sub_agents_named_is_not_imported_rather_than_lost() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    // A sub-agent's own file names a parent whose file was never imported:
    // the store holds the parent as a placeholder (Note [Parents not
    // imported]), started long ago, with no heartbeat.
    let mut sub = Session::new("agent-0f", "2024-01-02T03:04:05.000Z", "completed");
    sub.parent_id = Some("gone-parent".to_owned());
    sub.agent = Some("claude-code".to_owned());
    sub.source_path = Some("/p/gone-parent/subagents/agent-0f.jsonl".to_owned());
    save_native(&mut store, &sub, &[], "2024-01-02T03:04:06.000Z");
    let row = query::session(&store, "gone-parent")
        .unwrap()
        .unwrap()
        .session;
    assert!(row.not_imported && !row.lost, "{row:?}");
    assert_eq!(row.shown_status, "not_imported");
    let html = page(&store, "gone-parent");
    assert!(html.contains(r#"id="not-imported""#), "{html}");
    assert!(!html.contains(r#"id="lost""#), "{html}");
    assert!(!html.contains("no heartbeat"), "{html}");
    // Not counted among the sessions stored before masking, nor as lost.
    assert_eq!(
        agentshape_store::secrets::unmasked_sessions(&store).unwrap(),
        0
    );
    let lost = query::SessionFilter {
        status: Some("lost".to_owned()),
        ..query::SessionFilter::default()
    };
    assert!(query::sessions(&store, &lost).unwrap().is_empty());
    let not_imported = query::SessionFilter {
        status: Some("not_imported".to_owned()),
        ..query::SessionFilter::default()
    };
    let ids: Vec<String> = query::sessions(&store, &not_imported)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["gone-parent"]);
    // A real run that stopped answering is still lost.
    let mut run = Session::new("run-1", "2024-01-02T03:04:05.000Z", "running");
    run.agent = Some("claude-code".to_owned());
    store.write_session(&run).unwrap();
    let row = query::session(&store, "run-1").unwrap().unwrap().session;
    assert!(row.lost && !row.not_imported, "{row:?}");
    // Importing the parent's file ends it.
    let mut parent = Session::new("gone-parent", "2024-01-02T03:00:00.000Z", "completed");
    parent.agent = Some("claude-code".to_owned());
    parent.source_path = Some("/p/gone-parent.jsonl".to_owned());
    save_native(&mut store, &parent, &[], "2024-01-02T03:04:07.000Z");
    let row = query::session(&store, "gone-parent")
        .unwrap()
        .unwrap()
        .session;
    assert_eq!(row.shown_status, "completed");
}

#[test]
fn a_task_call_shows_its_sub_agents_tokens_and_cost_beside_the_link() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut main = Session::new("t-main", "2025-07-14T05:00:00.000Z", "completed");
    main.agent = Some("claude-code".to_owned());
    main.source_path = Some("/p/t-main.jsonl".to_owned());
    let rows = vec![
        native_row(
            1,
            None,
            json!({"type": "tool_use", "id": "toolu_1", "name": "Task",
                   "input": {"description": "Explore the logs", "prompt": "look"}}),
        ),
        native_row(
            2,
            None,
            json!({"type": "sub_agent", "agent_id": "a1b2", "tool_use_id": "toolu_1"}),
        ),
    ];
    save_native(&mut store, &main, &rows, "2025-07-14T05:00:01.000Z");
    let mut sub = Session::new("agent-a1b2", "2025-07-14T05:01:00.000Z", "completed");
    sub.parent_id = Some("t-main".to_owned());
    sub.source_path = Some("/p/t-main/subagents/agent-a1b2.jsonl".to_owned());
    sub.input_tokens = 12_345;
    sub.output_tokens = 678;
    sub.cost_usd = Some(0.25);
    sub.cost_estimated = true;
    save_native(&mut store, &sub, &[], "2025-07-14T05:01:00.000Z");
    let l = load(&store, "t-main", 0).unwrap().unwrap();
    let html = render(&l).into_string();
    let call = row_html(&html, l.transcript[0].id);
    assert!(
        call.contains(r#"<a class="child" href="/sessions/agent-a1b2">its session</a>"#),
        "{call}"
    );
    assert!(
        call.contains(
            r#"<span class="muted child-facts">12,345 in / 678 out · $0.2500 <abbr class="est""#
        ),
        "{call}"
    );
}
