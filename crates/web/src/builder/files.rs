//! The `--schemas` folder: list, read and save schema files, and nothing
//! outside the folder.
//!
//! Note [Schema names]: a name is one file name, checked before any path is
//! built: `^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.json$` with no `..`. So no `/`
//! (no sub-folder, no absolute path), no leading dot (no hidden file, no
//! `..`), no NUL or other control byte, and a `.json` ending. The web
//! router has already percent-decoded the name, so `%2F` arrives as `/` and
//! is refused here like any other slash.
//!
//! Note [No writing through symlinks]: a symlink in the folder may point
//! anywhere. Reading opens with `O_NOFOLLOW` (a symlink fails to open), a
//! symlink is never listed, and saving never opens the target name at all:
//! the bytes go into a new temporary file in the folder (`O_CREAT|O_EXCL|
//! O_NOFOLLOW`), which is then linked to the name (no overwrite: `link`
//! fails if the name exists, atomically, so two saves cannot both win) or
//! renamed over it (overwrite: `rename` replaces the directory entry, never
//! writes into what a symlink points at). An existing symlink of that name
//! is refused outright rather than silently replaced.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use agentshape_runtime::infile::{self, InputError};
use serde::Serialize;

/// The largest schema file read or written: schemas are small, and a cap
/// keeps one request from filling memory or the disk.
pub(crate) const MAX_SCHEMA_BYTES: usize = 1 << 20;

/// The most files listed: a folder of schemas, not an archive.
const MAX_LISTED: usize = 1000;

/// Why a file operation failed, each mapped to one HTTP status by the caller.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// The name breaks Note [Schema names].
    #[error("bad schema name: {0}")]
    BadName(&'static str),
    /// No such schema.
    #[error("no schema `{0}`")]
    Missing(String),
    /// The name is a symlink (Note [No writing through symlinks]).
    #[error("`{0}` is a symlink: schemas are regular files in the folder")]
    Symlink(String),
    /// The name is a FIFO, a folder, a device or a socket.
    #[error("`{0}` is {1}: schemas are regular files in the folder")]
    NotRegular(String, &'static str),
    /// Saving without overwrite over an existing file.
    #[error("schema `{0}` exists: overwrite?")]
    Exists(String),
    /// The file is over [`MAX_SCHEMA_BYTES`].
    #[error("`{0}` is larger than 1 MiB")]
    TooLarge(String),
    /// Anything else the file system said.
    #[error("`{name}`: {source}")]
    Io {
        /// The schema name.
        name: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

/// Check a schema name (Note [Schema names]); `Err` says why in a few words.
pub(crate) fn check_name(name: &str) -> Result<(), FileError> {
    let Some(stem) = name.strip_suffix(".json") else {
        return Err(FileError::BadName("it must end in `.json`"));
    };
    let Some(first) = stem.chars().next() else {
        return Err(FileError::BadName("it needs a name before `.json`"));
    };
    if !first.is_ascii_alphanumeric() {
        return Err(FileError::BadName(
            "it must start with a letter or digit (no hidden files, no paths)",
        ));
    }
    if stem.len() > 100 {
        return Err(FileError::BadName("at most 100 characters before `.json`"));
    }
    if !stem
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(FileError::BadName(
            "only letters, digits, `.`, `_` and `-` (no `/`, no spaces, no control characters)",
        ));
    }
    if stem.contains("..") {
        return Err(FileError::BadName("no `..`"));
    }
    Ok(())
}

/// One schema file in the folder.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The file name (`review.json`).
    pub(crate) name: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// Last modified, seconds since the Unix epoch (`null` when unknown).
    pub(crate) modified: Option<u64>,
}

/// The schema files of `dir`, by name: regular files with a valid name only
/// (no symlinks, no hidden or temporary files).
pub(crate) fn list(dir: &Path) -> Result<Vec<Entry>, FileError> {
    let io = |source| FileError::Io {
        name: dir.display().to_string(),
        source,
    };
    let mut out = Vec::new();
    let entries = match fs::read_dir(dir) {
        // Removed while serving: nothing to open (saving says why it fails).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        r => r.map_err(io)?,
    };
    for entry in entries {
        let entry = entry.map_err(io)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if check_name(&name).is_err() {
            continue;
        }
        // `DirEntry::metadata` does not follow symlinks.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.file_type().is_file() {
            continue;
        }
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        out.push(Entry {
            name,
            size: meta.len(),
            modified,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.truncate(MAX_LISTED);
    Ok(out)
}

/// The bytes of schema `name` in `dir` (name checked, symlinks refused, a
/// regular file only, at most [`MAX_SCHEMA_BYTES`]): opened without
/// blocking and checked on the handle (runtime's Note [Regular files only]),
/// so a FIFO or device planted in the folder is refused, never waited on.
/// The one reader of a schema by name: the builder and the playground.
pub(crate) fn read(dir: &Path, name: &str) -> Result<Vec<u8>, FileError> {
    check_name(name)?;
    let path = dir.join(name);
    let opts = infile::Options {
        kind: infile::Kind::Regular,
        no_follow: true,
    };
    let file = infile::open(&path, opts).map_err(|e| refused(name, e))?;
    infile::read_capped(file, &path, MAX_SCHEMA_BYTES as u64).map_err(|e| refused(name, e))
}

/// Map a refused read: not found, a symlink (`ELOOP` under `O_NOFOLLOW`),
/// not a regular file, too large, or other.
fn refused(name: &str, e: InputError) -> FileError {
    if e.is_missing() {
        return FileError::Missing(name.to_owned());
    }
    if e.is_symlink() {
        return FileError::Symlink(name.to_owned());
    }
    match e {
        InputError::NotRegular { what, .. } => FileError::NotRegular(name.to_owned(), what),
        InputError::TooLarge { .. } => FileError::TooLarge(name.to_owned()),
        e => FileError::Io {
            name: name.to_owned(),
            source: e.into_io(),
        },
    }
}

/// How a save went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Saved {
    /// A new file.
    Created,
    /// An existing file replaced (`overwrite` was asked for).
    Replaced,
}

/// Temporary files get a unique suffix per process and save.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Save `bytes` as schema `name` in `dir`, atomically (Note [No writing
/// through symlinks]): readers see the old file or the new one, never half.
pub(crate) fn save(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    overwrite: bool,
) -> Result<Saved, FileError> {
    check_name(name)?;
    let io = |source| FileError::Io {
        name: name.to_owned(),
        source,
    };
    let target = dir.join(name);
    let existing = match fs::symlink_metadata(&target) {
        Ok(m) if m.file_type().is_symlink() => return Err(FileError::Symlink(name.to_owned())),
        Ok(m) if !m.is_file() => {
            return Err(FileError::Io {
                name: name.to_owned(),
                source: std::io::Error::other("not a regular file"),
            });
        }
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io(e)),
    };
    if existing && !overwrite {
        return Err(FileError::Exists(name.to_owned()));
    }
    let temp = Temp(dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    )));
    let mut file: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&temp.0)
        .map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    if overwrite {
        fs::rename(&temp.0, &target).map_err(io)?;
        Ok(if existing {
            Saved::Replaced
        } else {
            Saved::Created
        })
    } else {
        // `link` refuses an existing name atomically: a save that raced
        // ours and won is not overwritten.
        fs::hard_link(&temp.0, &target).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                FileError::Exists(name.to_owned())
            } else {
                io(e)
            }
        })?;
        Ok(Saved::Created)
    }
}

