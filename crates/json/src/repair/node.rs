//! The value the tolerant parser builds, before it becomes a `serde_json::Value`.
//!
//! Note [Repaired nodes]: the parser used to build `serde_json::Value`s
//! directly. Each member then cost a `SipHash` of its key and an `IndexMap`
//! insert, each string an allocation and a copy, and writing the value out
//! (`extract --jsonl --json`) walked it once more before dropping it all.
//! Nearly all of a reply's strings stand in the input as they are (a plain
//! run between two quotes, Note [Plain strings] in `parser`; an unquoted key
//! or word), and its objects hold a handful of members. A [`Node`] borrows
//! those strings from the input and keeps an object's members in a `Vec`,
//! looked up by a linear scan while the object is small and through a
//! `HashMap` index once it is wide ([`Members`]), so the parse stays linear.
//! The compact writer ([`Node::write_compact`]) writes the same bytes as
//! `json::write_compact` of [`Node::into_value`], which is what every other
//! caller gets (`nodes_write_what_their_values_write`).
//!
//! Dropped (callgrind, release, `extract --jsonl --json` of the 10,994
//! repaired replies of the bench corpus, 639.6 million instructions before
//! each): the members and items of the open containers read onto two
//! stacks the parse keeps and moved into a `Vec` of their exact size when
//! each closes (no growth, no room for 8 at the first push): 664.3
//! million, the stack bookkeeping and the second move of every node cost
//! more than the growth saved. A writer that consumes the node
//! (`write_compact(self)`, each `Vec` and owned string freed right after
//! it is written, in place of writing and then dropping the tree, a walk
//! of 14.6 million): 642.0 million, moving each node out of its `Vec` cost
//! more than the walk. A new `Vec::with_capacity` at the first push (Note
//! [First push]) with `prose::noise` tested per 64-byte chunk:
//! 636.1 million, the whole corpus 1,029.3 → 1,023.2 million (−0.6%),
//! commit `d219958`, reverted as below that round's bar.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Deref;

use serde_json::{Map, Number, Value};

/// A repaired JSON value whose strings may borrow from the input (`'a`).
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// `null` (and Python's `None`, JS's `undefined`).
    Null,
    /// `true` or `false` (and their Python spellings).
    Bool(bool),
    /// A number (an inexact one as a placeholder, Note [Repaired nodes]).
    Number(Number),
    /// A string or an unquoted word read as one.
    String(Text<'a>),
    /// An array (and a Python tuple or set).
    Array(Vec<Node<'a>>),
    /// An object, members in the text's order.
    Object(Members<'a>),
}

/// A string of a node, or a key, and whether it is known to hold nothing
/// JSON escapes.
///
/// Note [Plain text]: most strings of a reply are a plain run between two
/// `"` (Note [Plain strings] in `parser`) or an unquoted key: no quote, no
/// backslash, no control character. Writing one is a copy between two
/// quotes, where `json::write_str` tests every word for bytes to escape.
/// A string the parser built, or cannot vouch for, is written by
/// `json::write_str`.
#[derive(Debug, Clone)]
pub struct Text<'a> {
    text: Cow<'a, str>,
    /// Holds no quote, backslash or control character.
    plain: bool,
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl<'a> From<Cow<'a, str>> for Text<'a> {
    fn from(text: Cow<'a, str>) -> Self {
        Text { text, plain: false }
    }
}

impl From<String> for Text<'_> {
    fn from(text: String) -> Self {
        Text::from(Cow::Owned(text))
    }
}

