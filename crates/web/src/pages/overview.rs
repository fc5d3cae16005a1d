//! The Overview page (`/`): sessions by status, events by level, sessions
//! running now, cost and tokens per day over a date range (an SVG drawn
//! on the server, `chart`) with the range's totals per model, project and
//! agent, and the latest escalations.
//!
//! Note \[Overview window\]: the figures are the stored model calls
//! (`usage_calls`) of the range, by each call's own UTC day, summed and
//! priced in core as `agentshape usage daily` does. The range is 7, 30 or
//! 90 days, all, or `from`/`to` days, kept in the URL
//! (`?range=30d`, `?from=2025-06-01&to=2025-06-30`). A preset ends at
//! the day of the latest call, not today: an import of last year's
//! history shows last year's last 30 days, never an empty "$0.00". A store
//! without calls (runs only, or imported before calls were kept) shows the
//! sessions' own costs by start day over the last 30 days, and says so.

use std::collections::BTreeMap;
use std::sync::Arc;

use agentshape_core::pricing::PriceTable;
use agentshape_core::usage::{self, Figures, Group, UsageCall};
use agentshape_store::query::{self, Dashboard, DayTotals, KeyDay, OVERVIEW_DAYS, UsageFilter};
use agentshape_store::time;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::{Deserialize, Serialize};

use super::chart::{ChartDay, Metric, Units, cost_chart, series_chart};
use super::sessions::{cost, encode, status_badge, truncate_start, when};
use super::usage::{
    DAY_MS, cost_cell, cost_text, day_of, day_start, parse_day, partial_note, prices,
    short_project, tokens_cell,
};
use super::{Nav, error_page, layout};
use crate::State;
use crate::error::read;

/// The 30 days ending today, oldest first, as of `now_ms`: each stored
/// day's totals, and zeros for the days without sessions, so the chart's x
/// axis is always the whole window (the fallback without calls).
pub(crate) fn fill_days(days: &[DayTotals], now_ms: i64) -> Vec<DayTotals> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    (0..OVERVIEW_DAYS)
        .map(|k| {
            let name = time::format_ms(today - (OVERVIEW_DAYS - 1 - k) * DAY_MS)[..10].to_owned();
            days.iter()
                .find(|d| d.day == name)
                .cloned()
                .unwrap_or(DayTotals {
                    day: name,
                    sessions: 0,
                    cost_usd: 0.0,
                    input_tokens: 0,
                    output_tokens: 0,
                })
        })
        .collect()
}

/// The range presets, as the URL names them, and their days.
pub(crate) const PRESETS: &[(&str, Option<i64>)] = &[
    ("7d", Some(7)),
    ("30d", Some(30)),
    ("90d", Some(90)),
    ("all", None),
];

/// The overview's query string (Note \[Overview window\]).
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct RangeParams {
    pub(crate) range: Option<String>,
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
}

/// The range asked for, before the store says where its calls are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// The last `n` days up to the latest call's day.
    Days(&'static str, i64),
    /// From the first call's day to the last's.
    All,
    /// These days (each, when missing, the first or last call's day).
    Custom(Option<i64>, Option<i64>),
}

impl RangeParams {
    /// The range, or why the query is bad (a 400).
    pub(crate) fn asked(&self) -> Result<Asked, String> {
        fn given(v: Option<&String>) -> Option<&str> {
            v.map(|v| v.trim()).filter(|v| !v.is_empty())
        }
        let day = |name: &str, v: Option<&str>| -> Result<Option<i64>, String> {
            v.map(|d| parse_day(d).ok_or(format!("`{name}` must be a day: 2025-07-14")))
                .transpose()
        };
        let from = day("from", given(self.from.as_ref()))?;
        let to = day("to", given(self.to.as_ref()))?;
        if from.is_some() || to.is_some() || given(self.range.as_ref()) == Some("custom") {
            if let (Some(f), Some(t)) = (from, to)
                && f > t
            {
                return Err("`from` is after `to`".to_owned());
            }
            return Ok(Asked::Custom(from, to));
        }
        match given(self.range.as_ref()) {
            None => Ok(Asked::Days("30d", 30)),
            Some(r) => match PRESETS.iter().find(|(name, _)| *name == r) {
                Some((name, Some(n))) => Ok(Asked::Days(name, *n)),
                Some((_, None)) => Ok(Asked::All),
                None => Err("`range` must be 7d, 30d, 90d, all or custom".to_owned()),
            },
        }
    }
}

/// A range resolved against the stored calls: whole UTC days.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Window {
    /// `7d`, `30d`, `90d`, `all` or `custom`.
    pub(crate) range: String,
    /// Its first day, `YYYY-MM-DD`.
    pub(crate) from: String,
    /// Its last day (included).
    pub(crate) to: String,
    /// Its first instant (ms).
    #[serde(skip)]
    pub(crate) from_ms: i64,
    /// The instant after its last day.
    #[serde(skip)]
    pub(crate) until_ms: i64,
}

