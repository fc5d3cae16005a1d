//! Issue 31 item 3 in a real browser: `serve --alerts` fires for a failed
//! session and delivers to a local webhook receiver; the Alerts page (from
//! the nav) lists the firing with its delivery states and a link to the
//! session, the overview counts it, no webhook credential is on any page,
//! and nothing breaks the page's CSP.

use agentshape_store::{Session, SqliteStore, Store, time};
use agentshape_testkit::webhook::Receiver;

use super::{Browser, serve};

#[test]
fn the_alerts_page_lists_a_firing_with_its_deliveries_and_links_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let rules = dir.path().join("alerts.toml");
    std::fs::write(
        &rules,
        format!(
            "[settings]\ninterval = \"100ms\"\n\n[[rule]]\nname = \"timeouts\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"http://ops:hunter2@127.0.0.1:{}/hook?token=t0k3n\" }}\nlog = true\n",
            rx.port()
        ),
    )
    .unwrap();
    let now = time::now_ms();
    let mut r = Session::new("slow-1", &time::format_ms(now - 5_000), "timeout");
    r.ended_at = Some(time::format_ms(now));
    r.error_category = Some("timeout".into());
    SqliteStore::open(&db).unwrap().write_session(&r).unwrap();
    let server = serve(&db, &["--alerts", rules.to_str().unwrap()]);
    crate::support::wait_until("the webhook", super::GUARD, || rx.requests().len() == 1);
    let mut browser = Browser::open(&server.base);
    browser.goto("/");
    browser.click("header nav a[href='/alerts']");
    browser.wait_js(
        "the alerts table",
        "return document.querySelector('table#alerts tbody tr[data-firing-id]') !== null;",
    );
    let row = browser.js("const tr = document.querySelector('table#alerts tbody tr');
         return [tr.innerText, tr.querySelector('a[href^=\"/sessions/\"]').getAttribute('href'),
                 [...tr.querySelectorAll('li[data-state]')].map(li => li.dataset.state)];");
    let text = row[0].as_str().unwrap();
    assert!(text.contains("timeouts"), "{text}");
    assert!(text.contains("session slow-1 failed: timeout"), "{text}");
    assert!(
        text.contains(&format!("http://127.0.0.1:{}/hook", rx.port())),
        "{text}"
    );
    assert_eq!(row[1], "/sessions/slow-1");
    assert_eq!(row[2], serde_json::json!(["delivered", "delivered"]));
    let all = browser
        .js("return document.documentElement.outerHTML + document.body.innerText;")
        .as_str()
        .unwrap()
        .to_owned();
    for secret in ["hunter2", "t0k3n", "ops:"] {
        assert!(!all.contains(secret), "{secret}");
    }
    browser.assert_clean("/alerts");
    browser.click("table#alerts a[href='/sessions/slow-1']");
    browser.wait_js(
        "the session page",
        "return location.pathname === '/sessions/slow-1';",
    );
    browser.goto("/");
    let summary = browser.js("return document.querySelector('#alerts-summary a').textContent;");
    assert_eq!(summary, "1 alert fired");
    browser.assert_clean("/");
}
