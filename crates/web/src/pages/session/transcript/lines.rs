//! The transcript's lines: one `.line` per row, in order, each with the
//! anchor `row-<id>`, `data-feed-id`, `data-kind` and `data-type` (the DOM
//! contract the browser tests and `session.js` read).
//!
//! Note \[Message tokens\]: Claude Code writes one line per content block
//! of a message, each with the message's usage so far; the message's
//! tokens are those of its *last* line (the summary counts them so too,
//! core's Note \[Native tokens\]). On a page every usage row of a message
//! id but the last is hidden, so the one shown is the message's count
//! (a message cut by a page boundary shows its count so far). Codex's
//! running totals (`cumulative`) repeat about half the time: a repeat of
//! the previous total is hidden.
//!
//! Note \[Calls and their results\]: a `tool_use` row is drawn as what the
//! tool did (`tools`), with its result: the `tool_result` row answering it
//! (by `tool_use_id`, the first one after it on the same page) is drawn
//! inside the call's line, and so is the `tool_error` row naming a call
//! drawn with its result. Their
//! own lines stay in the page, hidden and marked `folded`, with the first
//! line of the result and a link to the call, so every row keeps its
//! anchor (a search hit links to it), an error row keeps its `err` class,
//! and a hidden line that is the page's target shows (app.css). A result
//! whose call is on another page is drawn on its own, as before.
//!
//! Note \[Folded rows\]: hidden as well (kept in the page, `folded`): every
//! progress row of a run but its first, which is drawn as the run (`fold`),
//! and text or thinking rows with nothing to read.
//!
//! Rows drawn live by `session.js` are drawn plainly, one per row; the
//! page reloads when the session ends and is then drawn as here.

use std::collections::HashMap;

use agentshape_store::query::Session;
use maud::{Markup, html};
use serde_json::Value;

use super::highlight::{Budget, PAGE_BUDGET};
use super::outcome::Outcome;
use super::tools::{self, Call};
use super::{Row, first_line, fold, markdown, str_of};

/// How a row is drawn.
#[derive(Debug)]
enum Show<'a> {
    /// As itself.
    Plain,
    /// A tool call, with its result when on the page.
    Call {
        result: Option<Outcome<'a>>,
        child: Option<&'a str>,
    },
    /// A result or tool error drawn in the line of the call `call` (a row id).
    InCall { call: i64 },
    /// The first row of a progress run, drawn as the run.
    Run(fold::Run<'a>),
    /// A later row of a progress run.
    InRun,
    /// An empty reply.
    Empty,
}

/// One row's plan: hidden, the model shown, how it is drawn.
struct Plan<'a> {
    superseded: bool,
    model: Option<&'a str>,
    show: Show<'a>,
}

impl Plan<'_> {
    fn folded(&self) -> bool {
        matches!(self.show, Show::InCall { .. } | Show::InRun | Show::Empty)
    }
}

/// The transcript's lines (Notes \[Message tokens\], \[Calls and their
/// results\], \[Folded rows\]). Linear in the rows: each pass is one walk
/// with hash maps.
pub(crate) fn lines(rows: &[Row]) -> Markup {
    lines_with(rows, &Known::new())
}

/// The sessions below the one drawn, by id: a `Task` call shows its
/// sub-agent's tokens and cost beside the link (issue 41).
pub(crate) type Known<'a> = HashMap<&'a str, &'a Session>;

/// [`lines`], with the sessions below this one at hand.
pub(crate) fn lines_with(rows: &[Row], known: &Known<'_>) -> Markup {
    let plans = plan(rows);
    let mut budget = Budget::new(PAGE_BUDGET);
    html! {
        @for (r, p) in rows.iter().zip(plans) {
            (line(r, &p, rows, known, &mut budget))
        }
    }
}

fn event_type(r: &Row) -> Option<&str> {
    (r.kind == "event").then(|| r.body.get("event")?.get("type")?.as_str())?
}

