//! `agentshape usage`: what the agents used and what it cost, by day, week,
//! month, session or 5-hour block (issue 39), from the store's model calls
//! (`usage_calls`), priced with the built-in prices and the user's file.
//!
//! With no store yet, or `--files`, the standard folders (or the PATHs
//! given) are read into the store first, incrementally, so the report
//! works on a fresh machine with nothing else: files imported before are
//! brought up to date as `import` would, the others go through the
//! usage-only pass (their sessions and model calls, at decoding speed;
//! `import` adds their transcripts later), and a file that has not changed
//! costs one `stat`.
//!
//! Note \[Days in a time zone\]: a call belongs to the day (week, month) of
//! its own time in `--timezone` (UTC by default), never the session's
//! start: a session that runs past midnight is split. `--since` and
//! `--until` are days (or times) in that zone too, `--until` inclusive.

use agentshape_core::pricing::PriceTable;
use agentshape_core::usage::{self, Figures, Group, ModelFigures, UsageCall, short_project};
use agentshape_runtime::native::discover;
use agentshape_runtime::native::import::tally_all;
use agentshape_store::query::{self, UsageFilter};
use agentshape_store::{PgStore, SqliteStore, StoreUrl, time};
use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde_json::{Value, json};

use crate::args::{UsageArgs, UsageReport};
use crate::exit::{CliError, Exit};
use crate::output::{Out, Style, clean, eprint};

