//! One session's page, `GET /sessions/{id}`, and its JSON twin
//! `GET /api/sessions/{id}` (issue 9, item 3): the header, the escalation
//! chain, the verdict with each error pointing at its value in the
//! pretty-printed output, repairs and coercions, the transcript, and the
//! rows the session wrote. While the session runs, `session.js` appends its
//! feed rows and reloads once when it ends.
//!
//! Everything shown comes from the store or from an agent: it is text.
//! maud escapes every interpolation, links to other sessions percent-encode
//! the id, and no value is ever inserted as markup (Note \[CSP\] in
//! `security`).

mod json;
pub(crate) mod transcript;

use std::fmt::Write as _;
use std::sync::Arc;

use agentshape_store::ErrorKind;
use agentshape_store::query::Source as Store;
use agentshape_store::query::{self, SessionDetail};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::transcript::{Source, Transcript};
use super::numbers::{span, thousands};
use super::{Nav, error_page, layout, sessions};
use crate::State;

/// A session with everything its page and its JSON show.
#[derive(Debug, Serialize)]
pub(crate) struct Loaded {
    #[serde(flatten)]
    pub(crate) detail: SessionDetail,
    /// One page of its feed rows, or of rows decoded from its log (Notes
    /// \[Transcript source\], \[Transcript pages\]).
    pub(crate) transcript: Vec<transcript::Row>,
    /// The row the page started after (`?after=`, 0 for the first page).
    pub(crate) transcript_after: i64,
    /// More rows follow: the `?after=` of the next page.
    pub(crate) transcript_next: Option<i64>,
    /// The transcript does not show everything: more pages follow, or the
    /// log was longer than the page reads.
    pub(crate) transcript_truncated: bool,
    /// `feed`, `log` or `none`.
    pub(crate) transcript_source: Source,
    /// The feed id a live page follows after (Note \[Live after\]).
    pub(crate) feed_after: i64,
    /// The Claude Code hook's calls for this session, oldest first (issue 30).
    pub(crate) hooks: Vec<query::HookCallRow>,
}

/// Read a session for its page, its transcript from after row `after`
/// (Note \[Transcript pages\]); `None` for an unknown id.
///
/// Note \[Live after\]: a live page asks the feed for rows after the last
/// one it rendered. The feed's highest id is read *before* the transcript:
/// rows committed later have higher ids and are either in the transcript
/// (read after) or come live, so the larger of the two ids loses nothing and
/// repeats nothing, and a session with no rows yet does not replay the
/// whole feed of every other session.
///
/// # Errors
/// When the store cannot be read.
pub(crate) fn load(
    store: &dyn Store,
    id: &str,
    after: i64,
) -> agentshape_store::Result<Option<Loaded>> {
    let max = query::feed_max_id(store)?;
    let Some(detail) = query::session(store, id)? else {
        return Ok(None);
    };
    let Transcript {
        rows,
        truncated,
        next,
        source,
    } = transcript::load(store, &detail.session, after)?;
    let feed_after = match source {
        Source::Feed => rows.last().map_or(max, |r| r.id.max(max)),
        Source::Log | Source::None => max,
    };
    let hooks = query::hook_calls(store, id, MAX_HOOK_CALLS)?;
    Ok(Some(Loaded {
        detail,
        transcript: rows,
        transcript_after: after,
        transcript_next: next,
        transcript_truncated: truncated || next.is_some(),
        transcript_source: source,
        feed_after,
        hooks,
    }))
}

/// `?after=`: the transcript page after this row (Note \[Transcript pages\]).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageParams {
    pub(crate) after: Option<i64>,
}

impl PageParams {
    /// The row to start after; a negative one is an error.
    pub(crate) fn after(&self) -> Result<i64, &'static str> {
        match self.after {
            Some(n) if n < 0 => Err("after must be a non-negative row id"),
            n => Ok(n.unwrap_or(0)),
        }
    }
}

