//! `x-invariants`: CEL rules over `self`, written into the schema.
//!
//! Any subschema may hold `"x-invariants": [{"rule": "<CEL>", "message": "..."}]`,
//! the way Kubernetes writes `x-kubernetes-validations`. `self` is the instance
//! at that subschema's location; a rule must evaluate to `true`. `message` is
//! optional (default `failed rule: <rule>`). The JSON Schema validator ignores the
//! unknown keyword; [`Invariants::compile`] compiles every rule once, and a rule
//! that does not compile, or an `x-invariants` that is not a list of
//! `{rule, message}`, is [`Error::InvalidSchema`] naming the rule and its
//! location as a JSON Pointer.
//!
//! Note [Which subschemas are followed]: evaluation walks the schema alongside
//! the instance through `properties`, `additionalProperties` (members not named
//! in `properties`), `prefixItems` and `items` (the draft-07 tuple form `items:
//! [...]` with `additionalItems` too), `allOf`, and local `$ref`s (`#/...`
//! JSON Pointers, `#` for the root). These are the keywords that say, without
//! evaluating anything, which subschema applies to which part of the instance.
//! Conditional and alternative keywords (`anyOf`, `oneOf`, `not`, `if`/`then`/
//! `else`, `dependentSchemas`, `patternProperties`, `contains`, `propertyNames`,
//! `unevaluated*`) are not followed: which branch applies is itself a question
//! of validation. Rules placed under them would never run, so compiling such a
//! schema fails instead of silently ignoring them. `$ref`s to other documents
//! or to `$anchor`/`$id` names are not followed either.
//!
//! Note [When a rule runs]: a location's rules run only when JSON Schema
//! validation passed there, that is when no schema error has an instance path
//! at or under that location; a rule over `self.counts.blocker` would otherwise
//! mostly report the schema error again. The walk still descends below a failed
//! location, so a valid sibling's rules still run. A rule that cannot be
//! evaluated (a missing field, a type mismatch, a non-boolean result) is itself
//! a finding, with the CEL error in its message: data is not an error.
//!
//! Note [Cost limit]: a rule is a program over agent data, and a rule that is
//! fine over 10 items can be O(n³) over 400 (`self.all(a, self.all(b,
//! self.all(c, ...)))` ran 36 s). The `cel` crate (0.15) has no cost or step
//! limit of its own, so each rule is compiled once more with a meter: every
//! comprehension's range (`all`, `exists`, `exists_one`, `map`, `filter`) is
//! wrapped in a call that charges the range's size before the loop runs,
//! and the right side of `in` and the non-literal list operands of `+` are
//! charged their size as they are scanned or copied. Nested loops are
//! charged once per inner run, so the total is the number of iterations (an
//! upper bound when a loop stops early). One evaluation of one rule may
//! spend [`COST_LIMIT`] units; the call that would go past it fails at once,
//! and the rule is reported as an invariant finding saying it exceeded the
//! cost limit (never a hang, never a pass). A rule over 1,000 items may
//! still compare every pair (10⁶ units). Not charged: equality of whole
//! lists and string work, which are linear in the instance and bounded by
//! the iterations around them.
//!
//! Note [Memory charge]: steps alone did not bound memory. `self.a.map(x,
//! self.a.map(y, self.a))` over 2,000 items is within a few million steps
//! but copies `self.a` four million times (5.8 GB before the process
//! aborted), and `self.a.map(x, self.s + self.s)` copies a long string per
//! item. So what a rule copies into a value it builds is charged to the same
//! budget, before the copy is made: each operand of `+` that is not a
//! literal (the scan meter charged a list's length; the build meter now
//! charges its size), and each element of a list literal and each key and
//! value of a map literal that is not a literal (a literal's size is
//! bounded by the rule's). A copy's size is one unit per number, boolean or
//! null, one unit plus one per [`TEXT_BYTES_PER_UNIT`] bytes for a string
//! or bytes value, and the sum of its elements (at least one each) for a
//! list, or of its keys and values for a map; counting stops once the
//! budget is spent. `map(x, x)` and `filter` append the loop variable
//! itself and are not charged for it: their result holds elements of the
//! range, which is the instance or a value whose building was charged.
//! Everything a rule keeps was charged when it was copied, so one
//! evaluation builds at most about [`COST_LIMIT`] elements or 64 MB of
//! text before it ends with the cost-limit finding (the README has the
//! measured peak memory). The native evaluator charges the same sizes, or
//! more (it sizes the whole JSON value where the interpreter sees only what
//! the rule reaches), so it never decides a rule the interpreter would stop.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cel::common::ast::{CallExpr, EntryExpr, Expr, operators};
use cel::common::types::{CelBytes, CelList, CelMap, CelOptional, CelString};
use cel::common::value::{CowVal, Val};
use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, FunctionContext, IdedExpr, Value as Cel};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::outcome::{Extraction, Method, Violation, ViolationKind};

/// The schema keyword holding the rules.
pub const KEYWORD: &str = "x-invariants";