/// Run `usage`.
///
/// # Errors
/// A bad time zone, date or store location (64), a missing store or PATH
/// (66), a store failure.
pub fn run(args: &UsageArgs) -> anyhow::Result<Exit> {
    let tz = zone(args.timezone.as_deref())?;
    let since_ms = args
        .since
        .as_deref()
        .map(|s| bound(s, &tz, false))
        .transpose()?;
    let until_ms = args
        .until
        .as_deref()
        .map(|s| bound(s, &tz, true))
        .transpose()?;
    let url = StoreUrl::parse(&args.store.location)?;
    let missing = matches!(&url, StoreUrl::Sqlite(p) if !p.exists());
    if args.files || !args.paths.is_empty() || missing {
        import_first(args, &url)?;
    }
    let filter = UsageFilter {
        since_ms,
        until_ms,
        agent: args.agent.clone(),
        project: args.project.clone(),
        model: args.model.clone(),
        sessions: Vec::new(),
    };
    let calls = match &url {
        StoreUrl::Sqlite(p) => query::usage_calls(&SqliteStore::open_read_only(p)?, &filter)?,
        StoreUrl::Postgres(u) => query::usage_calls(&PgStore::open_read_only(u)?, &filter)?,
    };
    let prices = crate::prices::load_prices()?;
    let report = Report::make(args, &calls, &prices, &tz);
    let mut out = Out::new(args.output);
    if out.json {
        out.json_line(&report.json(args, &prices, &tz))?;
    } else {
        report.print(&mut out, args, &tz)?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// Read the standard folders (or the PATHs) into the store first, quietly
/// but for a one-line tally on stderr: a file imported before is brought up
/// to date as `import` would; any other is read by the usage-only pass
/// (runtime's Note \[Usage pass\]: its session and model calls, not its
/// transcript, at decoding speed).
fn import_first(args: &UsageArgs, url: &StoreUrl) -> anyhow::Result<()> {
    let agent = args.agent.as_deref().map(native_agent).transpose()?;
    let plan = super::import::Plan::new(&args.paths, agent, None, None)?;
    let mut store = url.open()?;
    crate::mask::use_store_key(store.mask_key());
    let mut importer = agentshape_runtime::native::import::Importer::new(&*store, plan.opts)?;
    let files = discover::files(&plan.roots, None);
    let reports = tally_all(&mut importer, &mut *store, &files, &mut |_| {})?;
    let changed = reports
        .iter()
        .filter(|r| r.error.is_none() && r.skipped.is_none() && r.lines_added > 0)
        .count();
    if !args.output.quiet {
        eprint(&format!(
            "agentshape: {} session files read, {changed} new or grown",
            files.len()
        ));
    }
    Ok(())
}

/// The `import --agent` value of a `--agent` name: the names `import`
/// takes (its value enum, aliases included).
fn native_agent(name: &str) -> anyhow::Result<crate::args::NativeAgent> {
    <crate::args::NativeAgent as clap::ValueEnum>::from_str(name, false).map_err(|_| {
        CliError::Usage(format!(
            "--agent `{}`: expected claude (claude-code), codex or gemini (gemini-cli)",
            clean(name)
        ))
        .into()
    })
}

/// The time zone of `--timezone` (UTC by default; `local` is the system's).
fn zone(name: Option<&str>) -> anyhow::Result<TimeZone> {
    match name {
        None | Some("UTC" | "utc" | "Z") => Ok(TimeZone::UTC),
        Some("local") => Ok(TimeZone::system()),
        Some(n) => TimeZone::get(n).map_err(|e| {
            CliError::Usage(format!(
                "--timezone `{}`: not a time zone this machine knows ({e}); \
                 use an IANA name such as Europe/Paris, UTC or local",
                clean(n)
            ))
            .into()
        }),
    }
}

/// `--since`/`--until`: a day (`2026-08-17`, in the zone; `--until` takes
/// its end), an RFC 3339 time, or an age (`7d`, since only).
fn bound(text: &str, tz: &TimeZone, until: bool) -> anyhow::Result<i64> {
    let t = text.trim();
    let bad = || {
        CliError::Usage(format!(
            "{} `{}`: expected a day (2026-08-17), an RFC 3339 time or an age (7d)",
            if until { "--until" } else { "--since" },
            clean(t)
        ))
    };
    if !until && let Some(ms) = time::parse_duration_ms(t) {
        return Ok(time::now_ms().saturating_sub(ms));
    }
    if let Ok(day) = t.parse::<Date>() {
        let day = if until {
            day.tomorrow().map_err(|_| bad())?
        } else {
            day
        };
        let z = day.to_zoned(tz.clone()).map_err(|_| bad())?;
        return Ok(z.timestamp().as_millisecond());
    }
    let ms = time::parse_ms(t).ok_or_else(bad)?;
    Ok(if until { ms.saturating_add(1) } else { ms })
}

/// A call's time in the zone.
fn local(ms: i64, tz: &TimeZone) -> Zoned {
    Timestamp::from_millisecond(ms)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_zoned(tz.clone())
}

/// The day, week (its first day) or month a call falls in.
fn period_key(ms: i64, tz: &TimeZone, report: UsageReport, week_starts: Weekday) -> String {
    let day = local(ms, tz).date();
    match report {
        UsageReport::Weekly => {
            let back = i64::from(day.weekday().since(week_starts));
            day.checked_sub(jiff::Span::new().days(back))
                .unwrap_or(day)
                .to_string()
        }
        UsageReport::Monthly => format!("{:04}-{:02}", day.year(), day.month()),
        _ => day.to_string(),
    }
}

/// A time as people read it in the zone: `2026-08-17 13:36`.
fn shown_time(ms: i64, tz: &TimeZone) -> String {
    local(ms, tz).strftime("%Y-%m-%d %H:%M").to_string()
}

/// The RFC 3339 form of a time in the zone (JSON).
fn iso(ms: i64, tz: &TimeZone) -> String {
    local(ms, tz).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// One line of the report, before printing.
struct Row {
    /// The first column(s): the day, week, month; a session's id, agent,
    /// project and last call; a block's start, end and status.
    head: Vec<String>,
    models: Vec<String>,
    figures: Figures,
    breakdown: Vec<ModelFigures>,
    json: Value,
}

/// A whole report.
struct Report {
    kind: UsageReport,
    heads: Vec<&'static str>,
    rows: Vec<Row>,
    total: Group,
}

impl Report {
    fn make(args: &UsageArgs, calls: &[UsageCall], prices: &PriceTable, tz: &TimeZone) -> Report {
        let week = if args.start_of_week_sunday {
            Weekday::Sunday
        } else {
            Weekday::Monday
        };
        match args.report {
            UsageReport::Daily | UsageReport::Weekly | UsageReport::Monthly => {
                let kind = args.report;
                let (groups, total) =
                    usage::group_by(calls, |c| Some(period_key(c.at_ms, tz, kind, week)), prices);
                let name = match kind {
                    UsageReport::Weekly => "week",
                    UsageReport::Monthly => "month",
                    _ => "date",
                };
                let rows = groups
                    .into_iter()
                    .map(|g| Row {
                        head: vec![g.key.clone()],
                        json: json!({ name: g.key }),
                        models: g.models,
                        figures: g.figures,
                        breakdown: g.breakdown,
                    })
                    .collect();
                Report {
                    kind,
                    heads: vec![name],
                    rows,
                    total,
                }
            }
            UsageReport::Session => {
                let (sessions, total) = usage::sessions(calls, prices);
                let rows = sessions
                    .into_iter()
                    .map(|s| {
                        let project = s.project.as_deref().map(short_project).unwrap_or_default();
                        Row {
                            head: vec![
                                s.session_id.clone(),
                                s.agent.clone(),
                                project,
                                shown_time(s.last_ms, tz),
                            ],
                            json: json!({
                                "session_id": s.session_id,
                                "agent": s.agent,
                                "project": s.project,
                                "first_activity": iso(s.first_ms, tz),
                                "last_activity": iso(s.last_ms, tz),
                                "own": s.own,
                                "subagents": s.subagents,
                            }),
                            models: s.models,
                            figures: s.figures,
                            breakdown: s.breakdown,
                        }
                    })
                    .collect();
                Report {
                    kind: UsageReport::Session,
                    heads: vec!["session_id", "agent", "project", "last_activity"],
                    rows,
                    total,
                }
            }
            UsageReport::Blocks => {
                let (blocks, total) = usage::blocks(calls, prices, time::now_ms());
                let rows = blocks
                    .into_iter()
                    .map(|b| {
                        let status = if b.active { "active" } else { "ended" };
                        Row {
                            head: vec![
                                shown_time(b.start_ms, tz),
                                shown_time(b.end_ms, tz),
                                status.to_owned(),
                            ],
                            json: json!({
                                "start": iso(b.start_ms, tz),
                                "end": iso(b.end_ms, tz),
                                "last_activity": iso(b.last_ms, tz),
                                "active": b.active,
                            }),
                            models: b.models,
                            figures: b.figures,
                            breakdown: b.breakdown,
                        }
                    })
                    .collect();
                Report {
                    kind: UsageReport::Blocks,
                    heads: vec!["start", "end", "status"],
                    rows,
                    total,
                }
            }
        }
    }

    fn json(&self, args: &UsageArgs, prices: &PriceTable, tz: &TimeZone) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut v = r.json.clone();
                merge(&mut v, json!({ "models": r.models }));
                merge(&mut v, serde_json::to_value(&r.figures).unwrap_or_default());
                if args.breakdown {
                    merge(&mut v, json!({ "breakdown": r.breakdown }));
                }
                v
            })
            .collect();
        let mut total = serde_json::to_value(&self.total.figures).unwrap_or_default();
        merge(&mut total, json!({ "models": self.total.models }));
        if args.breakdown {
            merge(&mut total, json!({ "breakdown": self.total.breakdown }));
        }
        json!({
            "report": report_name(self.kind),
            "timezone": tz.iana_name().unwrap_or("UTC"),
            "rows": rows,
            "totals": total,
            "prices": { "source": prices.source, "updated": prices.updated },
        })
    }

    fn print(&self, out: &mut Out, args: &UsageArgs, tz: &TimeZone) -> anyhow::Result<()> {
        let title = format!(
            "Usage {} ({})",
            report_name(self.kind),
            tz.iana_name().unwrap_or("UTC")
        );
        out.line(&out.paint(Style::Bold, &title))?;
        if self.rows.is_empty() {
            out.line("No model calls in the store for these filters (import sessions with `agentshape import`, or run `agentshape usage --files`).")?;
            return Ok(());
        }
        let mut heads: Vec<String> = self.heads.iter().map(|h| (*h).to_owned()).collect();
        heads.extend(
            [
                "models",
                "input",
                "output",
                "cache_read",
                "cache_write",
                "total_tokens",
                "cost_usd",
            ]
            .map(str::to_owned),
        );
        let mut table: Vec<Vec<String>> = vec![heads];
        let blank = vec![String::new(); self.heads.len()];
        for r in &self.rows {
            let mut cells: Vec<String> = r.head.iter().map(|h| clean(h).into_owned()).collect();
            cells.push(clean(&r.models.join(", ")).into_owned());
            cells.extend(figure_cells(&r.figures));
            table.push(cells);
            if args.breakdown && r.breakdown.len() > 1 {
                for m in &r.breakdown {
                    let mut cells = blank.clone();
                    cells.push(format!("└ {}", clean(&m.model)));
                    cells.extend(figure_cells(&m.figures));
                    table.push(cells);
                }
            }
        }
        let mut total = vec![String::new(); self.heads.len()];
        "total".clone_into(&mut total[0]);
        total.push(String::new());
        total.extend(figure_cells(&self.total.figures));
        table.push(total);
        for line in align(&table, self.heads.len() + 1) {
            out.line(&line)?;
        }
        let f = &self.total.figures;
        if f.partial {
            out.line(&format!(
                "* partial: no price for {}; their tokens are counted, their cost is not",
                clean(&f.unpriced_models.join(", "))
            ))?;
        }
        Ok(())
    }
}

