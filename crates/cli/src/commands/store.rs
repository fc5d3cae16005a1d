//! `agentshape store copy`: move a store to another backend (Note
//! \[Copying a store\] in the store crate).

use agentshape_store::{CopyReport, StoreUrl, copy};

use crate::args::{StoreAction, StoreArgs};
use crate::exit::Exit;
use crate::output::Out;

/// The report's rows, in table order: (name, copied, skipped).
fn tables(r: &CopyReport) -> [(&'static str, u64, u64); 10] {
    [
        ("sessions", r.sessions, r.sessions_skipped),
        ("events", r.events, 0),
        ("services_checked", r.services_checked, 0),
        ("escalations", r.escalations, 0),
        ("feed", r.feed, r.feed_orphans),
        ("session_tools", r.session_tools, 0),
        ("native_files", r.native_files, 0),
        ("hook_calls", r.hook_calls, 0),
        (
            "memories",
            r.memories,
            r.memories_skipped + r.memory_conflicts,
        ),
        ("alert_firings", r.alert_firings, r.alert_firings_skipped),
    ]
}

/// Run `store`.
///
/// # Errors
/// A bad location (64), a missing source (66), store failures.
pub fn run(args: &StoreArgs) -> anyhow::Result<Exit> {
    match &args.action {
        StoreAction::Copy { from, to, output } => {
            // Both parsed before either is opened: a typo costs no connection.
            let (from, to) = (StoreUrl::parse(from)?, StoreUrl::parse(to)?);
            if from == to {
                return Err(crate::exit::CliError::Usage(format!(
                    "--from and --to are the same store `{from}`"
                ))
                .into());
            }
            let src = from.open_copyable(false)?;
            let mut dst = to.open_copyable(true)?;
            let report = copy(&*src, &mut *dst)?;
            let mut out = Out::new(*output);
            if out.json {
                out.json_line(&serde_json::json!({
                    "from": from.to_string(),
                    "to": to.to_string(),
                    "copied": report,
                    "added": report.added(),
                }))?;
            } else {
                for (table, copied, skipped) in tables(&report) {
                    out.line(&format!(
                        "{table:<17} {copied:>8} copied {skipped:>8} skipped"
                    ))?;
                }
                if report.feed_orphans > 0 {
                    out.line(&format!(
                        "{} feed rows belong to no stored session and were left",
                        report.feed_orphans
                    ))?;
                }
                if report.memory_conflicts > 0 {
                    out.line(&format!(
                        "{} active memories were left: `{to}` has its own active memory with the same key",
                        report.memory_conflicts
                    ))?;
                }
                out.line(&format!(
                    "{} rows added from `{from}` to `{to}`",
                    report.added()
                ))?;
            }
            out.flush()?;
            Ok(Exit::Ok)
        }
    }
}
