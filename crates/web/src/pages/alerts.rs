//! The Alerts page (`/alerts`, issue 31): the firings of `--alerts`
//! rules, newest first, a page of [`PAGE`] at a time (`?before=ID`), each
//! with what fired (a link to its session when there is one) and every
//! destination's delivery state and attempts. A webhook is named by
//! `scheme://host/path` only, as the store keeps it (core's Note
//! \[Webhook credentials\]).

use std::sync::Arc;

use agentshape_store::alerts::{self, FiringRow, SourceRows};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as AxState};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::sessions::{encode, when};
use super::{Nav, layout};
use crate::State;
use crate::error::read;

/// Firings per page.
pub(crate) const PAGE: usize = 50;

/// `?before=ID`: the page after the one whose last firing is `ID`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Params {
    before: Option<i64>,
}

/// The page's body.
pub(crate) fn body(rows: &[FiringRow], before: Option<i64>) -> Markup {
    html! {
        h1 { "Alerts" span.muted { " · what the --alerts rules fired, newest first" } }
        @if rows.is_empty() {
            p #alerts-empty .empty {
                @if before.is_some() { "No older alerts." }
                @else { "No alert has fired. Rules run with `serve --alerts FILE` (also `ops`, `watch`)." }
            }
        } @else {
            table #alerts {
                thead { tr {
                    th { "Fired" } th { "Rule" } th { "What" } th { "Session" } th { "Deliveries" }
                } }
                tbody {
                    @for f in rows {
                        tr data-firing-id=(f.id) {
                            td.mono title=(f.fired_at) { (when(&f.fired_at)) }
                            td { (f.rule) br; span.muted { (f.condition) } }
                            td { (ticked(&f.summary)) }
                            td.mono { @if let Some(s) = &f.session_id {
                                a href={ "/sessions/" (encode(s)) } { (s) }
                            } }
                            td {
                                ul.deliveries {
                                    @for d in &f.deliveries {
                                        li data-state=(d.state) {
                                            span class={ "badge " (state_class(&d.state)) } { (d.state) }
                                            " " (d.destination) " " span.mono { (d.target) }
                                            " · " (d.attempts) " attempt" @if d.attempts != 1 { "s" }
                                            @if d.state != "delivered" {
                                                @if let Some(e) = &d.last_error {
                                                    " · " span.bad { (e) }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if rows.len() == PAGE {
                @if let Some(last) = rows.last() {
                    p { a #alerts-older href={ "/alerts?before=" (last.id) } { "Older alerts →" } }
                }
            }
        }
    }
}

/// The overview's line: how many alerts fired, how many deliveries
/// failed for good, a link to the page. Nothing when none ever fired.
pub(crate) fn summary((fired, failed): (u64, u64)) -> Markup {
    html! {
        @if fired > 0 {
            p #alerts-summary {
                a href="/alerts" { (fired) " alert" @if fired != 1 { "s" } " fired" }
                @if failed > 0 {
                    " · " span.bad { (failed) " deliver" @if failed == 1 { "y" } @else { "ies" } " failed" }
                }
            }
        }
    }
}

fn state_class(state: &str) -> &'static str {
    match state {
        alerts::DELIVERED => "ok",
        alerts::FAILED => "bad",
        _ => "warn",
    }
}

/// `GET /alerts`.
pub(crate) async fn page(
    AxState(state): AxState<Arc<State>>,
    params: Result<Query<Params>, QueryRejection>,
) -> Response {
    // A `before` that is no number is the first page.
    let before = params.ok().and_then(|Query(p)| p.before);
    match read(&state, move |s| {
        alerts::firings(&SourceRows(s), None, before, PAGE)
    })
    .await
    {
        Ok(rows) => layout("Alerts", Nav::Alerts, &[], &body(&rows, before)).into_response(),
        Err(e) => e.into_page(),
    }
}

/// A summary as its webhook and log text write it (names between
/// backticks, as Slack renders them), with those names as code.
fn ticked(text: &str) -> Markup {
    html! {
        @for (i, part) in text.split('`').enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentshape_store::alerts::DeliveryRow;

    #[test]
    fn a_firing_shows_its_session_and_each_delivery_as_text() {
        let f = FiringRow {
            id: 7,
            rule: "<b>r</b>".into(),
            condition: "session_failed".into(),
            key: "session:s 1".into(),
            session_id: Some("s 1".into()),
            summary: "session `s 1` failed: <script>".into(),
            details: serde_json::json!({}),
            event_at: "2027-01-15T12:00:00.000Z".into(),
            fired_at: "2027-01-15T12:00:01.000Z".into(),
            deliveries: vec![
                DeliveryRow {
                    destination: "webhook".into(),
                    target: "https://h.example/x".into(),
                    state: "failed".into(),
                    attempts: 5,
                    last_error: Some("HTTP 500".into()),
                    delivered_at: None,
                },
                DeliveryRow {
                    destination: "log".into(),
                    target: "stderr".into(),
                    state: "delivered".into(),
                    attempts: 1,
                    last_error: None,
                    delivered_at: Some("2027-01-15T12:00:01.000Z".into()),
                },
            ],
        };
        let html = body(&[f], None).into_string();
        assert!(html.contains(r#"href="/sessions/s%201""#), "{html}");
        assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"));
        assert!(html.contains("session <code>s 1</code> failed"), "{html}");
        assert!(
            html.contains(r#"<span class="badge bad">failed</span>"#),
            "{html}"
        );
        assert!(html.contains("5 attempts"));
        assert!(html.contains("1 attempt<"), "{html}");
        assert!(html.contains("HTTP 500"));
        assert!(!html.contains("alerts-older"));
        assert!(
            body(&[], None)
                .into_string()
                .contains("No alert has fired.")
        );
    }
}
