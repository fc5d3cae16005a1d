//! The Sessions list, the keys and the theme in a real browser (issue 41
//! §2): sub-agents nest under their parent (hidden until opened), the first
//! prompt is inside a 1,400 px window, `j`/`k` move between a session's
//! turns, `/` focuses the search, `?` opens the keys' help, and the theme
//! chosen in the nav flips `data-theme` and survives a reload.

use std::path::Path;

use agentshape_store::{NativeMark, Session, SqliteStore, Store, time};
use serde_json::{Value, json};

use super::native::{CLAUDE, SUB, fill_native};
use super::{Browser, serve};

/// The width the issue names: the first prompt must be visible in it.
const WIDE: u32 = 1400;

/// A session as wide as real ones get: a UUID, a deep project, several
/// models, a long first prompt.
const WIDE_ID: &str = "0b5f7e2a-93c4-4d1e-b8a6-2f71c9d0e4aa";
const PROMPT: &str = "Refactor the billing reconciliation job so that it streams invoices \
from the ledger instead of loading every month into memory, and keep the CSV export \
byte-identical";

fn add_wide_session(db: &Path) {
    let mut store = SqliteStore::open(db).unwrap();
    let start = time::now_ms() - 600_000;
    let mut r = Session::new(WIDE_ID, &time::format_ms(start), "completed");
    r.agent = Some("claude-code".into());
    r.model = Some("claude-opus-4-1-20250805, claude-sonnet-4-5-20250929, claude-haiku-4-5".into());
    r.project =
        Some("/home/ana/src/github.com/acme-corp/billing-platform/services/reconciliation".into());
    r.duration_ms = Some(7_380_000);
    r.input_tokens = 123_456_789;
    r.output_tokens = 9_876_543;
    r.cost_usd = Some(1234.5678);
    r.cost_estimated = true;
    r.summary = Some(PROMPT.into());
    r.source_path = Some(format!("/home/ana/.claude/projects/{WIDE_ID}.jsonl"));
    let mark = NativeMark {
        path: format!("/home/ana/.claude/projects/{WIDE_ID}.jsonl"),
        session_id: WIDE_ID.into(),
        agent: "claude-code".into(),
        dev: 1,
        inode: 2,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: time::now(),
        reset: false,
        expect_offset: None,
    };
    store.save_native(&r, &[], &mark).unwrap();
}

fn wide_window(browser: &mut Browser) {
    browser.cdp(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": WIDE, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
    );
}

/// Press `keys` as a person would, on the page's body.
fn press(browser: &Browser, keys: &str) {
    let body = browser.find("body");
    browser
        .rt
        .block_on(body.send_keys(keys))
        .unwrap_or_else(|e| panic!("press {keys:?}: {e}"));
}

#[test]
fn sub_agents_nest_under_their_parent_and_the_first_prompt_fits_1400_px() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("list.db");
    fill_native(&db);
    add_wide_session(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    wide_window(&mut browser);
    browser.goto("/sessions");
    browser.find("table#sessions tbody tr[data-session-id]");

    // The sub-agent's row is in its parent's family, after it, hidden.
    let shown = |b: &Browser| -> Value {
        b.js_with(
            "const parent = document.querySelector(`tr[data-session-id=\"${arguments[0]}\"]`);
             const sub = document.querySelector(`tr[data-session-id=\"${arguments[1]}\"]`);
             const fam = parent.closest('tbody');
             const r = (el) => el.getBoundingClientRect();
             return {
               same_family: sub.closest('tbody') === fam,
               after: !!(parent.compareDocumentPosition(sub) & Node.DOCUMENT_POSITION_FOLLOWING),
               visible: sub.getClientRects().length > 0,
               below: sub.getClientRects().length > 0 && r(sub).top >= r(parent).bottom - 1,
               label: (fam.querySelector('label.below') || {}).textContent || null,
               top_level: Array.from(document.querySelectorAll('#sessions tbody.family > tr:first-child'))
                 .map((tr) => tr.dataset.sessionId),
             };",
            vec![json!(CLAUDE), json!(SUB)],
        )
    };
    let before = shown(&browser);
    assert_eq!(before["same_family"], true, "{before}");
    assert_eq!(before["after"], true, "{before}");
    assert_eq!(before["visible"], false, "hidden until opened: {before}");
    assert_eq!(
        before["label"].as_str().map(str::trim),
        Some("1 sub-agent"),
        "{before}"
    );
    let top = before["top_level"].as_array().unwrap();
    assert!(
        top.contains(&json!(CLAUDE)) && !top.contains(&json!(SUB)),
        "{before}"
    );

    browser.click(&format!("tr[data-session-id=\"{CLAUDE}\"] input.expand"));
    let after = shown(&browser);
    assert_eq!(after["visible"], true, "shown once opened: {after}");
    assert_eq!(after["below"], true, "under its parent: {after}");
    if let Ok(dir) = std::env::var("AGENTSHAPE_SCREENSHOTS") {
        browser.js("document.documentElement.setAttribute('data-theme', 'dark'); return true;");
        browser.screenshot(&Path::new(&dir).join("sessions-list-open-dark.png"));
        browser.js("document.documentElement.removeAttribute('data-theme'); return true;");
    }
    browser.click(&format!("tr[data-session-id=\"{CLAUDE}\"] input.expand"));
    assert_eq!(shown(&browser)["visible"], false);

    // The first prompt (the summary column) of the widest row is inside
    // the window, and nothing scrolls sideways.
    let fit = browser.js_with(
        "const td = document.querySelector(`tr[data-session-id=\"${arguments[0]}\"] td.summary`);
         const r = td.getBoundingClientRect();
         return { left: r.left, right: r.right, width: r.width, inner: window.innerWidth,
                  scroll: document.documentElement.scrollWidth, text: td.textContent };",
        vec![json!(WIDE_ID)],
    );
    eprintln!("at {WIDE} px: {fit}");
    let inner = fit["inner"].as_f64().unwrap();
    assert!((inner - f64::from(WIDE)).abs() < 0.5, "{fit}");
    assert!(fit["right"].as_f64().unwrap() <= inner, "{fit}");
    assert!(fit["left"].as_f64().unwrap() >= 0.0, "{fit}");
    assert!(fit["width"].as_f64().unwrap() >= 300.0, "readable: {fit}");
    assert!(
        fit["scroll"].as_f64().unwrap() <= inner,
        "no sideways scroll: {fit}"
    );
    assert!(
        fit["text"]
            .as_str()
            .unwrap()
            .starts_with("Refactor the billing"),
        "{fit}"
    );
    if let Ok(dir) = std::env::var("AGENTSHAPE_SCREENSHOTS") {
        browser.screenshot(&Path::new(&dir).join("sessions-list-1400.png"));
    }
    browser.assert_clean("/sessions at 1400 px");
}

