//! Files the CLI writes whole: replaced atomically, never half-written.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::Path;

/// Replace `path` with `bytes` atomically: a temporary file in the same
/// folder, written, given `permissions` when set, synced, renamed over
/// `path`, and the folder synced. A reader sees the old file or the new
/// one, never half of one; a failure removes the temporary file and leaves
/// `path` as it was.
pub(crate) fn replace_file(
    path: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.agentshape-{}.tmp", std::process::id()));
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        // The rename is durable once the folder's entry is on disk.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_a_failure_leaves_it_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.html");
        fs::write(&path, "old").unwrap();
        replace_file(&path, b"new", None).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        // A folder in the way of the rename: the old entry stays, nothing
        // is left beside it.
        let blocked = dir.path().join("sub");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("x"), "x").unwrap();
        assert!(replace_file(&blocked, b"new", None).is_err());
        assert!(blocked.is_dir());
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".agentshape-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
