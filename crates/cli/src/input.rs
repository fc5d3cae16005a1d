//! Opening inputs and loading schemas and profiles for the commands.

use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use agentshape_core::extract::{ExtractOptions, MarkerGrammar, Methods};
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use agentshape_runtime::infile::{self, InputError, MAX_CONFIG_BYTES, Options};
use agentshape_runtime::profile;
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
/// Note [Inputs are files]: a FILE argument is streamed, so it may be a
/// regular file or a FIFO/pipe (`<(zcat log.gz)`); a directory, a device
/// (`/dev/zero`) or a socket is refused, and nothing blocks on opening
/// (runtime's Note [Regular files only]). Schemas, profiles and configs are
/// read whole and must be regular files of at most 16 MiB. A missing or
/// unopenable file is 66; a FILE argument that is not a file agentshape
/// reads is 66 too (Note [Batch exit codes]: the batch goes on without it);
/// a schema, profile or config that is not a regular file or is too large
/// is 64, a bad schema or config like any other.
///
/// # Errors
/// [`CliError::NoInput`] when the file cannot be opened or is not a file or FIFO.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, CliError> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(READ_BUF, io::stdin())));
    }
    let file = infile::open(path, Options::STREAM).map_err(|e| CliError::NoInput {
        path: display(path),
        source: e.into_io(),
    })?;
    Ok(Box::new(BufReader::with_capacity(READ_BUF, file)))
}

/// Fail early (exit 66) when any named file is missing or not a regular
/// file, before doing any work (the open checks again, on the handle).
///
/// # Errors
/// [`CliError::NoInput`] naming the first such file.
pub fn check_exist(paths: &[PathBuf]) -> Result<(), CliError> {
    for p in paths {
        if !is_stdin(p) && !p.is_file() {
            let source = match std::fs::metadata(p) {
                Ok(m) => io::Error::other(format!(
                    "is {}, not a regular file",
                    infile::describe(m.file_type())
                )),
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

/// A refused schema, profile or config (Note [Inputs are files]): missing
/// or unreadable is 66, anything else (not a regular file, too large) is a
/// usage error, 64, naming `what` it is for.
pub fn refused(what: &str, e: InputError) -> CliError {
    match e {
        InputError::Open { path, source } | InputError::Read { path, source } => {
            CliError::NoInput { path, source }
        }
        e => CliError::Usage(format!("{what} {e}")),
    }
}

/// Read a JSON Schema file (or stdin for `-`), at most 16 MiB.
///
/// # Errors
/// [`CliError::NoInput`] when missing, [`CliError::Usage`] when it is not a
/// regular file, too large, not JSON or does not compile.
pub fn load_schema(path: &Path) -> anyhow::Result<Validator> {
    let bytes = if is_stdin(path) {
        let mut bytes = Vec::new();
        io::stdin()
            .take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| CliError::NoInput {
                path: display(path),
                source,
            })?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(CliError::Usage(format!(
                "schema `-` is larger than the {} MiB limit",
                MAX_CONFIG_BYTES >> 20
            ))
            .into());
        }
        bytes
    } else {
        infile::read(path, MAX_CONFIG_BYTES).map_err(|e| refused("schema", e))?
    };
    let schema: Value = serde_json::from_slice(&bytes).map_err(|e| {
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
/// name, a bad file, or a path that is not a regular file of at most 16 MiB
/// is a usage error (64) naming the file (and the key).
pub fn load_profile(value: &str) -> anyhow::Result<Profile> {
    let p = profile::load_profile(value, Path::new(".")).map_err(|e| match e {
        // Checked on the opened file (Note [Inputs are files]), not before.
        agentshape_runtime::Error::Input { what, source } => refused(what, source).into(),
        e => anyhow::Error::from(CliError::Usage(e.to_string())),
    })?;
    // `mask = false` in the profile is `--no-mask`, said as loudly.
    if !p.mask && crate::mask::turn_off() {
        crate::output::eprint(crate::mask::OFF_WARNING);
    }
    Ok(p)
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