/// The cost one evaluation of one rule may spend: about one unit per loop
/// iteration or scanned element (Note [Cost limit]), and per element or
/// 64 bytes of text a rule builds (Note [Memory charge]).
pub const COST_LIMIT: u64 = 1_000_000;

/// Bytes of a string or bytes value charged as one unit (Note [Memory
/// charge]).
pub(crate) const TEXT_BYTES_PER_UNIT: usize = 64;

/// The metering function wrapped around a comprehension's range: charges
/// the number of elements of a list or entries of a map. `@` names cannot
/// be written in CEL source.
const METER_LOOP: &str = "@agentshape_loop";
/// The metering function wrapped around what `in` scans: charges a list's
/// length (a map lookup or anything else costs 1).
const METER_SCAN: &str = "@agentshape_scan";
/// The metering function wrapped around what a rule copies into a value it
/// builds (the operands of `+`, the elements of list and map literals):
/// charges the copy's size (Note [Memory charge]).
const METER_BUILD: &str = "@agentshape_build";

/// One compiled rule.
struct Rule {
    /// The CEL source, as written.
    source: String,
    /// The message reported when the rule is false.
    message: String,
    /// Where the rule sits: `.../x-invariants/<i>`.
    schema_path: String,
    /// The compiled rule with its meters (Note [Cost limit]).
    metered: IdedExpr,
    /// What the rule can reach from `self` (Note [Projected binding]).
    reach: project::Reach,
    /// The rule compiled for the native evaluator (Note [Native rules],
    /// Note [Compiled native rules]).
    native: native::Program,
    /// The stack it is evaluated and dropped on (Note [Stack for rules]).
    stack: usize,
}

impl Drop for Rule {
    /// Dropping the compiled rule recurses once per level of it, as
    /// evaluating does (Note [Stack for rules]).
    fn drop(&mut self) {
        let metered = std::mem::take(&mut self.metered);
        let native = std::mem::take(&mut self.native);
        stack::with(self.stack, move || drop((metered, native)));
    }
}

/// One subschema on a path that leads to rules.
#[derive(Default)]
struct Node {
    rules: Vec<Rule>,
    properties: Vec<(String, usize)>,
    additional: Option<usize>,
    prefix_items: Vec<usize>,
    items: Option<usize>,
    all_of: Vec<usize>,
    reference: Option<usize>,
    /// Whether this node or anything it leads to holds rules.
    live: bool,
    /// What its rules reach together: `self` is bound to this much of the
    /// instance (Note [Projected binding]).
    reach: project::Reach,
}

/// The `x-invariants` of one schema, compiled once; evaluate many instances.
///
/// Every [`Validator`](crate::validate::Validator) compiles its schema's
/// invariants ([`Validator::invariants`](crate::validate::Validator::invariants)),
/// so loading a schema with a broken rule fails wherever schemas are loaded.
pub struct Invariants {
    env: Arc<Env>,
    nodes: Vec<Node>,
    count: usize,
    cost_limit: u64,
    /// Bind only what the rules reach, and try the native evaluator first
    /// (always, but for the tests that compare with the plain interpreter).
    projected: bool,
}

impl std::fmt::Debug for Invariants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rules: Vec<(&str, &str)> = self
            .nodes
            .iter()
            .flat_map(|n| n.rules.iter())
            .map(|r| (r.schema_path.as_str(), r.source.as_str()))
            .collect();
        f.debug_struct("Invariants")
            .field("rules", &rules)
            .finish_non_exhaustive()
    }
}

impl Invariants {
    /// Compile every `x-invariants` rule of `schema`.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] naming the rule and its JSON Pointer when a
    /// rule does not compile, when `x-invariants` is not a list of `{rule,
    /// message}`, or when rules sit where they would never run (see Note
    /// [Which subschemas are followed]).
    pub fn compile(schema: &Value) -> Result<Invariants> {
        let env = Arc::new(Env::stdlib());
        let mut b = Builder {
            root: schema,
            env: &env,
            nodes: Vec::new(),
            index: HashMap::new(),
            count: 0,
        };
        b.node(String::new(), schema)?;
        let reached: HashSet<String> = b.index.keys().cloned().collect();
        unreached_rules(schema, "", &reached)?;
        let Builder {
            mut nodes, count, ..
        } = b;
        prune(&mut nodes);
        Ok(Invariants {
            env,
            nodes,
            count,
            cost_limit: COST_LIMIT,
            projected: true,
        })
    }

    /// The same rules with another cost limit per rule evaluation (default
    /// [`COST_LIMIT`]; Note [Cost limit]).
    #[must_use]
    pub fn with_cost_limit(mut self, limit: u64) -> Self {
        self.cost_limit = limit;
        self
    }

