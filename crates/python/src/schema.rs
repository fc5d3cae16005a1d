//! Schemas and profiles as Python callers have them.
//!
//! Note [Schema forms]: `schema=` takes what instructor and Pydantic users
//! already hold: a `dict`; a `str` holding JSON (first non-blank character
//! `{`); a path (`str` or `os.PathLike`) to a JSON file; any object with
//! `model_json_schema()` (a Pydantic v2 model class); or a compiled
//! [`Validator`](PyValidator), reused as is. A `str` that is
//! not JSON text is a path: a schema is never a bare JSON string or number.
//!
//! Note [Profiles from Python]: `profile=` is a built-in name
//! (`claude-ops`, `claude-loop`, `code-review`) or a path to a profile TOML
//! file, whose `schema = "file.json"` is read relative to it: the rule of
//! the CLI's `--profile` (runtime's Note [Profile names and paths]), written
//! again here because this package depends on core only (no tokio, no
//! store); a bare word that names an existing file is that file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentshape_core::extract::{ExtractOptions, Methods};
use agentshape_core::profile::{BUILTIN, Profile};
use agentshape_core::validate::Validator;
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::convert;
use crate::errors::{self, InputError, ProfileError, SchemaError};
use crate::infile;

/// A JSON Schema compiled once, validated against many times.
///
/// Draft-07, 2019-09 and 2020-12 (from `$schema`, default 2020-12, or
/// forced with `draft=`); the schema's `x-invariants` CEL rules are compiled
/// with it and checked after the schema passes. Thread-safe: one `Validator`
/// may be used from many threads at once.
///
/// >>> v = Validator({"type": "object", "required": ["ok"]})
/// >>> v.is_valid({"ok": True})
/// True
/// >>> [e.instance_path for e in v.validate({})]
/// ['']
// Declared here, its methods in `validate`: a compiled `Validator` is one of
// the schema forms (Note [Schema forms]), and `validate` compiles through
// this module, so this one must not import `validate`.
#[pyclass(name = "Validator", module = "agentshape", frozen)]
pub struct PyValidator {
    pub inner: Arc<Validator>,
}

/// A compiled schema: from a `Validator` object (shared) or compiled here.
pub fn validator(schema: &Bound<'_, PyAny>) -> PyResult<Arc<Validator>> {
    if let Ok(v) = schema.cast::<PyValidator>() {
        return Ok(Arc::clone(&v.get().inner));
    }
    let value = schema_value(schema)?;
    let py = schema.py();
    py.detach(|| Validator::new(&value))
        .map(Arc::new)
        .map_err(|e| errors::from_core(&e))
}

/// The schema as a JSON value (Note [Schema forms]).
pub fn schema_value(schema: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(s) = schema.cast::<PyString>() {
        let text = s.to_cow()?;
        if text.trim_start().starts_with('{') {
            return serde_json::from_str(&text)
                .map_err(|e| SchemaError::new_err(format!("schema is not valid JSON: {e}")));
        }
        return read_json(Path::new(text.as_ref()));
    }
    if let Ok(path) = schema.extract::<PathBuf>() {
        return read_json(&path);
    }
    let source = if schema.hasattr("model_json_schema")? {
        schema.call_method0("model_json_schema")?
    } else {
        schema.clone()
    };
    let value = convert::to_value(&source)
        .map_err(|e| SchemaError::new_err(format!("schema: {}", e.value(schema.py()))))?;
    if !value.is_object() && !value.is_boolean() {
        return Err(SchemaError::new_err(
            "a schema is a dict, JSON text, a path, a model class with `model_json_schema()`, \
             or a `Validator`",
        ));
    }
    Ok(value)
}

fn read_json(path: &Path) -> PyResult<Value> {
    // A FIFO, folder or device is refused, never waited on (`infile`).
    let text = infile::read_to_string(path).map_err(|e| {
        let message = format!("cannot read schema `{}`: {e}", path.display());
        if e.is_io() {
            InputError::new_err(message)
        } else {
            SchemaError::new_err(message)
        }
    })?;
    serde_json::from_str(&text).map_err(|e| {
        SchemaError::new_err(format!(
            "schema `{}` is not valid JSON: {e}",
            path.display()
        ))
    })
}

/// Load a profile by name or path (Note [Profiles from Python]).
pub fn profile(value: &Bound<'_, PyAny>) -> PyResult<Profile> {
    let (text, explicit_path) = if let Ok(s) = value.cast::<PyString>() {
        (s.to_cow()?.into_owned(), false)
    } else if let Ok(p) = value.extract::<PathBuf>() {
        (p.to_string_lossy().into_owned(), true)
    } else {
        return Err(ProfileError::new_err(
            "profile is a built-in name or a path to a profile TOML file",
        ));
    };
    if !explicit_path && BUILTIN.contains(&text.as_str()) {
        return Profile::builtin(&text).map_err(|e| errors::from_core(&e));
    }
    let path = PathBuf::from(&text);
    let looks_like_path = explicit_path
        || text.contains('/')
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        || path.is_file();
    if !looks_like_path {
        return Profile::builtin(&text).map_err(|e| errors::from_core(&e));
    }
    let toml = infile::read_to_string(&path).map_err(|e| {
        let message = format!("cannot read profile `{}`: {e}", path.display());
        if e.is_io() {
            InputError::new_err(message)
        } else {
            ProfileError::new_err(message)
        }
    })?;
    let dir = path.parent().map(Path::to_owned).unwrap_or_default();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Profile::from_toml(&toml, &path.display().to_string(), &stem, &mut |schema| {
        let p = dir.join(schema);
        infile::read_to_string(&p).map_err(|e| format!("{e} (looked for `{}`)", p.display()))
    })
    .map_err(|e| errors::from_core(&e))
}

/// What an extraction needs, compiled once: the schema and the profile's
/// markers, methods and coercion. Shared by threads (`Send + Sync`).
#[derive(Debug)]
pub struct Setup {
    pub validator: Option<Arc<Validator>>,
    pub profile: Option<Profile>,
    pub coerce: bool,
}

impl Setup {
    /// Resolve `schema=`/`profile=`/`coerce=` (a schema wins over the
    /// profile's own, as `--schema` does not combine with `--profile`).
    pub fn new(
        schema: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
        coerce: bool,
    ) -> PyResult<Setup> {
        let profile = profile.map(self::profile).transpose()?;
        let validator = match (schema, &profile) {
            (Some(s), _) => Some(validator(s)?),
            (None, Some(p)) => {
                let schema = p.schema.clone();
                let compiled = schema_of_profile(&p.name, &schema)?;
                Some(Arc::new(compiled))
            }
            (None, None) => None,
        };
        Ok(Setup {
            validator,
            profile,
            coerce,
        })
    }

    /// The core options borrowing from this setup.
    pub fn options(&self) -> ExtractOptions<'_> {
        ExtractOptions {
            validator: self.validator.as_deref(),
            markers: self.profile.as_ref().and_then(Profile::grammar),
            coerce: self.coerce || self.profile.as_ref().is_some_and(|p| p.coerce),
            methods: self
                .profile
                .as_ref()
                .map_or_else(Methods::default, |p| p.methods),
        }
    }
}

fn schema_of_profile(name: &str, schema: &Value) -> PyResult<Validator> {
    Validator::new(schema).map_err(|e| ProfileError::new_err(format!("profile `{name}`: {e}")))
}
