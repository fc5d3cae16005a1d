//! A borrowed reading of strict JSON text, validated in place.
//!
//! Note [Validating from text]: `validate --jsonl` spent nine tenths of its
//! time building and dropping a `serde_json::Value` per instance (an
//! `IndexMap` per object, every key hashed, every string copied) and one
//! twentieth validating it. [`Doc`] reads the same text into one flat arena:
//! strings without escapes stay borrowed from the text, an object is a run of
//! `(key, node)` pairs found by a linear scan (agent objects have a handful
//! of keys), and `jsonschema` validates it through its custom-representation
//! API ([`Tape`]). The reading is *conservative*: it returns `None` on
//! anything it is not sure `serde_json` reads the same way (a syntax error,
//! a repeated key, a `\u` escape of a lone surrogate, a number literal that
//! is not exact (Note [Big numbers] in `json`), nesting deeper than
//! [`MAX_DEPTH`], bytes that are not UTF-8), and the caller then takes the
//! `Value` path, which stays the reference for every verdict and message.
//! When it does read the text, the value is the one `serde_json` gives
//! (`doc_agrees_with_serde_json`, a proptest over arbitrary and JSON-shaped
//! input), so the verdict is the same too
//! (`tape_verdicts_agree_with_value_verdicts`).
//!
//! Note [Lazy escapes]: most strings of agent output that hold escapes
//! (`\n`, `\"`, `\\`) are only type-checked, yet each cost an allocation and
//! a copy to unescape. `Doc::parse_bytes` checks every escape as it scans
//! (exactly the escapes `serde_json` reads into a `String`; a lone surrogate
//! or an unknown letter still declines) and keeps the raw body
//! ([`Slot::Escaped`]); the text is unescaped, once, into the document's
//! cell for that string only when a keyword or a rule reads it
//! (`escaped_strings_read_lazily_agree_with_serde_json`).
//!
//! Note [Bytes, not text]: the CLI checked each line's UTF-8 before calling
//! in (5% of `validate --jsonl`), then again on its `Value` path. The check
//! now happens here, once, over the whole line ([`with_doc`]): a line that
//! is not UTF-8 is declined, and the caller's `Value` path gives today's
//! error. Checking only inside strings (JSON outside them is ASCII) was
//! tried and measured: `str::from_utf8` per string body cost 21% of the
//! instructions against 5% for one call over the line (the call's setup
//! dominates on short strings), so the line is checked whole.
//!
//! Note [Reused arenas]: a document's five vectors were allocated and freed
//! per line (with the unescaped strings, a tenth of `validate --jsonl` was
//! `mimalloc`). A [`Scratch`] keeps them between the lines one thread
//! validates: [`Doc::parse_in`] takes them, [`Doc::recycle`] clears them and
//! gives them back. The arena borrows the text, so its element type names
//! the text's lifetime; an empty vector changes that lifetime without
//! `unsafe` through an in-place `collect` (same layout, same allocation:
//! `recycled_vectors_keep_their_allocation`).
//!
//! Measured together (lazy escapes, reused arenas, Note [Errors from text]
//! in `validate`, the CLI's direct line for a valid verdict; not one by one),
//! `validate --jsonl --json` over the first 10,000 bench instances: 453.5 →
//! 361.5 million instructions (−20%); over all 100,000, median user time
//! 1.35 → 1.04 s (5 alternating runs each on a loaded host). Output byte
//! for byte the same.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::OnceLock;

use serde_json::{Number, Value};

use super::unescape::unescape_all;

mod node;
mod reader;
mod schema;

pub use node::{
    Shape, TapeArray, TapeElements, TapeMembers, TapeNode, TapeObject, write_raw_escaped,
};
use reader::Reader;
pub use schema::Tape;

/// Deepest nesting read here (`serde_json` refuses beyond 128).
pub const MAX_DEPTH: usize = 100;

/// Members of one object past which the repeated-key scan stops and the
/// `Value` path reads the text: the scan is quadratic, and agent objects
/// have a handful of keys.
pub const MAX_SCANNED_KEYS: usize = 64;

/// Why [`Doc::read_in`] read nothing.
///
/// Note [Declined, not refused]: a caller that falls back on `serde_json`
/// needs to know whether to: text the reader refuses on a point of grammar
/// (a missing comma, a cut, a raw control character, a bad literal) is
/// refused by `serde_json` too, and need not be parsed again; text declined
/// on a point the reader leaves to `serde_json` (a repeated key, a wide
/// object, a `\u` escape it does not take, an inexact number, deep
/// nesting, an arena past `u32`) may still be JSON
/// (`invalid_means_serde_json_refuses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declined {
    /// Not JSON: `serde_json` refuses it too.
    Invalid,
    /// Perhaps JSON: the `Value` path decides.
    Doubtful,
}