fn plan(rows: &[Row]) -> Vec<Plan<'_>> {
    let last_partial = rows.iter().rposition(|r| r.kind == "partial");
    let mut last_usage: HashMap<&str, usize> = HashMap::new();
    // A call's row index by its id, and the sub-agent a call started.
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut children: HashMap<&str, &str> = HashMap::new();
    // A sidechain's first prompt → the uuid of its line (1.0.x inline
    // sub-agents, Note [Inline sub-agents' calls]).
    let mut inline: HashMap<&str, &str> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let ev = r.body.get("event").unwrap_or(&Value::Null);
        match event_type(r) {
            Some("usage") => {
                if let Some(id) = ev.get("message_id").and_then(Value::as_str) {
                    last_usage.insert(id, i);
                }
            }
            Some("tool_use") => {
                if let Some(id) = ev.get("id").and_then(Value::as_str) {
                    calls.entry(id).or_insert(i);
                }
            }
            Some("sub_agent") => {
                if let Some(t) = ev.get("tool_use_id").and_then(Value::as_str) {
                    children.entry(t).or_insert(str_of(ev, "agent_id"));
                }
            }
            // Note [Inline sub-agents' calls]: a Claude Code 1.0.x
            // sub-agent writes no progress rows; its lines sit in this file
            // (`sidechain`), the first its prompt, the `Task` call's own
            // `prompt`, and its session is `agent-<uuid of that line>`
            // (the runtime's Note [Native session ids]).
            Some("user_text") if r.body.get("sidechain").and_then(Value::as_bool) == Some(true) => {
                if let Some(uuid) = r.body.get("uuid").and_then(Value::as_str) {
                    inline.entry(str_of(ev, "text")).or_insert(uuid);
                }
            }
            _ => {}
        }
    }
    if !inline.is_empty() {
        for r in rows {
            let ev = r.body.get("event").unwrap_or(&Value::Null);
            if event_type(r) == Some("tool_use")
                && let (Some(id), Some(prompt)) = (
                    ev.get("id").and_then(Value::as_str),
                    ev.get("input")
                        .and_then(|i| i.get("prompt"))
                        .and_then(Value::as_str),
                )
                && let Some(uuid) = inline.get(prompt)
            {
                children.entry(id).or_insert(uuid);
            }
        }
    }
    let mut previous_total: Option<&Value> = None;
    let mut plans: Vec<Plan<'_>> = Vec::with_capacity(rows.len());
    // The result drawn in each call's line (by the call's row index).
    let mut answered: HashMap<usize, usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let ev = r.body.get("event").unwrap_or(&Value::Null);
        let ty = event_type(r);
        let superseded = match ty {
            Some("usage") if ev.get("cumulative").and_then(Value::as_bool) == Some(true) => {
                let repeat = previous_total.is_some() && previous_total == ev.get("tokens");
                previous_total = ev.get("tokens");
                repeat
            }
            Some("usage") => ev
                .get("message_id")
                .and_then(Value::as_str)
                .is_some_and(|id| last_usage.get(id) != Some(&i)),
            _ => r.kind == "partial" && Some(i) != last_partial,
        };
        let call_of = || {
            let id = ev.get("tool_use_id").and_then(Value::as_str)?;
            calls.get(id).copied().filter(|c| *c < i)
        };
        let show = match ty {
            Some("tool_use") => Show::Call {
                result: None,
                child: ev
                    .get("id")
                    .and_then(Value::as_str)
                    .and_then(|id| children.get(id).copied()),
            },
            Some("tool_result") => match call_of() {
                Some(c) if !answered.contains_key(&c) => {
                    answered.insert(c, i);
                    if let Show::Call { result, .. } = &mut plans[c].show {
                        *result = Some(Outcome {
                            content: ev.get("content").and_then(Value::as_str),
                            is_error: ev.get("is_error").and_then(Value::as_bool) == Some(true),
                        });
                    }
                    Show::InCall { call: rows[c].id }
                }
                _ => Show::Plain,
            },
            // Only with its result: the call's line then says it failed.
            Some("tool_error") => match call_of() {
                Some(c) if answered.contains_key(&c) => Show::InCall { call: rows[c].id },
                _ => Show::Plain,
            },
            _ if fold::empty(r) => Show::Empty,
            _ => Show::Plain,
        };
        plans.push(Plan {
            superseded,
            model: None,
            show,
        });
    }
    // Progress runs, over the rows hidden so far.
    let hidden: Vec<bool> = rows
        .iter()
        .zip(&plans)
        .map(|(r, p)| p.superseded || quiet(r) || p.folded())
        .collect();
    for run in fold::progress_runs(rows, &hidden) {
        for i in &run.rows[1..] {
            plans[*i].show = Show::InRun;
        }
        let head = run.rows[0];
        plans[head].show = Show::Run(run);
    }
    // The model of a turn, shown where it changes on a line that shows
    // (runtime's Note [Native feed rows]: an imported row names its line's model).
    let mut model: Option<&str> = None;
    for (r, p) in rows.iter().zip(plans.iter_mut()) {
        if p.superseded || quiet(r) || p.folded() {
            continue;
        }
        let m = r.body.get("model").and_then(Value::as_str);
        if m.is_some() && m != model {
            model = m;
            p.model = m;
        }
    }
    plans
}

