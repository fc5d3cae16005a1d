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
//! a copy to unescape. [`Doc::parse_bytes`] checks every escape as it scans
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

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use serde_json::{Number, Value};

use super::exact::is_exact;
use super::number::{NumberLiteral, number_literal};
use super::scan::plain_run_end;
use super::unescape::{unescape, unescape_all};
use super::write::write_str;
use super::ws::{is_ws, ws_end};

/// Deepest nesting read here (`serde_json` refuses beyond 128).
pub(crate) const MAX_DEPTH: usize = 100;

/// Members of one object past which the repeated-key scan stops and the
/// `Value` path reads the text: the scan is quadratic, and agent objects
/// have a handful of keys.
pub(crate) const MAX_SCANNED_KEYS: usize = 64;

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
pub(crate) enum Declined {
    /// Not JSON: `serde_json` refuses it too.
    Invalid,
    /// Perhaps JSON: the `Value` path decides.
    Doubtful,
}

/// One node of a [`Doc`].
#[derive(Debug)]
pub(crate) enum Slot<'t> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'t, str>),
    /// A string with escapes (Note [Lazy escapes]): the raw body between
    /// its quotes, every escape checked, and the index of the cell in
    /// [`Doc::unescaped`] that holds its text once read.
    Escaped {
        raw: &'t str,
        cell: u32,
    },
    /// `len` node indices at `start` of [`Doc::items`].
    Array {
        start: u32,
        len: u32,
    },
    /// `len` members at `start` of [`Doc::members`].
    Object {
        start: u32,
        len: u32,
    },
}

