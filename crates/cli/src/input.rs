//! Opening inputs and loading schemas and profiles for the commands.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use agentshape_core::extract::MarkerGrammar;
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use serde_json::Value;

use crate::args::SchemaArgs;
use crate::exit::CliError;

/// Read buffer size: large reads keep syscalls off the hot path.
const READ_BUF: usize = 256 << 10;

/// The display name of an input (`-` for stdin).
pub fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Whether the path means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Open a file, or stdin for `-`, as a buffered reader.
///
/// # Errors
/// [`CliError::NoInput`] when the file cannot be opened.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, CliError> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(READ_BUF, io::stdin())));
    }
    let file = File::open(path).map_err(|source| CliError::NoInput {
        path: display(path),
        source,
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(CliError::NoInput {
            path: display(path),
            source: io::Error::other("is a directory"),
        });
    }
    Ok(Box::new(BufReader::with_capacity(READ_BUF, file)))
}

/// Fail early (exit 66) when any named file is missing, before doing any work.
///
/// # Errors
/// [`CliError::NoInput`] naming the first missing file.
pub fn check_exist(paths: &[PathBuf]) -> Result<(), CliError> {
    for p in paths {
        if !is_stdin(p) && !p.is_file() {
            let source = match std::fs::metadata(p) {
                Ok(_) => io::Error::other("not a regular file"),
                Err(e) => e,
            };
            return Err(CliError::NoInput {
                path: display(p),
                source,
            });
        }
    }
    Ok(())
}

/// Read a JSON Schema file.
///
/// # Errors
/// [`CliError::NoInput`] when missing, [`CliError::Usage`] when it is not JSON
/// or does not compile.
pub fn load_schema(path: &Path) -> anyhow::Result<Validator> {
    let mut text = String::new();
    open(path)?
        .read_to_string(&mut text)
        .map_err(|source| CliError::NoInput {
            path: display(path),
            source,
        })?;
    let schema: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!("schema `{}` is not valid JSON: {e}", display(path)))
    })?;
    Ok(Validator::new(&schema)
        .map_err(|e| CliError::Usage(format!("schema `{}`: {e}", display(path))))?)
}

/// The validator and marker grammar selected by `--schema` / `--profile`.
pub struct Selection {
    /// The compiled schema, if any.
    pub validator: Option<Validator>,
    /// The profile's legacy markers, if any.
    pub markers: Option<MarkerGrammar>,
}

/// Resolve `--schema` / `--profile`.
///
/// # Errors
/// As [`load_schema`]; an unknown profile is a usage error.
pub fn select(args: &SchemaArgs) -> anyhow::Result<Selection> {
    if let Some(path) = &args.schema {
        return Ok(Selection {
            validator: Some(load_schema(path)?),
            markers: None,
        });
    }
    if let Some(name) = &args.profile {
        let profile = Profile::builtin(name).map_err(|e| CliError::Usage(e.to_string()))?;
        let validator = Validator::new(&profile.schema)
            .map_err(|e| CliError::Usage(format!("profile `{name}`: {e}")))?;
        return Ok(Selection {
            validator: Some(validator),
            markers: profile.markers,
        });
    }
    Ok(Selection {
        validator: None,
        markers: None,
    })
}
