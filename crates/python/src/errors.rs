//! The exceptions, one per category of the CLI's exit codes.
//!
//! Note [Exceptions and exit codes]: the command line answers with an exit
//! code, Python with an exception; both say the same thing. Every class has
//! an `exit_code` attribute (the code `agentshape` exits with for that
//! failure), so a wrapper that shells out and one that calls the package
//! can share their handling:
//!
//! | exception | exit | when |
//! |---|---|---|
//! | `AgentshapeError` | | base of them all |
//! | `UsageError` (also a `ValueError`) | 64 | a caller mistake |
//! | `SchemaError` | 64 | a schema that does not compile |
//! | `ProfileError` | 64 | an unknown or bad profile |
//! | `NotJSONError` | 64 | a Python value JSON cannot hold (NaN, a cycle, ...) |
//! | `InputError` | 66 | a file missing or unreadable, bytes that are not UTF-8 text |
//! | `InvalidOutputError` | 1 | `Extraction.raise_for_outcome()`: found but invalid |
//! | `NoOutputError` | 2 | nothing structured found (also `parse_as` on nothing) |
//! | `AgentError` | 3 | the agent or provider reported an error |
//!
//! Data is not an exception (core's rule): an invalid instance is a list of
//! violations, a malformed transcript line a skipped-line count.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(
    agentshape,
    AgentshapeError,
    PyException,
    "Base of every agentshape exception; `exit_code` is the CLI's code for it."
);
create_exception!(
    agentshape,
    UsageError,
    AgentshapeError,
    "A caller mistake: bad schema, profile, option or value (exit 64)."
);
create_exception!(
    agentshape,
    SchemaError,
    UsageError,
    "The JSON Schema does not compile, is not JSON, or cannot be read (exit 64)."
);
create_exception!(
    agentshape,
    ProfileError,
    UsageError,
    "The profile is unknown or its file is bad (exit 64)."
);
create_exception!(
    agentshape,
    NotJSONError,
    UsageError,
    "A Python value JSON cannot hold: NaN, a non-str key, a cycle, a set... (exit 64)."
);
create_exception!(
    agentshape,
    InputError,
    AgentshapeError,
    "An input file is missing or unreadable, or bytes are not UTF-8 text (exit 66)."
);
create_exception!(
    agentshape,
    InvalidOutputError,
    AgentshapeError,
    "Structured output was found but does not validate (exit 1)."
);
create_exception!(
    agentshape,
    NoOutputError,
    AgentshapeError,
    "No structured output was found (exit 2)."
);
create_exception!(
    agentshape,
    AgentError,
    AgentshapeError,
    "The agent or provider reported an error: rate limit, auth, api, timeout... (exit 3)."
);

/// Add the exception classes to the module, each with its `exit_code`, and
/// make `UsageError` a `ValueError` too (what Python code catches for bad
/// arguments).
///
/// # Errors
/// Only when Python cannot set the attributes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let classes = [
        ("AgentshapeError", py.get_type::<AgentshapeError>(), None),
        ("UsageError", py.get_type::<UsageError>(), Some(64)),
        ("SchemaError", py.get_type::<SchemaError>(), Some(64)),
        ("ProfileError", py.get_type::<ProfileError>(), Some(64)),
        ("NotJSONError", py.get_type::<NotJSONError>(), Some(64)),
        ("InputError", py.get_type::<InputError>(), Some(66)),
        (
            "InvalidOutputError",
            py.get_type::<InvalidOutputError>(),
            Some(1),
        ),
        ("NoOutputError", py.get_type::<NoOutputError>(), Some(2)),
        ("AgentError", py.get_type::<AgentError>(), Some(3)),
    ];
    for (name, class, code) in classes {
        class.setattr("exit_code", code)?;
        m.add(name, class)?;
    }
    // `class UsageError(AgentshapeError, ValueError)`: the bases cannot be
    // given to `create_exception!`, so they are set once here.
    let usage = py.get_type::<UsageError>();
    let bases = (
        py.get_type::<AgentshapeError>(),
        py.get_type::<PyValueError>(),
    );
    usage.setattr("__bases__", bases)?;
    Ok(())
}

/// The exception for a core error: every core error is a caller mistake
/// (bad schema or profile) except a reader's I/O failure.
pub fn from_core(e: &agentshape_core::Error) -> PyErr {
    use agentshape_core::Error as E;
    match e {
        E::InvalidSchema { .. } => SchemaError::new_err(e.to_string()),
        E::UnknownProfile { .. } | E::InvalidProfile { .. } | E::ProfileKey { .. } => {
            ProfileError::new_err(e.to_string())
        }
        E::Io(_) => InputError::new_err(e.to_string()),
        _ => UsageError::new_err(e.to_string()),
    }
}
