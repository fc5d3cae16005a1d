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
//! is not exact (Note [Big numbers] in [`crate::json`]), nesting deeper than
//! [`MAX_DEPTH`]), and the caller then takes the `Value` path, which stays
//! the reference for every verdict and message. When it does read the text,
//! the value is the one `serde_json` gives (`doc_agrees_with_serde_json`, a
//! proptest over arbitrary and JSON-shaped input), so the verdict is the
//! same too (`tape_verdicts_agree_with_value_verdicts`).

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use serde_json::{Number, Value};

/// Deepest nesting read here (`serde_json` refuses beyond 128).
pub(crate) const MAX_DEPTH: usize = 100;

/// One node of a [`Doc`].
#[derive(Debug)]
pub(crate) enum Slot<'t> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'t, str>),
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
    pub(crate) root: u32,
}

impl<'t> Doc<'t> {
    /// Read `text`, or `None` when the `Value` path must decide (Note
    /// [Validating from text]).
    pub(crate) fn parse(text: &'t str) -> Option<Doc<'t>> {
        let mut r = Reader {
            text,
            b: text.as_bytes(),
            pos: 0,
            // About one node per 24 bytes of agent JSON: one allocation each.
            doc: Doc {
                slots: Vec::with_capacity(text.len() / 24 + 4),
                items: Vec::with_capacity(text.len() / 64 + 4),
                members: Vec::with_capacity(text.len() / 32 + 4),
                root: 0,
            },
            item_stack: Vec::new(),
            member_stack: Vec::new(),
        };
        r.ws();
        let root = r.value(0)?;
        r.ws();
        if r.pos != r.b.len() {
            return None;
        }
        r.doc.root = root;
        Some(r.doc)
    }

    /// The string member `text` of a root object (or the root string) moved
    /// out, and the `serde_json` value of the member `id` when present;
    /// `None` for any other shape.
    pub(crate) fn take_reply(mut self) -> Option<(Cow<'t, str>, Option<Value>)> {
        let root = self.root as usize;
        let (text_at, id) = match *self.slots.get(root)? {
            Slot::String(_) => (root, None),
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
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    doc: Doc<'t>,
    /// Children of the open arrays, moved into `doc.items` when one closes,
    /// so every array's elements are contiguous.
    item_stack: Vec<u32>,
    member_stack: Vec<(Cow<'t, str>, u32)>,
}

impl<'t> Reader<'t> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, slot: Slot<'t>) -> Option<u32> {
        let i = u32::try_from(self.doc.slots.len()).ok()?;
        self.doc.slots.push(slot);
        Some(i)
    }

    fn value(&mut self, depth: usize) -> Option<u32> {
        match *self.b.get(self.pos)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => {
                let s = self.string()?;
                self.push(Slot::String(s))
            }
            b't' => self.literal(b"true", Slot::Bool(true)),
            b'f' => self.literal(b"false", Slot::Bool(false)),
            b'n' => self.literal(b"null", Slot::Null),
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                self.push(Slot::Number(n))
            }
            _ => None,
        }
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
            return None;
        }
        self.pos += 1;
        let base = self.item_stack.len();
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                let v = self.value(depth)?;
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
        let start = u32::try_from(self.doc.items.len()).ok()?;
        let len = u32::try_from(self.item_stack.len() - base).ok()?;
        self.doc.items.extend(self.item_stack.drain(base..));
        self.push(Slot::Array { start, len })
    }

    fn object(&mut self, depth: usize) -> Option<u32> {
        if depth > MAX_DEPTH {
            return None;
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
                let key = self.string()?;
                self.ws();
                if self.b.get(self.pos) != Some(&b':') {
                    return None;
                }
                self.pos += 1;
                self.ws();
                let v = self.value(depth)?;
                // A repeated key: `serde_json` keeps the first place and the
                // last value; the `Value` path decides.
                if self
                    .member_stack
                    .get(base..)?
                    .iter()
                    .any(|(k, _)| *k == key)
                {
                    return None;
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
        let start = u32::try_from(self.doc.members.len()).ok()?;
        let len = u32::try_from(self.member_stack.len() - base).ok()?;
        self.doc.members.extend(self.member_stack.drain(base..));
        self.push(Slot::Object { start, len })
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
            i = crate::json::plain_run_end(b, i, b'"', b'"');
            match *b.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    let rest = self.text.get(run..i)?;
                    return Some(match owned {
                        None => Cow::Borrowed(rest),
                        Some(mut s) => {
                            s.push_str(rest);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(|| String::with_capacity(i - start + 32));
                    s.push_str(self.text.get(run..i)?);
                    let (ch, used) = unescape(b.get(i + 1..)?)?;
                    s.push(ch);
                    i += 1 + used;
                    run = i;
                }
                // A raw control character: `serde_json` refuses it.
                _ => return None,
            }
        }
    }

    /// A number literal at `pos`, as `serde_json` reads it; `None` unless it
    /// is exact (Note [Big numbers]).
    fn number(&mut self) -> Option<Number> {
        let start = self.pos;
        let b = self.b;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_end = i;
        let mut simple = true;
        if b.get(i) == Some(&b'.') {
            simple = false;
            i += 1;
            let from = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            simple = false;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let from = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == from {
                return None;
            }
        }
        // `01` is two tokens to `serde_json`: an error either way.
        if b.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        self.pos = i;
        let literal = self.text.get(start..i)?;
        let negative = int_start > start;
        // Integers of up to 18 digits fit `i64` and `u64`: read here. `-0`
        // is a float to `serde_json` and goes through it.
        if simple && int_end - int_start <= 18 && !(negative && literal == "-0") {
            let digits = self.text.get(int_start..int_end)?;
            let n: u64 = digits.parse().ok()?;
            return Some(if negative {
                Number::from(-i64::try_from(n).ok()?)
            } else {
                Number::from(n)
            });
        }
        if !crate::json::is_exact(literal) {
            return None;
        }
        serde_json::from_str::<Number>(literal).ok()
    }
}

/// The character of the escape after a `\` (`rest` starts after it) and the
/// bytes it used; `None` for anything but the escapes `serde_json` reads
/// into a `String` the same way (a lone surrogate, a bad escape).
fn unescape(rest: &[u8]) -> Option<(char, usize)> {
    let c = match *rest.first()? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex4(rest.get(1..5)?)?;
            if (0xD800..0xDC00).contains(&hi) {
                if rest.get(5..7)? != b"\\u" {
                    return None;
                }
                let lo = hex4(rest.get(7..11)?)?;
                if !(0xDC00..0xE000).contains(&lo) {
                    return None;
                }
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Some((char::from_u32(c)?, 11));
            }
            return Some((char::from_u32(hi)?, 5));
        }
        _ => return None,
    };
    Some((c, 1))
}

