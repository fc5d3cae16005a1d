//! The Sessions page (`/sessions`): the filter form, one page of sessions
//! newest first, and the pager; `assets/lists.js` adds sessions that start
//! and updates the status of those that end, live.
//!
//! The query string is the same as `/api/sessions`' ([`ListParams`]), so
//! a page's URL and its JSON twin name the same list.
//!
//! Note \[List columns\]: a row shows what every session has (agent,
//! project, start, duration, models, tokens, cost); the validation
//! columns (tier, profile, verdict, method, failing path) appear only when
//! a session on the page has a verdict, and stay empty for one without
//! (an imported session is never validated). A session with stored model
//! calls shows their figures (priced per call in core, a partial cost
//! marked); one without, what its row stored. Above the table, the total
//! of the whole filtered set (Note \[Totals of a list\] in the store).

use std::fmt::Write as _;
use std::sync::Arc;

use std::collections::HashMap;

use agentshape_core::usage::{Figures, Group};
use agentshape_store::query::{
    self, FilterValues, Hits, MAX_DISTINCT, Session, SessionFilter, SessionTotals,
};
use agentshape_store::time;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

mod family;
mod hits;
#[cfg(test)]
mod list_tests;

use super::chart::compact;
use super::usage::{DAY_MS, cost_cell, day_of, parse_day, prices, short_project, tokens_cell};
use super::{Nav, error_page, layout};
use crate::State;
use crate::error::read;

/// Sessions per page.
pub(crate) const PAGE: usize = 50;

/// Transcript hits shown with a search.
pub(crate) const HITS: usize = 50;

/// The longest summary shown in a row; the rest is on the session's page.
const SUMMARY_CHARS: usize = 120;

/// The most characters of a project shown in a row (its end: the folder's
/// own name); the whole path is the cell's title.
const PROJECT_CHARS: usize = 40;

/// At most `n` characters of the end of `s`, with `…` before when cut.
pub(crate) fn truncate_start(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_owned();
    }
    let tail: String = s.chars().skip(count - n).collect();
    format!("…{tail}")
}

/// The sessions list's query string, as sent by the filter form (an empty
/// field means "any") or by an API client.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListParams {
    pub(crate) status: Option<String>,
    pub(crate) tier: Option<String>,
    pub(crate) profile: Option<String>,
    pub(crate) error_category: Option<String>,
    pub(crate) method: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) project: Option<String>,
    pub(crate) q: Option<String>,
    pub(crate) verdict: Option<String>,
    pub(crate) failing_path: Option<String>,
    /// Sessions started on or after this day (`YYYY-MM-DD`, UTC).
    pub(crate) from: Option<String>,
    /// Sessions started on or before this day.
    pub(crate) to: Option<String>,
    pub(crate) before: Option<String>,
    pub(crate) limit: Option<usize>,
    /// The transcript hits after this one (its feed id; Note \[Hits in
    /// time order\] in the store).
    pub(crate) hits_before: Option<String>,
}

/// A value given, trimmed; an empty one is no value.
fn given(v: Option<&String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// A word-like value (status, category, method): short, and only the
/// characters stored values use. Anything else cannot match and is a
/// mistake worth saying (400), not an empty list.
fn word(name: &str, v: Option<&String>) -> Result<Option<String>, String> {
    let Some(v) = given(v) else { return Ok(None) };
    let ok = v.len() <= 64
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'));
    if ok {
        Ok(Some(v))
    } else {
        Err(format!(
            "`{name}` must be a word of letters, digits, `_`, `-`, `+` or `.` (at most 64)"
        ))
    }
}

/// Free text with a length bound and no control characters.
fn text(name: &str, v: Option<&String>, max: usize) -> Result<Option<String>, String> {
    let Some(v) = given(v) else { return Ok(None) };
    if v.chars().count() > max || v.chars().any(char::is_control) {
        return Err(format!(
            "`{name}` must be at most {max} characters, without control characters"
        ));
    }
    Ok(Some(v))
}

/// The outcomes the verdict filter takes (Note \[Outcomes of a run\] in
/// the store's `stats`).
pub(crate) const VERDICTS: &[&str] = &["valid", "invalid", "none", "unchecked"];

fn verdict(v: Option<&String>) -> Result<Option<String>, String> {
    match given(v) {
        None => Ok(None),
        Some(v) if VERDICTS.contains(&v.as_str()) => Ok(Some(v)),
        Some(_) => Err(format!("`verdict` must be one of {}", VERDICTS.join(", "))),
    }
}

/// A JSON Pointer, or its URI-fragment form (`#` is the root, which an
/// empty field could not say; `#/a` is `/a`).
fn failing_path(v: Option<&String>) -> Result<Option<String>, String> {
    let Some(p) = text("failing_path", v, 512)? else {
        return Ok(None);
    };
    let p = p.strip_prefix('#').map_or(p.clone(), str::to_owned);
    if p.is_empty() || p.starts_with('/') {
        Ok(Some(p))
    } else {
        Err(
            "`failing_path` must be a JSON Pointer (`/action`, `/files/0/path`; `#` for the root)"
                .to_owned(),
        )
    }
}

/// `path` as the list's `failing_path` value (the root as `#`).
pub(crate) fn path_param(path: &str) -> String {
    if path.is_empty() {
        "#".to_owned()
    } else {
        path.to_owned()
    }
}

impl ListParams {
    /// The store filter, or why the query is bad (a 400).
    pub(crate) fn filter(&self, limit: usize) -> Result<SessionFilter, String> {
        let tier = match given(self.tier.as_ref()) {
            None => None,
            Some(t) => Some(
                t.parse::<i64>()
                    .ok()
                    .filter(|n| (0..=1000).contains(n))
                    .ok_or("`tier` must be a number from 0 to 1000")?,
            ),
        };
        let day = |name: &str, v: Option<&String>| -> Result<Option<i64>, String> {
            given(v)
                .map(|d| parse_day(&d).ok_or(format!("`{name}` must be a day: 2025-07-14")))
                .transpose()
        };
        let from = day("from", self.from.as_ref())?;
        let to = day("to", self.to.as_ref())?;
        Ok(SessionFilter {
            from: from.map(time::format_ms),
            to: to.map(|t| time::format_ms(t + DAY_MS)),
            status: word("status", self.status.as_ref())?,
            tier,
            profile: text("profile", self.profile.as_ref(), 256)?,
            error_category: word("error_category", self.error_category.as_ref())?,
            method: word("method", self.method.as_ref())?,
            agent: word("agent", self.agent.as_ref())?,
            project: text("project", self.project.as_ref(), 1024)?,
            q: text("q", self.q.as_ref(), 200)?,
            verdict: verdict(self.verdict.as_ref())?,
            failing_path: failing_path(self.failing_path.as_ref())?,
            limit,
            before: text("before", self.before.as_ref(), 256)?,
            top_level: false,
        })
    }

    /// The `hits_before` cursor, or why it is bad (a 400).
    pub(crate) fn hits_before(&self) -> Result<Option<i64>, String> {
        given(self.hits_before.as_ref())
            .map(|v| {
                v.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    "`hits_before` must be a transcript line's id (a number)".to_owned()
                })
            })
            .transpose()
    }
}

