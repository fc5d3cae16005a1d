//! Real-browser tests (issue 9, "Tests and numbers"): Debian's headless
//! chromium driven over `WebDriver` (`fantoccini` to `/usr/bin/chromedriver`)
//! against a real `agentshape serve` on a temporary store, with `run` in
//! another process writing to the same store.
//!
//! Note [Browser tests fail, never skip]: a machine without chromium or
//! chromedriver fails every browser test with a message naming
//! `./scripts/setup.sh`, which installs them. A silent skip would let a CI run
//! on a fresh machine look green while testing nothing in a browser.
//!
//! Note [Browser waits]: every wait polls the page (a script run through the
//! driver) every 50 ms until it holds, with a generous hang guard
//! (`GUARD`); nothing asserts how fast a page or a run is. The live tests go
//! further: the fake agent prints its next line only when the test opens a
//! gate, so "lines arrive one by one" holds on any machine speed.
//!
//! Note [Browser problems]: each session gets an init script (through
//! chromedriver's CDP bridge, `Page.addScriptToEvaluateOnNewDocument`, so it
//! runs before any page script and is itself exempt from the page's CSP)
//! that records `securitypolicyviolation` events, uncaught errors (and failed
//! resource loads, seen in the capture phase) and unhandled rejections; the
//! browser's own console log (`goog:loggingPrefs`, read through chromedriver's
//! `se/log`) adds console errors and CSP reports the page could not see.
//! `Browser::assert_clean` fails on any of them.
//!
//! Note [Few browsers at once]: this machine has 2 cores shared with the rest
//! of the suite, so at most `MAX_BROWSERS` browser sessions run at a time
//! (a counting semaphore); each test has its own chromedriver, chromium and
//! profile directory, torn down when the test ends (also on a panic).

mod alerts;
mod builder;
mod export;
mod harness;
mod hooks;
mod hostile;
mod live;
mod native;
mod pages;
mod playground;
mod reading;
mod screenshots;
mod secrets;
mod sessions_list;
mod usage;
mod validation;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

pub(crate) use crate::support::served::serve;
pub(crate) use crate::support::transcript::{assistant_text, tool_result, tool_use, transcript};

/// The hang guard of every wait (Note [Browser waits]).
pub(crate) const GUARD: Duration = Duration::from_secs(90);

/// Browser sessions allowed at once (Note [Few browsers at once]).
const MAX_BROWSERS: usize = 2;

/// The window every page (and screenshot) is shown in.
pub(crate) const WIDTH: u32 = 1280;
pub(crate) const HEIGHT: u32 = 900;

fn chromium_path() -> PathBuf {
    std::env::var_os("AGENTSHAPE_CHROMIUM").map_or_else(|| "/usr/bin/chromium".into(), Into::into)
}

fn chromedriver_path() -> PathBuf {
    std::env::var_os("AGENTSHAPE_CHROMEDRIVER")
        .map_or_else(|| "/usr/bin/chromedriver".into(), Into::into)
}

/// Both programs are there, or why not, naming the script that installs
/// them (Note [Browser tests fail, never skip]).
fn installed(chromium: &Path, chromedriver: &Path) -> Result<(), String> {
    for (what, path, pkg) in [
        ("chromium", chromium, "chromium"),
        ("chromedriver", chromedriver, "chromium-driver"),
    ] {
        if !path.exists() {
            return Err(format!(
                "{what} not found at {}: the browser tests need Debian's `{pkg}`; \
                 run ./scripts/setup.sh (it installs chromium and chromium-driver)",
                path.display()
            ));
        }
    }
    Ok(())
}

/// The flags chromium runs with. Without the background-networking ones
/// this machine's closed network makes chromium hang on lookups.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-default-apps",
    "--hide-scrollbars",
];

