//! `agentshape memories`: list or prune the operational memories.

use agentshape_store::{StoreUrl, time};

use crate::args::{MemoriesAction, MemoriesArgs};
use crate::exit::{CliError, Exit};
use crate::output::Out;

/// Run `memories`.
///
/// # Errors
/// A bad age or a store failure.
pub fn run(args: &MemoriesArgs) -> anyhow::Result<Exit> {
    match &args.action {
        MemoriesAction::List { store, output } => {
            // Only reads: never creates or migrates the file.
            let store = StoreUrl::parse(&store.location)?.open_read_only()?;
            crate::mask::use_store_key(store.mask_key());
            let mut out = Out::new(*output);
            for m in store.overview()?.memories {
                if out.json {
                    out.json_line(&m)?;
                } else {
                    let key = match &m.service {
                        Some(s) => format!("{s}:{}", m.category),
                        None => m.category.clone(),
                    };
                    out.line(&format!("{:.2}  {key}  {}", m.confidence, m.observation))?;
                }
            }
            out.flush()?;
        }
        MemoriesAction::Prune {
            store,
            older_than,
            output,
        } => {
            let age = time::parse_duration_ms(older_than).ok_or_else(|| {
                CliError::Usage(format!(
                    "--older-than `{older_than}`: expected a number and a unit (ms, s, m, h, d, w), like 30d"
                ))
            })?;
            let url = StoreUrl::parse(&store.location)?;
            let before = time::format_ms(time::now_ms().saturating_sub(age));
            let mut store = url.open()?;
            let n = store.prune_memories(&before)?;
            let mut out = Out::new(*output);
            if out.json {
                out.json_line(&serde_json::json!({"pruned": n, "before": before}))?;
            } else {
                out.line(&format!(
                    "{n} memories not reinforced since {before} deactivated"
                ))?;
            }
            out.flush()?;
        }
    }
    Ok(Exit::Ok)
}
