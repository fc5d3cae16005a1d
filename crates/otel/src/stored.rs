//! Sessions read back from a store as [`SessionTrace`]s, for `export otlp`
//! and `watch`: the session row, its feed (the agent's events with the
//! times they were seen or written), its verdict and its hook calls.

use agentshape_store::query::{self, MAX_FEED_LIMIT, MAX_LIMIT, SessionFilter, Source};
use agentshape_store::time;
use serde_json::Value;

use crate::error::Error;
use crate::live::Folder;
use crate::session::{Check, Parent, SessionTrace, Usage};

/// The JSON Pointers of a list of violations (`[{"instance_path", …}]`).
pub fn failing_paths(errors: Option<&Value>) -> Vec<String> {
    errors
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|v| {
                    v.get("instance_path")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The verdict of a final validation: `valid`, `invalid`, or `none` when
/// nothing structured was found.
pub fn verdict_word(valid: bool, method: Option<&str>) -> &'static str {
    match (valid, method) {
        (true, _) => "valid",
        (false, None | Some("none")) => "none",
        (false, _) => "invalid",
    }
}

/// The guardrail of a session's final verdict (`{"valid", "errors", …}`
/// as the store keeps it), made when the session ended.
pub fn verdict_check(
    verdict: &Value,
    profile: Option<&str>,
    method: Option<&str>,
    end_ms: i64,
) -> Check {
    let valid = verdict.get("valid").and_then(Value::as_bool) == Some(true);
    Check {
        key: "verdict".to_owned(),
        name: profile.unwrap_or_default().to_owned(),
        started_ms: end_ms,
        ended_ms: end_ms,
        verdict: verdict_word(valid, method).to_owned(),
        failing_paths: failing_paths(verdict.get("errors")),
        method: method.map(str::to_owned),
        ..Check::default()
    }
}

/// The fields of one hook call that its guardrail span shows.
#[derive(Debug, Clone, Copy)]
pub struct HookFacts<'a> {
    /// `Stop`, `SubagentStop`.
    pub event: &'a str,
    /// `valid`, `blocked`, `gave_up`, `allowed`.
    pub verdict: &'a str,
    /// Extraction method.
    pub method: Option<&'a str>,
    /// The violations.
    pub errors: Option<&'a Value>,
    /// Blocks in a row.
    pub blocks: u32,
    /// Profile or schema.
    pub profile: Option<&'a str>,
    /// The block reason.
    pub reason: Option<&'a str>,
    /// The sub-agent.
    pub agent_id: Option<&'a str>,
    /// When (RFC 3339).
    pub created_at: &'a str,
}

/// The guardrail of one hook call; `None` for a `PostToolUse` capture
/// (its tool call is in the feed).
pub fn hook_check(h: &HookFacts<'_>) -> Option<Check> {
    if h.event == "PostToolUse" {
        return None;
    }
    let at = time::parse_ms(h.created_at).unwrap_or(0);
    Some(Check {
        // The time, event and sub-agent name one call (Note [Derived ids]).
        key: format!(
            "hook {} {} {}",
            h.created_at,
            h.event,
            h.agent_id.unwrap_or("")
        ),
        name: h.profile.unwrap_or_default().to_owned(),
        started_ms: at,
        ended_ms: at,
        verdict: h.verdict.to_owned(),
        failing_paths: failing_paths(h.errors),
        method: h.method.map(str::to_owned),
        hook_event: Some(h.event.to_owned()),
        agent_id: h.agent_id.map(str::to_owned),
        blocks: Some(h.blocks),
        reason: h.reason.map(str::to_owned),
        blocking: true,
    })
}

/// How many parents up a sub-agent's trace is looked for.
const MAX_DEPTH: usize = 8;

/// The name of the agent a replayed transcript came from (stored as
/// `replay`): what its events said, else what its model implies.
fn replayed_agent(hint: Option<&str>, model: Option<&str>) -> Option<&'static str> {
    if let Some(h) = hint {
        return Some(match h {
            "codex" => "codex",
            _ => "claude-code",
        });
    }
    Some(match model.and_then(crate::semconv::provider_of_model)? {
        "anthropic" => "claude-code",
        "openai" => "codex",
        _ => "gemini-cli",
    })
}

