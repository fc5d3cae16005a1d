//! Opening the files agentshape reads as input: schemas, profiles, configs,
//! prompts, transcripts and logs. The one place that opens an input path, so
//! every command and `serve` refuse the same things with the same words.
//!
//! Note [Regular files only]: a path can name a FIFO (opening it blocks
//! until a writer comes, forever if none does), a directory, a device
//! (`/dev/zero` never ends) or a socket. So an input is
//!
//! 1. opened with `O_NONBLOCK | O_NOCTTY`: opening a FIFO or a device
//!    returns at once instead of waiting for the other end;
//! 2. checked on the opened handle (`fstat`), never by a `stat` of the path
//!    before: the path can be swapped between a check and the open, the
//!    handle cannot;
//! 3. refused unless it is a regular file, naming what it is ("is a FIFO");
//!    a stream ([`Kind::Stream`]: transcripts, JSONL, which the decoder reads
//!    line by line with its line cap) may also be a FIFO or pipe, so
//!    `agentshape parse <(zcat log.gz)` works; a FIFO that no writer holds
//!    open when it is opened reads as empty rather than waiting;
//! 4. switched back to blocking reads, and read with a cap ([`read`]): a file
//!    that grows while it is read, or a `/proc` file whose size says 0,
//!    still stops at the cap.
//!
//! Caps: schemas, profiles, ops configs, prompts and model registries are
//! read whole and are at most [`MAX_CONFIG_BYTES`] (16 MiB, far above any
//! real one: the largest built-in schema is a few KiB); `serve` reads a
//! schema by name with its own 1 MiB cap. Streams are never read whole.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// The most bytes read of a schema, profile, ops config, prompt or model
/// registry (Note [Regular files only]).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// What an input is read as, which decides what it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file only: what is read whole (a schema, a profile) and
    /// files that name a session (a forensic log).
    Regular,
    /// Streamed line by line under the decoder's line cap (a transcript, a
    /// JSONL file): a regular file, a FIFO or a pipe.
    Stream,
}

/// How to open an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// What the input is read as.
    pub kind: Kind,
    /// Refuse a symlink (`O_NOFOLLOW`): `serve` reads names inside a folder
    /// and never follows a link out of it.
    pub no_follow: bool,
}

impl Options {
    /// A regular file, symlinks followed.
    pub const REGULAR: Options = Options {
        kind: Kind::Regular,
        no_follow: false,
    };
    /// A stream, symlinks followed.
    pub const STREAM: Options = Options {
        kind: Kind::Stream,
        no_follow: false,
    };
}

/// Why an input was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The path could not be opened (missing, no permission, a symlink
    /// under [`Options::no_follow`]).
    #[error("`{path}`: {source}")]
    Open {
        /// The path as given.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The path is not a regular file (nor, for a stream, a FIFO).
    #[error("`{path}` is {what}, not a regular file")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is: "a FIFO", "a directory", "a character device", ...
        what: &'static str,
    },
    /// More than the cap.
    #[error("`{path}` is larger than the {} limit", size(*.limit))]
    TooLarge {
        /// The path as given.
        path: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// Reading failed, or the text is not UTF-8.
    #[error("`{path}`: {source}")]
    Read {
        /// The path as given.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl InputError {
    /// Whether the file does not exist (the CLI's exit 66): everything else
    /// is a file that exists but is not one agentshape reads.
    pub fn is_missing(&self) -> bool {
        matches!(self, InputError::Open { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// The reason alone, without the path, as an `io::Error` (for callers
    /// that name the path themselves): the open or read error as it was,
    /// else "is a FIFO, not a regular file", "is larger than the 16 MiB limit".
    pub fn into_io(self) -> io::Error {
        match self {
            InputError::Open { source, .. } | InputError::Read { source, .. } => source,
            InputError::NotRegular { what, .. } => {
                io::Error::other(format!("is {what}, not a regular file"))
            }
            InputError::TooLarge { limit, .. } => {
                io::Error::other(format!("is larger than the {} limit", size(limit)))
            }
        }
    }

    /// Whether the open failed because the path is a symlink (`ELOOP` under
    /// [`Options::no_follow`]).
    pub fn is_symlink(&self) -> bool {
        matches!(self, InputError::Open { source, .. }
            if source.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32))
    }
}

/// A cap in words: "16 MiB", or bytes when it is not whole MiB.
fn size(limit: u64) -> String {
    if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// What a file type is, in the words of an error ("is a FIFO").
pub fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a file"
    }
}

/// Open `path` as an input (Note [Regular files only]): without blocking,
/// checked on the handle, then switched to blocking reads.
///
/// # Errors
/// [`InputError::Open`] when it cannot be opened, [`InputError::NotRegular`]
/// when it is not what `opts` accepts.
pub fn open(path: &Path, opts: Options) -> Result<File, InputError> {
    let shown = || path.display().to_string();
    let mut flags = OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    if opts.no_follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|source| InputError::Open {
            path: shown(),
            source,
        })?;
    let read_err = |source| InputError::Read {
        path: shown(),
        source,
    };
    let kind = file.metadata().map_err(read_err)?.file_type();
    let accepted = kind.is_file() || (opts.kind == Kind::Stream && kind.is_fifo());
    if !accepted {
        return Err(InputError::NotRegular {
            path: shown(),
            what: describe(kind),
        });
    }
    // Blocking reads again: a pipe's reader waits for the writer's next
    // bytes instead of seeing `EAGAIN` (regular files ignore the flag).
    let status = fcntl(&file, FcntlArg::F_GETFL).map_err(|e| read_err(e.into()))?;
    let without = OFlag::from_bits_truncate(status) - OFlag::O_NONBLOCK;
    fcntl(&file, FcntlArg::F_SETFL(without)).map_err(|e| read_err(e.into()))?;
    Ok(file)
}

/// Read all of `file` (opened by [`open`] from `path`), at most `limit` bytes.
///
/// # Errors
/// [`InputError::TooLarge`] past the cap, [`InputError::Read`] when reading fails.
pub fn read_capped(file: File, path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read {
            path: path.display().to_string(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.display().to_string(),
            limit,
        });
    }
    Ok(bytes)
}