/// A byte `json::write_str` escapes.
fn escaped(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

impl<'a> Text<'a> {
    /// `s`, which the caller knows holds no byte JSON escapes.
    pub fn plain(s: &'a str) -> Self {
        debug_assert!(!s.bytes().any(escaped), "{s:?}");
        Text {
            text: Cow::Borrowed(s),
            plain: true,
        }
    }

    pub fn into_string(self) -> String {
        self.text.into_owned()
    }

    /// The text as it borrows or owns it.
    pub fn into_cow(self) -> Cow<'a, str> {
        self.text
    }

    fn into_owned(self) -> Text<'static> {
        Text {
            text: Cow::Owned(self.text.into_owned()),
            plain: self.plain,
        }
    }

    /// Append the text as a JSON string: copied between quotes when plain.
    ///
    /// Note [Inlined helpers]: `#[inline]` was not enough for the three
    /// small hot helpers of a repaired reply: this write (a key or string
    /// value: two pushes and a copy), [`Members::insert`]'s scan and push,
    /// and the parser's `item`. Each stayed a call, with five or six
    /// registers saved and its arguments moved through memory, a few
    /// hundred thousand times per 10,000 replies. They are inlined
    /// always now; the rare paths behind them stay calls. Measured
    /// (callgrind, release, `extract --jsonl --json`, output
    /// byte-identical) together with Note [No plus] and Note [Plain
    /// strings in place] in `parser`: the 10,994 repaired replies of the
    /// bench corpus 699.4 → 672.2 million instructions, the whole
    /// 20,000-reply corpus 1,114.5 → 1,087.6 million (−2.4%). Then
    /// `Node::write_item` inlined always too, the parser's first
    /// end-of-string test inlined (`ends_here`) and a byte loop in place
    /// of `str::contains` (a call) for `'` strings: 672.2 → 666.4 and
    /// 1,087.6 → 1,081.2 million.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn write(&self, out: &mut Vec<u8>) {
        if self.plain {
            out.reserve(self.text.len() + 2);
            out.push(b'"');
            out.extend_from_slice(self.text.as_bytes());
            out.push(b'"');
        } else {
            crate::write_str(out, &self.text);
        }
    }
}

/// Items an array or object makes room for at its first push.
///
/// Note [First push]: a `Vec` grows from 4 to 8 to 16 items, and the lists
/// and objects of a reply mostly hold 5 to 12 (steps, findings, members):
/// two or three allocations and copies each. Room for 8 at the first push
/// (none for an empty one) halves that. Measured with Note [Repaired
/// nodes]: see there.
pub const FIRST_ROOM: usize = 8;

/// An object's members in the order their keys first appeared; a repeated
/// key keeps its first place and takes the last value (as
/// `serde_json::Map::insert` does with `preserve_order`).
#[derive(Debug, Clone, Default)]
pub struct Members<'a> {
    entries: Vec<(Text<'a>, Node<'a>)>,
    /// Key → position, built once the object holds [`LINEAR_KEYS`] keys:
    /// a linear scan per insert would make a wide object quadratic.
    /// Boxed: a `HashMap` is six words, and every object carries this.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<Cow<'a, str>, usize>>>,
}

/// Members up to which a key is looked up by scanning (a reply's objects
/// hold a handful of members; hashing each key cost more than the scan).
const LINEAR_KEYS: usize = 16;

impl PartialEq for Members<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<'a> Members<'a> {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The members in order.
    pub fn iter(&self) -> impl Iterator<Item = &(Text<'a>, Node<'a>)> {
        self.entries.iter()
    }

    fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| &**k == key),
        }
    }

    /// Insert `key` with `value`: a new key goes last, a repeated one keeps
    /// its place and takes `value`. Returns the member's position.
    ///
    /// Note [Small inserts]: nearly every insert goes to a small object
    /// past its first member: a scan of a few keys and a push. That case
    /// is inlined in the parser's object loop; the first member (which
    /// makes room, Note [First push]) and wide objects (the index) take
    /// [`Members::insert_slow`], the whole rule. Measured in the commit
    /// that added it (see Note [One space] in `parser`).
    // Note [Inlined helpers] in `Text::write`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn insert(&mut self, key: Text<'a>, value: Node<'a>) -> usize {
        let at = self.entries.len();
        if at == 0 || at + 1 >= LINEAR_KEYS || self.index.is_some() {
            return self.insert_slow(key, value);
        }
        if let Some(i) = self.entries.iter().position(|(k, _)| **k == *key) {
            if let Some(slot) = self.entries.get_mut(i) {
                slot.1 = value;
            }
            return i;
        }
        self.entries.push((key, value));
        at
    }

    /// [`Members::insert`] for any object.
    #[inline(never)]
    fn insert_slow(&mut self, key: Text<'a>, value: Node<'a>) -> usize {
        if let Some(i) = self.find(&key) {
            if let Some(slot) = self.entries.get_mut(i) {
                slot.1 = value;
            }
            return i;
        }
        let at = self.entries.len();
        if at == 0 {
            // Note [First push].
            self.entries.reserve_exact(FIRST_ROOM);
        }
        match &mut self.index {
            Some(index) => {
                index.insert(key.text.clone(), at);
            }
            None if at + 1 >= LINEAR_KEYS => {
                let mut index: HashMap<Cow<'a, str>, usize> = self
                    .entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.text.clone(), i))
                    .collect();
                index.insert(key.text.clone(), at);
                self.index = Some(Box::new(index));
            }
            None => {}
        }
        self.entries.push((key, value));
        at
    }

    /// Insert every member of `other`, in its order.
    pub fn extend(&mut self, other: Members<'a>) {
        for (k, v) in other.entries {
            self.insert(k, v);
        }
    }

    /// The value of the member at `at` (a position [`Members::insert`] gave).
    pub fn value_mut(&mut self, at: usize) -> Option<&mut Node<'a>> {
        self.entries.get_mut(at).map(|(_, v)| v)
    }

    /// The same members, owning their strings. Keys are unique already,
    /// so nothing is looked up; the index is left out (it only speeds up
    /// inserts, and the parse that made these is over).
    fn into_owned(self) -> Members<'static> {
        Members {
            entries: self
                .entries
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            index: None,
        }
    }
}

impl<'a> Node<'a> {
    /// An array.
    pub fn is_array(&self) -> bool {
        matches!(self, Node::Array(_))
    }

    /// The items, when an array.
    pub fn as_array(&self) -> Option<&Vec<Node<'a>>> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The same value, owning its strings (for input that does not outlive
    /// the parse, such as unescaped JSON).
    pub fn into_owned(self) -> Node<'static> {
        match self {
            Node::Null => Node::Null,
            Node::Bool(b) => Node::Bool(b),
            Node::Number(n) => Node::Number(n),
            Node::String(s) => Node::String(s.into_owned()),
            Node::Array(items) => Node::Array(items.into_iter().map(Node::into_owned).collect()),
            Node::Object(members) => Node::Object(members.into_owned()),
        }
    }

    /// The `serde_json::Value` this node stands for.
    pub fn into_value(self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::String(s) => Value::String(s.into_string()),
            Node::Array(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Object(members) => {
                let mut map = Map::with_capacity(members.entries.len());
                for (k, v) in members.entries {
                    // Keys are unique here, so this only appends.
                    map.insert(k.into_string(), v.into_value());
                }
                Value::Object(map)
            }
        }
    }

    /// Append the node as compact JSON: the bytes `json::write_compact`
    /// writes for [`Node::into_value`], without building it.
    ///
    /// Note [Scalars written in place]: most nodes are scalars inside a
    /// list or an object, and each was a recursive call (six registers
    /// saved and restored, a jump table) and, for a string, a second call
    /// to `Text::write`. A container now writes its scalar items and
    /// values itself (`Node::write_item`, inlined in its loop; a plain
    /// string is a copy between two quotes there) and calls back only for
    /// nested containers, numbers and strings with bytes to escape.
    /// `nodes_write_what_their_values_write` holds it to
    /// `json::write_compact`. Measured with Note [One space] in `parser`.
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        match self {
            Node::Array(items) => {
                out.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    v.write_item(out);
                }
                out.push(b']');
            }
            Node::Object(members) => {
                out.push(b'{');
                for (i, (k, v)) in members.entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    k.write(out);
                    out.push(b':');
                    v.write_item(out);
                }
                out.push(b'}');
            }
            _ => self.write_item(out),
        }
    }

    /// [`Node::write_compact`] for an item or member value: scalars here,
    /// containers and numbers by a call (Note [Inlined helpers]).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn write_item(&self, out: &mut Vec<u8>) {
        match self {
            Node::Null => out.extend_from_slice(b"null"),
            Node::Bool(true) => out.extend_from_slice(b"true"),
            Node::Bool(false) => out.extend_from_slice(b"false"),
            Node::Number(n) => write_number(n, out),
            Node::String(s) => s.write(out),
            Node::Array(_) | Node::Object(_) => self.write_compact(out),
        }
    }
}

