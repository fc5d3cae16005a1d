//! JSON text: the one family of readers and writers core uses.
//!
//! Note [One JSON family]: core read JSON text in three places, each with
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
pub(crate) mod number;
mod prescan;
mod reply;
pub(crate) mod scan;
pub(crate) mod tape;
pub(crate) mod unescape;
mod write;
pub(crate) mod ws;

#[cfg(test)]
mod tests;

pub use exact::{InexactNumber, LITERAL_SHOWN, Parsed, is_exact, parse};
pub use prescan::parse_if_json;
pub use reply::{reply_line, reply_of_line, reply_of_line_into};
pub use write::{escape_non_ascii, write_compact, write_str};

pub(crate) use exact::is_number_byte;
pub(crate) use scan::{copy_plain, first_stop, plain_run_end};
pub(crate) use unescape::unescape_lossy;
