//! A direct evaluator for the common shape of rules, over the JSON value.
//!
//! Note [Native rules]: even bound to only what it reaches (Note [Projected
//! binding]), a rule run by the `cel` interpreter costs about a microsecond
//! per loop iteration: each `f.severity` is first tried as a qualified
//! variable name (a string joined per access) and each map read converts the
//! map again. Most rules are selections, comparisons, boolean logic, `size`
//! and the comprehension macros over ints, strings and booleans, which this
//! evaluator runs straight over the `serde_json::Value` without copying it.
//! It answers only `true` or `false`, and only when every step stayed inside
//! that subset with the same meaning in CEL: same-kind comparisons of
//! `null`, booleans, `int`s (JSON integers that fit `i64`) and strings,
//! `size` of lists, maps and ASCII strings, checked `int` addition. Anything
//! else (a float, a missing field, a type mismatch, another function, a
//! result that is not a boolean) gives no answer, and the rule goes to the
//! interpreter, whose answer and messages are the reference; a rule's
//! verdict never depends on which of the two ran
//! (`native_rules_agree_with_the_interpreter`, and the proptests
//! `native_verdicts_agree_with_the_interpreter` over random rules and
//! `native_verdicts_agree_on_typed_rules` over well-typed ones). Loops and scans are charged
//! as the meters charge them (Note [Cost limit]); past the limit there is no
//! answer either, so the interpreter reports the limit.

use cel::IdedExpr;
use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, LiteralValue, operators};
use serde_json::Value;

use crate::json::tape::{Shape, TapeNode};

