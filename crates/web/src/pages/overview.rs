//! The Overview page (`/`): sessions by status, events by level, sessions
//! running now, cost and tokens per day over the last 30 days (an SVG
//! drawn on the server, `chart`), and the latest escalations.

use std::sync::Arc;

use agentshape_store::query::{self, Dashboard, DayTotals, OVERVIEW_DAYS};
use agentshape_store::time;
use axum::extract::State as AxState;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::chart::{Metric, cost_chart, series_chart};
use super::sessions::{cost, encode, status_badge, truncate_start, when};
use super::{Nav, layout};
use crate::State;
use crate::api::read;

const DAY_MS: i64 = 86_400_000;

/// The window's days, oldest first, as of `now_ms`: each stored day's
/// totals, and zeros for the days without sessions, so the chart's x axis
/// is always the whole window.
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

/// The page's body, as of `now_ms`.
pub(crate) fn body(o: &Dashboard, now_ms: i64) -> Markup {
    let days = fill_days(&o.days, now_ms);
    let total_cost: f64 = days.iter().map(|d| d.cost_usd).sum();
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
        section.card.chart #cost-chart {
            h2 { "Cost and tokens per day" span.muted { " · last 30 days, " (format!("${total_cost:.2}")) } }
            (cost_chart(&days))
        }
        @let window: Vec<String> = days.iter().map(|d| d.day.clone()).collect();
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
                                    td.project title=[s.project.as_deref()] { (s.project.as_deref().map(|p| truncate_start(p, 32)).unwrap_or_default()) }
                                    td.mono { (when(&s.started_at)) }
                                    td.num.cost { (cost(s)) }
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

/// `GET /`.
pub(crate) async fn page(AxState(state): AxState<Arc<State>>) -> Response {
    let now = time::now_ms();
    let both = move |s: &dyn query::Source| {
        let first = query::overview_first_day(now);
        Ok((
            query::overview(s, now)?,
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
        Ok((o, found, alerts, by_day, all)) => {
            let checks = super::validation::panel(&by_day, all.first(), now);
            let page = html! {
                (body(&o, now)) (checks) (super::secrets::panel(&found))
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
    use agentshape_store::query::{KeyDay, ToolTotal};
    use agentshape_store::{SqliteStore, Store};

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    #[test]
    fn native_charts_tools_and_costliest_render_hostile_names_as_text() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let now = agentshape_store::time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        for (id, agent, project, cost, est) in [
            ("n1", "claude-code", HOSTILE, 1.5, true),
            ("n2", "codex", "/srv/api", 3.0, false),
        ] {
            let mut r =
                agentshape_store::SessionRecord::new(id, "2025-07-14T05:00:00.000Z", "completed");
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
        let html = body(&o, now).into_string();
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
        let html = body(&o, 1_753_963_200_000).into_string();
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
        let html = body(&runs, 1_753_963_200_000).into_string();
        assert_eq!(
            html.matches("No session here records its project").count(),
            2,
            "{html}"
        );
        assert!(html.contains("No tool call failed."));
        let empty = body(&Dashboard::default(), 0).into_string();
        assert!(empty.contains(r#"id="by-status""#) && empty.contains("No sessions yet."));
    }
}
