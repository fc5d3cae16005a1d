//! # agentshape (Python)
//!
//! The native module `agentshape._agentshape`, re-exported whole by
//! `python/agentshape/__init__.py`: agentshape-core's stages as Python
//! functions and classes, with no logic of their own. Decode (`parse`,
//! `Decoder`), extract (`extract`, `extract_many`, `Extractor`), validate
//! (`Validator`, `validate_many`) and check (`check`); results mirror the
//! CLI's JSON (same field names), errors are exceptions named after the
//! CLI's exit codes (Note [Exceptions and exit codes] in `errors`).
//!
//! Note [Releasing the interpreter]: every call releases the interpreter
//! (`Python::detach`) around the work core does, so other Python threads
//! run meanwhile and `threading` gives real parallelism; it holds it only
//! to read arguments and to build the results. Two exceptions, both about
//! cost: `Validator.validate`/`is_valid` on an instance of a few thousand
//! nodes or fewer keep it (Note [Small instances keep the interpreter] in
//! `validate`), and the walk over Python objects holds it because it reads
//! them. Batch forms go further and use every core (Note [Batch threads] in
//! `parallel`).

// pyo3's macros expand to `unsafe` blocks under their own
// `#[allow(unsafe_code)]`, which `forbid` would reject; the workspace's
// `deny` still rejects any written here.
#![deny(unsafe_code)]
// Doc comments of Python-visible items are the docstrings, with Python
// examples (`>>> e.repairs` prints `['trailing_comma']`), not Rust links.
#![allow(clippy::doc_link_with_quotes)]

mod build;
mod check;
mod convert;
mod errors;
mod extract;
mod infile;
mod instance;
mod parallel;
mod parse;
mod schema;
mod validate;

use pyo3::prelude::*;

/// Note [Allocator]: the extension's Rust code (core's extraction and
/// validation) allocates many small strings, vectors and maps per call;
/// with the system allocator, glibc's `malloc`/`free` were a quarter of
/// `agentshape.extract`'s profile on the shared corpus. mimalloc, as in the
/// CLI, serves only Rust allocations: Python objects keep Python's own
/// allocator, and no memory crosses between the two (every value handed to
/// Python is a new Python object).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// agentshape: turn what LLM agents print into validated data.
#[pymodule]
fn _agentshape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_DEPTH", convert::MAX_DEPTH)?;
    errors::register(m)?;
    m.add_class::<extract::PyExtraction>()?;
    m.add_class::<extract::PyExtractor>()?;
    m.add_class::<validate::PyValidator>()?;
    m.add_class::<validate::PyViolation>()?;
    // The name for a violation: `Validator.validate() -> list[Error]`.
    m.add("Error", m.py().get_type::<validate::PyViolation>())?;
    m.add_class::<parse::PyRunSummary>()?;
    m.add_class::<parse::PyDecoder>()?;
    m.add_class::<check::PyCheckReport>()?;
    m.add_function(wrap_pyfunction!(extract::extract, m)?)?;
    m.add_function(wrap_pyfunction!(extract::extract_many, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate_many, m)?)?;
    m.add_function(wrap_pyfunction!(parse::parse, m)?)?;
    m.add_function(wrap_pyfunction!(check::check, m)?)?;
    Ok(())
}
