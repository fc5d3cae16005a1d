//! One session as one file to share (issue 41 §3): `agentshape export
//! html|markdown|json SESSION` and the session page's Download link
//! (`GET /sessions/{id}/export.html`), which give the same HTML file.
//!
//! Note \[Export\]: an export is the session, its *whole* transcript (every
//! page of Note \[Transcript pages\], read one after another) and every
//! session below it (its sub-agents and escalations, Note \[Session tree\]
//! in the store's `query`), read from the store only:
//! - the HTML file draws rows with the session page's own
//!   `transcript::lines`, so the page and the file never drift apart; it
//!   carries its CSS inline (the dashboard's `app.css` and a few rules of
//!   its own), no script, nothing loaded from anywhere (a CSP meta tag
//!   `default-src 'none'` says so to the browser: even a string that
//!   escaped as markup could load nothing), and folds with `<details>`,
//!   which print expanded where the browser supports `::details-content`
//!   (Chromium 131 and later); elsewhere a folded part prints as its
//!   one-line summary, while prompts and assistant text are never folded;
//! - a sub-agent's transcript sits where its parent's `Task` call spawned
//!   it (before the call's result, found by the `sub_agent` progress rows
//!   that name it; an inline 1.0.x sub-agent before its first sidechain
//!   line), else in a "Sub-agents" section at the end;
//! - what the export adds is the session's facts, never a path of the
//!   exporting machine: not the forensic log (`raw_log_path`), not the file
//!   it was imported from (`source_path`), not the store. The transcript
//!   is the store's text, masked as the store masked it; the caller masks
//!   the result once more ([`mask`]), as every other door does.
//!   `redact_paths` also replaces the project path with `<project>` and the
//!   home folders with `~` in every string, transcript text included.

mod bundle;
mod download;
mod facts;
mod html;
mod json;
mod markdown;
mod redact;

use agentshape_core::secrets::Masker;
use agentshape_store::query::Source;

pub(crate) use download::download;

/// The three kinds of file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One self-contained HTML page.
    Html,
    /// Markdown: prompts, answers, tool calls and results as fenced blocks.
    Markdown,
    /// One JSON document of the feed rows' bodies, for programs.
    Json,
}

impl Format {
    /// The file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Markdown => "md",
            Format::Json => "json",
        }
    }
}

/// What an export leaves out beyond what the store masked.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replace the project path with `<project>` and each of `homes` (and
    /// the home a project path under `/home/NAME` or `/Users/NAME` sits
    /// in) with `~`, in every string.
    pub redact_paths: bool,
    /// The exporting machine's home folder(s), for `redact_paths`.
    pub homes: Vec<String>,
}

/// Session `id` of `store` as one file; `None` for an unknown id.
///
/// # Errors
/// When the store cannot be read.
pub fn export(
    store: &dyn Source,
    id: &str,
    format: Format,
    opts: &Options,
) -> agentshape_store::Result<Option<String>> {
    let Some(mut b) = bundle::load(store, id)? else {
        return Ok(None);
    };
    if opts.redact_paths
        && let Some(r) = redact::Redactor::new(b.root.session.project.as_deref(), &opts.homes)
    {
        r.bundle(&mut b);
    }
    Ok(Some(match format {
        Format::Html => html::render(&b),
        Format::Markdown => markdown::render(&b),
        Format::Json => json::render(&b),
    }))
}

/// `text`, an export in `format`, masked as every other door masks (the
/// store masked it already; this catches rows written before masking or
/// with `--no-mask`): HTML as its escaped text reads, JSON keeping its
/// shape, Markdown as text.
pub fn mask(masker: &Masker, format: Format, text: &str) -> String {
    match format {
        Format::Html => crate::mask::mask_html(masker, text),
        Format::Json => masker.mask_json_text(text).text.into_owned(),
        Format::Markdown => masker.mask_str(text).text.into_owned(),
    }
}

/// A file name for session `id`: `agentshape-<id>.<ext>`, the id's
/// characters other than ASCII letters, digits, `-`, `_` and `.` as `_`,
/// at most 100 of them (a safe `Content-Disposition` and a safe name on
/// every file system).
pub fn file_name(id: &str, format: Format) -> String {
    let safe: String = id
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    format!("agentshape-{safe}.{}", format.extension())
}

#[cfg(test)]
mod tests;