    /// No rules at all (the common case: evaluation is then free).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many rules were compiled.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The violations of `instance`'s invariants, sorted by instance path then
    /// schema path. `schema_errors` are the instance's JSON Schema errors (as
    /// from [`Validator::errors`](crate::validate::Validator::errors); empty
    /// when it is valid): a location's rules run only where validation passed
    /// (Note [When a rule runs]). Each violation has kind
    /// [`ViolationKind::Invariant`] and its `rule`.
    pub fn evaluate(&self, instance: &Value, schema_errors: &[Violation]) -> Vec<Violation> {
        if self.count == 0 || self.nodes.is_empty() {
            return Vec::new();
        }
        let failed: Vec<&str> = schema_errors
            .iter()
            .filter(|e| e.kind != Some(ViolationKind::Invariant))
            .map(|e| e.instance_path.as_str())
            .collect();
        let mut walk = Walk {
            inv: self,
            failed: &failed,
            out: Vec::new(),
            stack: Vec::new(),
        };
        let mut path = String::new();
        walk.visit(0, instance, &mut path);
        let mut out = walk.out;
        out.sort_by(|a, b| {
            (&a.instance_path, &a.schema_path).cmp(&(&b.instance_path, &b.schema_path))
        });
        out.dedup();
        out
    }
}

impl Invariants {
    /// [`Invariants::evaluate`] on a schema-valid instance read in place
    /// (Note [Validating from text] in `validate`), when the native
    /// evaluator decides every rule that runs (Note [Native rules]); `None`
    /// when one needs the interpreter, and the caller then evaluates the
    /// `Value`. The same violations in the same order
    /// (`tape_verdicts_agree_with_value_verdicts`).
    pub(crate) fn evaluate_tape(
        &self,
        instance: crate::json::tape::TapeNode<'_>,
    ) -> Option<Vec<Violation>> {
        if self.count == 0 || self.nodes.is_empty() {
            return Some(Vec::new());
        }
        if !self.projected {
            return None;
        }
        let mut walk = TapeWalk {
            inv: self,
            out: Vec::new(),
            stack: Vec::new(),
        };
        let mut path = String::new();
        walk.visit(0, instance, &mut path)?;
        let mut out = walk.out;
        out.sort_by(|a, b| {
            (&a.instance_path, &a.schema_path).cmp(&(&b.instance_path, &b.schema_path))
        });
        out.dedup();
        Some(out)
    }
}

/// [`Walk`] over an instance read in place; every location passed
/// validation (the caller checked the whole instance first).
struct TapeWalk<'a> {
    inv: &'a Invariants,
    out: Vec<Violation>,
    stack: Vec<(usize, Option<jsonschema::json::NodeIdentity>)>,
}

impl TapeWalk<'_> {
    fn visit(
        &mut self,
        id: usize,
        value: crate::json::tape::TapeNode<'_>,
        path: &mut String,
    ) -> Option<()> {
        use crate::json::tape::Shape;
        use jsonschema::json::Node as _;
        let inv = self.inv;
        let node = &inv.nodes[id];
        if !node.live {
            return Some(());
        }
        let key = (id, value.identity());
        if self.stack.contains(&key) {
            return Some(());
        }
        self.stack.push(key);
        for rule in &node.rules {
            let verdict = stack::with(rule.stack, || {
                rule.native.verdict_tape(value, inv.cost_limit)
            });
            if !verdict? {
                self.out.push(Violation {
                    instance_path: path.clone(),
                    schema_path: rule.schema_path.clone(),
                    message: rule.message.clone(),
                    kind: Some(ViolationKind::Invariant),
                    rule: Some(rule.source.clone()),
                });
            }
        }
        for &c in node.all_of.iter().chain(node.reference.iter()) {
            self.visit(c, value, path)?;
        }
        match value.shape() {
            Shape::Object(members) => {
                for (name, c) in &node.properties {
                    if let Some(v) = members.member(name) {
                        self.descend(*c, v, path, name)?;
                    }
                }
                if let Some(c) = node.additional {
                    for (name, v) in &members {
                        if !node.properties.iter().any(|(n, _)| n == name) {
                            self.descend(c, v, path, name)?;
                        }
                    }
                }
            }
            Shape::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let c = node.prefix_items.get(i).copied().or(node.items);
                    if let Some(c) = c {
                        self.descend(c, v, path, &i.to_string())?;
                    }
                }
            }
            _ => {}
        }
        self.stack.pop();
        Some(())
    }

    fn descend(
        &mut self,
        id: usize,
        value: crate::json::tape::TapeNode<'_>,
        path: &mut String,
        token: &str,
    ) -> Option<()> {
        if !self.inv.nodes[id].live {
            return Some(());
        }
        let len = path.len();
        path.push('/');
        path.push_str(&escape(token));
        let r = self.visit(id, value, path);
        path.truncate(len);
        r
    }
}

/// Evaluate `invariants` on an extraction's value and add their violations to
/// its `errors` (making it invalid). Nothing happens when nothing was
/// extracted. This is the helper for every pipeline edge (`extract` uses it
/// through [`Validator::invariants`](crate::validate::Validator::invariants);
/// `run` and `ask` can call it, or read the `kind: invariant` errors it adds).
pub fn check_extraction(extraction: &mut Extraction, invariants: &Invariants) {
    if invariants.is_empty() || extraction.method == Method::None {
        return;
    }
    let Some(value) = &extraction.value else {
        return;
    };
    let found = invariants.evaluate(value, &extraction.errors);
    if !found.is_empty() {
        extraction.valid = false;
        extraction.errors.extend(found);
    }
}

