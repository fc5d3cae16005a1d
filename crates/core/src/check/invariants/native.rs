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
//! (`native_rules_agree_with_the_interpreter`). Loops and scans are charged
//! as the meters charge them (Note [Cost limit]); past the limit there is no
//! answer either, so the interpreter reports the limit.

use cel::IdedExpr;
use cel::common::ast::{ComprehensionExpr, Expr, LiteralValue, operators};
use serde_json::Value;

use crate::validate::tape::{Shape, TapeNode};

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

    /// The elements a comprehension or `in` goes over: a list's elements, a
    /// map's keys.
    fn items(&self) -> Option<Vec<V<'a>>> {
        match self {
            V::List(l) => Some(l.clone()),
            V::Json(Value::Array(a)) => a.iter().map(V::of).collect(),
            V::Json(Value::Object(m)) => Some(m.keys().map(|k| V::Str(k)).collect()),
            V::Tape(n) => match n.shape() {
                Shape::Array(a) => a.iter().map(V::of_tape).collect(),
                Shape::Object(o) => Some(o.iter().map(|(k, _)| V::Str(k)).collect()),
                _ => None,
            },
            _ => None,
        }
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

    /// A list: built by the rule, or a JSON array.
    fn is_list(&self) -> bool {
        match self {
            V::List(_) | V::Json(Value::Array(_)) => true,
            V::Tape(n) => matches!(n.shape(), Shape::Array(_)),
            _ => false,
        }
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

/// The rule's verdict on `instance`, when the subset decides it.
pub(crate) fn verdict(rule: &IdedExpr, instance: &Value, limit: u64) -> Option<bool> {
    verdict_on(rule, V::of(instance)?, limit)
}

/// [`verdict`] on an instance read in place: the same answer for the same
/// JSON (`tape_invariants_agree_with_value_invariants`).
pub(crate) fn verdict_tape(rule: &IdedExpr, instance: TapeNode<'_>, limit: u64) -> Option<bool> {
    verdict_on(rule, V::of_tape(instance)?, limit)
}

fn verdict_on<'a>(rule: &'a IdedExpr, this: V<'a>, limit: u64) -> Option<bool> {
    let mut ev = Eval {
        scope: vec![("self", this)],
        spent: 0,
        limit,
    };
    match ev.eval(rule)? {
        V::Bool(b) => Some(b),
        _ => None,
    }
}

struct Eval<'a> {
    scope: Vec<(&'a str, V<'a>)>,
    spent: u64,
    limit: u64,
}

impl<'a> Eval<'a> {
    fn charge(&mut self, n: usize) -> Option<()> {
        self.spent = self.spent.saturating_add(u64::try_from(n).ok()?);
        (self.spent <= self.limit).then_some(())
    }