/// One node of a [`Doc`].
#[derive(Debug)]
pub enum Slot<'t> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, held exactly (the reader declines one it cannot hold).
    Number(Number),
    /// A string without escapes, borrowed from the text.
    String(Cow<'t, str>),
    /// A string with escapes (Note [Lazy escapes]): the raw body between
    /// its quotes, every escape checked, and the index of the cell in
    /// [`Doc::unescaped`] that holds its text once read.
    Escaped {
        /// The body between the quotes, escapes as written.
        raw: &'t str,
        /// Its cell in [`Doc::unescaped`].
        cell: u32,
    },
    /// `len` node indices at `start` of [`Doc::items`].
    Array {
        /// The first item's index in [`Doc::items`].
        start: u32,
        /// The number of items.
        len: u32,
    },
    /// `len` members at `start` of [`Doc::members`].
    Object {
        /// The first member's index in [`Doc::members`].
        start: u32,
        /// The number of members.
        len: u32,
    },
}

/// Strict JSON text read into one arena, borrowing what it can from the text.
#[derive(Debug, Default)]
pub struct Doc<'t> {
    /// Every node, the root's index in `root`.
    pub slots: Vec<Slot<'t>>,
    /// The slot indices of arrays' items, each array's in a run.
    pub items: Vec<u32>,
    /// The keys and value slots of objects' members, each object's in a run.
    pub members: Vec<(Cow<'t, str>, u32)>,
    /// The text of each [`Slot::Escaped`], filled when first read (a
    /// `OnceLock`, not a `OnceCell`: a built instance of core's `validate`
    /// is shared by threads).
    pub unescaped: Vec<OnceLock<String>>,
    /// The root value's slot.
    pub root: u32,
    /// The text read, the root value's extent in it, and the
    /// [`Cut`]s of its compact form (Note [Copied runs]).
    text: &'t str,
    span: (u32, u32),
    cuts: Vec<Cut>,
    /// The cuts are complete: [`TapeNode::write_compact`] may copy the
    /// root's text between them.
    copyable: bool,
}

/// Where the root's compact form leaves its text (Note [Copied runs]): a
/// whitespace run to drop, or a token to write from its node.
#[derive(Debug, Clone, Copy)]
struct Cut {
    from: u32,
    to: u32,
    /// [`NO_NODE`] for whitespace.
    node: u32,
}

/// [`Cut::node`] of whitespace.
const NO_NODE: u32 = u32::MAX;

