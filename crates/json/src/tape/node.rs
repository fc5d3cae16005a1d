//! A node of a read [`Doc`], its shape, and the document written back
//! out as compact JSON (Note [Copied runs]).

use std::borrow::Cow;

use jsonschema::json::{Array, Node, Object};
use serde_json::{Number, Value};

use super::{Doc, NO_NODE, Slot};
use crate::unescape::{unescape, unescape_all};
use crate::write::write_str;

/// A node of a [`Doc`]: the document and an index, cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct TapeNode<'a> {
    pub(super) doc: &'a Doc<'a>,
    pub(super) idx: u32,
}

impl<'a> TapeNode<'a> {
    pub(super) fn slot(&self) -> &'a Slot<'a> {
        let doc: &'a Doc<'a> = self.doc;
        // Indices come from the reader, which made every one of them.
        &doc.slots[self.idx as usize]
    }

    /// The text of a string node, unescaped on first read (Note [Lazy
    /// escapes]); `None` for other nodes.
    pub(super) fn text(&self) -> Option<&'a str> {
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
    pub fn shape(&self) -> Shape<'a> {
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
    pub fn value(&self) -> Value {
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
    pub fn is_container(&self) -> bool {
        matches!(self.slot(), Slot::Array { .. } | Slot::Object { .. })
    }

    /// Append this node as compact JSON: the bytes [`crate::write_compact`]
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
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        let doc = self.doc;
        if self.idx == doc.root && doc.copyable {
            doc.write_copied(out);
        } else {
            self.write_nodes(out);
        }
    }

    /// [`TapeNode::write_compact`] node by node.
    pub(super) fn write_nodes(&self, out: &mut Vec<u8>) {
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
/// `raw`, escaped as [`crate::write_str`] escapes its text (Note
/// [Writing from the tape]).
///
/// Plain runs hold no quote, backslash or control character, so they are
/// copied. The escapes `write_str` writes itself (`\"`, `\\`, `\b`,
/// `\f`, `\n`, `\r`, `\t`) are copied too; `\/` and `\u` are decoded
/// and the character written as `write_str` would.
pub fn write_raw_escaped(out: &mut Vec<u8>, raw: &str) {
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
pub enum Shape<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(&'a Number),
    /// A string's text, escapes read.
    Str(&'a str),
    /// An array.
    Array(TapeArray<'a>),
    /// An object.
    Object(TapeObject<'a>),
}

impl<'a> TapeObject<'a> {
    /// The member `name` (keys are unique: the reader declines repeats).
    pub fn member(&self, name: &str) -> Option<TapeNode<'a>> {
        self.members
            .iter()
            .find(|(k, _)| k == name)
            .map(|&(_, idx)| TapeNode { doc: self.doc, idx })
    }

    /// How many members.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// The members in text order.
    pub fn iter(&self) -> TapeMembers<'a> {
        self.members()
    }
}

impl<'a> IntoIterator for &TapeObject<'a> {
    type Item = <TapeMembers<'a> as Iterator>::Item;
    type IntoIter = TapeMembers<'a>;

    fn into_iter(self) -> TapeMembers<'a> {
        self.members()
    }
}

impl<'a> TapeArray<'a> {
    /// How many elements.
    pub fn size(&self) -> usize {
        self.items.len()
    }

    /// The elements in order.
    pub fn iter(&self) -> TapeElements<'a> {
        self.elements()
    }
}

impl<'a> IntoIterator for &TapeArray<'a> {
    type Item = <TapeElements<'a> as Iterator>::Item;
    type IntoIter = TapeElements<'a>;

    fn into_iter(self) -> TapeElements<'a> {
        self.elements()
    }
}

/// The members of one object.
#[derive(Debug, Clone, Copy)]
pub struct TapeObject<'a> {
    pub(super) doc: &'a Doc<'a>,
    pub(super) members: &'a [(Cow<'a, str>, u32)],
}

/// The elements of one array.
#[derive(Debug, Clone, Copy)]
pub struct TapeArray<'a> {
    pub(super) doc: &'a Doc<'a>,
    pub(super) items: &'a [u32],
}

/// The members of a [`TapeObject`], in text order.
pub struct TapeMembers<'a> {
    pub(super) doc: &'a Doc<'a>,
    pub(super) it: std::slice::Iter<'a, (Cow<'a, str>, u32)>,
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

/// The elements of a [`TapeArray`].
pub struct TapeElements<'a> {
    pub(super) doc: &'a Doc<'a>,
    pub(super) it: std::slice::Iter<'a, u32>,
}

impl<'a> Iterator for TapeElements<'a> {
    type Item = TapeNode<'a>;

    fn next(&mut self) -> Option<TapeNode<'a>> {
        let idx = *self.it.next()?;
        Some(TapeNode { doc: self.doc, idx })
    }
}
