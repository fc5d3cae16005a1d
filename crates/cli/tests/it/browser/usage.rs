//! The dashboard's usage figures in a real browser (issue 39 §4): agent
//! files imported with `agentshape import` (the fixtures under
//! `tests/fixtures/native`, written in January 2026, long before "today"
//! on any machine running this), then the overview and the sessions list.
//!
//! The overview's default range ends at the day of the latest call, so
//! old history shows its cost, never "$0.00"; the sessions list's total
//! counts the same calls, so the two agree on the cost of everything.

use super::native::import_fixtures;
use super::{Browser, serve};

#[test]
fn old_history_has_a_cost_on_the_overview_and_the_list_totals_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("usage.db");
    import_fixtures(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);

    browser.goto("/");
    browser.find("#cost-chart svg");
    let o = browser.js(
        "const c = document.querySelector('#cost-chart');
         return { to: c.dataset.to, cost: Number(c.dataset.cost),
                  shown: document.querySelector('#range-total').textContent,
                  current: document.querySelector('#range .current').dataset.range,
                  models: Array.from(document.querySelectorAll('#by-model tbody tr')).map((r) => r.dataset.key),
                  agents: Array.from(document.querySelectorAll('#by-agent tbody tr')).map((r) => r.dataset.key),
                  projects: Array.from(document.querySelectorAll('#by-project tbody td.project')).map((td) => [td.textContent, td.title]),
                  drawn: Array.from(document.querySelectorAll('#cost-chart svg rect.bar')).filter((r) => r.getBoundingClientRect().height > 0).length };",
    );
    assert_eq!(o["current"], "30d", "{o}");
    assert_eq!(
        o["to"], "2026-01-07",
        "the window ends at the last call: {o}"
    );
    assert!(o["cost"].as_f64().unwrap() > 0.0, "{o}");
    let shown = o["shown"].as_str().unwrap();
    assert!(shown.starts_with('$') && !shown.starts_with("$0.00"), "{o}");
    assert!(o["drawn"].as_u64().unwrap() > 0, "{o}");
    for agent in ["claude-code", "codex", "gemini-cli"] {
        assert!(
            o["agents"].as_array().unwrap().iter().any(|a| a == agent),
            "{agent}: {o}"
        );
    }
    assert!(
        o["projects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p[1] != "")
            .all(|p| p[1].as_str().unwrap().ends_with(p[0].as_str().unwrap())),
        "a project shows the end of its path, the whole on hover: {o}"
    );

    // A range picked from the links stays in the URL.
    browser.click("#range a[data-range='all']");
    browser.wait_js("the whole range", "return location.search === '?range=all' && document.querySelector('#range .current')?.dataset.range === 'all';");
    let all = browser.js("return Number(document.querySelector('#cost-chart').dataset.cost);");

    // The list's total: every session, and the same cost as the overview's whole range.
    browser.goto("/sessions");
    browser.find("table#sessions tbody tr[data-session-id]");
    let t = browser.js(
        "const t = document.querySelector('#sessions-total');
         return { sessions: Number(t.dataset.sessions), cost: Number(t.dataset.cost),
                  tokens: Number(t.dataset.tokens), rows: document.querySelectorAll('table#sessions tbody tr').length,
                  verdicts: document.querySelectorAll('table#sessions th[data-col=verdict]').length };",
    );
    assert_eq!(t["sessions"], t["rows"], "{t}");
    assert!(t["tokens"].as_u64().unwrap() > 0, "{t}");
    assert!(
        (t["cost"].as_f64().unwrap() - all.as_f64().unwrap()).abs() < 1e-6,
        "{t} vs {all}"
    );
    assert_eq!(
        t["verdicts"], 0,
        "imports have no verdict: no validation columns: {t}"
    );

    // Claude Code by its short name, and a day with nothing.
    browser.goto("/sessions?agent=claude");
    browser.find("table#sessions tbody tr[data-session-id]");
    let agents = browser.js("return Array.from(document.querySelectorAll('table#sessions tbody td.agent')).map((td) => td.textContent);");
    assert!(
        agents
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a == "claude-code"),
        "{agents}"
    );
    browser.goto("/sessions?from=2026-01-08");
    browser.find("#sessions-empty");
    let none = browser.js("return document.querySelector('#sessions-total').dataset.sessions;");
    assert_eq!(none, "0");
    browser.assert_clean("usage figures");
}
