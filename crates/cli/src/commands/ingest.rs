//! `agentshape ingest`: rebuild sessions in the store from forensic logs.

use agentshape_runtime::ingest::ingest;
use agentshape_store::StoreUrl;

use crate::args::IngestArgs;
use crate::exit::Exit;
use crate::input;
use crate::output::{Out, eprint};

/// Run `ingest`.
///
/// A log whose session id (from its `.meta.json`, or its file name) breaks
/// `run`'s id rule is skipped and named on stderr (with `--json`, its line
/// carries `skipped`), the others are ingested, and the exit is 65 (runtime's
/// Note \[Ingested ids\]).
///
/// # Errors
/// A missing log, an unknown profile or a store failure.
pub fn run(args: &IngestArgs) -> anyhow::Result<Exit> {
    let url = StoreUrl::parse(&args.store.location)?;
    input::check_exist(&args.logs)?;
    let mut store = url.open()?;
    crate::mask::use_store_key(store.mask_key());
    let reports = ingest(&args.logs, &args.profile, &mut *store)?;
    let mut out = Out::new(args.output);
    let mut added = 0usize;
    let mut skipped = 0usize;
    for r in &reports {
        let Some(report) = &r.report else {
            skipped += 1;
            let why = r.skipped.as_deref().unwrap_or_default();
            eprint(&format!("agentshape: {}: skipped: {why}", r.path.display()));
            if out.json {
                out.json_line(r)?;
            }
            continue;
        };
        if out.json {
            out.json_line(r)?;
        } else if report.inserted {
            added += 1;
            out.line(&format!(
                "{}: session {} rebuilt ({} events, {} memories, {} services)",
                r.path.display(),
                r.session_id,
                report.events,
                report.memories_new + report.memories_reinforced,
                report.services
            ))?;
        } else {
            out.line(&format!(
                "{}: session {} already stored",
                r.path.display(),
                r.session_id
            ))?;
        }
    }
    if !out.json {
        let also = if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        };
        out.line(&format!(
            "{added} of {} sessions added{also}",
            reports.len()
        ))?;
    }
    out.flush()?;
    Ok(if skipped > 0 { Exit::DataErr } else { Exit::Ok })
}