fn hex4(b: &[u8]) -> Option<u32> {
    let mut n = 0u32;
    for &c in b {
        n = n * 16 + char::from(c).to_digit(16)?;
    }
    Some(n)
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

    /// What this node is, for readers outside `jsonschema` (the native
    /// invariant evaluator).
    pub(crate) fn shape(&self) -> Shape<'a> {
        match self.slot() {
            Slot::Null => Shape::Null,
            Slot::Bool(b) => Shape::Bool(*b),
            Slot::Number(n) => Shape::Number(n),
            Slot::String(s) => Shape::Str(s),
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
            Slot::String(s) => Value::String(s.to_string()),
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
        match self.slot() {
            Slot::String(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
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
            Slot::String(_) => JsonType::String,
            Slot::Array { .. } => JsonType::Array,
            Slot::Object { .. } => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.slot(), expected) {
            (Slot::String(s), Value::String(e)) => s == e,
            (Slot::String(_), _) => false,
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
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn agrees(text: &str) {
        let serde = serde_json::from_str::<Value>(text);
        if let Some(doc) = Doc::parse(text) {
            let Ok(v) = serde else {
                panic!("read {text:?}, which serde_json refuses: {serde:?}");
            };
            let mine = doc.root().value();
            assert_eq!(mine, v, "{text:?}");
            // Key order too (objects compare as maps).
            assert_eq!(mine.to_string(), v.to_string(), "{text:?}");
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
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(Doc::parse(&deep).is_some());
        let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(Doc::parse(&deeper).is_none());
    }

    fn json_value() -> impl Strategy<Value = Value> {
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
            // Every JSON text serde_json writes is read here (its floats are
            // written exact, its maps have no repeated key).
            prop_assert!(Doc::parse(&text).is_some(), "{}", text);
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
                    prop_assert_eq!(got, want, "{}", text);
                } else {
                    prop_assert!(!want.is_empty() || !validator.invariants().is_empty(), "{}", text);
                }
            }
        }
    }
}