impl Window {
    /// `asked` over calls spanning `span` (first and last call, ms).
    pub(crate) fn of(asked: &Asked, span: (i64, i64)) -> Window {
        let (first, last) = (day_start(span.0), day_start(span.1));
        let (range, from, to) = match asked {
            Asked::Days(name, n) => ((*name).to_owned(), last - (n - 1) * DAY_MS, last),
            Asked::All => ("all".to_owned(), first, last),
            Asked::Custom(f, t) => {
                let to = t.unwrap_or(last.max(f.unwrap_or(last)));
                ("custom".to_owned(), f.unwrap_or(first.min(to)), to)
            }
        };
        Window {
            range,
            from: day_of(from),
            to: day_of(to),
            from_ms: from,
            until_ms: to + DAY_MS,
        }
    }

    /// Its days, oldest first.
    fn days(&self) -> Vec<String> {
        let n = (self.until_ms - self.from_ms) / DAY_MS;
        (0..n).map(|k| day_of(self.from_ms + k * DAY_MS)).collect()
    }
}

/// One group's key and figures (a day's agent, a project's day).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DayKey {
    /// `YYYY-MM-DD`.
    pub(crate) day: String,
    /// The agent or project.
    pub(crate) key: String,
    /// Its tokens and cost.
    #[serde(flatten)]
    pub(crate) figures: Figures,
}

/// The overview's usage numbers over a [`Window`] (Note \[Overview
/// window\]); `/api/overview` returns them as they are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct UsageOverview {
    /// The range.
    pub(crate) window: Window,
    /// The range's totals.
    pub(crate) total: Group,
    /// Every day of the range, oldest first (a day without calls at zero).
    pub(crate) days: Vec<Group>,
    /// Per model, the highest cost first.
    pub(crate) models: Vec<Group>,
    /// Per project (its full path; `""`: none recorded), the highest cost first.
    pub(crate) projects: Vec<Group>,
    /// Per agent, the highest cost first.
    pub(crate) agents: Vec<Group>,
    /// Per day and agent.
    pub(crate) days_by_agent: Vec<DayKey>,
    /// Per day and project.
    pub(crate) days_by_project: Vec<DayKey>,
}

/// Highest cost first, then most tokens, then by key.
fn costliest_first(mut groups: Vec<Group>) -> Vec<Group> {
    groups.sort_by(|a, b| {
        b.figures
            .cost_usd
            .total_cmp(&a.figures.cost_usd)
            .then_with(|| b.figures.total_tokens.cmp(&a.figures.total_tokens))
            .then_with(|| a.key.cmp(&b.key))
    });
    groups
}

/// `calls` (those of `window`) summed per day, model, project and agent.
pub(crate) fn usage_overview(
    calls: &[UsageCall],
    prices: &PriceTable,
    window: Window,
) -> UsageOverview {
    let day = |c: &UsageCall| day_of(c.at_ms);
    let (by_day, total) = usage::group_by(calls, |c| Some(day(c)), prices);
    let mut by_day: BTreeMap<String, Group> =
        by_day.into_iter().map(|g| (g.key.clone(), g)).collect();
    let days = window
        .days()
        .into_iter()
        .map(|d| {
            by_day.remove(&d).unwrap_or(Group {
                key: d,
                ..Group::default()
            })
        })
        .collect();
    let project = |c: &UsageCall| c.project.clone().unwrap_or_default();
    let per_day = |key: &dyn Fn(&UsageCall) -> String| -> Vec<DayKey> {
        usage::group_by(
            calls,
            |c| Some(format!("{}\u{1f}{}", day(c), key(c))),
            prices,
        )
        .0
        .into_iter()
        .map(|g| {
            let (d, k) = g.key.split_once('\u{1f}').unwrap_or((&g.key, ""));
            DayKey {
                day: d.to_owned(),
                key: k.to_owned(),
                figures: g.figures.clone(),
            }
        })
        .collect()
    };
    let model = |c: &UsageCall| {
        if c.model.is_empty() {
            "(unknown model)".to_owned()
        } else {
            c.model.clone()
        }
    };
    UsageOverview {
        total,
        days,
        models: costliest_first(usage::group_by(calls, |c| Some(model(c)), prices).0),
        projects: costliest_first(usage::group_by(calls, |c| Some(project(c)), prices).0),
        agents: costliest_first(usage::group_by(calls, |c| Some(c.agent.clone()), prices).0),
        days_by_agent: per_day(&|c| c.agent.clone()),
        days_by_project: per_day(&|c| project(c)),
        window,
    }
}