/// A row shown hidden whatever its neighbours (an event type in [`QUIET`]).
fn quiet(r: &Row) -> bool {
    event_type(r).is_some_and(|t| QUIET.contains(&t))
}

/// `t` as a count of tokens: `1234` as `1,234`.
fn count(v: Option<&Value>) -> String {
    let n = v.and_then(Value::as_u64).unwrap_or(0);
    crate::pages::numbers::thousands(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Event types that mark a line as an error (highlighted).
fn is_error(ty: &str, ev: &Value) -> bool {
    match ty {
        "tool_result" => ev.get("is_error").and_then(Value::as_bool) == Some(true),
        "tool_error" | "api_error" => true,
        _ => false,
    }
}

/// Event types that say nothing a reader needs (the row is kept, hidden).
const QUIET: &[&str] = &["message", "end", "partial"];

fn line(r: &Row, plan: &Plan<'_>, rows: &[Row], known: &Known<'_>, budget: &mut Budget) -> Markup {
    let b = &r.body;
    let cut = b.get("truncated").and_then(Value::as_bool) == Some(true);
    let ev = b.get("event").unwrap_or(&Value::Null);
    let ty = if r.kind == "event" {
        str_of(ev, "type")
    } else {
        ""
    };
    let folded = plan.folded();
    let hidden = plan.superseded || (r.kind == "event" && QUIET.contains(&ty)) || folded;
    let err = r.kind == "event" && is_error(ty, ev);
    let class = format!(
        "line k-{} t-{}{}{}{}",
        r.kind,
        if ty.is_empty() { "none" } else { ty },
        if cut { " cut" } else { "" },
        if err { " err" } else { "" },
        if folded { " folded" } else { "" }
    );
    // An imported session's row says which line of the agent's file it
    // came from; its `created_at` is that line's own timestamp.
    let source_line = b.get("line").and_then(Value::as_u64);
    html! {
        div id={ "row-" (r.id) } class=(class) hidden[hidden] data-feed-id=(r.id) data-kind=(r.kind)
            data-type=[(!ty.is_empty()).then_some(ty)] {
            @if let Some(n) = source_line {
                time.ts datetime=(r.created_at) title={ (r.created_at) " · line " (n) } {
                    (r.created_at.get(11..19).unwrap_or(&r.created_at))
                }
                " "
            }
            @if let Some(m) = plan.model {
                span.model title="model of this turn" { (m) } " "
            }
            @match &plan.show {
                Show::Call { result, child } => (tools::view(&Call {
                    name: str_of(ev, "name"),
                    input: ev.get("input").unwrap_or(&Value::Null),
                    result: *result,
                    child: *child,
                    child_session: child.and_then(|c| known.get(format!("agent-{c}").as_str()).copied()),
                }, budget)),
                Show::InCall { call } => span.muted {
                    @if ty == "tool_error" { "tool error · " span.tool-name { (str_of(ev, "name")) } }
                    @else { (ev.get("content").and_then(Value::as_str).map_or_else(|| "(content not kept)".to_owned(), first_line)) }
                    " · " a href={ "#row-" (call) } { "shown with its call" }
                },
                Show::Run(run) => (fold::run_line(run, rows)),
                Show::InRun => span.muted { "sub-agent " code { (str_of(ev, "agent_id")) } " reported progress" },
                Show::Empty => {},
                Show::Plain => (plain(r, ty, ev, budget)),
            }
        }
    }
}

/// A row drawn as itself.
fn plain(r: &Row, ty: &str, ev: &Value, budget: &mut Budget) -> Markup {
    let b = &r.body;
    html! {
        @match (r.kind.as_str(), ty) {
            ("event", "text") => (markdown::render(str_of(ev, "text"), budget)),
            // A prompt is shown as typed: people paste code and logs.
            ("event", "user_text") => { span.tag.user { "user" } " " span.text { (str_of(ev, "text")) } },
            ("event", "usage") => {
                @let t = ev.get("tokens").unwrap_or(&Value::Null);
                span.usage.muted {
                    @if ev.get("cumulative").and_then(Value::as_bool) == Some(true) { "tokens so far · " } @else { "tokens · " }
                    span.tin { (count(t.get("input"))) } " in · "
                    span.tout { (count(t.get("output"))) } " out"
                    @if t.get("cache_read").and_then(Value::as_u64).unwrap_or(0) > 0 || t.get("cache_write").and_then(Value::as_u64).unwrap_or(0) > 0 {
                        " · cache " (count(t.get("cache_read"))) " read, " (count(t.get("cache_write"))) " written"
                    }
                    @if let Some(m) = ev.get("model").and_then(Value::as_str) { " · " span.usage-model { (m) } }
                }
            },
            ("event", "compaction") => div.compaction role="separator" {
                span.divider {
                    "context compacted"
                    @if let Some(t) = ev.get("trigger").and_then(Value::as_str) { " · " (t) }
                    @if let Some(n) = ev.get("pre_tokens").and_then(Value::as_u64) { " · " (count(Some(&Value::from(n)))) " tokens before" }
                    @let k = str_of(ev, "kind");
                    @if !k.is_empty() && k != "compact_boundary" { " · " (k) }
                }
            },
            ("event", "compact_summary") => details.compact-summary {
                summary { span.tag { "compact summary" } " " (first_line(str_of(ev, "text"))) }
                pre { (str_of(ev, "text")) }
            },
            ("event", "tool_error") => span.bad { "tool error · " span.tool-name { (str_of(ev, "name")) } },
            ("event", "api_error") => span.bad {
                "API error"
                @let cat = str_of(ev, "category");
                @if !cat.is_empty() { " (" (cat) @if let Some(st) = ev.get("status").and_then(Value::as_u64) { ", " (st) } ")" }
                ": " (str_of(ev, "message"))
            },
            ("event", "sub_agent") => span.muted { "sub-agent " code { (str_of(ev, "agent_id")) } " reported progress" },
            ("event", "thinking") => details.thinking {
                summary { span.tag { "thinking" } " " (first_line(str_of(ev, "text"))) }
                (markdown::render(str_of(ev, "text"), budget))
            },
            ("event", "tool_result") => {
                @let content = ev.get("content").and_then(Value::as_str);
                @let error = ev.get("is_error").and_then(Value::as_bool) == Some(true);
                details {
                    summary {
                        span.tag.bad[error] { @if error { "tool error" } @else { "result" } }
                        " " (content.map_or_else(|| "(content not kept)".to_owned(), first_line))
                    }
                    pre { (content.unwrap_or("The decoder keeps no tool-result text; the forensic log has it.")) }
                }
            },
            ("event", "init") => span.muted { "init · model " (str_of(ev, "model")) },
            ("event", "result") => {
                @let info = ev.get("info").unwrap_or(&Value::Null);
                span.muted {
                    "result · " (str_of(info, "subtype"))
                    @if info.get("is_error").and_then(Value::as_bool) == Some(true) { " · error" }
                }
            },
            ("event", "skipped") => span.muted {
                "line " (ev.get("line").map(Value::to_string).unwrap_or_default())
                " skipped (" (str_of(ev, "reason")) ")"
            },
            ("event", "warning") => span.warn { "warning: " (str_of(ev, "message")) },
            ("event", "other") => span.muted { (str_of(ev, "kind")) },
            ("event", other) => span.muted { (other) },
            ("partial", _) => details open {
                summary { span.tag { "partial output" } }
                pre { (b.get("value").and_then(|v| serde_json::to_string_pretty(v).ok()).unwrap_or_default()) }
            },
            ("started", _) => span.muted {
                "started · tier " (b.get("tier").map(Value::to_string).unwrap_or_default())
            },
            ("ended", _) => span.muted { "ended · " (str_of(b, "status")) },
            ("feed_gap", _) => span.warn {
                (b.get("dropped").map_or_else(|| "some".to_owned(), Value::to_string))
                " lines not shown (feed gap)"
            },
            ("hook", _) => {
                @let verdict = str_of(b, "verdict");
                @let errors = b.get("errors").and_then(Value::as_array).map_or(0, Vec::len);
                span class={ "hook " (if matches!(verdict, "blocked" | "gave_up") { "bad" } else { "muted" }) } {
                    span.tag { "hook" } " " (str_of(b, "event"))
                    @let t = str_of(b, "agent_type");
                    @if !t.is_empty() { " · " (t) }
                    " · " span.verdict { (verdict) }
                    @if let Some(n) = b.get("blocks").and_then(Value::as_u64).filter(|n| *n > 0) { " · block " (n) }
                    @if errors > 0 { " · " (errors) " error" @if errors > 1 { "s" } }
                }
            },
            (kind, _) => span.muted { (kind) " " (b.to_string()) },
        }
    }
}

#[cfg(test)]
mod tests;