#[test]
fn keys_move_between_turns_focus_the_search_and_open_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keys.db");
    fill_native(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);

    browser.goto(&format!("/sessions/{CLAUDE}"));
    browser.find(".line[data-type=\"user_text\"]");
    let turns = |b: &Browser| -> Value {
        b.js("const all = Array.from(document.querySelectorAll('.line[data-type=\"user_text\"], .line[data-type=\"text\"]'))
                .filter((el) => el.getClientRects().length > 0);
              const cur = document.querySelectorAll('.line.current');
              const c = cur[0];
              const r = c ? c.getBoundingClientRect() : null;
              return { n: all.length, marked: cur.length, index: c ? all.indexOf(c) : -1,
                       aria: c ? c.getAttribute('aria-current') : null,
                       in_view: r ? r.top >= 0 && r.bottom <= window.innerHeight + 1 : false };")
    };
    let n = turns(&browser)["n"].as_u64().unwrap();
    assert!(n >= 3, "the session has turns: {n}");
    press(&browser, "j");
    let first = turns(&browser);
    assert_eq!(first["index"], 0, "{first}");
    assert_eq!(first["aria"], "true", "{first}");
    press(&browser, "jj");
    let third = turns(&browser);
    assert_eq!(third["index"], 2, "{third}");
    assert_eq!(third["marked"], 1, "one current turn: {third}");
    assert_eq!(third["in_view"], true, "scrolled into view: {third}");
    press(&browser, "k");
    assert_eq!(turns(&browser)["index"], 1);

    // `?` opens the help; Esc closes it.
    press(&browser, "?");
    browser.wait_js(
        "the keys' help",
        "return document.getElementById('keys-help').open === true;",
    );
    let text = browser.js("return document.getElementById('keys-help').textContent;");
    assert!(text.as_str().unwrap().contains("next turn"), "{text}");
    press(&browser, "\u{e00c}"); // Escape
    browser.wait_js(
        "the help closed",
        "return document.getElementById('keys-help').open === false;",
    );

    // `/` on a page without a search box goes to the list's, focused.
    press(&browser, "/");
    browser.wait_js(
        "the list's search focused",
        "return location.pathname === '/sessions' && document.readyState === 'complete'
                && document.activeElement && document.activeElement.name === 'q';",
    );
    // Typing in it is typing: `j` and `?` are letters there, not keys.
    let search = browser.find("input[name=q]");
    browser.rt.block_on(search.send_keys("j?")).unwrap();
    let typed = browser
        .js("return [document.activeElement.value, document.getElementById('keys-help').open];");
    assert_eq!(typed, json!(["j?", false]));
    // On the list, `/` focuses its own search box.
    browser.js("document.activeElement.blur(); return true;");
    press(&browser, "/");
    browser.wait_js(
        "search focused",
        "return document.activeElement && document.activeElement.name === 'q';",
    );
    browser.assert_clean("keys");
}

#[test]
fn the_theme_toggle_flips_data_theme_and_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("theme.db");
    fill_native(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/sessions");
    browser.find("#theme-toggle");
    let state = |b: &Browser| -> Value {
        b.js("return { theme: document.documentElement.getAttribute('data-theme'),
                       bg: getComputedStyle(document.body).backgroundColor,
                       system: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
                       label: document.getElementById('theme-toggle').dataset.current };")
    };
    // Nothing chosen: no attribute, the system's theme.
    let start = state(&browser);
    assert_eq!(start["theme"], Value::Null, "{start}");
    assert_eq!(start["label"], start["system"], "{start}");
    let other = if start["system"] == "dark" {
        "light"
    } else {
        "dark"
    };
    browser.click("#theme-toggle");
    let flipped = state(&browser);
    assert_eq!(flipped["theme"], other, "{flipped}");
    assert_eq!(flipped["label"], other, "{flipped}");
    assert_ne!(
        flipped["bg"], start["bg"],
        "the colours follow: {flipped} {start}"
    );
    // Kept across a reload and on another page, applied before the body draws.
    browser.goto("/");
    let kept = state(&browser);
    assert_eq!(kept["theme"], other, "{kept}");
    assert_eq!(kept["bg"], flipped["bg"], "{kept}");
    let early = browser.js(
        "return performance.getEntriesByType('navigation').length > 0
        && document.documentElement.getAttribute('data-theme');",
    );
    assert_eq!(early, other);
    // And back.
    browser.click("#theme-toggle");
    assert_eq!(state(&browser)["theme"], start["system"]);
    browser.assert_clean("theme");
}
