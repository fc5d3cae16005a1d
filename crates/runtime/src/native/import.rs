//! One native session file into the store, incrementally.
//!
//! Note \[Incremental import\]: a file is compared with its import mark
//! (store's Note \[Import marks\]) by `stat` alone, with every mark loaded
//! in one query when the importer starts, so an unchanged file costs one
//! `stat` and no read:
//! - same device, inode, size and mtime: unchanged, nothing is read;
//! - same device and inode, size at least the mark's offset: grown. The
//!   file is decoded again from its start, and only the lines after the
//!   mark's become feed rows; if line `lines` of the mark no longer ends at
//!   its offset the file was rewritten in place, and it is read as replaced;
//! - another inode, or smaller than the mark's offset: replaced (or
//!   truncated): read whole once, its earlier feed rows replaced
//!   (`NativeMark::reset`);
//! - no mark: new. A Gemini CLI chat is one JSON document the CLI rewrites
//!   whole, so any change reads it whole and replaces its rows.
//!
//! Note \[Why a grown file is decoded whole\]: the session's aggregates
//! (tokens counted once per message id, tools by call id, the last
//! main-chain turn, the status) depend on every line, and core's decoder
//! and summary keep that state in memory only. Decoding the file again
//! from its start while streaming gives exactly what a first import of the
//! same bytes gives, in bounded memory (a 256 KiB read buffer, one line,
//! one batch of rows), at the cost of reading the whole file again for each
//! pass that finds it grown: linear in its size, about what `cat` costs for
//! it plus the decoder (see README's import measurements). Only the new
//! lines are written, so the store's work is proportional to what was
//! added. `watch` passes a file again when it is notified of a write, so a
//! session file of tens of MB being written costs that read per pass.
//!
//! Note \[Reading beside writing\]: a file's lines are read, decoded and
//! turned into feed rows on a thread of their own, which hands batches of
//! rows (at most [`ImportOptions::batch_rows`] rows or about 8 MB) through
//! a channel of one to the thread that writes them: the decoder and the
//! store work at the same time, and at most three batches are in memory.
//!
//! Note \[Native session ids\]: a session is stored under the agent's own
//! session id when it passes `run`'s rule (`check_session_id`) and no
//! other file's mark already has it (two copies of one session file are two
//! sessions); else under `native-<16 hex of SHA-256 of the path>`, stable
//! across passes. A sub-agent's own file (Claude Code 2.1.x
//! `subagents/agent-<id>.jsonl`) is the session `agent-<id>`, a child of
//! the session its lines name (or of the folder it sits in). A 1.0.x
//! sub-agent, inline in its parent's file (`isSidechain` lines), gets a
//! child row `agent-<uuid of its first line>` when the parent is stored;
//! its lines stay in the parent's feed with `sidechain: true`.

use std::collections::HashMap;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use agentshape_core::decode::{DecodeOptions, Format};
use agentshape_core::extract::{ExtractOptions, extract_run};
use agentshape_core::pricing::{PriceTable, Tokens};
use agentshape_core::profile::Profile;
use agentshape_core::summary::RunSummary;
use agentshape_core::usage::MessageUsage;
use agentshape_core::validate::Validator;
use agentshape_store::{
    NativeMark, Session, Status, Store, ToolCount, UsageRecord, Verdict, count, time,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::Agent;
use super::discover::{Candidate, FileStat, is_subagent_file};
use super::read::{
    Batch, Clamped, MAX_CALL_TOKENS, MAX_DOCUMENT_BYTES, Outcome, PROBE_BYTES, Pass, ReadOptions,
    probe, read_document, read_lines,
};
use crate::error::{Error, Result};
use crate::forensic::check_session_id;
use crate::record::{self, Extracted};

mod tally;
pub use tally::tally_all;

/// What an import compares and writes with.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Only this agent's sessions (`--agent`).
    pub agent: Option<Agent>,
    /// Extract and validate the final message with this profile (`--profile`).
    pub profile: Option<Profile>,
    /// How the profile is named in the store (`sessions.profile`).
    pub profile_label: Option<String>,
    /// Prices for the cost estimate.
    pub prices: PriceTable,
    /// The most bytes of one feed body (as `run`'s feed).
    pub max_body: usize,
    /// Feed rows per store transaction while a big file is read.
    pub batch_rows: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            agent: None,
            profile: None,
            profile_label: None,
            prices: PriceTable::builtin(),
            max_body: crate::feed::FeedOptions::default().max_body,
            batch_rows: 2_000,
        }
    }
}

/// How a file compared with its mark (Note \[Incremental import\]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Never imported.
    New,
    /// Same as when imported: nothing read.
    Unchanged,
    /// Grew: only the new lines were added.
    Grown,
    /// Replaced or truncated: read whole again.
    Replaced,
    /// Not imported (see `skipped`).
    Skipped,
}

/// What importing one file did (`import --json` prints one per file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    /// The file.
    pub path: String,
    /// The stored session.
    pub session_id: Option<String>,
    /// `claude-code`, `codex` or `gemini-cli`.
    pub agent: Option<String>,
    /// The decoder's format (`claude-session`, `codex-rollout`, `gemini-chat`).
    pub format: Option<Format>,
    /// How it compared with its mark.
    pub change: Change,
    /// Whole lines read past the mark (all of them for a new file).
    pub lines_added: u64,
    /// Of those, lines the decoder skipped (too long, not JSON, not an
    /// object; blank ones aside): each is a `skipped` feed row.
    #[serde(skip_serializing_if = "is_zero")]
    pub lines_skipped: u64,
    /// Feed rows written.
    pub rows_added: u64,
    /// The session's status.
    pub status: Option<String>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Models the price table does not know (the cost leaves them out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// The validation verdict with `--profile`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// The file could not be read (it is skipped; the others go on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What was imported but altered, one line each naming the file and
    /// line (usage clamped: Note \[Absurd usage\] in `read`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FileReport {
    /// A file found as its mark says: nothing read.
    fn unchanged(path: &str) -> FileReport {
        FileReport {
            change: Change::Unchanged,
            skipped: None,
            ..FileReport::skipped(path, String::new())
        }
    }

    /// A file not imported, and why (one line).
    pub fn skipped(path: &str, why: String) -> FileReport {
        FileReport {
            path: path.to_owned(),
            session_id: None,
            agent: None,
            format: None,
            change: Change::Skipped,
            lines_added: 0,
            lines_skipped: 0,
            rows_added: 0,
            status: None,
            skipped: Some(why),
            unpriced_models: Vec::new(),
            valid: None,
            error: None,
            warnings: Vec::new(),
        }
    }

    /// A file that could not be read.
    pub fn failed(path: &str, error: String) -> FileReport {
        FileReport {
            error: Some(error),
            ..FileReport::skipped(path, "it could not be read".to_owned())
        }
    }
}