/// A value during native evaluation: scalars by value, JSON containers by
/// reference, lists built by the rule (`map`, `filter`, `[a, b]`) owned.
#[derive(Debug, Clone)]
enum V<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(&'a str),
    Json(&'a Value),
    /// An array or object of an instance read in place (Note [Validating
    /// from text] in `validate`): read exactly as `Json` is.
    Tape(TapeNode<'a>),
    List(Vec<V<'a>>),
}

impl<'a> V<'a> {
    /// `None` for numbers that are not `i64` integers (CEL would see a
    /// `uint` or a `double`).
    fn of(v: &'a Value) -> Option<V<'a>> {
        Some(match v {
            Value::Null => V::Null,
            Value::Bool(b) => V::Bool(*b),
            Value::Number(n) => V::Int(n.as_i64()?),
            Value::String(s) => V::Str(s),
            Value::Array(_) | Value::Object(_) => V::Json(v),
        })
    }

    /// [`V::of`] for a node read in place.
    fn of_tape(n: TapeNode<'a>) -> Option<V<'a>> {
        Some(match n.shape() {
            Shape::Null => V::Null,
            Shape::Bool(b) => V::Bool(b),
            Shape::Number(x) => V::Int(x.as_i64()?),
            Shape::Str(s) => V::Str(s),
            Shape::Array(_) | Shape::Object(_) => V::Tape(n),
        })
    }

    fn len(&self) -> Option<usize> {
        match self {
            V::List(l) => Some(l.len()),
            V::Json(Value::Array(a)) => Some(a.len()),
            V::Json(Value::Object(m)) => Some(m.len()),
            V::Tape(n) => match n.shape() {
                Shape::Array(a) => Some(a.size()),
                Shape::Object(o) => Some(o.size()),
                _ => None,
            },
            V::Str(s) if s.is_ascii() => Some(s.len()),
            _ => None,
        }
    }

    /// What a copy of this value is charged (Note [Memory charge]), counted
    /// up to `cap`: as the build meter sizes the CEL value, or more (the
    /// whole JSON value, where the interpreter binds only what the rule
    /// reaches).
    fn built(&self, cap: u64) -> u64 {
        match self {
            V::Null | V::Bool(_) | V::Int(_) => 1,
            V::Str(s) => super::text_size(s.len()),
            V::Json(j) => json_size(j, cap),
            V::Tape(n) => tape_size(*n, cap),
            V::List(l) => sum_sizes(l.iter().map(|e| move |cap| e.built(cap)), cap),
        }
    }

    /// A list: built by the rule, or a JSON array.
    fn is_list(&self) -> bool {
        match self {
            V::List(_) | V::Json(Value::Array(_)) => true,
            V::Tape(n) => matches!(n.shape(), Shape::Array(_)),
            _ => false,
        }
    }
}

/// The sum of sizes (each at least 1), stopping once it reaches `cap`.
fn sum_sizes<F: FnOnce(u64) -> u64>(sizes: impl Iterator<Item = F>, cap: u64) -> u64 {
    let mut n = 0u64;
    for size in sizes {
        if n >= cap {
            break;
        }
        n = n.saturating_add(size(cap - n).max(1));
    }
    n
}

/// [`V::built`] of a JSON value.
fn json_size(v: &Value, cap: u64) -> u64 {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 1,
        Value::String(s) => super::text_size(s.len()),
        Value::Array(a) => sum_sizes(a.iter().map(|e| move |cap| json_size(e, cap)), cap),
        Value::Object(m) => sum_sizes(
            m.iter().map(|(k, e)| {
                move |cap: u64| {
                    let k = super::text_size(k.len());
                    k.saturating_add(json_size(e, cap.saturating_sub(k)).max(1))
                }
            }),
            cap,
        ),
    }
}

/// [`V::built`] of a node read in place.
fn tape_size(n: TapeNode<'_>, cap: u64) -> u64 {
    match n.shape() {
        Shape::Null | Shape::Bool(_) | Shape::Number(_) => 1,
        Shape::Str(s) => super::text_size(s.len()),
        Shape::Array(a) => sum_sizes(a.iter().map(|e| move |cap| tape_size(e, cap)), cap),
        Shape::Object(o) => sum_sizes(
            o.iter().map(|(k, e)| {
                move |cap: u64| {
                    let k = super::text_size(k.len());
                    k.saturating_add(tape_size(e, cap.saturating_sub(k)).max(1))
                }
            }),
            cap,
        ),
    }
}

/// Note [Counting filters]: `xs.filter(x, p).size()`, the usual way to
/// count (`self.counts.blocker == self.findings.filter(f, f.severity ==
/// 'blocker').size()`), built the filtered list, one allocation per match,
/// only to take its length. The `filter` macro expands to a comprehension
/// with accumulator `[]`, condition `true` and step `p ? @acc + [x] : @acc`,
/// result `@acc`; `size()` of exactly that shape counts the items for which
/// `p` is true instead. A predicate that is not a boolean, or any step
/// outside the subset, gives no answer, as the list-building path does.
/// The predicate of a `filter` comprehension, `None` for any other shape.
fn filter_predicate(c: &ComprehensionExpr) -> Option<&IdedExpr> {
    if c.iter_var2.is_some() {
        return None;
    }
    let acc = c.accu_var.as_str();
    let is_acc = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == acc);
    match &c.accu_init.expr {
        Expr::List(l) if l.elements.is_empty() && l.optional_indices.is_empty() => {}
        _ => return None,
    }
    if !matches!(&c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if *b.inner()) {
        return None;
    }
    if !is_acc(&c.result) {
        return None;
    }
    let Expr::Call(step) = &c.loop_step.expr else {
        return None;
    };
    let [pred, add, keep] = step.args.as_slice() else {
        return None;
    };
    if step.func_name != operators::CONDITIONAL || step.target.is_some() || !is_acc(keep) {
        return None;
    }
    let Expr::Call(add) = &add.expr else {
        return None;
    };
    let [left, right] = add.args.as_slice() else {
        return None;
    };
    if add.func_name != operators::ADD || add.target.is_some() || !is_acc(left) {
        return None;
    }
    match &right.expr {
        Expr::List(l)
            if l.optional_indices.is_empty()
                && matches!(l.elements.as_slice(), [x] if matches!(&x.expr, Expr::Ident(n) if *n == c.iter_var)) =>
            {}
        _ => return None,
    }
    // The predicate cannot name the accumulator (`@` names are not CEL
    // source), so it is evaluated without it.
    Some(pred)
}

/// The member `name` of an object. Agent objects are small, and comparing
/// a few keys costs less than hashing one (the map keeps insertion order,
/// so a scan finds the one member a lookup finds: keys are unique).
/// `x.f` (or `has(x.f)` when `test`) on the value `of`: `None` (no answer)
/// when `of` is not an object, or when `f` is absent and not tested. Shared
/// by selections on any value and on a variable's slot.
fn select<'a>(of: &V<'a>, field: &str, test: bool) -> Option<V<'a>> {
    let found = match *of {
        V::Json(Value::Object(m)) => member(m, field).map(V::of),
        V::Tape(n) => {
            let Shape::Object(o) = n.shape() else {
                return None;
            };
            o.member(field).map(V::of_tape)
        }
        _ => return None,
    };
    if test {
        Some(V::Bool(found.is_some()))
    } else {
        found?
    }
}

fn member<'v>(m: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v Value> {
    if m.len() <= 8 {
        m.iter().find(|(k, _)| k.as_str() == name).map(|(_, v)| v)
    } else {
        m.get(name)
    }
}

