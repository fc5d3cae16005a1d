//! Integration tests of `agentshape-core` through its public API, one test
//! binary with a module per concern (as the CLI's `tests/it`). The two
//! corpus harnesses, `conformance` and `repair_corpus`, stay binaries of
//! their own: they run one libtest-mimic trial per corpus case
//! (`harness = false`), which the standard harness of this binary cannot.
//!
//! Proptest's regression files are in `tests/proptest-regressions/<module>.txt`:
//! where its default `failure_persistence` looks for a module of a binary
//! whose root is `tests/it/main.rs` (next to the file was right only while
//! each module was a binary of its own).

mod boundary_props;
mod embedded;
mod lint_corpus;
mod message_usage;
mod native_corpus;
mod prose;
mod repair_props;
mod secrets;