/// Imports files against the marks it loaded (Note \[Incremental import\]).
#[derive(Debug)]
pub struct Importer {
    opts: ImportOptions,
    validator: Option<Validator>,
    marks: HashMap<String, NativeMark>,
    /// Session id → the path whose mark has it (Note \[Native session ids\]).
    owners: HashMap<String, String>,
    /// The store's door, when it masks: marks are keyed by the path as
    /// the store keeps it, and ids holding a secret are replaced (store's
    /// Note \[Names and ids\]).
    door: Option<agentshape_core::secrets::Masker>,
}

/// The native format of a stored agent name.
fn format_of(agent: &str) -> Format {
    match agent {
        "codex" => Format::CodexRollout,
        "gemini-cli" => Format::GeminiChat,
        _ => Format::ClaudeSession,
    }
}

/// The agent of a native format.
fn agent_of(format: Format) -> Agent {
    match format {
        Format::CodexRollout => Agent::Codex,
        Format::GeminiChat => Agent::Gemini,
        _ => Agent::Claude,
    }
}

/// A stored timestamp from one a file wrote (`None` when it is no time).
fn stamp(text: Option<&str>) -> Option<String> {
    text.and_then(time::parse_ms).map(time::format_ms)
}

/// A mark that still describes a file: same device, inode, size and
/// mtime (Note \[Incremental import\]: nothing to read).
fn describes(m: &NativeMark, st: &FileStat) -> bool {
    m.dev == st.dev && m.inode == st.inode && m.size == st.size && m.mtime_ms == st.mtime_ms
}

/// The stable id of a file with no usable session id (Note \[Native session ids\]).
pub fn derived_id(path: &str) -> String {
    let digest = Sha256::digest(path.as_bytes());
    let mut id = String::from("native-");
    for b in digest.iter().take(8) {
        use std::fmt::Write as _;
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// Open a session file: regular files only (runtime's Note \[Regular
/// files only\] in `infile`).
fn open(path: &Path) -> Result<std::fs::File> {
    crate::infile::open(path, crate::infile::Options::REGULAR).map_err(Error::input("session file"))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        context: format!("reading `{}`", path.display()),
        source,
    }
}

/// Why a file whose head probed as no session is skipped. A first line
/// longer than the probe is said with the limit it broke, and the field
/// that runs past it when the line is a JSON object (a 1 MB `sessionId`
/// used to be "not a session file" and nothing more).
fn not_a_session(head: &[u8]) -> String {
    if head.len() < PROBE_BYTES || head.contains(&b'\n') {
        return "not a Claude Code, Codex or Gemini CLI session file (or no whole line yet)"
            .to_owned();
    }
    let field = field_cut(head).map_or_else(String::new, |f| {
        let f: String = f.chars().take(40).collect();
        format!(" (its field `{}` alone runs past them)", f.escape_debug())
    });
    format!(
        "its first line is longer than the {PROBE_BYTES} bytes read to tell a session file{field}"
    )
}

/// The top-level key of the JSON object `prefix` starts, whose value the
/// prefix ends inside; `None` when it is no object or ends between fields.
fn field_cut(prefix: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(prefix.trim_ascii_start());
    if !text.starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    // The last string closed at depth 1, and the key of the value open.
    let (mut start, mut last, mut key) = (0usize, None::<(usize, usize)>, None);
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    in_string = false;
                    if depth == 1 {
                        last = Some((start, i));
                    }
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                start = i + 1;
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 1 => key = last.map(|(a, b)| text[a..b].to_owned()),
            ',' if depth == 1 => key = None,
            _ => {}
        }
        if depth == 0 {
            // The object closed (or was never one): nothing runs past.
            return None;
        }
    }
    key
}

/// The warning for a file whose own session id breaks `run`'s rule (a
/// 1,000-character `sessionId`): stored under a derived id, said once with
/// the rule it broke (Note \[Native session ids\]).
fn unusable_id(key: &str, summary: &RunSummary, stored: &str) -> Option<String> {
    let own = summary
        .session
        .as_deref()
        .and_then(|i| i.session_id.as_deref())
        .or(summary.session_id.as_deref())?;
    match check_session_id(own) {
        Err(Error::SessionId { reason, .. }) => Some(format!(
            "{key}: its sessionId of {} bytes cannot name a session ({reason}); stored as {stored}",
            own.len()
        )),
        _ => None,
    }
}

/// `warning` added to a saved report.
fn with_warning(
    saved: Result<Option<FileReport>>,
    warning: Option<String>,
) -> Result<Option<FileReport>> {
    saved.map(|r| {
        r.map(|mut r| {
            r.warnings.extend(warning);
            r
        })
    })
}

