//! The usage-only pass (issue 39 §3): what `agentshape usage` stores of
//! session files not imported yet, at decoding speed.
//!
//! Note \[Usage pass\]: a usage report needs each session's row (agent,
//! project, parent, models) and its model calls (`usage_calls`), not its
//! transcript. Importing a file also builds its feed rows, masks and
//! indexes their text: most of an import's time (issue 39 measured the
//! import of 300 MB at 40–45× `parse`). So for a file with no import mark
//! the pass decodes it as `parse` does (summary only, files in parallel on
//! every core) and stores the session row and its calls through the
//! store's one door ([`Store::save_usage`]: the same masking, the same
//! row an import writes but for the first prompt and the inline
//! sub-agents' rows), under a mark of its own (`usage_files`). Then:
//! - a file with an import mark (`native_files`) is imported as `import`
//!   would (unchanged: one `stat`; grown: its new lines), since its
//!   transcript is already stored and must stay whole;
//! - a file whose usage mark matches its `stat` is not read;
//! - any other file (new, or changed since its usage pass) is decoded
//!   whole, and its calls replace the ones stored for it.
//!
//! A later `agentshape import` finds no import mark, so it reads the file
//! whole and stores its transcript under the same session id: the importer
//! counts usage marks as owners of their session ids (Note \[Native
//! session ids\]), and the pass assigns ids in the same order `import`
//! would, one window of files at a time. The import then drops the usage
//! mark.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentshape_core::decode::{DecodeOptions, Format, summarize_reader_with};
use agentshape_core::summary::RunSummary;
use agentshape_store::{NativeMark, Store, time};

use super::{
    Change, Error, FileReport, Importer, MAX_DOCUMENT_BYTES, PROBE_BYTES, Pass, Result, agent_of,
    describes, document, format_of, io, open, probe,
};
use crate::native::discover::Candidate;
use crate::native::read::clamp_usage;

/// Files decoded together before their rows are written in order.
const WINDOW: usize = 64;

/// A file the pass read.
struct FileRead {
    format: Format,
    summary: RunSummary,
    /// The first whole-document head (for [`Importer::ids`]).
    head_summary: RunSummary,
    /// Usage counts clamped (Note \[Absurd usage\] in `read`).
    clamped: u64,
}

/// What decoding one file gave.
enum Decoded {
    Session(Box<FileRead>),
    Skipped(String),
    Failed(String),
}

/// Every candidate through the usage pass, in order (Note \[Usage pass\]);
/// `each` sees every report. A file that fails is reported and the others
/// go on.
///
/// # Errors
/// Only a store failure, which would fail every other file too.
pub fn tally_all(
    importer: &mut Importer,
    store: &mut dyn Store,
    files: &[Candidate],
    each: &mut dyn FnMut(&FileReport),
) -> Result<Vec<FileReport>> {
    let mut usage: HashMap<String, NativeMark> = store
        .usage_marks()?
        .into_iter()
        .map(|m| (m.path.clone(), m))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut out = Vec::with_capacity(files.len());
    for window in files.chunks(WINDOW) {
        // Each path masked once (the key of its marks and reports).
        let keys: Vec<String> = window.iter().map(|f| importer.key_of(&f.path)).collect();
        let unread = |i: usize| {
            usage
                .get(&keys[i])
                .filter(|m| describes(m, &window[i].stat))
        };
        // Which files of the window need decoding.
        let todo: Vec<usize> = (0..window.len())
            .filter(|&i| importer.mark(&keys[i]).is_none() && unread(i).is_none())
            .collect();
        let mut decoded = decode_all(importer, window, &todo, threads);
        for (i, (file, key)) in window.iter().zip(&keys).enumerate() {
            let report = if importer.mark(key).is_some() {
                match importer.import(store, file) {
                    Ok(r) => r,
                    Err(Error::Store(e)) => return Err(Error::Store(e)),
                    Err(e) => FileReport::failed(key, e.to_string()),
                }
            } else if let Some(m) = usage.get(key).filter(|m| describes(m, &file.stat)) {
                FileReport {
                    session_id: Some(m.session_id.clone()),
                    agent: Some(m.agent.clone()),
                    format: Some(format_of(&m.agent)),
                    ..FileReport::unchanged(key)
                }
            } else {
                match decoded.remove(&i) {
                    Some(Decoded::Session(read)) => {
                        let prev = usage.remove(key);
                        importer.store_usage(store, file, key, *read, prev.as_ref())?
                    }
                    Some(Decoded::Skipped(why)) => FileReport::skipped(key, why),
                    Some(Decoded::Failed(e)) => FileReport::failed(key, e),
                    None => FileReport::failed(key, "not decoded".to_owned()),
                }
            };
            each(&report);
            out.push(report);
        }
    }
    Ok(out)
}

/// Decode `todo` (indices into `window`) on up to `threads` threads.
fn decode_all(
    importer: &Importer,
    window: &[Candidate],
    todo: &[usize],
    threads: usize,
) -> HashMap<usize, Decoded> {
    let next = AtomicUsize::new(0);
    let want = importer.opts.agent;
    let work = || {
        let mut got = Vec::new();
        loop {
            let n = next.fetch_add(1, Ordering::Relaxed);
            let Some(&i) = todo.get(n) else {
                return got;
            };
            got.push((i, decode_one(&window[i], want)));
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(todo.len()))
            .map(|_| scope.spawn(work))
            .collect();
        let mut all: HashMap<usize, Decoded> = work().into_iter().collect();
        for h in helpers {
            // A decoder that panicked loses its files' results: each is
            // reported as not decoded, never the whole pass.
            if let Ok(got) = h.join() {
                all.extend(got);
            }
        }
        all
    })
}

