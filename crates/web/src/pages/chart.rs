//! The overview's chart of cost and tokens per day, drawn here as inline
//! SVG: no script, no chart library, nothing for the CSP to allow (the
//! colours come from classes in `app.css`, never inline styles).
//!
//! Per day, two bars side by side: cost (class `bar`, left axis, dollars)
//! and tokens in + out (class `bar2`, right axis). Each day is a `<g>`
//! whose `<title>` is the tooltip with the exact figures.
//!
//! Every shape is written with a closing tag (`rect {}`, not maud's void
//! `rect;`): in SVG inside HTML, `<rect>` does not close itself, and the
//! shapes after an unclosed one become its children, which are not drawn.

use std::fmt::Write as _;

use agentshape_store::query::DayTotals;
use maud::{Markup, html};

const W: f64 = 760.0;
const H: f64 = 240.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 64.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 40.0;

/// `1234567` as `1.2M`, `12345` as `12.3k`.
pub(crate) fn compact(n: i64) -> String {
    let f = n as f64;
    match n.unsigned_abs() {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", f / 1e3),
        _ => format!("{:.1}M", f / 1e6),
    }
}

/// A coordinate with one decimal: short markup, stable in tests.
fn c(v: f64) -> String {
    let mut s = String::new();
    let _ = write!(s, "{v:.1}");
    s
}

