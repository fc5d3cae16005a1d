//! Every page loads in a real browser with no CSP violation, no JS error and
//! no console error (Note [Browser problems]), on a store filled by real
//! replays of the bundled examples.

use super::{Browser, replay, serve};

/// (path, an element the page has once its scripts have run).
const PAGES: &[(&str, &str)] = &[
    ("/", "#by-status"),
    ("/sessions", "table#sessions tbody tr[data-session-id]"),
    ("/sessions/pages-healthy", "#session[data-status]"),
    ("/sessions/pages-malformed", "#session[data-status]"),
    ("/events", "table#events"),
    ("/memories", "table#memories"),
    ("/alerts", "#alerts-empty"),
    ("/builder", "#lint .provider[data-provider]"),
    ("/playground", "#result[data-state]"),
    // An unknown id is a 404 page, clean too.
    ("/sessions/no-such-session", "h1"),
];

#[test]
fn every_page_loads_with_no_csp_violation_and_no_console_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    let logs = dir.path().join("logs");
    replay(&db, &logs, "healthy-structured.ndjson", "pages-healthy");
    replay(&db, &logs, "malformed-lines.ndjson", "pages-malformed");
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    std::fs::copy(
        crate::support::repo_root().join("schemas/agent-response.json"),
        schemas.join("agent-response.json"),
    )
    .unwrap();
    let server = serve(&db, &["--schemas", schemas.to_str().unwrap()]);
    let mut browser = Browser::open(&server.base);
    let mut failures = Vec::new();
    for (path, ready) in PAGES {
        browser.goto(path);
        browser.find(ready);
        let problems = browser.problems(&[
            // The 404 page's own status line, not a page fault.
            if *path == "/sessions/no-such-session" {
                "status of 404"
            } else {
                "\u{0}"
            },
        ]);
        if !problems.is_empty() {
            failures.push(format!("{path}: {problems:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The overview's cost chart is drawn server-side as inline SVG: in a real
/// browser its bars must render (an SVG element written as an HTML void tag,
/// `<line>` without `/>`, swallows everything after it and draws nothing).
#[test]
fn the_cost_chart_renders_its_bars() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chart.db");
    let logs = dir.path().join("logs");
    replay(&db, &logs, "healthy-structured.ndjson", "chart-healthy");
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/");
    browser.find("#cost-chart svg");
    let drawn = browser.js(
        "return Array.from(document.querySelectorAll('#cost-chart svg rect')).filter((r) => {
           const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0;
         }).length;",
    );
    assert!(
        drawn.as_u64().unwrap() > 0,
        "no bar of #cost-chart is drawn for a day with a cost"
    );
    browser.assert_clean("/");
}