/// The figures' columns: input, output, cache read, cache write, total, cost.
fn figure_cells(f: &Figures) -> Vec<String> {
    let cost = format!(
        "${}{}",
        thousands_f(f.cost_usd),
        if f.partial { "*" } else { "" }
    );
    vec![
        thousands(f.input),
        thousands(f.output),
        thousands(f.cache_read),
        thousands(f.cache_write),
        thousands(f.total_tokens),
        cost,
    ]
}

/// Columns padded to their widest cell: text left, numbers (after `left`
/// columns) right.
fn align(table: &[Vec<String>], left: usize) -> Vec<String> {
    let cols = table.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            table
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    table
        .iter()
        .map(|r| {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                let pad = width[i].saturating_sub(c.chars().count());
                if i > 0 {
                    line.push_str("  ");
                }
                if i >= left {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    line.push_str(&" ".repeat(pad));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dollars to the cent with thousands separators.
fn thousands_f(x: f64) -> String {
    let cents = (x * 100.0).round();
    // A cost is never negative or beyond u64 cents; clamp rather than wrap.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let cents = if cents.is_finite() && cents > 0.0 {
        cents as u64
    } else {
        0
    };
    format!("{}.{:02}", thousands(cents / 100), cents % 100)
}

fn report_name(kind: UsageReport) -> &'static str {
    match kind {
        UsageReport::Daily => "daily",
        UsageReport::Weekly => "weekly",
        UsageReport::Monthly => "monthly",
        UsageReport::Session => "session",
        UsageReport::Blocks => "blocks",
    }
}

/// Add `more`'s members to `v` (both objects).
fn merge(v: &mut Value, more: Value) {
    if let (Some(a), Value::Object(b)) = (v.as_object_mut(), more) {
        a.extend(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(58_190_301), "58,190,301");
        assert_eq!(thousands_f(88.542_419), "88.54");
        assert_eq!(thousands_f(1234.005), "1,234.01");
        assert_eq!(thousands_f(-1.0), "0.00");
        assert_eq!(thousands_f(f64::NAN), "0.00");
    }

    #[test]
    fn weeks_months_and_days_in_a_zone() {
        let utc = TimeZone::UTC;
        // 2026-08-17 is a Monday; 23:30 UTC is the 18th in Tokyo.
        let ms = bound("2026-08-17T23:30:00Z", &utc, false).expect("time");
        assert_eq!(
            period_key(ms, &utc, UsageReport::Daily, Weekday::Monday),
            "2026-08-17"
        );
        let tokyo = TimeZone::get("Asia/Tokyo").expect("tz");
        assert_eq!(
            period_key(ms, &tokyo, UsageReport::Daily, Weekday::Monday),
            "2026-08-18"
        );
        assert_eq!(
            period_key(ms, &utc, UsageReport::Weekly, Weekday::Monday),
            "2026-08-17"
        );
        assert_eq!(
            period_key(ms, &utc, UsageReport::Weekly, Weekday::Sunday),
            "2026-08-16"
        );
        assert_eq!(
            period_key(ms, &utc, UsageReport::Monthly, Weekday::Monday),
            "2026-08"
        );
        // --until is inclusive of its day.
        let end = bound("2026-08-17", &utc, true).expect("day");
        assert_eq!(time::format_ms(end), "2026-08-18T00:00:00.000Z");
        let start = bound("2026-08-17", &tokyo, false).expect("day");
        assert_eq!(time::format_ms(start), "2026-08-16T15:00:00.000Z");
        assert!(bound("yesterday", &utc, false).is_err());
        assert!(zone(Some("Mars/Olympus")).is_err());
    }
}