/// Runs in every document before the page's own scripts (Note [Browser problems]).
const INIT_SCRIPT: &str = r"(() => {
  const problems = [];
  Object.defineProperty(window, '__agentshapeProblems', { value: problems });
  window.addEventListener('securitypolicyviolation', (e) => {
    problems.push('csp violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') +
      ' at ' + e.sourceFile + ':' + e.lineNumber + ' sample ' + JSON.stringify(e.sample || ''));
  });
  window.addEventListener('error', (e) => {
    if (e instanceof ErrorEvent) {
      problems.push('js error: ' + e.message + ' at ' + e.filename + ':' + e.lineno);
    } else if (e.target && e.target !== window) {
      const t = e.target;
      problems.push('failed to load: <' + (t.tagName || '?').toLowerCase() + '> ' + (t.src || t.href || ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', (e) => {
    problems.push('unhandled rejection: ' + String(e.reason && (e.reason.stack || e.reason)));
  });
})();";

// ---------------------------------------------------------------------------
// A counting semaphore for browser sessions.

static SLOTS: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();

struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut used = SLOTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *used >= MAX_BROWSERS {
            used = SLOT_FREED
                .wait(used)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *used += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut used = SLOTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *used -= 1;
        SLOT_FREED.notify_one();
    }
}

// ---------------------------------------------------------------------------
// `agentshape serve` on a temporary store.

/// Replay a bundled example into `db` (as `scripts/demo.sh` does), under a
/// fixed session id.
pub(crate) fn replay(db: &Path, logs: &Path, example: &str, session_id: &str) {
    let out = crate::support::agentshape_std()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(crate::support::example(example))
        .args(["--session-id", session_id, "--store"])
        .arg(db)
        .arg("--log-dir")
        .arg(logs)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0..=3)),
        "replay of {example}: {out:?}"
    );
}

// ---------------------------------------------------------------------------
// A fake agent whose lines are released by the test.

/// `run --profile claude-ops -- <gated agent>` in another process: the agent
/// prints line N of its transcript, then waits until the test opens gate N
/// (a file), so the test decides when each line is written (Note [Browser waits]).
pub(crate) struct GatedRun {
    child: Child,
    gates: PathBuf,
    pub(crate) lines: usize,
}

/// The agent: print a line, wait for its gate (except after the last line).
/// The wait gives up after ~5 minutes so a crashed test leaves nothing behind.
const GATED_AGENT: &str = r#"#!/bin/sh
n=0
total=$(wc -l < "$GATED_TRANSCRIPT")
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n + 1))
  printf '%s\n' "$line"
  [ "$n" -ge "$total" ] && break
  tries=0
  while [ ! -e "$GATED_DIR/$n" ]; do
    tries=$((tries + 1))
    [ "$tries" -gt 6000 ] && exit 9
    sleep 0.05
  done
done < "$GATED_TRANSCRIPT"
"#;

impl GatedRun {
    /// Start `run` writing `session_id` into `db`; `transcript` holds the
    /// agent's lines (one JSON value each).
    pub(crate) fn start(dir: &Path, db: &Path, session_id: &str, transcript: &[Value]) -> GatedRun {
        let gates = dir.join(format!("gates-{session_id}"));
        std::fs::create_dir_all(&gates).unwrap();
        let agent = dir.join(format!("agent-{session_id}.sh"));
        std::fs::write(&agent, GATED_AGENT).unwrap();
        let text: String = transcript.iter().map(|l| format!("{l}\n")).collect();
        let path = dir.join(format!("transcript-{session_id}.ndjson"));
        std::fs::write(&path, text).unwrap();
        let child = crate::support::agentshape_std()
            .args(["run", "--profile", "claude-ops", "--session-id", session_id])
            .arg("--store")
            .arg(db)
            .arg("--log-dir")
            .arg(dir.join("logs"))
            .args(["--", "sh"])
            .arg(&agent)
            .env("GATED_TRANSCRIPT", &path)
            .env("GATED_DIR", &gates)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        GatedRun {
            child,
            gates,
            lines: transcript.len(),
        }
    }

    /// Let the agent go past line `n` (1-based).
    pub(crate) fn release(&self, n: usize) {
        std::fs::write(self.gates.join(n.to_string()), b"").unwrap();
    }