/// Fold the feed of session `id` into `folder`.
fn fold_feed(store: &dyn Source, id: &str, started: i64, folder: &mut Folder) -> Result<(), Error> {
    let mut after = 0;
    loop {
        let rows = query::feed_for_session(store, id, after, MAX_FEED_LIMIT)?;
        let Some(last) = rows.last() else { break };
        after = last.id;
        for r in &rows {
            if r.kind != "event" {
                continue;
            }
            let Ok(body) = serde_json::from_str::<Value>(&r.body) else {
                continue;
            };
            folder.row(time::parse_ms(&r.created_at).unwrap_or(started), &body);
        }
        if rows.len() < MAX_FEED_LIMIT {
            break;
        }
    }
    Ok(())
}

/// Where sub-agent session `id` (a child of `parent_id`) hangs (Note
/// \[Sub-agent traces\] in `spans`): the parent's `Task` call, read from
/// the parent's feed, and the top ancestor whose trace it joins.
fn parent_of(store: &dyn Source, id: &str, parent_id: &str) -> Result<Parent, Error> {
    let mut folder = Folder::new(SessionTrace::new(parent_id, "agent", 0), false);
    fold_feed(store, parent_id, 0, &mut folder)?;
    let tool_use_id = folder.task_of(id).map(str::to_owned);
    let mut top = parent_id.to_owned();
    for _ in 0..MAX_DEPTH {
        match query::session(store, &top)?.and_then(|d| d.session.parent_id) {
            Some(up) if up != top && up != id => top = up,
            _ => break,
        }
    }
    Ok(Parent {
        session_id: parent_id.to_owned(),
        trace_session: top,
        tool_use_id,
    })
}

/// Session `id` from `store` as a trace; `None` when it is not stored.
/// `keep_content` reads prompts, texts and tool inputs and results too.
///
/// # Errors
/// When the store cannot be read.
pub fn load(
    store: &dyn Source,
    id: &str,
    keep_content: bool,
) -> Result<Option<SessionTrace>, Error> {
    let Some(detail) = query::session(store, id)? else {
        return Ok(None);
    };
    let row = &detail.session;
    let started = time::parse_ms(&row.started_at).unwrap_or(0);
    let mut trace = SessionTrace::new(&row.id, row.agent.as_deref().unwrap_or("agent"), started);
    trace.model.clone_from(&row.model);
    trace.agent_version.clone_from(&row.agent_version);
    trace.status = if row.lost {
        "lost".to_owned()
    } else {
        row.status.to_string()
    };
    trace.ended_ms = match (&row.ended_at, row.status.as_str()) {
        (Some(e), _) => time::parse_ms(e),
        // A lost session ends at its last sign of life.
        (None, "running") if row.lost => row.heartbeat_at.as_deref().and_then(time::parse_ms),
        (None, "running") => None,
        (None, _) => Some(started),
    };
    trace.error.clone_from(&row.error);
    trace.error_category.clone_from(&row.error_category);
    trace.usage = usage_of(&trace.agent, row);
    trace.cost_usd = row.cost_usd;
    trace.profile.clone_from(&row.profile);
    trace.tier = u32::try_from(row.tier).ok();
    let mut folder = Folder::new(trace, keep_content);
    fold_feed(store, id, started, &mut folder)?;
    let hint = folder.agent_hint();
    let mut trace = folder.trace;
    if trace.agent == "replay" {
        if let Some(name) = replayed_agent(hint, trace.model.as_deref()) {
            name.clone_into(&mut trace.agent);
            trace.usage = usage_of(name, row);
        }
    }
    if let Some(parent) = row.parent_id.as_deref().filter(|p| *p != row.id) {
        trace.parent = Some(parent_of(store, &row.id, parent)?);
    }
    if let (Some(v), Some(end)) = (&detail.verdict, trace.ended_ms) {
        trace.checks.push(verdict_check(
            v,
            row.profile.as_deref(),
            row.extraction_method.as_deref(),
            end,
        ));
    }
    for h in query::hook_calls(store, id, MAX_LIMIT)? {
        let facts = HookFacts {
            event: &h.event,
            verdict: &h.verdict,
            method: h.method.as_deref(),
            errors: h.errors.as_ref(),
            blocks: h.blocks,
            profile: h.profile.as_deref(),
            reason: h.reason.as_deref(),
            agent_id: h.agent_id.as_deref(),
            created_at: &h.created_at,
        };
        trace.checks.extend(hook_check(&facts));
    }
    Ok(Some(trace))
}

