//! What the overview and the sessions list share about usage figures
//! (issue 39): how a cost is written (a partial one marked), a project's
//! short name, UTC days, and the price table.
//!
//! The sums themselves are core's (`agentshape_core::usage`, Note
//! \[Partial cost\] there): the pages read the stored calls and group them,
//! as `agentshape usage` does, so the dashboard and the CLI agree.

use std::collections::HashMap;

use agentshape_core::pricing::PriceTable;
use agentshape_core::usage::{self, Figures, Group, UsageCall};
use agentshape_store::time;
use maud::{Markup, html};

use super::chart::compact;

/// A day in milliseconds.
pub(crate) const DAY_MS: i64 = 86_400_000;

/// The UTC day (`2025-07-14`) of an instant.
pub(crate) fn day_of(ms: i64) -> String {
    let s = time::format_ms(ms);
    s.get(..10).unwrap_or(&s).to_owned()
}

/// The start (ms) of the UTC day holding `ms`.
pub(crate) fn day_start(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS) * DAY_MS
}

/// The start (ms) of a `YYYY-MM-DD` day, or `None` when it is not one.
pub(crate) fn parse_day(text: &str) -> Option<i64> {
    let t = text.trim();
    if t.len() != 10 {
        return None;
    }
    let ms = time::parse_ms(&format!("{t}T00:00:00.000Z"))?;
    // `2025-02-30` parses by rolling over in some parsers: insist on the same day back.
    (day_of(ms) == t).then_some(ms)
}

pub(crate) use agentshape_core::usage::short_project;

/// Dollars with two decimals, `*` after a partial sum.
pub(crate) fn cost_text(f: &Figures) -> String {
    format!("${:.2}{}", f.cost_usd, if f.partial { "*" } else { "" })
}

/// Why a cost is partial: the models the price table does not know.
pub(crate) fn partial_note(f: &Figures) -> String {
    format!(
        "partial: no price for {} (their tokens are counted, their cost is not)",
        f.unpriced_models.join(", ")
    )
}

/// A cost as shown in a cell: `$12.34`, or `$12.34*` whose `*` is an
/// `abbr.partial` naming the unpriced models (Note \[Partial cost\] in
/// core: a partial sum is never shown as the whole).
pub(crate) fn cost_cell(f: &Figures) -> Markup {
    html! {
        (format!("${:.2}", f.cost_usd))
        @if f.partial {
            abbr.partial title=(partial_note(f)) { "*" }
        }
    }
}

/// Tokens as a cell shows them: `1.2M`, the exact split in the title.
pub(crate) fn tokens_cell(f: &Figures) -> Markup {
    html! {
        span title={
            (f.input) " input, " (f.output) " output, " (f.cache_read) " cache read, "
            (f.cache_write) " cache write"
        } { (compact(i64::try_from(f.total_tokens).unwrap_or(i64::MAX))) }
    }
}

/// The price table: the built-in one and the user's file; when that file
/// is broken, the built-in one and the reason (shown on the page, not a
/// failed page).
pub(crate) fn prices() -> (PriceTable, Option<String>) {
    match agentshape_runtime::pricing::load(None) {
        Ok(t) => (t, None),
        Err(e) => (
            PriceTable::builtin(),
            Some(format!(
                "Your price file was not read ({e}); built-in prices used."
            )),
        ),
    }
}

/// Each stored session's own calls summed (a sub-agent's session is its
/// own row in a list, so nothing is folded into its parent here), and
/// the total of all of them.
pub(crate) fn by_session(
    calls: &[UsageCall],
    prices: &PriceTable,
) -> (HashMap<String, Group>, Group) {
    let (groups, total) = usage::group_by(calls, |c| Some(c.session_id.clone()), prices);
    (
        groups.into_iter().map(|g| (g.key.clone(), g)).collect(),
        total,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_projects_and_costs_read_well() {
        assert_eq!(
            parse_day("2025-07-14"),
            time::parse_ms("2025-07-14T00:00:00Z")
        );
        for bad in ["2025-7-14", "x", "2025-02-30", "2025-07-14T00"] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
        assert_eq!(
            day_of(parse_day("2025-07-14").unwrap() + DAY_MS - 1),
            "2025-07-14"
        );
        assert_eq!(short_project("/home/ana/wt/api-fix"), "wt/api-fix");
        assert_eq!(short_project("/srv"), "srv");
        assert_eq!(short_project(""), "");
        let mut f = Figures {
            cost_usd: 12.345,
            ..Figures::default()
        };
        assert_eq!(cost_text(&f), "$12.35");
        assert_eq!(cost_cell(&f).into_string(), "$12.35");
        f.partial = true;
        f.unpriced_models = vec!["<m>".into()];
        assert_eq!(cost_text(&f), "$12.35*");
        let html = cost_cell(&f).into_string();
        assert!(
            html.contains(r#"<abbr class="partial" title="partial: no price for &lt;m&gt;"#),
            "{html}"
        );
    }
}
