//! The Events page (`/events`): every event the agents reported, newest
//! first, of one level or all; `assets/lists.js` prepends new ones live
//! (on each `ended` feed row it asks `/api/events?after=<newest shown>`).

use std::sync::Arc;

use agentshape_store::LEVELS;
use agentshape_store::query::{self, EventRow};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::sessions::{encode, when};
use super::{Nav, error_page, layout};
use crate::State;
use crate::error::read;

/// Events per page.
const PAGE: usize = 200;

/// The events list's query string (page and `/api/events`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct EventsParams {
    pub(crate) level: Option<String>,
    pub(crate) after: Option<String>,
    pub(crate) limit: Option<usize>,
}

impl EventsParams {
    /// `(level, after)`, or why the query is bad (a 400). An empty value
    /// (the form's "all") is no filter.
    pub(crate) fn parse(&self) -> Result<(Option<String>, Option<i64>), String> {
        let level = match self.level.as_deref().map(str::trim) {
            None | Some("" | "all") => None,
            Some(l) if LEVELS.contains(&l) => Some(l.to_owned()),
            Some(_) => return Err("`level` must be one of info, warning, critical".to_owned()),
        };
        let after = match self.after.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(a) => Some(
                a.parse::<i64>()
                    .ok()
                    .filter(|n| *n >= 0)
                    .ok_or("`after` must be an event id (a non-negative integer)")?,
            ),
        };
        Ok((level, after))
    }
}

/// One event row (`lists.js` builds the same shape for new ones).
fn row(e: &EventRow) -> Markup {
    html! {
        tr data-level=(e.level) data-event-id=(e.id) {
            td.mono { (when(&e.created_at)) }
            td { span class={ "badge l-" (e.level) } { (e.level) } }
            td.mono { a href={ "/sessions/" (encode(&e.session_id)) } { (e.session_id) } }
            td { (e.service.as_deref().unwrap_or("")) }
            td { (e.message) }
        }
    }
}

/// The page's body.
pub(crate) fn body(level: Option<&str>, rows: &[EventRow], feed_after: i64) -> Markup {
    let newest = rows.first().map_or(0, |e| e.id);
    html! {
        h1 { "Events" }
        form #level-filter .filters method="get" action="/events" {
            label { "Level"
                select name="level" {
                    option value="" { "all" }
                    @for l in LEVELS {
                        option value=(l) selected[level == Some(*l)] { (l) }
                    }
                }
            }
            button type="submit" { "Filter" }
        }
        table #events data-feed-after=(feed_after) data-newest=(newest) data-level=[level] {
            thead { tr { th { "When" } th { "Level" } th { "Session" } th { "Service" } th { "Message" } } }
            tbody {
                @for e in rows { (row(e)) }
            }
        }
        @if rows.is_empty() {
            p #events-empty .empty { "No events yet." }
        }
    }
}

/// `GET /events`.
pub(crate) async fn page(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<EventsParams>, QueryRejection>,
) -> Response {
    let level = match q.map_err(|e| e.body_text()).and_then(|Query(q)| q.parse()) {
        Ok((level, _)) => level,
        Err(m) => return error_page(StatusCode::BAD_REQUEST, &m),
    };
    let l = level.clone();
    let data = read(&state, move |s| {
        let after = query::feed_max_id(s)?;
        Ok((query::events(s, l.as_deref(), None, PAGE)?, after))
    })
    .await;
    match data {
        Ok((rows, after)) => layout(
            "Events",
            Nav::Events,
            &["lists.js"],
            &body(level.as_deref(), &rows, after),
        )
        .into_response(),
        Err(e) => e.into_page(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn levels_and_after_are_checked() {
        let p = |level: Option<&str>, after: Option<&str>| EventsParams {
            level: level.map(str::to_owned),
            after: after.map(str::to_owned),
            limit: None,
        };
        assert_eq!(p(None, None).parse().unwrap(), (None, None));
        assert_eq!(p(Some(""), Some("")).parse().unwrap(), (None, None));
        assert_eq!(
            p(Some("critical"), Some("7")).parse().unwrap(),
            (Some("critical".to_owned()), Some(7))
        );
        for (l, a) in [
            (Some("Critical"), None),
            (None, Some("x")),
            (None, Some("-1")),
        ] {
            assert!(p(l, a).parse().is_err(), "{l:?} {a:?}");
        }
    }

    #[test]
    fn rows_are_text_and_empty_has_a_state() {
        let e = EventRow {
            id: 3,
            session_id: "s\"1".into(),
            level: "warning".into(),
            service: Some("<img src=x onerror=alert(1)>".into()),
            message: "<script>alert(1)</script>".into(),
            created_at: "2025-07-14T03:12:09.000Z".into(),
        };
        let html = body(None, &[e], 9).into_string();
        assert!(html.contains(r#"<tr data-level="warning" data-event-id="3">"#));
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains("<img"));
        assert!(html.contains(r#"href="/sessions/s%221""#));
        assert!(html.contains(r#"data-newest="3""#));
        assert!(
            body(Some("info"), &[], 0)
                .into_string()
                .contains("No events yet.")
        );
    }
}
