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

use agentshape_store::query::{DayTotals, KeyDay};
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

/// One day of a [`cost_chart`].
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChartDay {
    /// `YYYY-MM-DD`.
    pub(crate) day: String,
    /// Dollars (of the priced part, when `partial`).
    pub(crate) cost_usd: f64,
    /// Tokens (what the legend says they are).
    pub(crate) tokens: i64,
    /// Model calls (from usage) or sessions started (from the sessions).
    pub(crate) count: i64,
    /// Some of the day's calls have no price: `cost_usd` is a part.
    pub(crate) partial: bool,
}

impl From<&DayTotals> for ChartDay {
    fn from(d: &DayTotals) -> Self {
        ChartDay {
            day: d.day.clone(),
            cost_usd: d.cost_usd,
            tokens: d.input_tokens.saturating_add(d.output_tokens),
            count: d.sessions,
            partial: false,
        }
    }
}

/// What a [`cost_chart`]'s counts and tokens are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Units {
    /// One of `count`: `call` or `session`.
    pub(crate) count: &'static str,
    /// The legend of the token bars.
    pub(crate) tokens: &'static str,
    /// The empty state.
    pub(crate) empty: &'static str,
}

/// The chart of `days` (oldest first), or an empty state when no day has
/// anything.
pub(crate) fn cost_chart(days: &[ChartDay], units: Units) -> Markup {
    if days.iter().all(|d| d.count == 0) {
        return html! { p.empty { (units.empty) } };
    }
    let tokens = |d: &ChartDay| d.tokens;
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
                g.day data-day=(d.day) data-partial=[d.partial.then_some("true")] {
                    title {
                        (d.day) ": " (format!("${:.4}", d.cost_usd))
                        @if d.partial { "* (partial: some models have no price)" }
                        ", " (d.tokens) " tokens, "
                        (d.count) " " (units.count) @if d.count != 1 { "s" }
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
                text x=(c(LEFT + 144.0)) y=(c(H - 5.0)) { (units.tokens) " (right)" }
            }
        }
    }
}

/// What a [`series_chart`] stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// Dollars.
    Cost,
    /// Tokens in + out.
    Tokens,
}

impl Metric {
    fn of(self, d: &KeyDay) -> f64 {
        match self {
            Metric::Cost => d.cost_usd.max(0.0),
            Metric::Tokens => d.input_tokens.saturating_add(d.output_tokens).max(0) as f64,
        }
    }

    // Sums of token counts: whole numbers far below 2^53.
    #[allow(clippy::cast_possible_truncation)]
    fn label(self, v: f64) -> String {
        match self {
            Metric::Cost => format!("${v:.4}"),
            Metric::Tokens => format!("{} tokens", v as i64),
        }
    }

    #[allow(clippy::cast_possible_truncation)]
    fn axis(self, v: f64) -> String {
        match self {
            Metric::Cost => format!("${v:.2}"),
            Metric::Tokens => format!("{} tok", compact(v as i64)),
        }
    }
}

/// Series a [`series_chart`] draws on their own; the rest are one `other`.
pub(crate) const MAX_SERIES: usize = 6;

/// The longest key shown in a legend (its end: a project's folder name).
const KEY_CHARS: usize = 28;

/// A key as a legend shows it (`(none)` for a session without one).
fn key_label(key: &str) -> String {
    if key.is_empty() {
        return "(none)".to_owned();
    }
    let n = key.chars().count();
    if n <= KEY_CHARS {
        key.to_owned()
    } else {
        format!("…{}", key.chars().skip(n - KEY_CHARS).collect::<String>())
    }
}

/// The colour class of `other` (muted).
const OTHER: usize = MAX_SERIES;

/// Note \[A key keeps its colour\]: a chart's series used to be coloured
/// by their rank in that chart, so one agent was blue in the cost chart and
/// green in the tokens chart whenever the two ranked them differently. A
/// key's colour (class `c0`..`c5`) now depends on the key and on the set of
/// keys only: the three agents have their own, any other key starts at a
/// hash of its name, and a clash goes to the next free colour, deciding in
/// name order (not by size), so charts over the same keys agree.
fn colours<'a>(keys: &[&'a str]) -> std::collections::HashMap<&'a str, usize> {
    let fixed = |k: &str| match k {
        "claude-code" => Some(0),
        "codex" => Some(1),
        "gemini-cli" => Some(2),
        _ => None,
    };
    let mut sorted: Vec<&str> = keys.to_vec();
    sorted.sort_by_key(|k| (fixed(k).is_none(), *k));
    let mut used = [false; MAX_SERIES];
    let mut out = std::collections::HashMap::new();
    for k in sorted {
        // FNV-1a: stable across runs and builds (std's hasher is not).
        let hash = k.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        // The remainder is below MAX_SERIES: it fits.
        let start =
            fixed(k).unwrap_or_else(|| usize::try_from(hash % MAX_SERIES as u64).unwrap_or(0));
        let slot = (0..MAX_SERIES)
            .map(|i| (start + i) % MAX_SERIES)
            .find(|&i| !used[i])
            .unwrap_or(start);
        used[slot] = true;
        out.insert(k, slot);
    }
    out
}

