//! Opening inputs and loading schemas and profiles for the commands.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use agentshape_core::extract::{ExtractOptions, MarkerGrammar, Methods};
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use agentshape_runtime::profile::{self, profile_path};
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

/// The validator and profile selected by `--schema` / `--profile`.
pub struct Selection {
    /// The compiled schema, if any.
    pub validator: Option<Validator>,
    /// The profile, if one was given.
    pub profile: Option<Profile>,
}

impl Selection {
    /// The extraction options: the schema, and the profile's markers,
    /// methods and coercion (`--coerce` turns coercion on too).
    pub fn options(&self, coerce: bool) -> ExtractOptions<'_> {
        ExtractOptions {
            validator: self.validator.as_ref(),
            markers: self.markers(),
            coerce: coerce || self.profile.as_ref().is_some_and(|p| p.coerce),
            methods: self
                .profile
                .as_ref()
                .map_or_else(Methods::default, |p| p.methods),
        }
    }

    /// The profile's legacy markers, if any.
    pub fn markers(&self) -> Option<MarkerGrammar<'_>> {
        self.profile.as_ref().and_then(Profile::grammar)
    }
}

/// Load `--profile NAME|PATH` (runtime's Note \[Profile names and paths\]).
///
/// # Errors
/// [`CliError::NoInput`] (66) for a profile file that is missing; an unknown
/// name or a bad file is a usage error (64) naming the file and the key.
pub fn load_profile(value: &str) -> anyhow::Result<Profile> {
    let here = Path::new(".");
    if let Some(path) = profile_path(value, here) {
        if !path.is_file() {
            return Err(CliError::NoInput {
                path: value.to_owned(),
                source: io::Error::from(io::ErrorKind::NotFound),
            }
            .into());
        }
    }
    profile::load_profile(value, here).map_err(|e| CliError::Usage(e.to_string()).into())
}

/// Resolve `--schema` / `--profile`.
///
/// # Errors
/// As [`load_schema`] and [`load_profile`].
pub fn select(args: &SchemaArgs) -> anyhow::Result<Selection> {
    if let Some(path) = &args.schema {
        return Ok(Selection {
            validator: Some(load_schema(path)?),
            profile: None,
        });
    }
    if let Some(value) = &args.profile {
        let profile = load_profile(value)?;
        let validator = Validator::new(&profile.schema)
            .map_err(|e| CliError::Usage(format!("profile `{value}`: {e}")))?;
        return Ok(Selection {
            validator: Some(validator),
            profile: Some(profile),
        });
    }
    Ok(Selection {
        validator: None,
        profile: None,
    })
}
