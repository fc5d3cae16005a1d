use serde_json::json;

use super::*;

fn row(id: i64, kind: &str, body: Value) -> Row {
    Row {
        id,
        session_id: "s".into(),
        kind: kind.into(),
        created_at: String::new(),
        body,
    }
}

fn ev(id: i64, event: &Value) -> Row {
    row(id, "event", json!({"kind": "event", "event": event}))
}

fn text(id: i64, t: &str) -> Row {
    ev(id, &json!({"type": "text", "text": t}))
}

/// The HTML of row `id`'s line (up to the next row's).
fn row_html(html: &str, id: i64) -> &str {
    let at = html
        .find(&format!(r#"id="row-{id}""#))
        .unwrap_or_else(|| panic!("no row-{id} in {html}"));
    let start = html[..at].rfind('<').unwrap();
    let end = html[at..]
        .find(r#"<div id="row-"#)
        .map_or(html.len(), |e| e + at);
    &html[start..end]
}

#[test]
fn one_line_per_row_in_order() {
    let rows = vec![
        row(1, "started", json!({"tier": 1})),
        text(2, "hello"),
        ev(
            3,
            &json!({"type": "tool_use", "name": "Bash", "input": {"command": "ls\n-la"}}),
        ),
        ev(
            4,
            &json!({"type": "tool_result", "is_error": false, "content": null}),
        ),
        row(5, "partial", json!({"value": {"a": 1}})),
        row(6, "partial", json!({"value": {"a": 2}})),
        row(7, "feed_gap", json!({"dropped": 7})),
        row(8, "ended", json!({"status": "completed"})),
    ];
    let html = lines(&rows).into_string();
    let ids: Vec<usize> = (1..=8)
        .map(|i| html.find(&format!(r#"data-feed-id="{i}""#)).unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{html}");
    assert!(
        html.contains(
            r#"data-kind="event" data-type="text"><div class="md"><p>hello</p></div></div>"#
        ),
        "{html}"
    );
    assert!(html.contains("7 lines not shown (feed gap)"), "{html}");
    // Only the latest partial object shows.
    assert!(html.contains(r#"hidden data-feed-id="5""#), "{html}");
    assert!(!html.contains(r#"hidden data-feed-id="6""#), "{html}");
    // A call without an id: its command, and no result on this page (the
    // result names no call, so it is drawn on its own).
    assert!(
        row_html(&html, 3).contains("<code class=\"cmd\">ls\n-la</code>"),
        "{html}"
    );
    assert!(row_html(&html, 3).contains("no result"), "{html}");
    assert!(row_html(&html, 4).contains("(content not kept)"), "{html}");
}

#[test]
fn a_hook_row_says_its_verdict_blocks_and_errors() {
    let r = row(
        3,
        "hook",
        json!({"hook_id": 1, "event": "SubagentStop", "verdict": "blocked", "blocks": 2,
               "agent_id": "a1", "agent_type": "reviewer", "method": "none",
               "errors": [{"instance_path": "/a"}, {"instance_path": "/b"}], "reason": "fix"}),
    );
    let html = lines(&[r]).into_string();
    assert!(html.contains("class=\"hook bad\""), "{html}");
    assert!(html.contains("SubagentStop · reviewer · "), "{html}");
    assert!(
        html.contains("blocked</span> · block 2 · 2 errors"),
        "{html}"
    );
}

/// Note [Calls and their results]: the result and the tool error are
/// drawn in the call's line; their own lines stay, hidden, with the error
/// class and a link to the call.
#[test]
fn a_call_is_drawn_with_its_result_and_its_error() {
    let rows = vec![
        ev(
            1,
            &json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}),
        ),
        ev(
            2,
            &json!({"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/a"}}),
        ),
        ev(
            3,
            &json!({"type": "tool_result", "tool_use_id": "t2", "is_error": false, "content": "file text"}),
        ),
        ev(
            4,
            &json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "Exit code 2\nmake: *** no rule"}),
        ),
        ev(
            5,
            &json!({"type": "tool_error", "tool_use_id": "t1", "name": "Bash"}),
        ),
        // A second answer to t1, and a result whose call is on another page.
        ev(
            6,
            &json!({"type": "tool_result", "tool_use_id": "t1", "is_error": false, "content": "again"}),
        ),
        ev(
            7,
            &json!({"type": "tool_result", "tool_use_id": "elsewhere", "is_error": false, "content": "orphan"}),
        ),
        // A call whose result is on the next page: its error row shows.
        ev(
            8,
            &json!({"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "x"}}),
        ),
        ev(
            9,
            &json!({"type": "tool_error", "tool_use_id": "t3", "name": "Bash"}),
        ),
    ];
    let html = lines(&rows).into_string();
    let call = row_html(&html, 1);
    assert!(
        call.contains(r#"<span class="exit failed">exit 2</span>"#),
        "{call}"
    );
    assert!(call.contains("make: *** no rule"), "{call}");
    assert!(!call.contains(" hidden"), "{call}");
    assert!(row_html(&html, 2).contains("file text"), "{html}");
    let result = row_html(&html, 4);
    assert!(
        result.contains(r#"class="line k-event t-tool_result err folded" hidden"#),
        "{result}"
    );
    assert!(
        result.contains(r##"<a href="#row-1">shown with its call</a>"##),
        "{result}"
    );
    assert!(result.contains("Exit code 2…"), "{result}");
    assert!(
        row_html(&html, 5).contains(r#"t-tool_error err folded" hidden"#),
        "{html}"
    );
    assert!(row_html(&html, 3).contains("folded\" hidden"), "{html}");
    for id in [6, 7, 9] {
        assert!(
            !row_html(&html, id).contains("hidden"),
            "{}",
            row_html(&html, id)
        );
    }
}

#[test]
fn a_task_call_links_its_sub_agent_and_a_progress_run_is_one_line() {
    let mut rows = vec![ev(
        1,
        &json!({"type": "tool_use", "id": "toolu_2", "name": "Task", "input": {"description": "Explore", "prompt": "go"}}),
    )];
    for id in 2..72 {
        rows.push(ev(
            id,
            &json!({"type": "sub_agent", "agent_id": "f00d", "tool_use_id": "toolu_2"}),
        ));
    }
    rows.push(ev(72, &json!({"type": "tool_result", "tool_use_id": "toolu_2", "is_error": false, "content": "# Report\n\ndone"})));
    let html = lines(&rows).into_string();
    assert!(
        row_html(&html, 1).contains(r#"href="/sessions/agent-f00d""#),
        "{html}"
    );
    assert!(row_html(&html, 1).contains("<h1>Report</h1>"), "{html}");
    let head = row_html(&html, 2);
    assert!(!head.contains("hidden"), "{head}");
    assert!(
        head.contains("70 progress updates from sub-agent <code>f00d</code>"),
        "{head}"
    );
    for id in 3..72 {
        assert!(row_html(&html, id).contains("folded\" hidden"), "row {id}");
    }
    let shown = html.matches("<div id=\"row-").count() - html.matches("\" hidden").count();
    assert_eq!(shown, 2, "the call and the run");
}

#[test]
fn empty_replies_are_not_drawn_and_the_model_shows_on_a_drawn_line() {
    let mut empty = text(1, "  ");
    empty.body["model"] = json!("m1");
    let mut next = text(2, "**Done.** See `x`");
    next.body["model"] = json!("m1");
    let html = lines(&[empty, next]).into_string();
    assert!(row_html(&html, 1).contains("folded\" hidden"), "{html}");
    assert!(!row_html(&html, 1).contains("class=\"model\""), "{html}");
    let done = row_html(&html, 2);
    assert!(
        done.contains(r#"<span class="model" title="model of this turn">m1</span>"#),
        "{done}"
    );
    assert!(done.contains("<strong>Done.</strong>"), "{done}");
    assert!(!done.contains("**"), "{done}");
}

#[test]
fn markdown_in_text_and_thinking_and_plain_prompts() {
    let rows = vec![
        ev(
            1,
            &json!({"type": "user_text", "text": "# not a heading\n**kept**"}),
        ),
        text(2, "# Title\n\n## Part\n\n- **a**\n- b"),
        ev(3, &json!({"type": "thinking", "text": "Maybe **this**"})),
    ];
    let html = lines(&rows).into_string();
    assert!(
        row_html(&html, 1).contains("# not a heading\n**kept**"),
        "{html}"
    );
    let t = row_html(&html, 2);
    assert!(
        t.contains("<h1>Title</h1>") && t.contains("<h2>Part</h2>"),
        "{t}"
    );
    assert!(t.contains("<li><strong>a</strong></li>"), "{t}");
    let th = row_html(&html, 3);
    assert!(th.contains(r#"<details class="thinking">"#), "{th}");
    assert!(th.contains("<strong>this</strong>"), "{th}");
}

/// The page's payloads (the session page's tests, `hostile.rs`) and the
/// Markdown-borne ones, in every row type that renders Markdown or a tool
/// view: no tag, handler or `javascript:` link comes out of them.
#[test]
fn hostile_text_in_every_view_is_inert() {
    let payloads = [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "\"><svg onload=alert(1)>",
        "![i](javascript:alert(1))",
        "<a href=\"data:text/html,<script>alert(1)</script>\">d</a>",
        "<javascript:alert(1)>",
        "```html\n<script>alert(1)</script>\n```",
    ];
    let mut rows = Vec::new();
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    for p in payloads {
        rows.push(text(next(), p));
        rows.push(ev(next(), &json!({"type": "thinking", "text": p})));
        for (name, input) in [
            ("Bash", json!({"command": p, "description": p})),
            (
                "Edit",
                json!({"file_path": p, "old_string": p, "new_string": p}),
            ),
            ("Write", json!({"file_path": p, "content": p})),
            (
                "apply_patch",
                json!(format!(
                    "*** Begin Patch\n*** Update File: {p}\n-{p}\n+{p}\n*** End Patch"
                )),
            ),
            ("Read", json!({"file_path": p})),
            ("TodoWrite", json!({"todos": [{"content": p, "status": p}]})),
            ("WebFetch", json!({"url": p, "prompt": p})),
            (
                "Task",
                json!({"description": p, "prompt": p, "subagent_type": p}),
            ),
            (p, json!({"x": p})),
        ] {
            let call = format!("c{}", next());
            rows.push(ev(
                next(),
                &json!({"type": "tool_use", "id": call, "name": name, "input": input}),
            ));
            rows.push(ev(
                next(),
                &json!({"type": "tool_result", "tool_use_id": call, "is_error": true, "content": p}),
            ));
        }
        rows.push(ev(
            next(),
            &json!({"type": "sub_agent", "agent_id": p, "tool_use_id": "c1"}),
        ));
        rows.push(ev(
            next(),
            &json!({"type": "sub_agent", "agent_id": p, "tool_use_id": "c1"}),
        ));
    }
    let html = lines(&rows).into_string();
    let mut rest = html.as_str();
    while let Some(start) = rest.find('<') {
        let len = rest[start..].find('>').expect("a closed tag");
        let tag = rest[start + 1..start + len].to_ascii_lowercase();
        rest = &rest[start + len + 1..];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '/'])
            .next()
            .unwrap_or("")
            .to_owned();
        assert!(
            !["script", "img", "svg", "iframe", "style", "input"].contains(&name.as_str()),
            "<{tag}>"
        );
        let outside: String = tag.split('"').step_by(2).collect();
        for attr in outside.split_whitespace().skip(1) {
            assert!(
                !attr.starts_with("on") && !attr.starts_with("style"),
                "{attr} in <{tag}>"
            );
        }
        if let Some(h) = tag.split("href=\"").nth(1) {
            assert!(
                h.starts_with("/sessions/") || h.starts_with("#row-"),
                "<{tag}>"
            );
        }
    }
}

#[test]
fn an_inline_sub_agent_of_claude_1_0_is_linked_by_its_first_prompt() {
    let mut side = ev(2, &json!({"type": "user_text", "text": "Find the file"}));
    side.body["sidechain"] = json!(true);
    side.body["uuid"] = json!("s1");
    let mut other = ev(4, &json!({"type": "user_text", "text": "Find the file"}));
    other.body["uuid"] = json!("m9");
    let rows = vec![
        ev(
            1,
            &json!({"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"description": "find", "prompt": "Find the file"}}),
        ),
        side,
        ev(
            3,
            &json!({"type": "tool_use", "id": "toolu_u", "name": "Task", "input": {"description": "other", "prompt": "no such prompt"}}),
        ),
        other,
    ];
    let html = lines(&rows).into_string();
    assert!(
        row_html(&html, 1).contains(r#"href="/sessions/agent-s1""#),
        "{html}"
    );
    assert!(!row_html(&html, 3).contains("class=\"child\""), "{html}");
}
