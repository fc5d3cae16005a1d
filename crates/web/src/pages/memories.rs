//! The Memories page (`/memories`): what the agents learned, with its
//! confidence (a number and a `<meter>`), its service and how long ago it
//! was last reinforced, computed here so the page needs no script.

use std::sync::Arc;

use agentshape_store::query::{self, MemoryRow};
use agentshape_store::time;
use axum::extract::State as AxState;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::sessions::{encode, when};
use super::{Nav, layout};
use crate::State;
use crate::error::read;

/// Milliseconds since the epoch of a stored timestamp (the store's Note
/// \[Reading old timestamps\]).
pub(crate) fn parse_ms(at: &str) -> Option<i64> {
    time::parse_ms(at)
}

/// How long ago `at` was, as of `now_ms`: "just now", "5 minutes ago",
/// "1 hour ago", "3 days ago". A timestamp that does not parse is shown
/// as "unknown"; one in the future (clocks differ) as "just now".
pub(crate) fn staleness(at: &str, now_ms: i64) -> String {
    let Some(t) = parse_ms(at) else {
        return "unknown".to_owned();
    };
    let secs = (now_ms - t).max(0) / 1000;
    let (n, unit) = match secs {
        ..60 => return "just now".to_owned(),
        60..3_600 => (secs / 60, "minute"),
        3_600..86_400 => (secs / 3_600, "hour"),
        _ => (secs / 86_400, "day"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

/// The page's body, as of `now_ms`.
pub(crate) fn body(rows: &[MemoryRow], now_ms: i64) -> Markup {
    html! {
        h1 { "Memories" }
        table #memories {
            thead { tr {
                th { "Service" } th { "Category" } th { "Observation" } th { "Confidence" }
                th { "State" } th { "Last reinforced" } th { "Session" }
            } }
            tbody {
                @for m in rows {
                    tr data-memory-id=(m.id) data-active=(m.active) {
                        td { (m.service.as_deref().unwrap_or("")) }
                        td { (m.category) }
                        td { (m.observation) }
                        td.confidence {
                            span.num { (format!("{:.2}", m.confidence)) } " "
                            meter min="0" max="1" low="0.5" high="0.8" optimum="1" value=(m.confidence) {
                                (format!("{:.0}%", m.confidence * 100.0))
                            }
                        }
                        td { @if m.active { span.badge.ok { "active" } } @else { span.badge.muted { "pruned" } } }
                        td title=(when(&m.updated_at)) { (staleness(&m.updated_at, now_ms)) }
                        td.mono { @if let Some(s) = &m.session_id {
                            a href={ "/sessions/" (encode(s)) } { (s) }
                        } }
                    }
                }
            }
        }
        @if rows.is_empty() {
            p #memories-empty .empty { "No memories yet." }
        }
    }
}

/// `GET /memories`.
pub(crate) async fn page(AxState(state): AxState<Arc<State>>) -> Response {
    match read(&state, query::memories).await {
        Ok(rows) => {
            layout("Memories", Nav::Memories, &[], &body(&rows, time::now_ms())).into_response()
        }
        Err(e) => e.into_page(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn staleness_reads_as_people_say_it() {
        let now = parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        let cases = [
            ("2025-07-14T12:00:00.000Z", "just now"),
            ("2025-07-14T11:59:01.000Z", "just now"),
            ("2025-07-14T11:59:00.000Z", "1 minute ago"),
            ("2025-07-14T11:15:00.000Z", "45 minutes ago"),
            ("2025-07-14T11:00:00.000Z", "1 hour ago"),
            ("2025-07-13T12:00:01.000Z", "23 hours ago"),
            ("2025-07-13T12:00:00.000Z", "1 day ago"),
            ("2025-07-11T09:00:00.000Z", "3 days ago"),
            ("2024-07-14T12:00:00Z", "365 days ago"),
            ("2025-07-15T12:00:00.000Z", "just now"),
            ("yesterday", "unknown"),
            ("2025-13-14T12:00:00.000Z", "unknown"),
            ("", "unknown"),
        ];
        for (at, want) in cases {
            assert_eq!(staleness(at, now), want, "{at}");
        }
        // The same instants the store formats.
        for ms in [0, 951_782_400_000, 1_752_462_729_123] {
            assert_eq!(parse_ms(&time::format_ms(ms)), Some(ms));
        }
    }

    #[test]
    fn rows_have_a_meter_and_are_text() {
        let m = MemoryRow {
            id: 4,
            service: Some("<b>jellyfin</b>".into()),
            category: "timing".into(),
            observation: "<script>x</script>".into(),
            confidence: 0.8,
            active: false,
            created_at: "2025-07-10T00:00:00.000Z".into(),
            updated_at: "2025-07-11T12:00:00.000Z".into(),
            session_id: Some("s1".into()),
            tier: Some(1),
        };
        let now = parse_ms("2025-07-14T12:00:00.000Z").unwrap();
        let html = body(&[m], now).into_string();
        assert!(html.contains(r#"<tr data-memory-id="4""#));
        assert!(html.contains(r#"value="0.8""#), "{html}");
        assert!(html.contains("3 days ago"));
        assert!(html.contains("pruned"));
        assert!(html.contains("&lt;b&gt;jellyfin"));
        assert!(!html.contains("<script>x"));
        assert!(body(&[], now).into_string().contains("No memories yet."));
    }
}
