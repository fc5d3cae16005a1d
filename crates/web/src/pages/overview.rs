//! The Overview page (`/`): sessions by status, events by level, sessions
//! running now, cost and tokens per day over the last 30 days (an SVG
//! drawn on the server, `chart`), and the latest escalations.

use std::sync::Arc;

use agentshape_store::query::{self, Dashboard, DayTotals, OVERVIEW_DAYS};
use agentshape_store::time;
use axum::extract::State as AxState;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::chart::cost_chart;
use super::sessions::{encode, status_badge, when};
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
    match read(&state, move |s| query::overview(s, now)).await {
        Ok(o) => layout("Overview", Nav::Overview, &[], &body(&o, now)).into_response(),
        Err(e) => e.into_page(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let empty = body(&Dashboard::default(), 0).into_string();
        assert!(empty.contains(r#"id="by-status""#) && empty.contains("No sessions yet."));
    }
}
