//! `agentshape ingest`: rebuild sessions in the store from forensic logs.

use agentshape_runtime::ingest::ingest;
use agentshape_store::StoreUrl;

use crate::args::IngestArgs;
use crate::exit::Exit;
use crate::input;
use crate::output::Out;

/// Run `ingest`.
///
/// # Errors
/// A missing log, an unknown profile or a store failure.
pub fn run(args: &IngestArgs) -> anyhow::Result<Exit> {
    let url = StoreUrl::parse(&args.store.location)?;
    input::check_exist(&args.logs)?;
    let mut store = url.open()?;
    let reports = ingest(&args.logs, &args.profile, &mut *store)?;
    let mut out = Out::new(args.output);
    let mut added = 0usize;
    for r in &reports {
        if out.json {
            out.json_line(r)?;
        } else if r.report.inserted {
            added += 1;
            out.line(&format!(
                "{}: session {} rebuilt ({} events, {} memories, {} services)",
                r.path.display(),
                r.session_id,
                r.report.events,
                r.report.memories_new + r.report.memories_reinforced,
                r.report.services
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
        out.line(&format!("{added} of {} sessions added", reports.len()))?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}