    /// Release every line and wait for `run` to end; its exit code.
    pub(crate) fn finish(mut self) -> Option<i32> {
        for n in 1..=self.lines {
            self.release(n);
        }
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(start.elapsed() < GUARD, "`run` did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for GatedRun {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A `claude-ops` output that validates.
pub(crate) fn valid_output(summary: &str) -> Value {
    json!({
        "summary": summary,
        "events": [{"level": "info", "service": "nginx", "message": "all good"}],
        "memories": [],
        "escalation": {"needed": false},
        "services_checked": [{"name": "nginx", "status": "healthy"}]
    })
}

// ---------------------------------------------------------------------------
// The browser.

/// Chromedriver's legacy log endpoint (`POST /session/{id}/se/log`), which
/// fantoccini does not wrap.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url_like::Url,
        session_id: Option<&str>,
    ) -> Result<url_like::Url, url_like::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url_like::Url) -> (http_like::Method, Option<String>) {
        (
            http_like::Method::POST,
            Some(r#"{"type":"browser"}"#.to_owned()),
        )
    }
}

/// Chromedriver's bridge to the `DevTools` protocol (`goog/cdp/execute`).
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url_like::Url,
        session_id: Option<&str>,
    ) -> Result<url_like::Url, url_like::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url_like::Url) -> (http_like::Method, Option<String>) {
        let body = json!({"cmd": self.cmd, "params": self.params});
        (http_like::Method::POST, Some(body.to_string()))
    }
}

/// The `url` and `http` types fantoccini's command trait speaks.
mod url_like {
    pub(crate) use url::{ParseError, Url};
}
mod http_like {
    pub(crate) use http::Method;
    pub(crate) use hyper_util::client::legacy::connect::HttpConnector;
}

/// One headless chromium (its own chromedriver and profile) on `base`,
/// driven synchronously from a test.
pub(crate) struct Browser {
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    base: String,
    _profile: tempfile::TempDir,
    _slot: Slot,
}