/// A temporary file removed when dropped (after a rename it is gone already).
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::{FileError, MAX_SCHEMA_BYTES, Saved, check_name, list, read, save};

    #[test]
    fn names_outside_the_rules_are_refused() {
        for ok in [
            "a.json",
            "review.json",
            "Code-Review_2.v1.json",
            "0.json",
            &format!("{}.json", "x".repeat(100)),
        ] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "../x.json",
            "/etc/x.json",
            ".hidden.json",
            "a/b.json",
            "x.txt",
            "x",
            ".json",
            "x.json.txt",
            "a\0b.json",
            "a..b.json",
            "a b.json",
            "a\\b.json",
            "é.json",
            "-x.json",
            "x.JSON",
            "a\nb.json",
            &format!("{}.json", "x".repeat(101)),
        ] {
            assert!(
                matches!(check_name(bad), Err(FileError::BadName(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn save_does_not_overwrite_unless_asked_and_lists_only_schemas() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(save(d, "a.json", b"{}", false).unwrap(), Saved::Created);
        assert!(matches!(
            save(d, "a.json", b"{\"x\":1}", false),
            Err(FileError::Exists(_))
        ));
        assert_eq!(read(d, "a.json").unwrap(), b"{}");
        assert_eq!(
            save(d, "a.json", b"{\"x\":1}", true).unwrap(),
            Saved::Replaced
        );
        assert_eq!(read(d, "a.json").unwrap(), b"{\"x\":1}");
        std::fs::write(d.join("notes.txt"), "x").unwrap();
        std::fs::write(d.join(".hidden.json"), "{}").unwrap();
        std::fs::create_dir(d.join("sub.json")).unwrap();
        let names: Vec<String> = list(d).unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["a.json"]);
        assert!(matches!(read(d, "b.json"), Err(FileError::Missing(_))));
        assert!(list(&d.join("gone")).unwrap().is_empty());
    }

    #[test]
    fn symlinks_are_neither_read_nor_written_through() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target.json");
        std::fs::write(&target, "{\"secret\":1}").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::os::unix::fs::symlink(&target, d.join("link.json")).unwrap();
        assert!(matches!(read(d, "link.json"), Err(FileError::Symlink(_))));
        for overwrite in [false, true] {
            assert!(matches!(
                save(d, "link.json", b"{}", overwrite),
                Err(FileError::Symlink(_))
            ));
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"{\"secret\":1}");
        assert!(list(d).unwrap().is_empty());
        // No temporary file is left behind by the refused saves.
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
    }

    #[test]
    fn fifos_folders_and_devices_are_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        nix::unistd::mkfifo(
            &d.join("fifo.json"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        std::fs::create_dir(d.join("dir.json")).unwrap();
        for (name, what) in [("fifo.json", "a FIFO"), ("dir.json", "a directory")] {
            match read(d, name) {
                Err(FileError::NotRegular(n, w)) => assert_eq!((n.as_str(), w), (name, what)),
                other => panic!("{name}: {other:?}"),
            }
        }
        std::fs::write(d.join("big.json"), vec![b' '; MAX_SCHEMA_BYTES + 1]).unwrap();
        assert!(matches!(read(d, "big.json"), Err(FileError::TooLarge(_))));
    }
}