/// Bars per day of `days` (the window, oldest first), stacked by key: one
/// `g.series` per agent or project (`data-key`, class `c<n>` for its
/// colour, Note \[A key keeps its colour\]), the [`MAX_SERIES`] largest over the window, the others summed
/// as `other`; each bar's `<title>` is its exact figure. An empty state
/// when nothing in the window has the metric.
pub(crate) fn series_chart(
    label: &str,
    days: &[String],
    rows: &[KeyDay],
    metric: Metric,
) -> Markup {
    use std::collections::BTreeMap;
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for r in rows.iter().filter(|r| days.contains(&r.day)) {
        *totals.entry(r.key.as_str()).or_default() += metric.of(r);
    }
    let mut keys: Vec<(&str, f64)> = totals.into_iter().filter(|(_, v)| *v > 0.0).collect();
    if keys.is_empty() {
        return html! { p.empty { "Nothing in this range." } };
    }
    keys.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let other = keys.len() > MAX_SERIES;
    keys.truncate(MAX_SERIES);
    let series: Vec<Option<&str>> = keys
        .iter()
        .map(|(k, _)| Some(*k))
        .chain(other.then_some(None))
        .collect();
    let colour = colours(&keys.iter().map(|(k, _)| *k).collect::<Vec<_>>());
    // value[s][d]: series s on day d.
    let value = |s: Option<&str>, day: &str| -> f64 {
        rows.iter()
            .filter(|r| r.day == day)
            .filter(|r| match s {
                Some(k) => r.key == k,
                None => !keys.iter().any(|(k, _)| *k == r.key),
            })
            .map(|r| metric.of(r))
            .sum()
    };
    let grid: Vec<Vec<f64>> = series
        .iter()
        .map(|s| days.iter().map(|d| value(*s, d)).collect())
        .collect();
    let max = (0..days.len())
        .map(|d| grid.iter().map(|g| g[d]).sum::<f64>())
        .fold(0.0, f64::max);
    let scale = if max > 0.0 { max } else { 1.0 };
    let right = 16.0;
    let bottom = 40.0 + 16.0 * series.len().div_ceil(3) as f64;
    let h = H - 40.0 + bottom;
    let plot_w = W - LEFT - right;
    let plot_h = H - TOP - 40.0;
    let slot = plot_w / days.len().max(1) as f64;
    let base = TOP + plot_h;
    let label_every = days.len().div_ceil(8).max(1);
    // Where each series' bar starts on each day (stacked bottom up).
    let mut floor = vec![0.0; days.len()];
    let mut bars: Vec<Vec<(f64, f64)>> = Vec::new();
    for g in &grid {
        bars.push(
            g.iter()
                .enumerate()
                .map(|(d, v)| {
                    let y0 = floor[d];
                    floor[d] += v;
                    (y0, *v)
                })
                .collect(),
        );
    }
    html! {
        svg.series-chart xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (W) " " (h) } role="img"
            aria-label=(label) {
            title { (label) }
            line.axis x1=(c(LEFT)) y1=(c(TOP)) x2=(c(LEFT)) y2=(c(base)) {}
            line.axis x1=(c(LEFT)) y1=(c(base)) x2=(c(W - right)) y2=(c(base)) {}
            text x=(c(LEFT - 6.0)) y=(c(TOP + 8.0)) text-anchor="end" { (metric.axis(max)) }
            text x=(c(LEFT - 6.0)) y=(c(base)) text-anchor="end" { "0" }
            @for (i, s) in series.iter().enumerate() {
                @let name = s.map_or_else(|| "other".to_owned(), key_label);
                g class={ "series c" (s.map_or(OTHER, |k| colour[k])) } data-key=(s.unwrap_or("")) data-other=[s.is_none().then_some("true")] {
                    title { (name) }
                    @for (d, (y0, v)) in bars[i].iter().enumerate() {
                        @if *v > 0.0 {
                            @let top = base - (y0 + v) / scale * plot_h;
                            @let hgt = v / scale * plot_h;
                            rect x=(c(LEFT + slot * d as f64 + slot * 0.15)) y=(c(top)) width=(c(slot * 0.7)) height=(c(hgt)) {
                                title { (days[d]) " · " (name) ": " (metric.label(*v)) }
                            }
                        }
                    }
                }
            }
            @for (d, day) in days.iter().enumerate() {
                @if (days.len() - 1 - d) % label_every == 0 {
                    text x=(c(LEFT + slot * d as f64 + slot / 2.0)) y=(c(base + 14.0)) text-anchor="middle" {
                        (day.get(5..).unwrap_or(day))
                    }
                }
            }
            g.legend {
                @for (i, s) in series.iter().enumerate() {
                    @let x = LEFT + 230.0 * (i % 3) as f64;
                    @let y = base + 30.0 + 16.0 * (i / 3) as f64;
                    rect class={ "c" (s.map_or(OTHER, |k| colour[k])) } x=(c(x)) y=(c(y - 9.0)) width="10" height="10" {}
                    text x=(c(x + 14.0)) y=(c(y)) { (s.map_or_else(|| "other".to_owned(), key_label)) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(day: &str, sessions: i64, cost: f64, input: i64, output: i64) -> ChartDay {
        ChartDay::from(&DayTotals {
            day: day.to_owned(),
            sessions,
            cost_usd: cost,
            input_tokens: input,
            output_tokens: output,
        })
    }

    const U: Units = Units {
        count: "session",
        tokens: "tokens in + out",
        empty: "No sessions in the last 30 days.",
    };

    fn cost_chart(days: &[ChartDay]) -> Markup {
        super::cost_chart(days, U)
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
        assert!(html.contains("<title>2025-07-14: $0.5000, 120 tokens, 2 sessions</title>"));
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

    fn key_day(day: &str, key: &str, cost: f64, tokens: i64) -> KeyDay {
        KeyDay {
            day: day.to_owned(),
            key: key.to_owned(),
            sessions: 1,
            cost_usd: cost,
            input_tokens: tokens,
            output_tokens: 0,
        }
    }

    #[test]
    fn one_series_per_key_stacked_with_hostile_keys_as_text() {
        let days: Vec<String> = ["2025-07-13", "2025-07-14"].map(String::from).to_vec();
        let hostile = "<script>alert(1)</script>";
        let rows = vec![
            key_day("2025-07-13", "codex", 1.0, 10),
            key_day("2025-07-14", "codex", 2.0, 20),
            key_day("2025-07-14", hostile, 1.0, 0),
            key_day("2025-07-01", "old", 9.0, 9),
        ];
        let html = series_chart("Cost by agent", &days, &rows, Metric::Cost).into_string();
        assert_eq!(html.matches("<g class=\"series ").count(), 2, "{html}");
        assert!(
            html.contains(r#"<g class="series c1" data-key="codex">"#),
            "{html}"
        );
        assert!(html.contains(r#"data-key="&lt;script&gt;alert(1)&lt;/script&gt;""#));
        assert!(!html.contains("<script>"));
        assert!(!html.contains("old"), "outside the window");
        // The tallest day (3 dollars) fills the plot: codex 2 below, 1 above.
        assert!(
            html.contains("<title>2025-07-14 · codex: $2.0000</title>"),
            "{html}"
        );
        assert!(html.contains("$3.00"));
        for tag in ["rect", "line"] {
            let open = html.matches(&format!("<{tag} ")).count();
            assert_eq!(html.matches(&format!("</{tag}>")).count(), open, "{tag}");
        }
        // Tokens: the hostile key has none, so one series.
        let html = series_chart("Tokens by agent", &days, &rows, Metric::Tokens).into_string();
        assert_eq!(html.matches("<g class=\"series ").count(), 1, "{html}");
        assert!(html.contains("20 tok"), "{html}");
        assert!(
            series_chart("x", &days, &[], Metric::Cost)
                .into_string()
                .contains("Nothing in this range.")
        );
    }

    #[test]
    fn past_the_largest_series_the_rest_is_other() {
        let days = vec!["2025-07-14".to_owned()];
        let rows: Vec<KeyDay> = (0..9)
            .map(|i| key_day("2025-07-14", &format!("/p/{i}"), f64::from(i + 1), 0))
            .collect();
        let html = series_chart("Cost by project", &days, &rows, Metric::Cost).into_string();
        assert_eq!(html.matches("<g class=\"series ").count(), MAX_SERIES + 1);
        assert!(html.contains(r#"data-key="" data-other="true""#), "{html}");
        // 1 + 2 + 3 dollars are the three smallest: other.
        assert!(
            html.contains("<title>2025-07-14 · other: $6.0000</title>"),
            "{html}"
        );
        assert!(!html.contains(r#"data-key="/p/0""#));
    }

    #[test]
    fn a_key_keeps_its_colour_whatever_its_rank() {
        let class_of = |html: &str, key: &str| -> String {
            let at = html.find(&format!("data-key=\"{key}\"")).unwrap();
            let open = html[..at].rfind("<g class=\"series ").unwrap();
            html[open + 17..at].trim().trim_end_matches('"').to_owned()
        };
        let days = vec!["2026-11-01".to_owned()];
        let cheap_codex = [
            key_day("2026-11-01", "claude-code", 1.0, 900),
            key_day("2026-11-01", "codex", 5.0, 10),
            key_day("2026-11-01", "/home/ana/api", 2.0, 20),
        ];
        let cost = series_chart("cost", &days, &cheap_codex, Metric::Cost).into_string();
        let tokens = series_chart("tokens", &days, &cheap_codex, Metric::Tokens).into_string();
        for key in ["claude-code", "codex", "/home/ana/api"] {
            assert_eq!(class_of(&cost, key), class_of(&tokens, key), "{key}");
        }
        assert_eq!(class_of(&cost, "claude-code"), "c0");
        assert_eq!(class_of(&cost, "codex"), "c1");
        let many: Vec<&str> = vec!["a", "b", "c", "d", "e", "f"];
        let got = colours(&many);
        let mut slots: Vec<usize> = got.values().copied().collect();
        slots.sort_unstable();
        assert_eq!(slots, [0, 1, 2, 3, 4, 5], "six keys, six colours");
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

/// One day of a [`rejection_chart`]: outputs checked and rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RejectionDay {
    /// `YYYY-MM-DD`.
    pub(crate) day: String,
    /// Sessions with a verdict.
    pub(crate) checked: i64,
    /// Of those, invalid or with nothing found.
    pub(crate) rejected: i64,
}

/// The share of checked outputs rejected per day of `days` (the window,
/// oldest first): one bar per day (class `bar reject`, height the rate on
/// a 0-100% axis), a day without a checked output has no bar; each day's
/// `<title>` has the exact counts. An empty state when nothing was checked.
pub(crate) fn rejection_chart(days: &[RejectionDay]) -> Markup {
    if days.iter().all(|d| d.checked == 0) {
        return html! { p.empty { "No validated output in the last 30 days." } };
    }
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / days.len() as f64;
    let label_every = days.len().div_ceil(8).max(1);
    let base = TOP + plot_h;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (W) " " (H) } role="img"
            aria-label="Rejection rate per day" {
            title { "Rejection rate per day" }
            line.axis x1=(c(LEFT)) y1=(c(TOP)) x2=(c(LEFT)) y2=(c(base)) {}
            line.axis x1=(c(LEFT)) y1=(c(base)) x2=(c(W - RIGHT)) y2=(c(base)) {}
            line.axis.half x1=(c(LEFT)) y1=(c(TOP + plot_h / 2.0)) x2=(c(W - RIGHT)) y2=(c(TOP + plot_h / 2.0)) {}
            text x=(c(LEFT - 6.0)) y=(c(TOP + 8.0)) text-anchor="end" { "100%" }
            text x=(c(LEFT - 6.0)) y=(c(TOP + plot_h / 2.0 + 4.0)) text-anchor="end" { "50%" }
            text x=(c(LEFT - 6.0)) y=(c(base)) text-anchor="end" { "0%" }
            @for (i, d) in days.iter().enumerate() {
                @let x = LEFT + slot * i as f64;
                @let rate = if d.checked > 0 { d.rejected.clamp(0, d.checked) as f64 / d.checked as f64 } else { 0.0 };
                @let h = rate * plot_h;
                g.day data-day=(d.day) data-checked=(d.checked) data-rejected=(d.rejected) {
                    title {
                        (d.day) ": "
                        @if d.checked == 0 { "no validated output" } @else {
                            (d.rejected) " of " (d.checked) " outputs rejected (" (format!("{:.1}%", rate * 100.0)) ")"
                        }
                    }
                    rect.hit x=(c(x)) y=(c(TOP)) width=(c(slot)) height=(c(plot_h)) {}
                    @if d.checked > 0 {
                        rect.bar.reject x=(c(x + slot * 0.15)) y=(c(base - h)) width=(c(slot * 0.7)) height=(c(h)) {}
                    }
                    @if (days.len() - 1 - i) % label_every == 0 {
                        text x=(c(x + slot / 2.0)) y=(c(base + 14.0)) text-anchor="middle" {
                            (d.day.get(5..).unwrap_or(&d.day))
                        }
                    }
                }
            }
        }
    }
}
