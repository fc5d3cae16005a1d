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
//!
//! Note \[Log files are private and new\]: a log holds a whole transcript
//! (prompts, tool output, secrets an agent read). As ssh and gpg do, the log
//! folder is created 0700 (an existing folder keeps its mode) and every file
//! 0600, whatever the umask. A session id names files, so it must be a plain
//! file name ([`check_session_id`]: 1 to 128 of `[A-Za-z0-9._-]`, not
//! starting with `.`), or `../x` and `/tmp/x` would write outside the folder.
//! Each file is created new (`O_CREAT|O_EXCL`, plus `O_NOFOLLOW`): a reused id
//! never appends a second transcript to the first session's log, and a
//! symlink planted at a log path is refused, never followed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
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
    /// The signal that interrupted agentshape while the agent ran (status
    /// `interrupted`; `process`'s Note \[Interrupts\]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<i32>,
    /// Bytes of the agent's stderr beyond the cap, not kept
    /// (`process`'s Note \[Stderr cap\]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_dropped_bytes: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The longest session id: ids name files, and names stay well under `NAME_MAX`.
pub const MAX_SESSION_ID: usize = 128;

/// Check that `id` is a safe file name (Note \[Log files are private and new\]).
///
/// # Errors
/// [`Error::SessionId`] saying which rule is broken.
pub fn check_session_id(id: &str) -> Result<()> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.len() > MAX_SESSION_ID {
        "it is longer than 128 characters"
    } else if id.starts_with('.') {
        "it starts with `.`"
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        "it has a character outside [A-Za-z0-9._-]"
    } else {
        return Ok(());
    };
    Err(Error::SessionId {
        id: id.to_owned(),
        reason,
    })
}

/// Create a new private file (0600), refusing one that exists or a symlink.
fn create_private(path: &Path, append: bool) -> Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true)
        .append(append)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits());
    opts.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            Error::LogExists {
                path: path.display().to_string(),
            }
        } else {
            Error::Io {
                context: format!("creating `{}`", path.display()),
                source,
            }
        }
    })
}

/// Refuse `path` when anything (a file, a symlink, even a dangling one) is there.
fn refuse_existing(path: &Path) -> Result<()> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(Error::LogExists {
            path: path.display().to_string(),
        });
    }
    Ok(())
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
    /// Create `<dir>/<id>.ndjson` (and `dir`, 0700), new and private (Note
    /// \[Log files are private and new\]).
    ///
    /// # Errors
    /// [`Error::SessionId`] for an id that is not a safe file name,
    /// [`Error::LogExists`] when any of the session's files (or a symlink)
    /// is already there, and I/O errors.
    pub fn create(dir: &Path, id: &str) -> Result<Self> {
        check_session_id(id)?;
        if fs::symlink_metadata(dir).is_err() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io(format!("creating log dir `{}`", dir.display())))?;
        }
        let path = dir.join(format!("{id}.ndjson"));
        for other in [
            dir.join(format!("{id}.stderr.log")),
            dir.join(format!("{id}.meta.json")),
            dir.join(format!("{id}.meta.json.tmp")),
        ] {
            refuse_existing(&other)?;
        }
        let out = create_private(&path, true)?;
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

    /// Create the stderr log, new and private, for the agent's stderr.
    ///
    /// # Errors
    /// [`Error::LogExists`] when something is already there, and I/O errors.
    pub fn create_stderr(&self) -> Result<File> {
        create_private(&self.stderr_path(), false)
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

/// Write a meta sidecar atomically (a new private temp file, then rename:
/// `rename` replaces whatever is at `path`, a symlink included, and never
/// writes through it).
///
/// # Errors
/// When the write fails, or something other than our own leftover is at the
/// temp path.
pub fn write_meta(path: &Path, meta: &SessionMeta) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(meta).unwrap_or_default();
    // A temp file left by a crash is ours to replace; `remove_file` removes
    // a symlink itself, never its target, and `create_private` refuses one
    // planted in between.
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(Error::Io {
                context: format!("writing `{}`", tmp.display()),
                source,
            });
        }
    }
    let mut file = create_private(&tmp, false)?;
    file.write_all(&text)
        .map_err(io(format!("writing `{}`", tmp.display())))?;
    drop(file);
    fs::rename(&tmp, path).map_err(io(format!("writing `{}`", path.display())))
}

/// Read a meta sidecar; `None` when there is none, it does not parse, or it
/// is not a regular file of at most 16 MiB (Note [Regular files only] in
/// `infile`: a FIFO there is not waited on).
pub fn read_meta(path: &Path) -> Option<SessionMeta> {
    let text = crate::infile::read(path, crate::infile::MAX_CONFIG_BYTES).ok()?;
    serde_json::from_slice(&text).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn session_ids_are_plain_file_names() {
        for ok in [
            "a",
            "abc-DEF_1.2",
            "550e8400-e29b-41d4-a716-446655440000",
            &"x".repeat(128),
        ] {
            assert!(check_session_id(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("", "it is empty"),
            (&"x".repeat(129) as &str, "it is longer than 128 characters"),
            (".hidden", "it starts with `.`"),
            ("..", "it starts with `.`"),
            ("../x", "it starts with `.`"),
            ("/tmp/x", "it has a character outside [A-Za-z0-9._-]"),
            ("a/b", "it has a character outside [A-Za-z0-9._-]"),
            ("a b", "it has a character outside [A-Za-z0-9._-]"),
            ("é", "it has a character outside [A-Za-z0-9._-]"),
            ("a\0b", "it has a character outside [A-Za-z0-9._-]"),
        ] {
            match check_session_id(bad) {
                Err(Error::SessionId { reason, .. }) => assert_eq!(reason, why, "{bad:?}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn logs_are_new_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("a/logs");
        let log = ForensicLog::create(&logs, "s").unwrap();
        drop(log.create_stderr().unwrap());
        log.write_meta(&SessionMeta::default()).unwrap();
        log.write_meta(&SessionMeta::default()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&logs), 0o700);
        for p in [log.path(), log.stderr_path(), log.meta_path()] {
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
        // The same id again: refused, the first log untouched.
        assert!(matches!(
            ForensicLog::create(&logs, "s"),
            Err(Error::LogExists { .. })
        ));
        assert!(matches!(log.create_stderr(), Err(Error::LogExists { .. })));
    }

    #[test]
    fn a_dangling_symlink_is_refused_not_created_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::os::unix::fs::symlink(&target, dir.path().join("s.ndjson")).unwrap();
        assert!(matches!(
            ForensicLog::create(dir.path(), "s"),
            Err(Error::LogExists { .. })
        ));
        assert!(!target.exists());
    }
}