/// Percent-encode a query value (RFC 3986 unreserved characters stay).
pub(crate) fn encode(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The query string of `filter`'s filters (no `before`, no limit), each
/// `name=value&`; empty when none is set.
fn filter_query(f: &SessionFilter) -> String {
    let tier = f.tier.map(|t| t.to_string());
    [
        ("status", f.status.as_deref()),
        ("tier", tier.as_deref()),
        ("profile", f.profile.as_deref()),
        ("error_category", f.error_category.as_deref()),
        ("method", f.method.as_deref()),
        ("agent", f.agent.as_deref()),
        ("project", f.project.as_deref()),
        ("q", f.q.as_deref()),
        ("verdict", f.verdict.as_deref()),
        (
            "failing_path",
            f.failing_path.as_deref().map(path_param).as_deref(),
        ),
        ("from", from_day(f).as_deref()),
        ("to", to_day(f).as_deref()),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}={}&", encode(v))))
    .collect()
}

/// The `from` day of a filter (its first instant's day).
fn from_day(f: &SessionFilter) -> Option<String> {
    f.from
        .as_deref()
        .map(|t| t.get(..10).unwrap_or(t).to_owned())
}

/// The `to` day of a filter (the day before the instant it ends at).
fn to_day(f: &SessionFilter) -> Option<String> {
    f.to.as_deref()
        .and_then(time::parse_ms)
        .map(|ms| day_of(ms - DAY_MS))
}

/// `2025-07-14T03:12:09.123Z` as `2025-07-14 03:12:09`.
pub(crate) fn when(at: &str) -> String {
    at.get(..19).unwrap_or(at).replace('T', " ")
}

/// Milliseconds as `450 ms`, `12.3 s`, `41 m 48 s`, `2 h 03 m`.
pub(crate) fn duration(ms: i64) -> String {
    super::numbers::span(ms)
}

/// Dollars with four decimals (agent runs cost cents).
pub(crate) fn dollars(v: f64) -> String {
    format!("${v:.4}")
}

/// A session's cost, `est.` after it when it was computed from usage and
/// the price table rather than reported by the agent.
pub(crate) fn cost(s: &Session) -> Markup {
    html! {
        @if let Some(c) = s.cost_usd {
            (dollars(c))
            @if s.cost_estimated {
                " " abbr.est title="estimated from the token usage and the price table" { "est." }
            }
        }
    }
}

/// At most `n` characters of `s`, with `…` when cut.
pub(crate) fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// A status badge: class `status` (the DOM contract) and `s-<status>` for colour.
pub(crate) fn status_badge(status: &str) -> Markup {
    html! { span class={ "badge status s-" (status) } { (status) } }
}

/// A select of `values` named `name`, "any" first, `current` selected; a
/// free text input when the store holds too many values to list.
fn select<T: ToString>(name: &str, label: &str, values: &[T], current: Option<&str>) -> Markup {
    let values: Vec<String> = values.iter().map(ToString::to_string).collect();
    html! {
        label {
            (label)
            @if values.len() > MAX_DISTINCT {
                input type="text" name=(name) value=[current];
            } @else {
                select name=(name) {
                    option value="" { "any" }
                    @for v in &values {
                        option value=(v) selected[current == Some(v.as_str())] { (v) }
                    }
                    // A value asked for but not stored stays selected.
                    @if let Some(c) = current.filter(|c| !values.iter().any(|v| v == c)) {
                        option value=(c) selected { (c) }
                    }
                }
            }
        }
    }
}

fn form(f: &SessionFilter, values: &FilterValues) -> Markup {
    let tier = f.tier.map(|t| t.to_string());
    html! {
        form #filters .filters method="get" action="/sessions" {
            (select("status", "Status", &values.statuses, f.status.as_deref()))
            (select("tier", "Tier", &values.tiers, tier.as_deref()))
            (select("profile", "Profile", &values.profiles, f.profile.as_deref()))
            (select("error_category", "Error category", &values.error_categories, f.error_category.as_deref()))
            (select("method", "Method", &values.methods, f.method.as_deref()))
            (select("agent", "Agent", &values.agents, f.agent.as_deref()))
            (select("project", "Project", &values.projects, f.project.as_deref()))
            (select("verdict", "Verdict", VERDICTS, f.verdict.as_deref()))
            label { "From" input type="date" name="from" value=[from_day(f)]; }
            label { "To" input type="date" name="to" value=[to_day(f)]; }
            label { "Failing path" input type="text" name="failing_path" value=[f.failing_path.as_deref().map(path_param)] placeholder="/action (# for the root)"; }
            label { "Search" input #search type="search" name="q" value=[f.q.as_deref()] placeholder="id, summary, error, agent, model, transcript text"; }
            button type="submit" { "Filter" }
            a href="/sessions" { "Clear" }
        }
    }
}

/// Which optional column groups a page shows (Note \[List columns\]).
#[derive(Debug, Clone, Copy)]
struct Shown {
    /// Tier, profile, verdict, method, failing path.
    validation: bool,
    /// Error category.
    errors: bool,
}

impl Shown {
    fn of(rows: &[Session]) -> Shown {
        Shown {
            validation: rows.iter().any(|r| r.verdict_valid.is_some()),
            errors: rows.iter().any(|r| r.error_category.is_some()),
        }
    }
}

/// A verdict as a list shows it: the outcome (Note \[Outcomes of a run\]
/// in the store's `stats`): valid, invalid, or none (nothing structured
/// found).
fn outcome(s: &Session) -> Option<&'static str> {
    let none = matches!(
        s.extraction_method.as_deref(),
        None | Some("none" | "handoff")
    );
    s.verdict_valid.map(|v| match (v, none) {
        (true, _) => "valid",
        (false, true) => "none",
        (false, false) => "invalid",
    })
}

