//! `agentshape sessions`: a readable overview of what the store holds.
//!
//! The README's main job ends with it, so a user sees what `run` persisted
//! without a database client.
//!
//! It only reads: the store is opened read-only and never created. It also
//! says what the store is missing (Note \[Lost sessions\] in the store):
//! `running` rows whose heartbeat is stale, and forensic logs in `--log-dir`
//! with no row at all (a `run` that could not write, or was killed before
//! its start was recorded), each with the `agentshape ingest` command that
//! completes it.

use std::path::{Path, PathBuf};

use agentshape_store::{Overview, StoreUrl};

use crate::args::SessionsArgs;
use crate::commands::parse::truncate;
use crate::exit::Exit;
use crate::output::{Out, Style, cell, unique_prefixes};

/// The fewest characters of an id shown (more when two would look alike).
const ID_SHOWN: usize = 8;

/// Forensic logs (`<id>.ndjson`) in `dir` whose session the store lacks.
fn unstored_logs(dir: &Path, o: &Overview) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .filter(|p| {
            let id = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            id.is_some_and(|id| !o.sessions.iter().any(|s| s.id == id))
        })
        .collect();
    out.sort();
    out
}

/// The command that completes these sessions from their logs (a Postgres
/// password is shown as `***`: never printed).
fn ingest_command(store: &StoreUrl, logs: &[String]) -> String {
    format!("agentshape ingest --store {store} {}", logs.join(" "))
}

/// Run `sessions`.
///
/// # Errors
/// A missing database (66) or a store failure.
pub fn run(args: &SessionsArgs) -> anyhow::Result<Exit> {
    let url = StoreUrl::parse(&args.store.location)?;
    let store = url.open_read_only()?;
    crate::mask::use_store_key(store.mask_key());
    let o = store.overview()?;
    let unstored: Vec<String> = unstored_logs(&args.log_dir, &o)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let lost: Vec<String> = o
        .sessions
        .iter()
        .filter(|s| s.lost)
        .filter_map(|s| s.raw_log_path.clone())
        .collect();
    let to_ingest: Vec<String> = lost.iter().chain(&unstored).cloned().collect();
    let mut out = Out::new(args.output);
    if out.json {
        out.json_line(&serde_json::json!({
            "sessions_by_status": o.sessions_by_status.iter().map(|(k, n)| (k.clone(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
            "events_by_level": o.events_by_level.iter().map(|(k, n)| (k.clone(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
            "active_memories": o.active_memories,
            "inactive_memories": o.inactive_memories,
            "services_checked": o.services_checked,
            "escalations": o.escalations,
            "lost": o.lost,
            "unstored_logs": unstored,
            "ingest": (!to_ingest.is_empty()).then(|| ingest_command(&url, &to_ingest)),
            "transport": store.transport(),
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
    // Less than verified TLS to a Postgres store is said (Note [sslmode]).
    if let Some(t) = store.transport() {
        out.line(&out.paint(Style::Warn, &format!("store {url}: {t}")))?;
    }
    // The shortest prefix that tells each id apart in this list (Note
    // in `output::unique_prefixes`), padded so the columns line up.
    let ids = unique_prefixes(
        &o.sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ID_SHOWN,
    );
    let id_width = ids.iter().map(|i| i.chars().count()).max().unwrap_or(0);
    for (s, id) in o.sessions.iter().zip(&ids) {
        let style = match s.status.as_str() {
            "completed" => Style::Ok,
            "error" | "failed" | "timeout" | "not_found" => Style::Bad,
            _ if s.lost => Style::Bad,
            _ => Style::Warn,
        };
        let status = out.paint(style, &cell(&s.status));
        let method = cell(s.extraction_method.as_deref().unwrap_or("-"));
        let detail = match (&s.error_category, &s.summary) {
            (Some(c), _) => format!("error: {}", cell(c)),
            (None, Some(summary)) => truncate(&cell(summary), 80),
            (None, None) => String::new(),
        };
        let id = cell(id);
        let log = s.raw_log_path.as_deref().unwrap_or("<log>");
        let detail = if s.lost {
            format!(
                "lost: no heartbeat since {}; complete it with `agentshape ingest {log}`",
                s.heartbeat_at.as_deref().unwrap_or("its start")
            )
        } else if s.status == "running" {
            format!("(if its run was killed: `agentshape ingest {log}`)")
        } else {
            detail
        };
        out.line(&format!(
            "  {id:<id_width$}  tier {}  {status}  via {method}  {} events  {detail}",
            s.tier, s.events
        ))?;
    }
    if !unstored.is_empty() {
        out.line(&out.paint(
            Style::Warn,
            &format!(
                "{} forensic logs in `{}` are not in the store",
                unstored.len(),
                args.log_dir.display()
            ),
        ))?;
    }
    if !to_ingest.is_empty() {
        out.line(&format!(
            "to complete them: {}",
            ingest_command(&url, &to_ingest)
        ))?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}