/// A [`DayKey`] as the series charts take it: the tokens are all of them
/// (cache included), in `input_tokens`, and the count is of calls.
fn chart_rows(rows: &[DayKey], short: bool) -> Vec<KeyDay> {
    rows.iter()
        .map(|r| KeyDay {
            day: r.day.clone(),
            key: if short && !r.key.is_empty() {
                short_project(&r.key)
            } else {
                r.key.clone()
            },
            sessions: i64::try_from(r.figures.calls).unwrap_or(i64::MAX),
            cost_usd: r.figures.cost_usd,
            input_tokens: i64::try_from(r.figures.total_tokens).unwrap_or(i64::MAX),
            output_tokens: 0,
        })
        .collect()
}

/// The links and the small form that pick the range.
fn range_picker(w: &Window) -> Markup {
    html! {
        nav #range .range {
            @for (name, _) in PRESETS {
                @if w.range == *name {
                    strong.current data-range=(name) { (name) }
                } @else {
                    a data-range=(name) href={ "/?range=" (name) } { (name) }
                }
                " "
            }
            form #range-form method="get" action="/" {
                label { "from " input type="date" name="from" value=(w.from); }
                " "
                label { "to " input type="date" name="to" value=(w.to); }
                " "
                button type="submit" { "Show" }
            }
        }
    }
}

/// One table of a range's groups: name, calls, tokens, cost.
fn groups_table(id: &str, head: &str, groups: &[Group], project: bool) -> Markup {
    const ROWS: usize = 15;
    html! {
        @if groups.is_empty() {
            p.empty id={ (id) "-empty" } { "Nothing in this range." }
        } @else {
            table id=(id) {
                thead { tr { th { (head) } th.num { "Calls" } th.num { "Tokens" } th.num { "Cost" } } }
                tbody {
                    @for g in groups.iter().take(ROWS) {
                        tr data-key=(g.key) data-cost=(format!("{:.6}", g.figures.cost_usd)) data-partial=[g.figures.partial.then_some("true")] {
                            @if project {
                                td.project title=(g.key) { @if g.key.is_empty() { "(none)" } @else { (short_project(&g.key)) } }
                            } @else {
                                td.mono { (g.key) }
                            }
                            td.num { (g.figures.calls) }
                            td.num { (tokens_cell(&g.figures)) }
                            td.num.cost { (cost_cell(&g.figures)) }
                        }
                    }
                }
            }
            @if groups.len() > ROWS {
                p.muted { "and " (groups.len() - ROWS) " more" }
            }
        }
    }
}

/// The usage part of the page: the range, its chart, totals and tables.
fn usage_part(u: &UsageOverview) -> Markup {
    let t = &u.total.figures;
    let days: Vec<ChartDay> = u
        .days
        .iter()
        .map(|g| ChartDay {
            day: g.key.clone(),
            cost_usd: g.figures.cost_usd,
            tokens: i64::try_from(g.figures.total_tokens).unwrap_or(i64::MAX),
            count: i64::try_from(g.figures.calls).unwrap_or(i64::MAX),
            partial: g.figures.partial,
        })
        .collect();
    let window = u.window.days();
    let by_agent = chart_rows(&u.days_by_agent, false);
    let by_project = chart_rows(&u.days_by_project, true);
    html! {
        (range_picker(&u.window))
        section.card.chart #cost-chart data-from=(u.window.from) data-to=(u.window.to)
            data-cost=(format!("{:.6}", t.cost_usd)) data-partial=[t.partial.then_some("true")] {
            h2 {
                "Cost and tokens per day"
                span.muted {
                    " · " (u.window.from) " to " (u.window.to) " (UTC, by each call's time) · "
                }
                span #range-total .total title=[t.partial.then(|| partial_note(t))] { (cost_text(t)) }
                span.muted { " · " (super::chart::compact(i64::try_from(t.total_tokens).unwrap_or(i64::MAX))) " tokens · " (t.calls) " calls" }
            }
            @if t.partial {
                p.note #partial-note { "* partial: no price for " (t.unpriced_models.join(", ")) "; their tokens are counted, their cost is not." }
            }
            (cost_chart(&days, Units { count: "call", tokens: "tokens, cache included", empty: "No model calls in this range." }))
        }
        div.grid3 #usage-tables {
            section.card { h2 { "By model" } (groups_table("by-model", "Model", &u.models, false)) }
            section.card { h2 { "By project" } (groups_table("by-project", "Project", &u.projects, true)) }
            section.card { h2 { "By agent" } (groups_table("by-agent", "Agent", &u.agents, false)) }
        }
        div.grid2 #by-agent-project {
            @for (id, title, rows, metric) in [
                ("cost-by-agent", "Cost per day by agent", &by_agent, Metric::Cost),
                ("tokens-by-agent", "Tokens per day by agent", &by_agent, Metric::Tokens),
                ("cost-by-project", "Cost per day by project", &by_project, Metric::Cost),
                ("tokens-by-project", "Tokens per day by project", &by_project, Metric::Tokens),
            ] {
                section.card.chart id=(id) {
                    h2 { (title) @if metric == Metric::Cost && t.partial { span.muted title=(partial_note(t)) { " (partial*)" } } }
                    (series_chart(title, &window, rows, metric))
                }
            }
        }
    }
}

