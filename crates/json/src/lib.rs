//! # agentshape-json
//!
//! JSON text for agentshape: the one family of strict readers and writers
//! (below), the tolerant parser that repairs what models get wrong
//! (`repair`), the strict one-pass writer of candidates (`minify`), the
//! scan that finds candidates in prose (`candidates`), and the byte scans
//! under them all (`bytescan`). It is pure, like agentshape-core, which
//! imports it and re-exports what its users need (`json`, `extract::repair`,
//! `outcome::Repair`); nothing else should import it directly.
//!
//! ```
//! use agentshape_json::{Repair, repair::repair_json, write_compact};
//!
//! let r = repair_json("Here: {summary: 'ok', items: [1, 2,], done: True}").unwrap();
//! let mut out = Vec::new();
//! write_compact(&mut out, &r.value);
//! assert_eq!(out, br#"{"summary":"ok","items":[1,2],"done":true}"#);
//! assert!(r.repairs.contains(&Repair::TrailingComma));
//! ```
//!
//! Note [A crate for the JSON layer]: these modules were core's `json`,
//! `bytescan` and `extract::{repair, minify, candidates}`, and imported
//! nothing of the pipeline's stages but the `Repair` list and the
//! top-level shape the prose rules read (`Top`), which moved with them. They
//! are a crate of their own for one measured reason: the npm package's
//! `.wasm` (issue 43) has a 1.5 MB gzipped budget, so the `wasm` profile
//! builds for size (`opt-level = "s"`), and there core's extraction ran at
//! 10 µs a bench reply against 4.5 µs natively. Cargo sets an opt-level
//! per crate, not per module: core at `opt-level = 3` made that 6.6 µs but
//! the file 1,814,116 bytes gzipped, most of the growth being jsonschema's
//! generic keywords instantiated in core's `validate` (+788 KB before
//! compression). This crate alone is built at `opt-level = 3` there
//! (Cargo.toml's `[profile.wasm.package.agentshape-json]`), so the hot
//! loops of extraction and repair are, and validation's generic code is
//! not: core's time 8.5 µs, the file 1,481,944 bytes gzipped (+21 KB), and
//! the package's `extract` 16% faster (19% with all of core at 3; one Node
//! process, the builds interleaved); validation from text got faster too
//! (the tape reader is here). Natively every crate is built at 3 anyway,
//! and the split measured the same there (4.4–4.6 µs a reply, as before).
//!
//! Note [One JSON family]: core read JSON text in three places, each with
//! its own escapes, `\u` decoding, whitespace and number grammar (this
//! module, the tape reader of `validate`, the repair parser), and the first//! Note [One JSON family]: core read JSON text in three places, each with
//! its own escapes, `\u` decoding, whitespace and number grammar (this
//! module, the tape reader of `validate`, the repair parser), and the first
//! two called each other. Here the readers and writers are built on one
//! lexer:
//!
//! - `unescape`: the one reader of an escape after its backslash, and the
//!   unescapers built on it (the block walk of reply lines, the lazy bodies
//!   of the tape, the lossy reading of refused text);
//! - `number`: the one grammar of number literals;
//! - `ws`: JSON whitespace, a byte or a word at a time;
//! - `scan`: the byte-stop loops, where a string's plain run ends.
//!
//! On them: `exact` (strict parsing that never changes a number
//! silently, Note [Big numbers]), `prescan` (a scan that builds nothing,
//! Note [Doomed strict parses]), `reply` (reply lines read in place),
//! `tape` (a borrowed reading validated in place, Note [Validating from
//! text]) and `write` (compact JSON out). Nothing here imports a stage
//! of the pipeline: the reports built from what it finds (an inexact
//! number's `Violation`) live with the stages.
//!
//! The repair parser (`extract::repair`) is lenient where these are strict;
//! its `lex` module shares what is truly the same (the escapes, the number
//! bytes, the run scans) and states its lenient policy beside them.

mod exact;
pub mod number;
mod prescan;
mod reply;
pub mod scan;
pub mod tape;
pub mod unescape;
mod write;
pub mod ws;

pub mod bytescan;
pub mod candidates;
pub mod minify;
pub mod repair;
mod repairs;
mod top;

#[cfg(test)]
mod tests;

pub use repairs::Repair;
pub use top::Top;

pub use exact::{InexactNumber, LITERAL_SHOWN, Parsed, is_exact, parse};
pub use prescan::parse_if_json;
pub use reply::{reply_line, reply_of_line, reply_of_line_into};
pub use write::{
    escape_beyond_latin1, escape_non_ascii, utf8_of_utf16le, utf16le_of, write_compact, write_str,
};

pub use exact::is_number_byte;
pub use scan::{copy_plain, first_stop, plain_run_end};
pub use unescape::unescape_lossy;