struct Builder<'a> {
    root: &'a Value,
    env: &'a Arc<Env>,
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    count: usize,
}

impl Builder<'_> {
    /// The node of the subschema at `pointer`; `None` for boolean schemas.
    // `pointer` is moved into the index; clippy misses the move through `clone`.
    #[allow(clippy::needless_pass_by_value)]
    fn node(&mut self, pointer: String, schema: &Value) -> Result<Option<usize>> {
        let Some(obj) = schema.as_object() else {
            return Ok(None);
        };
        if let Some(&i) = self.index.get(&pointer) {
            return Ok(Some(i));
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.index.insert(pointer.clone(), id);
        let mut node = Node {
            rules: self.rules(&pointer, obj.get(KEYWORD))?,
            ..Node::default()
        };
        for r in &node.rules {
            node.reach.merge(&r.reach);
        }
        self.count += node.rules.len();
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, sub) in props {
                let at = format!("{pointer}/properties/{}", escape(name));
                if let Some(c) = self.node(at, sub)? {
                    node.properties.push((name.clone(), c));
                }
            }
        }
        if let Some(sub) = obj.get("additionalProperties") {
            node.additional = self.node(format!("{pointer}/additionalProperties"), sub)?;
        }
        if let Some(Value::Array(subs)) = obj.get("prefixItems") {
            node.prefix_items = self.list(&pointer, "prefixItems", subs)?;
        }
        match obj.get("items") {
            Some(Value::Array(subs)) => {
                node.prefix_items = self.list(&pointer, "items", subs)?;
                if let Some(sub) = obj.get("additionalItems") {
                    node.items = self.node(format!("{pointer}/additionalItems"), sub)?;
                }
            }
            Some(sub) => node.items = self.node(format!("{pointer}/items"), sub)?,
            None => {}
        }
        if let Some(Value::Array(subs)) = obj.get("allOf") {
            node.all_of = self.list(&pointer, "allOf", subs)?;
        }
        if let Some(Value::String(r)) = obj.get("$ref") {
            if let Some(target) = local_ref(r) {
                if let Some(sub) = self.root.pointer(&target) {
                    node.reference = self.node(target, sub)?;
                }
            }
        }
        self.nodes[id] = node;
        Ok(Some(id))
    }

    fn list(&mut self, pointer: &str, keyword: &str, subs: &[Value]) -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(subs.len());
        for (i, sub) in subs.iter().enumerate() {
            // Keep positions aligned: a boolean schema gets no node, so it is
            // represented by a node without rules.
            if let Some(c) = self.node(format!("{pointer}/{keyword}/{i}"), sub)? {
                out.push(c);
            } else {
                out.push(self.nodes.len());
                self.nodes.push(Node::default());
            }
        }
        Ok(out)
    }

    fn rules(&self, pointer: &str, list: Option<&Value>) -> Result<Vec<Rule>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        let bad = |at: &str, what: &str| Error::InvalidSchema {
            message: format!("`{KEYWORD}` at `{at}`: {what}"),
        };
        let Value::Array(items) = list else {
            return Err(bad(
                &format!("{pointer}/{KEYWORD}"),
                "expected a list of {\"rule\", \"message\"} objects",
            ));
        };
        let mut rules = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{pointer}/{KEYWORD}/{i}");
            let Some(Value::String(source)) = item.get("rule") else {
                return Err(bad(&at, "expected an object with a string `rule`"));
            };
            let message = match item.get("message") {
                None => format!("failed rule: {source}"),
                Some(Value::String(m)) => m.clone(),
                Some(_) => return Err(bad(&at, "`message` must be a string")),
            };
            // Before the parser sees it (Note [Rule size limits]).
            let size = limits::check(source).map_err(|why| Error::InvalidSchema {
                message: format!(
                    "`{KEYWORD}` rule `{}` at `{at}` is {why}",
                    limits::excerpt(source)
                ),
            })?;
            let stack = stack::need(size);
            // On a stack the rule fits (Note [Stack for rules]); a panic in
            // the parser would be its bug, and is a schema error here.
            let compiled = stack::with(stack, || {
                catch_unwind(AssertUnwindSafe(|| {
                    let program = self.env.compile(source).map_err(|e| e.to_string())?;
                    let reach = project::Reach::of(program.expression());
                    let mut metered = program.expression().clone();
                    meter(&mut metered);
                    let native = native::Program::compile(program.expression());
                    Ok((reach, metered, native))
                }))
                .unwrap_or_else(|_| Err("the CEL parser failed".to_owned()))
            });
            let (reach, metered, native) = compiled.map_err(|e| Error::InvalidSchema {
                message: format!(
                    "`{KEYWORD}` rule `{source}` at `{at}` does not compile: {}",
                    one_line(&e)
                ),
            })?;
            rules.push(Rule {
                source: source.clone(),
                message,
                schema_path: at,
                metered,
                reach,
                native,
                stack,
            });
        }
        Ok(rules)
    }
}