/// Same-kind scalar equality; `None` for anything else.
fn equal(a: &V<'_>, b: &V<'_>) -> Option<bool> {
    match (a, b) {
        (V::Null, V::Null) => Some(true),
        (V::Bool(x), V::Bool(y)) => Some(x == y),
        (V::Int(x), V::Int(y)) => Some(x == y),
        (V::Str(x), V::Str(y)) => Some(x == y),
        _ => None,
    }
}

fn order(a: &V<'_>, b: &V<'_>) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (V::Int(x), V::Int(y)) => Some(x.cmp(y)),
        (V::Str(x), V::Str(y)) => Some(x.cmp(y)),
        (V::Bool(x), V::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Note [Compiled native rules]: walking the `cel` AST per evaluation
/// compared each call's function name against the operators it knows,
/// looked each variable up by name, copied each counted range into a list
/// and went through a generic step per operand: about 90 ns per element of
/// `self.findings.filter(f, f.severity == 'blocker').size()`, five times a
/// plain validation over the code-review schema's four rules.
/// Each rule is therefore translated once, when the schema is compiled,
/// into a [`Program`]: operators resolved to [`Node`] variants, variables
/// to their position on the evaluation stack, `filter(...).size()` to a
/// count (Note [Counting filters]), and anything outside the subset to
/// [`Node::Unknown`], which gives no answer only if it is reached (`false &&
/// other(x)` is still decided, as before). Evaluation order, cost charges
/// and the places that give no answer are those of the AST walk, step for
/// step (`compiled_rules_decide_what_the_subset_covers`); ranges are
/// iterated in place, never copied into a list first. The code-review
/// schema's four rules over 64 findings went from 170,000 to 84,000
/// instructions per instance (a plain validation: 46,500).
#[derive(Debug)]
pub(crate) struct Program {
    root: Node,
}

impl Default for Program {
    /// A rule that decides nothing.
    fn default() -> Self {
        Program {
            root: Node::Unknown,
        }
    }
}

/// A scalar literal of the subset.
#[derive(Debug)]
enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Str(Box<str>),
}

impl Lit {
    fn value(&self) -> V<'_> {
        match self {
            Lit::Null => V::Null,
            Lit::Bool(b) => V::Bool(*b),
            Lit::Int(i) => V::Int(*i),
            Lit::Str(s) => V::Str(s),
        }
    }
}

