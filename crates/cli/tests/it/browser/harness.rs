//! The harness itself: it sees what it claims to see, and a machine without
//! the browser fails loudly; `scripts/setup.sh --check` finds it all in place.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{Browser, GUARD, installed, serve};
use crate::support::assert_exit_for;

#[test]
fn a_missing_browser_fails_naming_the_setup_script() {
    let real = Path::new("/bin/sh");
    for (chromium, driver) in [
        (Path::new("/nonexistent/chromium"), real),
        (real, Path::new("/nonexistent/chromedriver")),
    ] {
        let why = installed(chromium, driver).unwrap_err();
        assert!(why.contains("./scripts/setup.sh"), "{why}");
        assert!(why.contains("/nonexistent/"), "{why}");
    }
    assert_eq!(installed(real, real), Ok(()));
}

#[test]
fn setup_check_finds_every_component_installed() {
    let out = std::process::Command::new(crate::support::repo_root().join("scripts/setup.sh"))
        .arg("--check")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_exit_for(&out, 0, "run ./scripts/setup.sh first");
    assert!(stdout.contains("setup: chromium ok"), "{stdout}");
    assert!(
        stdout.lines().all(|l| l.contains(" ok (")),
        "a second run installs nothing: {stdout}"
    );
    for bad in [&["--only", "nope"][..], &["--frobnicate"]] {
        let out = std::process::Command::new(crate::support::repo_root().join("scripts/setup.sh"))
            .args(bad)
            .output()
            .unwrap();
        assert_exit_for(&out, 64, format_args!("{bad:?}"));
    }
}

/// A CSP violation (an inline script and an inline style attribute added
/// after load), an uncaught error and a `console.error` are each reported.
#[test]
fn the_harness_reports_csp_violations_js_errors_and_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("harness.db"), &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/");
    browser.js("const s = document.createElement('script');
         s.textContent = 'window.__inline = 1';
         document.body.appendChild(s);
         document.body.setAttribute('style', 'color: red');
         setTimeout(() => { throw new Error('harness-boom'); }, 0);
         console.error('harness-console-error');
         return true;");
    let want = [
        "script-src",
        "style-src",
        "harness-boom",
        "harness-console-error",
    ];
    let mut seen: Vec<String> = Vec::new();
    let start = Instant::now();
    while !want.iter().all(|w| seen.iter().any(|p| p.contains(w))) {
        seen.extend(browser.problems(&[]));
        assert!(
            start.elapsed() < GUARD,
            "missing some of {want:?} in {seen:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        browser.js("return typeof window.__inline;"),
        "undefined",
        "the inline script was blocked"
    );
    // The driver's own script is another origin to the page, so its
    // uncaught error reaches `onerror` muted ("Script error."); the console
    // line above carries the message.
    let left = browser.problems(&["harness-", "script-src", "style-src", "Script error."]);
    assert!(left.is_empty(), "allowed lines are filtered out: {left:#?}");
}