/// The fallback without calls: the sessions' own costs by start day over
/// the last 30 days, as of `now_ms` (Note \[Overview window\]).
fn sessions_part(o: &Dashboard, now_ms: i64) -> Markup {
    let days = fill_days(&o.days, now_ms);
    let total_cost: f64 = days.iter().map(|d| d.cost_usd).sum();
    let chart: Vec<ChartDay> = days.iter().map(ChartDay::from).collect();
    let window: Vec<String> = days.iter().map(|d| d.day.clone()).collect();
    html! {
        section.card.chart #cost-chart {
            h2 { "Cost and tokens per day" span.muted { " · last 30 days, " (format!("${total_cost:.2}")) } }
            p.note #no-usage {
                "This store holds no model calls (only runs, or sessions imported before calls were kept; "
                code { "agentshape import" } " fills them): these are the sessions' own costs, by the day each started."
            }
            (cost_chart(&chart, Units { count: "session", tokens: "tokens in + out", empty: "No sessions in the last 30 days." }))
        }
        div.grid2 #by-agent-project {
            @for (id, title, rows, metric) in [
                ("cost-by-agent", "Cost per day by agent", &o.days_by_agent, Metric::Cost),
                ("tokens-by-agent", "Tokens per day by agent", &o.days_by_agent, Metric::Tokens),
                ("cost-by-project", "Cost per day by project", &o.days_by_project, Metric::Cost),
                ("tokens-by-project", "Tokens per day by project", &o.days_by_project, Metric::Tokens),
            ] {
                section.card.chart id=(id) {
                    h2 { (title) }
                    // Runs record no project; only imported sessions do.
                    @if !rows.is_empty() && rows.iter().all(|d| d.key.is_empty()) && id.ends_with("project") {
                        p.empty { "No session here records its project (imported sessions do)." }
                    } @else {
                        (series_chart(title, &window, rows, metric))
                    }
                }
            }
        }
    }
}

