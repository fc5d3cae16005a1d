//! # agentshape-core
//!
//! The pure heart of agentshape: it turns what an LLM agent said into a value a
//! program can trust. Bytes go through four stages, each a module:
//!
//! - [`alerts`]: alert rules, and whether they fire given what the store measured;
//! - [`decode`]: agent transcripts (Claude Code stream-json, Codex JSONL, provider
//!   response bodies, plain text) into normalized [`Event`]s and a [`RunSummary`],
//!   incrementally and in bounded memory;
//! - [`extract`]: the structured value out of a run or a reply, trying native
//!   structured output, fenced JSON, bare JSON, repaired JSON and legacy markers
//!   in that order, recording which step won and every repair applied;
//! - [`validate`]: JSON Schema validation (draft-07, 2019-09, 2020-12) with
//!   optional schema-aligned coercion;
//! - [`check`]: `x-invariants` rules (CEL) in the schema and contradictions
//!   across sibling outputs, surfaced as findings;
//! - [`profile`]: built-in bundles of schema and marker grammar;
//! - [`secrets`]: credentials found in transcript text and masked;
//! - [`hook`]: Claude Code hook input, and the reason a blocked stop gives the model;
//! - [`json`]: strict JSON parsing that reports the numbers it cannot hold
//!   exactly instead of changing them.
//!
//! Below the stages sit [`facts`], the nouns they share (error categories,
//! token counts, result and session info, the run summary, format names),
//! which import none of them (Note [Facts below stages]), and [`classify`],
//! the error-text rules the decoders and the summary builder share.
//!
//! The crate does no I/O of its own: it never opens files, spawns processes,
//! reads the environment or the clock. Callers hand it readers and bytes.
//!
//! ```
//! use agentshape_core::extract::{extract_text, ExtractOptions};
//! use agentshape_core::Method;
//!
//! let reply = "Sure! Here it is:\n```json\n{\"action\": \"complete\", \"confidence\": 90}\n```";
//! let got = extract_text(reply, &ExtractOptions::default());
//! assert_eq!(got.method, Method::Fenced);
//! assert_eq!(got.value.unwrap()["confidence"], 90);
//! ```

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

pub mod alerts;
// The byte scans of agentshape-json, which the secret rules' base64 pass
// also reads (Note [Vector byte masks] there).
use agentshape_json::bytescan;
pub mod check;
pub mod classify;
pub mod decode;
pub mod duration;
pub mod error;
pub mod event;
pub mod extract;
pub mod facts;
pub mod hook;
pub mod json;
pub mod lint;
pub mod outcome;
pub mod pricing;
pub mod profile;
pub mod secrets;
pub mod summary;
pub mod usage;
pub mod validate;

pub use error::{Error, Result};
pub use event::Event;
pub use facts::{ErrorCategory, RunSummary};
pub use outcome::{Extraction, Method, Violation};