/// Keywords whose values are subschemas (or maps or lists of them), for the
/// search of rules that would never run.
const SUBSCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
const SUBSCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const SUBSCHEMA_ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Fail on `x-invariants` in a subschema the walk never reaches (`$defs`
/// are reached through `$ref` only and are not searched: an unused
/// definition's rules are as unused as the definition).
fn unreached_rules(schema: &Value, pointer: &str, reached: &HashSet<String>) -> Result<()> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    if obj.contains_key(KEYWORD) && !reached.contains(pointer) {
        return Err(Error::InvalidSchema {
            message: format!(
                "`{KEYWORD}` at `{pointer}/{KEYWORD}` would never run: rules are evaluated \
                 only under properties, additionalProperties, items, prefixItems, allOf and \
                 local `$ref`"
            ),
        });
    }
    for kw in SUBSCHEMA_MAPS {
        if let Some(Value::Object(m)) = obj.get(*kw) {
            for (name, sub) in m {
                unreached_rules(sub, &format!("{pointer}/{kw}/{}", escape(name)), reached)?;
            }
        }
    }
    for kw in SUBSCHEMA_LISTS {
        if let Some(Value::Array(l)) = obj.get(*kw) {
            for (i, sub) in l.iter().enumerate() {
                unreached_rules(sub, &format!("{pointer}/{kw}/{i}"), reached)?;
            }
        }
    }
    for kw in SUBSCHEMA_ONE {
        if let Some(sub @ Value::Object(_)) = obj.get(*kw) {
            unreached_rules(sub, &format!("{pointer}/{kw}"), reached)?;
        }
    }
    Ok(())
}

