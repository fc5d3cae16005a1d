//! The playground in a real browser: a broken JSON reply shows the method
//! that won, its repairs and exactly one winning candidate; a value that
//! breaks the profile's schema lists the error and highlights the value at
//! its path.

use serde_json::Value;

use super::{Browser, serve};

/// Paste `text` into `#input` (one `input` event, as a paste does), then
/// press `#run`.
pub(crate) fn paste_and_run(browser: &Browser, text: &str) {
    browser.find("#input");
    browser.js_with(
        "const i = document.querySelector('#input');
         i.focus();
         i.value = arguments[0];
         i.dispatchEvent(new Event('input', { bubbles: true }));
         return true;",
        vec![Value::String(text.to_owned())],
    );
    browser.click("#run");
}

/// Choose `value` in the `<select>` `css` (waiting for the option to exist:
/// the page may fill its selects from the API).
pub(crate) fn choose(browser: &Browser, css: &str, value: &str) {
    let q = serde_json::to_string(&format!("{css} option[value=\"{value}\"]")).unwrap();
    browser.wait_js(
        &format!("option {value:?} in {css}"),
        &format!("return document.querySelector({q}) !== null;"),
    );
    let el = browser.find(css);
    browser.select_el(&el, value);
}

const BROKEN: &str = "Sure, here is the report:\n\
{'summary': 'disk almost full', 'events': [{'level': 'warning', 'message': 'disk at 91%',},], \
'escalation': {'needed': False}, 'services_checked': [],}\nLet me know if you need more.";

const SCHEMA_INVALID: &str = r#"{"summary": "one bad level", "events": [{"level": "loud", "message": "m"}], "escalation": {"needed": false}, "services_checked": []}"#;

#[test]
fn the_playground_shows_method_repairs_candidates_and_highlighted_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("playground.db");
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/playground");
    browser.find("#result[data-state]");

    // A broken reply, no schema: repaired.
    choose(&browser, "#profile", "");
    paste_and_run(&browser, BROKEN);
    let state = browser.wait_js(
        "a result for the broken reply",
        "const r = document.querySelector('#result');
         const m = document.querySelector('#method');
         return r && m && m.textContent.trim() === 'repaired' && r.dataset.state !== 'idle' ? r.dataset.state : null;",
    );
    assert_eq!(state, "ok");
    let repairs = browser.js("return document.querySelectorAll('#repairs li').length;");
    assert!(repairs.as_u64().unwrap() > 0, "repairs listed");
    let won = browser.js(
        "return Array.from(document.querySelectorAll('#candidates li[data-method]')).map((c) => [c.dataset.method, c.dataset.won]);",
    );
    let winners: Vec<&Value> = won
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c[1] == "true")
        .collect();
    assert_eq!(winners.len(), 1, "exactly one candidate won: {won}");
    assert!(
        won.as_array()
            .unwrap()
            .iter()
            .all(|c| c[1] == "true" || c[1] == "false"),
        "{won}"
    );
    let value = browser.js("return document.querySelector('#value').textContent;");
    assert!(value.as_str().unwrap().contains("disk at 91%"), "{value}");

    // A value the claude-ops schema rejects: the error and its highlight share the path.
    choose(&browser, "#profile", "claude-ops");
    paste_and_run(&browser, SCHEMA_INVALID);
    browser.wait_js(
        "#result invalid",
        "const r = document.querySelector('#result'); return r && r.dataset.state === 'invalid';",
    );
    let paths = browser.js(
        "return Array.from(document.querySelectorAll('#errors li[data-path]')).map((e) => [e.dataset.path, e.dataset.kind || '']);",
    );
    assert!(
        paths
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p[0] == "/events/0/level"),
        "an error at /events/0/level: {paths}"
    );
    let hl = browser.js(
        r#"const h = document.querySelector('#value .hl[data-path="/events/0/level"]');
           return h ? h.textContent : null;"#,
    );
    assert!(
        hl.as_str().is_some_and(|t| t.contains("loud")),
        "the value at /events/0/level is highlighted: {hl}"
    );

    // The examples are one click away: each fills `#input` and is extracted.
    let examples = browser.js(
        "return Array.from(document.querySelectorAll('.example[data-example]')).map((e) => e.dataset.example);",
    );
    let examples = examples.as_array().unwrap();
    assert!(!examples.is_empty(), "no .example buttons");
    for name in examples {
        let css = format!(".example[data-example={name}]");
        let before = browser.js("return document.querySelector('#input').value;");
        browser.click(&css);
        let state = browser.wait_js(
            &format!("example {name} extracted"),
            &format!(
                "const i = document.querySelector('#input');
                 const r = document.querySelector('#result');
                 return i.value !== '' && i.value !== {before} && ['ok', 'invalid', 'none'].includes(r.dataset.state)
                   ? r.dataset.state : null;"
            ),
        );
        assert!(state.is_string(), "{name}: {state}");
    }
    browser.assert_clean("/playground");
}