/// One step of a compiled rule.
#[derive(Debug)]
enum Node {
    Lit(Lit),
    /// Outside the subset (another function, a float literal, a variable
    /// that is not bound, a map literal, ...): no answer when evaluated.
    Unknown,
    /// The variable at this position of the stack (`self` is 0).
    Var(usize),
    /// An accumulator (`@result`): a list is moved out, not copied (a copy
    /// per step made `map` and `filter` quadratic).
    Take(usize),
    Select {
        of: Box<Node>,
        field: Box<str>,
        /// `has(x.field)`.
        test: bool,
    },
    /// [`Node::Select`] of a variable (`f.severity`), read in place.
    Field {
        slot: usize,
        field: Box<str>,
        test: bool,
    },
    /// A list literal; each element that is not a literal is charged its
    /// size when `charged` (Note [Memory charge]), that is unless it is
    /// the `[x]` a `map(x, x)` or `filter` step appends.
    List(Vec<Node>, bool),
    And(Box<[Node; 2]>),
    Or(Box<[Node; 2]>),
    Not(Box<Node>),
    NotStrictlyFalse(Box<Node>),
    Cond(Box<[Node; 3]>),
    Eq(Box<[Node; 2]>),
    Ne(Box<[Node; 2]>),
    /// `x == lit`, `lit != x`, ...: a literal cannot fail or be charged,
    /// so it is compared in place whichever side it was written on.
    EqLit {
        other: Box<Node>,
        lit: Lit,
        negate: bool,
    },
    Cmp(Cmp, Box<[Node; 2]>),
    /// `a + b`; each operand that is not a literal is charged as the scan
    /// meter charges it, unless the addition is a `map`/`filter` step
    /// (Note [Cost limit]).
    Add {
        args: Box<[Node; 2]>,
        charge: [bool; 2],
    },
    In(Box<[Node; 2]>),
    Size(Box<Node>),
    /// `size()` of a `filter` (Note [Counting filters]); the loop variable
    /// sits at `depth`.
    Count {
        range: Box<Node>,
        pred: Box<Node>,
        depth: usize,
    },
    Loop(Box<Loop>),
}

#[derive(Debug, Clone, Copy)]
enum Cmp {
    Less,
    LessEquals,
    Greater,
    GreaterEquals,
}

/// A comprehension: the accumulator sits at `depth`, the loop variable
/// above it.
#[derive(Debug)]
struct Loop {
    range: Node,
    init: Node,
    cond: Node,
    step: Node,
    result: Node,
    depth: usize,
}

impl Program {
    /// Translate `rule` (Note [Compiled native rules]); never fails: what
    /// the subset lacks becomes [`Node::Unknown`].
    pub(crate) fn compile(rule: &IdedExpr) -> Program {
        let mut scope = vec!["self"];
        Program {
            root: compile(rule, &mut scope),
        }
    }

    /// The rule's verdict on `instance`, when the subset decides it.
    pub(crate) fn verdict(&self, instance: &Value, limit: u64) -> Option<bool> {
        self.run(V::of(instance)?, limit)
    }

    /// [`Program::verdict`] on an instance read in place: the same answer
    /// for the same JSON (`tape_invariants_agree_with_value_invariants`).
    pub(crate) fn verdict_tape(&self, instance: TapeNode<'_>, limit: u64) -> Option<bool> {
        self.run(V::of_tape(instance)?, limit)
    }

    fn run<'a>(&'a self, this: V<'a>, limit: u64) -> Option<bool> {
        let mut scope = Vec::with_capacity(8);
        scope.push(this);
        let mut ev = Eval {
            scope,
            spent: 0,
            limit,
        };
        match ev.eval(&self.root)? {
            V::Bool(b) => Some(b),
            _ => None,
        }
    }
}

fn compile<'e>(e: &'e IdedExpr, scope: &mut Vec<&'e str>) -> Node {
    match &e.expr {
        Expr::Literal(lit) => match lit {
            LiteralValue::Boolean(b) => Node::Lit(Lit::Bool(*b.inner())),
            LiteralValue::Int(i) => Node::Lit(Lit::Int(*i.inner())),
            LiteralValue::String(s) => Node::Lit(Lit::Str(Box::from(s.inner()))),
            LiteralValue::Null => Node::Lit(Lit::Null),
            _ => Node::Unknown,
        },
        Expr::Ident(name) => match scope.iter().rposition(|n| n == name) {
            Some(slot) if name.starts_with('@') => Node::Take(slot),
            Some(slot) => Node::Var(slot),
            None => Node::Unknown,
        },
        Expr::Select(sel) => {
            let field = Box::from(sel.field.as_str());
            match compile(&sel.operand, scope) {
                Node::Var(slot) => Node::Field {
                    slot,
                    field,
                    test: sel.test,
                },
                of => Node::Select {
                    of: Box::new(of),
                    field,
                    test: sel.test,
                },
            }
        }
        Expr::List(l) if l.optional_indices.is_empty() => {
            Node::List(l.elements.iter().map(|x| compile(x, scope)).collect(), true)
        }
        Expr::Comprehension(c) if c.iter_var2.is_none() => {
            let range = compile(&c.iter_range, scope);
            let init = compile(&c.accu_init, scope);
            let depth = scope.len();
            scope.push(&c.accu_var);
            scope.push(&c.iter_var);
            let cond = compile(&c.loop_cond, scope);
            let mut step = compile(&c.loop_step, scope);
            uncharge_appended(&mut step, depth);
            scope.truncate(depth + 1);
            let result = compile(&c.result, scope);
            scope.truncate(depth);
            Node::Loop(Box::new(Loop {
                range,
                init,
                cond,
                step,
                result,
                depth,
            }))
        }
        Expr::Call(call) => compile_call(call, scope),
        _ => Node::Unknown,
    }
}

