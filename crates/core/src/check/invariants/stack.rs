//! The stack a rule is parsed, compiled, evaluated and dropped on.
//!
//! Note [Stack for rules]: bounding a rule's size (Note [Rule size limits])
//! bounds how deep the `cel` parser and interpreter recurse, but not how
//! much stack that takes: their frames are large, and the caller's stack
//! may be small (a tokio worker's or a Python thread's is 2 MiB). Measured
//! on the rules of `deepest_accepted_rules_run_on_a_small_stack`'s shapes:
//!
//! | per level                       | debug build | release build |
//! |---------------------------------|-------------|---------------|
//! | bracket nesting, parser         | ~175 KiB    | ~8 KiB        |
//! | `+` chain, interpreter          | ~78 KiB     | ~3.8 KiB      |
//! | index or `==` chain, interpreter| ~38 KiB     | ~1.7 KiB      |
//! | `+` chain, parser               | ~1.3 KiB    | ~0.4 KiB      |
//!
//! so a 2 MiB thread overflowed at 12 nested parentheses and 27 `+` terms
//! in a debug build (545 terms in a release build). Each rule therefore
//! carries the stack it needs, estimated from the size measured before it
//! is parsed at twice those costs per level ([`need`]); the parse, each
//! evaluation (both evaluators), and dropping the compiled rule run where
//! that much stack is left, on a fresh segment ([`stacker`]) when the
//! calling thread has less. A rule within the limits never overflows,
//! whatever thread runs it (the test runs the deepest ones on a 256 KiB
//! thread), and in a release build a usual rule (the code-review schema's:
//! 7 operators, 2 levels) needs about 200 KiB and runs where it is, at the
//! cost of one comparison of the stack pointer.

use super::limits::Measure;

/// Bytes of stack per operator, member link or index, and per level of
/// bracket nesting: twice the measured cost (Note [Stack for rules]).
const PER_OPERATOR: usize = if cfg!(debug_assertions) {
    160 << 10
} else {
    8 << 10
};
const PER_LEVEL: usize = if cfg!(debug_assertions) {
    352 << 10
} else {
    16 << 10
};
/// What any rule may need besides its levels, and the smallest segment.
const BASE: usize = if cfg!(debug_assertions) {
    512 << 10
} else {
    128 << 10
};

/// The stack a rule of size `m` needs (Note [Stack for rules]).
pub(super) fn need(m: Measure) -> usize {
    BASE.saturating_add(m.operators.saturating_mul(PER_OPERATOR))
        .saturating_add(m.nesting.saturating_mul(PER_LEVEL))
}

/// Run `f` where at least `need` bytes of stack are left.
pub(super) fn with<R>(need: usize, f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(need, need, f)
}
