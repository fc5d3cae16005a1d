//! A read [`Doc`] as `jsonschema` validates it: its custom-representation
//! traits over [`TapeNode`] (Note [Validating from text]).

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use serde_json::{Number, Value};

use super::{Doc, Slot, TapeArray, TapeElements, TapeMembers, TapeNode, TapeObject};

/// The `jsonschema` representation of a [`Doc`] (Note [Validating from text]).
pub struct Tape;

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