/// Strict JSON text read into one arena, borrowing what it can from the text.
#[derive(Debug, Default)]
pub(crate) struct Doc<'t> {
    pub(crate) slots: Vec<Slot<'t>>,
    pub(crate) items: Vec<u32>,
    pub(crate) members: Vec<(Cow<'t, str>, u32)>,
    /// The text of each [`Slot::Escaped`], filled when first read (a
    /// `OnceLock`, not a `OnceCell`: a built [`crate::validate::Instance`] is shared
    /// by threads).
    pub(crate) unescaped: Vec<OnceLock<String>>,
    pub(crate) root: u32,
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
pub(crate) struct Scratch {
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
pub(crate) fn with_doc<T>(text: &[u8], f: impl FnOnce(&Doc<'_>) -> T) -> Option<T> {
    // Note [Bytes, not text]: one check over the line.
    with_doc_str(std::str::from_utf8(text).ok()?, f)
}

/// This thread's [`Scratch`], taken out for a caller that reads several
/// documents in turn (an empty one when it is already out); give it back
/// with [`put_scratch`].
pub(crate) fn take_scratch() -> Scratch {
    SCRATCH.with(|cell| {
        cell.try_borrow_mut()
            .map(|mut held| std::mem::take(&mut *held))
            .unwrap_or_default()
    })
}

/// Give back a scratch from [`take_scratch`].
pub(crate) fn put_scratch(scratch: Scratch) {
    SCRATCH.with(|cell| {
        if let Ok(mut held) = cell.try_borrow_mut() {
            *held = scratch;
        }
    });
}

/// [`with_doc`] for text already known to be UTF-8.
pub(crate) fn with_doc_str<T>(text: &str, f: impl FnOnce(&Doc<'_>) -> T) -> Option<T> {
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
    pub(crate) fn parse(text: &'t str) -> Option<Doc<'t>> {
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
    pub(crate) fn parse_bytes(text: &'t [u8]) -> Option<Doc<'t>> {
        Doc::read_in(std::str::from_utf8(text).ok()?, &mut Scratch::default()).ok()
    }

    /// Read `text` as [`Doc::parse_bytes`] does, into the vectors of
    /// `scratch` (Note [Reused arenas]); give them back with
    /// [`Doc::recycle`].
    pub(crate) fn parse_in(text: &'t str, scratch: &mut Scratch) -> Option<Doc<'t>> {
        let mut r = Reader::new(text, true, false, scratch);
        let root = r.document();
        r.finish(root, scratch).ok()
    }

    /// [`Doc::parse_in`], saying why when it reads nothing (Note
    /// [Declined, not refused]), for a caller that writes the document
    /// out: where its compact form leaves the text is recorded (Note
    /// [Copied runs]).
    pub(crate) fn read_in(text: &'t str, scratch: &mut Scratch) -> Result<Doc<'t>, Declined> {
        let mut r = Reader::new(text, true, true, scratch);
        let root = r.document();
        r.finish(root, scratch)
    }

    /// Clear this document's vectors into `scratch` for the next one.
    pub(crate) fn recycle(self, scratch: &mut Scratch) {
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
    pub(crate) fn take_reply(mut self) -> Option<(Cow<'t, str>, Option<Value>)> {
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
    pub(crate) fn root(&self) -> TapeNode<'_> {
        TapeNode {
            doc: self,
            idx: self.root,
        }
    }
}

struct Reader<'t> {
    b: &'t [u8],
    /// The same text as `b`.
    text: &'t str,
    /// Keep escaped strings raw (Note [Lazy escapes]).
    lazy: bool,
    pos: usize,
    doc: Doc<'t>,
    /// Children of the open arrays, moved into `doc.items` when one closes,
    /// so every array's elements are contiguous.
    item_stack: Vec<u32>,
    member_stack: Vec<(Cow<'t, str>, u32)>,
    /// Set where the reader declines text `serde_json` may still read
    /// (Note [Declined, not refused]).
    doubt: bool,
    /// Record [`Cut`]s (Note [Copied runs]).
    record: bool,
}

impl<'t> Reader<'t> {
    fn new(text: &'t str, lazy: bool, record: bool, scratch: &mut Scratch) -> Self {
        let b = text.as_bytes();
        // Cuts are `u32` offsets; a text past that is written node by node.
        let record = record && lazy && u32::try_from(b.len()).is_ok();
        let mut doc = Doc {
            slots: recycle(std::mem::take(&mut scratch.slots)),
            items: std::mem::take(&mut scratch.items),
            members: recycle(std::mem::take(&mut scratch.members)),
            unescaped: std::mem::take(&mut scratch.unescaped),
            root: 0,
            text,
            span: (0, 0),
            cuts: std::mem::take(&mut scratch.cuts),
            copyable: record,
        };
        // About one node per 24 bytes of agent JSON: one allocation each.
        doc.slots.reserve(b.len() / 24 + 4);
        doc.items.reserve(b.len() / 64 + 4);
        doc.members.reserve(b.len() / 32 + 4);
        if record {
            // About one whitespace run per 12 bytes of pretty-printed JSON.
            doc.cuts.reserve(b.len() / 12 + 4);
        }
        Reader {
            b,
            text,
            lazy,
            pos: 0,
            doc,
            item_stack: std::mem::take(&mut scratch.item_stack),
            member_stack: recycle(std::mem::take(&mut scratch.member_stack)),
            doubt: false,
            record,
        }
    }

    /// Record that the compact form leaves the text at `from..to`:
    /// whitespace, or the token of `node` (Note [Copied runs]).
    #[inline]
    fn cut(&mut self, from: usize, to: usize, node: u32) {
        // `record` is set only for texts whose offsets fit `u32`.
        let at = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        self.doc.cuts.push(Cut {
            from: at(from),
            to: at(to),
            node,
        });
    }

    /// The whole text as one value and nothing after it.
    fn document(&mut self) -> Option<u32> {
        self.ws();
        if !closes_as_it_opens(self.b.get(self.pos..)?) {
            return None;
        }
        let start = self.pos;
        let root = self.value(0)?;
        let at = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        self.doc.span = (at(start), at(self.pos));
        self.ws();
        (self.pos == self.b.len()).then_some(root)
    }

    /// The document when `root` was read, else why not; the stacks go back
    /// to `scratch` either way, the arena too when nothing was read.
    fn finish(self, root: Option<u32>, scratch: &mut Scratch) -> Result<Doc<'t>, Declined> {
        scratch.item_stack = recycle(self.item_stack);
        scratch.member_stack = recycle(self.member_stack);
        let mut doc = self.doc;
        if let Some(root) = root {
            doc.root = root;
            Ok(doc)
        } else {
            doc.recycle(scratch);
            Err(if self.doubt {
                Declined::Doubtful
            } else {
                Declined::Invalid
            })
        }
    }

    /// Decline text `serde_json` may read (Note [Declined, not refused]).
    #[cold]
    fn doubtful<T>(&mut self) -> Option<T> {
        self.doubt = true;
        None
    }

    /// `n` as an arena index; beyond `u32`, doubtful.
    #[inline]
    fn index(&mut self, n: usize) -> Option<u32> {
        match u32::try_from(n) {
            Ok(i) => Some(i),
            Err(_) => self.doubtful(),
        }
    }

    /// Skip whitespace. Note [Whitespace words]: the test of the first
    /// byte is inlined at every caller (most tokens have no whitespace
    /// before them); a run is skipped, and recorded, by [`Reader::ws_run`].
    // Inlined on purpose: left to itself the compiler made this a call
    // per token, which cost more than the test.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn ws(&mut self) {
        if is_ws(self.b.get(self.pos)) {
            self.ws_run();
        }
    }

    /// [`Reader::ws`] past its first byte: the one space after a `:` at
    /// once, a longer run by [`ws_end`].
    #[inline(never)]
    fn ws_run(&mut self) {
        let (b, i) = (self.b, self.pos);
        let end = if is_ws(b.get(i + 1)) {
            ws_end(b, i)
        } else {
            i + 1
        };
        if self.record {
            self.cut(i, end, NO_NODE);
        }
        self.pos = end;
    }

    #[inline]
    fn push(&mut self, slot: Slot<'t>) -> Option<u32> {
        let i = self.index(self.doc.slots.len())?;
        self.doc.slots.push(slot);
        Some(i)
    }

    fn value(&mut self, depth: usize) -> Option<u32> {
        match *self.b.get(self.pos)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string_value(),
            b't' => self.literal(b"true", Slot::Bool(true)),
            b'f' => self.literal(b"false", Slot::Bool(false)),
            b'n' => self.literal(b"null", Slot::Null),
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                let (n, verbatim) = self.number()?;
                let idx = self.push(Slot::Number(n))?;
                if !verbatim && self.record {
                    self.cut(start, self.pos, idx);
                }
                Some(idx)
            }
            _ => None,
        }
    }

    /// [`Reader::value`] for an element or member value: a string, the
    /// most common, is read without the call (its prologue and epilogue
    /// cost about as much as reading a short string).
    #[inline]
    fn element(&mut self, depth: usize) -> Option<u32> {
        if self.b.get(self.pos) == Some(&b'"') {
            self.string_value()
        } else {
            self.value(depth)
        }
    }

    /// A string value at `pos` (a `"`), pushed.
    #[inline]
    fn string_value(&mut self) -> Option<u32> {
        let start = self.pos;
        let (s, rewritten) = self.string_slot()?;
        let idx = self.push(s)?;
        if rewritten && self.record {
            self.cut(start, self.pos, idx);
        }
        Some(idx)
    }

    fn literal(&mut self, word: &[u8], slot: Slot<'t>) -> Option<u32> {
        if !self.b.get(self.pos..)?.starts_with(word) {
            return None;
        }
        self.pos += word.len();
        self.push(slot)
    }

    fn array(&mut self, depth: usize) -> Option<u32> {
        if depth > MAX_DEPTH {
            return self.doubtful();
        }
        self.pos += 1;
        let base = self.item_stack.len();
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                let v = self.element(depth)?;
                self.item_stack.push(v);
                self.ws();
                match self.b.get(self.pos)? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let start = self.index(self.doc.items.len())?;
        let len = self.index(self.item_stack.len() - base)?;
        self.doc.items.extend(self.item_stack.drain(base..));
        self.push(Slot::Array { start, len })
    }

    fn object(&mut self, depth: usize) -> Option<u32> {
        if depth > MAX_DEPTH {
            return self.doubtful();
        }
        self.pos += 1;
        let base = self.member_stack.len();
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                if self.b.get(self.pos) != Some(&b'"') {
                    return None;
                }
                let key = self.key()?;
                self.ws();
                if self.b.get(self.pos) != Some(&b':') {
                    return None;
                }
                self.pos += 1;
                self.ws();
                let v = self.element(depth)?;
                // A repeated key: `serde_json` keeps the first place and the
                // last value; the `Value` path decides. So does a wide
                // object, where this scan would cost more than its map.
                let held = self.member_stack.get(base..)?;
                if held.len() >= MAX_SCANNED_KEYS || held.iter().any(|(k, _)| *k == key) {
                    return self.doubtful();
                }
                self.member_stack.push((key, v));
                self.ws();
                match self.b.get(self.pos)? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let start = self.index(self.doc.members.len())?;
        let len = self.index(self.member_stack.len() - base)?;
        self.doc.members.extend(self.member_stack.drain(base..));
        self.push(Slot::Object { start, len })
    }

    /// The text of `b[from..to]`.
    #[inline]
    fn str_at(&self, from: usize, to: usize) -> Option<&'t str> {
        self.text.get(from..to)
    }

    /// The raw body of the string at `pos` (a `"`), every escape checked,
    /// and whether it holds one; `pos` moves past the closing quote.
    fn raw_string(&mut self) -> Option<(&'t str, bool)> {
        let b = self.b;
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            // Note [String scans] in `json`.
            i = plain_run_end(b, i, b'"', b'"');
            match *b.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    return Some((self.str_at(start, i)?, escaped));
                }
                b'\\' => {
                    let Some((_, used)) = unescape(b.get(i + 1..)?) else {
                        return self.doubtful();
                    };
                    escaped = true;
                    i += 1 + used;
                }
                // A raw control character: `serde_json` refuses it.
                _ => return None,
            }
        }
    }

    /// A string value at `pos`: borrowed, or raw with its escapes when
    /// lazy; and whether its compact form differs from its text (Note
    /// [Copied runs]).
    fn string_slot(&mut self) -> Option<(Slot<'t>, bool)> {
        if !self.lazy {
            return self.string().map(|s| (Slot::String(s), true));
        }
        let (raw, escaped) = self.raw_string()?;
        if !escaped {
            return Some((Slot::String(Cow::Borrowed(raw)), false));
        }
        let cell = self.index(self.doc.unescaped.len())?;
        self.doc.unescaped.push(OnceLock::new());
        Some((Slot::Escaped { raw, cell }, self.record && rewritten(raw)))
    }

    /// An object key at `pos`: keys are compared by every lookup, so they
    /// are unescaped at once (they rarely hold an escape).
    fn key(&mut self) -> Option<Cow<'t, str>> {
        if !self.lazy {
            return self.string();
        }
        let (raw, escaped) = self.raw_string()?;
        if !escaped {
            return Some(Cow::Borrowed(raw));
        }
        if self.record && rewritten(raw) {
            // Rare: the document is written node by node.
            self.doc.copyable = false;
        }
        Some(Cow::Owned(unescape_all(raw)))
    }

    /// A string at `pos` (a `"`): borrowed when it has no escape.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        let b = self.b;
        let start = self.pos + 1;
        let mut i = start;
        // Where the text not yet copied into `owned` starts.
        let mut run = start;
        let mut owned: Option<String> = None;
        loop {
            // Note [String scans] in `json`.
            i = plain_run_end(b, i, b'"', b'"');
            match *b.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    let rest = self.str_at(run, i)?;
                    return Some(match owned {
                        None => Cow::Borrowed(rest),
                        Some(mut s) => {
                            s.push_str(rest);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let piece = self.str_at(run, i)?;
                    let s = owned.get_or_insert_with(|| String::with_capacity(i - start + 32));
                    s.push_str(piece);
                    let Some((ch, used)) = unescape(b.get(i + 1..)?) else {
                        return self.doubtful();
                    };
                    s.push(ch);
                    i += 1 + used;
                    run = i;
                }
                // A raw control character: `serde_json` refuses it.
                _ => return None,
            }
        }
    }

    /// A number literal at `pos`, as `serde_json` reads it, and whether
    /// `serde_json` writes it as it stands (an integer of up to 18 digits,
    /// not `-0`); `None` unless it is exact (Note [Big numbers]).
    fn number(&mut self) -> Option<(Number, bool)> {
        let start = self.pos;
        let b = self.b;
        let NumberLiteral {
            end: i,
            int_start,
            int_end,
            simple,
        } = number_literal(b, start)?;
        self.pos = i;
        let negative = int_start > start;
        // Integers of up to 18 digits fit `i64` and `u64`: read here. `-0`
        // is a float to `serde_json` and goes through it.
        let digits = b.get(int_start..int_end)?;
        if simple && digits.len() <= 18 && !(negative && digits == b"0") {
            let n = digits
                .iter()
                .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            return Some((
                if negative {
                    Number::from(-i64::try_from(n).ok()?)
                } else {
                    Number::from(n)
                },
                true,
            ));
        }
        // The literal is ASCII by construction.
        let literal = std::str::from_utf8(b.get(start..i)?).ok()?;
        if !is_exact(literal) {
            return self.doubtful();
        }
        match serde_json::from_str::<Number>(literal) {
            Ok(n) => Some((n, false)),
            Err(_) => self.doubtful(),
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
pub(crate) fn closes_as_it_opens(text: &[u8]) -> bool {
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

/// Whether a raw string body (escapes checked by the reader) holds an
/// escape its compact form writes otherwise: `\u` or `\/`
/// ([`write_raw_escaped`]); the others (`\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`) are written as they stand (Note [Copied runs]). Asked only
/// of escaped strings read for writing, so the reader's scan stays as it
/// was for `validate`.
fn rewritten(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    while let Some(at) = b.get(i..).and_then(|r| memchr::memchr(b'\\', r)) {
        let at = i + at;
        if matches!(b.get(at + 1), Some(b'u' | b'/')) {
            return true;
        }
        i = at + 2;
    }
    false
}

/// The `jsonschema` representation of a [`Doc`] (Note [Validating from text]).
pub(crate) struct Tape;

/// A node of a [`Doc`]: the document and an index, cheap to copy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TapeNode<'a> {
    doc: &'a Doc<'a>,
    idx: u32,
}

impl<'a> TapeNode<'a> {
    fn slot(&self) -> &'a Slot<'a> {
        let doc: &'a Doc<'a> = self.doc;
        // Indices come from the reader, which made every one of them.
        &doc.slots[self.idx as usize]
    }

    /// The text of a string node, unescaped on first read (Note [Lazy
    /// escapes]); `None` for other nodes.
    fn text(&self) -> Option<&'a str> {
        let doc: &'a Doc<'a> = self.doc;
        match self.slot() {
            Slot::String(s) => Some(s),
            Slot::Escaped { raw, cell } => Some(
                doc.unescaped
                    .get(*cell as usize)?
                    .get_or_init(|| unescape_all(raw)),
            ),
            _ => None,
        }
    }

    /// What this node is, for readers outside `jsonschema` (the native
    /// invariant evaluator).
    pub(crate) fn shape(&self) -> Shape<'a> {
        match self.slot() {
            Slot::Null => Shape::Null,
            Slot::Bool(b) => Shape::Bool(*b),
            Slot::Number(n) => Shape::Number(n),
            Slot::String(_) | Slot::Escaped { .. } => Shape::Str(self.text().unwrap_or_default()),
            Slot::Array { .. } => self.as_array().map_or(Shape::Null, Shape::Array),
            Slot::Object { .. } => self.as_object().map_or(Shape::Null, Shape::Object),
        }
    }

    /// The `serde_json` value of this node (for cold paths and tests).
    pub(crate) fn value(&self) -> Value {
        match self.slot() {
            Slot::Null => Value::Null,
            Slot::Bool(b) => Value::Bool(*b),
            Slot::Number(n) => Value::Number(n.clone()),
            Slot::String(_) | Slot::Escaped { .. } => {
                Value::String(self.text().unwrap_or_default().to_owned())
            }
            Slot::Array { .. } => Value::Array(
                self.as_array()
                    .map(|a| a.elements().map(|e| e.value()).collect())
                    .unwrap_or_default(),
            ),
            Slot::Object { .. } => Value::Object(
                self.as_object()
                    .map(|o| {
                        o.members()
                            .map(|(k, v)| (k.to_owned(), v.value()))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        }
    }
}

impl TapeNode<'_> {
    /// Whether this node is an array or an object (reads no string).
    pub(crate) fn is_container(&self) -> bool {
        matches!(self.slot(), Slot::Array { .. } | Slot::Object { .. })
    }

    /// Append this node as compact JSON: the bytes [`crate::json::write_compact`]
    /// writes for [`TapeNode::value`] (`agrees` in the tests checks every
    /// document read there), without building the value.
    ///
    /// Note [Writing from the tape]: `extract --jsonl` wrote each strict
    /// candidate by parsing it into a `Value` (an `IndexMap` per object,
    /// every key hashed, every string copied), writing that and dropping
    /// it. The tape borrows the text, so strings without escapes are copied
    /// as they stand (a plain run of strict JSON holds nothing `write_str`
    /// escapes) and escaped ones are re-escaped from their raw body
    /// ([`write_raw_escaped`]); numbers are the `Number`s the reader made,
    /// written by `serde_json` as before.
    pub(crate) fn write_compact(&self, out: &mut Vec<u8>) {
        let doc = self.doc;
        if self.idx == doc.root && doc.copyable {
            doc.write_copied(out);
        } else {
            self.write_nodes(out);
        }
    }

    /// [`TapeNode::write_compact`] node by node.
    fn write_nodes(&self, out: &mut Vec<u8>) {
        let doc = self.doc;
        match self.slot() {
            Slot::Null => out.extend_from_slice(b"null"),
            Slot::Bool(true) => out.extend_from_slice(b"true"),
            Slot::Bool(false) => out.extend_from_slice(b"false"),
            Slot::Number(n) => {
                // Writing a number into a vector cannot fail.
                let _ = serde_json::to_writer(&mut *out, n);
            }
            Slot::String(s) => write_string(out, s),
            Slot::Escaped { raw, .. } => write_raw_escaped(out, raw),
            Slot::Array { .. } => {
                out.push(b'[');
                for (i, item) in self.as_array().iter().flat_map(TapeArray::iter).enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write_nodes(out);
                }
                out.push(b']');
            }
            // Read directly, not through `TapeObject::iter`: whether a key
            // is borrowed decides how it is written (`write_string`).
            &Slot::Object { start, len } => {
                out.push(b'{');
                let members = doc
                    .members
                    .get(start as usize..start as usize + len as usize)
                    .unwrap_or_default();
                for (i, (key, idx)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_string(out, key);
                    out.push(b':');
                    TapeNode { doc, idx: *idx }.write_nodes(out);
                }
                out.push(b'}');
            }
        }
    }
}

impl Doc<'_> {
    /// Append the root as compact JSON by copying its text between its
    /// cuts (Note [Copied runs]).
    ///
    /// Note [Copied runs]: writing a strict candidate node by node (a call,
    /// a `match`, two quote pushes and a copy per string, a comma per
    /// member) cost about a third of reading it. Its compact form is its
    /// text without the whitespace between tokens, except for the tokens
    /// `serde_json` writes otherwise: numbers that are not short integers
    /// (`1.50` is `1.5`, `-0` is `-0.0`) and strings with a `\u` or `\/`
    /// escape (`write_raw_escaped`); the other escapes and every plain
    /// string are written as they stand. The reader records where each
    /// whitespace run and each such token sits ([`Cut`], in text order), so
    /// the writer copies the runs between cuts and writes only those
    /// tokens from their nodes. A key with `\u` or `\/` (rare) makes the
    /// whole document go node by node. `copied_runs_agree_with_the_nodes`
    /// holds both writers to `json::write_compact`. Without a schema,
    /// `extract` no longer reads onto the tape at all: its one-pass writer
    /// (Note [One-pass compact] in `extract::minify`) applies the same
    /// rules as it checks the text, and is held to this writer.
    fn write_copied(&self, out: &mut Vec<u8>) {
        let (from, to) = (self.span.0 as usize, self.span.1 as usize);
        let text = self.text.as_bytes();
        out.reserve(to.saturating_sub(from));
        let mut at = from;
        for cut in &self.cuts {
            let (cf, ct) = (cut.from as usize, cut.to as usize);
            // Whitespace before or after the root.
            if ct <= from || cf >= to {
                continue;
            }
            out.extend_from_slice(text.get(at..cf).unwrap_or_default());
            if cut.node != NO_NODE {
                TapeNode {
                    doc: self,
                    idx: cut.node,
                }
                .write_nodes(out);
            }
            at = ct;
        }
        out.extend_from_slice(text.get(at..to).unwrap_or_default());
    }
}

/// Append a string or key of the document. A borrowed one is the raw body
/// of a string without escapes, which holds nothing `write_str` escapes
/// (no quote, backslash or control character: the reader refuses them
/// raw), so it is copied as it stands; an owned one was unescaped and is
/// escaped again.
#[allow(clippy::ptr_arg)] // Borrowed or owned is what decides here.
fn write_string(out: &mut Vec<u8>, s: &Cow<'_, str>) {
    match s {
        Cow::Borrowed(raw) => {
            out.reserve(raw.len() + 2);
            out.push(b'"');
            out.extend_from_slice(raw.as_bytes());
            out.push(b'"');
        }
        Cow::Owned(text) => write_str(out, text),
    }
}

/// Append the string whose raw body (escapes checked by the reader) is
/// `raw`, escaped as [`crate::json::write_str`] escapes its text (Note
/// [Writing from the tape]).
///
/// Plain runs hold no quote, backslash or control character, so they are
/// copied. The escapes `write_str` writes itself (`\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`) are copied too; `\/` and `\u` are decoded
/// and the character written as `write_str` would.
pub(crate) fn write_raw_escaped(out: &mut Vec<u8>, raw: &str) {
    let b = raw.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', b.get(i..).unwrap_or_default()) {
        let at = i + at;
        out.extend_from_slice(b.get(i..at).unwrap_or_default());
        let after = b.get(at + 1..).unwrap_or_default();
        if let Some(&c @ (b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't')) = after.first() {
            out.extend_from_slice(&[b'\\', c]);
            i = at + 2;
        } else {
            // `\/` or `\u`; an escape the reader would refuse is kept as
            // text, as `unescape_all` keeps it.
            let (c, used) = unescape(after).unwrap_or(('\\', 0));
            // Rare (agents seldom write `\u`): `write_str`'s own escape of
            // the one character, without its quotes.
            let mut one = Vec::with_capacity(8);
            write_str(&mut one, c.encode_utf8(&mut [0u8; 4]));
            out.extend_from_slice(one.get(1..one.len() - 1).unwrap_or_default());
            i = at + 1 + used;
        }
    }
    out.extend_from_slice(b.get(i..).unwrap_or_default());
    out.push(b'"');
}

/// A [`TapeNode`] by kind.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape<'a> {
    Null,
    Bool(bool),
    Number(&'a Number),
    Str(&'a str),
    Array(TapeArray<'a>),
    Object(TapeObject<'a>),
}

impl<'a> TapeObject<'a> {
    /// The member `name` (keys are unique: the reader declines repeats).
    pub(crate) fn member(&self, name: &str) -> Option<TapeNode<'a>> {
        self.members
            .iter()
            .find(|(k, _)| k == name)
            .map(|&(_, idx)| TapeNode { doc: self.doc, idx })
    }

    /// How many members.
    pub(crate) fn size(&self) -> usize {
        self.members.len()
    }

    /// The members in text order.
    pub(crate) fn iter(&self) -> TapeMembers<'a> {
        self.members()
    }
}

impl<'a> TapeArray<'a> {
    /// How many elements.
    pub(crate) fn size(&self) -> usize {
        self.items.len()
    }

    /// The elements in order.
    pub(crate) fn iter(&self) -> TapeElements<'a> {
        self.elements()
    }
}

/// The members of one object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TapeObject<'a> {
    doc: &'a Doc<'a>,
    members: &'a [(Cow<'a, str>, u32)],
}

