//! The exported HTML file in a real browser (issue 41 §3): opened from
//! disk (`file://`), it loads nothing and runs nothing, its own CSP
//! refuses a load even when one is attempted, it shows the session's
//! texts and its sub-agent's (folded, opened by a click), and printing
//! shows the folded parts; the session page's Download link gives the
//! same file as `agentshape export html`.

use serde_json::json;

use super::native::{CLAUDE, SUB, fill_native};
use super::{Browser, GUARD, serve};
use crate::support::served::Http;

#[test]
fn the_exported_file_opens_from_disk_loading_nothing_and_the_download_link_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("export.db");
    fill_native(&db);
    let file = dir.path().join("session.html");
    let out = crate::support::agentshape()
        .args(["export", "html", CLAUDE, "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&file)
        .timeout(GUARD)
        .output()
        .unwrap();
    crate::support::assert_exit(&out, 0);
    let server = serve(&db, &[]);
    let mut browser = Browser::open("");

    browser.goto(&format!("file://{}", file.display()));
    let text = browser.js("return document.body.innerText;");
    let text = text.as_str().unwrap();
    for said in [
        "Jellyfin transcoding fails with HTTP 502 after the upgrade",
        "Set hardwareAccelerationType to none in encoding.xml",
        "/home/ana/src/jellyfin-ops",
        "claude-code 2.1.23",
        "25 m 00 s",
    ] {
        assert!(text.contains(said), "missing {said}: {text}");
    }
    // Nothing fetched, nothing to run, the file's own policy in force.
    assert_eq!(
        browser.js("return performance.getEntriesByType('resource').length;"),
        json!(0)
    );
    assert_eq!(browser.js("return document.scripts.length;"), json!(0));
    let csp = browser.js(
        "return document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content;",
    );
    assert!(
        csp.as_str().unwrap().starts_with("default-src 'none'"),
        "{csp}"
    );
    browser.assert_clean("the exported file");

    // The sub-agent is folded in the parent's transcript; a click opens it.
    let sub = format!("details.sub-agent[data-session-id='{SUB}']");
    let shown = format!(
        "return document.querySelector(\"{sub}\").innerText.includes('Explore the transcoder logs');"
    );
    browser.click(&format!("{sub} > summary"));
    browser.wait_js("the sub-agent's transcript", &shown);
    assert_eq!(
        browser.js(&format!(
            "return document.querySelector(\"{sub}\").closest('#transcript') !== null;"
        )),
        json!(true),
        "inside the parent's transcript"
    );

    // Printed, a folded part shows its content (`::details-content`).
    let folded_shown = "const p = document.querySelector('#transcript details:not([open]) pre');
         return p ? p.checkVisibility() : null;";
    assert_eq!(browser.js(folded_shown), json!(false));
    browser.cdp("Emulation.setEmulatedMedia", json!({"media": "print"}));
    assert_eq!(browser.js(folded_shown), json!(true), "printed open");
    browser.cdp("Emulation.setEmulatedMedia", json!({"media": ""}));

    // Even a load the page itself tried would be refused by its CSP.
    browser.js_with(
        "const i = document.createElement('img'); i.src = arguments[0];
         document.body.appendChild(i); return true;",
        vec![json!(server.url("/probe.png"))],
    );
    browser.wait_js(
        "the CSP to refuse the image",
        "return (window.__agentshapeProblems || []).some((p) => p.includes('img-src'));",
    );
    // The refusal is all that happened (the console says it too).
    let left = browser.problems(&["probe.png"]);
    assert!(left.is_empty(), "{left:#?}");

    // The session page's Download link: the same file, as an attachment.
    browser.goto(&server.url(&format!("/sessions/{CLAUDE}")));
    let href = browser.js("return document.querySelector('#download').getAttribute('href');");
    assert_eq!(href, json!(format!("/sessions/{CLAUDE}/export.html")));
    browser.assert_clean("the session page");
    let http = Http::new(&server.base);
    let (status, disposition, body) = http.rt.block_on(async {
        let r = http
            .client
            .get(server.url(href.as_str().unwrap()))
            .send()
            .await
            .unwrap();
        let d = r
            .headers()
            .get("content-disposition")
            .map(|v| v.to_str().unwrap().to_owned());
        (r.status().as_u16(), d, r.text().await.unwrap())
    });
    assert_eq!(status, 200);
    assert_eq!(
        disposition.as_deref(),
        Some(format!("attachment; filename=\"agentshape-{CLAUDE}.html\"").as_str())
    );
    assert_eq!(body, std::fs::read_to_string(&file).unwrap());
}
