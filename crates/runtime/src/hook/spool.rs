//! Hook calls the store could not take in time, kept on disk for the next
//! call.
//!
//! Note \[The hook's spool\]: a hook answers within its budget whatever the
//! store does (Note \[A hook never breaks the session\]), so a call whose
//! row could not be written in time (a locked SQLite file, a Postgres
//! server that is down) is appended as one JSON line to a spool file of
//! that store, and the next hook call that reaches the store writes the
//! spooled rows first (oldest first, within its own budget). The spool holds what the
//! store would hold before masking (the transcript itself is on the same
//! disk, unmasked); it is created 0600 and never grows past
//! [`MAX_SPOOL_BYTES`].

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use agentshape_store::{FeedEntry, HookCall, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A spool never grows past this (a store down for days must not fill the disk).
pub const MAX_SPOOL_BYTES: u64 = 64 << 20;

// Note [Draining a spool]: a drain takes a file by renaming it to
// `hook-spool-<store>.draining-<pid>-<n>` (a rename is atomic: of two
// hooks, one gets the file and the other `NotFound`, so no row is taken
// twice). It writes the lines oldest first and marks each one written
// (its first byte, `{`, becomes `#`) as soon as the store has it; a file
// whose lines are all written is removed. A hook exits when its budget
// ends, drain or not (issue 40: 50 hooks at once on a fresh store left 32
// rows in such files, never read again), so what it leaves stays in its
// claimed file, and the next drain first claims (renames again) every
// claimed file whose process is gone (`kill(pid, 0)` says `ESRCH`), then
// the spool, and goes on where the dead one stopped. A drain that fails
// or runs out of time stops there, keeping the order. A line carries the
// id of the hook that spooled it: that hook stopped waiting for its row,
// but its store thread may still write it (and then marks the line, see
// [`Pushed`]), so while that hook runs other drains leave the line. A row can be
// written twice only when a hook dies between the store's commit and the
// one-byte mark; a process id reused before the next drain only delays
// that file.

/// One spooled call.
#[derive(Debug, Serialize, Deserialize)]
struct Spooled {
    call: HookCall,
    feed: Vec<FeedEntry>,
    /// The hook that spooled it: while it runs, its store thread may still
    /// write the call (and then marks the line), so no other drain takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
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
    pub fn push(&self, call: &HookCall, feed: &[FeedEntry]) -> Result<Pushed> {
        let line = serde_json::to_string(&Spooled {
            call: call.clone(),
            feed: feed.to_vec(),
            pid: Some(std::process::id()),
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
        let text = format!("{line}\n");
        f.write_all(text.as_bytes()).map_err(io(&self.path))?;
        // An append leaves the offset at the end of what it wrote.
        let end = std::io::Seek::stream_position(&mut f).map_err(io(&self.path))?;
        Ok(Pushed {
            file: f,
            at: end - text.len() as u64,
        })
    }

    /// Write the spooled calls into `store`, oldest first, until
    /// `deadline` (Note \[Draining a spool\]). Returns the calls written.
    ///
    /// # Errors
    /// When the spool's folder or a claimed file cannot be read or marked.
    pub fn drain(&self, store: &mut dyn Store, deadline: Instant) -> Result<usize> {
        let mut written = 0;
        // The orphans first: their rows are older than the spool's.
        for claim in self.claim_all()? {
            match Self::drain_claim(&claim, store, deadline)? {
                (n, Some(_)) => written += n,
                // The store failed, or time is up: the rest waits, in order.
                (n, None) => return Ok(written + n),
            }
        }
        Ok(written)
    }

    /// The start of the name of this spool's claimed files.
    fn claim_prefix(&self) -> String {
        let name = self
            .path
            .file_stem()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        format!("{name}.draining-")
    }

    /// A new name for a file this process claims.
    fn claim_name(&self) -> PathBuf {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.path
            .with_file_name(format!("{}{}-{n}", self.claim_prefix(), std::process::id()))
    }

    /// Claim, by renaming, the claimed files of hooks that are gone, then
    /// the spool itself: the files this drain owns, oldest first.
    fn claim_all(&self) -> Result<Vec<PathBuf>> {
        let Some(dir) = self.path.parent() else {
            return Ok(Vec::new());
        };
        let prefix = self.claim_prefix();
        let mut orphans: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(dir)(e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                .and_then(claimer)
            else {
                continue;
            };
            if pid == std::process::id() || alive(pid) {
                continue;
            }
            // Oldest first by birth (a rename keeps it; marking lines
            // changes the modification time), else by modification.
            let at = entry
                .metadata()
                .and_then(|m| m.created().or_else(|_| m.modified()))
                .unwrap_or(std::time::UNIX_EPOCH);
            orphans.push((at, entry.path()));
        }
        orphans.sort();
        let mut claimed = Vec::new();
        for (_, from) in orphans
            .into_iter()
            .chain([(std::time::UNIX_EPOCH, self.path.clone())])
        {
            let to = self.claim_name();
            match std::fs::rename(&from, &to) {
                Ok(()) => claimed.push(to),
                // Another hook took it first.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&from)(e)),
            }
        }
        Ok(claimed)
    }

    /// Write the unwritten lines of one claimed file, each marked written
    /// as soon as the store has it; the file goes when all are. A line whose
    /// hook still runs is left (its own store thread may write it). Returns
    /// the calls written, and `None` when the drain must stop (the store
    /// failed, or time is up), else whether the file was finished.
    fn drain_claim(
        claim: &Path,
        store: &mut dyn Store,
        deadline: Instant,
    ) -> Result<(usize, Option<bool>)> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(claim)
            .map_err(io(claim))?;
        let mut reader = BufReader::new(&file);
        let mut written = 0;
        let mut left = false;
        let mut offset: u64 = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(io(claim))?;
            if n == 0 {
                break;
            }
            let at = offset;
            offset += n as u64;
            if line.first() == Some(&WRITTEN) || line.trim_ascii().is_empty() {
                continue;
            }
            if Instant::now() >= deadline {
                return Ok((written, None));
            }
            // A line this version cannot read is dropped, not retried forever.
            if let Ok(s) = serde_json::from_slice::<Spooled>(&line) {
                if s.pid.is_some_and(|p| p != std::process::id() && alive(p)) {
                    left = true;
                    continue;
                }
                if store.save_hook(&s.call, &s.feed).is_err() {
                    return Ok((written, None));
                }
                written += 1;
            }
            mark_written(&file, at).map_err(io(claim))?;
        }
        if left {
            return Ok((written, Some(false)));
        }
        std::fs::remove_file(claim).map_err(io(claim))?;
        Ok((written, Some(true)))
    }
}

/// A line just pushed: the call's row may still reach the store (a hook
/// that stopped waiting for it spools it; the store can commit it a moment
/// later), and then the line is marked written instead of written twice.
#[derive(Debug)]
pub struct Pushed {
    file: File,
    at: u64,
}

impl Pushed {
    /// Mark the line written (Note \[Draining a spool\]); the handle is
    /// the file's even after a drain renamed it.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn mark_written(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // Not through the append handle: Linux appends a `pwrite` on one.
        let again = OpenOptions::new()
            .write(true)
            .open(format!("/proc/self/fd/{}", self.file.as_raw_fd()))?;
        mark_written(&again, self.at)
    }
}