/// The page's body, as of `now_ms`: `usage` is `None` when the store has
/// no calls; `costs` the costliest sessions' figures from their calls.
pub(crate) fn body(
    o: &Dashboard,
    usage: Option<&UsageOverview>,
    costs: &std::collections::HashMap<String, Group>,
    now_ms: i64,
) -> Markup {
    html! {
        h1 { "Overview" }
        div.cards {
            section.card {
                h2 { "Sessions by status" }
                @if o.sessions_by_status.is_empty() {
                    p #by-status .empty { "No sessions yet." }
                } @else {
                    ul #by-status .counts {
                        @for (status, n) in &o.sessions_by_status {
                            li data-status=(status) data-count=(n) {
                                a href={ "/sessions?status=" (encode(status)) } { (status_badge(status)) }
                                " " span.num { (n) }
                            }
                        }
                    }
                }
            }
            section.card {
                h2 { "Events by level" }
                @if o.events_by_level.is_empty() {
                    p #by-level .empty { "No events yet." }
                } @else {
                    ul #by-level .counts {
                        @for (level, n) in &o.events_by_level {
                            li data-level=(level) data-count=(n) {
                                a href={ "/events?level=" (encode(level)) } {
                                    span class={ "badge l-" (level) } { (level) }
                                }
                                " " span.num { (n) }
                            }
                        }
                    }
                }
            }
            section.card {
                h2 { "Running now" }
                p.big #running data-count=(o.running) {
                    a href="/sessions?status=running" { (o.running) }
                }
            }
        }
        @match usage {
            Some(u) => (usage_part(u)),
            None => (sessions_part(o, now_ms)),
        }
        div.grid2 {
            section.card {
                h2 { "Most expensive sessions" }
                @if o.costliest.is_empty() {
                    p #costliest-empty .empty { "No session has a cost yet." }
                } @else {
                    table #costliest {
                        thead { tr { th { "Session" } th { "Agent / model" } th { "Project" } th { "Started" } th.num { "Cost" } } }
                        tbody {
                            @for s in &o.costliest {
                                tr data-session-id=(s.id) {
                                    td.mono { a href={ "/sessions/" (encode(&s.id)) } { (s.id) } }
                                    td { (s.agent.as_deref().unwrap_or("")) @if let Some(m) = &s.model { " / " (m) } }
                                    td.project title=[s.project.as_deref()] { (s.project.as_deref().map(|p| truncate_start(&short_project(p), 32)).unwrap_or_default()) }
                                    td.mono { (when(&s.started_at)) }
                                    td.num.cost {
                                        @match costs.get(&s.id) {
                                            Some(g) => (cost_cell(&g.figures)),
                                            None => (cost(s)),
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card {
                h2 { "Tool errors by tool" }
                @if o.tool_errors.is_empty() {
                    p #tool-errors-empty .empty { "No tool call failed." }
                } @else {
                    table #tool-errors {
                        thead { tr { th { "Tool" } th.num { "Errors" } th.num { "Calls" } th.num { "Failed" } } }
                        tbody {
                            @for t in &o.tool_errors {
                                tr data-tool=(t.tool) {
                                    td.mono { (t.tool) }
                                    td.num { (t.errors) }
                                    td.num { (t.calls) }
                                    td.num { @if t.calls > 0 { (format!("{:.0}%", t.errors as f64 * 100.0 / t.calls as f64)) } }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Escalations" }
        table #escalations {
            thead { tr { th { "When" } th { "From" } th { "To" } th { "Service" } th { "Tier" } th { "Status" } } }
            tbody {
                @for e in &o.escalations {
                    tr data-escalation-id=(e.id) {
                        td.mono { (when(&e.created_at)) }
                        td.mono { a href={ "/sessions/" (encode(&e.parent_id)) } { (e.parent_id) } }
                        td.mono { a href={ "/sessions/" (encode(&e.child_id)) } { (e.child_id) } }
                        td { (e.service) }
                        td.num { (e.tier) }
                        td { @if let Some(s) = &e.child_status { (status_badge(s)) } }
                    }
                }
            }
        }
        @if o.escalations.is_empty() {
            p #escalations-empty .empty { "No escalations yet." }
        }
    }
}

/// What the overview shows (`/api/overview` too): the dashboard's counts
/// and lists, and the usage of the range asked (`None`: no calls stored).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Loaded {
    #[serde(flatten)]
    pub(crate) dashboard: Dashboard,
    pub(crate) usage: Option<UsageOverview>,
    /// The costliest sessions' own figures, from their calls.
    #[serde(skip)]
    pub(crate) costs: std::collections::HashMap<String, Group>,
    /// The price file could not be read (the built-in prices were used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) price_note: Option<String>,
}

/// Read the overview for the range `asked`, as of `now_ms`.
pub(crate) fn load(
    s: &dyn query::Source,
    asked: &Asked,
    now_ms: i64,
) -> agentshape_store::Result<Loaded> {
    let dashboard = query::overview(s, now_ms)?;
    let (prices, price_note) = prices();
    let usage = match query::usage_span(s)? {
        None => None,
        Some(span) => {
            let window = Window::of(asked, span);
            let calls = query::usage_calls(
                s,
                &UsageFilter {
                    since_ms: Some(window.from_ms),
                    until_ms: Some(window.until_ms),
                    ..UsageFilter::default()
                },
            )?;
            Some(usage_overview(&calls, &prices, window))
        }
    };
    let costs = if usage.is_some() && !dashboard.costliest.is_empty() {
        let calls = query::usage_calls(
            s,
            &UsageFilter {
                sessions: dashboard.costliest.iter().map(|r| r.id.clone()).collect(),
                ..UsageFilter::default()
            },
        )?;
        super::usage::by_session(&calls, &prices).0
    } else {
        std::collections::HashMap::new()
    };
    Ok(Loaded {
        dashboard,
        usage,
        costs,
        price_note,
    })
}

/// `GET /`: a bad range is a 400 page.
pub(crate) async fn page(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<RangeParams>, QueryRejection>,
) -> Response {
    let asked = match q.map_err(|e| e.body_text()).and_then(|Query(q)| q.asked()) {
        Ok(a) => a,
        Err(m) => return error_page(StatusCode::BAD_REQUEST, &m),
    };
    let now = time::now_ms();
    let both = move |s: &dyn query::Source| {
        let first = query::overview_first_day(now);
        Ok((
            load(s, &asked, now)?,
            query::secrets_found(s, super::secrets::SHOWN)?,
            agentshape_store::alerts::counts(&agentshape_store::alerts::SourceRows(s))?,
            // The chart needs only the outcomes; the table adds the paths.
            query::stats_of(
                s,
                query::StatsBy::Day,
                Some(&first),
                query::Parts {
                    paths: false,
                    quantiles: false,
                },
            )?,
            query::stats_of(
                s,
                query::StatsBy::All,
                Some(&first),
                query::Parts {
                    paths: true,
                    quantiles: false,
                },
            )?,
        ))
    };
    match read(&state, both).await {
        Ok((l, found, alerts, by_day, all)) => {
            let checks = super::validation::panel(&by_day, all.first(), now);
            let page = html! {
                @if let Some(n) = &l.price_note { p.note #price-note { (n) } }
                (body(&l.dashboard, l.usage.as_ref(), &l.costs, now)) (checks) (super::secrets::panel(&found))
                (super::alerts::summary(alerts))
            };
            layout("Overview", Nav::Overview, &[], &page).into_response()
        }
        Err(e) => e.into_page(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_store::query::ToolTotal;
    use agentshape_store::{SqliteStore, Store};
    use std::collections::HashMap;

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    #[test]
    fn native_charts_tools_and_costliest_render_hostile_names_as_text() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let now = agentshape_store::time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        for (id, agent, project, cost, est) in [
            ("n1", "claude-code", HOSTILE, 1.5, true),
            ("n2", "codex", "/srv/api", 3.0, false),
        ] {
            let mut r = agentshape_store::Session::new(id, "2025-07-14T05:00:00.000Z", "completed");
            r.agent = Some(agent.into());
            r.model = Some(HOSTILE.into());
            r.project = Some(project.into());
            r.cost_usd = Some(cost);
            r.cost_estimated = est;
            r.input_tokens = 100;
            r.tools = vec![agentshape_store::ToolCount {
                tool: HOSTILE.into(),
                calls: 3,
                errors: 2,
            }];
            let mark = agentshape_store::NativeMark {
                path: format!("/p/{id}"),
                session_id: id.into(),
                agent: agent.into(),
                dev: 0,
                inode: 0,
                size: 0,
                offset: 0,
                mtime_ms: 0,
                lines: 0,
                updated_at: "2025-07-14T06:00:00.000Z".into(),
                reset: false,
                expect_offset: None,
            };
            store.save_native(&r, &[], &mark).unwrap();
        }
        let o = query::overview(&store, now).unwrap();
        assert_eq!(
            o.tool_errors,
            [ToolTotal {
                tool: HOSTILE.into(),
                calls: 6,
                errors: 4
            }]
        );
        assert_eq!(o.days_by_agent.len(), 2);
        let html = body(&o, None, &HashMap::new(), now).into_string();
        for id in [
            "cost-by-agent",
            "tokens-by-agent",
            "cost-by-project",
            "tokens-by-project",
        ] {
            assert!(html.contains(&format!(r#"id="{id}""#)), "{id}");
        }
        assert!(html.contains(r#"data-key="claude-code""#) && html.contains(r#"data-key="codex""#));
        assert!(html.contains(r#"<tr data-session-id="n2">"#), "{html}");
        let first = html.find(r#"data-session-id="n2""#).unwrap();
        let second = html.find(r#"data-session-id="n1""#).unwrap();
        assert!(first < second, "highest cost first");
        assert!(html.contains(r#"$1.5000 <abbr class="est""#), "{html}");
        assert_eq!(
            html.matches("<abbr class=\"est\"").count(),
            1,
            "only the estimated one"
        );
        assert!(html.contains("<td class=\"num\">67%</td>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    }

    #[test]
    fn thirty_days_ending_today_with_zeros_between() {
        // 2025-07-31T12:00Z
        let now = 1_753_963_200_000;
        let stored = vec![DayTotals {
            day: "2025-07-05".into(),
            sessions: 3,
            cost_usd: 0.3,
            input_tokens: 10,
            output_tokens: 1,
        }];
        let days = fill_days(&stored, now);
        assert_eq!(days.len(), 30);
        assert_eq!(days[0].day, "2025-07-02");
        assert_eq!(days[29].day, "2025-07-31");
        assert_eq!(days[3], stored[0]);
        assert_eq!(days.iter().map(|d| d.sessions).sum::<i64>(), 3);
    }

    #[test]
    fn cards_carry_the_contract_and_empty_states() {
        let o = Dashboard {
            sessions_by_status: vec![("completed".into(), 4), ("lost".into(), 1)],
            events_by_level: vec![("critical".into(), 2)],
            running: 0,
            ..Dashboard::default()
        };
        let html = body(&o, None, &HashMap::new(), 1_753_963_200_000).into_string();
        assert!(
            html.contains(r#"<li data-status="lost" data-count="1">"#),
            "{html}"
        );
        assert!(html.contains(r#"<li data-level="critical" data-count="2">"#));
        assert!(html.contains(r#"id="cost-chart""#));
        assert!(html.contains("No sessions in the last 30 days."));
        assert!(html.contains("No escalations yet."));
        assert!(html.contains("No session has a cost yet."));
        // Runs only: no project to chart.
        let runs = Dashboard {
            days_by_project: vec![KeyDay {
                day: "2025-07-31".into(),
                key: String::new(),
                sessions: 2,
                cost_usd: 0.5,
                input_tokens: 10,
                output_tokens: 1,
            }],
            ..Dashboard::default()
        };
        let html = body(&runs, None, &HashMap::new(), 1_753_963_200_000).into_string();
        assert_eq!(
            html.matches("No session here records its project").count(),
            2,
            "{html}"
        );
        assert!(html.contains("No tool call failed."));
        let empty = body(&Dashboard::default(), None, &HashMap::new(), 0).into_string();
        assert!(empty.contains(r#"id="by-status""#) && empty.contains("No sessions yet."));
    }

    /// Imports of last year's history: Claude Code (priced) on two days
    /// and Codex with a model no table prices, in two worktrees.
    fn old_history() -> SqliteStore {
        use agentshape_core::usage::UsageTokens;
        let mut store = SqliteStore::open_in_memory().unwrap();
        let ms = |at: &str| agentshape_store::time::parse_ms(at).unwrap();
        for (id, agent, project, calls) in [
            (
                "cc",
                "claude-code",
                "/home/ana/wt/api-fix",
                vec![
                    ("2024-03-01T10:00:00.000Z", "claude-sonnet-4-20250514"),
                    ("2024-03-03T23:59:00.000Z", "claude-sonnet-4-20250514"),
                ],
            ),
            (
                "cx",
                "codex",
                "/home/ana/main/api",
                vec![("2024-03-03T08:00:00.000Z", "mystery-model-9")],
            ),
        ] {
            let mut r = agentshape_store::Session::new(id, calls[0].0, "completed");
            r.agent = Some(agent.into());
            r.project = Some(project.into());
            r.cost_usd = Some(9.0);
            r.usage = calls
                .iter()
                .enumerate()
                .map(|(k, (at, model))| agentshape_store::UsageRecord {
                    key: format!("{id}#{k}"),
                    at_ms: ms(at),
                    model: (*model).into(),
                    sidechain: false,
                    tokens: UsageTokens {
                        input: 1_000_000,
                        output: 100_000,
                        ..UsageTokens::default()
                    },
                })
                .collect();
            let mark = agentshape_store::NativeMark {
                path: format!("/p/{id}"),
                session_id: id.into(),
                agent: agent.into(),
                dev: 0,
                inode: 0,
                size: 0,
                offset: 0,
                mtime_ms: 0,
                lines: 0,
                updated_at: "2024-03-04T00:00:00.000Z".into(),
                reset: false,
                expect_offset: None,
            };
            store.save_native(&r, &[], &mark).unwrap();
        }
        store
    }

    fn params(qs: &str) -> Result<Asked, String> {
        Query::<RangeParams>::try_from_uri(&format!("/?{qs}").parse().unwrap())
            .unwrap()
            .0
            .asked()
    }

    #[test]
    fn ranges_parse_and_the_default_window_ends_at_the_last_call() {
        assert_eq!(params(""), Ok(Asked::Days("30d", 30)));
        assert_eq!(params("range=7d"), Ok(Asked::Days("7d", 7)));
        assert_eq!(params("range=all"), Ok(Asked::All));
        let day = |d: &str| parse_day(d).unwrap();
        assert_eq!(
            params("range=30d&from=2024-03-01&to="),
            Ok(Asked::Custom(Some(day("2024-03-01")), None))
        );
        for bad in ["range=1y", "from=2024-3-1", "from=2024-03-05&to=2024-03-01"] {
            assert!(params(bad).is_err(), "{bad}");
        }
        let span = (day("2024-01-10") + 5, day("2024-03-03") + 86_000_000);
        let w = Window::of(&Asked::Days("30d", 30), span);
        assert_eq!(
            (w.from.as_str(), w.to.as_str()),
            ("2024-02-03", "2024-03-03")
        );
        assert_eq!(w.days().len(), 30);
        let w = Window::of(&Asked::All, span);
        assert_eq!(
            (w.from.as_str(), w.to.as_str()),
            ("2024-01-10", "2024-03-03")
        );
        let w = Window::of(&Asked::Custom(Some(day("2024-03-02")), None), span);
        assert_eq!(
            (w.range.as_str(), w.from.as_str(), w.to.as_str()),
            ("custom", "2024-03-02", "2024-03-03")
        );
        // A `to` alone before the first call: a one-day window, not a reversed one.
        let w = Window::of(&Asked::Custom(None, Some(day("2023-12-01"))), span);
        assert_eq!(
            (w.from.as_str(), w.to.as_str()),
            ("2023-12-01", "2023-12-01")
        );
    }

    #[test]
    fn old_history_shows_its_cost_per_day_model_project_and_agent_with_partial_marks() {
        let store = old_history();
        // Today is long after the calls: the default window still holds them.
        let now = agentshape_store::time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        let l = load(&store, &Asked::Days("30d", 30), now).unwrap();
        let u = l.usage.as_ref().unwrap();
        assert_eq!(
            (u.window.from.as_str(), u.window.to.as_str()),
            ("2024-02-03", "2024-03-03")
        );
        assert_eq!(u.days.len(), 30);
        assert_eq!(u.total.figures.calls, 3);
        assert!(u.total.figures.cost_usd > 1.0, "{:?}", u.total.figures);
        assert!(u.total.figures.partial);
        assert_eq!(u.total.figures.unpriced_models, ["mystery-model-9"]);
        // By each call's own day: cc's second call is on the 3rd.
        let day = |d: &str| u.days.iter().find(|g| g.key == d).unwrap();
        assert_eq!(day("2024-03-01").figures.calls, 1);
        assert_eq!(day("2024-03-03").figures.calls, 2);
        assert!(!day("2024-03-01").figures.partial && day("2024-03-03").figures.partial);
        assert_eq!(day("2024-03-02").figures.calls, 0);
        assert_eq!(u.models[0].key, "claude-sonnet-4-20250514");
        assert_eq!(
            u.agents.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(),
            ["claude-code", "codex"]
        );
        assert_eq!(u.projects.len(), 2);
        assert_eq!(u.days_by_agent.len(), 3);
        assert!(
            l.costs.contains_key("cc"),
            "the costliest priced from their calls"
        );

        let html = body(&l.dashboard, l.usage.as_ref(), &l.costs, now).into_string();
        let total = format!("${:.2}*", u.total.figures.cost_usd);
        assert!(html.contains(&total), "{total} in {html}");
        assert!(html.contains(r#"id="range-total""#) && !html.contains(">$0.00*</span>"));
        assert!(
            html.contains(r#"id="partial-note""#) && html.contains("no price for mystery-model-9")
        );
        // Per project: the short name, the whole path in the title.
        assert!(
            html.contains(r#"<td class="project" title="/home/ana/wt/api-fix">wt/api-fix</td>"#),
            "{html}"
        );
        assert!(html.contains(r#"title="/home/ana/main/api">main/api</td>"#));
        // The codex row is partial, and says which model.
        let codex = html.find(r#"<tr data-key="codex""#).unwrap();
        assert!(
            html[codex..]
                .starts_with(r#"<tr data-key="codex" data-cost="0.000000" data-partial="true">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<abbr class="partial" title="partial: no price for mystery-model-9"#)
        );
        // The range picker: 30d current, the others links, the form filled.
        assert!(
            html.contains(r#"<strong class="current" data-range="30d">30d</strong>"#),
            "{html}"
        );
        assert!(html.contains(r#"<a data-range="all" href="/?range=all">all</a>"#));
        assert!(html.contains(r#"name="from" value="2024-02-03""#));
        assert_eq!(html.matches(r#"<g class="day""#).count(), 30);
        assert!(
            html.contains(r#"data-key="wt/api-fix""#),
            "series keyed by the short name"
        );
        // The costliest sessions' costs come from their calls, partial marked.
        let costliest = &html[html.find(r#"id="costliest""#).unwrap()..];
        assert!(
            costliest.contains(r#"<abbr class="partial""#),
            "{costliest}"
        );
        assert!(!costliest.contains("$9.0000"), "not the stored cost");

        // Seven days, all, custom.
        let l = load(&store, &Asked::Days("7d", 7), now).unwrap();
        assert_eq!(l.usage.as_ref().unwrap().days.len(), 7);
        let l = load(
            &store,
            &Asked::Custom(parse_day("2024-03-01"), parse_day("2024-03-01")),
            now,
        )
        .unwrap();
        let u = l.usage.unwrap();
        assert_eq!((u.total.figures.calls, u.total.figures.partial), (1, false));
        let json = serde_json::to_value(load(&store, &Asked::All, now).unwrap()).unwrap();
        assert_eq!(json["usage"]["window"]["from"], "2024-03-01");
        assert_eq!(json["usage"]["total"]["calls"], 3);
        assert_eq!(json["usage"]["total"]["partial"], true);
        assert!(json["usage"]["total"]["cost_usd"].as_f64().unwrap() > 1.0);
        assert!(
            json["sessions_by_status"].is_array(),
            "the dashboard's fields stay"
        );
    }

    #[test]
    fn a_store_without_calls_falls_back_and_says_so() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let mut r = agentshape_store::Session::new("r1", "2025-07-14T05:00:00.000Z", "completed");
        r.cost_usd = Some(0.5);
        store.write_session(&r).unwrap();
        let now = agentshape_store::time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        let l = load(&store, &Asked::Days("30d", 30), now).unwrap();
        assert!(l.usage.is_none());
        let html = body(&l.dashboard, None, &l.costs, now).into_string();
        assert!(html.contains(r#"id="no-usage""#), "{html}");
        assert!(html.contains("last 30 days, $0.50"), "{html}");
        assert!(!html.contains(r#"id="range""#));
    }
}
