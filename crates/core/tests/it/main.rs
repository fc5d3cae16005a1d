//! Integration tests of `agentshape-core` through its public API, one test
//! binary with a module per concern (as the CLI's `tests/it`), the two
//! corpus harnesses included: `conformance` (JSON-Schema-Test-Suite) and
//! `repair_corpus` run their corpus cases inside a few `#[test]`s each, every
//! one collecting its failing cases and naming them all in one failure.
//!
//! Proptest's regression files are in `tests/proptest-regressions/<module>.txt`:
//! where its default `failure_persistence` looks for a module of a binary
//! whose root is `tests/it/main.rs` (next to the file was right only while
//! each module was a binary of its own).

mod boundary_props;
mod conformance;
mod embedded;
mod lint_corpus;
mod message_usage;
mod native_corpus;
mod prose;
mod repair_corpus;
mod repair_props;
mod secrets;
