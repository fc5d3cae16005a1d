//! The reader that fills a [`Doc`] from strict JSON text, checking as
//! it goes (Note [Validating from text], Note [Lazy escapes], Note
//! [Copied runs]).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Number;

use super::{
    Cut, Declined, Doc, MAX_DEPTH, MAX_SCANNED_KEYS, NO_NODE, Scratch, Slot, closes_as_it_opens,
    recycle,
};
use crate::exact::is_exact;
use crate::number::{NumberLiteral, number_literal};
use crate::scan::plain_run_end;
use crate::unescape::{unescape, unescape_all};
use crate::ws::{is_ws, ws_end};

pub(super) struct Reader<'t> {
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
    pub(super) fn new(text: &'t str, lazy: bool, record: bool, scratch: &mut Scratch) -> Self {
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
    pub(super) fn document(&mut self) -> Option<u32> {
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
    pub(super) fn finish(
        self,
        root: Option<u32>,
        scratch: &mut Scratch,
    ) -> Result<Doc<'t>, Declined> {
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
