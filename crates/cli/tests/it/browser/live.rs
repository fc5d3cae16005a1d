//! A session seen live in a browser: `serve` runs, the sessions list is open,
//! then `run` starts in another process with a fake agent whose lines the
//! test releases one at a time (Note [Browser waits]).

use serde_json::Value;

use super::{
    Browser, GatedRun, assistant_text, serve, tool_result, tool_use, transcript, valid_output,
};

/// One `#transcript .line`: (feed id, kind, text content, holds a `<details>`).
#[derive(Debug, Clone, PartialEq)]
struct Line {
    feed_id: i64,
    kind: String,
    text: String,
    details: bool,
}

const LINES_JS: &str = r"
const root = document.querySelector('#transcript');
if (!root) return null;
return Array.from(root.querySelectorAll('.line')).map((l) => ({
  feed_id: l.dataset.feedId, kind: l.dataset.kind, text: l.textContent,
  details: l.querySelector('details') !== null,
}));";

fn lines(browser: &Browser) -> Vec<Line> {
    let v = browser.wait_js("#transcript", LINES_JS);
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| Line {
            feed_id: l["feed_id"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("a .line without a numeric data-feed-id: {l}")),
            kind: l["kind"].as_str().unwrap_or_default().to_owned(),
            text: l["text"].as_str().unwrap_or_default().to_owned(),
            details: l["details"] == Value::Bool(true),
        })
        .collect()
}

/// Which of `markers` the lines show, each with the index of its line, in
/// line order.
fn markers_seen(lines: &[Line], markers: &[&str]) -> Vec<(usize, String)> {
    let mut seen: Vec<(usize, String)> = markers
        .iter()
        .filter_map(|m| {
            lines
                .iter()
                .position(|l| l.text.contains(m))
                .map(|i| (i, (*m).to_owned()))
        })
        .collect();
    seen.sort();
    seen
}

/// Feed ids strictly increase down the page: feed order, no duplicate.
fn assert_feed_order(lines: &[Line]) {
    assert!(
        lines.windows(2).all(|w| w[0].feed_id < w[1].feed_id),
        "lines out of feed order or repeated: {lines:#?}"
    );
}

#[test]
fn a_running_session_appears_live_and_its_lines_arrive_one_by_one_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/sessions");
    browser.find("table#sessions");

    let markers = [
        "marker-1 checking the proxy",
        "marker-2 curl -s proxy.lab",
        "marker-3 HTTP 200 from proxy.lab",
        "marker-4 checking the database",
        "marker-5 psql -c 'select 1'",
        "marker-6 one row",
        "marker-7 all checks done",
    ];
    let middle = vec![
        assistant_text(markers[0]),
        tool_use("toolu_live_1", markers[1]),
        tool_result("toolu_live_1", markers[2]),
        assistant_text(markers[3]),
        tool_use("toolu_live_2", markers[4]),
        tool_result("toolu_live_2", markers[5]),
        assistant_text(markers[6]),
    ];
    let n_middle = middle.len();
    let run = GatedRun::start(
        dir.path(),
        &db,
        "live-browser",
        &transcript(middle, &valid_output("live checks done")),
    );

    // The list page (already open) shows the new session as running.
    browser.wait_js(
        "a running row for live-browser in #sessions",
        r#"const r = document.querySelector('#sessions tbody tr[data-session-id="live-browser"]');
           return r !== null && r.dataset.status === 'running'
             && r.querySelector('a[href="/sessions/live-browser"]') !== null
             && r.querySelector('.status') !== null;"#,
    );
    // The list stays open in its tab; the session opens in another.
    let href = browser.js(
        r#"return document.querySelector('#sessions tbody tr[data-session-id="live-browser"] a[href="/sessions/live-browser"]').getAttribute('href');"#,
    );
    let list_tab = browser.new_tab();
    browser.goto(href.as_str().unwrap());
    browser.wait_js(
        "#session running",
        r#"const s = document.querySelector('#session[data-session-id="live-browser"]');
           return s !== null && s.dataset.status === 'running' && document.querySelector('#verdict[data-valid]') === null;"#,
    );

    // Line k+1 of the transcript (the init line is line 1) is written only
    // when gate k opens; the page must show it, after the ones before.
    let mut before: Vec<Line> = lines(&browser);
    for k in 1..=n_middle {
        run.release(k);
        let marker = markers[k - 1];
        let q = serde_json::to_string(marker).unwrap();
        browser.wait_js(
            &format!("line {marker:?} in #transcript"),
            &format!(
                "const t = document.querySelector('#transcript');
                 return t !== null && Array.from(t.querySelectorAll('.line')).some((l) => l.textContent.includes({q}));"
            ),
        );
        let now = lines(&browser);
        assert_feed_order(&now);
        assert!(
            now.len() > before.len() && now[..before.len()] == before[..],
            "lines arrive appended, never replaced or reordered:\nbefore {before:#?}\nnow {now:#?}"
        );
        let seen = markers_seen(&now, &markers);
        let names: Vec<&str> = seen.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(names, markers[..k], "markers in written order, none early");
        let status = browser.js("return document.querySelector('#session').dataset.status;");
        assert_eq!(status, "running", "still running after line {k}");
        before = now;
    }
    // Tool uses and results are collapsible.
    for (i, m) in markers_seen(&before, &markers) {
        if m.contains("curl")
            || m.contains("HTTP 200")
            || m.contains("psql")
            || m.contains("one row")
        {
            assert!(
                before[i].details,
                "tool line {m:?} has a <details>: {:?}",
                before[i]
            );
        }
    }
    assert!(
        before.iter().all(|l| !l.kind.is_empty()),
        "every line has data-kind"
    );

    // The result line: the page turns completed and shows the verdict
    // (it reloads itself, so the waits ride over a navigation).
    assert_eq!(run.finish(), Some(0));
    let valid = browser.wait_js(
        "#session completed with #verdict",
        r"const s = document.querySelector('#session');
           const v = document.querySelector('#verdict[data-valid]');
           return s !== null && s.dataset.status === 'completed' && v !== null && v.dataset.valid;",
    );
    assert_eq!(valid, "true");
    let after = lines(&browser);
    assert_feed_order(&after);
    let names: Vec<String> = markers_seen(&after, &markers)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        names, markers,
        "after the reload: every line once, in order"
    );
    browser.assert_clean("/sessions/live-browser");

    // The list page, never reloaded, shows the session's end too.
    browser.switch_to(list_tab);
    browser.wait_js(
        "the live-browser row completed in #sessions",
        r#"const r = document.querySelector('#sessions tbody tr[data-session-id="live-browser"]');
           return r !== null && r.dataset.status === 'completed'
             && r.querySelector('.status').textContent.includes('completed');"#,
    );
    browser.assert_clean("/sessions");
}
