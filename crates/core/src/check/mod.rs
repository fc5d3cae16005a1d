//! Check: what a schema cannot say about shape — invariants and contradictions.
//!
//! The last core stage of the pipeline (decode → extract → validate → **check**).
//! A JSON Schema catches wrong shapes, not wrong numbers or agents that disagree
//! (seed 002: a writer said "3 blockers" while its findings listed none; one
//! specialist called a path traversal a blocker while another praised the same
//! code). Two checks catch those, both pure:
//!
//! - [`Invariants`]: `x-invariants` rules written into the schema, CEL
//!   expressions over `self` (the instance at that location), compiled once
//!   with the schema (every [`Validator`](crate::validate::Validator) carries
//!   them) and evaluated where JSON Schema validation passed. A failed rule is a
//!   [`Violation`](crate::Violation) of kind
//!   [`Invariant`](crate::outcome::ViolationKind::Invariant); so is a rule that
//!   goes past the cost limit of one evaluation ([`COST_LIMIT`] loop steps).
//! - [`find_contradictions`]: items of several sibling outputs grouped by an
//!   identity key (near lines grouped by anchor, never chained); a group whose
//!   compared fields differ is a [`Contradiction`].
//!
//! Both are findings, never blocking by themselves: callers surface them (the
//! CLI's `check` exits 1; `run`/`ask` can store them as warnings through
//! [`check_extraction`]).

mod contradictions;
mod invariants;

pub use contradictions::{
    Contradiction, ContradictionOptions, ContradictionReport, SIMILARITY_PAIRS, SkippedSource,
    SourcedItem, SourcedValue, find_contradictions, token_jaccard,
};
pub use invariants::{
    COST_LIMIT, Invariants, MAX_RULE_BYTES, MAX_RULE_NESTING, MAX_RULE_OPERATORS, check_extraction,
};
