//! `agentshape sessions`: a readable overview of what the store holds.
//!
//! The README's main job ends with it, so a user sees what `run` persisted
//! without a database client.

use agentshape_store::{SqliteStore, Store};

use crate::args::SessionsArgs;
use crate::commands::parse::truncate;
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style};

/// Run `sessions`.
///
/// # Errors
/// A missing database (66) or a store failure.
pub fn run(args: &SessionsArgs) -> anyhow::Result<Exit> {
    if !args.store.is_file() {
        return Err(CliError::NoInput {
            path: input::display(&args.store),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .into());
    }
    let store = SqliteStore::open(&args.store)?;
    let o = store.overview()?;
    let mut out = Out::new(args.output);
    if out.json {
        out.json_line(&serde_json::json!({
            "sessions_by_status": o.sessions_by_status.iter().map(|(k, n)| (k.clone(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
            "events_by_level": o.events_by_level.iter().map(|(k, n)| (k.clone(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
            "active_memories": o.active_memories,
            "inactive_memories": o.inactive_memories,
            "services_checked": o.services_checked,
            "escalations": o.escalations,
            "sessions": o.sessions,
        }))?;
        out.flush()?;
        return Ok(Exit::Ok);
    }
    let join = |pairs: &[(String, u64)]| {
        pairs
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let total: u64 = o.sessions_by_status.iter().map(|(_, n)| n).sum();
    out.line(&out.paint(
        Style::Bold,
        &format!("{total} sessions ({})", join(&o.sessions_by_status)),
    ))?;
    out.line(&format!(
        "events: {} · memories: {} active, {} pruned · services checked: {} · escalations: {}",
        if o.events_by_level.is_empty() {
            "none".to_owned()
        } else {
            join(&o.events_by_level)
        },
        o.active_memories,
        o.inactive_memories,
        o.services_checked,
        o.escalations
    ))?;
    for s in &o.sessions {
        let style = match s.status.as_str() {
            "completed" => Style::Ok,
            "error" | "failed" | "timeout" | "not_found" => Style::Bad,
            _ => Style::Warn,
        };
        let status = out.paint(style, &s.status);
        let method = s.extraction_method.as_deref().unwrap_or("-");
        let detail = match (&s.error_category, &s.summary) {
            (Some(c), _) => format!("error: {c}"),
            (None, Some(summary)) => truncate(summary, 80),
            (None, None) => String::new(),
        };
        let id: String = s.id.chars().take(8).collect();
        out.line(&format!(
            "  {id}  tier {}  {status}  via {method}  {} events  {detail}",
            s.tier, s.events
        ))?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}
