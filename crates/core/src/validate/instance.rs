//! Instances assembled by a caller that walks its own objects.
//!
//! Note [Instances from host objects]: a binding that holds its instances as
//! host-language objects (the Python package's dicts and lists) had to turn
//! each into a `serde_json::Value` to validate it: an `IndexMap` per object,
//! every key hashed (`SipHash`), every string copied. On the shared corpus's
//! 100,000 instances that conversion cost ten times the validation itself.
//! [`InstanceBuilder`] takes the same walk into the flat arena that JSON text
//! is read into for `validate --jsonl` (Note [Validating from text] in
//! `tape`): strings stay borrowed from the host's objects, objects are runs of
//! `(key, node)` pairs, nothing is hashed. [`Validator::check_instance`] then
//! answers exactly as [`Validator::check_text`] does for the same JSON
//! (`built_instances_agree_with_values`), so the `Value` path stays the
//! reference for every verdict and message.

use std::borrow::Cow;

use serde_json::Number;

use super::Validator;
use crate::json::tape::{Doc, MAX_DEPTH, Slot};
use crate::outcome::Violation;

/// A JSON instance built by [`InstanceBuilder`], borrowing its strings.
#[derive(Debug)]
pub struct Instance<'t> {
    doc: Doc<'t>,
}

impl Instance<'_> {
    /// How many nodes (values, containers included) it holds.
    pub fn len(&self) -> usize {
        self.doc.slots.len()
    }

    /// Never: an instance has at least its root.
    pub fn is_empty(&self) -> bool {
        self.doc.slots.is_empty()
    }
}

/// One open container of an [`InstanceBuilder`].
#[derive(Debug, Clone, Copy)]
enum Open {
    /// An array whose pending elements start at this index of `items`.
    Array(usize),
    /// An object whose pending members start at this index of `members`.
    Object(usize),
}

/// Builds an [`Instance`] from a depth-first walk: scalars, `begin_*`/`end_*`
/// around containers, and [`key`](Self::key) before each member's value.
///
/// A walk out of order (a value in an object without its key, an `end`
/// without a `begin`, nothing or two roots) makes [`finish`](Self::finish)
/// return `None`; so does nesting deeper than the text reader's limit
/// (`tape::MAX_DEPTH`): the caller then takes the `Value` path. Keys of one
/// object must be distinct, as a map's are: a lookup finds the first.
#[derive(Debug, Default)]
pub struct InstanceBuilder<'t> {
    doc: Doc<'t>,
    open: Vec<Open>,
    items: Vec<u32>,
    members: Vec<(Cow<'t, str>, u32)>,
    key: Option<Cow<'t, str>>,
    /// The keys of open containers that are members, until they close.
    parent_keys: Vec<Cow<'t, str>>,
    root: Option<u32>,
    broken: bool,
}