/// A file whose head is no JSON Lines session may be one JSON document (a
/// Gemini CLI chat, pretty-printed): decoded whole when it starts with `{`
/// and is not too big.
fn document(
    f: &mut std::fs::File,
    head: &[u8],
    path: &Path,
) -> Result<Option<(Format, RunSummary)>> {
    if head.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(None);
    }
    let size = f.metadata().map_err(io(path))?.len();
    if size > MAX_DOCUMENT_BYTES {
        return Ok(None);
    }
    let mut bytes = head.to_vec();
    f.read_to_end(&mut bytes).map_err(io(path))?;
    let summary =
        agentshape_core::decode::decode_bytes(&bytes, Format::Auto, &DecodeOptions::default());
    Ok((summary.format == Format::GeminiChat).then_some((summary.format, summary)))
}

impl Importer {
    /// An importer with every mark of `store` loaded (one query).
    ///
    /// # Errors
    /// A profile schema that does not compile; the store cannot be read.
    pub fn new(store: &dyn Store, opts: ImportOptions) -> Result<Importer> {
        let validator = match &opts.profile {
            Some(p) => Some(Validator::new(&p.schema)?),
            None => None,
        };
        let mut importer = Importer {
            opts,
            validator,
            marks: HashMap::new(),
            owners: HashMap::new(),
            door: store.masker().cloned(),
        };
        for mark in store.native_marks()? {
            importer.remember(mark);
        }
        // A usage pass's file owns its session id as an imported one does,
        // so `import` stores it under the id the pass gave (Note [Usage pass]).
        for mark in store.usage_marks()? {
            importer.owners.entry(mark.session_id).or_insert(mark.path);
        }
        Ok(importer)
    }

    fn remember(&mut self, mut mark: NativeMark) {
        mark.reset = false;
        self.owners
            .insert(mark.session_id.clone(), mark.path.clone());
        self.marks.insert(mark.path.clone(), mark);
    }

    /// The mark of a file, as known to this importer (`path` as
    /// [`Importer::key_of`] gives it).
    pub fn mark(&self, path: &str) -> Option<&NativeMark> {
        self.marks.get(path)
    }

    /// A file's path as the store keeps it, the key of its marks and the
    /// path reports name: masked text when the store masks (store's Note
    /// \[Names and ids\]), so a secret in a folder name is neither stored
    /// nor printed, and the mark is found again.
    pub fn key_of(&self, path: &Path) -> String {
        let raw = path.display().to_string();
        match &self.door {
            Some(m) => m.mask_str(&raw).text.into_owned(),
            None => raw,
        }
    }

    /// A session id as the store keeps it (core's Note \[Safe ids\]).
    fn safe(&self, id: String) -> String {
        match &self.door {
            Some(m) => match m.safe_id(&id) {
                std::borrow::Cow::Owned(safe) => safe,
                std::borrow::Cow::Borrowed(_) => id,
            },
            None => id,
        }
    }

    /// `stat` `path` and import it.
    ///
    /// # Errors
    /// As [`Importer::import`]; a file that cannot be `stat`ed.
    pub fn import_path(&mut self, store: &mut dyn Store, path: &Path) -> Result<FileReport> {
        let meta = std::fs::metadata(path).map_err(io(path))?;
        self.import(
            store,
            &Candidate {
                path: path.to_owned(),
                stat: FileStat::of(&meta),
                agent: None,
            },
        )
    }

    /// Import one file (Note \[Incremental import\]).
    ///
    /// # Errors
    /// The store cannot be written; the file cannot be read (a file that is
    /// no session file is a skipped report, not an error).
    pub fn import(&mut self, store: &mut dyn Store, file: &Candidate) -> Result<FileReport> {
        if let Some(report) = self.import_once(store, file)? {
            return Ok(report);
        }
        // See Note [Two importers]: another importer stored this file first.
        let key = self.key_of(&file.path);
        self.reload(&*store, &key)?;
        Ok(self.import_once(store, file)?.unwrap_or_else(|| {
            FileReport::skipped(
                &key,
                "another importer is writing this file now; the next pass takes it".to_owned(),
            )
        }))
    }

    /// The stored mark of `key`, in place of the one this importer had.
    fn reload(&mut self, store: &dyn Store, key: &str) -> Result<()> {
        match store.native_mark(key)? {
            Some(mark) => self.remember(mark),
            None => {
                if let Some(old) = self.marks.remove(key) {
                    self.owners.remove(&old.session_id);
                }
            }
        }
        Ok(())
    }

    /// [`Importer::import`] once; `None` when the store's mark was not the
    /// one this importer had (Note \[Two importers\]).
    fn import_once(
        &mut self,
        store: &mut dyn Store,
        file: &Candidate,
    ) -> Result<Option<FileReport>> {
        let key = self.key_of(&file.path);
        let st = file.stat;
        let Some(m) = self.marks.get(&key) else {
            return self.pass(store, file, &key, None, false);
        };
        if let Some(want) = self.opts.agent
            && want.as_str() != m.agent
        {
            return Ok(Some(FileReport::skipped(
                &key,
                format!("a {} session, not {}", m.agent, want.as_str()),
            )));
        }
        let same_file = m.dev == st.dev && m.inode == st.inode;
        if describes(m, &st) {
            return Ok(Some(FileReport {
                session_id: Some(m.session_id.clone()),
                agent: Some(m.agent.clone()),
                format: Some(format_of(&m.agent)),
                ..FileReport::unchanged(&key)
            }));
        }
        if same_file && st.size >= m.offset && m.agent != Agent::Gemini.as_str() {
            let prev = m.clone();
            self.pass(store, file, &key, Some(&prev), false)
        } else {
            self.pass(store, file, &key, None, true)
        }
    }