/// The ids of the stored sessions started at or after `since_ms` (all
/// without it), newest first.
///
/// # Errors
/// When the store cannot be read.
pub fn session_ids(store: &dyn Source, since_ms: Option<i64>) -> Result<Vec<String>, Error> {
    let since = since_ms.map(time::format_ms);
    let mut ids = Vec::new();
    let mut before = None;
    loop {
        let page = query::sessions(
            store,
            &SessionFilter {
                limit: MAX_LIMIT,
                before: before.clone(),
                ..SessionFilter::default()
            },
        )?;
        let full = page.len() >= MAX_LIMIT;
        for s in page {
            if since
                .as_deref()
                .is_some_and(|since| s.started_at.as_str() < since)
            {
                return Ok(ids);
            }
            before = Some(s.id.clone());
            ids.push(s.id);
        }
        if !full {
            return Ok(ids);
        }
    }
}

/// The usage a session's row states, as its spans report it (a negative
/// count, from a store edited by hand, as 0).
fn usage_of(agent: &str, s: &agentshape_store::Session) -> Usage {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Usage::stored(
        agent,
        n(s.input_tokens),
        n(s.output_tokens),
        n(s.cache_read_tokens),
        n(s.cache_write_tokens),
    )
}

/// The trace of a session that just ended in this process: `base` (the
/// tool calls and texts folded from its events, or an empty trace) with
/// the record's facts and its verdict, as the store will keep them, so a
/// live export and a later `export otlp` give the same spans.
pub fn from_record(record: &agentshape_store::Session, base: Option<SessionTrace>) -> SessionTrace {
    let started = time::parse_ms(&record.started_at).unwrap_or(0);
    let agent = record.agent.as_deref().unwrap_or("agent");
    let mut trace = base.unwrap_or_else(|| SessionTrace::new(&record.id, agent, started));
    agent.clone_into(&mut trace.agent);
    record.id.clone_into(&mut trace.session_id);
    trace.started_ms = started;
    trace.ended_ms = Some(
        record
            .ended_at
            .as_deref()
            .and_then(time::parse_ms)
            .unwrap_or_else(time::now_ms),
    );
    // Events folded live are timed when seen, which may be a little after
    // the record's end: the root covers them.
    let last = trace
        .tools
        .iter()
        .filter_map(|t| t.ended_ms.or(Some(t.started_ms)))
        .max();
    trace.ended_ms = trace.ended_ms.max(last);
    if record.model.is_some() {
        trace.model.clone_from(&record.model);
    }
    trace.status = record.status.to_string();
    trace.error.clone_from(&record.error);
    trace.error_category.clone_from(&record.error_category);
    trace.usage = usage_of(agent, record);
    trace.agent_version.clone_from(&record.agent_version);
    if trace.agent == "replay" {
        if let Some(name) = replayed_agent(None, trace.model.as_deref()) {
            name.clone_into(&mut trace.agent);
            trace.usage = usage_of(name, record);
        }
    }
    trace.cost_usd = record.cost_usd;
    trace.profile.clone_from(&record.profile);
    trace.tier = u32::try_from(record.tier).ok();
    if let (Some(v), Some(end)) = (&record.verdict, trace.ended_ms) {
        // The verdict as stored (a verdict is always a JSON object).
        let v = serde_json::to_value(v).unwrap_or_default();
        trace.checks.push(verdict_check(
            &v,
            record.profile.as_deref(),
            record.extraction_method.as_deref(),
            end,
        ));
    }
    trace
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_store::{FeedEntry, HookCall, Session, SqliteStore, Store};
    use serde_json::json;

    #[test]
    fn a_stored_session_reads_back_with_its_feed_verdict_and_hook_calls() {
        let mut s = SqliteStore::open_in_memory().unwrap();
        let mut rec = Session::new("s1", "2026-01-01T00:00:00.000Z", "completed");
        rec.agent = Some("claude-code".into());
        rec.ended_at = Some("2026-01-01T00:01:00.000Z".into());
        rec.profile = Some("claude-ops".into());
        rec.extraction_method = Some("fenced".into());
        rec.verdict = Some(
            serde_json::from_value(json!({"valid": false, "errors": [{"instance_path": "/a", "schema_path": "", "message": "m"}], "repairs": [], "coercions": []})).unwrap(),
        );
        rec.cache_read_tokens = 7;
        s.start_session(&rec).unwrap();
        let row = |at: &str, e: serde_json::Value| FeedEntry {
            seq: None,
            session_id: "s1".into(),
            kind: "event".into(),
            body: json!({"kind": "event", "event": e}).to_string(),
            created_at: at.into(),
        };
        s.append_feed(&[
            row(
                "2026-01-01T00:00:10.000Z",
                json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}),
            ),
            row(
                "2026-01-01T00:00:12.500Z",
                json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true}),
            ),
        ])
        .unwrap();
        s.write_session(&rec).unwrap();
        let mut h = HookCall::new("s1", "Stop", "blocked", "2026-01-01T00:00:30.000Z");
        h.errors = Some(json!([{"instance_path": "/b", "schema_path": "", "message": "m"}]));
        h.profile = Some("claude-ops".into());
        h.method = Some("bare".into());
        s.save_hook(&h, &[]).unwrap();
        let t = load(&s, "s1", false).unwrap().unwrap();
        assert_eq!(t.agent, "claude-code");
        assert_eq!(
            (t.started_ms, t.ended_ms),
            (1_767_225_600_000, Some(1_767_225_660_000))
        );
        assert_eq!(t.usage.cache_read, 7);
        assert_eq!(t.tools.len(), 1);
        assert_eq!(
            (t.tools[0].started_ms, t.tools[0].ended_ms),
            (1_767_225_610_000, Some(1_767_225_612_500))
        );
        assert!(t.tools[0].is_error);
        let checks: Vec<(&str, &str, Vec<String>)> = t
            .checks
            .iter()
            .map(|c| (c.key.as_str(), c.verdict.as_str(), c.failing_paths.clone()))
            .collect();
        // The main agent's Stop hook call sets the session's verdict (the store's rule).
        assert_eq!(checks[0], ("verdict", "invalid", vec!["/b".to_owned()]));
        assert_eq!(t.checks[0].method.as_deref(), Some("bare"));
        assert_eq!(checks[1].1, "blocked");
        assert_eq!(checks[1].2, ["/b"]);
        assert!(load(&s, "nope", false).unwrap().is_none());
        assert_eq!(session_ids(&s, None).unwrap(), ["s1"]);
        assert!(session_ids(&s, Some(1_767_225_600_001)).unwrap().is_empty());
    }

    fn usage_row(at: &str, e: &serde_json::Value) -> FeedEntry {
        FeedEntry {
            seq: None,
            session_id: String::new(),
            kind: "event".into(),
            body: json!({"kind": "event", "event": e}).to_string(),
            created_at: at.into(),
        }
    }

    fn store_with(id: &str, agent: &str, rows: Vec<FeedEntry>) -> SqliteStore {
        let mut s = SqliteStore::open_in_memory().unwrap();
        let mut rec = Session::new(id, "2026-01-01T00:00:00.000Z", "completed");
        rec.agent = Some(agent.into());
        rec.ended_at = Some("2026-01-01T00:01:00.000Z".into());
        s.start_session(&rec).unwrap();
        let rows: Vec<FeedEntry> = rows
            .into_iter()
            .map(|mut r| {
                r.session_id = id.into();
                r
            })
            .collect();
        s.append_feed(&rows).unwrap();
        s.write_session(&rec).unwrap();
        s
    }

    #[test]
    fn a_claude_message_repeated_over_lines_is_one_call_with_its_last_usage() {
        let u = |out: u64| {
            json!({"type": "usage", "message_id": "msg_1", "request_id": "req_1",
                "model": "claude-sonnet-4-5", "cumulative": false,
                "tokens": {"input": 10, "output": out, "cache_read": 300, "cache_write": 20}})
        };
        let s = store_with(
            "c1",
            "claude-code",
            vec![
                usage_row("2026-01-01T00:00:01.000Z", &u(1)),
                usage_row("2026-01-01T00:00:02.000Z", &u(40)),
            ],
        );
        let t = load(&s, "c1", false).unwrap().unwrap();
        assert_eq!(t.chats.len(), 1, "{:?}", t.chats);
        let c = &t.chats[0];
        assert_eq!(c.response_id.as_deref(), Some("msg_1"));
        assert_eq!(c.usage.output, 40);
        assert_eq!(c.usage.prompt_total(), 330);
        assert_eq!(
            (c.started_ms, c.ended_ms),
            (1_767_225_601_000, 1_767_225_602_000)
        );
    }

    #[test]
    fn codex_totals_become_one_call_per_growth_that_sum_to_the_last_total() {
        let total = |input: u64, cached: u64, out: u64| {
            json!({"type": "usage", "cumulative": true, "model": "gpt-5-codex",
                "tokens": {"input": input, "output": out, "cache_read": cached, "cache_write": 0}})
        };
        let s = store_with(
            "x1",
            "codex",
            vec![
                usage_row("2026-01-01T00:00:01.000Z", &total(1200, 1000, 50)),
                usage_row("2026-01-01T00:00:02.000Z", &total(1200, 1000, 50)),
                usage_row("2026-01-01T00:00:03.000Z", &total(3000, 2500, 120)),
            ],
        );
        let t = load(&s, "x1", false).unwrap().unwrap();
        assert_eq!(t.chats.len(), 2, "{:?}", t.chats);
        let prompt: u64 = t.chats.iter().map(|c| c.usage.prompt_total()).sum();
        let cached: u64 = t.chats.iter().map(|c| c.usage.cache_read).sum();
        let out: u64 = t.chats.iter().map(|c| c.usage.output).sum();
        assert_eq!((prompt, cached, out), (3000, 2500, 120));
    }

    #[test]
    fn a_replayed_codex_transcript_is_codex_and_a_sub_agent_hangs_under_its_task() {
        let mut s = store_with(
            "r1",
            "replay",
            vec![usage_row(
                "2026-01-01T00:00:01.000Z",
                &json!({"type": "usage", "cumulative": true,
                    "tokens": {"input": 5, "output": 1, "cache_read": 0, "cache_write": 0}}),
            )],
        );
        assert_eq!(load(&s, "r1", false).unwrap().unwrap().agent, "codex");
        let mut parent = Session::new("p1", "2026-01-01T00:00:00.000Z", "completed");
        parent.agent = Some("claude-code".into());
        s.start_session(&parent).unwrap();
        let row = |e: serde_json::Value| FeedEntry {
            session_id: "p1".into(),
            ..usage_row("2026-01-01T00:00:01.000Z", &e)
        };
        s.append_feed(&[
            row(json!({"type": "tool_use", "id": "toolu_9", "name": "Task", "input": {}})),
            row(json!({"type": "sub_agent", "agent_id": "abc", "tool_use_id": "toolu_9"})),
        ])
        .unwrap();
        let mut child = Session::new("agent-abc", "2026-01-01T00:00:00.000Z", "completed");
        child.parent_id = Some("p1".into());
        child.agent = Some("claude-code".into());
        s.start_session(&child).unwrap();
        let t = load(&s, "agent-abc", false).unwrap().unwrap();
        assert_eq!(
            t.parent,
            Some(Parent {
                session_id: "p1".into(),
                trace_session: "p1".into(),
                tool_use_id: Some("toolu_9".into()),
            })
        );
    }
}