impl<'t> InstanceBuilder<'t> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The key of the next member of the innermost open object.
    pub fn key(&mut self, key: impl Into<Cow<'t, str>>) {
        if self.key.is_some() || !matches!(self.open.last(), Some(Open::Object(_))) {
            self.broken = true;
        }
        self.key = Some(key.into());
    }

    /// A `null`.
    pub fn null(&mut self) {
        self.slot(Slot::Null);
    }

    /// A boolean.
    pub fn bool(&mut self, b: bool) {
        self.slot(Slot::Bool(b));
    }

    /// A number.
    pub fn number(&mut self, n: Number) {
        self.slot(Slot::Number(n));
    }

    /// A string.
    pub fn string(&mut self, s: impl Into<Cow<'t, str>>) {
        self.slot(Slot::String(s.into()));
    }

    /// Open an array: its elements follow, then [`end_array`](Self::end_array).
    pub fn begin_array(&mut self) {
        self.enter();
        self.open.push(Open::Array(self.items.len()));
        self.check_depth();
    }

    /// Close the innermost array.
    pub fn end_array(&mut self) {
        let Some(Open::Array(base)) = self.open.pop() else {
            self.broken = true;
            return;
        };
        let Some((start, len)) = run(self.doc.items.len(), self.items.len() - base) else {
            self.broken = true;
            return;
        };
        self.doc.items.extend(self.items.drain(base..));
        self.leave();
        self.place(Slot::Array { start, len });
    }

    /// Open an object: `key`, value pairs follow, then
    /// [`end_object`](Self::end_object).
    pub fn begin_object(&mut self) {
        self.enter();
        self.open.push(Open::Object(self.members.len()));
        self.check_depth();
    }

    /// Close the innermost object.
    pub fn end_object(&mut self) {
        let (Some(Open::Object(base)), None) = (self.open.pop(), &self.key) else {
            self.broken = true;
            return;
        };
        let Some((start, len)) = run(self.doc.members.len(), self.members.len() - base) else {
            self.broken = true;
            return;
        };
        self.doc.members.extend(self.members.drain(base..));
        self.leave();
        self.place(Slot::Object { start, len });
    }

    /// The instance, or `None` when the walk was out of order or too deep.
    pub fn finish(mut self) -> Option<Instance<'t>> {
        if self.broken || !self.open.is_empty() {
            return None;
        }
        self.doc.root = self.root?;
        Some(Instance { doc: self.doc })
    }

    /// A scalar where the walk is.
    fn slot(&mut self, slot: Slot<'t>) {
        self.check_place();
        self.place(slot);
    }

    /// A value may go here: in an array, after a key, or as the only root.
    fn check_place(&mut self) {
        let ok = match self.open.last() {
            None => self.root.is_none(),
            Some(Open::Array(_)) => true,
            Some(Open::Object(_)) => self.key.is_some(),
        };
        if !ok {
            self.broken = true;
        }
    }

    /// Before opening a container: a member's key waits for it to close.
    fn enter(&mut self) {
        self.check_place();
        if matches!(self.open.last(), Some(Open::Object(_))) {
            if let Some(k) = self.key.take() {
                self.parent_keys.push(k);
            }
        }
    }

    /// After closing a container: its key, when it is a member, is back.
    fn leave(&mut self) {
        if matches!(self.open.last(), Some(Open::Object(_))) {
            self.key = self.parent_keys.pop();
        }
    }

    fn check_depth(&mut self) {
        if self.open.len() > MAX_DEPTH {
            self.broken = true;
        }
    }

    /// Push a finished node and attach it to its parent.
    fn place(&mut self, slot: Slot<'t>) {
        let Ok(idx) = u32::try_from(self.doc.slots.len()) else {
            self.broken = true;
            return;
        };
        self.doc.slots.push(slot);
        match self.open.last() {
            None => {
                if self.root.replace(idx).is_some() {
                    self.broken = true;
                }
            }
            Some(Open::Array(_)) => self.items.push(idx),
            Some(Open::Object(_)) => match self.key.take() {
                Some(k) => self.members.push((k, idx)),
                None => self.broken = true,
            },
        }
    }
}

/// A closed container's `(start, len)` in the arena, when both fit `u32`.
fn run(start: usize, len: usize) -> Option<(u32, u32)> {
    Some((u32::try_from(start).ok()?, u32::try_from(len).ok()?))
}

impl Validator {
    /// [`Validator::check_text`] for an instance the caller built: the
    /// invariants' violations (empty: valid) when the instance is valid
    /// against the schema; `None` when the caller must convert it to a
    /// `Value` and use [`Validator::errors_and_invariants`] (it is
    /// schema-invalid, or a rule needs the CEL interpreter). Note
    /// [Instances from host objects].
    pub fn check_instance(&self, instance: &Instance<'_>) -> Option<Vec<Violation>> {
        if !self.tape_validator()?.is_valid(instance.doc.root()) {
            return None;
        }
        self.invariants.evaluate_tape(instance.doc.root())
    }

    /// Whether `instance` is valid against the schema, ignoring
    /// `x-invariants` (callers check [`Validator::invariants`] is empty);
    /// `None` when the schema does not compile for built instances.
    pub fn is_valid_instance(&self, instance: &Instance<'_>) -> Option<bool> {
        Some(self.tape_validator()?.is_valid(instance.doc.root()))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// Walk a `Value` into a builder, as a binding walks its objects.
    fn walk<'t>(v: &'t Value, b: &mut InstanceBuilder<'t>) {
        match v {
            Value::Null => b.null(),
            Value::Bool(x) => b.bool(*x),
            Value::Number(n) => b.number(n.clone()),
            Value::String(s) => b.string(s.as_str()),
            Value::Array(items) => {
                b.begin_array();
                for item in items {
                    walk(item, b);
                }
                b.end_array();
            }
            Value::Object(m) => {
                b.begin_object();
                for (k, item) in m {
                    b.key(k.as_str());
                    walk(item, b);
                }
                b.end_object();
            }
        }
    }