fn compile_call<'e>(call: &'e CallExpr, scope: &mut Vec<&'e str>) -> Node {
    let name = call.func_name.as_str();
    let mut two =
        |a: &'e IdedExpr, b: &'e IdedExpr| Box::new([compile(a, scope), compile(b, scope)]);
    match (call.target.as_deref(), call.args.as_slice()) {
        (None, [a, b]) => match name {
            operators::LOGICAL_AND => Node::And(two(a, b)),
            operators::LOGICAL_OR => Node::Or(two(a, b)),
            operators::EQUALS => equality(*two(a, b), false),
            operators::NOT_EQUALS => equality(*two(a, b), true),
            operators::LESS => Node::Cmp(Cmp::Less, two(a, b)),
            operators::LESS_EQUALS => Node::Cmp(Cmp::LessEquals, two(a, b)),
            operators::GREATER => Node::Cmp(Cmp::Greater, two(a, b)),
            operators::GREATER_EQUALS => Node::Cmp(Cmp::GreaterEquals, two(a, b)),
            operators::IN => Node::In(two(a, b)),
            operators::ADD => {
                let accumulating = [a, b]
                    .iter()
                    .any(|x| matches!(&x.expr, Expr::Ident(n) if n.starts_with('@')));
                let charged = |x: &IdedExpr| !accumulating && !matches!(x.expr, Expr::Literal(_));
                Node::Add {
                    charge: [charged(a), charged(b)],
                    args: two(a, b),
                }
            }
            _ => Node::Unknown,
        },
        (None, [a]) if name == operators::LOGICAL_NOT => Node::Not(Box::new(compile(a, scope))),
        (None, [a]) if name == operators::NOT_STRICTLY_FALSE => {
            Node::NotStrictlyFalse(Box::new(compile(a, scope)))
        }
        (None, [c, t, f]) if name == operators::CONDITIONAL => Node::Cond(Box::new([
            compile(c, scope),
            compile(t, scope),
            compile(f, scope),
        ])),
        (Some(t), []) | (None, [t]) if name == "size" => {
            if let Expr::Comprehension(c) = &t.expr {
                if let Some(pred) = filter_predicate(c) {
                    let range = Box::new(compile(&c.iter_range, scope));
                    let depth = scope.len();
                    scope.push(&c.iter_var);
                    let pred = Box::new(compile(pred, scope));
                    scope.truncate(depth);
                    return Node::Count { range, pred, depth };
                }
            }
            Node::Size(Box::new(compile(t, scope)))
        }
        _ => Node::Unknown,
    }
}

/// Leave uncharged the `[x]` a `map(x, x)` or `filter` step appends, as
/// the meters do (Note [Memory charge]): `@acc + [x]` or `p ? @acc + [x] :
/// @acc`, the accumulator at `depth` and the loop variable above it.
fn uncharge_appended(step: &mut Node, depth: usize) {
    let step = match step {
        Node::Cond(ctf) if matches!(ctf[2], Node::Take(s) if s == depth) => &mut ctf[1],
        other => other,
    };
    if let Node::Add { args, .. } = step {
        if let [Node::Take(acc), Node::List(items, charged)] = &mut **args {
            if *acc == depth && matches!(items.as_slice(), [Node::Var(v)] if *v == depth + 1) {
                *charged = false;
            }
        }
    }
}

