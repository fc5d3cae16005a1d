//! Screenshots for the README (`scripts/screenshots.sh` runs this ignored
//! test): a store filled by replaying `examples/*.ndjson` as
//! `scripts/demo.sh` does, plus native sessions (`agentshape import` of the
//! fixtures in `tests/fixtures/native`, and the browser tests' Claude Code,
//! Codex and Gemini CLI sessions of the last days), `serve`, then the
//! overview (its top, and its charts by agent and project), the sessions
//! list, a session page, an imported session's page, the builder with a
//! few fields, the playground with a broken reply and the Alerts page
//! (`serve --alerts` over the demo's failures), each saved as a
//! 1280×900 PNG under `AGENTSHAPE_SCREENSHOTS` (default
//! `docs/screenshots/`).

use std::path::PathBuf;

use super::hooks::{HOOKED, fill_hooked};
use super::native::{CLAUDE, fill_native, import_fixtures};
use super::playground::{choose, paste_and_run};
use super::{Browser, replay, serve};

#[test]
#[ignore = "writes docs/screenshots/*.png; run by scripts/screenshots.sh"]
fn screenshots() {
    let out = std::env::var_os("AGENTSHAPE_SCREENSHOTS").map_or_else(
        || crate::support::repo_root().join("docs/screenshots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&out).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let logs = dir.path().join("logs");
    let mut examples: Vec<String> = std::fs::read_dir(crate::support::repo_root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ndjson"))
        .collect();
    examples.sort();
    for name in &examples {
        replay(&db, &logs, name, name.trim_end_matches(".ndjson"));
    }
    import_fixtures(&db);
    fill_native(&db);
    fill_hooked(&db, &dir.path().join("state"));
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    for s in ["agent-response.json", "code-review.json"] {
        std::fs::copy(
            crate::support::repo_root().join("schemas").join(s),
            schemas.join(s),
        )
        .unwrap();
    }
    // Alerts: the demo's failures and secrets, delivered to a local
    // receiver and logged (the Alerts page's screenshot).
    let rx = agentshape_testkit::webhook::Receiver::start();
    let rules = dir.path().join("alerts.toml");
    std::fs::write(
        &rules,
        format!(
            "[settings]\ninterval = \"200ms\"\nlookback = \"366d\"\nattempts = 3\nbackoff = \"100ms\"\n\n\
             [[rule]]\nname = \"failures\"\nwhen = \"session_failed\"\n\
             webhook = [{{ url = \"{0}/services/T01/B02/XXXXXXXXXXXXXXXXXXXXXXXX\", format = \"slack\" }}, \
             {{ url = \"http://127.0.0.1:{1}/pager?token=t0k3n\" }}]\nlog = true\n\n\
             [[rule]]\nname = \"leaks\"\nwhen = \"secrets_found\"\n\
             webhook = {{ url = \"{0}/agentshape\" }}\n",
            rx.url(),
            {
                // A port nothing listens on: that delivery fails.
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap().port()
            }
        ),
    )
    .unwrap();
    let server = serve(
        &db,
        &[
            "--schemas",
            schemas.to_str().unwrap(),
            "--alerts",
            rules.to_str().unwrap(),
        ],
    );
    let mut browser = Browser::open(&server.base);

    browser.goto("/");
    browser.find("#by-status");
    browser.screenshot(&out.join("overview.png"));

    browser.screenshot_at(&out.join("overview-native.png"), "#by-agent-project", 16);

    browser.screenshot_at(&out.join("overview-validation.png"), "#validation", 16);

    browser.goto("/sessions?agent=claude-code");
    browser.find("table#sessions tbody tr[data-session-id]");
    browser.screenshot(&out.join("sessions.png"));

    browser.goto(&format!("/sessions/{CLAUDE}"));
    browser.find("#tree");
    browser.screenshot_at(&out.join("session-native.png"), "#chain", 60);

    browser.goto(&format!("/sessions/{HOOKED}"));
    browser.find("#hook-summary");
    browser.js("document.querySelector('#hook-calls > li:nth-child(2) details')?.setAttribute('open', '');");
    browser.screenshot_at(&out.join("session-hook.png"), "#hook-summary", 80);

    browser.goto("/sessions/healthy-structured");
    browser.find("#verdict[data-valid]");
    browser.screenshot(&out.join("session.png"));

    // Issue 41: reading a session — Markdown, tools as what they did, the
    // sub-agents nested in the list, the dark theme, an exported file.
    super::reading::fill_reading(&db);
    browser.goto(&format!("/sessions/{}", super::reading::READING));
    browser.find("#transcript .line");
    browser.screenshot(&out.join("session-reading.png"));
    browser.screenshot_at(
        &out.join("session-tools.png"),
        "#transcript .line.t-tool_use",
        40,
    );
    browser.js("document.documentElement.setAttribute('data-theme', 'dark'); return true;");
    browser.screenshot_at(&out.join("session-dark.png"), "#transcript", 40);
    browser.js("document.documentElement.removeAttribute('data-theme'); return true;");
    browser.goto("/sessions?project=%2Fhome%2Fana%2Fsrc%2Fjellyfin-ops");
    browser.find("table#sessions tbody tr[data-session-id]");
    browser.click(&format!("tr[data-session-id=\"{CLAUDE}\"] input.expand"));
    browser.screenshot(&out.join("sessions-nested.png"));
    let file = dir.path().join("export.html");
    let exported = crate::support::agentshape()
        .args(["export", "html", super::reading::READING, "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&file)
        .timeout(super::GUARD)
        .output()
        .unwrap();
    crate::support::assert_exit(&exported, 0);
    {
        let mut offline = Browser::open("");
        offline.goto(&format!("file://{}", file.display()));
        offline.screenshot(&out.join("export.png"));
    }

    browser.goto("/builder");
    browser.find("#add-field");
    let fields = [
        ("service", "string"),
        ("severity", "enum"),
        ("restarts", "integer"),
    ];
    let existing = browser
        .js("return document.querySelectorAll('.field').length;")
        .as_u64()
        .unwrap_or(0);
    for (i, (name, ty)) in fields.iter().enumerate() {
        if i as u64 >= existing {
            browser.click("#add-field");
        }
        browser.wait_js(
            "a field",
            &format!("return document.querySelectorAll('.field').length > {i};"),
        );
        let set = |css: &str| {
            browser
                .rt
                .block_on(browser.client().find_all(fantoccini::Locator::Css(css)))
                .unwrap()
                .into_iter()
                .nth(i)
                .unwrap_or_else(|| panic!("no {css} for field {i}"))
        };
        browser.select_el(&set("select.f-type"), ty);
        browser.type_into_el(&set("input.f-name"), name);
        if *ty == "enum" {
            browser.type_into_el(&set("input.f-enum"), "info,warning,critical");
        }
    }
    browser.type_into("#schema-name", "incident");
    browser.find("#lint .provider");
    browser.screenshot(&out.join("builder.png"));

    crate::support::wait_until("the alerts", super::GUARD, || !rx.requests().is_empty());
    std::thread::sleep(std::time::Duration::from_secs(2));
    browser.goto("/alerts");
    browser.find("table#alerts tbody tr[data-firing-id]");
    browser.screenshot(&out.join("alerts.png"));

    browser.goto("/playground");
    browser.find("#result[data-state]");
    choose(&browser, "#profile", "claude-ops");
    paste_and_run(
        &browser,
        "Here is my report:\n{'summary': 'jellyfin is down', 'events': [{'level': 'urgent', \
         'service': 'jellyfin', 'message': 'HTTP 502',},], 'escalation': {'needed': True}, \
         'services_checked': [{'name': 'jellyfin', 'status': 'down'}],}",
    );
    browser.wait_js(
        "a playground result",
        "const r = document.querySelector('#result'); return r && r.dataset.state !== 'idle';",
    );
    browser.screenshot(&out.join("playground.png"));
    browser.assert_clean("screenshot pages");
}
