//! `agentshape stats`: validation analytics over the store (issue 31):
//! how often outputs are rejected, why, and whether retries help.
//!
//! It only reads (the store is opened read-only, never created); the
//! numbers are the store's `query::stats` (Note \[Outcomes of a run\]), the
//! same on SQLite and Postgres.

use agentshape_store::query::{self, StatsBy, StatsGroup};
use agentshape_store::{PgStore, SqliteStore, StoreUrl, time};
use serde_json::json;

use crate::args::{StatsArgs, StatsByArg};
use crate::exit::Exit;
use crate::output::{Out, Style};

/// Failing paths shown per group in the table (`--json` has them all).
const SHOWN_PATHS: usize = 5;

/// Run `stats`.
///
/// # Errors
/// A bad store location (64), a missing store (66) or a store failure.
pub fn run(args: &StatsArgs) -> anyhow::Result<Exit> {
    let by = match args.by {
        None => StatsBy::All,
        Some(StatsByArg::Profile) => StatsBy::Profile,
        Some(StatsByArg::Schema) => StatsBy::Schema,
        Some(StatsByArg::Agent) => StatsBy::Agent,
        Some(StatsByArg::Model) => StatsBy::Model,
        Some(StatsByArg::Day) => StatsBy::Day,
    };
    let since = args.since.map(time::format_ms);
    let groups = match StoreUrl::parse(&args.store.location)? {
        StoreUrl::Sqlite(p) => {
            query::stats(&SqliteStore::open_read_only(&p)?, by, since.as_deref())?
        }
        StoreUrl::Postgres(u) => query::stats(&PgStore::open_read_only(&u)?, by, since.as_deref())?,
    };
    let mut out = Out::new(args.output);
    if out.json {
        let groups: Vec<_> = groups
            .iter()
            .map(|g| {
                let mut v = serde_json::to_value(g).unwrap_or_default();
                v["checked"] = json!(g.checked());
                v["rejected"] = json!(g.rejected());
                v["rejection_rate"] = json!(g.rejection_rate());
                v
            })
            .collect();
        out.json_line(&json!({"by": by, "since": since, "groups": groups}))?;
        out.flush()?;
        return Ok(Exit::Ok);
    }
    let window = since
        .as_deref()
        .map_or_else(String::new, |s| format!(" since {s}"));
    if groups.is_empty() {
        out.line(&format!("No sessions in the store{window}."))?;
        out.flush()?;
        return Ok(Exit::Ok);
    }
    let title = match args.by {
        None => format!("Validation{window}"),
        Some(b) => format!("Validation by {}{window}", by_name(b)),
    };
    out.line(&out.paint(Style::Bold, &title))?;
    for row in table(&groups) {
        out.line(&row)?;
    }
    for g in &groups {
        details(&mut out, g, groups.len())?;
    }
    out.line("contradictions: not stored by any command (0); `agentshape check --contradictions` reports them")?;
    out.flush()?;
    Ok(Exit::Ok)
}

fn by_name(b: StatsByArg) -> &'static str {
    match b {
        StatsByArg::Profile => "profile",
        StatsByArg::Schema => "schema",
        StatsByArg::Agent => "agent",
        StatsByArg::Model => "model",
        StatsByArg::Day => "day",
    }
}

/// The group's name as shown (`-` for none recorded, `all` for one group).
fn shown_key(g: &StatsGroup, groups: usize) -> String {
    match g.key.as_str() {
        "" if groups == 1 => "all".to_owned(),
        "" => "-".to_owned(),
        k => crate::output::cell(k).into_owned(),
    }
}

/// The counts, one row per group, columns aligned.
fn table(groups: &[StatsGroup]) -> Vec<String> {
    let head = [
        "",
        "runs",
        "valid 1st",
        "after retry",
        "retries",
        "invalid",
        "no output",
        "unchecked",
        "rejected",
        "repaired",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|h| (*h).to_owned()).collect()];
    for g in groups {
        let rate = g.rejection_rate().map_or_else(
            || "-".to_owned(),
            |r| format!("{} ({:.1}%)", g.rejected(), r * 100.0),
        );
        rows.push(vec![
            shown_key(g, groups.len()),
            g.runs.to_string(),
            g.valid_first_try.to_string(),
            g.valid_after_retries.to_string(),
            g.retries.to_string(),
            g.invalid.to_string(),
            g.no_output.to_string(),
            g.unchecked.to_string(),
            rate,
            g.repaired.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(c, cell)| {
                    if c == 0 {
                        format!("{cell:<w$}", w = widths[c])
                    } else {
                        format!("{cell:>w$}", w = widths[c])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// `p50/p95` of one measure, `-` when there is none.
fn pair(q: query::stats::Quantiles, f: fn(f64) -> String) -> String {
    match (q.p50, q.p95) {
        (Some(a), Some(b)) => format!("{}/{}", f(a), f(b)),
        _ => "-".to_owned(),
    }
}

/// Methods, failing paths, invariant rules and percentiles of one group.
fn details(out: &mut Out, g: &StatsGroup, groups: usize) -> anyhow::Result<()> {
    out.line(&out.paint(Style::Bold, &shown_key(g, groups)))?;
    if !g.methods.is_empty() {
        let m: Vec<String> = g
            .methods
            .iter()
            .map(|m| {
                format!(
                    "{} {}",
                    crate::output::cell(if m.method.is_empty() { "-" } else { &m.method }),
                    m.count
                )
            })
            .collect();
        out.line(&format!("  methods: {}", m.join(", ")))?;
    }
    let p = &g.per_valid;
    out.line(&format!(
        "  per valid output (p50/p95): tokens {}, cost {}, duration {}",
        pair(p.tokens, |v| format!("{v:.0}")),
        pair(p.cost_usd, |v| format!("${v:.4}")),
        pair(p.duration_ms, |v| format!("{:.1}s", v / 1000.0)),
    ))?;
    for f in g.failing_paths.iter().take(SHOWN_PATHS) {
        let path = if f.path.is_empty() { "(root)" } else { &f.path };
        out.line(&format!(
            "  fails at {} ({}): {}×, e.g. session {}",
            crate::output::cell(path),
            crate::output::cell(&f.kind),
            f.count,
            crate::output::cell(&f.example_session)
        ))?;
    }
    for r in &g.invariants {
        out.line(&format!(
            "  invariant {}: {}×",
            crate::output::cell(&r.rule),
            r.count
        ))?;
    }
    Ok(())
}