/// One table row (`lists.js` builds the same shape, by the header's
/// `data-col` names, for a session that starts). `usage` is the session's
/// own calls summed, when it has any.
/// Where a row stands in the list (Note \[Sub-agents in a list\] in the
/// store's `query::nested`).
#[derive(Debug, Clone)]
enum Place {
    /// A top-level row, with what is below it (`3 sub-agents`), if anything.
    Top(Option<String>),
    /// A row below its family's first, at this depth (1: a child).
    Below(usize),
}

fn row(s: &Session, usage: Option<&Group>, shown: Shown, place: &Place) -> Markup {
    let models = match usage {
        Some(g) => g.models.join(", "),
        None => s.model.clone().unwrap_or_default(),
    };
    let stored = Figures {
        input: u64::try_from(s.input_tokens).unwrap_or(0),
        output: u64::try_from(s.output_tokens).unwrap_or(0),
        cache_read: u64::try_from(s.cache_read_tokens).unwrap_or(0),
        cache_write: u64::try_from(s.cache_write_tokens).unwrap_or(0),
        // Saturating: a stored count near `i64::MAX` must not overflow.
        total_tokens: u64::try_from(
            s.input_tokens
                .saturating_add(s.output_tokens)
                .saturating_add(s.cache_read_tokens)
                .saturating_add(s.cache_write_tokens),
        )
        .unwrap_or(0),
        ..Figures::default()
    };
    let figures = usage.map_or(&stored, |g| &g.figures);
    html! {
        tr data-session-id=(s.id) data-status=(s.shown_status) data-parent-id=[s.parent_id.as_deref()]
            class=[match place { Place::Below(d) => Some(format!("sub depth-{}", (*d).min(4))), Place::Top(_) => None }] {
            td.mono.session {
                a href={ "/sessions/" (encode(&s.id)) } title=(s.id) { (s.id) }
                @if let Some(n) = s.secrets_masked.filter(|n| *n > 0) { " " abbr.secrets title="secrets masked in this session" { "🔒" (n) } }
                @match place {
                    Place::Top(Some(what)) => {
                        label.below { input.expand type="checkbox" aria-label={ "show the " (what) }; " " (what) }
                    }
                    Place::Top(None) => {
                        @if let Some(p) = s.parent_id.as_deref() {
                            div.sub-of.muted { (family::parent_label(s)) " " a href={ "/sessions/" (encode(p)) } title=(p) { (p) } }
                        }
                    }
                    Place::Below(_) => {}
                }
            }
            td.status-cell { (status_badge(&s.shown_status)) }
            td.agent { (s.agent.as_deref().unwrap_or("")) }
            td.project title=[s.project.as_deref()] { (s.project.as_deref().map(|p| truncate_start(&short_project(p), PROJECT_CHARS)).unwrap_or_default()) }
            td.mono.started { (when(&s.started_at)) }
            td.num { (s.duration_ms.map(duration).unwrap_or_default()) }
            td.models title=(models) { (truncate(&models, 60)) }
            td.num.tokens { @if figures.total_tokens > 0 { (tokens_cell(figures)) } }
            td.num.cost {
                @match usage {
                    Some(g) => (cost_cell(&g.figures)),
                    None => (cost(s)),
                }
            }
            @if shown.validation {
                td.num { @if s.verdict_valid.is_some() { (s.tier) } }
                td { @if s.verdict_valid.is_some() { (s.profile.as_deref().unwrap_or("")) } }
                td.verdict { @if let Some(o) = outcome(s) { span class={ "badge v-" (o) } { (o) } } }
                td.method { @if s.verdict_valid.is_some() { (s.extraction_method.as_deref().unwrap_or("")) } }
                td.mono.failing-path { @if let Some(p) = s.failing_path.as_deref() { a href={ "/sessions?failing_path=" (encode(&path_param(p))) } { (path_param(p)) } } }
            }
            @if shown.errors {
                td { (s.error_category.as_deref().unwrap_or("")) }
            }
            td.summary title=[s.summary.as_deref()] {
                (truncate(s.summary.as_deref().unwrap_or(""), SUMMARY_CHARS))
            }
        }
    }
}

