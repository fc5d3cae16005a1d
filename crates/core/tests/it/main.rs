//! Integration tests of `agentshape-core` through its public API, one test
//! binary with a module per concern (as the CLI's `tests/it`). The two
//! corpus harnesses, `conformance` and `repair_corpus`, stay binaries of
//! their own: they run one libtest-mimic trial per corpus case
//! (`harness = false`), which the standard harness of this binary cannot.
//!
//! A proptest regression file sits next to its module
//! (`<module>.proptest-regressions`), where proptest looks for it.

mod boundary_props;
mod embedded;
mod lint_corpus;
mod message_usage;
mod native_corpus;
mod prose;
mod repair_props;
mod secrets;