/// The chart of `days` (oldest first), or an empty state when no day has
/// a session.
pub(crate) fn cost_chart(days: &[DayTotals]) -> Markup {
    if days.iter().all(|d| d.sessions == 0) {
        return html! { p.empty { "No sessions in the last 30 days." } };
    }
    let tokens = |d: &DayTotals| d.input_tokens.saturating_add(d.output_tokens);
    let max_cost = days.iter().map(|d| d.cost_usd).fold(0.0, f64::max);
    let max_tokens = days.iter().map(tokens).max().unwrap_or(0);
    let cost_scale = if max_cost > 0.0 { max_cost } else { 1.0 };
    let token_scale = if max_tokens > 0 {
        max_tokens as f64
    } else {
        1.0
    };
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / days.len() as f64;
    let label_every = days.len().div_ceil(8).max(1);
    let base = TOP + plot_h;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (W) " " (H) } role="img"
            aria-label="Cost and tokens per day" {
            title { "Cost and tokens per day" }
            line.axis x1=(c(LEFT)) y1=(c(TOP)) x2=(c(LEFT)) y2=(c(base)) {}
            line.axis x1=(c(LEFT)) y1=(c(base)) x2=(c(W - RIGHT)) y2=(c(base)) {}
            line.axis x1=(c(W - RIGHT)) y1=(c(TOP)) x2=(c(W - RIGHT)) y2=(c(base)) {}
            text.y-cost x=(c(LEFT - 6.0)) y=(c(TOP + 8.0)) text-anchor="end" { (format!("${max_cost:.2}")) }
            text x=(c(LEFT - 6.0)) y=(c(base)) text-anchor="end" { "$0" }
            text.y-tokens x=(c(W - RIGHT + 6.0)) y=(c(TOP + 8.0)) { (compact(max_tokens)) " tok" }
            text x=(c(W - RIGHT + 6.0)) y=(c(base)) { "0" }
            @for (i, d) in days.iter().enumerate() {
                @let x = LEFT + slot * i as f64;
                @let ch = d.cost_usd.max(0.0) / cost_scale * plot_h;
                @let th = tokens(d).max(0) as f64 / token_scale * plot_h;
                g.day data-day=(d.day) {
                    title {
                        (d.day) ": " (format!("${:.4}", d.cost_usd)) ", "
                        (d.input_tokens) " input + " (d.output_tokens) " output tokens, "
                        (d.sessions) @if d.sessions == 1 { " session" } @else { " sessions" }
                    }
                    rect.hit x=(c(x)) y=(c(TOP)) width=(c(slot)) height=(c(plot_h)) {}
                    rect.bar x=(c(x + slot * 0.1)) y=(c(base - ch)) width=(c(slot * 0.4)) height=(c(ch)) {}
                    rect.bar2 x=(c(x + slot * 0.5)) y=(c(base - th)) width=(c(slot * 0.4)) height=(c(th)) {}
                    // Counted back from the last day, so today always has its label.
                    @if (days.len() - 1 - i) % label_every == 0 {
                        text x=(c(x + slot / 2.0)) y=(c(base + 14.0)) text-anchor="middle" {
                            (d.day.get(5..).unwrap_or(&d.day))
                        }
                    }
                }
            }
            g.legend {
                rect.bar x=(c(LEFT)) y=(c(H - 14.0)) width="10" height="10" {}
                text x=(c(LEFT + 14.0)) y=(c(H - 5.0)) { "cost (USD, left)" }
                rect.bar2 x=(c(LEFT + 130.0)) y=(c(H - 14.0)) width="10" height="10" {}
                text x=(c(LEFT + 144.0)) y=(c(H - 5.0)) { "tokens in + out (right)" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(day: &str, sessions: i64, cost: f64, input: i64, output: i64) -> DayTotals {
        DayTotals {
            day: day.to_owned(),
            sessions,
            cost_usd: cost,
            input_tokens: input,
            output_tokens: output,
        }
    }

    #[test]
    fn no_data_is_an_empty_state_not_an_svg() {
        for days in [vec![], vec![day("2025-07-01", 0, 0.0, 0, 0)]] {
            let html = cost_chart(&days).into_string();
            assert!(!html.contains("<svg"), "{html}");
            assert!(html.contains("No sessions"));
        }
    }

    #[test]
    fn one_day_fills_the_plot() {
        let html = cost_chart(&[day("2025-07-14", 2, 0.5, 100, 20)]).into_string();
        assert!(html.starts_with("<svg"));
        assert_eq!(html.matches("<g class=\"day\"").count(), 1);
        // Inside SVG an HTML parser closes nothing by itself: every shape
        // is closed, or the ones after it become its invisible children.
        for tag in ["rect", "line"] {
            let open = html.matches(&format!("<{tag} ")).count();
            assert!(open > 0);
            assert_eq!(html.matches(&format!("</{tag}>")).count(), open, "{tag}");
        }
        // The tallest bar is the whole plot height (240 - 14 - 40).
        assert!(
            html.contains(r#"class="bar" x="123.6" y="14.0" width="254.4" height="186.0""#),
            "{html}"
        );
        assert!(html.contains(
            "<title>2025-07-14: $0.5000, 100 input + 20 output tokens, 2 sessions</title>"
        ));
        assert!(html.contains("$0.50"));
        assert!(html.contains("120 tok"));
        assert!(html.contains(">07-14<"));
    }

    #[test]
    fn thirty_days_have_thirty_groups_and_a_few_labels() {
        let days: Vec<_> = (1..=30)
            .map(|d| {
                day(
                    &format!("2025-07-{d:02}"),
                    1,
                    f64::from(d) / 100.0,
                    i64::from(d) * 1000,
                    0,
                )
            })
            .collect();
        let html = cost_chart(&days).into_string();
        assert_eq!(html.matches("<g class=\"day\"").count(), 30);
        assert_eq!(html.matches("<title>").count(), 31);
        let labels = html.matches("text-anchor=\"middle\"").count();
        assert!((5..=9).contains(&labels), "{labels}");
        assert!(html.contains("30.0k tok"));
        assert!(html.contains("$0.30"));
        assert!(html.contains("1 session</title>"));
    }

    #[test]
    fn text_from_the_store_is_escaped() {
        let html = cost_chart(&[day("<script>x", 1, 0.1, 1, 1)]).into_string();
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;x"));
        assert!(html.contains(r#"data-day="&lt;script&gt;x""#));
    }

    #[test]
    fn compact_numbers() {
        for (n, want) in [
            (0, "0"),
            (999, "999"),
            (12_345, "12.3k"),
            (1_234_567, "1.2M"),
        ] {
            assert_eq!(compact(n), want);
        }
    }
}