/// Decode one file whole, summary only (as `parse` does).
fn decode_one(file: &Candidate, want: Option<crate::native::Agent>) -> Decoded {
    match try_decode(file, want) {
        Ok(d) => d,
        Err(e) => Decoded::Failed(e.to_string()),
    }
}

fn try_decode(file: &Candidate, want: Option<crate::native::Agent>) -> Result<Decoded> {
    let path = &file.path;
    let mut f = open(path)?;
    let mut head = Vec::with_capacity(64 * 1024);
    (&mut f)
        .take(PROBE_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io(path))?;
    let (format, head_summary) = match probe(&head) {
        Some(p) => (p.format, p.summary),
        None => match document(&mut f, &head, path)? {
            Some((format, summary)) => {
                return Ok(check_agent(format, want).unwrap_or_else(|| {
                    Decoded::Session(Box::new(FileRead {
                        format,
                        head_summary: summary.clone(),
                        summary,
                        clamped: 0,
                    }))
                }));
            }
            None => {
                return Ok(Decoded::Skipped(
                    "not a Claude Code, Codex or Gemini CLI session file (or no whole line yet)"
                        .to_owned(),
                ));
            }
        },
    };
    if let Some(skip) = check_agent(format, want) {
        return Ok(skip);
    }
    if format == Format::GeminiChat {
        let bytes =
            crate::infile::read(path, MAX_DOCUMENT_BYTES).map_err(Error::input("session file"))?;
        let summary =
            agentshape_core::decode::decode_bytes(&bytes, format, &DecodeOptions::default());
        return Ok(Decoded::Session(Box::new(FileRead {
            format,
            summary,
            head_summary,
            clamped: 0,
        })));
    }
    let reader = BufReader::with_capacity(256 * 1024, head.as_slice().chain(f));
    // As `parse` decodes, with absurd usage clamped as the import clamps
    // it (Note [Absurd usage] in `read`).
    let mut clamped = 0u64;
    let summary = summarize_reader_with(reader, format, &DecodeOptions::default(), &mut |e| {
        if clamp_usage(e).is_some() {
            clamped += 1;
        }
    })
    .map_err(|e| Error::Io {
        context: format!("reading `{}`", path.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(Decoded::Session(Box::new(FileRead {
        format,
        summary,
        head_summary,
        clamped,
    })))
}

/// `Some(skipped)` when `--agent` asked for another agent.
fn check_agent(format: Format, want: Option<crate::native::Agent>) -> Option<Decoded> {
    let agent = agent_of(format);
    want.filter(|w| *w != agent)
        .map(|w| Decoded::Skipped(format!("a {} session, not {}", agent.as_str(), w.as_str())))
}

impl Importer {
    /// Store what the pass read of one file: its row and calls, under its
    /// usage mark (Note \[Usage pass\]).
    fn store_usage(
        &mut self,
        store: &mut dyn Store,
        file: &Candidate,
        key: &str,
        read: FileRead,
        prev: Option<&NativeMark>,
    ) -> Result<FileReport> {
        let (fresh_id, parent) = self.ids(key, &file.path, &read.head_summary);
        // A file read before keeps its id, as the import keeps a mark's.
        let id = prev.map_or(fresh_id, |m| m.session_id.clone());
        let parent = parent.filter(|p| *p != id);
        let agent = agent_of(read.format);
        let lines = read.summary.lines;
        let skipped = read.summary.skipped_lines;
        let mark = NativeMark {
            path: key.to_owned(),
            session_id: id.clone(),
            agent: agent.as_str().to_owned(),
            dev: file.stat.dev,
            inode: file.stat.inode,
            size: file.stat.size,
            offset: file.stat.size,
            mtime_ms: file.stat.mtime_ms,
            lines,
            updated_at: time::now(),
            reset: false,
            expect_offset: None,
        };
        let pass = Pass {
            summary: read.summary,
            offset: file.stat.size,
            lines,
            rows: 0,
            first_prompt: None,
            tail: Vec::new(),
            skipped,
            clamped: crate::native::read::Clamped::default(),
        };
        let (record, unpriced, _) = self.record(&file.path, &pass, &mark, parent);
        store.save_usage(&record, &mark)?;
        self.owners
            .entry(id.clone())
            .or_insert_with(|| key.to_owned());
        Ok(FileReport {
            path: key.to_owned(),
            session_id: Some(id),
            agent: Some(mark.agent),
            format: Some(read.format),
            change: if prev.is_some() {
                Change::Replaced
            } else {
                Change::New
            },
            lines_added: lines,
            rows_added: 0,
            status: Some(record.status.to_string()),
            skipped: None,
            unpriced_models: unpriced,
            valid: None,
            error: None,
            lines_skipped: skipped,
            warnings: if read.clamped > 0 {
                vec![format!(
                    "{key}: {} usage counts over {} tokens, counted as {}",
                    read.clamped,
                    super::super::read::MAX_CALL_TOKENS,
                    super::super::read::MAX_CALL_TOKENS
                )]
            } else {
                Vec::new()
            },
        })
    }
}