/// A number as `json::write_compact` writes it (`serde_json`: `itoa`, and
/// `zmij` for floats).
#[inline(never)]
pub(crate) fn write_number(n: &Number, out: &mut Vec<u8>) {
    let _ = serde_json::to_writer(&mut *out, n);
}

#[cfg(test)]
impl Text<'static> {
    /// `s`, plain when it holds no byte to escape: the tests write both
    /// kinds (Note [Plain text]).
    fn vouched(s: String) -> Self {
        let plain = !s.bytes().any(escaped);
        Text {
            text: Cow::Owned(s),
            plain,
        }
    }
}

#[cfg(test)]
impl Node<'static> {
    /// The node of a `Value` (the tests build nodes with `json!`).
    pub fn from_value(v: Value) -> Node<'static> {
        match v {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => Node::Number(n),
            Value::String(s) => Node::String(Text::vouched(s)),
            Value::Array(items) => Node::Array(items.into_iter().map(Node::from_value).collect()),
            Value::Object(map) => {
                let mut members = Members::default();
                for (k, v) in map {
                    members.insert(Text::vouched(k), Node::from_value(v));
                }
                Node::Object(members)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn repeated_keys_keep_their_first_place_and_take_the_last_value() {
        for n in [3usize, LINEAR_KEYS - 1, LINEAR_KEYS, LINEAR_KEYS + 1, 200] {
            let mut members = Members::default();
            let mut map = Map::new();
            for round in 0..3 {
                for i in (0..n).rev() {
                    let key = format!("k{}", i % (n / 2 + 1));
                    let at = members.insert(
                        Text::from(key.clone()),
                        Node::Number((round * 1000 + i).into()),
                    );
                    map.insert(key.clone(), json!(round * 1000 + i));
                    assert_eq!(&*members.entries[at].0, key);
                }
            }
            let value = Node::Object(members).into_value();
            assert_eq!(value, Value::Object(map.clone()), "{n} keys");
            let keys: Vec<&String> = map.keys().collect();
            let got: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            assert_eq!(got.iter().collect::<Vec<_>>(), keys);
        }
    }

    #[test]
    fn nodes_write_what_their_values_write() {
        let cases = [
            json!(null),
            json!([
                true,
                false,
                -0.0,
                1.5,
                -7,
                18_446_744_073_709_551_615_u64,
                1e300
            ]),
            json!({"a\"b": "line\nbreak\ttab\u{1}\u{7f}é\\", "": {"x": [[], {}]}}),
            json!("plain"),
            json!(7),
            json!(true),
            json!({"n": 1, "f": -2.5, "t": true, "z": null, "s": "x", "e": "q\"",
                   "a": [1, "y", null, false, 3.25, {"b": false, "c": [[1], "\n"]}]}),
        ];
        for v in cases {
            let mut want = Vec::new();
            crate::write_compact(&mut want, &v);
            let node = Node::from_value(v.clone());
            let mut got = Vec::new();
            node.write_compact(&mut got);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap()
            );
            assert_eq!(node.clone().into_owned().into_value(), v);
        }
    }
}
