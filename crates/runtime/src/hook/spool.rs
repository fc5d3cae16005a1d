//! Hook calls the store could not take in time, kept on disk for the next
//! call.
//!
//! Note \[The hook's spool\]: a hook answers within its budget whatever the
//! store does (Note \[A hook never breaks the session\]), so a call whose
//! row could not be written in time (a locked SQLite file, a Postgres
//! server that is down) is appended as one JSON line to a spool file of
//! that store, and the next hook call that reaches the store writes the
//! spooled rows first (oldest first, within its own budget). The file is
//! taken by renaming it, so two hooks never write one row twice; rows a
//! drain could not write go back to the spool. The spool holds what the
//! store would hold before masking (the transcript itself is on the same
//! disk, unmasked); it is created 0600 and never grows past
//! [`MAX_SPOOL_BYTES`].

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentshape_store::{FeedEntry, HookCall, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A spool never grows past this (a store down for days must not fill the disk).
pub const MAX_SPOOL_BYTES: u64 = 64 << 20;

/// One spooled call.
#[derive(Debug, Serialize, Deserialize)]
struct Spooled {
    call: HookCall,
    feed: Vec<FeedEntry>,
}

/// The spool of one store (Note \[The hook's spool\]).
#[derive(Debug, Clone)]
pub struct Spool {
    path: PathBuf,
}

/// Where spools live: `$AGENTSHAPE_STATE_DIR`, else
/// `$XDG_STATE_HOME/agentshape`, else `~/.local/state/agentshape`.
pub fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("AGENTSHAPE_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("agentshape")))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/agentshape")))
}

fn io(what: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        context: format!("the hook spool {}", what.display()),
        source,
    }
}

impl Spool {
    /// The spool in `dir` of the store at `location` (one file per store).
    pub fn new(dir: &Path, location: &str) -> Spool {
        let digest = Sha256::digest(location.as_bytes());
        let name = digest[..6].iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
        Spool {
            path: dir.join(format!("hook-spool-{name}.ndjson")),
        }
    }

    /// The spool file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one call.
    ///
    /// # Errors
    /// When the file cannot be written, or is full.
    pub fn push(&self, call: &HookCall, feed: &[FeedEntry]) -> Result<()> {
        let line = serde_json::to_string(&Spooled {
            call: call.clone(),
            feed: feed.to_vec(),
        })
        .map_err(|e| io(&self.path)(std::io::Error::other(e)))?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        if size + line.len() as u64 + 1 > MAX_SPOOL_BYTES {
            return Err(io(&self.path)(std::io::Error::other(format!(
                "full ({} MiB)",
                MAX_SPOOL_BYTES >> 20
            ))));
        }
        let mut opts = OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&self.path).map_err(io(&self.path))?;
        // One write of the whole line: appends of other hooks never interleave it.
        f.write_all(format!("{line}\n").as_bytes())
            .map_err(io(&self.path))
    }

    /// Write the spooled calls into `store`, oldest first, until `deadline`;
    /// what is left (or fails) goes back to the spool. Returns the calls
    /// written.
    ///
    /// # Errors
    /// When the spool cannot be read or put back.
    pub fn drain(&self, store: &mut dyn Store, deadline: Instant) -> Result<usize> {
        if !self.path.exists() {
            return Ok(0);
        }
        let taken = self
            .path
            .with_extension(format!("draining-{}", std::process::id()));
        match std::fs::rename(&self.path, &taken) {
            Ok(()) => {}
            // Another hook took it first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(io(&self.path)(e)),
        }
        let reader = BufReader::new(File::open(&taken).map_err(io(&taken))?);
        let mut written = 0;
        let mut left = Vec::new();
        for line in reader.lines() {
            let line = line.map_err(io(&taken))?;
            if line.trim().is_empty() {
                continue;
            }
            if Instant::now() >= deadline || !left.is_empty() {
                left.push(line);
                continue;
            }
            let Ok(s) = serde_json::from_str::<Spooled>(&line) else {
                // A line this version cannot read is dropped, not retried forever.
                continue;
            };
            if store.save_hook(&s.call, &s.feed).is_ok() {
                written += 1;
            } else {
                left.push(line);
            }
        }
        for line in &left {
            let s: Spooled = match serde_json::from_str(line) {
                Ok(s) => s,
                Err(_) => continue,
            };
            self.push(&s.call, &s.feed)?;
        }
        std::fs::remove_file(&taken).map_err(io(&taken))?;
        Ok(written)
    }
}