/// The vectors of a [`Doc`] and its reader, kept between documents (Note
/// [Reused arenas]).
#[derive(Debug, Default)]
pub struct Scratch {
    slots: Vec<Slot<'static>>,
    items: Vec<u32>,
    members: Vec<(Cow<'static, str>, u32)>,
    unescaped: Vec<OnceLock<String>>,
    item_stack: Vec<u32>,
    member_stack: Vec<(Cow<'static, str>, u32)>,
    cuts: Vec<Cut>,
}

/// Nodes past which a [`Scratch`] lets its vectors go instead of keeping
/// them (one huge instance must not pin its arena for the rest of a run).
const KEEP_SLOTS: usize = 1 << 16;

/// An empty vector of the same allocation for another lifetime of `T`
/// (Note [Reused arenas]): `collect` of a `vec::IntoIter` into a type of the
/// same size and alignment reuses the buffer in place.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

thread_local! {
    /// One [`Scratch`] per thread for [`with_doc`].
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Read `text` with this thread's [`Scratch`] and call `f` on the document;
/// `None` when the reader declines the text (Note [Validating from text]).
pub fn with_doc<T>(text: &[u8], f: impl FnOnce(&Doc<'_>) -> T) -> Option<T> {
    // See Note [Bytes, not text]: one check over the line.
    with_doc_str(std::str::from_utf8(text).ok()?, f)
}

/// This thread's [`Scratch`], taken out for a caller that reads several
/// documents in turn (an empty one when it is already out); give it back
/// with [`put_scratch`].
pub fn take_scratch() -> Scratch {
    SCRATCH.with(|cell| {
        cell.try_borrow_mut()
            .map(|mut held| std::mem::take(&mut *held))
            .unwrap_or_default()
    })
}

/// Give back a scratch from [`take_scratch`].
pub fn put_scratch(scratch: Scratch) {
    SCRATCH.with(|cell| {
        if let Ok(mut held) = cell.try_borrow_mut() {
            *held = scratch;
        }
    });
}

/// [`with_doc`] for text already known to be UTF-8.
pub fn with_doc_str<T>(text: &str, f: impl FnOnce(&Doc<'_>) -> T) -> Option<T> {
    SCRATCH.with(|cell| {
        // Re-entered (a rule validating while a document is open): a
        // scratch of its own.
        let mut fresh = Scratch::default();
        let mut held = cell.try_borrow_mut().ok();
        let scratch = held.as_deref_mut().unwrap_or(&mut fresh);
        let doc = Doc::parse_in(text, scratch)?;
        let out = f(&doc);
        doc.recycle(scratch);
        Some(out)
    })
}

impl<'t> Doc<'t> {
    /// Read `text`, or `None` when the `Value` path must decide (Note
    /// [Validating from text]). Strings are unescaped as they are read: for
    /// callers that take the text out ([`Doc::take_reply`]).
    pub fn parse(text: &'t str) -> Option<Doc<'t>> {
        let mut scratch = Scratch::default();
        let mut r = Reader::new(text, false, false, &mut scratch);
        let root = r.document();
        r.finish(root, &mut scratch).ok()
    }

    /// Read the bytes `text`, leaving escaped strings raw (Note [Lazy
    /// escapes]); `None` when the `Value` path must decide or `text` is not
    /// UTF-8 (Note [Bytes, not text]).
    /// Its cuts are recorded, so that its writing copies runs (Note
    /// [Copied runs]).
    #[cfg(test)]
    pub fn parse_bytes(text: &'t [u8]) -> Option<Doc<'t>> {
        Doc::read_in(std::str::from_utf8(text).ok()?, &mut Scratch::default()).ok()
    }

    /// Read `text` as `Doc::parse_bytes` does, into the vectors of
    /// `scratch` (Note [Reused arenas]); give them back with
    /// [`Doc::recycle`].
    pub fn parse_in(text: &'t str, scratch: &mut Scratch) -> Option<Doc<'t>> {
        let mut r = Reader::new(text, true, false, scratch);
        let root = r.document();
        r.finish(root, scratch).ok()
    }

    /// [`Doc::parse_in`], saying why when it reads nothing (Note
    /// [Declined, not refused]), for a caller that writes the document
    /// out: where its compact form leaves the text is recorded (Note
    /// [Copied runs]).
    ///
    /// # Errors
    ///
    /// [`Declined`] when the text is not strict JSON the tape holds.
    pub fn read_in(text: &'t str, scratch: &mut Scratch) -> Result<Doc<'t>, Declined> {
        let mut r = Reader::new(text, true, true, scratch);
        let root = r.document();
        r.finish(root, scratch)
    }

    /// Clear this document's vectors into `scratch` for the next one.
    pub fn recycle(self, scratch: &mut Scratch) {
        if self.slots.capacity() > KEEP_SLOTS {
            return;
        }
        scratch.slots = recycle(self.slots);
        scratch.items = recycle(self.items);
        scratch.members = recycle(self.members);
        scratch.unescaped = recycle(self.unescaped);
        scratch.cuts = self.cuts;
        scratch.cuts.clear();
    }

    /// The string member `text` of a root object (or the root string) moved
    /// out, and the `serde_json` value of the member `id` when present;
    /// `None` for any other shape.
    pub fn take_reply(mut self) -> Option<(Cow<'t, str>, Option<Value>)> {
        let root = self.root as usize;
        let (text_at, id) = match *self.slots.get(root)? {
            Slot::String(_) | Slot::Escaped { .. } => (root, None),
            Slot::Object { start, len } => {
                let members = self
                    .members
                    .get(start as usize..start as usize + len as usize)?;
                let find = |name: &str| members.iter().find(|(k, _)| k == name).map(|m| m.1);
                let text_at = find("text")? as usize;
                let id = find("id").map(|idx| TapeNode { doc: &self, idx }.value());
                (text_at, id)
            }
            _ => return None,
        };
        match std::mem::replace(self.slots.get_mut(text_at)?, Slot::Null) {
            Slot::String(s) => Some((s, id)),
            Slot::Escaped { raw, .. } => Some((Cow::Owned(unescape_all(raw)), id)),
            _ => None,
        }
    }

    /// The root node.
    pub fn root(&self) -> TapeNode<'_> {
        TapeNode {
            doc: self,
            idx: self.root,
        }
    }
}

/// Whether `text` (from its first non-whitespace byte) can be one JSON
/// object or array: an opening bracket must be the last non-whitespace byte's
/// partner.
///
/// Note [Cut text refused at once]: a reply cut by a token limit, or any
/// candidate that runs to the end of the text unclosed, was read to its end
/// before the reader found it was not JSON (a tenth of the instructions the
/// repaired replies spent before their repair). JSON text ends with the
/// closer of its outermost bracket and whitespace, so text that does not is
/// refused by `serde_json` too ([`Declined::Invalid`]), without reading it.
/// Other values (scalars) are left to the reader.
pub fn closes_as_it_opens(text: &[u8]) -> bool {
    let want = match text.first() {
        Some(b'{') => b'}',
        Some(b'[') => b']',
        _ => return true,
    };
    let last = text
        .iter()
        .rposition(|&c| !matches!(c, b' ' | b'\n' | b'\t' | b'\r'));
    // The opener itself is not its closer.
    last.is_some_and(|at| at > 0 && text.get(at) == Some(&want))
}

#[cfg(test)]
pub mod tests;