    fn built(v: &Value) -> Option<Instance<'_>> {
        let mut b = InstanceBuilder::new();
        walk(v, &mut b);
        b.finish()
    }

    #[test]
    fn built_nodes_read_back_as_the_value() {
        for v in [
            json!(null),
            json!(1),
            json!("x"),
            json!([]),
            json!({}),
            json!({"a": [1, {"b": null, "c": [true, 2.5, "s"]}], "d": {}}),
            json!([[[]], [{}], {"k": [1, [2, [3]]]}]),
        ] {
            let inst = built(&v).expect("a walk in order builds");
            assert_eq!(inst.doc.root().value(), v);
        }
    }

    #[test]
    fn walks_out_of_order_build_nothing() {
        type Walk = fn(&mut InstanceBuilder<'static>);
        let cases: &[(&str, Walk)] = &[
            ("no root", |_| {}),
            ("two roots", |b| {
                b.null();
                b.null();
            }),
            ("value without key", |b| {
                b.begin_object();
                b.null();
                b.end_object();
            }),
            ("key without value", |b| {
                b.begin_object();
                b.key("a");
                b.end_object();
            }),
            ("two keys", |b| {
                b.begin_object();
                b.key("a");
                b.key("b");
                b.null();
                b.end_object();
            }),
            ("key in array", |b| {
                b.begin_array();
                b.key("a");
                b.null();
                b.end_array();
            }),
            ("unclosed", |b| b.begin_array()),
            ("wrong end", |b| {
                b.begin_array();
                b.end_object();
            }),
            ("end without begin", |b| b.end_array()),
            ("too deep", |b| {
                for _ in 0..=MAX_DEPTH {
                    b.begin_array();
                }
                for _ in 0..=MAX_DEPTH {
                    b.end_array();
                }
            }),
        ];
        for (name, steps) in cases {
            let mut b = InstanceBuilder::new();
            steps(&mut b);
            assert!(b.finish().is_none(), "{name}");
        }
        let mut b = InstanceBuilder::new();
        for _ in 0..MAX_DEPTH {
            b.begin_array();
        }
        for _ in 0..MAX_DEPTH {
            b.end_array();
        }
        assert!(b.finish().is_some(), "nesting at the limit builds");
    }

    fn review_schema() -> Value {
        serde_json::from_str(include_str!("../../../../schemas/code-review.json"))
            .expect("the bundled schema is JSON")
    }

    /// The answer on a built instance is the `Value` path's whenever it
    /// gives one, and it gives one for every schema-valid instance whose
    /// rules evaluate natively.
    fn agrees(v: &Validator, value: &Value) {
        let reference = v.errors_and_invariants(value);
        let inst = built(value).expect("builds");
        match v.check_instance(&inst) {
            Some(found) => assert_eq!(found, reference, "{value}"),
            None => assert!(
                !v.is_valid(value) || !v.invariants().is_empty(),
                "declined a schema-valid instance without rules: {value}"
            ),
        }
        if v.invariants().is_empty() {
            assert_eq!(v.is_valid_instance(&inst), Some(v.is_valid(value)));
        }
    }

    #[test]
    fn built_instances_agree_with_values_on_the_review_schema() {
        let with = Validator::new(&review_schema()).expect("compiles");
        let mut plain = review_schema();
        plain
            .as_object_mut()
            .expect("an object")
            .remove("x-invariants");
        let without = Validator::new(&plain).expect("compiles");
        let finding = |sev: &str| json!({"severity": sev, "file": "a.rs", "line": 3, "description": "d", "raisedBy": "x"});
        for value in [
            json!({"findings": [finding("major")], "counts": {"blocker": 0, "major": 1, "minor": 0, "nit": 0}}),
            json!({"findings": [finding("major")], "counts": {"blocker": 1, "major": 1, "minor": 0, "nit": 0}}),
            json!({"findings": [finding("bogus")], "counts": {}}),
            json!({"findings": "none"}),
            json!([1, 2]),
        ] {
            agrees(&with, &value);
            agrees(&without, &value);
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "[a-z]{0,3}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-c]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn built_instances_agree_with_values(value in json_value()) {
            let schemas = [
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
                json!({"type": "array", "items": {"type": ["integer", "null"]}, "maxItems": 3}),
                json!({"anyOf": [{"type": "number", "minimum": 0}, {"type": "object",
                    "additionalProperties": {"type": "boolean"}}]}),
                json!({"uniqueItems": true, "contains": {"const": null}}),
                json!({"enum": [null, 1, "a", [], {}]}),
            ];
            for s in schemas {
                agrees(&Validator::new(&s).expect("compiles"), &value);
            }
        }
    }
}
