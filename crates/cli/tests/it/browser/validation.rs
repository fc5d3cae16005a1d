//! Validation analytics on the dashboard, in a real browser (issue 31 item
//! 2): the overview's rejection-rate chart and "why outputs fail" table
//! over sessions `agentshape hook stop` wrote, a failing path's link to
//! the sessions that failed there, and the list's verdict filter.

use std::path::Path;

use serde_json::json;

use super::hooks::{HOOKED, fill_hooked};
use super::{Browser, serve};

/// A second session, blocked once for a bad `action` and never retried.
const REJECTED: &str = "5e1f0c2a-7b3d-4c8e-9a10-0000000000c2";

fn rejected(db: &Path, state: &Path) {
    let input = json!({"session_id": REJECTED, "transcript_path": "/home/ana/.claude/projects/p/r.jsonl",
        "cwd": "/home/ana/src/loop", "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": r#"{"action": "dance", "reasoning": "why not", "confidence": 40}"#});
    let out = crate::support::agentshape()
        .args(["hook", "stop", "--profile", "claude-loop", "--store"])
        .arg(db)
        .env("AGENTSHAPE_STATE_DIR", state)
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    crate::support::assert_exit(&out, 0);
}

fn listed(browser: &Browser) -> Vec<String> {
    let mut v: Vec<String> = browser
        .js("return Array.from(document.querySelectorAll('table#sessions tbody tr')).map((tr) => tr.dataset.sessionId);")
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_overview_charts_rejections_and_links_why_outputs_fail_to_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("validation.db");
    let state = dir.path().join("state");
    fill_hooked(&db, &state);
    rejected(&db, &state);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/");
    browser.find("#rejection-chart svg");
    // 30 days; one (today, or yesterday just after midnight) with two
    // outputs checked, one rejected: the only bar.
    assert_eq!(
        browser.js("return document.querySelectorAll('#rejection-chart g.day').length;"),
        json!(30)
    );
    assert_eq!(
        browser.js("return [...document.querySelectorAll('#rejection-chart g.day')].filter(g => g.dataset.checked !== '0').map(g => [g.dataset.checked, g.dataset.rejected, g.querySelectorAll('rect.reject').length]);"),
        json!([["2", "1", 1]])
    );
    // `/action` failed in the hooked session's second try and in the
    // rejected one's only answer.
    let row = browser.js(
        "const tr = document.querySelector('#why-fail tr[data-path=\"/action\"]'); \
         return tr && [tr.dataset.kind, tr.dataset.count, tr.querySelector('a.example').textContent];",
    );
    assert_eq!(row, json!(["enum", "2", REJECTED]), "{row}");
    browser.click("#why-fail tr[data-path=\"/action\"] a.path");
    browser.wait_js(
        "the sessions that failed at /action",
        "return location.pathname === '/sessions' && location.search.includes('failing_path=%2Faction');",
    );
    browser.find("table#sessions tbody tr[data-session-id]");
    let mut both = vec![HOOKED.to_owned(), REJECTED.to_owned()];
    both.sort();
    assert_eq!(listed(&browser), both);
    // Narrowed to the valid ones: only the session a retry fixed.
    let el = browser.find("select[name=verdict]");
    browser.select_el(&el, "valid");
    browser.click("#filters button[type=submit]");
    browser.wait_js(
        "the valid list",
        "return location.search.includes('verdict=valid');",
    );
    browser.find("table#sessions tbody tr[data-session-id]");
    assert_eq!(listed(&browser), [HOOKED.to_owned()]);
    assert_eq!(
        browser.js("return document.querySelector('input[name=failing_path]').value;"),
        json!("/action")
    );
    browser.goto("/sessions?verdict=invalid");
    browser.find("table#sessions tbody tr[data-session-id]");
    assert_eq!(listed(&browser), [REJECTED.to_owned()]);
    browser.assert_clean("overview and sessions with validation filters");
}
