//! `agentshape secrets scan` and `secrets mask` (issue 29): where secrets
//! are, so a person can rotate them, and masking what a store already holds
//! (the store's Note \[Masking a stored store\]).

use std::io::BufRead as _;

use agentshape_core::secrets::Masker;
use agentshape_store::StoreUrl;
use agentshape_store::secrets::{found, mask_stored, unmasked_sessions};
use serde_json::json;

use crate::args::{SecretsAction, SecretsArgs};
use crate::exit::{CliError, Exit};
use crate::output::{Out, eprint};

/// Rows of `secrets_found` listed at most.
const MAX_LISTED: usize = 100_000;

/// Run `secrets`.
///
/// # Errors
/// A missing file or store, store failures, a failing stdout.
pub fn run(args: &SecretsArgs) -> anyhow::Result<Exit> {
    match &args.action {
        SecretsAction::Scan {
            paths,
            store,
            output,
        } => match store {
            Some(s) => scan_store(s, *output),
            None => scan_files(paths, *output),
        },
        SecretsAction::Mask { store, output } => mask(store.as_deref(), *output),
    }
}

fn scan_files(
    paths: &[std::path::PathBuf],
    output: crate::args::OutputArgs,
) -> anyhow::Result<Exit> {
    if paths.is_empty() {
        return Err(
            CliError::Usage("secrets scan: give files to scan, or --store URL".to_owned()).into(),
        );
    }
    let m: &Masker = crate::mask::scanner();
    let mut out = Out::new(output);
    let mut any = false;
    for path in paths {
        let mut r = crate::input::open(path)?;
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        loop {
            buf.clear();
            if r.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            line_no += 1;
            let text = String::from_utf8_lossy(&buf);
            for f in m.mask_json_text(text.trim_end_matches(['\n', '\r'])).found {
                any = true;
                let file = path.display().to_string();
                if out.json {
                    out.json_line(&json!({"rule": f.rule, "file": file, "line": line_no,
                        "fingerprint": f.fingerprint}))?;
                } else {
                    out.line(&format!(
                        "{:<28} {file}:{line_no}  {}",
                        f.rule, f.fingerprint
                    ))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(if any { Exit::Invalid } else { Exit::Ok })
}

fn scan_store(store: &str, output: crate::args::OutputArgs) -> anyhow::Result<Exit> {
    let store = StoreUrl::parse(store)?.open_copyable(false)?;
    let rows = found(&*store, MAX_LISTED)?;
    let mut out = Out::new(output);
    for r in &rows {
        if out.json {
            out.json_line(r)?;
        } else {
            out.line(&format!(
                "{:<28} {}  {}{}  {}  {}",
                r.rule,
                r.session_id,
                r.place,
                r.feed_id.map(|i| format!("#{i}")).unwrap_or_default(),
                r.fingerprint,
                r.created_at
            ))?;
        }
    }
    out.flush()?;
    let raw = unmasked_sessions(&*store).unwrap_or(0);
    if raw > 0 {
        eprint(&format!(
            "{raw} sessions were written before masking (or with --no-mask) and may hold raw secrets: \
             `agentshape secrets mask --store {}` masks and lists them",
            store.location().unwrap_or_default()
        ));
    }
    Ok(if rows.is_empty() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

fn mask(store: Option<&str>, output: crate::args::OutputArgs) -> anyhow::Result<Exit> {
    let url = StoreUrl::resolve(store)?;
    if url.sqlite_path().is_some_and(|p| !p.exists()) {
        return Err(agentshape_store::Error::Missing {
            path: url.to_string(),
        }
        .into());
    }
    let mut store = url.open_copyable(true)?;
    let Some(key) = store.mask_key() else {
        return Err(CliError::Usage("the store has no mask key".to_owned()).into());
    };
    let m = store
        .masker()
        .cloned()
        .unwrap_or_else(|| Masker::builtin(key));
    let report = mask_stored(&mut *store, &m)?;
    drop(store);
    if let Some(path) = url.sqlite_path() {
        agentshape_store::SqliteStore::open(path)?.compact()?;
    }
    let mut out = Out::new(output);
    if out.json {
        out.json_line(&report)?;
    } else {
        out.line(&format!(
            "masked {} secrets in {} rows of {url}",
            report.secrets, report.rows
        ))?;
        for (place, n) in &report.by_place {
            out.line(&format!("  {place:<12} {n}"))?;
        }
    }
    out.flush()?;
    Ok(Exit::Ok)
}