/// `a == b` (`a != b` when `negate`), with a literal side compared in
/// place.
fn equality([a, b]: [Node; 2], negate: bool) -> Node {
    match (a, b) {
        (Node::Lit(lit), other) | (other, Node::Lit(lit)) => Node::EqLit {
            other: Box::new(other),
            lit,
            negate,
        },
        (a, b) if negate => Node::Ne(Box::new([a, b])),
        (a, b) => Node::Eq(Box::new([a, b])),
    }
}

/// The elements a comprehension, a count or `in` goes over: a list's
/// elements, a map's keys; read in place.
enum Items<'a> {
    List(std::vec::IntoIter<V<'a>>),
    Array(std::slice::Iter<'a, Value>),
    Keys(serde_json::map::Keys<'a>),
    TapeArray(crate::json::tape::TapeElements<'a>),
    TapeKeys(crate::json::tape::TapeMembers<'a>),
}

impl<'a> Iterator for Items<'a> {
    /// `None` inside: an element outside the subset (a number that is not
    /// an `i64`; [`items`] checks for those up front).
    type Item = Option<V<'a>>;

    fn next(&mut self) -> Option<Option<V<'a>>> {
        match self {
            Items::List(it) => it.next().map(Some),
            Items::Array(it) => it.next().map(V::of),
            Items::Keys(it) => it.next().map(|k| Some(V::Str(k))),
            Items::TapeArray(it) => it.next().map(V::of_tape),
            Items::TapeKeys(it) => it.next().map(|(k, _)| Some(V::Str(k))),
        }
    }
}

/// How many items `range` has and the items, when it is a list or a map
/// whose elements are all in the subset (a JSON array holding a number
/// that is not an `i64` gives no answer, before anything is charged or
/// evaluated, as copying it into a list did).
fn items(range: V<'_>) -> Option<(usize, Items<'_>)> {
    let ints = |n: &serde_json::Number| n.as_i64().is_some();
    Some(match range {
        V::List(l) => (l.len(), Items::List(l.into_iter())),
        V::Json(Value::Array(a)) => {
            if !a.iter().all(|x| match x {
                Value::Number(n) => ints(n),
                _ => true,
            }) {
                return None;
            }
            (a.len(), Items::Array(a.iter()))
        }
        V::Json(Value::Object(m)) => (m.len(), Items::Keys(m.keys())),
        V::Tape(n) => match n.shape() {
            Shape::Array(a) => {
                if !a.iter().all(|x| match x.shape() {
                    Shape::Number(n) => ints(n),
                    _ => true,
                }) {
                    return None;
                }
                (a.size(), Items::TapeArray(a.iter()))
            }
            Shape::Object(o) => (o.size(), Items::TapeKeys(o.iter())),
            _ => return None,
        },
        _ => return None,
    })
}

struct Eval<'a> {
    scope: Vec<V<'a>>,
    spent: u64,
    limit: u64,
}

impl<'a> Eval<'a> {
    fn charge(&mut self, n: usize) -> Option<()> {
        self.spent = self.spent.saturating_add(u64::try_from(n).ok()?);
        (self.spent <= self.limit).then_some(())
    }

    /// Charge a copy of `v` (Note [Memory charge]).
    fn charge_built(&mut self, v: &V<'_>) -> Option<()> {
        let cap = self.limit.saturating_sub(self.spent).saturating_add(1);
        self.spent = self.spent.saturating_add(v.built(cap));
        (self.spent <= self.limit).then_some(())
    }

    fn bool(&mut self, e: &'a Node) -> Option<bool> {
        match self.eval(e)? {
            V::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn eval(&mut self, e: &'a Node) -> Option<V<'a>> {
        match e {
            Node::Lit(lit) => Some(lit.value()),
            Node::Unknown => None,
            Node::Var(slot) => self.scope.get(*slot).cloned(),
            Node::Take(slot) => {
                let v = self.scope.get_mut(*slot)?;
                if matches!(v, V::List(_)) {
                    Some(std::mem::replace(v, V::Null))
                } else {
                    Some(v.clone())
                }
            }
            Node::Select { of, field, test } => {
                let of = self.eval(of)?;
                select(&of, field, *test)
            }
            Node::Field { slot, field, test } => select(self.scope.get(*slot)?, field, *test),
            Node::List(l, charged) => {
                let mut items = Vec::with_capacity(l.len());
                for x in l {
                    let v = self.eval(x)?;
                    if *charged && !matches!(x, Node::Lit(_)) {
                        self.charge_built(&v)?;
                    }
                    items.push(v);
                }
                Some(V::List(items))
            }
            Node::And(ab) => {
                if self.bool(&ab[0])? {
                    self.bool(&ab[1]).map(V::Bool)
                } else {
                    Some(V::Bool(false))
                }
            }
            Node::Or(ab) => {
                if self.bool(&ab[0])? {
                    Some(V::Bool(true))
                } else {
                    self.bool(&ab[1]).map(V::Bool)
                }
            }
            Node::Not(a) => self.bool(a).map(|x| V::Bool(!x)),
            Node::NotStrictlyFalse(a) => self.bool(a).map(V::Bool),
            Node::Cond(ctf) => {
                if self.bool(&ctf[0])? {
                    self.eval(&ctf[1])
                } else {
                    self.eval(&ctf[2])
                }
            }
            Node::Eq(ab) => {
                let (x, y) = (self.eval(&ab[0])?, self.eval(&ab[1])?);
                equal(&x, &y).map(V::Bool)
            }
            Node::Ne(ab) => {
                let (x, y) = (self.eval(&ab[0])?, self.eval(&ab[1])?);
                equal(&x, &y).map(|q| V::Bool(!q))
            }
            Node::EqLit { other, lit, negate } => {
                let x = self.eval(other)?;
                equal(&x, &lit.value()).map(|q| V::Bool(q != *negate))
            }
            Node::Cmp(op, ab) => {
                use std::cmp::Ordering::{Greater, Less};
                let (x, y) = (self.eval(&ab[0])?, self.eval(&ab[1])?);
                let o = order(&x, &y)?;
                Some(V::Bool(match op {
                    Cmp::Less => o == Less,
                    Cmp::LessEquals => o != Greater,
                    Cmp::Greater => o == Greater,
                    Cmp::GreaterEquals => o != Less,
                }))
            }
            Node::Add { args, charge } => self.add(args, *charge),
            Node::In(ab) => self.contains(ab),
            Node::Size(t) => {
                let v = self.eval(t)?;
                Some(V::Int(i64::try_from(v.len()?).ok()?))
            }
            Node::Count { range, pred, depth } => self.count(range, pred, *depth),
            Node::Loop(l) => self.comprehension(l),
        }
    }

    fn add(&mut self, args: &'a [Node; 2], charge: [bool; 2]) -> Option<V<'a>> {
        let (x, y) = (self.eval(&args[0])?, self.eval(&args[1])?);
        for (charged, v) in charge.into_iter().zip([&x, &y]) {
            if charged {
                self.charge_built(v)?;
            }
        }
        match (x, y) {
            (V::Int(p), V::Int(q)) => p.checked_add(q).map(V::Int),
            (x, y) if x.is_list() && y.is_list() => {
                // A list built by the rule is moved, not copied.
                let mut l = match x {
                    V::List(l) => l,
                    other => items(other)?.1.collect::<Option<Vec<_>>>()?,
                };
                match y {
                    V::List(r) => l.extend(r),
                    other => {
                        for item in items(other)?.1 {
                            l.push(item?);
                        }
                    }
                }
                Some(V::List(l))
            }
            _ => None,
        }
    }

    /// `x in y`: a map's key, or an element of a list (compared with every
    /// element, each comparison in the subset).
    fn contains(&mut self, ab: &'a [Node; 2]) -> Option<V<'a>> {
        let (x, within) = (self.eval(&ab[0])?, self.eval(&ab[1])?);
        match within {
            V::Json(Value::Object(m)) => {
                self.charge(1)?;
                match x {
                    V::Str(k) => Some(V::Bool(m.contains_key(k))),
                    _ => None,
                }
            }
            V::Tape(n) if matches!(n.shape(), Shape::Object(_)) => {
                self.charge(1)?;
                match (x, n.shape()) {
                    (V::Str(k), Shape::Object(o)) => Some(V::Bool(o.member(k).is_some())),
                    _ => None,
                }
            }
            list if list.is_list() => {
                let (size, it) = items(list)?;
                self.charge(size)?;
                let mut found = false;
                for item in it {
                    found |= equal(&x, &item?)?;
                }
                Some(V::Bool(found))
            }
            _ => None,
        }
    }

    /// A comprehension: the loop condition, then (when it holds) the step,
    /// per item; the result over the last accumulator.
    fn comprehension(&mut self, l: &'a Loop) -> Option<V<'a>> {
        let range = self.eval(&l.range)?;
        let (n, it) = items(range)?;
        self.charge(n)?;
        let mut accu = self.eval(&l.init)?;
        let depth = l.depth;
        debug_assert_eq!(self.scope.len(), depth, "compiled stack depth");
        // The accumulator and the loop variable are overwritten in place
        // (the condition and the step leave the stack as they found it).
        self.scope.push(V::Null);
        self.scope.push(V::Null);
        for item in it {
            *self.scope.get_mut(depth)? = accu;
            *self.scope.get_mut(depth + 1)? = item?;
            if !self.bool(&l.cond)? {
                accu = std::mem::replace(self.scope.get_mut(depth)?, V::Null);
                break;
            }
            accu = self.eval(&l.step)?;
        }
        self.scope.truncate(depth);
        self.scope.push(accu);
        let out = self.eval(&l.result);
        self.scope.truncate(depth);
        out
    }

    /// `size()` of a `filter` (Note [Counting filters]): the number of
    /// items for which `pred` holds, charged as the comprehension is.
    fn count(&mut self, range: &'a Node, pred: &'a Node, depth: usize) -> Option<V<'a>> {
        let range = self.eval(range)?;
        let (n, it) = items(range)?;
        self.charge(n)?;
        debug_assert_eq!(self.scope.len(), depth, "compiled stack depth");
        let mut hits: i64 = 0;
        // The predicate leaves the stack as it found it: the loop variable's
        // slot is overwritten in place.
        self.scope.push(V::Null);
        for item in it {
            *self.scope.get_mut(depth)? = item?;
            if self.bool(pred)? {
                hits += 1;
            }
        }
        self.scope.truncate(depth);
        Some(V::Int(hits))
    }
}

#[cfg(test)]
mod tests {
    use cel::Env;
    use cel::common::ast::Expr;
    use serde_json::json;

    use super::*;

    /// Note [Counting filters]: `filter(...).size()` is recognised (so no
    /// list is built) and counts what the list would hold; other shapes are
    /// left to the general path.
    #[test]
    fn filter_sizes_are_counted() {
        let env = Env::stdlib();
        let count_of = |rule: &str| {
            let p = env.compile(rule).unwrap();
            let Expr::Call(call) = &p.expression().expr else {
                panic!("{rule}: not a call");
            };
            let target = call.target.as_deref().or(call.args.first()).unwrap();
            match &target.expr {
                Expr::Comprehension(c) => filter_predicate(c).is_some(),
                _ => false,
            }
        };
        assert!(count_of(
            "self.findings.filter(f, f.severity == 'blocker').size()"
        ));
        assert!(count_of("size(self.findings.filter(f, f.line > 1))"));
        assert!(!count_of("self.findings.map(f, f.line).size()"));
        assert!(!count_of("self.findings.size()"));
        let inst = json!({"findings": [{"severity": "blocker"}, {"severity": "nit"}, {"severity": "blocker"}]});
        for (rule, want) in [
            (
                "self.findings.filter(f, f.severity == 'blocker').size() == 2",
                Some(true),
            ),
            (
                "self.findings.filter(f, f.severity == 'nit').size() == 2",
                Some(false),
            ),
            ("self.findings.filter(f, f.line).size() == 0", None),
        ] {
            let p = env.compile(rule).unwrap();
            assert_eq!(
                Program::compile(p.expression()).verdict(&inst, 1000),
                want,
                "{rule}"
            );
        }
        // Charged as the comprehension is: three items over a limit of two.
        let p = env
            .compile("self.findings.filter(f, true).size() == 3")
            .unwrap();
        assert_eq!(Program::compile(p.expression()).verdict(&inst, 2), None);
        assert_eq!(
            Program::compile(p.expression()).verdict(&inst, 3),
            Some(true)
        );
    }
}