/// Mark the nodes that hold rules or lead to some (a fixed point, since
/// `$ref`s may form cycles).
fn prune(nodes: &mut [Node]) {
    for n in nodes.iter_mut() {
        n.live = !n.rules.is_empty();
    }
    loop {
        let mut changed = false;
        for i in 0..nodes.len() {
            if nodes[i].live {
                continue;
            }
            let n = &nodes[i];
            let live = n
                .properties
                .iter()
                .map(|(_, c)| *c)
                .chain(n.additional)
                .chain(n.prefix_items.iter().copied())
                .chain(n.items)
                .chain(n.all_of.iter().copied())
                .chain(n.reference)
                .any(|c| nodes[c].live);
            if live {
                nodes[i].live = true;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

struct Walk<'a> {
    inv: &'a Invariants,
    failed: &'a [&'a str],
    out: Vec<Violation>,
    /// (node, instance) pairs on the current path: a `$ref` or `allOf` cycle
    /// that does not descend into the instance is cut here.
    stack: Vec<(usize, *const Value)>,
}

impl Walk<'_> {
    fn visit(&mut self, id: usize, value: &Value, path: &mut String) {
        let inv = self.inv;
        let node = &inv.nodes[id];
        if !node.live {
            return;
        }
        let key = (id, std::ptr::from_ref(value));
        if self.stack.contains(&key) {
            return;
        }
        self.stack.push(key);
        if !node.rules.is_empty() && self.passed(path) {
            self.run_rules(node, value, path);
        }
        for &c in node.all_of.iter().chain(node.reference.iter()) {
            self.visit(c, value, path);
        }
        match value {
            Value::Object(members) => {
                for (name, c) in &node.properties {
                    if let Some(v) = members.get(name) {
                        self.descend(*c, v, path, name);
                    }
                }
                if let Some(c) = node.additional {
                    for (name, v) in members {
                        if !node.properties.iter().any(|(n, _)| n == name) {
                            self.descend(c, v, path, name);
                        }
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let c = node.prefix_items.get(i).copied().or(node.items);
                    if let Some(c) = c {
                        self.descend(c, v, path, &i.to_string());
                    }
                }
            }
            _ => {}
        }
        self.stack.pop();
    }

    fn descend(&mut self, id: usize, value: &Value, path: &mut String, token: &str) {
        if !self.inv.nodes[id].live {
            return;
        }
        let len = path.len();
        path.push('/');
        path.push_str(&escape(token));
        self.visit(id, value, path);
        path.truncate(len);
    }

    /// No schema error at or under `path` (Note [When a rule runs]).
    fn passed(&self, path: &str) -> bool {
        !self.failed.iter().any(|e| {
            e.strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    fn run_rules(&mut self, node: &Node, value: &Value, path: &str) {
        let limit = self.inv.cost_limit;
        let spent = Arc::new(AtomicU64::new(0));
        // Built only when a rule needs the interpreter (Note [Native rules]).
        let mut ctx: Option<Context<'_, '_>> = None;
        for rule in &node.rules {
            if self.inv.projected {
                match stack::with(rule.stack, || rule.native.verdict(value, limit)) {
                    Some(true) => continue,
                    Some(false) => {
                        self.push(rule, path, rule.message.clone());
                        continue;
                    }
                    None => {}
                }
            }
            let ctx = ctx.get_or_insert_with(|| {
                let mut ctx = Context::with_env(Arc::clone(&self.inv.env));
                let bound = if self.inv.projected {
                    node.reach.project(value)
                } else {
                    to_cel(value)
                };
                ctx.add_variable_from_value("self", bound);
                // The meters are ours, and their `@` names cannot clash with
                // the standard library: registering them cannot fail.
                for (name, charge) in [
                    (METER_LOOP, Charge::Loop),
                    (METER_SCAN, Charge::Scan),
                    (METER_BUILD, Charge::Build),
                ] {
                    let _ = ctx.add_function(name, meter_fn(name, &spent, limit, charge));
                }
                ctx
            });
            spent.store(0, Ordering::Relaxed);
            // Note: a panic inside the CEL interpreter would be its bug; it is
            // caught so bad input can never bring the caller down.
            let got = stack::with(rule.stack, || {
                catch_unwind(AssertUnwindSafe(|| Cel::resolve(&rule.metered, ctx)))
            });
            let message = if spent.load(Ordering::Relaxed) > limit {
                format!(
                    "{}: the rule exceeded the cost limit ({limit} steps per evaluation; \
                     loops over loops of the data) and was stopped",
                    rule.message
                )
            } else {
                match got {
                    Ok(Ok(Cel::Bool(true))) => continue,
                    Ok(Ok(Cel::Bool(false))) => rule.message.clone(),
                    Ok(Ok(other)) => format!(
                        "{}: the rule gave {} instead of a boolean",
                        rule.message,
                        cel_type(&other)
                    ),
                    Ok(Err(e)) => format!(
                        "{}: the rule could not be evaluated: {}",
                        rule.message,
                        explain(&e)
                    ),
                    Err(_) => format!(
                        "{}: the rule could not be evaluated: the CEL interpreter failed",
                        rule.message
                    ),
                }
            };
            self.push(rule, path, message);
        }
    }

    fn push(&mut self, rule: &Rule, path: &str, message: String) {
        self.out.push(Violation {
            instance_path: path.to_owned(),
            schema_path: rule.schema_path.clone(),
            message,
            kind: Some(ViolationKind::Invariant),
            rule: Some(rule.source.clone()),
        });
    }
}

/// A CEL function closure as the `cel` crate stores it.
type MeterFn = Box<
    dyn for<'c, 'v> Fn(&mut FunctionContext<'c, 'v>) -> Result<CowVal<'c, 'v>, ExecutionError>
        + Send
        + Sync,
>;

/// What a meter charges for its argument.
#[derive(Clone, Copy)]
enum Charge {
    /// A list's or a map's size (a comprehension's range).
    Loop,
    /// A list's length (what `in` scans).
    Scan,
    /// The size of a copy (Note [Memory charge]).
    Build,
}

/// A meter (Note [Cost limit]): returns its one argument unchanged after
/// charging it to `spent`; fails once `spent` passes `limit`. Anything a
/// loop or a scan cannot go over costs 1.
fn meter_fn(name: &'static str, spent: &Arc<AtomicU64>, limit: u64, charge: Charge) -> MeterFn {
    let spent = Arc::clone(spent);
    Box::new(move |ftx: &mut FunctionContext<'_, '_>| {
        let Some(arg) = std::mem::take(&mut ftx.args).into_iter().next() else {
            return Err(ExecutionError::function_error(
                name,
                "expected one argument",
            ));
        };
        let size = match charge {
            Charge::Build => {
                let left = limit.saturating_sub(spent.load(Ordering::Relaxed));
                built_size(&*arg, left.saturating_add(1))
            }
            Charge::Loop | Charge::Scan => {
                if arg.downcast_ref::<CelList>().is_some()
                    || (matches!(charge, Charge::Loop) && arg.downcast_ref::<CelMap>().is_some())
                {
                    arg.as_sizer()
                        .map_or(1, |s| u64::try_from(*s.size().inner()).unwrap_or(0))
                } else {
                    1
                }
            }
        };
        let total = spent
            .fetch_add(size, Ordering::Relaxed)
            .saturating_add(size);
        if total > limit {
            return Err(ExecutionError::function_error(
                name,
                format!("the cost limit of {limit} steps was exceeded"),
            ));
        }
        Ok(arg)
    })
}

/// The size a copy of `v` is charged (Note [Memory charge]), counted up to
/// `cap` at most (what is left of the budget, plus one).
fn built_size(v: &dyn Val, cap: u64) -> u64 {
    // An element of a container weighs at least 1, even an empty list.
    let weight = |v: &dyn Val, cap: u64| built_size(v, cap).max(1);
    if let Some(list) = v.downcast_ref::<CelList>() {
        let mut n = 0u64;
        for e in list.inner() {
            if n >= cap {
                break;
            }
            n = n.saturating_add(weight(&**e, cap - n));
        }
        n
    } else if let Some(map) = v.downcast_ref::<CelMap>() {
        let mut n = 0u64;
        for (k, e) in map.inner() {
            if n >= cap {
                break;
            }
            n = n
                .saturating_add(weight(k.inner(), cap - n))
                .saturating_add(weight(&**e, cap.saturating_sub(n)));
        }
        n
    } else if let Some(s) = v.downcast_ref::<CelString>() {
        text_size(s.inner().len())
    } else if let Some(b) = v.downcast_ref::<CelBytes>() {
        text_size(b.inner().len())
    } else if let Some(o) = v.downcast_ref::<CelOptional>() {
        o.inner().map_or(1, |x| weight(x, cap))
    } else {
        1
    }
}

/// What a string or bytes value of `len` bytes is charged (Note [Memory
/// charge]).
pub(crate) fn text_size(len: usize) -> u64 {
    1 + u64::try_from(len / TEXT_BYTES_PER_UNIT).unwrap_or(u64::MAX - 1)
}

/// Put the meters into a compiled rule (Note [Cost limit]).
fn meter(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Comprehension(c) => {
            for sub in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                meter(sub);
            }
            wrap(&mut c.iter_range, METER_LOOP);
            // `map(x, x)` and `filter` append the loop variable itself: the
            // result holds elements of the range, which is data or was
            // charged when it was built (Note [Memory charge]).
            let (iter_var, accu) = (c.iter_var.clone(), c.accu_var.clone());
            if let Some(item) = appended(&mut c.loop_step, &accu) {
                if let Expr::Call(call) = &mut item.expr {
                    if call.func_name == METER_BUILD
                        && matches!(call.args.as_slice(), [a] if matches!(&a.expr, Expr::Ident(n) if *n == iter_var))
                    {
                        if let Some(inner) = call.args.pop() {
                            *item = inner;
                        }
                    }
                }
            }
        }
        Expr::Call(call) => {
            if let Some(t) = call.target.as_deref_mut() {
                meter(t);
            }
            for a in &mut call.args {
                meter(a);
            }
            if call.target.is_some() {
                return;
            }
            if call.func_name == operators::IN {
                if let Some(rhs) = call.args.get_mut(1) {
                    wrap(rhs, METER_SCAN);
                }
            } else if call.func_name == operators::ADD
                // `@result + [x]`, the step of `map` and `filter`, is left
                // alone: the interpreter appends in place only to that shape.
                && !call
                    .args
                    .iter()
                    .any(|a| matches!(&a.expr, Expr::Ident(n) if n.starts_with('@')))
            {
                for a in &mut call.args {
                    if !matches!(a.expr, Expr::Literal(_)) {
                        wrap(a, METER_BUILD);
                    }
                }
            }
        }
        Expr::List(l) => {
            for x in &mut l.elements {
                meter(x);
                build(x);
            }
        }
        Expr::Map(m) => m
            .entries
            .iter_mut()
            .for_each(|en| meter_entry(&mut en.expr)),
        Expr::Struct(st) => st
            .entries
            .iter_mut()
            .for_each(|en| meter_entry(&mut en.expr)),
        Expr::Select(sel) => meter(&mut sel.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn meter_entry(entry: &mut EntryExpr) {
    match entry {
        EntryExpr::MapEntry(m) => {
            meter(&mut m.key);
            meter(&mut m.value);
            build(&mut m.key);
            build(&mut m.value);
        }
        EntryExpr::StructField(f) => meter(&mut f.value),
    }
}

/// Charge what `e` gives when it is copied into a list or map literal
/// (Note [Memory charge]); a literal's size is bounded by the rule's.
fn build(e: &mut IdedExpr) {
    if !matches!(e.expr, Expr::Literal(_)) {
        wrap(e, METER_BUILD);
    }
}

/// The element `e` of a comprehension step that appends `[e]` to the
/// accumulator: `@acc + [e]` (`map`) or `p ? @acc + [e] : @acc` (`filter`).
fn appended<'e>(step: &'e mut IdedExpr, accu: &str) -> Option<&'e mut IdedExpr> {
    let guarded = matches!(&step.expr, Expr::Call(c)
        if c.target.is_none() && c.func_name == operators::CONDITIONAL);
    if !guarded {
        return appended_to(step, accu);
    }
    let Expr::Call(call) = &mut step.expr else {
        return None;
    };
    let [_, add, keep] = call.args.as_mut_slice() else {
        return None;
    };
    if !matches!(&keep.expr, Expr::Ident(n) if n == accu) {
        return None;
    }
    appended_to(add, accu)
}

/// The `e` of `@acc + [e]`.
fn appended_to<'e>(add: &'e mut IdedExpr, accu: &str) -> Option<&'e mut IdedExpr> {
    let Expr::Call(call) = &mut add.expr else {
        return None;
    };
    if call.func_name != operators::ADD || call.target.is_some() {
        return None;
    }
    let [acc, list] = call.args.as_mut_slice() else {
        return None;
    };
    if !matches!(&acc.expr, Expr::Ident(n) if n == accu) {
        return None;
    }
    let Expr::List(l) = &mut list.expr else {
        return None;
    };
    if !l.optional_indices.is_empty() {
        return None;
    }
    match l.elements.as_mut_slice() {
        [e] => Some(e),
        _ => None,
    }
}

/// Replace `e` by `name(e)`.
fn wrap(e: &mut IdedExpr, name: &str) {
    let inner = std::mem::take(e);
    *e = IdedExpr {
        id: inner.id,
        expr: Expr::Call(CallExpr {
            func_name: name.to_owned(),
            target: None,
            args: vec![inner],
        }),
    };
}

/// The CEL value of a JSON value: integers that fit are `int` (so
/// `self.n == list.size()` compares like with like), larger ones `uint`,
/// others `double`; objects are maps with string keys.
fn to_cel(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(a) => Cel::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => Cel::Map(Map {
            map: Arc::new(
                m.iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                    .collect(),
            ),
        }),
    }
}

/// CEL's name for the type of a result.
fn cel_type(v: &Cel) -> &'static str {
    match v {
        Cel::List(_) => "a list",
        Cel::Map(_) => "a map",
        Cel::Int(_) => "an int",
        Cel::UInt(_) => "a uint",
        Cel::Float(_) => "a double",
        Cel::String(_) => "a string",
        Cel::Bytes(_) => "bytes",
        Cel::Null => "null",
        _ => "a non-boolean value",
    }
}