/// What the filtered set adds up to: its sessions, tokens and cost, the
/// calls' figures and the stored rest together (Note \[Totals of a list\]
/// in the store); a partial cost when a model or a session has no price.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ListTotal {
    /// Sessions matched.
    pub(crate) sessions: i64,
    /// Their tokens and cost.
    pub(crate) figures: Figures,
    /// Sessions without calls whose cost is unknown.
    pub(crate) unpriced_sessions: i64,
}

impl ListTotal {
    /// `calls` (the calls' total) and `other` (the stored rest).
    pub(crate) fn of(calls: &Group, other: &SessionTotals) -> ListTotal {
        let mut figures = calls.figures.clone();
        let tokens = u64::try_from(other.other_tokens).unwrap_or(0);
        figures.total_tokens += tokens;
        figures.cost_usd += other.other_cost_usd;
        figures.partial |= other.other_unpriced > 0;
        ListTotal {
            sessions: other.sessions,
            figures,
            unpriced_sessions: other.other_unpriced,
        }
    }
}

fn total_line(t: &ListTotal) -> Markup {
    let f = &t.figures;
    html! {
        p #sessions-total .total data-sessions=(t.sessions) data-tokens=(f.total_tokens)
            data-cost=(format!("{:.6}", f.cost_usd)) data-partial=[f.partial.then_some("true")] {
            strong { (t.sessions) } @if t.sessions == 1 { " session" } @else { " sessions" }
            " · " strong title=(f.total_tokens) { (compact(i64::try_from(f.total_tokens).unwrap_or(i64::MAX))) }
            " tokens · " strong { (cost_cell(f)) }
            @if f.partial {
                span.muted {
                    " · * partial: "
                    @if !f.unpriced_models.is_empty() { "no price for " (f.unpriced_models.join(", ")) }
                    @if !f.unpriced_models.is_empty() && t.unpriced_sessions > 0 { "; " }
                    @if t.unpriced_sessions > 0 { (t.unpriced_sessions) " sessions without a cost" }
                }
            }
        }
    }
}