/// The first byte of a line already written to the store (a spooled line
/// starts with `{`).
const WRITTEN: u8 = b'#';

/// Mark the line at `at` written: one byte, in place.
fn mark_written(file: &File, at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(&[WRITTEN], at)
}

/// The process id in a claimed file's name after the prefix: `123` (an
/// older version's) or `123-4`.
fn claimer(rest: &str) -> Option<u32> {
    let digits = rest.split('-').next()?;
    digits.parse().ok()
}

/// Whether process `pid` still runs (one of another user counts as running).
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_store::SqliteStore;

    fn call(session: &str, verdict: &str) -> HookCall {
        HookCall::new(session, "Stop", verdict, "2026-11-26T10:00:00.000Z")
    }

    fn count(db: &Path) -> i64 {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM hook_calls", [], |r| r.get(0))
            .unwrap()
    }

    /// Issue 40: the files of hooks that died mid-drain were never read
    /// again. A dead process's claim is drained (lines it marked written
    /// skipped), a live one's is left to it, the spool comes after.
    #[test]
    fn a_dead_hooks_claim_is_drained_and_a_live_ones_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let spool = Spool::new(dir.path(), "a.db");
        let mut store = SqliteStore::open(&db).unwrap();
        let line = |s: &str| {
            serde_json::to_string(&Spooled {
                call: call(s, "blocked"),
                feed: Vec::new(),
                pid: None,
            })
            .unwrap()
        };
        // A child that has exited: its pid is free (or reused, very unlikely).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let prefix = spool.claim_prefix();
        let written = format!("#{}", &line("s-done")[1..]);
        std::fs::write(
            dir.path().join(format!("{prefix}{dead}")),
            format!("{written}\n{}\nnot json\n{}\n", line("s-a"), line("s-b")),
        )
        .unwrap();
        let alive_claim = dir.path().join(format!("{prefix}1-0"));
        std::fs::write(&alive_claim, format!("{}\n", line("s-live"))).unwrap();
        spool.push(&call("s-c", "valid"), &[]).unwrap();
        let n = spool
            .drain(
                &mut store,
                Instant::now() + std::time::Duration::from_secs(10),
            )
            .unwrap();
        assert_eq!(n, 3);
        assert_eq!(count(&db), 3);
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("hook-spool-"))
            .collect();
        // pid 1 is alive: its claim is its own.
        assert_eq!(left, [format!("{prefix}1-0")]);
    }

    /// A claim drained whole goes; a drain out of time keeps the rest in
    /// its claim (for the next drain once this process is gone).
    #[test]
    fn a_drain_out_of_time_keeps_the_rest_in_its_claim() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let spool = Spool::new(dir.path(), "a.db");
        let mut store = SqliteStore::open(&db).unwrap();
        for s in ["s1", "s2"] {
            spool.push(&call(s, "blocked"), &[]).unwrap();
        }
        let claims = spool.claim_all().unwrap();
        assert_eq!(claims.len(), 1);
        let (n, done) = Spool::drain_claim(
            &claims[0],
            &mut store,
            Instant::now() + std::time::Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!((n, done), (2, Some(true)));
        assert_eq!(count(&db), 2);
        assert!(!claims[0].exists());
        spool.push(&call("s3", "blocked"), &[]).unwrap();
        assert_eq!(spool.drain(&mut store, Instant::now()).unwrap(), 0);
        let left = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".draining-")
            })
            .count();
        assert_eq!(left, 1, "claimed, not written: kept");
    }

    /// A pushed line the store took after all is marked, never written twice.
    #[test]
    fn a_pushed_line_marked_written_is_not_drained() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let spool = Spool::new(dir.path(), "a.db");
        let mut store = SqliteStore::open(&db).unwrap();
        spool.push(&call("s1", "blocked"), &[]).unwrap();
        let pushed = spool.push(&call("s2", "blocked"), &[]).unwrap();
        pushed.mark_written().unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        assert_eq!(spool.drain(&mut store, deadline).unwrap(), 1);
        assert_eq!(count(&db), 1);
    }
}