/// The target pointer of a local `$ref` (`#`, `#/a/b`, percent-decoded).
fn local_ref(r: &str) -> Option<String> {
    let frag = r.strip_prefix('#')?;
    if !(frag.is_empty() || frag.starts_with('/')) {
        return None;
    }
    Some(percent_decode(frag))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| char::from(b).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                // Two hex digits make one byte.
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escape one JSON Pointer token.
fn escape(token: &str) -> String {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1")
    } else {
        token.to_owned()
    }
}

/// Why a rule could not be evaluated, in one line.
///
/// Note [Errors name values, not dump them]: the interpreter's own messages
/// print the values involved with `{:?}`: a list or map of the agent's data
/// came out whole (a finding's message could hold the entire document), and a
/// map's keys in `HashMap` order, so the same input gave a different message
/// on every run. Here a list or map is named by its size and a scalar shown
/// as CEL writes it (strings cut at 40 characters), so messages are short and
/// the same on every run. Variants added by a later interpreter fall back to
/// its own text.
#[allow(deprecated)] // the deprecated variants can still be returned
fn explain(e: &ExecutionError) -> String {
    use ExecutionError as E;
    let text = match e {
        E::UnsupportedTargetType { target } => {
            format!("Invalid argument type: {}", shown(target))
        }
        E::NotSupportedAsMethod { method, target } => {
            format!("Method '{method}' not supported on {}", shown(target))
        }
        E::UnsupportedKeyType(v) => format!("Unable to use {} as a key", shown(v)),
        E::ValuesNotComparable(a, b) => {
            format!("{} can not be compared to {}", shown(a), shown(b))
        }
        E::UnsupportedUnaryOperator(op, v) => {
            format!("Unsupported unary operator '{op}': {}", shown(v))
        }
        E::UnsupportedBinaryOperator(op, a, b) => {
            format!(
                "Unsupported binary operator '{op}': {}, {}",
                shown(a),
                shown(b)
            )
        }
        E::UnsupportedMapIndex(v) => format!("Cannot use {} as map index", shown(v)),
        E::UnsupportedListIndex(v) => format!("Cannot use {} as list index", shown(v)),
        E::UnsupportedIndex(i, v) => format!("Cannot use {} to index {}", shown(i), shown(v)),
        E::DivisionByZero(v) => format!("Division by zero of {}", shown(v)),
        E::RemainderByZero(v) => format!("Remainder by zero of {}", shown(v)),
        E::Overflow(op, a, b) => {
            format!(
                "Overflow from binary operator '{op}': {}, {}",
                shown(a),
                shown(b)
            )
        }
        E::IndexOutOfBounds(v) => format!("Index out of bounds: {}", shown(v)),
        E::DuplicateKey(v) => format!("Failed with repeated key: {}", shown(v)),
        other => other.to_string(),
    };
    one_line(&text)
}

/// A value as an error message names it (Note [Errors name values, not
/// dump them]).
fn shown(v: &Cel) -> String {
    const MAX_CHARS: usize = 40;
    match v {
        Cel::List(items) => format!("a list of {}", items.len()),
        Cel::Map(m) => match m.map.len() {
            1 => "a map of 1 key".to_owned(),
            n => format!("a map of {n} keys"),
        },
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => format!("{u}u"),
        Cel::Float(f) => format!("{f:?}"),
        Cel::Bool(b) => b.to_string(),
        Cel::Null => "null".to_owned(),
        Cel::Bytes(b) => format!("bytes of length {}", b.len()),
        Cel::String(s) => {
            let mut cut: String = s.chars().take(MAX_CHARS).collect();
            if cut.len() < s.len() {
                cut.push('…');
            }
            serde_json::to_string(&cut).unwrap_or_else(|_| "a string".to_owned())
        }
        other => cel_type(other).to_owned(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

mod limits;
mod native;
mod project;
mod stack;

pub use limits::{MAX_RULE_BYTES, MAX_RULE_NESTING, MAX_RULE_OPERATORS};

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