impl Browser {
    /// Start chromedriver and a chromium session for pages under `base`
    /// (Note [Browser tests fail, never skip]).
    pub(crate) fn open(base: &str) -> Browser {
        let (chromium, driver_bin) = (chromium_path(), chromedriver_path());
        if let Err(why) = installed(&chromium, &driver_bin) {
            panic!("{why}");
        }
        let slot = Slot::take();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut driver = {
            use std::os::unix::process::CommandExt;
            std::process::Command::new(&driver_bin)
                .arg("--port=0")
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                // Its own process group, so teardown can end chromium too.
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot start {}: {e}; run ./scripts/setup.sh",
                        driver_bin.display()
                    )
                })
        };
        let mut out = BufReader::new(driver.stdout.take().unwrap()).lines();
        let port = loop {
            let line = out
                .next()
                .expect("chromedriver ended before it said its port; run ./scripts/setup.sh")
                .unwrap();
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                break rest.trim_end_matches('.').trim().parse::<u16>().unwrap();
            }
        };
        std::thread::spawn(move || for _ in out {});
        let profile = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| (*s).to_owned()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push(format!("--window-size={WIDTH},{HEIGHT}"));
        let caps = json!({
            "browserName": "chrome",
            "unhandledPromptBehavior": "ignore",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": chromium, "args": args}
        });
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        let client = rt
            .block_on(async {
                ClientBuilder::new(http_like::HttpConnector::new())
                    .capabilities(caps)
                    .connect(&format!("http://127.0.0.1:{port}"))
                    .await
            })
            .unwrap_or_else(|e| panic!("chromium did not start through chromedriver: {e}"));
        let mut browser = Browser {
            rt,
            client: Some(client),
            driver,
            base: base.to_owned(),
            _profile: profile,
            _slot: slot,
        };
        browser.prepare_tab();
        browser
    }

    /// Open a new tab with the same init script and viewport, switch to
    /// it, and return the handle of the tab it came from.
    pub(crate) fn new_tab(&mut self) -> fantoccini::wd::WindowHandle {
        let client = self.client.as_ref().unwrap();
        let (from, tab) = self
            .rt
            .block_on(async {
                let from = client.window().await?;
                let tab = client.new_window(true).await?;
                client.switch_to_window(tab.handle.clone()).await?;
                Ok::<_, fantoccini::error::CmdError>((from, tab))
            })
            .unwrap_or_else(|e| panic!("new tab: {e}"));
        drop(tab);
        self.prepare_tab();
        from
    }

    /// Switch to the tab `handle`.
    pub(crate) fn switch_to(&self, handle: fantoccini::wd::WindowHandle) {
        self.rt
            .block_on(self.client().switch_to_window(handle))
            .unwrap_or_else(|e| panic!("switch tab: {e}"));
    }

    /// The init script (Note [Browser problems]) and the viewport, for the
    /// current tab (CDP commands apply to one tab).
    fn prepare_tab(&mut self) {
        self.cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": INIT_SCRIPT}),
        );
        // The viewport itself is WIDTH×HEIGHT (the window size includes
        // chromium's own frame even when headless).
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    /// Run a `DevTools` protocol command in the current tab.
    pub(crate) fn cdp(&mut self, cmd: &'static str, params: Value) -> Value {
        let client = self.client.as_ref().unwrap();
        self.rt
            .block_on(client.issue_cmd(Cdp { cmd, params }))
            .unwrap_or_else(|e| panic!("{cmd}: {e}"))
    }

    /// Open `path` (under the server's base) and wait until it has loaded.
    pub(crate) fn goto(&mut self, path: &str) {
        let url = format!("{}{path}", self.base);
        let client = self.client.as_ref().unwrap();
        self.rt
            .block_on(client.goto(&url))
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
        self.wait_js(
            &format!("{path} loaded"),
            "return document.readyState === 'complete';",
        );
    }

    /// Run `script` (a function body: `return ...;`) in the page.
    pub(crate) fn js(&self, script: &str) -> Value {
        self.js_with(script, Vec::new())
    }

    /// Run `script` with `arguments[..]` = `args`.
    pub(crate) fn js_with(&self, script: &str, args: Vec<Value>) -> Value {
        self.rt
            .block_on(self.client().execute(script, args))
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Poll `script` until it returns something other than null/false/"",
    /// and return that (Note [Browser waits]).
    pub(crate) fn wait_js(&self, what: &str, script: &str) -> Value {
        let start = Instant::now();
        loop {
            match self.rt.block_on(self.client().execute(script, Vec::new())) {
                Ok(Value::Null | Value::Bool(false)) => {}
                Ok(Value::String(s)) if s.is_empty() => {}
                Ok(v) => return v,
                // A page navigating away (a reload) can fail a script: try again.
                Err(e) if e.is_javascript_error() || e.is_no_such_window() => {}
                Err(e) if e.to_string().contains("unexpected alert") => {
                    panic!("a dialog is open while waiting for {what}: {e}")
                }
                Err(_) => {}
            }
            assert!(
                start.elapsed() < GUARD,
                "timed out waiting for {what}\n{}",
                self.diagnose()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the page shows now, for a failure message.
    fn diagnose(&self) -> String {
        let url = self
            .rt
            .block_on(self.client().current_url())
            .map_or_else(|e| format!("(no url: {e})"), |u| u.to_string());
        let text = self
            .rt
            .block_on(self.client().execute(
                "return document.body ? document.body.innerText.slice(0, 1500) : '(no body)';",
                Vec::new(),
            ))
            .map_or_else(|e| format!("(no text: {e})"), |v| v.to_string());
        format!("url: {url}\npage text: {text}")
    }

    /// The element matching `css` (waiting for it to exist).
    pub(crate) fn find(&self, css: &str) -> fantoccini::elements::Element {
        let q = serde_json::to_string(css).unwrap();
        self.wait_js(
            &format!("`{css}`"),
            &format!("return document.querySelector({q}) !== null;"),
        );
        self.rt
            .block_on(self.client().find(Locator::Css(css)))
            .unwrap_or_else(|e| panic!("find `{css}`: {e}"))
    }

    /// Click `el` through the driver (a real user click).
    pub(crate) fn click_el(&self, el: &fantoccini::elements::Element) {
        self.rt
            .block_on(el.click())
            .unwrap_or_else(|e| panic!("click: {e}"));
    }

    /// Click the element matching `css`.
    pub(crate) fn click(&self, css: &str) {
        let el = self.find(css);
        self.click_el(&el);
    }

    /// Replace the value of a text input or textarea, typing it as a user would.
    pub(crate) fn type_into_el(&self, el: &fantoccini::elements::Element, text: &str) {
        self.rt.block_on(el.clear()).unwrap();
        self.rt
            .block_on(el.send_keys(text))
            .unwrap_or_else(|e| panic!("type {text:?}: {e}"));
    }

    /// Type into the element matching `css`.
    pub(crate) fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css);
        self.type_into_el(&el, text);
    }

    /// Choose the option with `value` in a `<select>`.
    pub(crate) fn select_el(&self, el: &fantoccini::elements::Element, value: &str) {
        self.rt
            .block_on(el.select_by_value(value))
            .unwrap_or_else(|e| panic!("select {value:?}: {e}"));
    }

    /// The text of an open dialog, if one is open.
    pub(crate) fn dialog(&self) -> Option<String> {
        match self.rt.block_on(self.client().get_alert_text()) {
            Ok(text) => Some(text),
            Err(e) if e.is_no_such_alert() => None,
            Err(e) => panic!("asking for a dialog: {e}"),
        }
    }

    /// Wait for a dialog, accept it, and return its text.
    pub(crate) fn accept_dialog(&self, what: &str) -> String {
        self.answer_dialog(what, true)
    }

    /// Wait for a dialog, dismiss it (Cancel), and return its text.
    pub(crate) fn dismiss_dialog(&self, what: &str) -> String {
        self.answer_dialog(what, false)
    }

    fn answer_dialog(&self, what: &str, accept: bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(text) = self.dialog() {
                let answered = if accept {
                    self.rt.block_on(self.client().accept_alert())
                } else {
                    self.rt.block_on(self.client().dismiss_alert())
                };
                answered.unwrap_or_else(|e| panic!("answering {what}: {e}"));
                return text;
            }
            assert!(start.elapsed() < GUARD, "no dialog for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What went wrong on the current page (Note [Browser problems]) plus
    /// the console errors logged since the last call, minus lines containing
    /// one of `allowed`.
    pub(crate) fn problems(&mut self, allowed: &[&str]) -> Vec<String> {
        let seen = self.js("return (window.__agentshapeProblems || []).map(String);");
        let client = self.client.as_ref().unwrap();
        let log = self
            .rt
            .block_on(client.issue_cmd(BrowserLog))
            .unwrap_or_else(|e| panic!("reading the browser log: {e}"));
        let mut all: Vec<String> = seen
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect();
        for entry in log.as_array().into_iter().flatten() {
            if entry["level"] == "SEVERE" {
                all.push(format!(
                    "console: {}",
                    entry["message"].as_str().unwrap_or("?")
                ));
            }
        }
        // A favicon request is the browser's, not the page's.
        all.retain(|p| !p.contains("favicon.ico") && !allowed.iter().any(|a| p.contains(a)));
        all
    }

    /// No CSP violation, no JS error, no console error on this page.
    pub(crate) fn assert_clean(&mut self, page: &str) {
        let problems = self.problems(&[]);
        assert!(problems.is_empty(), "{page}: {problems:#?}");
    }

    /// A PNG of the window, scrolled to the top with nothing focused.
    pub(crate) fn screenshot(&self, path: &Path) {
        self.js("if (document.activeElement) document.activeElement.blur();
             window.scrollTo(0, 0);
             return true;");
        let png = self
            .rt
            .block_on(self.client().screenshot())
            .unwrap_or_else(|e| panic!("screenshot: {e}"));
        std::fs::write(path, png).unwrap();
    }

    /// A PNG of the window scrolled so the element `css` is at its top
    /// (less `above` pixels), nothing focused.
    pub(crate) fn screenshot_at(&self, path: &Path, css: &str, above: i64) {
        self.js_with(
            "if (document.activeElement) document.activeElement.blur();
             document.querySelector(arguments[0]).scrollIntoView();
             window.scrollBy(0, -arguments[1]);
             return true;",
            vec![json!(css), json!(above)],
        );
        let png = self
            .rt
            .block_on(self.client().screenshot())
            .unwrap_or_else(|e| panic!("screenshot: {e}"));
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(20), client.close()).await
            });
        }
        // chromedriver and anything it left, as one process group.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.driver.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
