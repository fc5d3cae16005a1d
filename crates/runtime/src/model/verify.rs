//! A pinned model's cached file, checked against its pin before it is
//! loaded, and the small record that makes the check free the next time.
//!
//! Note [Pinned models are checked at load]: `model fetch` verifies a model
//! once, but the cache is a folder like any other: a second tool, an extra
//! model of an old registry file, a disk error or a person can change the
//! file afterwards, and `--model smollm2-135m` would load whatever is there.
//! So [`check`] runs before a known model's file is handed to the engine:
//! the pinned size first (free), then the pinned sha256. Hashing 98 MB on
//! every `ask` would cost a fraction of a second each time, so a success is
//! recorded in a sidecar file beside the model (`.<file>.verified`: the
//! digest and the file's size, modification time, change time, device and
//! inode), and a later check whose stamp is the same skips the hash. Any
//! write to the model changes its change time (which no user call can set
//! back), so a changed file is hashed again; a torn or foreign sidecar only
//! costs a hash, never lets a different file through. The record is best
//! effort: in a read-only cache every load hashes.

use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{KnownModel, ModelError};

/// What a cached file is, next to its pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No file there.
    Missing,
    /// The pinned size and sha256.
    Pinned,
    /// Something else: the reason, for a message.
    Differs(String),
}

/// The largest sidecar read: one line of a digest and a few numbers.
const MAX_SIDECAR: u64 = 1024;

/// Compare the file at `path` with `model`'s pin (Note [Pinned models are
/// checked at load]): the size, then the sidecar's stamp, else the sha256
/// (recorded in the sidecar when it matches).
///
/// # Errors
/// Opening or reading the file failed (a missing file is [`Found::Missing`]).
pub fn inspect(model: &KnownModel, path: &Path) -> io::Result<Found> {
    // O_NONBLOCK: a FIFO under the model's name must not hang the open (it
    // is then refused as not a regular file); no effect on a regular file.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Found::Differs("it is not a regular file".into()));
    }
    if meta.len() != model.size {
        return Ok(Found::Differs(format!(
            "it is {} bytes, the pinned size is {}",
            meta.len(),
            model.size
        )));
    }
    let line = stamp(model, &meta);
    if read_sidecar(path).as_deref() == Some(line.as_str()) {
        return Ok(Found::Pinned);
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest = super::hex(&hasher.finalize());
    if digest != model.sha256 {
        return Ok(Found::Differs(format!(
            "its sha256 is `{digest}`, the pinned one is `{}`",
            model.sha256
        )));
    }
    // Recorded only when nothing changed the file while it was hashed.
    if stamp(model, &file.metadata()?) == line {
        let _ = write_sidecar(path, &line);
    }
    Ok(Found::Pinned)
}

/// Refuse a cached file that is not `model`'s pinned one (Note [Pinned
/// models are checked at load]).
///
/// # Errors
/// [`ModelError::Tampered`] naming what differs, [`ModelError::NotFetched`]
/// when the file is gone, [`ModelError::Unreadable`] when it cannot be read.
pub fn check(model: &KnownModel, path: &Path) -> Result<(), ModelError> {
    let shown = || path.display().to_string();
    match inspect(model, path) {
        Ok(Found::Pinned) => Ok(()),
        Ok(Found::Missing) => Err(ModelError::NotFetched {
            name: model.name.to_owned(),
            path: shown(),
        }),
        Ok(Found::Differs(reason)) => Err(ModelError::Tampered {
            name: model.name.to_owned(),
            path: shown(),
            reason,
        }),
        Err(source) => Err(ModelError::Unreadable {
            path: shown(),
            source,
        }),
    }
}

/// Record that the file at `path` is `model`'s pinned file, after `model
/// fetch` has hashed the bytes it just wrote there. Best effort.
pub fn record(model: &KnownModel, path: &Path) {
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = write_sidecar(path, &stamp(model, &meta));
    }
}

/// The sidecar of the model file `path`: `.<file>.verified` beside it (a
/// hidden name: `model list` shows no dot files, and extra models may not
/// be cached under one).
pub fn sidecar(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.verified"))
}

/// The line a sidecar holds for a file with `meta` that hashes to the pin.
fn stamp(model: &KnownModel, meta: &std::fs::Metadata) -> String {
    format!(
        "{} {} {}.{:09} {}.{:09} {}:{}\n",
        model.sha256,
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.dev(),
        meta.ino()
    )
}

fn read_sidecar(path: &Path) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(sidecar(path))
        .ok()?;
    let mut text = String::new();
    file.take(MAX_SIDECAR).read_to_string(&mut text).ok()?;
    Some(text)
}

fn write_sidecar(path: &Path, line: &str) -> io::Result<()> {
    // Written in place: a reader that sees half a line sees a mismatch and
    // hashes, which is the safe side.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(sidecar(path))?;
    file.write_all(line.as_bytes())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pinned model whose file is `t.gguf` holding `body` (shared with
    /// fetch's tests).
    pub(crate) fn model_of(body: &[u8]) -> KnownModel {
        let sha = super::super::hex(&Sha256::digest(body));
        KnownModel {
            name: "t",
            package: "p",
            version: "1",
            wheel: "w.whl",
            wheel_sha256: "00",
            wheel_size: 1,
            member: "m.gguf",
            sha256: Box::leak(sha.into_boxed_str()),
            size: body.len() as u64,
            file: "t.gguf",
            description: "",
        }
    }

    #[test]
    fn a_changed_file_is_refused_with_what_differs() {
        let dir = tempfile::tempdir().unwrap();
        let m = model_of(b"GGUF the pinned bytes");
        let p = dir.path().join("t.gguf");
        assert_eq!(inspect(&m, &p).unwrap(), Found::Missing);
        std::fs::write(&p, b"GGUF other").unwrap();
        let e = check(&m, &p).unwrap_err().to_string();
        assert!(
            e.contains("model `t`") && e.contains("the pinned size is 21") && e.contains("--force"),
            "{e}"
        );
        std::fs::write(&p, b"GGUF the pinned bytez").unwrap();
        let e = check(&m, &p).unwrap_err().to_string();
        assert!(e.contains("sha256") && e.contains(m.sha256), "{e}");
        assert!(!sidecar(&p).exists(), "no record of a failed check");
    }

    #[test]
    fn a_fifo_under_the_models_name_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let m = model_of(b"GGUF the pinned bytes");
        let p = dir.path().join("t.gguf");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = check(&m, &p).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_success_is_recorded_and_a_rewrite_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let body = b"GGUF the pinned bytes";
        let m = model_of(body);
        let p = dir.path().join("t.gguf");
        std::fs::write(&p, body).unwrap();
        check(&m, &p).unwrap();
        let line = std::fs::read_to_string(sidecar(&p)).unwrap();
        assert!(line.starts_with(m.sha256), "{line}");
        // The record is what makes the second check free: a record for a
        // different stamp is not trusted, and is rewritten after hashing.
        std::fs::write(sidecar(&p), "nonsense\n").unwrap();
        check(&m, &p).unwrap();
        assert_eq!(std::fs::read_to_string(sidecar(&p)).unwrap(), line);
        // Same size, other bytes, written after the record: the stamp no
        // longer matches (change time, and usually mtime), so it is hashed.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, b"GGUF the pinned bytez").unwrap();
        assert!(matches!(inspect(&m, &p).unwrap(), Found::Differs(r) if r.contains("sha256")));
    }
}