/// The bytes of the regular file `path`, at most `limit`.
///
/// # Errors
/// As [`open`] and [`read_capped`].
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    read_capped(open(path, Options::REGULAR)?, path, limit)
}

/// The text of the regular file `path`, at most `limit` bytes of UTF-8.
///
/// # Errors
/// As [`read`]; text that is not UTF-8 is [`InputError::Read`].
pub fn read_to_string(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read(path, limit)?).map_err(|e| InputError::Read {
        path: path.display().to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("f.json");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        p
    }

    #[test]
    fn only_regular_files_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let cases = [
            (fifo(d), "is a FIFO, not a regular file"),
            (d.to_owned(), "is a directory, not a regular file"),
            (
                "/dev/zero".into(),
                "is a character device, not a regular file",
            ),
        ];
        for (path, want) in cases {
            let err = read(&path, MAX_CONFIG_BYTES).unwrap_err();
            assert!(!err.is_missing(), "{err}");
            let text = err.to_string();
            assert!(text.contains(want), "{text}");
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
        let err = read(&d.join("gone.json"), 10).unwrap_err();
        assert!(err.is_missing(), "{err}");
    }

    #[test]
    fn the_cap_is_checked_on_what_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        std::fs::write(&p, vec![b' '; (2 << 20) + 1]).unwrap();
        let err = read(&p, 2 << 20).unwrap_err().to_string();
        assert!(err.ends_with("is larger than the 2 MiB limit"), "{err}");
        assert_eq!(read(&p, 3 << 20).unwrap().len(), (2 << 20) + 1);
        assert_eq!(
            read(&p, 4).unwrap_err().to_string().split(" is ").nth(1),
            Some("larger than the 4 bytes limit")
        );
        // A /proc file says size 0 but has bytes: read, and capped all the same.
        assert!(
            !read(Path::new("/proc/self/status"), 1 << 20)
                .unwrap()
                .is_empty()
        );
        std::fs::write(&p, [0xE9]).unwrap();
        assert!(read_to_string(&p, 10).is_err());
    }

    #[test]
    fn a_stream_may_be_a_fifo_and_a_lone_fifo_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = fifo(dir.path());
        let mut f = open(&p, Options::STREAM).unwrap();
        let mut got = Vec::new();
        f.read_to_end(&mut got).unwrap();
        assert!(got.is_empty());
        // A writer that opens after the reader: its bytes, read blocking
        // until it closes (the reader's open let the writer's not wait).
        let mut f = open(&p, Options::STREAM).unwrap();
        let mut w = OpenOptions::new().write(true).open(&p).unwrap();
        std::io::Write::write_all(&mut w, b"one\ntwo\n").unwrap();
        drop(w);
        let mut got = Vec::new();
        f.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"one\ntwo\n");
        let err = open(Path::new("/dev/zero"), Options::STREAM).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
    }

    #[test]
    fn no_follow_refuses_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.json");
        std::fs::write(&target, "{}").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let opts = Options {
            kind: Kind::Regular,
            no_follow: true,
        };
        assert!(open(&link, opts).unwrap_err().is_symlink());
        assert!(open(&target, opts).is_ok());
        assert!(open(&link, Options::REGULAR).is_ok());
    }
}
