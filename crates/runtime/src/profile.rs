//! Finding and reading a profile: `--profile NAME|PATH` and `ops.toml`'s
//! `profile` (core's Note [Profile files]: core parses, this reads).
//!
//! Note [Profile names and paths]: a built-in name (`claude-ops`) always
//! means the built-in, even when a file of that name sits in the folder
//! (write `./claude-ops` for the file). Anything else is a path, relative to
//! the folder it was given in (the working directory for the command line,
//! the config's folder for `ops.toml`); a value that is neither a built-in
//! nor an existing file and does not look like a path (no `/`, no `.toml`)
//! is an unknown profile, naming the built-ins. A file's `schema = "path"`
//! is relative to the profile file's own folder.

use std::path::{Path, PathBuf};

use agentshape_core::profile::{BUILTIN, Profile};

use crate::error::{Error, Result};
use crate::infile::{self, InputError, MAX_CONFIG_BYTES};

/// Where a profile value points: a built-in (`None`) or a file.
pub fn profile_path(value: &str, base: &Path) -> Option<PathBuf> {
    if BUILTIN.contains(&value) {
        return None;
    }
    // `./mine.toml` given on the command line is `./mine.toml` in errors,
    // not `././mine.toml`.
    let path = if base == Path::new(".") || base.as_os_str().is_empty() {
        PathBuf::from(value)
    } else {
        base.join(value)
    };
    let toml = Path::new(value)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let looks_like_path = value.contains('/') || toml || path.is_file();
    looks_like_path.then_some(path)
}

/// The name recorded with a session for this profile value: the built-in's
/// name, or the file's absolute path (so `ingest` finds it again from
/// anywhere).
pub fn profile_label(value: &str, base: &Path) -> String {
    match profile_path(value, base) {
        None => value.to_owned(),
        Some(p) => std::path::absolute(&p).unwrap_or(p).display().to_string(),
    }
}

/// Load the profile `value` names (Note [Profile names and paths]).
///
/// # Errors
/// [`Error::Input`] when the file is missing or not a regular file
/// (Note [Regular files only] in `infile`); core's
/// [`agentshape_core::Error::UnknownProfile`] or `ProfileKey` when it is
/// unknown or bad (both exit 64 in the CLI).
pub fn load_profile(value: &str, base: &Path) -> Result<Profile> {
    let Some(path) = profile_path(value, base) else {
        return Ok(Profile::builtin(value)?);
    };
    let text = infile::read_to_string(&path, MAX_CONFIG_BYTES).map_err(Error::input("profile"))?;
    let dir = path.parent().map(Path::to_owned).unwrap_or_default();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Profile::from_toml(
        &text,
        &path.display().to_string(),
        &stem,
        &mut |schema| {
            let p = dir.join(schema);
            infile::read_to_string(&p, MAX_CONFIG_BYTES).map_err(|e| match e {
                // Core names the key and the value; say where it looked.
                InputError::Open { source, .. } => {
                    format!("{source} (looked for `{}`)", p.display())
                }
                // Core already names the path: the reason alone.
                e => e.into_io().to_string(),
            })
        },
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_built_ins_and_the_rest_are_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("claude-ops"), "not read").unwrap();
        std::fs::write(dir.path().join("mine"), "schema = '{\"type\": \"object\"}'").unwrap();
        let cases = [
            ("claude-ops", None),
            ("./claude-ops", Some(dir.path().join("./claude-ops"))),
            ("mine", Some(dir.path().join("mine"))),
            ("x.toml", Some(dir.path().join("x.toml"))),
            ("sub/x", Some(dir.path().join("sub/x"))),
            ("nope", None),
        ];
        for (value, want) in cases {
            assert_eq!(profile_path(value, dir.path()), want, "{value}");
        }
        assert_eq!(
            load_profile("claude-ops", dir.path()).unwrap().name,
            "claude-ops"
        );
        assert_eq!(load_profile("mine", dir.path()).unwrap().name, "mine");
        let err = load_profile("nope", dir.path()).unwrap_err().to_string();
        assert!(err.contains("unknown profile `nope`"), "{err}");
        let err = load_profile("gone.toml", dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("profile `"), "{err}");
    }

    #[test]
    fn a_schema_path_is_relative_to_the_profile_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("p/s")).unwrap();
        std::fs::write(dir.path().join("p/s/a.json"), r#"{"type": "object"}"#).unwrap();
        std::fs::write(dir.path().join("p/agent.toml"), "schema = \"s/a.json\"\n").unwrap();
        let p = load_profile("p/agent.toml", dir.path()).unwrap();
        assert_eq!(p.name, "agent");
        assert_eq!(p.schema["type"], "object");
        std::fs::write(dir.path().join("p/bad.toml"), "schema = \"s/none.json\"\n").unwrap();
        let err = load_profile("p/bad.toml", dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`schema`: `s/none.json`"), "{err}");
    }
}