    /// Read a file: whole (`prev` `None`; `replaced` drops the rows of an
    /// earlier reading) or grown past `prev`.
    fn pass(
        &mut self,
        store: &mut dyn Store,
        file: &Candidate,
        key: &str,
        prev: Option<&NativeMark>,
        replaced: bool,
    ) -> Result<Option<FileReport>> {
        let mut f = open(&file.path)?;
        let mut head = Vec::with_capacity(64 * 1024);
        (&mut f)
            .take(PROBE_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(io(&file.path))?;
        let (format, summary) = match probe(&head) {
            Some(p) => (p.format, p.summary),
            None => match document(&mut f, &head, &file.path)? {
                Some(found) => found,
                None if prev.is_some() => {
                    // It was a session file: rewritten as something else.
                    return self.pass(store, file, key, None, true);
                }
                None => return Ok(Some(FileReport::skipped(key, not_a_session(&head)))),
            },
        };
        let agent = agent_of(format);
        if let Some(want) = self.opts.agent
            && want != agent
        {
            return Ok(Some(FileReport::skipped(
                key,
                format!("a {} session, not {}", agent.as_str(), want.as_str()),
            )));
        }
        let (fresh_id, parent) = self.ids(key, &file.path, &summary);
        let id_warning = prev
            .is_none()
            .then(|| unusable_id(key, &summary, &fresh_id))
            .flatten();
        let id = prev.map_or(fresh_id, |m| m.session_id.clone());
        let parent = parent.filter(|p| *p != id);
        let mark = NativeMark {
            path: key.to_owned(),
            session_id: id.clone(),
            agent: agent.as_str().to_owned(),
            dev: file.stat.dev,
            inode: file.stat.inode,
            size: file.stat.size,
            offset: prev.map_or(0, |m| m.offset),
            mtime_ms: file.stat.mtime_ms,
            lines: prev.map_or(0, |m| m.lines),
            updated_at: String::new(),
            reset: replaced,
            expect_offset: prev.map(|m| m.offset),
        };
        let change = match (prev, replaced) {
            (Some(_), _) => Change::Grown,
            (None, true) => Change::Replaced,
            (None, false) => Change::New,
        };
        let opts = self.read_options(&mark, file.stat.mtime_ms);
        if format == Format::GeminiChat {
            drop(f);
            let bytes = crate::infile::read(&file.path, MAX_DOCUMENT_BYTES)
                .map_err(Error::input("session file"))?;
            let pass = read_document(&bytes, format, &opts);
            let saved = self.save(
                store,
                (&file.path, key),
                pass,
                mark,
                parent,
                format,
                change,
                0,
            );
            return with_warning(saved, id_warning);
        }
        f.rewind().map_err(io(&file.path))?;
        let mut reset = mark.reset;
        let mut expect = mark.expect_offset;
        let mut conflict = false;
        let mut batched = 0u64;
        let provisional = {
            let mut r = Session::new(&id, &opts.fallback_time, "running");
            r.agent = Some(agent.as_str().to_owned());
            r.parent_id.clone_from(&parent);
            r.source_path = Some(file.path.display().to_string());
            r
        };
        // See Note [Reading beside writing]: the file is read and decoded on a
        // thread of its own while this one writes the batches.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1);
        let opts = &opts;
        let outcome = std::thread::scope(|scope| -> Result<Outcome> {
            let reader = scope.spawn(move || {
                read_lines(f, format, opts, &mut |batch: Batch| {
                    tx.send(batch).map_err(|_| Error::Io {
                        context: format!("importing `{key}`"),
                        source: std::io::Error::other("the store writer stopped"),
                    })
                })
            });
            let mut saved: Result<()> = Ok(());
            for batch in &rx {
                let mut m = mark.clone();
                m.offset = batch.offset;
                m.lines = batch.lines;
                m.reset = reset;
                m.expect_offset = expect;
                m.updated_at = time::now();
                match store.save_native(&provisional, &batch.entries, &m) {
                    Ok(r) if r.conflict => {
                        conflict = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        saved = Err(e.into());
                        break;
                    }
                }
                batched += batch.entries.len() as u64;
                reset = false;
                expect = Some(batch.offset);
            }
            // A store failure (or conflict) stops the reader at its next batch.
            drop(rx);
            let read = reader.join().map_err(|_| Error::Io {
                context: format!("importing `{key}`"),
                source: std::io::Error::other("the reader thread panicked"),
            })?;
            saved?;
            read
        });
        if conflict {
            return Ok(None);
        }
        match outcome? {
            Outcome::Done(pass) => {
                let mut m = mark;
                m.reset = reset;
                m.expect_offset = expect;
                let saved = self.save(
                    store,
                    (&file.path, key),
                    *pass,
                    m,
                    parent,
                    format,
                    change,
                    batched,
                );
                with_warning(saved, id_warning)
            }
            // Rewritten in place: read it whole, once.
            Outcome::Rewritten if prev.is_some() => self.pass(store, file, key, None, true),
            Outcome::Rewritten => Err(Error::Io {
                context: format!("reading `{key}`"),
                source: std::io::Error::other("the file changed while it was read"),
            }),
        }
    }

    /// The session id and parent of a file (Note \[Native session ids\]).
    fn ids(&self, key: &str, path: &Path, summary: &RunSummary) -> (String, Option<String>) {
        let info = summary.session.as_deref();
        let own = info
            .and_then(|i| i.session_id.clone())
            .or_else(|| summary.session_id.clone())
            .map(|id| self.safe(id));
        let id = match own {
            Some(id)
                if check_session_id(&id).is_ok()
                    && self.owners.get(&id).is_none_or(|p| p == key) =>
            {
                id
            }
            _ => derived_id(key),
        };
        let from_folder = || {
            if !is_subagent_file(path) {
                return None;
            }
            path.parent()?
                .parent()?
                .file_name()?
                .to_str()
                .map(str::to_owned)
        };
        let parent = info
            .and_then(|i| i.parent_session_id.clone())
            .or_else(from_folder)
            .map(|p| self.safe(p))
            .filter(|p| check_session_id(p).is_ok());
        (id, parent)
    }

    fn read_options(&self, mark: &NativeMark, mtime_ms: i64) -> ReadOptions {
        ReadOptions {
            session_id: mark.session_id.clone(),
            from_line: if mark.reset { 0 } else { mark.lines },
            from_offset: if mark.reset { 0 } else { mark.offset },
            batch_rows: self.opts.batch_rows,
            max_body: self.opts.max_body,
            fallback_time: time::format_ms(mtime_ms),
            decode: DecodeOptions {
                keep_tool_results: true,
                ..DecodeOptions::default()
            },
        }
    }

    /// Store the session of a whole pass with its last rows and the mark,
    /// in one transaction; then the inline sub-agents' rows.
    #[allow(clippy::too_many_arguments)]
    fn save(
        &mut self,
        store: &mut dyn Store,
        (path, key): (&Path, &str),
        mut pass: Pass,
        mut mark: NativeMark,
        parent: Option<String>,
        format: Format,
        change: Change,
        batched: u64,
    ) -> Result<Option<FileReport>> {
        let lines_before = if mark.reset || change != Change::Grown {
            0
        } else {
            mark.lines
        };
        mark.offset = pass.offset;
        mark.lines = pass.lines;
        mark.updated_at = time::now();
        let (mut record, unpriced, valid) = self.record(path, &pass, &mark, parent);
        let children = self.inline_children(path, &record, &pass.summary);
        for c in &children {
            own_part_only(&mut record, c);
        }
        let rows = std::mem::take(&mut pass.tail);
        if store.save_native(&record, &rows, &mark)?.conflict {
            return Ok(None);
        }
        for c in &children {
            if !store.has_session(&c.id)? {
                store.write_session(c)?;
            }
        }
        let report = FileReport {
            path: key.to_owned(),
            session_id: Some(record.id.clone()),
            agent: Some(mark.agent.clone()),
            format: Some(format),
            change,
            lines_added: mark.lines.saturating_sub(lines_before),
            lines_skipped: pass.skipped,
            rows_added: batched + rows.len() as u64,
            status: Some(record.status.to_string()),
            skipped: None,
            unpriced_models: unpriced,
            valid,
            error: None,
            warnings: clamped_warnings(key, &pass.clamped),
        };
        self.remember(mark);
        Ok(Some(report))
    }

    /// The session row of a pass: what the summary says, the cost from the
    /// price table, the final message extracted (and validated with a
    /// profile). Also the unpriced models and the verdict's `valid`.
    fn record(
        &self,
        path: &Path,
        pass: &Pass,
        mark: &NativeMark,
        parent: Option<String>,
    ) -> (Session, Vec<String>, Option<bool>) {
        let s = &pass.summary;
        let info = s.session.as_deref();
        let started = info
            .and_then(|i| stamp(i.started_at.as_deref()))
            .unwrap_or_else(|| time::format_ms(mark.mtime_ms));
        let status = if s.error.is_some() {
            Status::Error
        } else {
            Status::Completed
        };
        let mut r = record::from_summary(&mark.session_id, &started, status, s);
        r.parent_id = parent;
        r.agent = Some(mark.agent.clone());
        // Raw: the store's door masks it and counts what it masked.
        r.source_path = Some(path.display().to_string());
        r.profile.clone_from(&self.opts.profile_label);
        if r.model.is_none() {
            r.model = info.and_then(|i| i.models.last().cloned());
        }
        let mut unpriced = Vec::new();
        if let Some(i) = info {
            r.agent_version.clone_from(&i.agent_version);
            r.project.clone_from(&i.project);
            r.git_branch.clone_from(&i.git_branch);
            r.ended_at = stamp(i.ended_at.as_deref());
            r.num_turns = Some(count(i.turns));
            record::set_tokens(&mut r, &i.tokens);
            let estimate = self.opts.prices.estimate(
                i.tokens_by_model
                    .iter()
                    .map(|(m, t)| (m.as_str(), Tokens::from(t))),
            );
            r.cost_usd = estimate.cost_usd;
            r.cost_estimated = estimate.cost_usd.is_some();
            unpriced = estimate.unpriced;
            r.usage = usage_records(&mark.session_id, &started, &i.usage);
            let mut tools: Vec<String> = i
                .tool_calls
                .keys()
                .chain(i.tool_errors.keys())
                .cloned()
                .collect();
            tools.sort_unstable();
            tools.dedup();
            r.tools = tools
                .into_iter()
                .map(|tool| ToolCount {
                    calls: i.tool_calls.get(&tool).copied().unwrap_or(0),
                    errors: i.tool_errors.get(&tool).copied().unwrap_or(0),
                    tool,
                })
                .collect();
        }
        if r.ended_at.is_none() {
            r.ended_at = Some(started.clone());
        }
        if let (Some(a), Some(b)) = (
            time::parse_ms(&r.started_at),
            r.ended_at.as_deref().and_then(time::parse_ms),
        ) {
            r.duration_ms = (b >= a).then_some(b - a);
        }
        let profile = self.opts.profile.as_ref();
        let extraction = extract_run(
            s,
            &ExtractOptions {
                validator: self.validator.as_ref(),
                markers: profile.and_then(Profile::grammar),
                coerce: profile.is_some_and(|p| p.coerce),
                methods: profile.map(|p| p.methods).unwrap_or_default(),
            },
        );
        let valid = profile.map(|_| extraction.valid);
        // Checked only with a profile: without one there is no verdict.
        let verdict = profile.map(|_| Verdict::of(&extraction));
        Extracted {
            method: extraction.method.as_str().to_owned(),
            value: extraction.value,
            verdict,
        }
        .apply(&mut r);
        if r.summary.is_none() {
            r.summary.clone_from(&pass.first_prompt);
        }
        (r, unpriced, valid)
    }

    /// Child rows for the sub-agents a Claude Code file holds inline
    /// (Note \[Native session ids\]), each with its own model, tokens and
    /// cost (Note \[Inline sub-agents\]); one with its own file is stored
    /// from it.
    fn inline_children(&self, path: &Path, parent: &Session, summary: &RunSummary) -> Vec<Session> {
        let Some(info) = summary.session.as_deref() else {
            return Vec::new();
        };
        if parent.agent.as_deref() != Some(Agent::Claude.as_str()) || is_subagent_file(path) {
            return Vec::new();
        }
        let folder = path.with_extension("");
        let mut out = Vec::new();
        for sub in &info.subagents {
            let raw = if sub.id.starts_with("agent-") {
                sub.id.clone()
            } else {
                format!("agent-{}", sub.id)
            };
            let file_of_its_own = folder
                .join("subagents")
                .join(format!("{raw}.jsonl"))
                .is_file();
            let id = self.safe(raw);
            if check_session_id(&id).is_err() || id == parent.id || file_of_its_own {
                continue;
            }
            let mut c = Session::new(&id, &parent.started_at, "completed");
            c.parent_id = Some(parent.id.clone());
            c.agent.clone_from(&parent.agent);
            c.agent_version.clone_from(&parent.agent_version);
            c.model = sub.model.clone().or_else(|| parent.model.clone());
            c.project.clone_from(&parent.project);
            c.git_branch.clone_from(&parent.git_branch);
            c.ended_at.clone_from(&parent.ended_at);
            c.source_path = Some(path.display().to_string());
            c.summary = Some(format!(
                "sub-agent {} ({} lines in its parent's file)",
                sub.id, sub.lines
            ));
            record::set_tokens(&mut c, &sub.tokens);
            if let Some(model) = &c.model
                && !sub.tokens.is_zero()
            {
                let estimate = self
                    .opts
                    .prices
                    .estimate(std::iter::once((model.as_str(), Tokens::from(&sub.tokens))));
                c.cost_usd = estimate.cost_usd;
                c.cost_estimated = estimate.cost_usd.is_some();
            }
            out.push(c);
        }
        out
    }
}

/// Note \[Inline sub-agents\]: a Claude Code 1.0.x sub-agent's lines sit
/// in its parent's file (`isSidechain`). Its child row carries its own
/// model, tokens and cost, and the parent's row its own part only, as for a
/// 2.x sub-agent with a file of its own: a sum over session rows (`stats`,
/// the overview's days) counts every token once, and the page shows each
/// agent's own figures. The model calls themselves stay the parent's file's
/// (`usage_calls`, marked `sidechain`), as ccusage counts them, so `usage`
/// reports are unchanged. A child row already stored is not written again
/// (a grown 1.0.x file keeps its first figures; 1.0.x files no longer grow).
fn own_part_only(parent: &mut Session, child: &Session) {
    // Never below zero: a child's figures larger than its parent's are a
    // bad file, not a refund.
    let less = |p: i64, c: i64| p.saturating_sub(c).max(0);
    parent.input_tokens = less(parent.input_tokens, child.input_tokens);
    parent.output_tokens = less(parent.output_tokens, child.output_tokens);
    parent.cache_read_tokens = less(parent.cache_read_tokens, child.cache_read_tokens);
    parent.cache_write_tokens = less(parent.cache_write_tokens, child.cache_write_tokens);
    if let (Some(p), Some(c)) = (parent.cost_usd, child.cost_usd) {
        parent.cost_usd = Some((p - c).max(0.0));
    }
}

/// One warning per clamped line listed, naming the file and the line, and
/// one for the rest (Note \[Absurd usage\] in `read`).
fn clamped_warnings(key: &str, clamped: &Clamped) -> Vec<String> {
    let mut out: Vec<String> = clamped
        .first
        .iter()
        .map(|(line, worst)| {
            format!(
                "{key}:{line}: a usage count of {worst} tokens, over the {MAX_CALL_TOKENS} a \
                 model call may use; counted as {MAX_CALL_TOKENS}"
            )
        })
        .collect();
    let rest = clamped.lines.saturating_sub(clamped.first.len() as u64);
    if rest > 0 {
        out.push(format!(
            "{key}: {rest} more lines with a usage count over {MAX_CALL_TOKENS} tokens, clamped"
        ));
    }
    out
}

/// A session's model calls as the store keeps them (Note \[Message usage\]
/// in core's `summary::native`): a call its agent names across files
/// (Claude's message and request ids) is `msg:<id>:<request>`, so the copy
/// a resumed session holds is the same row; any other is
/// `<session>#<n>`. A call with no time of its own takes the session's
/// start.
pub fn usage_records(session: &str, started: &str, calls: &[MessageUsage]) -> Vec<UsageRecord> {
    let start = time::parse_ms(started).unwrap_or(0);
    let mut local = 0u64;
    calls
        .iter()
        .map(|c| {
            let key = if let Some(k) = &c.key {
                format!("msg:{k}")
            } else {
                local += 1;
                format!("{session}#{local}")
            };
            UsageRecord {
                key,
                at_ms: c.at.as_deref().and_then(time::parse_ms).unwrap_or(start),
                model: c.model.clone().unwrap_or_default(),
                sidechain: c.sidechain,
                tokens: c.tokens,
            }
        })
        .collect()
}

/// Every candidate imported in turn; a file that fails is reported (as
/// skipped, with the error) and the others go on. `each` sees every report.
///
/// # Errors
/// Only a store failure, which would fail every other file too.
pub fn import_all(
    importer: &mut Importer,
    store: &mut dyn Store,
    files: &[Candidate],
    each: &mut dyn FnMut(&FileReport),
) -> Result<Vec<FileReport>> {
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let report = match importer.import(store, file) {
            Ok(r) => r,
            Err(Error::Store(e)) => return Err(Error::Store(e)),
            Err(e) => FileReport::failed(&file.path.display().to_string(), e.to_string()),
        };
        each(&report);
        out.push(report);
    }
    Ok(out)
}

