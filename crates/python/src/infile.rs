//! Opening input files: schemas, profiles and transcripts named by path.
//!
//! The rule of the CLI and `serve` (runtime's Note [Regular files only]):
//! open without blocking (a FIFO with no writer, or a device, returns at
//! once), check the opened handle (`fstat`, never a `stat` before the open),
//! refuse what is not a regular file (a transcript may also be a FIFO or
//! pipe: it is streamed), then read blocking and with a cap. Written again
//! here, in as few lines as it takes, because this package depends on core
//! only: runtime's `infile` would bring tokio, reqwest and the store into
//! the wheel. Keep the two in step (same caps, same words).

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// The most bytes read of a schema or profile: runtime's `MAX_CONFIG_BYTES`.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why a file was refused; shown after the path ("`p`: is a FIFO, ...").
#[derive(Debug)]
pub enum Refused {
    /// It could not be opened or read.
    Io(io::Error),
    /// Not a regular file (nor, for a stream, a FIFO): what it is.
    NotRegular(&'static str),
    /// Over the cap.
    TooLarge,
}

impl Refused {
    /// Whether it failed to open or read (`InputError`, exit 66), rather
    /// than being a file agentshape does not read (a usage error, 64).
    pub fn is_io(&self) -> bool {
        matches!(self, Refused::Io(_))
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::NotRegular(what) => write!(f, "is {what}, not a regular file"),
            Refused::TooLarge => {
                write!(f, "is larger than the {} MiB limit", MAX_CONFIG_BYTES >> 20)
            }
        }
    }
}

/// Open `path`: a regular file, or also a FIFO when `stream`.
pub fn open(path: &Path, stream: bool) -> Result<File, Refused> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)
        .map_err(Refused::Io)?;
    let t = file.metadata().map_err(Refused::Io)?.file_type();
    if !(t.is_file() || (stream && t.is_fifo())) {
        return Err(Refused::NotRegular(if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a file"
        }));
    }
    let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(|e| Refused::Io(e.into()))?;
    let blocking = OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK;
    fcntl(&file, FcntlArg::F_SETFL(blocking)).map_err(|e| Refused::Io(e.into()))?;
    Ok(file)
}

/// The text of the regular file `path`, at most [`MAX_CONFIG_BYTES`] of UTF-8.
pub fn read_to_string(path: &Path) -> Result<String, Refused> {
    let mut bytes = Vec::new();
    open(path, false)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Refused::TooLarge);
    }
    String::from_utf8(bytes)
        .map_err(|e| Refused::Io(io::Error::new(io::ErrorKind::InvalidData, e.utf8_error())))
}