    // One match over CEL's operators reads best whole; `a`, `b` are
    // operands and `x`, `y` their values throughout.
    #[allow(clippy::many_single_char_names, clippy::too_many_lines)]
    fn eval(&mut self, e: &'a IdedExpr) -> Option<V<'a>> {
        match &e.expr {
            Expr::Literal(lit) => match lit {
                LiteralValue::Boolean(b) => Some(V::Bool(*b.inner())),
                LiteralValue::Int(i) => Some(V::Int(*i.inner())),
                LiteralValue::String(s) => Some(V::Str(s.inner())),
                LiteralValue::Null => Some(V::Null),
                _ => None,
            },
            // A list accumulator (`@result` of `map` and `filter`) is read
            // once per step: moved out, not copied (a copy per step made
            // them quadratic). Everything else is cheap to copy.
            Expr::Ident(name) => {
                let slot = self.scope.iter_mut().rev().find(|(n, _)| n == name)?;
                if name.starts_with('@') && matches!(slot.1, V::List(_)) {
                    Some(std::mem::replace(&mut slot.1, V::Null))
                } else {
                    Some(slot.1.clone())
                }
            }
            Expr::Select(sel) => match self.eval(&sel.operand)? {
                V::Json(Value::Object(m)) => {
                    let found = member(m, &sel.field);
                    if sel.test {
                        return Some(V::Bool(found.is_some()));
                    }
                    V::of(found?)
                }
                V::Tape(n) => {
                    let Shape::Object(o) = n.shape() else {
                        return None;
                    };
                    let found = o.member(&sel.field);
                    if sel.test {
                        return Some(V::Bool(found.is_some()));
                    }
                    V::of_tape(found?)
                }
                _ => None,
            },
            Expr::List(l) => {
                if !l.optional_indices.is_empty() {
                    return None;
                }
                let items: Option<Vec<V<'a>>> = l.elements.iter().map(|x| self.eval(x)).collect();
                Some(V::List(items?))
            }
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Call(call) => {
                let name = call.func_name.as_str();
                match (call.target.as_deref(), call.args.as_slice()) {
                    (None, [a, b]) if name == operators::LOGICAL_AND => match self.eval(a)? {
                        V::Bool(false) => Some(V::Bool(false)),
                        V::Bool(true) => match self.eval(b)? {
                            V::Bool(y) => Some(V::Bool(y)),
                            _ => None,
                        },
                        _ => None,
                    },
                    (None, [a, b]) if name == operators::LOGICAL_OR => match self.eval(a)? {
                        V::Bool(true) => Some(V::Bool(true)),
                        V::Bool(false) => match self.eval(b)? {
                            V::Bool(y) => Some(V::Bool(y)),
                            _ => None,
                        },
                        _ => None,
                    },
                    (None, [a]) if name == operators::LOGICAL_NOT => match self.eval(a)? {
                        V::Bool(x) => Some(V::Bool(!x)),
                        _ => None,
                    },
                    (None, [a]) if name == operators::NOT_STRICTLY_FALSE => match self.eval(a)? {
                        V::Bool(x) => Some(V::Bool(x)),
                        _ => None,
                    },
                    (None, [c, t, f]) if name == operators::CONDITIONAL => match self.eval(c)? {
                        V::Bool(true) => self.eval(t),
                        V::Bool(false) => self.eval(f),
                        _ => None,
                    },
                    (None, [a, b]) if name == operators::EQUALS => {
                        let (x, y) = (self.eval(a)?, self.eval(b)?);
                        equal(&x, &y).map(V::Bool)
                    }
                    (None, [a, b]) if name == operators::NOT_EQUALS => {
                        let (x, y) = (self.eval(a)?, self.eval(b)?);
                        equal(&x, &y).map(|q| V::Bool(!q))
                    }
                    (None, [a, b])
                        if [
                            operators::LESS,
                            operators::LESS_EQUALS,
                            operators::GREATER,
                            operators::GREATER_EQUALS,
                        ]
                        .contains(&name) =>
                    {
                        use std::cmp::Ordering::{Greater, Less};
                        let (x, y) = (self.eval(a)?, self.eval(b)?);
                        let o = order(&x, &y)?;
                        Some(V::Bool(match name {
                            operators::LESS => o == Less,
                            operators::LESS_EQUALS => o != Greater,
                            operators::GREATER => o == Greater,
                            _ => o != Less,
                        }))
                    }
                    (None, [a, b]) if name == operators::ADD => {
                        let accumulating = [a, b]
                            .iter()
                            .any(|x| matches!(&x.expr, Expr::Ident(n) if n.starts_with('@')));
                        let (x, y) = (self.eval(a)?, self.eval(b)?);
                        if !accumulating {
                            for (arg, v) in [(a, &x), (b, &y)] {
                                if !matches!(arg.expr, Expr::Literal(_)) {
                                    let n = if v.is_list() { v.len()? } else { 1 };
                                    self.charge(n)?;
                                }
                            }
                        }
                        match (x, y) {
                            (V::Int(p), V::Int(q)) => p.checked_add(q).map(V::Int),
                            (x, y) if x.is_list() && y.is_list() => {
                                let mut l = match x {
                                    V::List(l) => l,
                                    other => other.items()?,
                                };
                                // A list built by the rule is moved, not copied.
                                match y {
                                    V::List(r) => l.extend(r),
                                    other => l.extend(other.items()?),
                                }
                                Some(V::List(l))
                            }
                            _ => None,
                        }
                    }
                    (None, [a, b]) if name == operators::IN => {
                        let (x, y) = (self.eval(a)?, self.eval(b)?);
                        match &y {
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
                                    (V::Str(k), Shape::Object(o)) => {
                                        Some(V::Bool(o.member(k).is_some()))
                                    }
                                    _ => None,
                                }
                            }
                            y if y.is_list() => {
                                let items = y.items()?;
                                self.charge(items.len())?;
                                let mut found = false;
                                for i in &items {
                                    found |= equal(&x, i)?;
                                }
                                Some(V::Bool(found))
                            }
                            _ => None,
                        }
                    }
                    (Some(t), []) | (None, [t]) if name == "size" => {
                        if let Expr::Comprehension(c) = &t.expr {
                            if let Some(pred) = filter_predicate(c) {
                                return self.count_matches(c, pred);
                            }
                        }
                        let v = self.eval(t)?;
                        Some(V::Int(i64::try_from(v.len()?).ok()?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The range is walked in place, not copied into a list first: a JSON
    /// array's elements are checked to be in the subset up front (as the
    /// copy did), then read one by one.
    fn comprehension(&mut self, c: &'a ComprehensionExpr) -> Option<V<'a>> {
        if c.iter_var2.is_some() {
            return None;
        }
        let range = self.eval(&c.iter_range)?;
        match &range {
            V::List(_) | V::Json(Value::Object(_)) => {}
            V::Json(Value::Array(a)) => {
                if !a.iter().all(|x| match x {
                    Value::Number(n) => n.as_i64().is_some(),
                    _ => true,
                }) {
                    return None;
                }
            }
            V::Tape(n) => match n.shape() {
                Shape::Object(_) => {}
                Shape::Array(a) => {
                    if !a.iter().all(|x| match x.shape() {
                        Shape::Number(n) => n.as_i64().is_some(),
                        _ => true,
                    }) {
                        return None;
                    }
                }
                _ => return None,
            },
            _ => return None,
        }
        self.charge(range.len()?)?;
        let mut accu = self.eval(&c.accu_init)?;
        let depth = self.scope.len();
        let mut go = true;
        match range {
            V::List(l) => {
                for item in l {
                    accu = self.step(c, depth, accu, item, &mut go)?;
                    if !go {
                        break;
                    }
                }
            }
            V::Json(Value::Array(a)) => {
                for x in a {
                    accu = self.step(c, depth, accu, V::of(x)?, &mut go)?;
                    if !go {
                        break;
                    }
                }
            }
            V::Json(Value::Object(m)) => {
                for k in m.keys() {
                    accu = self.step(c, depth, accu, V::Str(k), &mut go)?;
                    if !go {
                        break;
                    }
                }
            }
            V::Tape(n) => match n.shape() {
                Shape::Array(a) => {
                    for x in a.iter() {
                        accu = self.step(c, depth, accu, V::of_tape(x)?, &mut go)?;
                        if !go {
                            break;
                        }
                    }
                }
                Shape::Object(o) => {
                    for (k, _) in o.iter() {
                        accu = self.step(c, depth, accu, V::Str(k), &mut go)?;
                        if !go {
                            break;
                        }
                    }
                }
                _ => return None,
            },
            _ => return None,
        }
        self.scope.truncate(depth);
        self.scope.push((c.accu_var.as_str(), accu));
        let out = self.eval(&c.result);
        self.scope.truncate(depth);
        out
    }

    /// `size()` of a `filter` (Note [Counting filters]): the number of
    /// items for which `pred` holds, charged as the comprehension is.
    fn count_matches(&mut self, c: &'a ComprehensionExpr, pred: &'a IdedExpr) -> Option<V<'a>> {
        let range = self.eval(&c.iter_range)?;
        let items: Vec<V<'a>> = match range {
            V::List(l) => l,
            other => other.items()?,
        };
        self.charge(items.len())?;
        let depth = self.scope.len();
        let mut n: i64 = 0;
        for item in items {
            self.scope.truncate(depth);
            self.scope.push((c.iter_var.as_str(), item));
            let hit = self.eval(pred);
            self.scope.truncate(depth);
            match hit? {
                V::Bool(true) => n += 1,
                V::Bool(false) => {}
                _ => return None,
            }
        }
        Some(V::Int(n))
    }

    /// One turn of a comprehension: the loop condition, then (when it
    /// holds) the step; the accumulator after it. `go` turns false when the
    /// condition stops the loop.
    fn step(
        &mut self,
        c: &'a ComprehensionExpr,
        depth: usize,
        accu: V<'a>,
        item: V<'a>,
        go: &mut bool,
    ) -> Option<V<'a>> {
        self.scope.truncate(depth);
        self.scope.push((c.accu_var.as_str(), accu));
        self.scope.push((c.iter_var.as_str(), item));
        let Some(V::Bool(cond)) = self.eval(&c.loop_cond) else {
            self.scope.truncate(depth);
            return None;
        };
        if !cond {
            *go = false;
            let accu = self.scope.swap_remove(depth).1;
            self.scope.truncate(depth);
            return Some(accu);
        }
        let next = self.eval(&c.loop_step);
        self.scope.truncate(depth);
        next
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
            assert_eq!(verdict(p.expression(), &inst, 1000), want, "{rule}");
        }
        // Charged as the comprehension is: three items over a limit of two.
        let p = env
            .compile("self.findings.filter(f, true).size() == 3")
            .unwrap();
        assert_eq!(verdict(p.expression(), &inst, 2), None);
        assert_eq!(verdict(p.expression(), &inst, 3), Some(true));
    }
}
