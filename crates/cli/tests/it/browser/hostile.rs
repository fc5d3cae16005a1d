//! A hostile transcript in a real browser: agent text, tool input, tool
//! results and the structured output carry script, event-handler and
//! `javascript:` payloads. While the session streams live and after it ends,
//! nothing runs (no dialog, `window.__pwned` never set), nothing is injected
//! (no `img`/`svg`/`script` element in `#transcript` or `#output`, no
//! `javascript:` link anywhere) and the text shows literally.

use serde_json::json;

use super::{Browser, GatedRun, assistant_text, serve, tool_result, tool_use, transcript};

const PAYLOADS: &[&str] = &[
    "<script>window.__pwned=1</script>",
    r#"<img src=x onerror="window.__pwned=1">"#,
    "[click](javascript:window.__pwned=1)",
    r#""><svg onload=window.__pwned=1>"#,
];

/// Pieces of each payload free of quotes, so they read the same in text and
/// in a JSON string rendering (where `"` shows as `\"`).
const LITERALS: &[&str] = &[
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=",
    "[click](javascript:window.__pwned=1)",
    "><svg onload=window.__pwned=1>",
];

/// One check of the page; a description of what is wrong, or "" when clean.
const CHECK_JS: &str = r"
const bad = [];
if (typeof window.__pwned !== 'undefined') bad.push('window.__pwned is set');
for (const id of ['transcript', 'output']) {
  const root = document.getElementById(id);
  if (root && root.querySelector('img, svg, script, iframe, object, embed')) {
    bad.push('an injected element in #' + id + ': ' + root.querySelector('img, svg, script, iframe, object, embed').outerHTML);
  }
}
for (const a of document.querySelectorAll('a[href]')) {
  if (a.getAttribute('href').trim().toLowerCase().startsWith('javascript:')) bad.push('a javascript: link');
}
for (const el of document.querySelectorAll('#transcript *, #output *')) {
  for (const attr of el.attributes) {
    if (attr.name.startsWith('on')) bad.push('an event handler attribute ' + attr.name);
  }
}
return bad.join('; ');";

fn assert_not_pwned(browser: &Browser, when: &str) {
    assert_eq!(browser.dialog(), None, "{when}: a dialog opened");
    let bad = browser.js(CHECK_JS);
    assert_eq!(bad, "", "{when}");
}

/// Wait until `root`'s textContent holds `literal`, failing at once if the
/// page shows an injection meanwhile (rather than after the hang guard).
fn wait_literal(browser: &Browser, root: &str, literal: &str) {
    let (r, l) = (
        serde_json::to_string(root).unwrap(),
        serde_json::to_string(literal).unwrap(),
    );
    let got = browser.wait_js(
        &format!("{literal:?} as text in {root}"),
        &format!(
            "const bad = (() => {{ {CHECK_JS} }})();
             if (bad) return 'injected: ' + bad;
             const e = document.querySelector({r});
             return e !== null && e.textContent.includes({l}) ? 'ok' : null;"
        ),
    );
    assert_eq!(got, "ok", "while waiting for {literal:?} in {root}");
}

#[test]
fn a_hostile_transcript_runs_no_script_live_or_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hostile.db");
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/sessions");
    browser.find("table#sessions");

    let all = PAYLOADS.join(" ");
    let middle = vec![
        assistant_text(&format!("text: {all}")),
        tool_use("toolu_hostile", &format!("echo '{all}'")),
        tool_result("toolu_hostile", &format!("result: {all}")),
        assistant_text("text: end of the hostile lines"),
    ];
    let n_middle = middle.len();
    let output = json!({
        "summary": format!("summary: {all}"),
        "events": [{"level": "critical", "service": PAYLOADS[1], "message": all}],
        "memories": [{"key": PAYLOADS[3], "value": PAYLOADS[0]}],
        "escalation": {"needed": false},
        "services_checked": [{"name": PAYLOADS[2], "status": "healthy"}]
    });
    let run = GatedRun::start(
        dir.path(),
        &db,
        "hostile-live",
        &transcript(middle, &output),
    );

    browser.wait_js(
        "the hostile session in #sessions",
        r#"return document.querySelector('#sessions tbody tr[data-session-id="hostile-live"]') !== null;"#,
    );
    assert_not_pwned(&browser, "sessions list, running");
    browser.goto("/sessions/hostile-live");
    browser.find("#session[data-status]");
    assert_not_pwned(&browser, "session page, running");

    // Live: each hostile line appended by the page's script.
    for k in 1..=n_middle {
        run.release(k);
        let marker = match k {
            1 => "text: <script>",
            2 => "echo '<script>",
            3 => "result: <script>",
            _ => "end of the hostile lines",
        };
        wait_literal(&browser, "#transcript", marker);
        assert_not_pwned(&browser, &format!("live, after line {k}"));
    }
    for literal in LITERALS {
        wait_literal(&browser, "#transcript", literal);
    }
    // Assistant text is visible as written (innerText: rendered, not hidden).
    let visible = browser.js("return document.querySelector('#transcript').innerText;");
    assert!(
        visible.as_str().unwrap().contains(&format!("text: {all}")),
        "the assistant text shows literally: {visible}"
    );

    // Stored: after the end the page reloads and renders it all server-side.
    assert!(matches!(run.finish(), Some(0..=3)));
    browser.wait_js(
        "the hostile session ended",
        r"const s = document.querySelector('#session');
          return s !== null && s.dataset.status !== 'running' && document.querySelector('#verdict[data-valid]') !== null;",
    );
    assert_not_pwned(&browser, "session page, ended");
    for literal in LITERALS {
        wait_literal(&browser, "#transcript", literal);
        wait_literal(&browser, "#output", literal);
    }
    // A fresh load of the stored session, and the lists that show its text.
    for path in [
        "/sessions/hostile-live",
        "/sessions",
        "/events",
        "/memories",
        "/",
    ] {
        browser.goto(path);
        assert_not_pwned(&browser, path);
    }
    assert_eq!(browser.dialog(), None);
    browser.assert_clean("hostile pages");
}