/// `GET /sessions/{id}?after=`: the page; 404 page for an unknown id, 400
/// for a path that is not UTF-8 or a bad `after`.
pub(crate) async fn page(
    AxState(state): AxState<Arc<State>>,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<PageParams>, QueryRejection>,
) -> Response {
    let Ok(Path(id)) = path else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "the session id in the address is not valid UTF-8",
        );
    };
    let after = match q.as_ref().map(|Query(q)| q.after()) {
        Ok(Ok(n)) => n,
        Ok(Err(m)) => return error_page(StatusCode::BAD_REQUEST, m),
        Err(e) => return error_page(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    let st = Arc::clone(&state);
    let key = id.clone();
    let loaded = tokio::task::spawn_blocking(move || load(st.open()?.source(), &key, after)).await;
    match loaded {
        Ok(Ok(Some(l))) => {
            let title = format!("Session {}", printable(&l.detail.session.id));
            layout(&title, Nav::Sessions, &["session.js"], &render(&l)).into_response()
        }
        Ok(Ok(None)) => error_page(
            StatusCode::NOT_FOUND,
            &format!("no session `{}`", printable(&id)),
        ),
        Ok(Err(e)) if e.kind() == ErrorKind::Busy => error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "the store is busy with writers; reload in a moment",
        ),
        Ok(Err(e)) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Control characters (a `%00` in the address) shown as U+FFFD: the text
/// is escaped anyway, this only keeps the page readable.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

/// `/sessions/<id>` with the id percent-encoded (an id may hold `/`, `?`, `#`).
pub(crate) fn session_href(id: &str) -> String {
    let mut out = String::from("/sessions/");
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| v.to_string())
}

fn duration(ms: Option<i64>) -> String {
    ms.map_or_else(|| "—".to_owned(), span)
}

/// The verdict's text: "valid", "3 errors", or why there is none.
fn verdict_text(verdict: Option<&Value>, running: bool) -> String {
    let Some(v) = verdict else {
        return if running {
            "running"
        } else {
            "no verdict stored"
        }
        .to_owned();
    };
    let n = v
        .get("errors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if v.get("valid").and_then(Value::as_bool) == Some(true) {
        "valid".to_owned()
    } else if n == 1 {
        "1 error".to_owned()
    } else if n > 1 {
        format!("{n} errors")
    } else {
        "invalid: no structured output".to_owned()
    }
}

fn items<'a>(verdict: Option<&'a Value>, key: &str) -> &'a [Value] {
    verdict
        .and_then(|v| v.get(key))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// Hook calls shown on a session page at most (a long interactive
/// session may have a few hundred turns).
const MAX_HOOK_CALLS: usize = 500;

