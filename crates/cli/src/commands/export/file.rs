//! `agentshape export html|markdown|json SESSION [-o FILE]`: one stored
//! session as one file to share (issue 41 §3; web's Note \[Export\]).
//!
//! The store is opened read-only, never created; the file is drawn by the
//! web crate (the page's own renderer) and goes through this command's
//! output door (crate `mask`) like everything else it prints. To stdout by
//! default; `-o FILE` writes a temporary file beside FILE and renames it
//! over FILE, so a reader never sees half a file and a failure leaves FILE
//! as it was. An unknown session is one line on stderr and exit 66.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use agentshape_store::query::Source;
use agentshape_store::{PgStore, SqliteStore, Store, StoreUrl};
use agentshape_web::export::{self, Format, Options};

use crate::args::ExportFileArgs;
use crate::exit::{CliError, Exit};
use crate::output::{clean, eprint};

/// Run `export html|markdown|json`.
///
/// # Errors
/// A missing store (66), store failures, an unwritable FILE (64).
pub fn run(format: Format, args: &ExportFileArgs) -> anyhow::Result<Exit> {
    match StoreUrl::parse(&args.store.location)? {
        StoreUrl::Sqlite(p) => {
            let s = SqliteStore::open_read_only(&p)?;
            crate::mask::use_store_key(s.mask_key());
            write(format, args, &s)
        }
        StoreUrl::Postgres(u) => {
            let s = PgStore::open_read_only(&u)?;
            crate::mask::use_store_key(s.mask_key());
            write(format, args, &s)
        }
    }
}

fn name(format: Format) -> &'static str {
    match format {
        Format::Html => "html",
        Format::Markdown => "markdown",
        Format::Json => "json",
    }
}

fn write(format: Format, args: &ExportFileArgs, store: &dyn Source) -> anyhow::Result<Exit> {
    let opts = Options {
        redact_paths: args.redact_paths,
        homes: std::env::var("HOME").ok().into_iter().collect(),
    };
    let Some(text) = export::export(store, &args.session, format, &opts)? else {
        eprint(&format!(
            "agentshape: export {}: no session `{}` in the store",
            name(format),
            clean(&args.session)
        ));
        return Ok(Exit::NoInput);
    };
    let text = match crate::mask::masker() {
        Some(m) => export::mask(m, format, &text),
        None => text,
    };
    if let Some(path) = &args.out {
        write_atomic(path, text.as_bytes()).map_err(|e| {
            CliError::Usage(format!(
                "export {}: cannot write `{}`: {e}",
                name(format),
                path.display()
            ))
        })?;
        eprint(&format!(
            "exported session `{}` to {} ({} bytes)",
            clean(&args.session),
            path.display(),
            text.len()
        ));
        return Ok(Exit::Ok);
    }
    let mut out = io::stdout().lock();
    // Note [Terminal safety] in `output`: agent text on a terminal is
    // cleaned; a file or a pipe gets it as stored (JSON escapes control
    // characters anyway).
    if out.is_terminal() && format != Format::Json {
        out.write_all(clean(&text).as_bytes())?;
    } else {
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// Replace `path` with `bytes` atomically (a failure leaves it as it was).
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    crate::replace::replace_file(path, bytes, None)
}