/// The page's body for `rows` (its top-level sessions) listed under filter
/// `f`, `subs` the sessions below them (Note \[Disclosure without
/// script\]); `feed_after` is the feed id the live part resumes from;
/// `usage` each session's own calls summed; `total` the whole filtered
/// set's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn body(
    f: &SessionFilter,
    values: &FilterValues,
    rows: &[Session],
    subs: &[Session],
    found: &Hits,
    feed_after: i64,
    usage: &HashMap<String, Group>,
    total: Option<&ListTotal>,
) -> Markup {
    let filters = filter_query(f);
    let first_page = f.before.is_none();
    let older = (rows.len() == f.limit)
        .then(|| rows.last())
        .flatten()
        .map(|last| format!("/sessions?{filters}before={}", encode(&last.id)));
    let tier = f.tier.map(|t| t.to_string());
    let shown = Shown {
        validation: Shown::of(rows).validation || Shown::of(subs).validation,
        errors: Shown::of(rows).errors || Shown::of(subs).errors,
    };
    let transcript_hits = &found.hits;
    let more_hits = (transcript_hits.len() >= HITS)
        .then(|| transcript_hits.last())
        .flatten()
        .map(|h| {
            format!(
                "/sessions?{filters}hits_before={}#transcript-hits",
                h.feed_id
            )
        });
    html! {
        h1 { "Sessions" }
        (form(f, values))
        @if let Some(t) = total { (total_line(t)) }
        // A page with the validation columns is wider than a screen: it
        // scrolls sideways in its own box rather than squeezing the
        // summary to nothing (Note [List columns]).
        div.table-scroll {
        table #sessions .wide[shown.validation || shown.errors] data-feed-after=(feed_after) data-first-page=(first_page)
            data-status=[f.status.as_deref()] data-tier=[tier.as_deref()]
            data-profile=[f.profile.as_deref()] data-error-category=[f.error_category.as_deref()]
            data-method=[f.method.as_deref()] data-agent=[f.agent.as_deref()]
            data-project=[f.project.as_deref()] data-q=[f.q.as_deref()]
            data-verdict=[f.verdict.as_deref()] data-failing-path=[f.failing_path.as_deref().map(path_param)]
            data-from=[from_day(f)] data-to=[to_day(f)] {
            thead { tr {
                th data-col="session" { "Session" } th data-col="status" { "Status" }
                th data-col="agent" { "Agent" } th data-col="project" { "Project" }
                th data-col="started" { "Started" } th data-col="duration" { "Duration" }
                th data-col="models" { "Models" } th.num data-col="tokens" { "Tokens" } th.num data-col="cost" { "Cost" }
                @if shown.validation {
                    th data-col="tier" { "Tier" } th data-col="profile" { "Profile" } th data-col="verdict" { "Verdict" }
                    th data-col="method" { "Method" } th data-col="failing-path" { "Failing path" }
                }
                @if shown.errors { th data-col="error" { "Error" } }
                th data-col="summary" { "Summary" }
            } }
            @if rows.is_empty() { tbody {} }
            @for fam in family::families(rows, subs) {
                tbody.family {
                    (row(fam.top, usage.get(&fam.top.id), shown,
                        &Place::Top((!fam.below.is_empty()).then(|| family::below_label(&fam.below)))))
                    @for (depth, s) in &fam.below {
                        (row(s, usage.get(&s.id), shown, &Place::Below(*depth)))
                    }
                }
            }
        }
        }
        // The empty state is outside the table, so `tbody tr` is one row
        // per session (a family's rows in its own `tbody`); `lists.js`
        // removes it when a session arrives.
        @if rows.is_empty() {
            p #sessions-empty .empty {
                @if first_page { "No sessions match." } @else { "No older sessions." }
            }
        }
        // Transcript hits belong to the search, not to a page of the list.
        @if let Some(q) = f.q.as_deref().filter(|_| first_page) {
            (hits::hits(q, found, more_hits.as_deref()))
        }
        nav.pager {
            a #newest href={ "/sessions" @if !filters.is_empty() { "?" (filters.trim_end_matches('&')) } } { "Newest" }
            @if let Some(href) = older { a #older href=(href) { "Older →" } }
        }
    }
}

