//! Rebuild sessions from forensic logs (`agentshape ingest LOG.ndjson...`).
//!
//! Note \[Ingest\]: the session id is the log's file stem; the sidecar
//! `<id>.meta.json` says how the session was run and ended (tier, parent,
//! profile, times, exit, the consumed handoff). The log is decoded and
//! extracted again and the record built by the same
//! [`crate::runner::build_record`] that `run` uses, so the rows
//! are identical. Logs are applied oldest first (memory reinforcement depends
//! on order), and a session already in the store is skipped, so ingesting
//! twice adds nothing. A sidecar that still says `running` is a `run`
//! that was killed: the session is `completed`/`error` when the transcript
//! holds a result, else `interrupted`, and it replaces the `running` row
//! that run left in the store. A log without a sidecar is ingested as a tier-1 session
//! of the given profile, `completed` when it holds a result.
//!
//! Note \[Ingested ids\]: a sidecar is data, not a run's own word: anyone
//! who can write into a log folder can put `<img …>`, `../../x` or 200 KB in
//! its `id` (or `parent_id`). Both must pass the rule `run` applies to
//! `--session-id` ([`check_session_id`]: 1 to 128 of `[A-Za-z0-9._-]`, not
//! starting with `.`), as must a log's file stem standing in for the id. A
//! log that fails is skipped and reported (its id shown cut to
//! [`ID_SHOWN`] characters), never stored, and the other logs are
//! ingested, as a decoder skips and counts a malformed line.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use agentshape_core::decode::{DecodeOptions, Format, summarize_reader};
use agentshape_core::extract::{ExtractOptions, extract_run};
use agentshape_core::validate::Validator;
use agentshape_store::{Store, WriteReport, time};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::forensic::{MAX_SESSION_ID, SessionMeta, check_session_id, meta_path_of, read_meta};
use crate::profile::load_profile;
use crate::runner::{AgentKind, build_record};

/// What ingesting one log did: stored (`report`) or skipped (`skipped`).
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    /// The log.
    pub path: PathBuf,
    /// The session id (cut to [`ID_SHOWN`] characters when skipped).
    pub session_id: String,
    /// The store's report (`inserted: false` when it was already there);
    /// `None` when the log was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<WriteReport>,
    /// Why the log was skipped (Note \[Ingested ids\]), one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// How much of a refused id a message shows (Note \[Ingested ids\]).
pub const ID_SHOWN: usize = 40;

/// Ingest forensic logs into `store`, oldest first; a log whose session id
/// breaks `run`'s rule is skipped and reported (Note \[Ingested ids\]).
///
/// # Errors
/// A log that cannot be read, an unknown profile, or a store error.
pub fn ingest(
    paths: &[PathBuf],
    default_profile: &str,
    store: &mut dyn Store,
) -> Result<Vec<IngestReport>> {
    let mut items: Vec<(SessionMeta, PathBuf)> = paths
        .iter()
        .map(|p| (meta_for(p, default_profile), p.clone()))
        .collect();
    items.sort_by(|a, b| (&a.0.started_at, &a.0.id).cmp(&(&b.0.started_at, &b.0.id)));
    let mut out = Vec::with_capacity(items.len());
    for (mut meta, path) in items {
        if let Some(why) = refused_id(&meta, &path) {
            out.push(IngestReport {
                path,
                session_id: shown(&meta.id),
                report: None,
                skipped: Some(why),
            });
            continue;
        }
        let profile_name = meta
            .profile
            .clone()
            .unwrap_or_else(|| default_profile.to_owned());
        // Note [Profile names and paths] in `profile`: a file profile is
        // recorded by its absolute path; a relative one resolves here.
        let profile = load_profile(&profile_name, Path::new("."))?;
        let validator = Validator::new(&profile.schema)?;
        // The format the run read it with (a local tier's log is plain text).
        let format = meta
            .agent
            .as_deref()
            .and_then(AgentKind::from_name)
            .map_or(Format::Auto, AgentKind::format);
        // Note [Regular files only] in `infile`: a FIFO or device is
        // refused by name, never waited on.
        let file = crate::infile::open(&path, crate::infile::Options::REGULAR)
            .map_err(Error::input("forensic log"))?;
        let summary = summarize_reader(BufReader::new(file), format, &DecodeOptions::default())?;
        let killed = meta.status == "running";
        if killed || meta.status.is_empty() {
            // No sidecar, or agentshape died before the session ended
            // (Note \[Ingest\]: a result in the transcript decides).
            let status = if !summary.saw_result {
                if killed { "interrupted" } else { "failed" }
            } else if summary.result.as_ref().is_some_and(|r| r.is_error) {
                "error"
            } else {
                "completed"
            };
            status.clone_into(&mut meta.status);
            if killed && !summary.saw_result {
                meta.process_error = Some(
                    "agentshape stopped before the session ended (its run was killed); rebuilt from the forensic log"
                        .to_owned(),
                );
                meta.process_error_category = Some("interrupted".to_owned());
            }
        }
        let extraction = extract_run(
            &summary,
            &ExtractOptions {
                validator: Some(&validator),
                markers: profile.grammar(),
                coerce: profile.coerce,
                methods: profile.methods,
            },
        );
        let log_path = meta
            .log_path
            .as_ref()
            .map_or_else(|| path.clone(), PathBuf::from);
        let mut record = build_record(&meta, &summary, &extraction, &log_path);
        if meta.profile.is_none() {
            record.profile = Some(profile_name);
        }
        let report = store.write_session(&record)?;
        out.push(IngestReport {
            path,
            session_id: meta.id,
            report: Some(report),
            skipped: None,
        });
    }
    Ok(out)
}

/// Why the log's session id (or parent id) may not be stored, naming where
/// it came from; `None` when both pass `run`'s rule (Note \[Ingested ids\]).
fn refused_id(meta: &SessionMeta, log: &Path) -> Option<String> {
    let sidecar = meta_path_of(log);
    let (field, id, err) = match (check_session_id(&meta.id), meta.parent_id.as_deref()) {
        (Err(e), _) if sidecar.is_file() => (
            format!("`id` of `{}`", sidecar.display()),
            meta.id.as_str(),
            e,
        ),
        (Err(e), _) => ("the log's file name".to_owned(), meta.id.as_str(), e),
        (Ok(()), Some(parent)) => {
            let e = check_session_id(parent).err()?;
            (format!("`parent_id` of `{}`", sidecar.display()), parent, e)
        }
        (Ok(()), None) => return None,
    };
    let reason = match err {
        crate::error::Error::SessionId { reason, .. } => reason,
        _ => "it is not a session id",
    };
    Some(format!(
        "session id {:?} ({field}, {} bytes) is refused: {reason}; a session id is 1 to {MAX_SESSION_ID} characters of [A-Za-z0-9._-], not starting with `.`, as for `run --session-id`",
        shown(id),
        id.len()
    ))
}

/// `id` cut to [`ID_SHOWN`] characters, with `…` when cut.
fn shown(id: &str) -> String {
    match id.char_indices().nth(ID_SHOWN) {
        Some((at, _)) => format!("{}…", id.get(..at).unwrap_or_default()),
        None => id.to_owned(),
    }
}

fn meta_for(path: &Path, profile: &str) -> SessionMeta {
    read_meta(&meta_path_of(path)).unwrap_or_else(|| {
        let id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let at = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
        SessionMeta {
            id,
            tier: 1,
            profile: Some(profile.to_owned()),
            started_at: time::format_ms(at),
            ended_at: Some(time::format_ms(at)),
            status: String::new(),
            ..SessionMeta::default()
        }
    })
}
