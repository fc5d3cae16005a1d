//! Issue 29 in a real browser: a session whose transcript holds the planted
//! secrets of core's corpus, stored masked (the store door) and another
//! stored raw with `--no-mask` (masked by the page door): no planted secret
//! in any page as the browser has it (text and markup), the masks shown,
//! the session's count on its page and in the list, and the overview's
//! "Secrets" panel linking to the session.

use super::{Browser, serve};
use crate::secrets_doors::run;
use crate::support::assert_exit;
use crate::support::planted::{GH, leaky_transcript, planted};

#[test]
fn no_planted_secret_reaches_the_browser_and_counts_and_the_panel_show() {
    let cases = planted();
    let dir = tempfile::tempdir().unwrap();
    let t = leaky_transcript(dir.path(), &cases);
    let db = dir.path().join("a.db");
    assert_exit(&run(dir.path(), &db, &t, &[]), 0);
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    let out = crate::support::agentshape()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(&t)
        .args(["--session-id", "stored-raw", "--no-mask", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(&raw)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    let page_text = |b: &Browser| {
        b.js("return document.documentElement.outerHTML + '\\n' + document.body.innerText;")
            .as_str()
            .unwrap()
            .to_owned()
    };
    for path in [
        "/sessions/leaky",
        "/sessions/stored-raw",
        "/sessions",
        "/",
        "/events",
        "/memories",
    ] {
        browser.goto(path);
        browser.find("main");
        let text = page_text(&browser);
        for c in &cases {
            assert!(!text.contains(&c.secret), "{path}: {}", c.secret);
        }
        assert!(!text.contains(GH), "{path}");
    }
    browser.goto("/sessions/leaky");
    // The transcript (loaded by the page) shows masks.
    browser.wait_js(
        "masks in the transcript",
        "return document.body.innerText.includes('[REDACTED:');",
    );
    let text = page_text(&browser);
    for c in &cases {
        assert!(!text.contains(&c.secret), "transcript: {}", c.secret);
    }
    let n = browser.js("return document.querySelector('#secrets-masked').textContent;");
    assert!(
        n.as_str().unwrap().parse::<u64>().unwrap() >= cases.len() as u64,
        "{n}"
    );
    browser.goto("/sessions");
    browser.find("table#sessions tbody tr[data-session-id]");
    let badge =
        browser.js("return document.querySelectorAll('table#sessions abbr.secrets').length;");
    assert_eq!(
        badge.as_u64(),
        Some(1),
        "only the masked session is counted"
    );
    browser.goto("/");
    browser.find("table#secrets");
    let linked = browser.js(
        "return Array.from(document.querySelectorAll('table#secrets a')).some((a) => a.getAttribute('href') === '/sessions/leaky');",
    );
    assert_eq!(linked, serde_json::Value::Bool(true));
    browser.assert_clean("secrets pages");
}