/// What the hook's calls came to, per agent (the main one, then each
/// sub-agent in order of first call): "blocked 2×, then valid", one part
/// per stop chain (Note \[Blocks in a row\] in the runtime's `hook::check`).
pub(crate) fn hook_summary(calls: &[query::HookCallRow]) -> String {
    /// One agent's calls: its id and type, the chains ended, blocks open.
    struct Agent<'a> {
        id: Option<&'a str>,
        kind: Option<&'a str>,
        parts: Vec<String>,
        open: u32,
    }
    let mut agents: Vec<Agent<'_>> = Vec::new();
    for c in calls.iter().filter(|c| c.event != "PostToolUse") {
        let key = c.agent_id.as_deref();
        let i = if let Some(i) = agents.iter().position(|a| a.id == key) {
            i
        } else {
            agents.push(Agent {
                id: key,
                kind: c.agent_type.as_deref(),
                parts: Vec::new(),
                open: 0,
            });
            agents.len() - 1
        };
        let a = &mut agents[i];
        if c.verdict == "blocked" {
            a.open += 1;
            continue;
        }
        let end = match c.verdict.as_str() {
            "gave_up" => "let through invalid",
            "allowed" => "not checked",
            v => v,
        };
        a.parts.push(if a.open > 0 {
            format!("blocked {}×, then {end}", a.open)
        } else {
            end.to_owned()
        });
        a.open = 0;
    }
    agents
        .into_iter()
        .map(|mut a| {
            if a.open > 0 {
                a.parts
                    .push(format!("blocked {}×, waiting for the next answer", a.open));
            }
            let text = a.parts.join("; ");
            match a.id {
                None => text,
                Some(id) => format!("sub-agent {} {id}: {text}", a.kind.unwrap_or("")),
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The "Hook attempts" section: the summary, then each call with its
/// verdict, errors, and the reason the model was given.
fn hook_calls(calls: &[query::HookCallRow]) -> Markup {
    html! {
        h2 { "Hook attempts" }
        p #hook-summary { (hook_summary(calls)) }
        @if calls.len() >= MAX_HOOK_CALLS {
            p.muted { "The first " (MAX_HOOK_CALLS) " calls are shown." }
        }
        ol #hook-calls {
            @for h in calls.iter().filter(|c| c.event != "PostToolUse") {
                @let badge = match h.verdict.as_str() { "valid" => "ok", "blocked" | "gave_up" => "bad", _ => "muted" };
                li data-verdict=(h.verdict) data-blocks=(h.blocks) {
                    span class={ "badge " (badge) } { (h.verdict) } " "
                    span.muted {
                        (h.event)
                        @if let Some(t) = &h.agent_type { " · " (t) }
                        " · " (h.created_at)
                        @if let Some(m) = &h.method { " · read as " (m) }
                        @if h.blocks > 0 { " · block " (h.blocks) }
                        @if h.stop_hook_active { " · stop_hook_active" }
                    }
                    @let errors = h.errors.as_ref().and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                    @if !errors.is_empty() {
                        ul.error-list {
                            @for e in errors {
                                @let path = e.get("instance_path").and_then(Value::as_str).unwrap_or("");
                                li { code { (if path.is_empty() { "(root)" } else { path }) } " " (e.get("message").map(text_of).unwrap_or_default()) }
                            }
                        }
                    }
                    @if let Some(w) = &h.warning { br; span.muted.warning { (w) } }
                    @if let Some(r) = &h.reason {
                        details { summary { "the reason the model was given" } pre.reason { (r) } }
                    }
                }
            }
        }
    }
}

/// The page body (the DOM contract of the browser tests: `#session`,
/// `#session-status`, `#transcript .line`, `#verdict`, `#output`, `#errors
/// li`, `#repairs li`, `#coercions li`, `#chain a`).
pub(crate) fn render(l: &Loaded) -> Markup {
    let d = &l.detail;
    let s = &d.session;
    let running = s.shown_status == "running";
    let verdict = d.verdict.as_ref();
    let valid = if running {
        None
    } else {
        verdict
            .and_then(|v| v.get("valid"))
            .and_then(Value::as_bool)
    };
    let errors = items(verdict, "errors");
    // Note [Error anchors] in `json`: one anchor per resolved value.
    let mut anchors = json::Anchors::new();
    let error_targets: Vec<Option<String>> = errors
        .iter()
        .map(|e| {
            let out = d.output.as_ref()?;
            let at = json::resolve(out, e.get("instance_path").and_then(Value::as_str)?);
            let n = anchors.len();
            Some(
                anchors
                    .entry(at)
                    .or_insert_with(|| format!("at-{n}"))
                    .clone(),
            )
        })
        .collect();
    html! {
        // Only the last page of a transcript follows the session live.
        //
        // Note [Sessions that stay open]: an imported session (`serve
        // --watch` appends its new lines) and one a Claude Code hook records
        // keep growing after they show `completed`, so their page follows
        // the feed too.
        section #session data-session-id=(s.id) data-status=(s.shown_status) data-after=(l.feed_after)
            data-follow=[l.transcript_next.is_some().then_some("false")]
            data-live=[(s.source_path.is_some() || !l.hooks.is_empty()).then_some("open")] {
            h1 {
                "Session " code.session-id { (s.id) } " "
                span #session-status class={ "badge s-" (s.shown_status) } { (s.shown_status) }
            }
            p.actions { a #download href={ (session_href(&s.id)) "/export.html" } download { "Download" } " " span.muted { "one HTML file with its sub-agents, to read offline or share" } }
            @if s.not_imported {
                div #not-imported .card {
                    p { "Parent not imported: only the files of its sub-agents were found. Its own file is missing, or was left out of the import; import it to fill this page." }
                    pre #import-command { "agentshape import" }
                }
            }
            @if s.lost {
                div #lost .card.lost {
                    p { "lost: no heartbeat since " (s.heartbeat_at.as_deref().unwrap_or(&s.started_at)) "." }
                    @if let Some(log) = &s.raw_log_path {
                        p { "Complete it from its forensic log:" }
                        pre #ingest-command { "agentshape ingest " (log) }
                    } @else {
                        p.muted { "No forensic log was recorded for it." }
                    }
                }
            }
            (facts(d))
            @if d.usage_only {
                div #usage-only .card {
                    p { "Only this session's usage is stored: " code { "agentshape usage" } " read its file, and its transcript is not imported yet." }
                    pre #import-command { "agentshape import" }
                }
            }
            @if s.error.is_some() || s.error_category.is_some() {
                p #session-error .bad {
                    @if let Some(c) = &s.error_category { span.badge { (c) } " " }
                    (s.error.as_deref().unwrap_or(""))
                }
            }
            @if let Some(summary) = &s.summary {
                p #summary { (summary) }
            }
            @let imported = s.source_path.is_some();
            h2 { @if imported { "Sub-agents" } @else { "Escalation chain and sub-agents" } }
            nav #chain .chain {
                @if let Some(p) = &s.parent_id {
                    span.muted { @if imported { "sub-agent of " } @else { "escalated from " } }
                    a.parent href=(session_href(p)) { (p) }
                } @else {
                    span.muted { "no parent" }
                }
                @if imported { " → " strong { "this session" } } @else { " → " strong { "this session (tier " (s.tier) ")" } }
                @if d.tree.is_empty() {
                    span.muted { @if imported { " → no sub-agent" } @else { " → no escalation, no sub-agent" } }
                } @else {
                    // Note [Session tree] in the store's `query`: every
                    // session below this one, each after its parent. A long
                    // tree is folded so the transcript stays on the first
                    // screen (Note [Transcript first]).
                    details.tree-fold open[d.tree.len() <= TREE_OPEN] {
                    summary.muted {
                        (d.tree.len()) @if d.tree.len() == 1 { " session" } @else { " sessions" } " below this one · "
                        (thousands(d.tree.iter().map(|n| n.session.input_tokens.saturating_add(n.session.output_tokens)).fold(0, i64::saturating_add)))
                        " tokens in and out"
                    }
                    ul #tree .children {
                        @for n in &d.tree {
                            @let c = &n.session;
                            li class={ "node depth-" (n.depth.min(8)) } data-depth=(n.depth) data-session-id=(c.id) {
                                a.child href=(session_href(&c.id)) { (c.id) } " "
                                span class={ "badge s-" (c.shown_status) } { (c.shown_status) }
                                " tier " (c.tier)
                                @if let Some(a) = &c.agent { " · " span.agent { (a) } }
                                @if let Some(m) = &c.model { " · " span.model { (m) } }
                                " · " span.tokens { (thousands(c.input_tokens)) " in / " (thousands(c.output_tokens)) " out" }
                                @if c.cost_usd.is_some() { " · " (sessions::cost(c)) }
                                @if let Some(sum) = &c.summary {
                                    br; span.muted.description title=(sum) { (sessions::truncate(sum, 160)) }
                                }
                            }
                        }
                    }
                    @if d.tree.len() >= query::MAX_TREE {
                        p.muted { "The first " (query::MAX_TREE) " sessions below this one are shown." }
                    }
                    }
                }
                @if let Some(esc) = &s.escalation {
                    @let parsed = serde_json::from_str::<Value>(esc).ok();
                    @let needed = parsed.as_ref().and_then(|v| v.get("needed")).and_then(Value::as_bool) == Some(true);
                    details.escalation {
                        summary { @if needed { "escalation requested" } @else { "escalation: not needed" } }
                        pre { (parsed.as_ref().and_then(|v| serde_json::to_string_pretty(v).ok()).unwrap_or_else(|| esc.clone())) }
                    }
                }
            }
            // Note [Transcript first]: a session nobody validated (every
            // imported one) shows its validation in one folded line; one
            // with a verdict keeps it open above the transcript.
            details #validation .validation open[verdict.is_some() || running] {
                summary {
                    span.fold-title { "Verdict" } " "
                    span #verdict class={ "badge " (match valid { Some(true) => "ok", Some(false) => "bad", None => "muted" }) }
                        data-valid=[valid] { (verdict_text(verdict, running)) }
                    " " span.muted {
                        "extraction: " (opt(s.extraction_method.as_deref()))
                        " · tier " (s.tier)
                        @if let Some(p) = &s.profile { " · profile " (p) }
                        @if !errors.is_empty() { " · " (errors.len()) " error" @if errors.len() > 1 { "s" } }
                        @if !items(verdict, "repairs").is_empty() { " · " (items(verdict, "repairs").len()) " repairs" }
                    }
                }
            div.grid2 {
                div {
                    h2 { "Structured output" }
                    @match &d.output {
                        Some(v) => pre #output .json { (json::render(v, &anchors)) },
                        None => pre #output .json.empty { @if running { "(not yet: the session is running)" } @else { "(none)" } },
                    }
                }
                div {
                    h2 { "Validation errors and invariant findings" }
                    ul #errors .error-list {
                        @for (e, target) in errors.iter().zip(&error_targets) {
                            @let path = e.get("instance_path").and_then(Value::as_str).unwrap_or("");
                            @let kind = e.get("kind").and_then(Value::as_str).unwrap_or("schema");
                            li data-path=(path) data-kind=(kind) {
                                span class={ "badge kind-" (kind) } { (kind) } " "
                                @let shown = if path.is_empty() { "(root)" } else { path };
                                @if let Some(t) = target {
                                    a.ptr href={ "#" (t) } data-target=(t) { code { (shown) } }
                                } @else {
                                    code { (shown) }
                                }
                                " " span.message { (e.get("message").map(text_of).unwrap_or_default()) }
                                @if let Some(rule) = e.get("rule").and_then(Value::as_str) {
                                    br; span.muted { "rule " } code.rule { (rule) }
                                }
                                @if let Some(sp) = e.get("schema_path").and_then(Value::as_str).filter(|p| !p.is_empty()) {
                                    br; span.muted { "schema " code { (sp) } }
                                }
                            }
                        }
                    }
                    @if errors.is_empty() { p.muted { "None." } }
                    h2 { "Repairs" }
                    ul #repairs {
                        @for r in items(verdict, "repairs") { li { (text_of(r)) } }
                    }
                    @if items(verdict, "repairs").is_empty() { p.muted { "None." } }
                    h2 { "Coercions" }
                    ul #coercions {
                        @for c in items(verdict, "coercions") {
                            li data-path=(c.get("instance_path").and_then(Value::as_str).unwrap_or("")) {
                                code { (c.get("kind").map(text_of).unwrap_or_default()) } " at "
                                code { (c.get("instance_path").and_then(Value::as_str).unwrap_or("")) } ": "
                                code { (c.get("from").map(Value::to_string).unwrap_or_default()) }
                                " → "
                                code { (c.get("to").map_or_else(|| "(removed)".to_owned(), Value::to_string)) }
                            }
                        }
                    }
                    @if items(verdict, "coercions").is_empty() { p.muted { "None." } }
                }
            }
            }
            @if !l.hooks.is_empty() { (hook_calls(&l.hooks)) }
            h2 { "Transcript" }
            p.muted #transcript-source data-source=(match l.transcript_source { Source::Feed => "feed", Source::Log => "log", Source::None => "none" }) {
                @match l.transcript_source {
                    Source::Feed => "From the live feed.",
                    Source::Log => "Decoded from the forensic log (this session has no feed rows).",
                    Source::None => "No feed rows and no readable forensic log.",
                }
                @if l.transcript_after > 0 {
                    " Rows after " (l.transcript_after) "."
                }
                @if l.transcript_truncated && l.transcript_next.is_none() {
                    " The forensic log is longer than a page reads; its end is not shown."
                }
            }
            (transcript_pager(l))
            @let known: transcript::Known<'_> = d.tree.iter().map(|n| (n.session.id.as_str(), &n.session)).collect();
            div #transcript .transcript { (transcript::lines_with(&l.transcript, &known)) }
            (transcript_pager(l))
            h2 { "Events" }
            @if d.events.is_empty() { p.muted { "None." } } @else {
                table #events {
                    thead { tr { th { "Level" } th { "Service" } th { "Message" } th { "At" } } }
                    tbody {
                        @for e in &d.events {
                            tr { td { span class={ "l-" (e.level) } { (e.level) } } td { (opt(e.service.as_deref())) } td { (e.message) } td.mono { (e.created_at) } }
                        }
                    }
                }
            }
            h2 { "Services checked" }
            @if d.services.is_empty() { p.muted { "None." } } @else {
                table #services {
                    thead { tr { th { "Service" } th { "Status" } th { "Detail" } } }
                    tbody {
                        @for v in &d.services {
                            tr { td { (v.name) } td { (v.status) } td { (opt(v.detail.as_deref())) } }
                        }
                    }
                }
            }
            h2 { "Memories" }
            @if d.memories.is_empty() { p.muted { "None." } } @else {
                table #memories {
                    thead { tr { th { "Service" } th { "Category" } th { "Observation" } th.num { "Confidence" } th { "Updated" } } }
                    tbody {
                        @for m in &d.memories {
                            tr {
                                td { (opt(m.service.as_deref())) } td { (m.category) } td { (m.observation) }
                                td.num { (format!("{:.2}", m.confidence)) } td.mono { (m.updated_at) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Links to the first and the next page of the transcript, when there
/// are other pages (Note \[Transcript pages\]).
fn transcript_pager(l: &Loaded) -> Markup {
    let href = session_href(&l.detail.session.id);
    html! {
        @if l.transcript_after > 0 || l.transcript_next.is_some() {
            nav.pager.transcript-pager {
                @if l.transcript_after > 0 {
                    a.first href=(href) { "← First rows" } " "
                }
                @if let Some(next) = l.transcript_next {
                    a.next href={ (href) "?after=" (next) } {
                        "Next rows →"
                    }
                    " " span.muted { "(at most " (transcript::PAGE_ROWS) " rows or about 1 MiB per page)" }
                }
            }
        }
    }
}

/// Sub-agents shown unfolded on a page; a longer tree starts folded.
const TREE_OPEN: usize = 3;

/// The header facts (Note \[Transcript first\]): what a reader asks of a
/// session first — which agent and models, where, when, how long, how
/// much — with the run-only facts (tier, profile, extraction, exit code)
/// only for a session `agentshape run` made.
fn facts(d: &SessionDetail) -> Markup {
    let s = &d.session;
    let run = s.source_path.is_none() && !s.not_imported;
    let below: (i64, i64) = d.tree.iter().fold((0, 0), |(i, o), n| {
        (
            i.saturating_add(n.session.input_tokens),
            o.saturating_add(n.session.output_tokens),
        )
    });
    html! {
        dl #facts .facts {
            dt { "Agent" } dd #agent {
                (opt(s.agent.as_deref()))
                @if let Some(v) = &s.agent_version { " " span.muted.version { (v) } }
            }
            @if let Some(p) = &s.project {
                dt { "Project" } dd #project .mono title=(p) { (p) }
            }
            @if let Some(b) = &s.git_branch {
                dt { "Branch" } dd.mono { (b) }
            }
            dt { "Started" } dd.mono title=(s.started_at) { (sessions::when(&s.started_at)) }
            dt { "Duration" } dd #duration title=[s.ended_at.as_ref().map(|e| format!("ended {e}"))] { (duration(s.duration_ms)) }
            dt { "Turns" } dd { (s.num_turns.map_or_else(|| "—".to_owned(), thousands)) }
            dt.wide { "Models" } dd #models .wide { (models(d)) }
            dt.wide { "Tokens" } dd #tokens .wide {
                (thousands(s.input_tokens)) " in · " (thousands(s.output_tokens)) " out"
                @if s.cache_read_tokens > 0 || s.cache_write_tokens > 0 {
                    " · cache " (thousands(s.cache_read_tokens)) " read, " (thousands(s.cache_write_tokens)) " written"
                }
                @if !d.tree.is_empty() {
                    " " span.muted #tokens-below {
                        "(sessions below: " (thousands(below.0)) " in · " (thousands(below.1)) " out)"
                    }
                }
            }
            dt { "Cost" } dd #cost { @if s.cost_usd.is_some() { (sessions::cost(s)) } @else { "—" } }
            @if let Some(n) = s.secrets_masked {
                dt { "Secrets masked" } dd #secrets-masked { (thousands(n)) }
            }
            @if run {
                dt { "Tier" } dd { (s.tier) }
                dt { "Profile" } dd { (opt(s.profile.as_deref())) }
                dt { "Extraction" } dd { (opt(s.extraction_method.as_deref())) }
                dt { "Exit code" } dd { (opt(s.exit_code)) }
            }
            @if let Some(p) = &s.source_path {
                dt.wide { "Imported from" } dd.mono.path.wide title=(p) { (p) }
            }
        }
    }
}

/// The models a session used, as a mix: each with its share of the
/// session's own tokens, most first, the inline sub-agents' part apart
/// (Note \[Inline sub-agents\] in the runtime's import). A session with no
/// stored calls shows the model its row names.
fn models(d: &SessionDetail) -> Markup {
    let all: i64 = d
        .models
        .iter()
        .map(query::usage::ModelShare::total)
        .fold(0, i64::saturating_add);
    html! {
        @if d.models.is_empty() || all == 0 {
            (opt(d.session.model.as_deref()))
        } @else {
            ul.models {
                @for m in &d.models {
                    @let pct = if all > 0 { m.total() as f64 * 100.0 / all as f64 } else { 0.0 };
                    li data-model=(m.model) data-sidechain=[m.sidechain.then_some("true")] {
                        span.model { @if m.model.is_empty() { "(unnamed)" } @else { (m.model) } }
                        " " span.muted {
                            (format!("{pct:.0}%")) " · " (thousands(m.total())) " tokens · "
                            (thousands(m.calls)) @if m.calls == 1 { " call" } @else { " calls" }
                            @if m.sidechain { " · inline sub-agents" }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