/// The elements of one array.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TapeArray<'a> {
    doc: &'a Doc<'a>,
    items: &'a [u32],
}

impl Json for Tape {
    type Node<'a> = TapeNode<'a>;
    type PreparedKey = String;
    type StringBuffer = Option<Doc<'static>>;
    // Objects are scanned: a members pass costs no more than a few lookups.
    const KEYS_PER_LOOKUP: usize = 2;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        buffer: &mut Option<Doc<'static>>,
        string: &str,
        f: impl FnOnce(TapeNode<'_>) -> T,
    ) -> T {
        let doc = buffer.get_or_insert_with(Doc::default);
        doc.slots.clear();
        doc.slots.push(Slot::String(Cow::Owned(string.to_owned())));
        doc.root = 0;
        f(doc.root())
    }
}

impl<'a> Node<'a, Tape> for TapeNode<'a> {
    type Object = TapeObject<'a>;
    type Array = TapeArray<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<TapeObject<'a>> {
        let doc: &'a Doc<'a> = self.doc;
        match *self.slot() {
            Slot::Object { start, len } => Some(TapeObject {
                doc,
                members: doc
                    .members
                    .get(start as usize..start as usize + len as usize)?,
            }),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<TapeArray<'a>> {
        let doc: &'a Doc<'a> = self.doc;
        match *self.slot() {
            Slot::Array { start, len } => Some(TapeArray {
                doc,
                items: doc
                    .items
                    .get(start as usize..start as usize + len as usize)?,
            }),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.text().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self.slot() {
            Slot::Number(n) => Some(n),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.slot() {
            Slot::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.slot(), Slot::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.slot() {
            Slot::Null => JsonType::Null,
            Slot::Bool(_) => JsonType::Boolean,
            Slot::Number(_) => JsonType::Number,
            Slot::String(_) | Slot::Escaped { .. } => JsonType::String,
            Slot::Array { .. } => JsonType::Array,
            Slot::Object { .. } => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.slot(), expected) {
            (Slot::String(s), Value::String(e)) => s == e,
            (Slot::Escaped { .. }, Value::String(e)) => self.text() == Some(e.as_str()),
            (Slot::String(_) | Slot::Escaped { .. }, _) => false,
            (Slot::Bool(b), e) => e.as_bool() == Some(*b),
            (Slot::Null, e) => e.is_null(),
            _ => jsonschema::json::cmp::equal(&self.value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.value())
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(
            std::ptr::from_ref::<Doc<'a>>(self.doc) as usize,
            self.idx,
        ))
    }
}

impl<'a> Object<'a, Tape> for TapeObject<'a> {
    type Node = TapeNode<'a>;
    type MemberName = &'a str;
    type MembersIter = TapeMembers<'a>;

    fn len(&self) -> usize {
        self.members.len()
    }

    fn get(&self, key: &String) -> Option<TapeNode<'a>> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, idx)| TapeNode { doc: self.doc, idx })
    }

    fn members(&self) -> TapeMembers<'a> {
        TapeMembers {
            doc: self.doc,
            it: self.members.iter(),
        }
    }
}

