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
    // See Note [Bytes, not text]: one check over the line.
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
pub(crate) mod tests;
