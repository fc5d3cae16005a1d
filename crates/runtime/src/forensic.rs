//! The forensic log: every raw line an agent printed, written before anything
//! else looks at it.
//!
//! Beside `<log-dir>/<session-id>.ndjson` sit `<session-id>.stderr.log` (the
//! agent's stderr, verbatim) and `<session-id>.meta.json` (how the session was
//! run and how it ended), which is what `agentshape ingest` needs to rebuild the
//! session exactly.
//!
//! Note \[Write before decode\]: each stdout line is appended with one
//! `write_all` of the line and its newline on an unbuffered file, so it is in
//! the kernel before the decoder, the hub or the store see it. A crash of
//! agentshape itself therefore loses nothing the agent printed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// How a session was run and how it ended: the sidecar `<id>.meta.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Session id.
    pub id: String,
    /// Parent session (escalation).
    #[serde(default)]
    pub parent_id: Option<String>,
    /// Tier.
    #[serde(default = "one")]
    pub tier: u32,
    /// Profile name.
    #[serde(default)]
    pub profile: Option<String>,
    /// Agent kind (`claude`, `codex`, `raw`, `replay`).
    #[serde(default)]
    pub agent: Option<String>,
    /// The model the session was configured with (the agent's report wins in the store).
    #[serde(default)]
    pub model: Option<String>,
    /// The program and arguments (or the replayed file).
    #[serde(default)]
    pub command: Vec<String>,
    /// Start time.
    pub started_at: String,
    /// End time; `None` while running.
    #[serde(default)]
    pub ended_at: Option<String>,
    /// `running`, then the final status.
    pub status: String,
    /// The agent's exit code.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The signal that ended the agent.
    #[serde(default)]
    pub signal: Option<i32>,
    /// An error of the process itself (timeout, not found, killed).
    #[serde(default)]
    pub process_error: Option<String>,
    /// Its category.
    #[serde(default)]
    pub process_error_category: Option<String>,
    /// The legacy `handoff.json` consumed by this session, kept so ingest can
    /// rebuild what the (deleted) file contributed.
    #[serde(default)]
    pub handoff: Option<Value>,
    /// The forensic log path as recorded in the store.
    #[serde(default)]
    pub log_path: Option<String>,
    /// For escalated sessions: the services escalated for.
    #[serde(default)]
    pub escalated_for: Vec<String>,
}

fn one() -> u32 {
    1
}

/// An open forensic log.
#[derive(Debug)]
pub struct ForensicLog {
    dir: PathBuf,
    id: String,
    out: File,
    buf: Vec<u8>,
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

impl ForensicLog {
    /// Create `<dir>/<id>.ndjson` (and `dir`), truncating nothing: an existing
    /// log is appended to.
    ///
    /// # Errors
    /// When the directory or file cannot be created.
    pub fn create(dir: &Path, id: &str) -> Result<Self> {
        fs::create_dir_all(dir).map_err(io(format!("creating log dir `{}`", dir.display())))?;
        let path = dir.join(format!("{id}.ndjson"));
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(format!("creating forensic log `{}`", path.display())))?;
        Ok(ForensicLog {
            dir: dir.to_owned(),
            id: id.to_owned(),
            out,
            buf: Vec::with_capacity(8 << 10),
        })
    }

    /// The path of the stdout log.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.ndjson", self.id))
    }

    /// The path of the stderr log.
    pub fn stderr_path(&self) -> PathBuf {
        self.dir.join(format!("{}.stderr.log", self.id))
    }

    /// The path of the meta sidecar.
    pub fn meta_path(&self) -> PathBuf {
        meta_path_of(&self.path())
    }

    /// Append one raw line (without its terminator) and push it to the kernel.
    ///
    /// # Errors
    /// When the write fails.
    pub fn append(&mut self, line: &[u8]) -> Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(line);
        self.buf.push(b'\n');
        self.out.write_all(&self.buf).map_err(io(format!(
            "writing forensic log `{}`",
            self.path().display()
        )))
    }

    /// Append a piece of a line longer than the reader's piece size, without
    /// a line end: the rest follows in more pieces and a final [`Self::append`].
    ///
    /// # Errors
    /// When the write fails.
    pub fn append_part(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(io(format!(
            "writing forensic log `{}`",
            self.path().display()
        )))
    }

    /// Write the meta sidecar (replacing it).
    ///
    /// # Errors
    /// When the write fails.
    pub fn write_meta(&self, meta: &SessionMeta) -> Result<()> {
        write_meta(&self.meta_path(), meta)
    }
}

/// The meta sidecar of a log path (`x.ndjson` → `x.meta.json`).
pub fn meta_path_of(log: &Path) -> PathBuf {
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    log.with_file_name(format!("{stem}.meta.json"))
}

/// Write a meta sidecar atomically (temp file + rename).
///
/// # Errors
/// When the write fails.
pub fn write_meta(path: &Path, meta: &SessionMeta) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(meta).unwrap_or_default();
    fs::write(&tmp, text).map_err(io(format!("writing `{}`", tmp.display())))?;
    fs::rename(&tmp, path).map_err(io(format!("writing `{}`", path.display())))
}

/// Read a meta sidecar; `None` when there is none or it does not parse.
pub fn read_meta(path: &Path) -> Option<SessionMeta> {
    let text = fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}