/// The members of a [`TapeObject`], in text order.
pub(crate) struct TapeMembers<'a> {
    doc: &'a Doc<'a>,
    it: std::slice::Iter<'a, (Cow<'a, str>, u32)>,
}

impl<'a> Iterator for TapeMembers<'a> {
    type Item = (&'a str, TapeNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (k, idx) = self.it.next()?;
        Some((
            k,
            TapeNode {
                doc: self.doc,
                idx: *idx,
            },
        ))
    }
}

impl<'a> Array<'a, Tape> for TapeArray<'a> {
    type Node = TapeNode<'a>;
    type ElementsIter = TapeElements<'a>;

    fn len(&self) -> usize {
        self.items.len()
    }

    fn elements(&self) -> TapeElements<'a> {
        TapeElements {
            doc: self.doc,
            it: self.items.iter(),
        }
    }
}

/// The elements of a [`TapeArray`].
pub(crate) struct TapeElements<'a> {
    doc: &'a Doc<'a>,
    it: std::slice::Iter<'a, u32>,
}

impl<'a> Iterator for TapeElements<'a> {
    type Item = TapeNode<'a>;

    fn next(&mut self) -> Option<TapeNode<'a>> {
        let idx = *self.it.next()?;
        Some(TapeNode { doc: self.doc, idx })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    fn agrees(text: &str) {
        let serde = serde_json::from_str::<Value>(text);
        // Note [Declined, not refused].
        if Doc::read_in(text, &mut Scratch::default()).err() == Some(Declined::Invalid) {
            assert!(serde.is_err(), "refused {text:?}, which serde_json reads");
        }
        let eager = Doc::parse(text);
        let lazy = Doc::parse_bytes(text.as_bytes());
        assert_eq!(eager.is_some(), lazy.is_some(), "{text:?}");
        for doc in [eager, lazy].into_iter().flatten() {
            let Ok(v) = &serde else {
                panic!("read {text:?}, which serde_json refuses: {serde:?}");
            };
            let mine = doc.root().value();
            assert_eq!(&mine, v, "{text:?}");
            // Note [Writing from the tape]: the same bytes as the value's.
            let (mut written, mut reference) = (Vec::new(), Vec::new());
            doc.root().write_compact(&mut written);
            crate::json::write_compact(&mut reference, v);
            assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(&reference),
                "{text:?}"
            );
            // Key order too (objects compare as maps).
            assert_eq!(mine.to_string(), v.to_string(), "{text:?}");
            strings_agree(doc.root(), v);
        }
    }

    /// Whether every float of `v` is written by `serde_json` as a literal
    /// that is exactly that float (`json::is_exact`).
    fn floats_exact(v: &Value) -> bool {
        match v {
            Value::Number(n) => crate::json::is_exact(&n.to_string()),
            Value::Array(a) => a.iter().all(floats_exact),
            Value::Object(m) => m.values().all(floats_exact),
            _ => true,
        }
    }

    /// Note [Copied runs]: a document read for writing copies its text
    /// between cuts, and writes what the node writer and
    /// `json::write_compact` write; `copyable` says which path it took.
    fn copied_agrees(text: &str, copyable: bool) {
        let v: Value = serde_json::from_str(text).expect("JSON");
        let doc = Doc::read_in(text, &mut Scratch::default()).expect("read");
        assert_eq!(doc.copyable, copyable, "{text:?}");
        let (mut copied, mut nodes, mut reference) = (Vec::new(), Vec::new(), Vec::new());
        doc.root().write_compact(&mut copied);
        doc.root().write_nodes(&mut nodes);
        crate::json::write_compact(&mut reference, &v);
        let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        assert_eq!(shown(&copied), shown(&reference), "{text:?}");
        assert_eq!(shown(&nodes), shown(&reference), "{text:?}");
    }

    #[test]
    fn copied_runs_agree_with_the_nodes() {
        let rows: &[(&str, bool)] = &[
            (
                " {\n  \"a\": [1, 2.50, -0, 1e3, 18446744073709551615, 123456789012345678],\n  \"b\": null\n} ",
                true,
            ),
            (
                "[\"\\u00e9\\/x\", \"a\\nb\\t\\\"\\\\\", \"\\ud83d\\ude00\"]",
                true,
            ),
            ("\t\r\n[ true ,false\t, null ]\r\n", true),
            ("{\"k\\u0041\": 1,  \"b\": 2}", false),
            ("{\"k\\/\": {\"x\": [ ]}}", false),
            ("{\"k\\n\": \"v\" }", true),
            ("  1.50  ", true),
            ("-0", true),
            ("\"\\u0001\"", true),
            (" \"plain\" ", true),
            ("{}", true),
            // Escaped backslashes before `u` and `/`: copied as they stand.
            (r#"["a\\u\\/", {"k\\u": 1}]"#, true),
        ];
        for &(text, copyable) in rows {
            copied_agrees(text, copyable);
            agrees(text);
        }
    }

    /// Every string node reads as the value's string through each accessor
    /// keywords use (Note [Lazy escapes]).
    fn strings_agree(node: TapeNode<'_>, v: &Value) {
        match v {
            Value::String(s) => {
                assert_eq!(node.as_string().as_deref(), Some(s.as_str()));
                assert!(node.equals_value(v));
                assert!(!node.equals_value(&Value::String(format!("{s}x"))));
                assert!(matches!(node.shape(), Shape::Str(t) if t == s));
                assert_eq!(node.json_type(), JsonType::String);
            }
            Value::Array(items) => {
                let a = node.as_array().expect("an array");
                for (n, item) in a.elements().zip(items) {
                    strings_agree(n, item);
                }
            }
            Value::Object(m) => {
                let o = node.as_object().expect("an object");
                for (k, item) in m {
                    strings_agree(o.member(k).expect("a member"), item);
                }
            }
            _ => {}
        }
    }

    /// Bytes that may not be UTF-8: read only when they are, and then as
    /// `serde_json` reads them (Note [Bytes, not text]).
    fn bytes_agree(bytes: &[u8]) {
        let serde = serde_json::from_slice::<Value>(bytes);
        if let Some(doc) = Doc::parse_bytes(bytes) {
            let text = std::str::from_utf8(bytes).expect("read only UTF-8");
            let Ok(v) = &serde else {
                panic!("read {text:?}, which serde_json refuses: {serde:?}");
            };
            assert_eq!(&doc.root().value(), v, "{text:?}");
        } else if let Ok(text) = std::str::from_utf8(bytes) {
            assert!(Doc::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_declined() {
        let rows: &[&[u8]] = &[
            b"\"\xff\"",
            b"{\"a\": \"x\xc3\"}",
            b"{\"\xe9\": 1}",
            b"[1, \xff]",
            b"\xef\xbb\xbf{}",
            b"{\"a\": \"\\n\xed\xa0\x80\"}",
            b"[\"\xf0\x9f\x98\"]",
        ];
        for bytes in rows {
            assert!(Doc::parse_bytes(bytes).is_none(), "{bytes:?}");
            bytes_agree(bytes);
        }
        assert!(Doc::parse_bytes("[\"é\\u00e9😀\"]".as_bytes()).is_some());
    }

    #[test]
    fn escaped_strings_are_read_once_and_kept() {
        let doc = Doc::parse_bytes(br#"["a\nb", "c\\d", "plain"]"#).expect("reads");
        assert_eq!(doc.unescaped.len(), 2, "one cell per escaped string");
        assert!(
            doc.unescaped.iter().all(|c| c.get().is_none()),
            "not read yet"
        );
        let a = doc.root().as_array().expect("array");
        let first = a.elements().next().expect("an element");
        assert_eq!(first.as_string().as_deref(), Some("a\nb"));
        assert_eq!(
            doc.unescaped.iter().filter(|c| c.get().is_some()).count(),
            1
        );
    }

    #[test]
    fn recycled_vectors_keep_their_allocation() {
        let text = r#"{"a": ["x\ny", 1, {"b": null}], "c": "d"}"#.to_owned();
        let mut scratch = Scratch::default();
        let doc = Doc::parse_in(&text, &mut scratch).expect("reads");
        let slots = doc.slots.as_ptr().cast::<u8>();
        let members = doc.members.as_ptr().cast::<u8>();
        let cap = doc.slots.capacity();
        doc.recycle(&mut scratch);
        assert_eq!(scratch.slots.as_ptr().cast::<u8>(), slots);
        assert_eq!(scratch.members.as_ptr().cast::<u8>(), members);
        assert_eq!(scratch.slots.capacity(), cap);
        let other = text.clone();
        let doc = Doc::parse_in(&other, &mut scratch).expect("reads again");
        assert_eq!(doc.slots.as_ptr().cast::<u8>(), slots, "the same buffer");
        assert_eq!(
            doc.root().value(),
            serde_json::from_str::<Value>(&other).unwrap()
        );
        doc.recycle(&mut scratch);
        // A declined text gives the vectors back too.
        assert!(Doc::parse_in("[1, 2,", &mut scratch).is_none());
        assert_eq!(scratch.slots.as_ptr().cast::<u8>(), slots);
        assert!(scratch.slots.is_empty() && scratch.item_stack.is_empty());
    }

    /// Escape-heavy string bodies, valid or not: every escape letter, `\u`
    /// with good and bad hex, high and low surrogates alone and in pairs.
    pub(crate) fn string_body() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z é😀]{0,3}",
            prop::sample::select(vec![
                "\\n",
                "\\t",
                "\\\\",
                "\\\"",
                "\\/",
                "\\b",
                "\\f",
                "\\r",
                "\\u00e9",
                "\\u0000",
                "\\uD83D\\uDE00",
                "\\ud800",
                "\\udc00",
                "\\uD83D\\u0041",
                "\\uD83Dx",
                "\\u12",
                "\\u12g4",
                "\\x",
                "\\a",
                "\\",
                "\\'",
                "\\U0041",
                "\\uDBFF\\uDFFF",
                "\\uFFFF",
                "\t",
                "\"",
            ])
            .prop_map(str::to_owned),
        ];
        prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn escaped_strings_read_lazily_agree_with_serde_json(
            body in string_body(),
            key in string_body(),
            wrap in 0..3,
        ) {
            let text = match wrap {
                0 => format!("\"{body}\""),
                1 => format!("[\"{body}\", 1]"),
                _ => format!("{{\"{key}\": \"{body}\"}}"),
            };
            agrees(&text);
        }

        #[test]
        fn doc_agrees_with_serde_json_on_any_bytes(
            bytes in prop::collection::vec(any::<u8>(), 0..40),
            v in json_value(),
            cut in 0usize..200,
            byte in 0x80u8..=0xff,
        ) {
            bytes_agree(&bytes);
            let mut text = serde_json::to_string(&v).unwrap().into_bytes();
            let at = cut.min(text.len());
            text.insert(at, byte);
            bytes_agree(&text);
        }

        #[test]
        fn reused_scratch_reads_as_a_fresh_one(
            texts in prop::collection::vec(json_value().prop_map(|v| v.to_string()), 1..6),
        ) {
            for text in &texts {
                let fresh = Doc::parse_bytes(text.as_bytes()).map(|d| d.root().value());
                let reused = with_doc(text.as_bytes(), |d| d.root().value());
                prop_assert_eq!(fresh, reused);
            }
        }
    }

    #[test]
    fn reads_what_serde_json_reads_or_declines() {
        let rows: &[(&str, bool)] = &[
            (
                r#"{"a": [1, -2, 3.5, true, false, null, "x\ny\u00e9\ud83d\ude00"]}"#,
                true,
            ),
            ("  [ ]  ", true),
            ("{}", true),
            ("\"\\/\\b\\f\\r\\t\\\"\\\\\"", true),
            (r#"{"a": 1, "a": 2}"#, false),
            (r#""\ud800""#, false),
            (r#""\udc00x""#, false),
            ("[1,]", false),
            ("{\"a\" 1}", false),
            ("01", false),
            ("-0", true),
            ("1e400", false),
            ("12345678901234567890123", false),
            ("18446744073709551615", true),
            ("-9223372036854775808", true),
            ("0.1e-5", true),
            ("1.", false),
            ("\"a\tb\"", false),
            ("[1] x", false),
            ("nul", false),
            ("", false),
        ];
        for (text, read) in rows {
            assert_eq!(Doc::parse(text).is_some(), *read, "{text:?}");
            agrees(text);
        }
        // A wide object is left to `serde_json` (Note [Declined, not refused]).
        let members = |n: usize| (0..n).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>();
        let wide = format!("{{{}}}", members(MAX_SCANNED_KEYS + 1).join(","));
        let read = |t: &str| Doc::read_in(t, &mut Scratch::default()).map(|d| d.root().value());
        assert_eq!(read(&wide).err(), Some(Declined::Doubtful));
        agrees(&wide);
        let widest_read = format!("{{{}}}", members(MAX_SCANNED_KEYS).join(","));
        assert!(read(&widest_read).is_ok());
        for (text, why) in [
            (r#"{"a": 1, "a": 2}"#, Declined::Doubtful),
            (r#""\ud800""#, Declined::Doubtful),
            ("1e400", Declined::Doubtful),
            ("[1,]", Declined::Invalid),
            ("{\"a\": tru}", Declined::Invalid),
            ("\"a\tb\"", Declined::Invalid),
            ("[1, 2", Declined::Invalid),
        ] {
            assert_eq!(read(text).err(), Some(why), "{text:?}");
        }
        // Note [Cut text refused at once]: cut (or misclosed) text is
        // refused before any of it is read, so a point the reader would
        // have doubted on the way no longer makes it doubtful.
        for text in [
            r#"{"a": 1, "a": 2"#,
            "[\"\\ud800\", 1",
            r#"{"a": [1e400]"#,
            "[[[1]]} ",
            "{\"a\": [1]]",
            "{ \n\t\r",
            "[",
        ] {
            assert_eq!(read(text).err(), Some(Declined::Invalid), "{text:?}");
            agrees(text);
        }
        for text in [" \t{\"a\": [1]} \r\n", "[ ]\n", "{}"] {
            assert!(read(text).is_ok(), "{text:?}");
            agrees(text);
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(Doc::parse(&deep).is_some());
        let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(Doc::parse(&deeper).is_none());
        assert_eq!(read(&deeper).err(), Some(Declined::Doubtful));
    }

    pub(crate) fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-c\"\\\\é]{0,3}", inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn doc_agrees_with_serde_json_on_any_text(text in ".{0,40}") {
            agrees(&text);
        }

        #[test]
        fn doc_agrees_with_serde_json_on_json(v in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            agrees(&text);
            // Every JSON text serde_json writes is read here (its maps have
            // no repeated key), unless it holds a float whose shortest
            // round-trip form is not that float exactly: `ryu` may write
            // `-1192658002281151.2` for the double `…151.25`, which the
            // reader declines (Note [Big numbers] in `json`).
            prop_assert!(Doc::parse(&text).is_some() || !floats_exact(&v), "{}", text);
        }

        /// Note [Whitespace words]: the word scan stops where a byte scan
        /// would, whatever the bytes around.
        #[test]
        fn ws_end_agrees_with_position(
            b in prop::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r'), Just(b'"'), Just(0xA0u8), Just(0x8Au8), any::<u8>()], 0..40),
            from in 0usize..45,
        ) {
            let want = b.get(from..).and_then(|r| r.iter().position(|&c| !matches!(c, b' ' | b'\n' | b'\t' | b'\r')))
                .map_or(b.len().max(from), |p| p + from);
            prop_assert_eq!(ws_end(&b, from), want);
        }

        /// Note [Copied runs] on any JSON, spaced in every way.
        #[test]
        fn copied_runs_agree_on_json(v in json_value(), seps in prop::collection::vec("[ \n\t\r]{0,6}", 1..5), slash in any::<bool>()) {
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            let mut text = String::new();
            for (i, line) in pretty.split('\n').enumerate() {
                text.push_str(&seps[i % seps.len()]);
                text.push_str(line.trim_start_matches(' '));
            }
            // A `\/` escape, which `serde_json` never writes.
            if slash {
                text = text.replacen('"', "\"\\/", 1);
            }
            if let Ok(doc) = Doc::read_in(&text, &mut Scratch::default()) {
                // Only a key with `\u` or `\/` is written node by node.
                let rewritten_key = doc.members.iter().any(|(k, _)| matches!(k, Cow::Owned(_)))
                    && (text.contains("\\u") || text.contains("\\/"));
                prop_assert!(doc.copyable || rewritten_key, "{}", text);
                copied_agrees(&text, doc.copyable);
            }
        }

        /// JSON with every kind of whitespace between its tokens reads as
        /// `serde_json` reads it.
        #[test]
        fn doc_agrees_with_serde_json_on_spaced_json(v in json_value(), seps in prop::collection::vec("[ \n\t\r]{0,12}", 1..8)) {
            let compact = serde_json::to_string_pretty(&v).unwrap();
            // Replace each line break and indentation with a chosen run.
            let mut text = String::new();
            for (i, line) in compact.split('\n').enumerate() {
                text.push_str(&seps[i % seps.len()]);
                text.push_str(line.trim_start_matches(' '));
            }
            text.push_str(&seps[0]);
            agrees(&text);
        }

        #[test]
        fn doc_agrees_with_serde_json_on_mangled_json(v in json_value(), cut in 0usize..200, byte in any::<u8>()) {
            let mut text = serde_json::to_string(&v).unwrap().into_bytes();
            let at = cut.min(text.len());
            text.insert(at, byte);
            if let Ok(text) = String::from_utf8(text) {
                agrees(&text);
            }
        }
    }
}

#[cfg(test)]
mod verdicts {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::profile::Profile;
    use crate::validate::Validator;

    /// Instances shaped like the built-in schemas', with wrong types,
    /// missing fields and enum misses mixed in.
    fn instance() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..70).prop_map(Value::from),
            (-1.0f64..2.0).prop_map(Value::from),
            prop::sample::select(vec![
                "info", "warning", "critical", "error", "healthy", "down", "Healthy", "blocker",
                "major", "minor", "nit", "x", "",
            ])
            .prop_map(Value::from),
        ];
        let keys = prop::sample::select(vec![
            "summary",
            "events",
            "level",
            "message",
            "service",
            "memories",
            "key",
            "value",
            "escalation",
            "needed",
            "reason",
            "failed_checks",
            "services_checked",
            "name",
            "status",
            "findings",
            "severity",
            "file",
            "line",
            "description",
            "counts",
            "confidence",
            "action",
        ]);
        scalar.prop_recursive(4, 60, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..8).prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    fn validators() -> Vec<Validator> {
        let mut out: Vec<Validator> = ["claude-ops", "claude-loop", "code-review"]
            .iter()
            .map(|p| Validator::new(&Profile::builtin(p).expect("profile").schema).expect("schema"))
            .collect();
        out.push(
            Validator::new(&json!({"type": "object", "properties": {"a": {"const": 1.0},
                "b": {"enum": [[1, {"x": null}], "s"]}, "c": {"uniqueItems": true},
                "d": {"minLength": 2, "pattern": "^é"}, "e": {"multipleOf": 0.5}},
                "propertyNames": {"maxLength": 8}, "additionalProperties": {"type": ["string", "integer", "object", "array"]}}))
            .expect("schema"),
        );
        out
    }

    /// Code-review outputs whose counts are sometimes right.
    fn review() -> impl Strategy<Value = Value> {
        let sev = prop::sample::select(vec![
            "blocker", "major", "minor", "nit", "blocker", "major", "minor", "nit", "other",
        ]);
        let finding = (sev, 0i64..20, prop::bool::weighted(0.95)).prop_map(|(s, line, file)| {
            let mut f = json!({"severity": s, "line": line, "description": "d", "raisedBy": "a"});
            if file {
                f["file"] = json!("a.rs");
            }
            f
        });
        (
            prop::collection::vec(finding, 0..8),
            -1i64..3,
            prop::bool::weighted(0.1),
        )
            .prop_map(|(findings, skew, float)| {
                let count = |s: &str| {
                    i64::try_from(findings.iter().filter(|f| f["severity"] == s).count()).unwrap()
                };
                let mut counts = json!({"blocker": count("blocker") + skew, "major": count("major"),
                    "minor": count("minor"), "nit": count("nit")});
                if float {
                    counts["nit"] = json!(0.5);
                }
                json!({"findings": findings, "counts": counts})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn tape_invariants_agree_with_value_invariants(v in review()) {
            let validator =
                Validator::new(&Profile::builtin("code-review").expect("profile").schema).expect("schema");
            let text = serde_json::to_string(&v).unwrap();
            let want = validator.errors_and_invariants(&v);
            match validator.check_text(&text) {
                Some(got) => prop_assert_eq!(got, want, "{}", text),
                // Declined: schema-invalid, or a rule the interpreter must run.
                None => prop_assert!(!validator.is_valid(&v) || text.contains("0.5"), "{}", text),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn tape_verdicts_agree_with_value_verdicts(v in instance(), extra in prop::collection::vec((prop::sample::select(vec!["a", "b", "c", "d", "e"]), instance()), 0..3)) {
            let mut v = v;
            if let Value::Object(m) = &mut v {
                for (k, x) in extra {
                    m.insert(k.to_owned(), x);
                }
            }
            let text = serde_json::to_string(&v).unwrap();
            for validator in validators() {
                let want = validator.is_valid(&v);
                prop_assert_eq!(validator.is_valid_text(&text), Some(want), "{}", text);
                let want = validator.errors_and_invariants(&v);
                if let Some(got) = validator.check_text(&text) {
                    prop_assert_eq!(&got, &want, "{}", text);
                } else {
                    prop_assert!(!want.is_empty() || !validator.invariants().is_empty(), "{}", text);
                }
                // Note [Errors from text]: invalid instances too.
                match validator.verdict_json(text.as_bytes()) {
                    Some(got) => prop_assert_eq!(got, want, "{}", text),
                    None => prop_assert!(!validator.invariants().is_empty(), "{}", text),
                }
            }
        }
    }
}
