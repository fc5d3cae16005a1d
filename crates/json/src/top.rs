//! What the weak-candidate and prose rules of extraction read of a value:
//! its top level, from a built value, the repair parser's nodes or the
//! tape alike.

use serde_json::Value;

use crate::repair::Node;
use crate::tape::{self, TapeNode};

/// What the weak-candidate and prose rules read of a value: its top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Top {
    /// `scalars`: every element is neither an array nor an object.
    Array {
        /// No items.
        empty: bool,
        /// No item is an array or an object.
        scalars: bool,
    },
    /// An object.
    Object {
        /// No members.
        empty: bool,
    },
    /// A string, number, boolean or null.
    Scalar,
}

impl Top {
    /// The top level of a built value.
    pub fn of(v: &Value) -> Top {
        match v {
            Value::Array(items) => Top::Array {
                empty: items.is_empty(),
                scalars: items.iter().all(|x| !x.is_object() && !x.is_array()),
            },
            Value::Object(m) => Top::Object {
                empty: m.is_empty(),
            },
            _ => Top::Scalar,
        }
    }

    /// The top level of the repair parser's value.
    pub fn of_node(v: &Node<'_>) -> Top {
        match v {
            Node::Array(items) => Top::Array {
                empty: items.is_empty(),
                scalars: items
                    .iter()
                    .all(|x| !matches!(x, Node::Array(_) | Node::Object(_))),
            },
            Node::Object(m) => Top::Object {
                empty: m.is_empty(),
            },
            _ => Top::Scalar,
        }
    }

    /// The top level of a value on the tape.
    pub fn of_tape(node: TapeNode<'_>) -> Top {
        match node.shape() {
            tape::Shape::Array(a) => Top::Array {
                empty: a.size() == 0,
                scalars: a.iter().all(|x| !x.is_container()),
            },
            tape::Shape::Object(o) => Top::Object {
                empty: o.size() == 0,
            },
            _ => Top::Scalar,
        }
    }

    /// An empty array or object.
    pub fn empty(self) -> bool {
        match self {
            Top::Array { empty, .. } | Top::Object { empty } => empty,
            Top::Scalar => false,
        }
    }
}