/// The paths of `files` under `PathBuf`, for messages.
pub fn paths(files: &[Candidate]) -> Vec<PathBuf> {
    files.iter().map(|c| c.path.clone()).collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use agentshape_store::SqliteStore;

    use super::*;

    /// One Claude Code 2.1 line of session `sess-1`.
    fn line(n: u32, kind: &str) -> String {
        let ts = format!("2026-01-01T00:00:{:02}.000Z", n % 60);
        let common = format!(
            r#""parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/srv/app","sessionId":"sess-1","version":"2.1.231","gitBranch":"main","uuid":"u{n}","timestamp":"{ts}""#
        );
        match kind {
            "user" => format!(
                r#"{{{common},"type":"user","message":{{"role":"user","content":"question {n}"}}}}"#
            ),
            _ => format!(
                r#"{{{common},"type":"assistant","message":{{"id":"msg_{n}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"answer {n}"}}],"stop_reason":"end_turn","usage":{{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":1}}}},"requestId":"req_{n}"}}"#
            ),
        }
    }

    fn lines(from: u32, to: u32) -> String {
        (from..to)
            .map(|n| line(n, if n % 2 == 0 { "user" } else { "assistant" }) + "\n")
            .collect()
    }

    fn feed_lines(store: &SqliteStore) -> Vec<u64> {
        store
            .feed_after(0, 10_000)
            .unwrap()
            .iter()
            .filter(|r| r.kind == "event")
            .map(|r| {
                let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
                v["line"].as_u64().unwrap()
            })
            .collect()
    }

    fn setup() -> (tempfile::TempDir, PathBuf, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sess-1.jsonl");
        (dir, path, SqliteStore::open_in_memory().unwrap())
    }

    fn import(store: &mut SqliteStore, path: &Path) -> FileReport {
        let mut imp = Importer::new(store, ImportOptions::default()).unwrap();
        imp.import_path(store, path).unwrap()
    }

    #[test]
    fn new_then_unchanged_then_grown_adds_only_the_new_lines() {
        let (_d, path, mut store) = setup();
        std::fs::write(&path, lines(0, 4)).unwrap();
        let r = import(&mut store, &path);
        assert_eq!(r.change, Change::New, "{r:?}");
        assert_eq!(r.session_id.as_deref(), Some("sess-1"));
        assert_eq!(r.lines_added, 4);
        assert_eq!(r.status.as_deref(), Some("completed"));
        let first = feed_lines(&store);
        assert!(!first.is_empty());
        assert!(first.iter().all(|l| (1..=4).contains(l)), "{first:?}");

        let r = import(&mut store, &path);
        assert_eq!(
            (r.change, r.lines_added, r.rows_added),
            (Change::Unchanged, 0, 0)
        );
        assert_eq!(feed_lines(&store), first);

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(lines(4, 6).as_bytes()).unwrap();
        // Half a line: not read until its newline comes.
        let half = line(6, "user");
        f.write_all(&half.as_bytes()[..20]).unwrap();
        f.flush().unwrap();
        let r = import(&mut store, &path);
        assert_eq!((r.change, r.lines_added), (Change::Grown, 2), "{r:?}");
        let after = feed_lines(&store);
        assert_eq!(&after[..first.len()], &first[..]);
        assert!(
            after[first.len()..].iter().all(|l| (5..=6).contains(l)),
            "{after:?}"
        );
        let mark = store
            .native_mark(&path.display().to_string())
            .unwrap()
            .unwrap();
        assert_eq!(mark.lines, 6);
        assert_eq!(mark.offset, lines(0, 6).len() as u64);

        f.write_all(format!("{}\n", &half[20..]).as_bytes())
            .unwrap();
        let r = import(&mut store, &path);
        assert_eq!((r.change, r.lines_added), (Change::Grown, 1));
        assert_eq!(*feed_lines(&store).last().unwrap(), 7);
        let turns: Vec<Vec<String>> = store
            .connection()
            .prepare("SELECT num_turns, input_tokens, cache_read_tokens FROM sessions")
            .unwrap()
            .query_map([], |r| {
                Ok(vec![
                    r.get::<_, i64>(0)?.to_string(),
                    r.get::<_, i64>(1)?.to_string(),
                    r.get::<_, i64>(2)?.to_string(),
                ])
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Four user prompts, three assistant messages counted once each.
        assert_eq!(turns, vec![vec!["4", "30", "300"]]);
    }

    #[test]
    fn an_inline_sub_agent_gets_its_own_model_and_tokens_and_the_parent_keeps_its_own() {
        let (dir, _, mut store) = setup();
        let path = dir.path().join("sess-1.jsonl");
        std::fs::write(
            &path,
            include_str!("../../../core/tests/fixtures/native/claude-1.0-session.jsonl"),
        )
        .unwrap();
        let r = import(&mut store, &path);
        assert_eq!(r.session_id.as_deref(), Some("sess-1"), "{r:?}");
        let rows: Vec<(String, Option<String>, i64, i64, i64)> = store
            .connection()
            .prepare(
                "SELECT id, model, input_tokens, output_tokens, cache_write_tokens
                 FROM sessions ORDER BY id",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let child = rows
            .iter()
            .find(|r| r.0 == "agent-s1")
            .expect("the inline child");
        assert_eq!(
            (child.1.as_deref(), child.2, child.3, child.4),
            (Some("claude-3-5-haiku-20241022"), 4, 8, 10),
            "{rows:?}"
        );
        // The file's calls, all in `usage_calls` under the parent, sum to
        // the parent's row plus its child's: every token once.
        let calls: (i64, i64) = store
            .connection()
            .query_row(
                "SELECT SUM(input_tokens), SUM(output_tokens) FROM usage_calls",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let parent = rows.iter().find(|r| r.0 == "sess-1").unwrap();
        assert_eq!((parent.2 + child.2, parent.3 + child.3), calls, "{rows:?}");
        assert!(parent.2 > 0 && parent.3 > 0, "{rows:?}");
    }

    #[test]
    fn truncated_and_replaced_files_are_read_whole_once() {
        let (dir, path, mut store) = setup();
        std::fs::write(&path, lines(0, 6)).unwrap();
        import(&mut store, &path);
        let before = feed_lines(&store).len();

        // Truncated (smaller than the mark's offset).
        std::fs::write(&path, lines(0, 2)).unwrap();
        let r = import(&mut store, &path);
        assert_eq!((r.change, r.lines_added), (Change::Replaced, 2), "{r:?}");
        let rows = feed_lines(&store);
        assert!(
            rows.len() < before && rows.iter().all(|l| *l <= 2),
            "{rows:?}"
        );
        assert_eq!(import(&mut store, &path).change, Change::Unchanged);

        // Replaced by another file (another inode), then rewritten in
        // place with other lines of the same length at line 2's end.
        let other = dir.path().join("new.jsonl");
        std::fs::write(&other, lines(0, 3)).unwrap();
        std::fs::rename(&other, &path).unwrap();
        let r = import(&mut store, &path);
        assert_eq!((r.change, r.lines_added), (Change::Replaced, 3), "{r:?}");
        assert!(feed_lines(&store).iter().all(|l| *l <= 3));
        let mut text = lines(0, 3);
        text.insert_str(0, &format!("{}\n", line(40, "user")));
        std::fs::write(&path, text).unwrap();
        let r = import(&mut store, &path);
        assert_eq!((r.change, r.lines_added), (Change::Replaced, 4), "{r:?}");
        assert!(feed_lines(&store).contains(&1));
        assert_eq!(store.native_marks().unwrap().len(), 1);
    }

    #[test]
    fn big_files_are_stored_in_batches_with_the_mark_moving() {
        let (_d, path, mut store) = setup();
        std::fs::write(&path, lines(0, 50)).unwrap();
        let opts = ImportOptions {
            batch_rows: 7,
            ..ImportOptions::default()
        };
        let mut imp = Importer::new(&store, opts).unwrap();
        let r = imp.import_path(&mut store, &path).unwrap();
        assert_eq!(r.lines_added, 50);
        let rows = feed_lines(&store);
        assert_eq!(rows.len() as u64, r.rows_added);
        let mut sorted = rows.clone();
        sorted.sort_unstable();
        assert_eq!(rows, sorted, "rows in line order");
    }

    #[test]
    fn a_file_that_is_no_session_is_skipped_and_another_agent_filtered() {
        let (dir, path, mut store) = setup();
        let junk = dir.path().join("x.jsonl");
        std::fs::write(&junk, "{\"hello\":1}\n").unwrap();
        let r = import(&mut store, &junk);
        assert_eq!(r.change, Change::Skipped);
        assert!(r.skipped.unwrap().contains("not a Claude Code"));
        std::fs::write(&path, lines(0, 2)).unwrap();
        let mut imp = Importer::new(
            &store,
            ImportOptions {
                agent: Some(Agent::Codex),
                ..ImportOptions::default()
            },
        )
        .unwrap();
        let r = imp.import_path(&mut store, &path).unwrap();
        assert_eq!(r.change, Change::Skipped);
        assert!(!store.has_session("sess-1").unwrap());
    }

    /// Issue 40 §5: a file whose first line is past the probe (a 1 MB
    /// `sessionId`) is skipped saying the limit and the field.
    #[test]
    fn a_first_line_past_the_probe_is_skipped_naming_the_limit_and_field() {
        let (dir, _, mut store) = setup();
        let big = dir.path().join("big.jsonl");
        let line = format!(
            "{{\"type\":\"user\",\"sessionId\":\"{}\",\"uuid\":\"u1\"}}\n",
            "s".repeat(1 << 20)
        );
        std::fs::write(&big, line).unwrap();
        let r = import(&mut store, &big);
        assert_eq!(r.change, Change::Skipped);
        assert_eq!(
            r.skipped.as_deref(),
            Some(
                "its first line is longer than the 262144 bytes read to tell a session file \
                 (its field `sessionId` alone runs past them)"
            )
        );
        assert_eq!(field_cut(br#"{"a":1,"b":{"c":"xx"#), Some("b".to_owned()));
        assert_eq!(field_cut(br#"{"a":1,"#), None);
        assert_eq!(field_cut(b"[1,2"), None);
    }

    /// Note [Two importers]: a second importer whose mark is stale (it
    /// loaded the marks before the first one stored the new lines) stores
    /// nothing twice.
    #[test]
    fn two_importers_of_one_grown_file_store_its_lines_once() {
        let (_d, path, mut store) = setup();
        std::fs::write(&path, lines(0, 4)).unwrap();
        import(&mut store, &path);
        let mut first = Importer::new(&store, ImportOptions::default()).unwrap();
        let mut second = Importer::new(&store, ImportOptions::default()).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(lines(4, 6).as_bytes()).unwrap();
        let one = first.import_path(&mut store, &path).unwrap();
        assert_eq!((one.change, one.lines_added), (Change::Grown, 2));
        let rows = feed_lines(&store);
        let two = second.import_path(&mut store, &path).unwrap();
        assert_eq!(two.change, Change::Unchanged, "{two:?}");
        assert_eq!(feed_lines(&store), rows);
        // And a new file both see for the first time.
        let other = path.with_file_name("sess-1-copy.jsonl");
        std::fs::write(&other, lines(0, 2)).unwrap();
        let mut third = Importer::new(&store, ImportOptions::default()).unwrap();
        let mut fourth = Importer::new(&store, ImportOptions::default()).unwrap();
        assert_eq!(
            third.import_path(&mut store, &other).unwrap().change,
            Change::New
        );
        let before = feed_lines(&store).len();
        assert_eq!(
            fourth.import_path(&mut store, &other).unwrap().change,
            Change::Unchanged
        );
        assert_eq!(feed_lines(&store).len(), before);
    }

    #[test]
    fn derived_ids_are_stable_and_valid() {
        let a = derived_id("/a/b.jsonl");
        assert_eq!(a, derived_id("/a/b.jsonl"));
        assert_ne!(a, derived_id("/a/c.jsonl"));
        assert!(check_session_id(&a).is_ok());
    }
}
