//! The Claude Code hook's calls on the dashboard, in a real browser (issue
//! 30): a session blocked twice then valid shows "blocked 2×, then valid"
//! with each attempt's errors and reason, and a call made while the page is
//! open arrives through the live feed.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use super::{Browser, serve};

/// The session id the hook calls are recorded under.
pub(crate) const HOOKED: &str = "5e1f0c2a-7b3d-4c8e-9a10-0000000000b1";

/// Run `agentshape hook stop` once, as Claude Code runs it.
pub(crate) fn hook_stop(db: &Path, state: &Path, message: &str, active: bool) {
    let input = json!({"session_id": HOOKED, "transcript_path": "/home/ana/.claude/projects/p/s.jsonl",
        "cwd": "/home/ana/src/loop", "hook_event_name": "Stop", "stop_hook_active": active,
        "last_assistant_message": message});
    let mut child = crate::support::agentshape_std()
        .args(["hook", "stop", "--profile", "claude-loop", "--store"])
        .arg(db)
        .env("AGENTSHAPE_STATE_DIR", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// Two blocked answers and a valid one.
pub(crate) fn fill_hooked(db: &Path, state: &Path) {
    hook_stop(
        db,
        state,
        "All done, the story is complete and tests pass.",
        false,
    );
    hook_stop(
        db,
        state,
        r#"{"action": "finished", "confidence": "high", "files": "src/lib.rs"}"#,
        true,
    );
    hook_stop(
        db,
        state,
        "```json\n{\"action\": \"complete\", \"reasoning\": \"tests pass\", \"confidence\": 92, \"files\": [{\"path\": \"src/lib.rs\", \"changes\": \"parser fixed\"}]}\n```",
        true,
    );
}

#[test]
fn a_hooked_session_shows_its_attempts_and_new_calls_arrive_live() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooks.db");
    let state = dir.path().join("state");
    fill_hooked(&db, &state);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto(&format!("/sessions/{HOOKED}"));
    browser.find("#hook-summary");
    assert_eq!(
        browser.js("return document.getElementById('hook-summary').textContent;"),
        json!("blocked 2×, then valid")
    );
    let verdicts = browser.js(
        "return [...document.querySelectorAll('#hook-calls > li')].map(li => li.dataset.verdict);",
    );
    assert_eq!(verdicts, json!(["blocked", "blocked", "valid"]));
    // The second attempt's errors, each with its path.
    let paths = browser.js(
        "return [...document.querySelectorAll('#hook-calls > li:nth-child(2) .error-list li code')].map(c => c.textContent);",
    );
    assert_eq!(paths, json!(["/action", "/confidence", "/files"]));
    assert_eq!(
        browser.js("return document.querySelectorAll('#hook-calls details pre.reason').length;"),
        json!(2)
    );
    // The page follows the session: a new call shows up as a hook row.
    let before = browser.js("return document.querySelectorAll('#transcript .line.k-hook').length;");
    assert_eq!(before, json!(3));
    hook_stop(&db, &state, "no json this time", false);
    browser.wait_js(
        "the live hook row",
        "return document.querySelectorAll('#transcript .line.k-hook').length === 4 \
         && document.querySelector('#transcript .line.k-hook:last-child .verdict')?.textContent === 'blocked';",
    );
    browser.assert_clean("session page with hook calls");
}
