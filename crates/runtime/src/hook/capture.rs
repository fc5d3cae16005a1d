//! `hook post-tool-use`: a tool call and its result into the live feed.
//!
//! Note \[Tool calls from the hook\]: Claude Code writes its session file
//! in batches, so a session being worked on shows up in `serve` only when
//! it flushes (and `watch` reads it). The `PostToolUse` hook sees each tool
//! call as it returns: its call and result become two feed rows of the
//! shape the native import writes (`{"kind":"event","event":{"type":
//! "tool_use",…}}` and `tool_result`), marked `"via":"hook"`, and the
//! session row is made if it is not there yet (the import fills it in
//! later). It never blocks and never waits past the hook budget (Note \[A
//! hook never breaks the session\]).

use std::time::Instant;

use agentshape_core::hook::HookInput;
use agentshape_store::{FeedEntry, HookCall, time};
use serde_json::{Value, json};

use super::HookError;
use super::check::{Answer, BUDGET, OpenStore, Settle, Stored, cut};
use super::spool::Spool;
use crate::feed::FeedOptions;

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a tool response says it failed (`is_error`, or an `error` field).
fn failed(response: &Value) -> bool {
    response.get("is_error").and_then(Value::as_bool) == Some(true)
        || response
            .get("error")
            .is_some_and(|e| !e.is_null() && e != &Value::Bool(false))
}

/// The two feed rows of one tool call (Note \[Tool calls from the hook\]).
pub fn rows(input: &HookInput, session: &str, at: &str) -> Vec<FeedEntry> {
    let max = FeedOptions::default().max_body;
    let name = input.tool_name.clone().unwrap_or_else(|| "tool".to_owned());
    let call = json!({"kind": "event", "via": "hook", "event": {
        "type": "tool_use", "id": input.tool_use_id, "name": name,
        "input": input.tool_input.clone().unwrap_or(Value::Null)}});
    let response = input.tool_response.clone().unwrap_or(Value::Null);
    let result = json!({"kind": "event", "via": "hook", "event": {
        "type": "tool_result", "tool_use_id": input.tool_use_id,
        "is_error": failed(&response),
        "content": cut(&text_of(&response), max / 2)}});
    [call, result]
        .into_iter()
        .map(|body| {
            let mut text = body.to_string();
            if text.len() > max {
                // Only an input of over 32 KB can get here: keep its head.
                text = json!({"kind": "event", "via": "hook", "event": {
                    "type": "tool_use", "id": input.tool_use_id, "name": name,
                    "input": cut(&text, max / 2)}})
                .to_string();
            }
            FeedEntry {
                seq: None,
                session_id: session.to_owned(),
                kind: "event".to_owned(),
                body: text,
                created_at: at.to_owned(),
            }
        })
        .collect()
}

/// Record one `PostToolUse` input; never blocks (stdout stays empty).
pub fn capture(input: &[u8], started: Instant, open: OpenStore, spool: Option<Spool>) -> Answer {
    let no = |w: String| Answer {
        stdout: None,
        warnings: vec![w],
        call: None,
        stored: Stored::No,
        settle: Settle::default(),
    };
    let input = match HookInput::parse(input) {
        Ok(i) => i,
        Err(e) => return no(e.to_string()),
    };
    let Some(session) = input.session_id.clone() else {
        return no("hook input has no session_id: nothing is recorded".to_owned());
    };
    let at = time::now();
    let call = HookCall {
        session_id: session.clone(),
        agent_id: None,
        agent_type: None,
        event: "PostToolUse".to_owned(),
        verdict: "captured".to_owned(),
        method: None,
        errors: None,
        blocks: 0,
        stop_hook_active: false,
        profile: None,
        reason: None,
        message: None,
        warning: None,
        created_at: at.clone(),
        project: input.cwd.clone(),
        transcript_path: input.transcript_path.clone(),
        output: None,
    };
    let feed = rows(&input, &session, &at);
    let (tx, rx) = std::sync::mpsc::channel();
    let (c, f) = (call.clone(), feed.clone());
    let drain = spool.clone();
    std::thread::spawn(move || {
        let result = open().and_then(|mut store| {
            if let Some(s) = &drain {
                let _ = s.drain(&mut *store, started + BUDGET / 2);
            }
            store.save_hook(&c, &f).map_err(HookError::Store)
        });
        let _ = tx.send(result);
    });
    let mut warnings = Vec::new();
    let why = match rx.recv_timeout((started + BUDGET).saturating_duration_since(Instant::now())) {
        Ok(Ok(_)) => {
            return Answer {
                stdout: None,
                warnings,
                call: Some(call),
                stored: Stored::Yes,
                settle: Settle::default(),
            };
        }
        Ok(Err(e)) => e,
        Err(_) => HookError::Timeout,
    };
    let stored = match spool.map(|s| (s.push(&call, &feed), s)) {
        Some((Ok(_), s)) => {
            warnings.push(format!("{why}: kept in {}", s.path().display()));
            Stored::Spooled
        }
        Some((Err(e), _)) => {
            warnings.push(format!("{why}; and not kept: {e}"));
            Stored::No
        }
        None => {
            warnings.push(format!("{why}: not recorded"));
            Stored::No
        }
    };
    Answer {
        stdout: None,
        warnings,
        call: Some(call),
        stored,
        settle: Settle::default(),
    }
}
