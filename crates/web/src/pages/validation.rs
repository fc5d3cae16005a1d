//! The overview's validation analytics (issue 31 item 2): the share of
//! outputs rejected per day over the overview's 30 days (an SVG drawn on
//! the server, `chart::rejection_chart`) and "why outputs fail": the JSON
//! paths that failed most in that window, each linking to the sessions
//! that failed there and to one example. The numbers are the store's
//! `query::stats` (Note \[Outcomes of a run\]), the same as `agentshape
//! stats --by day`.

use agentshape_store::query::{OVERVIEW_DAYS, StatsGroup, overview_first_day};
use agentshape_store::time;
use maud::{Markup, html};

use super::chart::{RejectionDay, rejection_chart};
use super::sessions::{encode, path_param};

const DAY_MS: i64 = 86_400_000;

/// The window's days, oldest first, from the per-day groups (days without
/// sessions are zeros).
fn days(by_day: &[StatsGroup], now_ms: i64) -> Vec<RejectionDay> {
    let first = time::parse_ms(&format!("{}T00:00:00Z", overview_first_day(now_ms))).unwrap_or(0);
    (0..OVERVIEW_DAYS)
        .map(|k| {
            let day = time::format_ms(first + k * DAY_MS)[..10].to_owned();
            let g = by_day.iter().find(|g| g.key == day);
            RejectionDay {
                checked: g.map_or(0, StatsGroup::checked),
                rejected: g.map_or(0, StatsGroup::rejected),
                day,
            }
        })
        .collect()
}

/// The two cards, from the window's groups by day and its one overall group.
pub(crate) fn panel(by_day: &[StatsGroup], all: Option<&StatsGroup>, now_ms: i64) -> Markup {
    let empty = StatsGroup::default();
    let all = all.unwrap_or(&empty);
    html! {
        div.grid2 #validation {
            section.card.chart #rejection-chart data-checked=(all.checked()) data-rejected=(all.rejected()) {
                h2 {
                    "Rejected outputs per day"
                    span.muted {
                        " · last 30 days, " (all.rejected()) " of " (all.checked()) " rejected"
                        @if let Some(r) = all.rejection_rate() { " (" (format!("{:.1}%", r * 100.0)) ")" }
                        ", " (all.valid_after_retries) " valid after retries"
                    }
                }
                (rejection_chart(&days(by_day, now_ms)))
            }
            section.card {
                h2 { "Why outputs fail" span.muted { " · every rejection, hook retries included" } }
                @if all.failing_paths.is_empty() {
                    p #why-fail-empty .empty { "No output failed validation in the last 30 days." }
                } @else {
                    table #why-fail {
                        thead { tr { th { "Path" } th { "Error" } th.num { "Rejections" } th { "Example" } } }
                        tbody {
                            @for f in &all.failing_paths {
                                tr data-path=(f.path) data-kind=(f.kind) data-count=(f.count) {
                                    td.mono {
                                        a.path href={ "/sessions?failing_path=" (encode(&path_param(&f.path))) } {
                                            @if f.path.is_empty() { "(root)" } @else { (f.path) }
                                        }
                                    }
                                    td { (f.kind) }
                                    td.num { (f.count) }
                                    td.mono { a.example href={ "/sessions/" (encode(&f.example_session)) } { (f.example_session) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentshape_store::query::stats::FailingPath;

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    #[test]
    fn the_chart_has_a_bar_per_checked_day_and_the_table_links_paths_and_examples() {
        // 2025-07-31T12:00Z: the window is 2025-07-02 ..= 2025-07-31.
        let now = 1_753_963_200_000;
        let day = |key: &str, runs, invalid, none| StatsGroup {
            key: key.into(),
            runs,
            valid_first_try: runs - invalid - none,
            invalid,
            no_output: none,
            ..StatsGroup::default()
        };
        let by_day = [
            day("2025-07-01", 9, 9, 0), // before the window
            day("2025-07-05", 4, 1, 1),
            day("2025-07-31", 2, 0, 0),
        ];
        let path = |p: &str, kind: &str, count, example: &str| FailingPath {
            path: p.into(),
            kind: kind.into(),
            count,
            example_session: example.into(),
        };
        let all = StatsGroup {
            runs: 6,
            valid_first_try: 3,
            valid_after_retries: 1,
            invalid: 1,
            no_output: 1,
            failing_paths: vec![
                path("/files/0/path", "type", 3, "s/1"),
                path("", "required", 1, HOSTILE),
            ],
            ..StatsGroup::default()
        };
        let html = panel(&by_day, Some(&all), now).into_string();
        assert_eq!(html.matches("<g class=\"day\"").count(), 30, "{html}");
        assert!(!html.contains(r#"data-day="2025-07-01""#));
        assert!(html.contains(r#"data-day="2025-07-05" data-checked="4" data-rejected="2""#));
        assert!(html.contains("2025-07-05: 2 of 4 outputs rejected (50.0%)"));
        assert!(html.contains("2025-07-06: no validated output"));
        // Two checked days: two bars, the second at 0 height.
        assert_eq!(html.matches("class=\"bar reject\"").count(), 2);
        assert!(html.contains("2 of 6 rejected (33.3%)"), "{html}");
        assert!(html.contains(r#"href="/sessions?failing_path=%2Ffiles%2F0%2Fpath""#));
        assert!(
            html.contains(r#"href="/sessions?failing_path=%23""#),
            "the root as #"
        );
        assert!(html.contains(r#"href="/sessions/s%2F1""#));
        assert!(!html.contains("<img"), "{html}");
        let empty = panel(&[], None, now).into_string();
        assert!(empty.contains("No validated output in the last 30 days."));
        assert!(empty.contains("No output failed validation in the last 30 days."));
    }
}