/// `GET /sessions`: a bad query is a 400 page, a busy store a 503 page.
pub(crate) async fn page(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<ListParams>, QueryRejection>,
) -> Response {
    let (filter, hits_before) = match q
        .map_err(|e| e.body_text())
        .and_then(|Query(q)| Ok((q.filter(PAGE)?, q.hits_before()?)))
    {
        Ok((f, h)) => (
            SessionFilter {
                top_level: true,
                ..f
            },
            h,
        ),
        Err(m) => return error_page(StatusCode::BAD_REQUEST, &m),
    };
    let f = filter.clone();
    let data = read(&state, move |s| {
        // The feed position first: a session that starts while we read is
        // then both in the page or after it on the feed, never in neither.
        let after = query::feed_max_id(s)?;
        let found = match f.q.as_deref() {
            Some(q) if f.before.is_none() => query::search_hits(s, q, &f, hits_before, HITS)?,
            _ => Hits::default(),
        };
        let (prices, _) = prices();
        let calls = query::session_usage_calls(s, &f)?;
        let (usage, calls_total) = super::usage::by_session(&calls, &prices);
        let total = ListTotal::of(&calls_total, &query::session_totals(s, &f)?);
        let rows = query::sessions(s, &f)?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let subs = query::sub_sessions(s, &f, &ids)?;
        Ok((
            rows,
            subs,
            query::filter_values(s)?,
            found,
            after,
            usage,
            total,
        ))
    })
    .await;
    match data {
        Ok((rows, subs, values, found, after, usage, total)) => layout(
            "Sessions",
            Nav::Sessions,
            &["lists.js"],
            &body(
                &filter,
                &values,
                &rows,
                &subs,
                &found,
                after,
                &usage,
                Some(&total),
            ),
        )
        .into_response(),
        Err(e) => e.into_page(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::format_collect)]
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> ListParams {
        let qs: String = pairs
            .iter()
            .map(|(k, v)| format!("{k}={}&", encode(v)))
            .collect();
        Query::<ListParams>::try_from_uri(&format!("/s?{qs}").parse().unwrap())
            .unwrap()
            .0
    }

    #[test]
    fn query_strings_become_filters_or_a_reason() {
        let ok = params(&[
            ("status", "lost"),
            ("tier", " 2 "),
            ("profile", ""),
            ("method", "markers+handoff"),
            ("q", "<b>jelly"),
        ])
        .filter(PAGE)
        .unwrap();
        assert_eq!(ok.status.as_deref(), Some("lost"));
        assert_eq!(ok.tier, Some(2));
        assert_eq!(ok.profile, None);
        assert_eq!(ok.method.as_deref(), Some("markers+handoff"));
        assert_eq!(ok.q.as_deref(), Some("<b>jelly"));
        for bad in [
            ("tier", "x"),
            ("tier", "-1"),
            ("status", "a b"),
            ("error_category", "<script>"),
            ("q", &"x".repeat(201)),
            ("q", "a\u{7}b"),
        ] {
            assert!(params(&[bad]).filter(PAGE).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn verdict_and_failing_path_filters_parse_and_round_trip() {
        let f = params(&[("verdict", "invalid"), ("failing_path", "/files/0/path")])
            .filter(PAGE)
            .unwrap();
        assert_eq!(f.verdict.as_deref(), Some("invalid"));
        assert_eq!(f.failing_path.as_deref(), Some("/files/0/path"));
        assert_eq!(
            filter_query(&f),
            "verdict=invalid&failing_path=%2Ffiles%2F0%2Fpath&"
        );
        // The root, which an empty field cannot say, is `#`.
        let root = params(&[("failing_path", "#")]).filter(PAGE).unwrap();
        assert_eq!(root.failing_path.as_deref(), Some(""));
        assert_eq!(filter_query(&root), "failing_path=%23&");
        assert_eq!(
            params(&[("failing_path", "#/a")])
                .filter(PAGE)
                .unwrap()
                .failing_path
                .as_deref(),
            Some("/a")
        );
        for bad in [
            ("verdict", "maybe"),
            ("failing_path", "action"),
            ("failing_path", &"/x".repeat(300)),
        ] {
            assert!(params(&[bad]).filter(PAGE).is_err(), "{bad:?}");
        }
        let html = body(
            &f,
            &FilterValues::default(),
            &[],
            &[],
            &Hits::default(),
            0,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert!(
            html.contains(r#"data-verdict="invalid" data-failing-path="/files/0/path""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<option value="invalid" selected>invalid</option>"#),
            "{html}"
        );
    }

    #[test]
    fn the_pager_keeps_the_filters() {
        let f = params(&[("status", "completed"), ("q", "a&b c")])
            .filter(2)
            .unwrap();
        let mut r = Session::new("s/1", "2025-07-14T03:12:09.000Z", "completed");
        r.summary = Some("<script>alert(1)</script>".into());
        let r2 = {
            r.id = "s<2>".into();
            r.clone()
        };
        let html = body(
            &f,
            &FilterValues::default(),
            &[r2.clone(), r2],
            &[],
            &Hits::default(),
            7,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert!(
            html.contains(r#"id="older" href="/sessions?status=completed&amp;q=a%26b%20c&amp;before=s%3C2%3E""#),
            "{html}"
        );
        assert!(html.contains(r#"id="newest" href="/sessions?status=completed&amp;q=a%26b%20c""#));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<script>alert"));
        assert!(html.contains(r#"data-session-id="s&lt;2&gt;""#));
        let one = body(
            &f,
            &FilterValues::default(),
            &[],
            &[],
            &Hits::default(),
            7,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert!(!one.contains("id=\"older\""));
        assert!(one.contains("No sessions match."));
        assert!(
            one.contains("<tbody></tbody>"),
            "one row per session, none else"
        );
    }

    #[test]
    fn native_rows_filters_and_transcript_hits_render_as_text() {
        use agentshape_store::{FeedEntry, NativeMark, SqliteStore, Store};
        let hostile = "<script>alert(1)</script>";
        let tool = "<img src=x onerror=alert(1)>";
        let mut store = SqliteStore::open_in_memory().unwrap();
        let mut rec = agentshape_store::Session::new("n1", "2025-07-14T05:00:00.000Z", "completed");
        rec.agent = Some("claude-code".into());
        rec.model = Some(tool.into());
        rec.project = Some(hostile.into());
        rec.cost_usd = Some(1.25);
        rec.cost_estimated = true;
        let feed: Vec<FeedEntry> = [
            serde_json::json!({"type": "text", "text": format!("the needle is {hostile}")}),
            serde_json::json!({"type": "tool_use", "name": tool, "input": {}}),
        ]
        .iter()
        .enumerate()
        .map(|(i, e)| FeedEntry {
            seq: None,
            session_id: "n1".into(),
            kind: "event".into(),
            body: serde_json::json!({"kind": "event", "event": e, "line": i + 1}).to_string(),
            created_at: "2025-07-14T05:00:01.000Z".into(),
        })
        .collect();
        let mark = NativeMark {
            path: "/p/n1.jsonl".into(),
            session_id: "n1".into(),
            agent: "claude-code".into(),
            dev: 0,
            inode: 0,
            size: 0,
            offset: 0,
            mtime_ms: 0,
            lines: 0,
            updated_at: "2025-07-14T05:00:02.000Z".into(),
            reset: false,
            expect_offset: None,
        };
        store.save_native(&rec, &feed, &mark).unwrap();
        let mut other =
            agentshape_store::Session::new("r1", "2025-07-14T06:00:00.000Z", "completed");
        other.agent = Some("claude".into());
        other.cost_usd = Some(0.5);
        store.write_session(&other).unwrap();
        let f = params(&[
            ("agent", "claude-code"),
            ("project", hostile),
            ("q", "needle"),
        ])
        .filter(1)
        .unwrap();
        let rows = query::sessions(
            &store,
            &SessionFilter {
                q: None,
                ..f.clone()
            },
        )
        .unwrap();
        assert_eq!(
            rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["n1"]
        );
        let found = query::search_transcripts(&store, "needle", HITS).unwrap();
        assert_eq!(found.len(), 1);
        let values = query::filter_values(&store).unwrap();
        let html = body(
            &f,
            &values,
            &rows,
            &[],
            &Hits {
                hits: found.clone(),
                windowed: false,
            },
            0,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert!(
            !html.contains("<script>") && !html.contains("<img"),
            "{html}"
        );
        // The project column, the estimated cost, the filters kept in the pager.
        assert!(html.contains(r#"<td class="project" title="&lt;script&gt;alert(1)&lt;/script&gt;">&lt;script&gt;"#), "{html}");
        assert!(
            html.contains(r#"<td class="num cost">$1.2500 <abbr class="est""#),
            "{html}"
        );
        assert!(
            html.contains(
                "agent=claude-code&amp;project=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&amp;q=needle"
            ),
            "{html}"
        );
        assert!(
            html.contains(r#"<option value="claude-code" selected>claude-code</option>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<option value="&lt;script&gt;alert(1)&lt;/script&gt;" selected>"#),
            "{html}"
        );
        // The transcript hit links to its row, on the page that starts at it.
        let id = found[0].feed_id;
        assert!(
            html.contains(&format!(r#"href="/sessions/n1?after={}#row-{id}""#, id - 1)),
            "{html}"
        );
        assert!(
            html.contains("the <mark>needle</mark> is &lt;script&gt;"),
            "{html}"
        );
        // A tool name with markup is found and shown as text.
        let found = query::search_transcripts(&store, "onerror", HITS).unwrap();
        let html = body(
            &f,
            &values,
            &rows,
            &[],
            &Hits {
                hits: found.clone(),
                windowed: false,
            },
            0,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert!(
            html.contains("&lt;img src=x <mark>onerror</mark>=alert(1)&gt;"),
            "{html}"
        );
        assert!(html.contains(r#"<span class="tag">tool</span>"#));
        // The plain run's cost has no `est.`.
        let plain = query::sessions(
            &store,
            &SessionFilter {
                limit: 5,
                ..SessionFilter::default()
            },
        )
        .unwrap();
        let html = body(
            &SessionFilter {
                limit: 5,
                ..SessionFilter::default()
            },
            &values,
            &plain,
            &[],
            &Hits::default(),
            0,
            &HashMap::new(),
            None,
        )
        .into_string();
        assert_eq!(html.matches("<abbr class=\"est\"").count(), 1, "{html}");
        assert!(
            !html.contains("transcript-hits"),
            "no search, no hits section"
        );
        for bad in [("agent", "a b"), ("project", "a\u{1}b")] {
            assert!(params(&[bad]).filter(PAGE).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn values_read_well() {
        let cases: &[(i64, &str)] = &[
            (450, "450 ms"),
            (12_345, "12.3 s"),
            (245_000, "4 m 05 s"),
            (7_380_000, "2 h 03 m"),
        ];
        for (ms, want) in cases {
            assert_eq!(duration(*ms), *want);
        }
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("ab", 3), "ab");
        assert_eq!(truncate("ééé", 2), "éé…");
        assert_eq!(when("2025-07-14T03:12:09.123Z"), "2025-07-14 03:12:09");
        assert_eq!(encode("a b/é"), "a%20b%2F%C3%A9");
    }

    #[test]
    fn native_columns_dates_totals_and_the_agent_alias() {
        use agentshape_core::usage::UsageTokens;
        use agentshape_store::{NativeMark, SqliteStore, Store, UsageRecord};
        let mut store = SqliteStore::open_in_memory().unwrap();
        let ms = |at: &str| time::parse_ms(at).unwrap();
        for (id, started, model) in [
            (
                "old",
                "2024-03-01T10:00:00.000Z",
                "claude-sonnet-4-20250514",
            ),
            ("new", "2024-03-05T10:00:00.000Z", "mystery-model-9"),
        ] {
            let mut r = agentshape_store::Session::new(id, started, "completed");
            r.agent = Some("claude-code".into());
            r.project = Some("/home/ana/wt/api-fix".into());
            r.duration_ms = Some(65_000);
            r.usage = vec![UsageRecord {
                key: format!("{id}#0"),
                at_ms: ms(started),
                model: model.into(),
                sidechain: false,
                tokens: UsageTokens {
                    input: 1_000_000,
                    output: 100_000,
                    ..UsageTokens::default()
                },
            }];
            let mark = NativeMark {
                path: format!("/p/{id}"),
                session_id: id.into(),
                agent: "claude-code".into(),
                dev: 0,
                inode: 0,
                size: 0,
                offset: 0,
                mtime_ms: 0,
                lines: 0,
                updated_at: "2024-03-06T00:00:00.000Z".into(),
                reset: false,
                expect_offset: None,
            };
            store.save_native(&r, &[], &mark).unwrap();
        }
        // A run, checked: the validation columns come with it.
        let mut run =
            agentshape_store::Session::new("run", "2024-03-02T10:00:00.000Z", "completed");
        run.agent = Some("codex".into());
        run.profile = Some("deploy".into());
        run.cost_usd = Some(0.5);
        run.input_tokens = 10;
        run.extraction_method = Some("structured".into());
        run.verdict = Some(
            serde_json::from_value(serde_json::json!({"valid": false, "errors": [{"instance_path": "/action", "schema_path": "", "message": ""}], "repairs": [], "coercions": []})).unwrap(),
        );
        store.write_session(&run).unwrap();

        let render = |pairs: &[(&str, &str)]| -> (Vec<String>, String) {
            let f = params(pairs).filter(PAGE).unwrap();
            let rows = query::sessions(&store, &f).unwrap();
            let (prices, _) = super::super::usage::prices();
            let calls = query::session_usage_calls(&store, &f).unwrap();
            let (usage, calls_total) = super::super::usage::by_session(&calls, &prices);
            let total = ListTotal::of(&calls_total, &query::session_totals(&store, &f).unwrap());
            let values = query::filter_values(&store).unwrap();
            let html = body(
                &f,
                &values,
                &rows,
                &[],
                &Hits::default(),
                0,
                &usage,
                Some(&total),
            )
            .into_string();
            (rows.into_iter().map(|r| r.id).collect(), html)
        };

        // `claude` is Claude Code's other name; the select shows the stored one.
        let (ids, html) = render(&[("agent", "claude")]);
        assert_eq!(ids, ["new", "old"]);
        assert!(
            html.contains(r#"<option value="claude-code">claude-code</option>"#),
            "{html}"
        );
        assert!(html.contains(r#"data-sessions="2""#), "{html}");
        // Native rows: no validation columns, the models, tokens and a partial cost.
        assert!(
            !html.contains(">Verdict</th>") && !html.contains(">Tier</th>"),
            "{html}"
        );
        assert!(
            html.contains(r#"<td class="project" title="/home/ana/wt/api-fix">wt/api-fix</td>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<td class="models" title="mystery-model-9">mystery-model-9</td>"#),
            "{html}"
        );
        assert!(html.contains(">1.1M</span>"), "{html}");
        assert!(html.contains("<td class=\"num\">1 m 05 s</td>"), "{html}");
        assert!(
            html.contains(
                r#"$0.00<abbr class="partial" title="partial: no price for mystery-model-9"#
            ),
            "{html}"
        );
        // The total: both sessions, their tokens, a partial cost naming the model.
        let total = &html[html.find(r#"id="sessions-total""#).unwrap()..];
        assert!(total.contains(r#"data-tokens="2200000""#), "{total}");
        assert!(total.contains(r#"data-partial="true""#), "{total}");
        assert!(total.contains("no price for mystery-model-9"), "{total}");

        // Dates: the day `to` names is included; the pager keeps them.
        let (ids, html) = render(&[("from", "2024-03-01"), ("to", "2024-03-02")]);
        assert_eq!(ids, ["run", "old"]);
        assert!(html.contains(r#"data-sessions="2""#));
        assert!(html.contains(r#"name="from" value="2024-03-01""#), "{html}");
        assert!(
            html.contains(r#"data-from="2024-03-01" data-to="2024-03-02""#),
            "{html}"
        );
        let f = params(&[("from", "2024-03-01"), ("to", "2024-03-02")])
            .filter(PAGE)
            .unwrap();
        assert_eq!(filter_query(&f), "from=2024-03-01&to=2024-03-02&");
        // The run's verdict brings its columns; the native row's stay empty.
        assert!(
            html.contains(">Verdict</th>") && html.contains(">Failing path</th>"),
            "{html}"
        );
        assert!(
            html.contains(r#"<span class="badge v-invalid">invalid</span>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="/sessions?failing_path=%2Faction">/action</a>"#),
            "{html}"
        );
        let old = &html[html.find(r#"data-session-id="old""#).unwrap()..];
        let old = &old[..old.find("</tr>").unwrap()];
        assert!(old.contains(r#"<td class="verdict"></td>"#), "{old}");
        // The run's stored cost is in the total, whole: only `old` is priced per call.
        let (_, html) = render(&[("to", "2024-03-02")]);
        assert!(
            html.contains("data-partial") == html.contains("mystery"),
            "no partial without the unpriced one"
        );
        for bad in [("from", "yesterday"), ("to", "2024-02-30")] {
            assert!(params(&[bad]).filter(PAGE).is_err(), "{bad:?}");
        }
    }
}
